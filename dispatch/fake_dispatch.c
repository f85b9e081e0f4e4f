/* fake_dispatch.c - FakeTensorMode.__torch_dispatch__ (torch/_subclasses/fake_tensor.py,
 * fake_impls.py, PyTorch 2.13), i.e. what the fake mode does with every call that reaches it.
 *
 * A call the mode has answered before is answered again from its record, without running
 * anything below (fake_cache.c: 2.13's dispatch cache, _cached_dispatch_impl); the others go
 * through _dispatch_impl, in its order, and may leave a record:
 *  0. a lift (lift_fresh, lift_fresh_copy: torch.tensor()) of a real tensor is accepted
 *     whatever allow_non_fake_inputs says: a constant fake when its result is small, else the
 *     converter's fake of the argument; an op taking Python numbers as tensors (add, mul, ...)
 *     called on real tensors only is computed for real and answered when its result is small
 *     (fake_constants.c);
 *  1. validate_and_convert_non_fake_tensors: every tensor argument must be a fake tensor of
 *     this mode. A fake tensor of another mode is "Mixing fake modes NYI x.fake_mode=<...> vs
 *     self=<...>" (the modes by address); a real one is "Please convert all Tensors to
 *     FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in
 *     <the call>", unless allow_non_fake_inputs, in which case it is converted with
 *     from_tensor. Then, when every fake argument carries a constant, the op runs on the
 *     constants for real and small results come back as constant fakes (item() of one is its
 *     value); otherwise an argument the op writes to loses its constant. (2.13 also drops the
 *     constants of other views of that storage; cfx gives a view of a constant no constant,
 *     so constants never alias, and item() of a view of a literal is refused where 2.13
 *     answers it.)
 *  2. op_implementations_checks: data-dependent ops raise DataDependentOutputException or
 *     DynamicOutputShapeException (str(e) is the op); tensor constructors (no tensor arguments,
 *     one Tensor return) run on meta and come back fake on their `device` argument (cpu when
 *     None).
 *  3. an op with no Meta kernel runs its real kernel on zero-filled inputs when fallback
 *     kernels are allowed and its namespace is a built-in one (run_fallback_kernel), else
 *     fails with UnsupportedOperatorException (str(e) is the op);
 *  4. otherwise the Meta kernel runs (in_kernel_invocation_manager: Python and
 *     PythonTLSSnapshot excluded, so the call goes straight to Meta), and every output is
 *     wrapped into a fake tensor of this mode on `device` (if the op has that argument) or the
 *     common device of the inputs (wrap_meta_outputs_with_default_device_logic).
 * Fresh Meta-kernel outputs are turned into fake tensors in place (they are meta tensors no one
 * else holds), so a view keeps sharing its input's fake storage.
 *
 * Ownership follows the kernels' convention: a returned tensor that is not one of the inputs
 * carries one reference, owned by the innermost scope or, with no scope open, by the caller;
 * an input returned as is (in-place ops return self) carries none. Inputs converted here and
 * the zero-filled stand-ins of a fallback kernel are this file's to drop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/operator_internal.h"
#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/scope.h"
#include "dispatch/wrapped_internal.h"

/* FakeTensorMode._can_run_unsafe_fallback_allowed_namespaces */
static const char *const fallback_namespaces[] = {"debugprims", "prims", "aten", "xla", "vision",
                                                  "torchtext", "torchaudio", "quantized"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The op's namespace ("aten" of "aten::add") is one of list[0..n). */
static bool namespace_in(const cfx_schema *s, const char *const *list, int n)
{
    const char *sep = strstr(s->name, "::");
    size_t len = sep ? (size_t)(sep - s->name) : 0;
    for (int i = 0; i < n && sep; i++)
        if (strlen(list[i]) == len && strncmp(s->name, list[i], len) == 0)
            return true;
    return false;
}

/* What PyTorch's fake mode raises for instead of running (op_implementations_checks): an op
 * tagged data_dependent_output or dynamic_output_shape. */
static bool raises(const cfx_op *op)
{
    if (!(op->tags & (cfx_tag_bit(CFX_TAG_data_dependent_output) | cfx_tag_bit(CFX_TAG_dynamic_output_shape))))
        return false;
    /* fake_impls registers index.Tensor an implementation of its own (register_op_impl): the
     * meta function, whose output shape is known unless an index is a mask */
    return strcmp(cfx_op_name(op), "aten::index.Tensor") != 0;
}

/* Raises the error whose message is str(OpOverload), as the three fake exceptions print. */
static int op_exception(const cfx_op *op)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_fake_put_op_name(op, &b);
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, cfx_op_name(op), msg ? msg : "fake tensor error");
    cfx_free(msg);
    return rc;
}

