/* opcheck.c - torch.library.opcheck's checks on one call (opcheck.h) and CrossRefFakeMode.
 *
 * One call is run up to three times, each time on fresh copies of the caller's arguments so
 * the caller's tensors never change and every run starts from the same values: on fakes (the
 * Meta kernels, fake_check.c), for real through cfx_op_call (boxed), and for a built-in op
 * through its typed entry point. The copies keep sizes and strides (a transposed or sliced
 * input stays one), not the storage offset, which no check looks at. A further untouched copy
 * is what "was this argument mutated" compares against, as SchemaCheckMode's clone_inputs.
 *
 * Texts: SchemaCheckMode's RuntimeErrors (torch/_subclasses/schema_check_mode.py, 2.13) and
 * check_metadata_matches' assertions (torch/_dispatch/python.py), each after the call's
 * description; where PyTorch has no text (an output that must alias but does not, the real and
 * fake runs disagreeing on raising, typed vs boxed) cfx's own, in the same shape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake_check_internal.h"
#include "dispatch/opcheck.h"
#include "dispatch/ops_gen_kernels.h"
#include "dispatch/ops_table.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "dispatch/wrapped_internal.h"

enum { MAX_STACK = CFX_FAKE_CHECK_MAX_STACK, MAX_OUTS = 64 };

/* ---- copies and comparisons of values --------------------------------------------------- */

static int64_t elem_offset(const cfx_tensor *t, int64_t linear)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t n = t->sizes[d] ? t->sizes[d] : 1;
        off += (linear % n) * t->strides[d];
        linear /= n;
    }
    return off;
}

/* Same sizes, strides and dtype, new storage, same values. */
static cfx_tensor *copy_tensor(const cfx_tensor *t)
{
    cfx_tensor *r = cfx_tensor_new_strided(t->sizes, t->strides, t->ndim, cfx_tensor_dtype(t), t->device);
    if (!r || cfx_tensor_is_meta(t))
        return r;
    if (t->is_wrapped_number)
        cfx_wrapped_number_mark(r);
    size_t es = cfx_dtype_size(cfx_tensor_dtype(t));
    const char *src = cfx_tensor_data(t);
    char *dst = cfx_tensor_data(r);
    for (int64_t i = 0, n = cfx_tensor_numel(t); i < n; i++)
        memcpy(dst + elem_offset(r, i) * (int64_t)es, src + elem_offset(t, i) * (int64_t)es, es);
    return r;
}

static int copy_values(const cfx_value *in, cfx_value *out, int n)
{
    for (int i = 0; i < n; i++) {
        out[i] = in[i];
        if (in[i].kind == CFX_V_TENSOR && in[i].u.t) {
            if (!(out[i].u.t = copy_tensor(in[i].u.t)))
                return CFX_ERR;
        } else if ((in[i].kind == CFX_V_LIST || in[i].kind == CFX_V_TUPLE) && in[i].len) {
            cfx_value *items = cfx_scope_alloc(in[i].len * sizeof *items);
            if (!items || copy_values(in[i].u.items, items, (int)in[i].len) != CFX_OK)
                return items ? CFX_ERR : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            out[i].u.items = items;
        }
    }
    return CFX_OK;
}

static bool same_number(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

/* torch.allclose(equal_nan=True) with zero tolerances, sizes first (bitwise_equal). */
static bool same_values(const cfx_tensor *a, const cfx_tensor *b)
{
    if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof *a->sizes))
        return false;
    if (cfx_tensor_is_meta(a) || cfx_tensor_is_meta(b))
        return true;
    for (int64_t i = 0, n = cfx_tensor_numel(a); i < n; i++)
        if (!same_number(cfx_tensor_get_double(a, i), cfx_tensor_get_double(b, i)))
            return false;
    return true;
}

static bool same_strides(const cfx_tensor *a, const cfx_tensor *b)
{
    return a->ndim == b->ndim && !memcmp(a->strides, b->strides, (size_t)a->ndim * sizeof *a->strides);
}

