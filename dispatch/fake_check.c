/* fake_check.c - an op call on fake copies of its arguments against the real call
 * (fake_check_internal.h), shared by crossref functionalize (crossref.c) and opcheck
 * (opcheck.c, cfx trace --crossref).
 *
 * It follows torch/_dispatch/python.py of 2.13 step by step: fakeify the arguments (a
 * functional tensor's value is taken as it is, unsynced, and faked by a FRESH fake mode), run
 * the op on them under that mode with every current mode and functionalization suspended,
 * then (the caller) run the op for real and compare (sizes first, then dtype, then
 * significant strides, per flattened output, the fake result on the left). The description of
 * the call prints the fake copies' metadata the way the Python helper's _fmt does, and splits
 * the arguments into args and kwargs as the C++ -> Python hand-over does (kwarg-only arguments
 * that differ from their default become `name=value`, positional ones are cut after the last
 * that differs). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake_check_internal.h"
#include "dispatch/functional_internal.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"

/* ---- _disable_current_modes + suspend_functionalization ----------------------------------- */

typedef struct suspended {
    cfx_mode *modes[CFX_MODE_STACK_MAX + CFX_MODE_NUM_KEYS];
    int n;
    cfx_key_guard keys;
} suspended;

static void suspend(suspended *s)
{
    s->n = 0;
    while (cfx_mode_stack_len() > 0 && s->n < (int)(sizeof s->modes / sizeof s->modes[0]))
        s->modes[s->n++] = cfx_mode_pop();
    cfx_exclude_keys_begin(&s->keys, cfx_keyset_of(CFX_KEY_Functionalize));
}

static void resume(suspended *s)
{
    cfx_key_guard_end(&s->keys);
    /* popped top first: user modes, then infra slots high to low; put back in reverse */
    for (int i = s->n - 1; i >= 0; i--) {
        cfx_mode *m = s->modes[i];
        if (m->key >= 0)
            cfx_mode_set(m, (cfx_mode_key)m->key);
        else
            cfx_mode_push(m);
    }
}

/* fakeify_defun: a functional tensor's value (unsynced), faked by the fresh mode. A fake value
 * of the trace's own fake mode is first turned into a plain meta tensor with its metadata. */
static cfx_tensor *fakeify(cfx_fake_mode *fm, cfx_tensor *t)
{
    cfx_tensor *r = cfx_functional_value(t);
    if (cfx_tensor_is_fake(r)) {
        cfx_tensor *m = cfx_tensor_new_strided(r->sizes, r->strides, r->ndim, cfx_tensor_dtype(r),
                                               cfx_device_make(CFX_DEVICE_META));
        if (!m)
            return NULL;
        m->storage_offset = r->storage_offset;
        r = m;
    }
    return cfx_fake_from_tensor(fm, r);
}

static int fakeify_args(cfx_fake_mode *fm, const cfx_schema *s, cfx_value *stack)
{
    for (int i = 0; i < s->n_args; i++) {
        cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            if (!(v->u.t = fakeify(fm, v->u.t)))
                return CFX_ERR;
        } else if ((v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) && v->len) {
            cfx_value *items = cfx_scope_alloc(v->len * sizeof *items);
            if (!items)
                return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            for (uint32_t j = 0; j < v->len; j++) {
                items[j] = v->u.items[j];
                if (items[j].kind == CFX_V_TENSOR && items[j].u.t && !(items[j].u.t = fakeify(fm, items[j].u.t)))
                    return CFX_ERR;
            }
            v->u.items = items;
        }
    }
    return CFX_OK;
}

/* ---- the description: op(args, kwargs) as _fmt prints them -------------------------------- */

static void put_ints_tuple(cfx_buf *b, const int64_t *v, int n)
{
    cfx_buf_putc(b, '(');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
    cfx_buf_puts(b, n == 1 ? ",)" : ")");
}