/* ------------------------------------------------------------------ argument walking */

/* Calls fn on every tensor argument (tensor lists included), with its address in the stack
 * (NULL for list items, which live in arrays the stack does not own). Stops at a non-zero
 * return. */
typedef int (*tensor_fn)(void *ctx, cfx_tensor *t);

static int each_tensor_arg(const cfx_schema *s, const cfx_value *stack, tensor_fn fn, void *ctx)
{
    for (int i = 0; i < s->n_args; i++) {
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            int rc = fn(ctx, v->u.t);
            if (rc)
                return rc;
        } else if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && v->u.items[j].u.t) {
                    int rc = fn(ctx, v->u.items[j].u.t);
                    if (rc)
                        return rc;
                }
        }
    }
    return 0;
}

/* Stand-ins for tensor arguments, for the duration of one call: replaced list arrays and the
 * references this file owns. */
typedef struct swap_state {
    int n_lists;
    cfx_value *lists[8]; /* copies of list item arrays put on the stack */
    cfx_tensor **owned;  /* references to drop at the end */
    int n_owned, cap_owned;
} swap_state;

/* Empty. Not an initializer, which would clear the list slots too: they are read only below
 * n_lists, and this runs on every call. */
static void swap_init(swap_state *w)
{
    w->n_lists = w->n_owned = w->cap_owned = 0;
    w->owned = NULL;
}

static void swap_free(swap_state *w)
{
    if (!w->n_lists && !w->owned)
        return;
    for (int i = 0; i < w->n_lists; i++)
        cfx_free(w->lists[i]);
    for (int i = 0; i < w->n_owned; i++)
        cfx_tensor_release(w->owned[i]);
    cfx_free(w->owned);
}

/* Keeps a reference to t, made by a constructor (scope-owned or ours), until swap_free. */
static int keep(swap_state *w, cfx_tensor *t)
{
    if (cfx_scope_depth() > 0)
        cfx_tensor_retain(t);
    if (w->n_owned == w->cap_owned) {
        int cap = w->cap_owned ? 2 * w->cap_owned : 8;
        cfx_tensor **o = cfx_realloc(w->owned, (size_t)cap * sizeof *o);
        if (!o) {
            cfx_tensor_release(t);
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        }
        w->owned = o;
        w->cap_owned = cap;
    }
    w->owned[w->n_owned++] = t;
    return CFX_OK;
}

/* Replaces every tensor argument t by map(ctx, t) (NULL = error). */
typedef cfx_tensor *(*map_fn)(void *ctx, cfx_tensor *t);

static int map_tensor_args(const cfx_schema *s, cfx_value *stack, swap_state *w, map_fn map, void *ctx)
{
    for (int i = 0; i < s->n_args; i++) {
        cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            cfx_tensor *r = map(ctx, v->u.t);
            if (!r)
                return CFX_ERR;
            v->u.t = r;
        } else if ((v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) && v->len > 0) {
            bool any = false;
            for (uint32_t j = 0; j < v->len; j++)
                any |= v->u.items[j].kind == CFX_V_TENSOR && v->u.items[j].u.t;
            if (!any)
                continue;
            if (w->n_lists == COUNT(w->lists))
                return cfx_error_set(CFX_ERR, NULL, "fake tensor mode: too many tensor-list arguments");
            cfx_value *copy = cfx_malloc(v->len * sizeof *copy);
            if (!copy)
                return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            memcpy(copy, v->u.items, v->len * sizeof *copy);
            w->lists[w->n_lists++] = copy;
            v->u.items = copy;
            for (uint32_t j = 0; j < v->len; j++)
                if (copy[j].kind == CFX_V_TENSOR && copy[j].u.t) {
                    cfx_tensor *r = map(ctx, copy[j].u.t);
                    if (!r)
                        return CFX_ERR;
                    copy[j].u.t = r;
                }
        }
    }
    return CFX_OK;
}