/* torch._C._overlaps: the two views touch a common element of one storage. */
static bool overlaps(const cfx_tensor *a, const cfx_tensor *b)
{
    if (!a || !b || a->storage != b->storage || !cfx_tensor_numel(a) || !cfx_tensor_numel(b))
        return false;
    int64_t lo[2], hi[2];
    const cfx_tensor *t[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        lo[k] = hi[k] = t[k]->storage_offset;
        for (int d = 0; d < t[k]->ndim; d++) {
            int64_t ext = (t[k]->sizes[d] - 1) * t[k]->strides[d];
            if (ext < 0)
                lo[k] += ext;
            else
                hi[k] += ext;
        }
    }
    return lo[0] <= hi[1] && lo[1] <= hi[0];
}

/* The tensors of a value (a tensor, or the tensors of a list). */
static int tensors_of(cfx_value v, cfx_tensor **out, int cap)
{
    if (v.kind == CFX_V_TENSOR)
        return v.u.t && cap > 0 ? (out[0] = v.u.t, 1) : 0;
    int n = 0;
    if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE)
        for (uint32_t i = 0; i < v.len && n < cap; i++)
            if (v.u.items[i].kind == CFX_V_TENSOR && v.u.items[i].u.t)
                out[n++] = v.u.items[i].u.t;
    return n;
}

/* ---- alias annotations ---------------------------------------------------------------------- */

static const cfx_alias_info *alias_or_contained(const cfx_argument *a)
{
    const cfx_alias_info *ai = a->type->alias;
    return ai ? (ai->contained ? ai->contained : ai) : NULL;
}

static bool has_wildcard(const cfx_alias_info *ai)
{
    for (int i = 0; ai && i < ai->n_after; i++)
        if (!strcmp(ai->after[i], "*"))
            return true;
    for (int i = 0; ai && i < ai->n_before; i++)
        if (!strcmp(ai->before[i], "*"))
            return true;
    return false;
}

/* The two annotations name a common alias set (SchemaInfo::may_contain_alias, without the
 * argument values: no two of opcheck's arguments share storage). */
static bool share_set(const cfx_alias_info *x, const cfx_alias_info *y)
{
    if (!x || !y)
        return false;
    for (int i = 0; i < x->n_before; i++)
        for (int j = 0; j < y->n_before; j++)
            if (!strcmp(x->before[i], y->before[j]))
                return true;
    return false;
}

static bool may_alias(const cfx_argument *x, const cfx_argument *y)
{
    const cfx_alias_info *a = alias_or_contained(x), *b = alias_or_contained(y);
    return share_set(a, b) || (a && has_wildcard(a)) || (b && has_wildcard(b));
}

static bool is_mutable(const cfx_argument *a)
{
    const cfx_alias_info *ai = alias_or_contained(a);
    return ai && ai->is_write;
}

/* ---- the checks ------------------------------------------------------------------------------ */

typedef struct call {
    const cfx_op *op;
    const cfx_schema *s;
    const cfx_value *orig; /* untouched copies of the arguments: descriptions, mutations */
    char *desc;
} call;

static int fail(const call *c, const char *fmt, const char *a, const char *b)
{
    cfx_error_clear();
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, c->desc ? c->desc : "?");
    cfx_buf_puts(&m, ": ");
    cfx_buf_printf(&m, fmt, a, b);
    char *text = cfx_buf_take(&m);
    int rc = cfx_error_set_text(CFX_ERR, cfx_op_name(c->op), text ? text : "out of memory");
    cfx_free(text);
    return rc;
}

/* PyTorch's standardize_name */
static const char *arg_name(const cfx_argument *a) { return strcmp(a->name, "self") ? a->name : "input"; }

static bool composite_implicit(const cfx_op *op)
{
    return cfx_op_has_kernel_for_key(op, CFX_KEY_CompositeImplicitAutograd);
}

/* SchemaCheckMode's checks, after the real run: after = the arguments as the kernel left them,
 * out = its returns. */
