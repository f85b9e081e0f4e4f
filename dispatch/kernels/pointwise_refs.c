/* pointwise_refs.c - the pointwise families' Meta kernels: PyTorch 2.13's Python references.
 *
 * torch/_meta_registrations.py makes an op's reference (torch/_refs) its Meta kernel. For the
 * families that is one shape of code, replayed here on metadata (prims.h):
 *
 *   elementwise_type_promotion_wrapper: computation dtype from the tensors, each converted
 *       to it (.to: dense strides kept, others made dense in the same order);
 *   the body: _maybe_broadcast (every tensor but a CPU scalar expanded to the common shape),
 *       the reference's own checks (the row's .ref_check: sub's two-bool check, add's and
 *       sub's alpha, neg's bool check), b = prims.mul(b, alpha) when the reference scales,
 *       then the prim: check_same_device, output laid out by the permutation of its operands;
 *   the wrapper again: the result converted to the result dtype.
 *
 * So the Meta kernel accepts what the C++ one refused (sub of float and bool: the bool is
 * promoted first; a bool alpha on floats) and refuses in other words ("Tensor on device cpu is
 * not on the expected device meta!"). relu has a reference of its own, where(le(a, 0), 0, a),
 * and the in-place ops are not references at all: their Meta kernel is meta_binop_inplace
 * (_alpha), a few dtype checks and check_inplace_broadcast, returning self. */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/scope.h"
#include "dispatch/wrapped_internal.h"

/* What the reference receives for alpha: a Python kernel is called without the keyword
 * arguments equal to their schema default (parseIValuesToPyArgsKwargs, an IValue comparison:
 * the int 1, not 1.0 or True), and the reference's default is then None (add) or 1 (sub). */
static cfx_value python_alpha(const cfx_pointwise *p, cfx_value alpha)
{
    if (!p->has_alpha || cfx_value_equal(alpha, p->alpha_default))
        return cfx_none();
    return alpha;
}

static cfx_promotion promotion(const cfx_pointwise *p)
{
    if (p->kind == CFX_POINTWISE_COMPARE)
        return CFX_PROMOTE_ALWAYS_BOOL;
    return p->kind == CFX_POINTWISE_UNARY_FLOAT || p->kind == CFX_POINTWISE_BINARY_FLOAT ? CFX_PROMOTE_INT_TO_FLOAT
                                                                                        : CFX_PROMOTE_DEFAULT;
}

/* The dtype of prims.mul(b, alpha) for a 0-dim CPU b: a prim on CPU tensors is not its meta
 * function but its ATen implementation, torch.mul(b, alpha), so C++'s result_type with alpha a
 * wrapped number decides: it lifts only a lower category (a bool b times an int is int64, an
 * integral b times a float the default float32). */
static cfx_dtype cpu_scalar_times(cfx_dtype b, cfx_value alpha)
{
    cfx_pytype t = cfx_pytype_of_dtype(b), a;
    if (!cfx_pytype_of_value(alpha, &a) || a <= t)
        return b;
    return a == CFX_PY_FLOAT ? CFX_FLOAT32 : CFX_INT64;
}

/* _make_elementwise_unary_reference / _make_elementwise_binary_reference, and add and sub,
 * which have the same shape with alpha. */