/* ------------------------------------------------------------------ 1. validation */

typedef struct validate_ctx {
    cfx_fake_mode *m;
    const cfx_op *op;
    const cfx_value *stack;
} validate_ctx;

/* The error for the first argument that is not a fake tensor of this mode (without
 * allow_non_fake_inputs). */
static int validate_one(void *vctx, cfx_tensor *t)
{
    validate_ctx *c = vctx;
    if (cfx_fake_is_ours(c->m, t))
        return 0;
    if (cfx_tensor_is_fake(t))
        /* str() of a Python object names its class and address; the modes' addresses here */
        return cfx_error_set(CFX_ERR, cfx_op_name(c->op),
                             "Mixing fake modes NYI x.fake_mode=<torch._subclasses.fake_tensor.FakeTensorMode "
                             "object at %p> vs self=<torch._subclasses.fake_tensor.FakeTensorMode object at %p>",
                             (void *)t->ext.mode, (void *)&c->m->base);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode "
                     "with 'allow_non_fake_inputs'. Found in ");
    cfx_fake_render_call(c->op, c->stack, &b);
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, cfx_op_name(c->op), msg ? msg : "non-fake tensor input");
    cfx_free(msg);
    return rc;
}

typedef struct convert_ctx {
    cfx_fake_mode *m;
    swap_state *w;
} convert_ctx;

static cfx_tensor *convert_one(void *vctx, cfx_tensor *t)
{
    convert_ctx *c = vctx;
    if (cfx_fake_is_ours(c->m, t))
        return t;
    cfx_tensor *f = cfx_fake_from_tensor(c->m, t);
    if (!f || keep(c->w, f) != CFX_OK)
        return NULL;
    return f;
}

/* ------------------------------------------------------------------ device logic */

typedef struct device_ctx {
    bool meta_rhs; /* the op keeps its destination's device against meta (merge_fake_device) */
    bool found, is_cpu_zero_dim;
    cfx_device common, other; /* other: the conflicting device, when conflict */
    bool conflict;
} device_ctx;

/* FakeTensor._find_common_device's merge_devices, for a fake tensor's device d and ndim.
 * Non-zero: a conflict (recorded in c). meta_rhs: the op is one of meta_rhs_mixed_device_fns
 * (aten.add_.Tensor), which keeps its destination's device against a meta operand and the
 * other way round. */
static int merge_fake_device(device_ctx *c, cfx_device d, int ndim, bool meta_rhs)
{
    bool zd = d.type == CFX_DEVICE_CPU && ndim == 0;
    if (!c->found) {
        c->found = true;
        c->common = d;
        c->is_cpu_zero_dim = zd;
        return 0;
    }
    if (cfx_device_eq(d, c->common)) {
        if (c->is_cpu_zero_dim)
            c->is_cpu_zero_dim = zd;
        return 0;
    }
    if (zd)
        return 0;
    if (c->is_cpu_zero_dim) {
        c->common = d;
        c->is_cpu_zero_dim = zd;
        return 0;
    }
    if (meta_rhs && (d.type == CFX_DEVICE_META || c->common.type == CFX_DEVICE_META))
        return 0;
    c->conflict = true;
    c->other = d;
    return 1;
}


/* Computes the common device. On failure returns PyTorch's message (malloc'd) instead, to be
 * raised only if an output is a tensor: PyTorch computes it lazily. */
static char *common_device(const cfx_op *op, const device_ctx *dc, cfx_device *out)
{
    device_ctx c = *dc;
    if (c.found && !c.conflict) {
        *out = c.common;
        return NULL;
    }
    if (!c.found && op->numbers_as_tensors) {
        *out = cfx_device_make(CFX_DEVICE_CPU); /* scalar-only inputs compute on cpu */
        return NULL;
    }
    cfx_buf b;
    cfx_buf_init(&b);
    if (c.conflict) { /* FakeTensorDeviceMismatchError */
        cfx_buf_puts(&b, "Expected all tensors to be on the same device, but found at least two devices, ");
        cfx_fake_put_device(c.common, &b);
        cfx_buf_puts(&b, " and ");
        cfx_fake_put_device(c.other, &b);
        cfx_buf_putc(&b, '!');
    } else {
        cfx_buf_puts(&b, "Could not find common device for ");
        cfx_fake_put_op_name(op, &b);
    }
    char *msg = cfx_buf_take(&b);
    return msg ? msg : cfx_strdup("fake tensor device error");
}