static int check_schema(const call *c, const cfx_value *after, const cfx_value *out)
{
    const cfx_schema *s = c->s;
    const char *name = s->name;
    bool unsafe = !strcmp(name, "aten::_unsafe_view") || !strcmp(name, "aten::unsafe_split");
    bool lift = !strcmp(name, "aten::lift") || !strcmp(name, "aten::lift_fresh");
    cfx_tensor *ot[MAX_OUTS], *at[MAX_OUTS], *bt[MAX_OUTS];
    char buf[32];
    for (int i = 0; i < s->n_args; i++) {
        const cfx_argument *arg = &s->args[i];
        int na = tensors_of(after[i], at, MAX_OUTS);
        if (!na)
            continue;
        for (int j = 0; j < s->n_returns; j++) {
            int no = tensors_of(out[j], ot, MAX_OUTS);
            bool aliased = false, identical = false;
            for (int p = 0; p < no; p++)
                for (int q = 0; q < na; q++) {
                    aliased |= overlaps(ot[p], at[q]);
                    identical |= out[j].kind == CFX_V_TENSOR && ot[p] == at[q];
                }
            /* SchemaCheckMode sits below autograd: it never sees a CompositeImplicitAutograd op,
             * only what the op decomposes into (dropout(train=False) returns its input) */
            if (composite_implicit(c->op))
                continue;
            if (aliased && !unsafe && !may_alias(&s->returns[j], arg))
                return fail(c, "Argument %s is not defined to alias output but was aliasing%s", arg_name(arg), "");
            if (identical && !is_mutable(arg) && !lift) {
                snprintf(buf, sizeof buf, "%d", j);
                return fail(c,
                            "Dispatcher operators below autograd are not allowed to directly return inputs.\n"
                            "However, we found that `outputs[%s] is %s", /* sic: no closing backtick in 2.13 */
                            buf, arg_name(arg));
            }
            /* cfx's own: a view's output must share its input's storage (composite ops, which
             * may copy instead, reshape of a non-viewable tensor, were skipped above) */
            if (no && !aliased && share_set(alias_or_contained(&s->returns[j]), alias_or_contained(arg))) {
                snprintf(buf, sizeof buf, "%d", j);
                return fail(c, "Output %s is defined to alias argument %s but was not aliasing", buf, arg_name(arg));
            }
        }
        int nb = tensors_of(c->orig[i], bt, MAX_OUTS);
        bool mutated = false;
        for (int q = 0; q < na && q < nb; q++)
            mutated |= !same_values(bt[q], at[q]) || !same_strides(bt[q], at[q]);
        if (mutated && !is_mutable(arg))
            return fail(c, "Argument %s is not defined as mutable but was mutated%s", arg_name(arg), "");
    }
    for (int i = 0; i < s->n_returns; i++)
        for (int j = i + 1; j < s->n_returns; j++) {
            int ni = tensors_of(out[i], ot, MAX_OUTS), nj = tensors_of(out[j], bt, MAX_OUTS);
            bool aliased = false;
            for (int p = 0; p < ni; p++)
                for (int q = 0; q < nj; q++)
                    aliased |= overlaps(ot[p], bt[q]);
            if (aliased && !may_alias(&s->returns[i], &s->returns[j]) && !composite_implicit(c->op)) {
                char bi[16], bj[16];
                snprintf(bi, sizeof bi, "%d", i);
                snprintf(bj, sizeof bj, "%d", j);
                return fail(c, "Outputs %s and %s alias unexpectedly", bi, bj);
            }
        }
    return CFX_OK;
}

/* ---- typed vs boxed ---------------------------------------------------------------------------- */

static int builtin_row(const cfx_op *op)
{
    for (int i = 0; i < cfx_ops_table.n_rows; i++)
        if (__atomic_load_n(&cfx_ops_table.handles[i], __ATOMIC_ACQUIRE) == op)
            return i;
    return -1;
}

static bool same_output(const cfx_value *a, const cfx_value *b, bool values)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind != CFX_V_TENSOR)
        return a->kind == CFX_V_LIST || a->kind == CFX_V_TUPLE ? a->len == b->len : cfx_value_equal(*a, *b);
    const cfx_tensor *x = a->u.t, *y = b->u.t;
    if (!x || !y)
        return x == y;
    return x->dtype == y->dtype && same_strides(x, y) && (values ? same_values(x, y) : x->ndim == y->ndim);
}