static void put_value(cfx_buf *b, cfx_value v)
{
    if (v.kind == CFX_V_TENSOR && v.u.t) {
        cfx_buf_puts(b, "torch.empty_strided(");
        put_ints_tuple(b, v.u.t->sizes, v.u.t->ndim);
        cfx_buf_puts(b, ", ");
        put_ints_tuple(b, v.u.t->strides, v.u.t->ndim);
        cfx_buf_printf(b, ", dtype=%s)", cfx_dtype_torch_name(cfx_tensor_dtype(v.u.t)));
    } else if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) {
        cfx_buf_putc(b, v.kind == CFX_V_LIST ? '[' : '(');
        for (uint32_t i = 0; i < v.len; i++) {
            if (i)
                cfx_buf_puts(b, ", ");
            put_value(b, v.u.items[i]);
        }
        cfx_buf_puts(b, v.kind == CFX_V_LIST ? "]" : v.len == 1 ? ",)" : ")");
    } else {
        cfx_value_print(v, CFX_STYLE_PYTHON, b);
    }
}

void cfx_fake_check_describe(cfx_buf *b, const cfx_op *op, const cfx_value *args, cfx_call_name_style style)
{
    const cfx_schema *s = cfx_op_schema(op);
    const char *colons = strstr(s->name, "::");
    if (style == CFX_CALL_NAME_QUALIFIED) {
        /* the schema's own spelling: aten::add.Tensor, ns::op */
        cfx_buf_printf(b, "%s%s%s(", s->name, s->overload[0] ? "." : "", s->overload);
    } else {
        /* str(OpOverload): ns.name.overload, "default" for the empty overload */
        if (colons)
            cfx_buf_printf(b, "%.*s.%s", (int)(colons - s->name), s->name, colons + 2);
        else
            cfx_buf_puts(b, s->name);
        cfx_buf_printf(b, ".%s(", s->overload[0] ? s->overload : "default");
    }
    int last_pos = -1;
    for (int i = 0; i < s->n_args; i++)
        if (!s->args[i].kwarg_only && !cfx_argument_is_default(&s->args[i], args[i]))
            last_pos = i;
    bool first = true;
    for (int i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        if (a->kwarg_only ? cfx_argument_is_default(a, args[i]) : i > last_pos)
            continue;
        cfx_buf_puts(b, first ? "" : ", ");
        first = false;
        if (a->kwarg_only)
            cfx_buf_printf(b, "%s=", a->name);
        put_value(b, args[i]);
    }
    cfx_buf_putc(b, ')');
}

/* ---- check_metadata_matches ---------------------------------------------------------------- */

int cfx_fake_check_flatten(const cfx_value *rets, int n, cfx_value *out, int cap)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (rets[i].kind == CFX_V_LIST || rets[i].kind == CFX_V_TUPLE) {
            for (uint32_t j = 0; j < rets[i].len; j++)
                if (k < cap)
                    out[k++] = rets[i].u.items[j];
        } else if (k < cap) {
            out[k++] = rets[i];
        }
    }
    return k;
}

static void put_size(cfx_buf *b, const cfx_tensor *t)
{
    cfx_buf_puts(b, "torch.Size([");
    for (int i = 0; i < t->ndim; i++)
        cfx_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    cfx_buf_puts(b, "])");
}