/* ------------------------------------------------------------------ output wrapping */

/* Makes return value v a fake tensor of m on dev (fresh meta outputs in place). */
static int wrap_output(cfx_fake_mode *m, const cfx_op *op, cfx_value *v, cfx_device dev)
{
    cfx_tensor *t = v->u.t;
    if (cfx_fake_is_ours(m, t)) {
        if (!cfx_device_eq(cfx_tensor_fake_device(t), dev)) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "FakeTensor is wrapped to wrong device, found ");
            cfx_fake_put_device(cfx_tensor_fake_device(t), &b);
            cfx_buf_puts(&b, ", expected ");
            cfx_fake_put_device(dev, &b);
            char *msg = cfx_buf_take(&b);
            int rc = cfx_error_set_text(CFX_ERR, cfx_op_name(op), msg ? msg : "wrong device");
            cfx_free(msg);
            return rc;
        }
        return CFX_OK;
    }
    if (cfx_tensor_is_meta(t) && !t->ext.is_fake)
        return cfx_fake_mark(m, t, dev);
    /* A real output (scalar-only inputs computed on cpu): from_tensor, as PyTorch does. */
    cfx_tensor *f = cfx_fake_from_real_unmemoized(m, t);
    if (!f)
        return CFX_ERR;
    if (cfx_scope_depth() == 0)
        cfx_tensor_release(t);
    v->u.t = f;
    return CFX_OK;
}

/* dev_err: the common-device failure to raise at the first tensor output, or NULL. */
static int wrap_outputs(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack, int n_returns,
                        const char *dev_err, cfx_device dev)
{
    for (int i = 0; i < n_returns; i++) {
        cfx_value *v = &stack[i];
        int rc = CFX_OK;
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            if (dev_err)
                return cfx_error_set_text(CFX_ERR, cfx_op_name(op), dev_err);
            rc = wrap_output(m, op, v, dev);
        } else if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
            for (uint32_t j = 0; j < v->len && rc == CFX_OK; j++) {
                cfx_value it = v->u.items[j];
                if (it.kind != CFX_V_TENSOR || !it.u.t)
                    continue;
                if (dev_err)
                    return cfx_error_set_text(CFX_ERR, cfx_op_name(op), dev_err);
                rc = wrap_output(m, op, &it, dev);
                if (rc == CFX_OK && it.u.t != v->u.items[j].u.t)
                    rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                                       "fake tensor mode: cannot rewrap a real tensor inside a list output");
            }
        }
        if (rc != CFX_OK)
            return rc;
    }
    return CFX_OK;
}

/* After a failed wrap: the kernel's fresh tensor results carry the caller's reference when no
 * scope is open (a scope owns them otherwise), and the caller never sees them: drop them. */
static void drop_fresh_results(cfx_value *stack, int n_returns, cfx_tensor *const *inputs, int n_inputs)
{
    if (cfx_scope_depth() > 0)
        return;
    for (int i = 0; i < n_returns; i++) {
        if (stack[i].kind != CFX_V_TENSOR || !stack[i].u.t)
            continue;
        bool is_input = false;
        for (int j = 0; j < n_inputs && !is_input; j++)
            is_input = inputs[j] == stack[i].u.t;
        if (!is_input)
            cfx_tensor_release(stack[i].u.t);
        stack[i] = cfx_none();
    }
}

/* ------------------------------------------------------------------ kernels */

/* Redispatches op below the Python key: the Meta kernel for fake inputs (no_dispatch /
 * in_kernel_invocation_manager both exclude Python and PythonTLSSnapshot). */