static int check_typed(const call *c, const cfx_value *boxed_after, const cfx_value *boxed_out)
{
    int row = builtin_row(c->op);
    if (row < 0 || !cfx_ops_table.rows[row].entry)
        return CFX_OK; /* a custom op has no typed entry point */
    const cfx_schema *s = c->s;
    cfx_value stack[MAX_STACK], args[MAX_STACK];
    if (copy_values(c->orig, args, s->n_args) != CFX_OK)
        return CFX_ERR;
    memcpy(stack, args, (size_t)s->n_args * sizeof *stack);
    cfx_adapter *ad = cfx_adapter_new_lead(s, cfx_ops_table.rows[row].entry);
    if (!ad)
        return CFX_ERR;
    int rc = cfx_adapter_call_lead(ad, (void *)CFX_HERE, stack);
    cfx_adapter_free(ad);
    char id[128];
    snprintf(id, sizeof id, "cfx_op_%s", cfx_ops_table.rows[row].id);
    if (rc != CFX_OK) {
        char *msg = cfx_strdup(cfx_error_message() ? cfx_error_message() : "");
        rc = fail(c, "the typed call %s raised and the boxed call did not: %s", id, msg ? msg : "");
        cfx_free(msg);
        return rc;
    }
    bool values = !cfx_op_has_tag(c->op, CFX_TAG_nondeterministic_seeded);
    cfx_value fa[MAX_OUTS], fb[MAX_OUTS];
    int na = cfx_fake_check_flatten(stack, s->n_returns, fa, MAX_OUTS);
    int nb = cfx_fake_check_flatten(boxed_out, s->n_returns, fb, MAX_OUTS);
    bool same = na == nb;
    for (int i = 0; same && i < na; i++)
        same = same_output(&fa[i], &fb[i], values);
    for (int i = 0; same && i < s->n_args; i++)
        if (args[i].kind == CFX_V_TENSOR && args[i].u.t)
            same = same_output(&args[i], &boxed_after[i], values);
    return same ? CFX_OK : fail(c, "the typed call %s and the boxed call cfx_op_call disagree%s", id, "");
}

/* ---- one call ------------------------------------------------------------------------------------ */

static char *take_message(void)
{
    char *m = cfx_strdup(cfx_error_message() ? cfx_error_message() : "");
    cfx_error_clear();
    return m;
}

static int opcheck_in_scope(const cfx_op *op, const cfx_value *given, int n_given, unsigned tests, bool *ran)
{
    const cfx_schema *s = cfx_op_schema(op);
    if (!s)
        return cfx_error_set(CFX_ERR, NULL, "opcheck(op, ...): op must be a defined operator");
    if (s->n_args > MAX_STACK || s->n_returns > MAX_STACK || n_given > MAX_STACK)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "opcheck: %s takes or returns more than %d values",
                             cfx_op_name(op), MAX_STACK);
    cfx_value full[MAX_STACK], orig[MAX_STACK], work[MAX_STACK], stack[MAX_STACK];
    if (n_given > s->n_args) { /* cfx_op_call's binding error: "expected at most ..." */
        memcpy(stack, given, (size_t)n_given * sizeof *stack);
        return cfx_op_call((cfx_op *)op, stack, n_given, MAX_STACK);
    }
    memcpy(full, given, (size_t)n_given * sizeof *full);
    for (int i = n_given; i < s->n_args; i++) {
        if (!s->args[i].has_default) { /* cfx_op_call says what is missing, in PyTorch's words */
            memcpy(stack, full, (size_t)n_given * sizeof *stack);
            return cfx_op_call((cfx_op *)op, stack, n_given, MAX_STACK);
        }
        full[i] = s->args[i].default_value;
    }
    if (copy_values(full, orig, s->n_args) != CFX_OK || copy_values(full, work, s->n_args) != CFX_OK)
        return CFX_ERR;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_fake_check_describe(&b, op, orig, CFX_CALL_NAME_QUALIFIED);
    call c = {op, s, orig, cfx_buf_take(&b)};

    bool fake = (tests & CFX_OPCHECK_FAKE) && !cfx_fake_check_skips(op);
    cfx_value fake_args[MAX_STACK], f_r[MAX_STACK];
    cfx_fake_mode *fm = NULL;
    char *fake_msg = NULL, *real_msg = NULL;
    int fake_rc = CFX_OK;
    if (fake && (fake_rc = cfx_fake_check_run_fake(op, work, fake_args, f_r, &fm)) != CFX_OK)
        fake_msg = take_message();
    memcpy(stack, work, (size_t)s->n_args * sizeof *stack);
    int real_rc = cfx_op_call((cfx_op *)op, stack, s->n_args, MAX_STACK);
    if (real_rc != CFX_OK)
        real_msg = take_message();
    /* A sample the real kernel rejects checks nothing (OpInfo's loops skip it: outside the
     * op's dtypes or domain); a Meta kernel that rejects what the real one takes is a bug. */
    int rc = CFX_OK;
    if (fake && fake_rc != CFX_OK && real_rc == CFX_OK)
        rc = fail(&c, "the fake run raised and the real one did not: %s%s", fake_msg, "");
    else if (fake && real_rc == CFX_OK)
        rc = cfx_fake_check_compare(op, fake_args, f_r, stack, CFX_CALL_NAME_QUALIFIED);
    if (rc == CFX_OK && real_rc == CFX_OK && (tests & CFX_OPCHECK_SCHEMA))
        rc = check_schema(&c, work, stack);
    if (rc == CFX_OK && (tests & CFX_OPCHECK_DISPATCH))
        rc = cfx_op_check_invariants(op);
    if (rc == CFX_OK && real_rc == CFX_OK && (tests & CFX_OPCHECK_DISPATCH))
        rc = check_typed(&c, work, stack);
    if (ran)
        *ran = real_rc == CFX_OK;
    cfx_fake_mode_free(fm);
    cfx_free(fake_msg);
    cfx_free(real_msg);
    cfx_free(c.desc);
    return rc;
}

