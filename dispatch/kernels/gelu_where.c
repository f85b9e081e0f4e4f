/* gelu_where.c - gelu and where.self: pointwise ops with more than the families' shape (a
 * string argument; three inputs).
 *
 * gelu is structured: the meta function reads `approximate` ("approximate argument must be
 * either none or tanh.") and builds a unary TensorIterator; the CPU kernel computes floating
 * dtypes only ("GeluKernelImpl" not implemented for 'Long'). Its Meta kernel is the reference
 * torch._refs.nn.functional.gelu: DEFAULT promotion, so an integer input gives an integer
 * result there, laid out like the input (the unary reference's shape, pointwise_refs.c).
 *
 * where.self is not structured: result_type(self, other), the condition must be bool, self and
 * other are converted to the result type (.to: layout preserved), and one TensorIterator over
 * (condition, self, other) lays the output out. Its Meta kernel is the reference: type
 * promotion of self and other, broadcasting of all three, then prims.where. */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/wrapped_internal.h"

/* ---- gelu ---------------------------------------------------------------------------------- */

/* get_gelutype_enum: 0 none, 1 tanh, -1 with the error recorded */
static int gelu_type(const char *approximate)
{
    if (approximate && !strcmp(approximate, "none"))
        return 0;
    if (approximate && !strcmp(approximate, "tanh"))
        return 1;
    cfx_error_set(CFX_ERR, "aten::gelu", "approximate argument must be either none or tanh.");
    return -1;
}

#define GELU_LOOP(T, ERF, TANH)                                                           \
    do {                                                                                        \
        const bool tanh_ = ((const cfx_pointwise_alpha *)ctx)->i != 0;                          \
        const T half = (T)0.5, one = (T)1, k_alpha = (T)0.70710678118654752440;                              \
        const T k_beta = (T)0.79788456080286535588 /* sqrt(2 / pi) */, k_kappa = (T)0.044715;               \
        char *po = p[0];                                                                        \
        const char *pa = p[1];                                                                  \
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1]) {                               \
            T x = *(const T *)pa;                                                               \
            T y;                                                                                \
            if (tanh_) {                                                                        \
                T inner = k_beta * (x + k_kappa * x * x * x);                                   \
                y = half * x * (one + TANH(inner));                                             \
            } else {                                                                            \
                y = x * half * (one + ERF(x * k_alpha));                                        \
            }                                                                                   \
            *(T *)po = y;                                                                       \
        }                                                                                       \
    } while (0)

static void gelu_f32(char **p, const int64_t *s, int64_t n, const void *ctx) { GELU_LOOP(float, erff, tanhf); }
static void gelu_f64(char **p, const int64_t *s, int64_t n, const void *ctx) { GELU_LOOP(double, erf, tanh); }

static bool gelu_check(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    (void)b;
    if (cfx_dtype_is_floating((cfx_dtype)a->dtype))
        return true;
    cfx_kernel_not_implemented(op, "GeluKernelImpl", (cfx_dtype)a->dtype);
    return false;
}

static const cfx_pointwise pw_gelu = {
    .name = "aten::gelu",
    .kind = CFX_POINTWISE_UNARY,
    .check = gelu_check,
    .loops = {[CFX_FLOAT32] = gelu_f32, [CFX_FLOAT64] = gelu_f64},
};

cfx_tensor *cfx_cpu_gelu(cfx_tensor *self, const char *approximate)
{
    int t = gelu_type(approximate);
    /* the loops read the approximation where a binary loop reads alpha */
    return t < 0 ? NULL : cfx_pointwise_cpu(&pw_gelu, self, NULL, cfx_int(t));
}

cfx_tensor *cfx_meta_gelu(cfx_tensor *self, const char *approximate)
{
    return gelu_type(approximate) < 0 ? NULL : cfx_pointwise_meta(&pw_gelu, self, NULL, cfx_int(0));
}

/* ---- where.self ------------------------------------------------------------------------------ */

#define WHERE_LOOP(T)                                                                           \
    do {                                                                                        \
        (void)ctx;                                                                              \
        char *po = p[0];                                                                        \
        const char *pc = p[1], *pa = p[2], *pb = p[3];                                          \
        for (int64_t i = 0; i < n; i++, po += s[0], pc += s[1], pa += s[2], pb += s[3])         \
            *(T *)po = *(const bool *)pc ? *(const T *)pa : *(const T *)pb;                     \
    } while (0)