static int call_below_python(const cfx_op *op, cfx_value *stack)
{
    cfx_key_guard g;
    cfx_exclude_keys_begin(&g, CFX_FAKE_PYTHON_KEYS);
    int rc = cfx_mode_redispatch(op, stack);
    cfx_key_guard_end(&g);
    return rc;
}

static bool has_meta_kernel(const cfx_op *op)
{
    static const cfx_keyset meta = {CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Dense) | CFX_KEYS_BACKEND_BIT(CFX_BACKEND_META)};
    return cfx_kernel_is_valid(cfx_op_kernel_for(op, meta));
}

typedef struct fallback_ctx {
    cfx_fake_mode *m;
    swap_state *w;
    cfx_tensor **fakes, **reals; /* parallel: the stand-in real for each fake argument */
    int n, cap;
} fallback_ctx;

static cfx_tensor *to_real(void *vctx, cfx_tensor *t)
{
    fallback_ctx *c = vctx;
    for (int i = 0; i < c->n; i++)
        if (c->fakes[i] == t)
            return c->reals[i];
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        cfx_tensor **f = cfx_realloc(c->fakes, (size_t)cap * sizeof *f);
        if (f)
            c->fakes = f;
        cfx_tensor **r = f ? cfx_realloc(c->reals, (size_t)cap * sizeof *r) : NULL;
        if (r)
            c->reals = r;
        if (!f || !r) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        c->cap = cap;
    }
    /* torch.zeros_like(e, device=e.fake_device) */
    cfx_tensor *r = cfx_tensor_new_strided(t->sizes, t->strides, t->ndim, (cfx_dtype)t->dtype,
                                           cfx_tensor_fake_device(t));
    if (!r || keep(c->w, r) != CFX_OK)
        return NULL;
    c->fakes[c->n] = t;
    c->reals[c->n] = r;
    c->n++;
    return r;
}

/* run_fallback_kernel: the real kernel on zero-filled inputs, outputs made fake. */
static int run_fallback_kernel(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack)
{
    const cfx_schema *s = op->schema;
    swap_state w;
    swap_init(&w);
    fallback_ctx c = {m, &w, NULL, NULL, 0, 0};
    int rc = map_tensor_args(s, stack, &w, to_real, &c);
    if (rc == CFX_OK)
        rc = call_below_python(op, stack);
    for (int i = 0; rc == CFX_OK && i < s->n_returns; i++) {
        cfx_value *v = &stack[i];
        if (v->kind != CFX_V_TENSOR || !v->u.t) {
            if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE)
                for (uint32_t j = 0; j < v->len; j++)
                    if (v->u.items[j].kind == CFX_V_TENSOR)
                        rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                                           "fake tensor fallback kernel: tensor-list outputs are not supported");
            continue;
        }
        cfx_tensor *e = v->u.t, *mapped = NULL;
        bool aliases = false;
        for (int k = 0; k < c.n; k++) {
            if (c.reals[k] == e)
                mapped = c.fakes[k];
            else if (c.reals[k]->storage == e->storage)
                aliases = true;
        }
        if (!mapped && aliases) {
            /* an output aliasing an input cannot be expressed on the fakes */
            rc = op_exception(op);
            break;
        }
        if (mapped) {
            v->u.t = mapped; /* an input returned (in-place op) is not a new reference */
            continue;
        }
        cfx_tensor *f = cfx_fake_from_real_unmemoized(m, e);
        if (!f) {
            rc = CFX_ERR;
            break;
        }
        if (cfx_scope_depth() == 0)
            cfx_tensor_release(e);
        v->u.t = f;
    }
    cfx_free(c.fakes);
    cfx_free(c.reals);
    swap_free(&w);
    return rc;
}

/* ------------------------------------------------------------------ argument survey */

/* What dispatch_impl needs to know about the arguments, in one walk: which tensors are this
 * mode's fakes and whether those carry constants, merge_devices over every fake tensor (as
 * FakeTensor._find_common_device, to its first conflict), the plain tensor arguments (to tell
 * a kernel's fresh result from an input it returns), and whether a device is passed. */