static cfx_tensor *reference(const cfx_pointwise *p, const cfx_tensor *a, const cfx_tensor *b, cfx_value alpha)
{
    /* a wrapped number reaches the reference as the Python number it was (toPyObject): it
     * takes part in type promotion by its Python type only, and in no layout */
    const cfx_tensor *in[2] = {a, b};
    int nin = b ? 2 : 1, n = 0, nn = 0;
    bool numbers = (a->is_wrapped_number || (b && b->is_wrapped_number)) &&
                   !(a->is_wrapped_number && (!b || b->is_wrapped_number));
    cfx_tmeta M[2];
    cfx_tmeta *ops[2];
    cfx_pytype nums[2];
    cfx_tmeta *B = NULL; /* the second operand when it is a tensor */
    for (int i = 0; i < nin; i++) {
        if (numbers && in[i]->is_wrapped_number) {
            cfx_pytype_of_value(cfx_wrapped_number_value(in[i]), &nums[nn++]);
            continue;
        }
        cfx_tmeta_of(&M[n], in[i]);
        ops[n] = &M[n];
        if (i == 1)
            B = &M[n];
        n++;
    }
    cfx_dtype compute, result;
    cfx_prims_elementwise_dtypes((const cfx_tmeta *const *)ops, n, nums, nn, promotion(p), &compute, &result);
    for (int i = 0; i < n; i++)
        cfx_prims_to(ops[i], compute);
    if (n == 2 && !cfx_prims_maybe_broadcast(p->name, ops, 2))
        return NULL;
    bool scale = false;
    if (p->ref_check && !p->ref_check(p->name, compute, python_alpha(p, alpha), &scale, n))
        return NULL;
    cfx_tmeta scaled;
    if (scale && B) {
        /* prims.mul(b, alpha): a new tensor laid out by b alone (the number takes no part),
         * which takes b's place */
        const cfx_tmeta *just_b[1] = {B};
        if (!cfx_prims_elementwise(p->name, &scaled, just_b, 1, 0, CFX_PROMOTE_DEFAULT))
            return NULL;
        if (cfx_tmeta_is_cpu_scalar(B))
            scaled.dtype = cpu_scalar_times(B->dtype, alpha);
        ops[n - 1] = &scaled;
    }
    cfx_tmeta out;
    if (!cfx_prims_elementwise(p->name, &out, (const cfx_tmeta *const *)ops, n, 0, 
                               p->kind == CFX_POINTWISE_COMPARE ? CFX_PROMOTE_ALWAYS_BOOL : CFX_PROMOTE_DEFAULT))
        return NULL;
    if (p->to_real && cfx_dtype_is_complex(out.dtype)) {
        /* COMPLEX_TO_FLOAT (abs, angle): the prim's result is of the real dtype, laid out alike */
        out.dtype = cfx_dtype_to_real(out.dtype);
        result = cfx_dtype_to_real(result);
    }
    cfx_prims_to(&out, result);
    return cfx_tmeta_new_tensor(&out);
}

cfx_tensor *cfx_pointwise_meta(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    if (!cfx_pointwise_alpha_ok(p, alpha))
        return NULL;
    return reference(p, a, b, alpha);
}

/* ---- in-place: _meta_registrations' meta_binop_inplace_alpha / meta_binop_inplace /
 * meta_div_inplace, by the op's family ------------------------------------------------------ */

/* check_inplace_broadcast(self.shape, other.shape) */
bool cfx_pointwise_inplace_broadcast(const char *op, const cfx_tensor *self, const cfx_tensor *other)
{
    cfx_tmeta s, o;
    cfx_tmeta_of(&s, self);
    cfx_tmeta_of(&o, other);
    const cfx_tmeta *so[2] = {&s, &o};
    const int64_t *common;
    int64_t buf[CFX_MAX_DIMS];
    int nc;
    unsigned differs;
    if (!cfx_prims_broadcast_shapes(op, so, 2, buf, &common, &nc, &differs))
        return false;
    if (!(differs & 1))
        return true;
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, "output with shape ");
    cfx_prims_put_size(&m, self->sizes, self->ndim);
    cfx_buf_puts(&m, " doesn't match the broadcast shape ");
    cfx_prims_put_tuple(&m, common, nc);
    char *msg = cfx_buf_take(&m);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "output shape doesn't match the broadcast shape");
    cfx_free(msg);
    return false;
}

/* can_safe_cast_to(cast_to=to, cast_from=from), by category */
static bool can_safe_cast(cfx_dtype to, cfx_dtype from)
{
    return cfx_pytype_of_dtype(to) >= cfx_pytype_of_dtype(from);
}

/* _make_inplace(ref): ref(a, out=a), i.e. the reference, then _safe_copy_out's check that its
 * result can be cast into a */