static void where_1(char **p, const int64_t *s, int64_t n, const void *ctx) { WHERE_LOOP(uint8_t); }
static void where_2(char **p, const int64_t *s, int64_t n, const void *ctx) { WHERE_LOOP(uint16_t); }
static void where_4(char **p, const int64_t *s, int64_t n, const void *ctx) { WHERE_LOOP(uint32_t); }
static void where_8(char **p, const int64_t *s, int64_t n, const void *ctx) { WHERE_LOOP(uint64_t); }

static bool where_condition(const char *op, const cfx_tensor *c)
{
    if (c->dtype == CFX_BOOL)
        return true;
    cfx_error_set(CFX_ERR, op, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                  cfx_dtype_scalar_name((cfx_dtype)c->dtype));
    return false;
}

cfx_tensor *cfx_cpu_where_self(cfx_tensor *condition, cfx_tensor *self, cfx_tensor *other)
{
    const char *op = "aten::where.self";
    cfx_result_type_state st = CFX_RESULT_TYPE_INIT;
    cfx_result_type_update(&st, self);
    cfx_result_type_update(&st, other);
    cfx_dtype rt = cfx_result_type(&st);
    if (!where_condition(op, condition))
        return NULL;
    cfx_scope sc = cfx_scope_begin();
    const cfx_tensor *in[3] = {condition, cfx_cpu_to_dtype(self, rt), cfx_cpu_to_dtype(other, rt)};
    static const cfx_iter_config cfg = {.allow_cpu_scalars = true};
    cfx_iter it;
    cfx_tensor *out = NULL;
    if (in[1] && in[2] && cfx_iter_build(&it, &cfg, op, NULL, in, 3)) {
        out = cfx_iter_new_output(&it, (int)rt, cfx_device_make(CFX_DEVICE_CPU));
        if (out) {
            cfx_tensor_retain(out);
            size_t es = cfx_dtype_size(rt);
            cfx_loop l;
            cfx_loop_init(&l, out, in, 3);
            cfx_loop_run(&l, es == 1 ? where_1 : es == 2 ? where_2 : es == 4 ? where_4 : where_8, NULL);
        }
    }
    cfx_scope_end(sc);
    return out ? cfx_autorelease(out) : NULL;
}

/* torch._refs.where: elementwise_type_promotion_wrapper(a, b; NO_OPMATH), the condition
 * checked bool, _maybe_broadcast(pred, a, b), prims.where(pred, a, b) */
cfx_tensor *cfx_meta_where_self(cfx_tensor *condition, cfx_tensor *self, cfx_tensor *other)
{
    const char *op = "aten::where.self";
    cfx_tmeta P, A, B;
    cfx_tmeta_of(&P, condition);
    cfx_tmeta *ops[2];
    cfx_pytype nums[2];
    int n = 0, nn = 0;
    cfx_tmeta *ab[2] = {&A, &B};
    const cfx_tensor *in[2] = {self, other};
    for (int i = 0; i < 2; i++) {
        cfx_tmeta_of(ab[i], in[i]);
        if (in[i]->is_wrapped_number)
            cfx_pytype_of_value(cfx_wrapped_number_value(in[i]), &nums[nn++]);
        else
            ops[n++] = ab[i];
    }
    cfx_dtype compute, result;
    cfx_prims_elementwise_dtypes((const cfx_tmeta *const *)ops, n, nums, nn, CFX_PROMOTE_DEFAULT, &compute, &result);
    cfx_prims_to(&A, compute);
    cfx_prims_to(&B, compute);
    if (condition->dtype != CFX_BOOL) {
        cfx_error_set(CFX_ERR, op, "expected predicate to be bool, got %s",
                      cfx_dtype_torch_name((cfx_dtype)condition->dtype));
        return NULL;
    }
    cfx_tmeta *all[3] = {&P, &A, &B};
    cfx_tmeta out;
    if (!cfx_prims_maybe_broadcast(op, all, 3) ||
        !cfx_prims_elementwise(op, &out, (const cfx_tmeta *const *)all, 3, 1, CFX_PROMOTE_DEFAULT))
        return NULL;
    cfx_prims_to(&out, result);
    return cfx_tmeta_new_tensor(&out);
}