typedef struct arg_survey {
    int n_ours;    /* fake tensors of this mode */
    int n_foreign; /* real tensors and fakes of other modes: validation's business */
    bool any_fake; /* a fake tensor of any mode */
    bool all_const, any_const; /* over the fakes of this mode (constants) */
    bool passes_device;        /* a Device value among the arguments */
    device_ctx dev;
    int n_inputs;
    bool all_inputs_known;     /* else a result cannot be told from an input: keep it */
    cfx_tensor *inputs[64];
} arg_survey;

static inline void survey_tensor(const cfx_fake_mode *m, arg_survey *v, const cfx_tensor *t)
{
    if (cfx_fake_is_ours(m, t)) {
        v->n_ours++;
        v->any_fake = true;
        bool has = cfx_fake_constant_of(m, t) != NULL;
        v->all_const &= has;
        v->any_const |= has;
    } else {
        v->n_foreign++;
        v->any_fake |= cfx_tensor_is_fake(t);
    }
    if (!v->dev.conflict && cfx_tensor_is_fake(t))
        merge_fake_device(&v->dev, t->ext.fake_device, t->ndim, v->dev.meta_rhs);
}

static void survey(const cfx_fake_mode *m, const cfx_op *op, const cfx_schema *s, const cfx_value *stack,
                   arg_survey *v)
{
    v->n_ours = v->n_foreign = v->n_inputs = 0;
    v->any_fake = v->any_const = v->passes_device = false;
    v->all_const = v->all_inputs_known = true;
    v->dev = (device_ctx){.meta_rhs = op == m->add_inplace};
    for (int i = 0; i < s->n_args; i++) {
        const cfx_value *x = &stack[i];
        if (x->kind == CFX_V_TENSOR && x->u.t) {
            survey_tensor(m, v, x->u.t);
            if (v->n_inputs == COUNT(v->inputs))
                v->all_inputs_known = false;
            else
                v->inputs[v->n_inputs++] = x->u.t;
        } else if (x->kind == CFX_V_LIST || x->kind == CFX_V_TUPLE) {
            for (uint32_t j = 0; j < x->len; j++)
                if (x->u.items[j].kind == CFX_V_TENSOR && x->u.items[j].u.t)
                    survey_tensor(m, v, x->u.items[j].u.t);
        } else if (x->kind == CFX_V_DEVICE) {
            v->passes_device = true;
        }
    }
}

/* ------------------------------------------------------------------ the handler */

static bool is_tensor_constructor(const cfx_schema *s)
{
    return s->tensor_arg_mask == 0 && s->n_returns == 1 && s->returns[0].type->kind == CFX_TYPE_TENSOR;
}