static cfx_tensor *unary_inplace(const cfx_pointwise *p, cfx_tensor *a)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = reference(p, a, NULL, cfx_none());
    bool ok = r != NULL;
    if (ok && p->to_real && cfx_dtype_is_complex((cfx_dtype)a->dtype)) {
        /* abs_: the COMPLEX_TO_FLOAT reference's out wrapper wants the result's exact dtype */
        cfx_error_set(CFX_ERR, p->name, "Expected out tensor to have dtype %s but got %s instead",
                      cfx_dtype_torch_name(cfx_dtype_to_real((cfx_dtype)a->dtype)),
                      cfx_dtype_torch_name((cfx_dtype)a->dtype));
        ok = false;
    }
    if (ok && !can_safe_cast((cfx_dtype)a->dtype, (cfx_dtype)r->dtype)) {
        cfx_error_set(CFX_ERR, p->name,
                      "Attempting to cast from %s to out tensor with dtype %s, but this can't be cast because it "
                      "is not safe!",
                      cfx_dtype_torch_name((cfx_dtype)r->dtype), cfx_dtype_torch_name((cfx_dtype)a->dtype));
        ok = false;
    }
    cfx_scope_end(s);
    if (!ok)
        return NULL;
    cfx_tensor_bump_version(a); /* ADInplaceOrView, above the Meta kernel in PyTorch */
    return a;
}

cfx_tensor *cfx_pointwise_meta_inplace(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    if (!cfx_pointwise_alpha_ok(p, alpha))
        return NULL;
    if (!b)
        return unary_inplace(p, a);
    /* a wrapped number is the Python number there: its type, and no shape */
    bool number = b->is_wrapped_number;
    cfx_pytype self_t = cfx_pytype_of_dtype((cfx_dtype)a->dtype), other_t = cfx_pytype_of_dtype((cfx_dtype)b->dtype);
    if (p->has_alpha) {
        /* meta_binop_inplace_alpha: no alpha or device checks, only the element-size ones */
        if (self_t == CFX_PY_INT && other_t == CFX_PY_FLOAT) {
            cfx_error_set(CFX_ERR, p->name,
                          "Promotion of int.add/sub_(float) in in-place ops are not possible due to element size "
                          "change.");
            return NULL;
        }
        if (self_t == CFX_PY_BOOL && other_t != CFX_PY_BOOL) {
            cfx_error_set(CFX_ERR, p->name,
                          "Promotion of bool.add/sub_(others) in in-place ops are not possible due to element "
                          "size change.");
            return NULL;
        }
    } else if (p->kind == CFX_POINTWISE_BINARY_FLOAT) {
        /* meta_div_inplace */
        cfx_tmeta A, B;
        cfx_tmeta_of(&A, a);
        cfx_tmeta_of(&B, b);
        const cfx_tmeta *ab[2] = {&A, &B};
        cfx_dtype compute, result;
        cfx_prims_elementwise_dtypes(ab, number ? 1 : 2, &other_t, number ? 1 : 0, CFX_PROMOTE_INT_TO_FLOAT, &compute,
                                     &result);
        if (!can_safe_cast((cfx_dtype)a->dtype, result)) {
            cfx_error_set(CFX_ERR, p->name, "result type %s can't be cast to the desired output type %s",
                          cfx_dtype_torch_name(result), cfx_dtype_torch_name((cfx_dtype)a->dtype));
            return NULL;
        }
    } /* else meta_binop_inplace: the broadcast check alone */
    if (!number && !cfx_pointwise_inplace_broadcast(p->name, a, b))
        return NULL;
    cfx_tensor_bump_version(a); /* ADInplaceOrView, above the Meta kernel in PyTorch */
    return a;
}

/* ---- the references' own checks ------------------------------------------------------------ */

