/* pointwise_params.c - the unary pointwise ops with number parameters: elu, leaky_relu and
 * round.decimals, and their in-place forms.
 *
 * A family row (pointwise.h) carries at most one Scalar (alpha), so these are written out,
 * in the same two shapes:
 *   CPU   the structured kernel: TensorIterator's unary build (build_unary_op), then the
 *         floating-point dtype dispatch ("\"elu_cpu\" not implemented for 'Long'"), the
 *         parameters read in the computation type as the C++ kernels read them;
 *   Meta  the Python reference: elu and leaky_relu first check that each parameter's Python
 *         type can be cast to the input's ("negative_slope argument of type <class 'float'>
 *         cannot be safely cast to type <class 'int'>!"; a parameter equal to its schema
 *         default is not passed to a Python kernel, so the reference's float default is the
 *         one checked), then the result is laid out as any unary reference's.
 * The in-place forms write the out-of-place result into self (inplace.h). */
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/kernels/inplace.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/kernels/prims.h"

/* What a loop reads: up to three parameters, already combined as the kernel combines them. */
typedef struct params {
    double p0, p1, p2;
} params;

/* out = f(self) on CPU with loops[0] for float32 and loops[1] for float64. */
static cfx_tensor *unary_cpu(const char *op, const char *cpu_name, cfx_tensor *self, const cfx_loop_fn loops[2],
                             const params *ctx)
{
    static const cfx_iter_config cfg = {.check_mem_overlap = true};
    cfx_iter it;
    const cfx_tensor *in[1] = {self};
    if (!cfx_iter_build(&it, &cfg, op, NULL, in, 1))
        return NULL;
    cfx_dtype dt = it.common_dtype;
    cfx_loop_fn fn = dt == CFX_FLOAT32 ? loops[0] : dt == CFX_FLOAT64 ? loops[1] : NULL;
    if (!fn) {
        cfx_kernel_not_implemented(op, cpu_name, dt);
        return NULL;
    }
    cfx_tensor *out = cfx_iter_new_output(&it, -1, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    cfx_loop l;
    cfx_loop_init(&l, out, in, 1);
    cfx_loop_run(&l, fn, ctx);
    return out;
}

/* The unary reference's result (elementwise_type_promotion_wrapper, DEFAULT) */
static cfx_tensor *unary_ref(const char *op, cfx_tensor *self)
{
    const cfx_pointwise p = {.name = op, .kind = CFX_POINTWISE_UNARY};
    return cfx_pointwise_meta(&p, self, NULL, cfx_int(1));
}

/* The references' is_weakly_lesser_type(type(arg), dtype_to_type(a.dtype)) check; def: the
 * schema default, for which the reference's own float default is what it sees. */
static bool param_castable(const char *op, const char *arg, cfx_value v, cfx_value def, cfx_dtype dt)
{
    cfx_pytype have = CFX_PY_FLOAT, want = cfx_pytype_of_dtype(dt);
    if (!cfx_value_equal(v, def))
        cfx_pytype_of_value(v, &have);
    if (cfx_pytype_weakly_lesser(have, want))
        return true;
    cfx_error_set(CFX_ERR, op, "%s argument of type %s cannot be safely cast to type %s!", arg, cfx_pytype_repr(have),
                  cfx_pytype_repr(want));
    return false;
}

/* ---- elu: a <= 0 ? expm1(a * input_scale) * (alpha * scale) : a * scale ------------------------ */

#define ELU_LOOP(NAME, T)                                                                       \
    static void NAME(char **p, const int64_t *s, int64_t n, const void *ctx)                    \
    {                                                                                           \
        const params *q = ctx;                                                                  \
        const T negcoef = (T)q->p0, poscoef = (T)q->p1, negiptcoef = (T)q->p2;                  \
        CFX_POINTWISE_UNARY_LOOP(T, T, a <= 0 ? expm1(a * negiptcoef) * negcoef : a * poscoef); \
    }
ELU_LOOP(elu_f32, float)
ELU_LOOP(elu_f64, double)

cfx_tensor *cfx_cpu_elu(cfx_tensor *self, cfx_value alpha, cfx_value scale, cfx_value input_scale)
{
    static const cfx_loop_fn loops[2] = {elu_f32, elu_f64};
    double sc = cfx_value_to_double(scale);
    params q = {cfx_value_to_double(alpha) * sc, sc, cfx_value_to_double(input_scale)};
    if (self->dtype == CFX_FLOAT32) /* opmath_t is float: alpha * scale rounded to float */
        q.p0 = (float)cfx_value_to_double(alpha) * (float)sc;
    return unary_cpu("aten::elu", "elu_cpu", self, loops, &q);
}
cfx_tensor *cfx_meta_elu(cfx_tensor *self, cfx_value alpha, cfx_value scale, cfx_value input_scale)
{
    const char *op = "aten::elu";
    cfx_dtype dt = (cfx_dtype)self->dtype;
    if (!param_castable(op, "input_scale", input_scale, cfx_int(1), dt) ||
        !param_castable(op, "scale", scale, cfx_int(1), dt) || !param_castable(op, "alpha", alpha, cfx_int(1), dt))
        return NULL;
    return unary_ref(op, self);
}
cfx_tensor *cfx_cpu_elu_(cfx_tensor *self, cfx_value alpha, cfx_value scale, cfx_value input_scale)
{
    INTO_SELF(cfx_cpu_into_self, "aten::elu_", self, cfx_cpu_elu(self, alpha, scale, input_scale), false);
}
cfx_tensor *cfx_meta_elu_(cfx_tensor *self, cfx_value alpha, cfx_value scale, cfx_value input_scale)
{
    INTO_SELF(cfx_meta_into_self, "aten::elu_", self, cfx_meta_elu(self, alpha, scale, input_scale));
}

/* ---- leaky_relu: a > 0 ? a : a * negative_slope ------------------------------------------- */

#define LEAKY_LOOP(NAME, T)                                                                     \
    static void NAME(char **p, const int64_t *s, int64_t n, const void *ctx)                    \
    {                                                                                           \
        const T negval = (T)((const params *)ctx)->p0;                                          \
        CFX_POINTWISE_UNARY_LOOP(T, T, a > 0 ? a : a * negval);                                 \
    }
LEAKY_LOOP(leaky_f32, float)
LEAKY_LOOP(leaky_f64, double)

cfx_tensor *cfx_cpu_leaky_relu(cfx_tensor *self, cfx_value negative_slope)
{
    static const cfx_loop_fn loops[2] = {leaky_f32, leaky_f64};
    params q = {cfx_value_to_double(negative_slope), 0, 0};
    return unary_cpu("aten::leaky_relu", "leaky_relu_cpu", self, loops, &q);
}
cfx_tensor *cfx_meta_leaky_relu(cfx_tensor *self, cfx_value negative_slope)
{
    const char *op = "aten::leaky_relu";
    if (!param_castable(op, "negative_slope", negative_slope, cfx_double(0.01), (cfx_dtype)self->dtype))
        return NULL;
    return unary_ref(op, self);
}
cfx_tensor *cfx_cpu_leaky_relu_(cfx_tensor *self, cfx_value negative_slope)
{
    INTO_SELF(cfx_cpu_into_self, "aten::leaky_relu_", self, cfx_cpu_leaky_relu(self, negative_slope), false);
}
cfx_tensor *cfx_meta_leaky_relu_(cfx_tensor *self, cfx_value negative_slope)
{
    INTO_SELF(cfx_meta_into_self, "aten::leaky_relu_", self, cfx_meta_leaky_relu(self, negative_slope));
}

/* ---- round.decimals (round_decimals_kernel): nearbyint(a * 10^d) / 10^d, or for d < 0
 * nearbyint(a / 10^-d) * 10^-d; the reference is prims.round between two prims.mul ---------- */

#define ROUND_LOOP(NAME, T)                                                                     \
    static void NAME(char **p, const int64_t *s, int64_t n, const void *ctx)                    \
    {                                                                                           \
        const params *q = ctx;                                                                  \
        const T ten_pow = (T)q->p0;                                                             \
        if (q->p1 != 0)                                                                         \
            CFX_POINTWISE_UNARY_LOOP(T, T, nearbyint(a / ten_pow) * ten_pow);                   \
        else                                                                                    \
            CFX_POINTWISE_UNARY_LOOP(T, T, nearbyint(a * ten_pow) / ten_pow);                   \
    }
ROUND_LOOP(round_f32, float)
ROUND_LOOP(round_f64, double)

cfx_tensor *cfx_cpu_round_decimals(cfx_tensor *self, int64_t decimals)
{
    static const cfx_loop_fn loops[2] = {round_f32, round_f64};
    params q = {pow(10, (double)(decimals < 0 ? -decimals : decimals)), decimals < 0, 0};
    return unary_cpu("aten::round.decimals", "round_cpu", self, loops, &q);
}
cfx_tensor *cfx_meta_round_decimals(cfx_tensor *self, int64_t decimals)
{
    (void)decimals;
    return unary_ref("aten::round.decimals", self);
}
cfx_tensor *cfx_cpu_round__decimals(cfx_tensor *self, int64_t decimals)
{
    INTO_SELF(cfx_cpu_into_self, "aten::round_.decimals", self, cfx_cpu_round_decimals(self, decimals), false);
}
cfx_tensor *cfx_meta_round__decimals(cfx_tensor *self, int64_t decimals)
{
    INTO_SELF(cfx_meta_into_self, "aten::round_.decimals", self, cfx_meta_round_decimals(self, decimals));
}