int cfx_opcheck(const cfx_op *op, const cfx_value *args, int n_args, unsigned tests, bool *ran)
{
    if (ran)
        *ran = false;
    if (!op)
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR, NULL, "opcheck(op, ...): op is NULL");
    if (n_args < 0 || (n_args && !args))
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "opcheck(op, ...): bad argument count %d", n_args);
    cfx_scope sc = cfx_scope_begin();
    int rc = opcheck_in_scope(op, args, n_args, tests, ran);
    cfx_scope_end(sc);
    return rc;
}

int cfx_opcheck_op(const cfx_op *op, unsigned tests, cfx_opcheck_report *report)
{
    cfx_opcheck_report r = {0, 0, 0};
    if (report)
        *report = r;
    if (!op)
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR, NULL, "opcheck(op, ...): op is NULL");
    enum { CAP = 256 };
    cfx_scope sc = cfx_scope_begin();
    cfx_opcheck_sample *samples = cfx_malloc(CAP * sizeof *samples);
    int n = samples ? cfx_opcheck_samples(op, samples, CAP) : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    int rc = n < 0 ? n : CFX_OK;
    const char *skip = cfx_opcheck_skip_reason(op);
    if (n == 0 && skip) {
        cfx_free(samples);
        cfx_scope_end(sc);
        return CFX_OK; /* listed, with its reason */
    }
    if (n == 0)
        rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                           "opcheck: %s has no sample inputs (its arguments cannot be generated: add a row to "
                           "the override table in dispatch/opcheck_samples.c)",
                           cfx_op_name(op));
    for (int i = 0; rc == CFX_OK && i < n && i < CAP; i++) {
        bool ran = false;
        rc = cfx_opcheck(op, samples[i].args, samples[i].n_args, tests, &ran);
        r.n_samples++;
        r.n_ran += ran;
        /* an expected failure must fail (generate_opcheck_tests' "Unexpected success") */
        if (samples[i].xfail && rc == CFX_OK)
            rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                               "opcheck: unexpected success for %s on sample '%s', listed as an expected failure "
                               "(%s): remove it from the table in dispatch/opcheck_samples.c",
                               cfx_op_name(op), samples[i].what, samples[i].xfail);
        else if (samples[i].xfail) {
            r.n_xfail++;
            cfx_error_clear();
            rc = CFX_OK;
        }
    }
    if (rc == CFX_OK && n > 0 && r.n_ran == 0)
        rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                           "opcheck: none of the %d samples of %s ran for real (each raised on CPU and on fakes)",
                           r.n_samples, cfx_op_name(op));
    cfx_free(samples);
    cfx_scope_end(sc);
    if (report)
        *report = r;
    return rc;
}