/* The alpha check both add and sub make, against the computation dtype's Python type. */
static bool alpha_castable(const char *op, cfx_dtype computation, cfx_value alpha)
{
    cfx_pytype want = cfx_pytype_of_dtype(computation), have;
    if (!cfx_pytype_of_value(alpha, &have) || cfx_pytype_weakly_lesser(have, want))
        return true;
    cfx_error_set(CFX_ERR, op, "alpha argument of type %s cannot be safely cast to type %s!", cfx_pytype_repr(have),
                  cfx_pytype_repr(want));
    return false;
}

/* add: any alpha passed scales, checked unless the tensors are bool */
bool cfx_pointwise_ref_add(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale, int ntensors)
{
    (void)ntensors;
    if (cfx_value_is_none(alpha))
        return true;
    if (computation != CFX_BOOL && !alpha_castable(op, computation, alpha))
        return false;
    *scale = true;
    return true;
}

/* sub: two bool tensors refused (one bool was promoted away already; a bool number is no
 * tensor), then an alpha other than 1 (as a number: 1.0 and True are 1) checked and applied */
bool cfx_pointwise_ref_sub(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale, int ntensors)
{
    if (computation == CFX_BOOL && ntensors == 2) {
        cfx_error_set(CFX_ERR, op,
                      "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                      "`logical_xor()` operator instead.");
        return false;
    }
    if (cfx_value_is_none(alpha) || cfx_value_to_double(alpha) == 1)
        return true;
    if (!alpha_castable(op, computation, alpha))
        return false;
    *scale = true;
    return true;
}

/* _neg_meta, on the promoted input */
bool cfx_pointwise_ref_neg(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale, int ntensors)
{
    (void)ntensors;
    (void)alpha;
    (void)scale;
    if (computation != CFX_BOOL)
        return true;
    cfx_error_set(CFX_ERR, op,
                  "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead.");
    return false;
}

/* ---- relu ---------------------------------------------------------------------------------- */

/* torch._refs.nn.functional.relu: where(le(a, 0), 0, a), through the dispatcher:
 *   le.Scalar's reference: a converted to le's computation dtype (a bool input compares as
 *       int64), prims.le laid out by a alone;
 *   where.ScalarSelf (C++): the scalar's and a's result type (int64 for bool a), a converted
 *       to it, scalar_tensor(0) on a's device; where.self's reference broadcasts the 0-dim
 *       scalar (all strides 0) and prims.where lays the output out by (pred, 0, a);
 *   relu's wrapper converts the result back to a's dtype (bool stays bool, unchecked). */
cfx_tensor *cfx_meta_relu(cfx_tensor *self)
{
    const char *op = "aten::relu";
    cfx_dtype a_dtype = (cfx_dtype)self->dtype;
    cfx_tmeta L, P;
    cfx_tmeta_of(&L, self);
    const cfx_tmeta *just_l[1] = {&L};
    cfx_pytype zero = CFX_PY_INT;
    cfx_dtype lc, lr;
    cfx_prims_elementwise_dtypes(just_l, 1, &zero, 1, CFX_PROMOTE_ALWAYS_BOOL, &lc, &lr);
    cfx_prims_to(&L, lc);
    if (!cfx_prims_elementwise(op, &P, just_l, 1, 0, CFX_PROMOTE_ALWAYS_BOOL))
        return NULL;
    /* c10 result_type(a, 0): an int scalar lifts only bool */
    cfx_dtype rt = a_dtype == CFX_BOOL ? CFX_INT64 : a_dtype;
    cfx_tmeta O, S, out;
    cfx_tmeta_of(&O, self);
    cfx_prims_to(&O, rt);
    S.ndim = 0;
    S.dtype = rt;
    S.device = self->device;
    S.sizes = S.own_sizes;
    S.strides = S.own_strides;
    cfx_tmeta *where[3] = {&P, &S, &O};
    if (!cfx_prims_maybe_broadcast(op, where, 3) ||
        !cfx_prims_elementwise(op, &out, (const cfx_tmeta *const *)where, 3, 1, CFX_PROMOTE_DEFAULT))
        return NULL;
    cfx_prims_to(&out, a_dtype);
    return cfx_tmeta_new_tensor(&out);
}