/* Appends ": <what differs>" and returns true if nv and rv disagree. */
bool cfx_fake_check_mismatch(cfx_buf *b, const cfx_tensor *nv, const cfx_tensor *rv)
{
    bool same_size = nv->ndim == rv->ndim && !memcmp(nv->sizes, rv->sizes, (size_t)nv->ndim * sizeof *nv->sizes);
    if (!same_size) {
        cfx_buf_puts(b, ": sizes ");
        put_size(b, nv);
        cfx_buf_puts(b, " != ");
        put_size(b, rv);
        return true;
    }
    if (nv->dtype != rv->dtype) {
        cfx_buf_printf(b, ": dtype %s != %s", cfx_dtype_torch_name(cfx_tensor_dtype(nv)),
                       cfx_dtype_torch_name(cfx_tensor_dtype(rv)));
        return true;
    }
    if (cfx_tensor_numel(nv) > 0)
        for (int i = 0; i < nv->ndim; i++)
            if (nv->strides[i] != rv->strides[i] && nv->sizes[i] > 1) {
                cfx_buf_puts(b, ": strides ");
                put_ints_tuple(b, nv->strides, nv->ndim);
                cfx_buf_puts(b, " != ");
                put_ints_tuple(b, rv->strides, rv->ndim);
                cfx_buf_printf(b, " (mismatch at index %d)", i);
                return true;
            }
    return false;
}

enum { MAX_OUTS = 64 };

int cfx_fake_check_compare(const cfx_op *op, const cfx_value *fake_args, const cfx_value *f_r, const cfx_value *r,
                           cfx_call_name_style style)
{
    const cfx_schema *s = cfx_op_schema(op);
    cfx_value nv[MAX_OUTS], rv[MAX_OUTS];
    int nn = cfx_fake_check_flatten(f_r, s->n_returns, nv, MAX_OUTS), nr = cfx_fake_check_flatten(r, s->n_returns, rv, MAX_OUTS);
    if (nn != nr)
        return cfx_error_set(CFX_ERR, s->name, "%d != %d", nn, nr);
    for (int i = 0; i < nn; i++) {
        if (rv[i].kind != CFX_V_TENSOR || !rv[i].u.t)
            continue;
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_fake_check_describe(&b, op, fake_args, style);
        cfx_buf_printf(&b, " output %d", i);
        bool bad = nv[i].kind != CFX_V_TENSOR || !nv[i].u.t;
        if (bad)
            cfx_buf_puts(&b, ": the fake run returned no tensor here");
        else
            bad = cfx_fake_check_mismatch(&b, nv[i].u.t, rv[i].u.t);
        char *msg = cfx_buf_take(&b);
        if (bad) {
            int rc = cfx_error_set(CFX_ERR, s->name, "%s", msg ? msg : "out of memory");
            cfx_free(msg);
            return rc;
        }
        cfx_free(msg);
    }
    return CFX_OK;
}


int cfx_fake_check_run_fake(const cfx_op *op, const cfx_value *stack, cfx_value *fake_args, cfx_value *f_r,
                            cfx_fake_mode **fm)
{
    const cfx_schema *s = cfx_op_schema(op);
    memcpy(fake_args, stack, (size_t)s->n_args * sizeof *stack);
    *fm = cfx_fake_mode_new(NULL);
    if (!*fm)
        return CFX_ERR;
    suspended sus;
    suspend(&sus);
    int rc = fakeify_args(*fm, s, fake_args);
    if (rc == CFX_OK) {
        memcpy(f_r, fake_args, (size_t)s->n_args * sizeof *f_r);
        rc = cfx_fake_mode_enter(*fm);
        if (rc == CFX_OK) {
            rc = cfx_op_dispatch_stack(op, f_r);
            cfx_fake_mode_exit(*fm);
        }
    }
    resume(&sus);
    return rc;
}

bool cfx_fake_check_skips(const cfx_op *op)
{
    const char *n = cfx_op_name(op);
    const cfx_schema *s = cfx_op_schema(op);
    int n_stack = s->n_args > s->n_returns ? s->n_args : s->n_returns;
    return cfx_op_has_tag(op, CFX_TAG_dynamic_output_shape) || cfx_op_has_tag(op, CFX_TAG_inplace_view) ||
           cfx_op_has_tag(op, CFX_TAG_data_dependent_output) || !strcmp(n, "aten::lift_fresh") ||
           !strcmp(n, "aten::lift_fresh_copy") || n_stack > CFX_FAKE_CHECK_MAX_STACK;
}