/* key: the call's cache key, under which a plain fresh output is recorded */
static int dispatch_impl(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack, swap_state *w, const cfx_fake_key *key)
{
    const cfx_schema *s = op->schema;
    int rc;

    /* torch.tensor() makes a plain tensor and lifts it (lift_fresh; make_fx records
     * lift_fresh_copy): a real argument of a lift is expected, not refused */
    if ((op == m->lift_fresh || op == m->lift_fresh_copy) && stack[0].kind == CFX_V_TENSOR && stack[0].u.t &&
        !cfx_tensor_is_fake(stack[0].u.t))
        return cfx_fake_lift_real(m, op, stack);

    arg_survey sv;
    survey(m, op, s, stack, &sv);

    /* ops that take Python numbers as tensors, called on real tensors only: computed for
     * real, and a constant when small (else the call goes on, and is refused below) */
    if (!sv.any_fake && op->numbers_as_tensors && s->n_args <= 64 &&
        s->n_returns <= 64) {
        cfx_value st[64];
        memcpy(st, stack, (size_t)s->n_args * sizeof *st);
        if (cfx_fake_answer_with_constants(m, op, st, stack, &rc)) {
            if (rc == CFX_OK)
                memcpy(stack, st, (size_t)s->n_returns * sizeof *stack);
            return rc;
        }
    }

    if (sv.n_foreign) {
        if (!m->opts.allow_non_fake_inputs) {
            /* the first offending argument, with its message */
            validate_ctx vc = {m, op, stack};
            return each_tensor_arg(s, stack, validate_one, &vc);
        }
        convert_ctx cc = {m, w};
        if ((rc = map_tensor_args(s, stack, w, convert_one, &cc)) != CFX_OK)
            return rc;
        survey(m, op, s, stack, &sv); /* the converted fakes (which carry no constant) */
    }

    /* every fake argument a constant: the op runs on the constants for real, and its results
     * are constants if they are small (item() of a literal is its value) */
    if (sv.n_ours > 0 && sv.all_const && !cfx_op_has_tag(op, CFX_TAG_nondeterministic_seeded) &&
        !cfx_op_has_tag(op, CFX_TAG_inplace_view) && s->n_args <= 64 && s->n_returns <= 64) {
        cfx_value st[64];
        memcpy(st, stack, (size_t)s->n_args * sizeof *st);
        swap_state cw;
        swap_init(&cw);
        rc = map_tensor_args(s, st, &cw, cfx_fake_to_constant, m);
        bool answered = rc != CFX_OK || cfx_fake_answer_with_constants(m, op, st, stack, &rc);
        swap_free(&cw);
        if (answered) {
            if (rc == CFX_OK)
                memcpy(stack, st, (size_t)s->n_returns * sizeof *stack);
            return rc;
        }
    }
    if (sv.any_const)
        cfx_fake_invalidate_written(m, s, stack);

    if (raises(op))
        return op_exception(op);

    /* The `device` argument, replaced by meta for the kernel (the meta kernel must not
     * allocate); the output is faked onto the device asked for. Only a call passing a device
     * can have one, which spares most calls the name search. */
    int dev_idx = sv.passes_device ? cfx_schema_find_arg(s, "device") : -1;
    bool has_dev_arg = dev_idx >= 0 && stack[dev_idx].kind == CFX_V_DEVICE;
    cfx_device dev_arg = has_dev_arg ? stack[dev_idx].u.device : cfx_device_make(CFX_DEVICE_CPU);
    if (has_dev_arg)
        stack[dev_idx] = cfx_device_value(cfx_device_make(CFX_DEVICE_META));

    if (is_tensor_constructor(s)) {
        if ((rc = call_below_python(op, stack)) != CFX_OK)
            return rc;
        return wrap_outputs(m, op, stack, s->n_returns, NULL, dev_arg);
    }

    if (!has_meta_kernel(op)) {
        if (!m->opts.allow_fallback_kernels || !namespace_in(s, fallback_namespaces, COUNT(fallback_namespaces)))
            return op_exception(op); /* UnsupportedOperatorException */
        if (has_dev_arg)
            stack[dev_idx] = cfx_device_value(dev_arg); /* the real kernel runs for real */
        return run_fallback_kernel(m, op, stack);
    }

    /* Computed before the kernel overwrites the arguments; reported only if an output is a
     * tensor, as PyTorch computes it lazily. */
    cfx_device common = cfx_device_make(CFX_DEVICE_CPU);
    char *dev_err = common_device(op, &sv.dev, &common);
    /* The kernel overwrites the arguments with its results: sv.inputs tells a fresh result
     * (ours to drop if wrapping fails) from an input returned as is. */
    rc = call_below_python(op, stack);
    if (rc == CFX_OK) {
        rc = wrap_outputs(m, op, stack, s->n_returns, dev_err, has_dev_arg ? dev_arg : common);
        if (rc != CFX_OK && sv.all_inputs_known)
            drop_fresh_results(stack, s->n_returns, sv.inputs, sv.n_inputs);
        if (rc == CFX_OK && key->usable && sv.all_inputs_known && !has_dev_arg)
            cfx_fake_cache_insert(m, key, sv.inputs, sv.n_inputs, stack);
    }
    cfx_free(dev_err);
    return rc;
}

int cfx_fake_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    cfx_fake_mode *m = (cfx_fake_mode *)self;
    if (!op->schema)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "fake tensor mode: operator has no schema");
    /* _cached_dispatch_impl: a call seen before is answered from its record */
    cfx_fake_key key;
    int hit = cfx_fake_cache_lookup(m, op, stack, &key);
    if (hit)
        return hit > 0 ? CFX_OK : cfx_error_status();
    swap_state w;
    swap_init(&w);
    int rc = dispatch_impl(m, op, stack, &w, &key);
    swap_free(&w);
    return rc;
}
