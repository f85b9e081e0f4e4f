/* unary.c - CPU kernels of neg, relu, sin, cos and exp.
 *
 * relu is ATen's clamp_min(self, 0): x < 0 ? 0 : x, which keeps NaN and -0.0 as they are.
 * sin/cos/exp are "unary float" ops: integer and bool inputs are computed in float32 (the
 * default dtype) after conversion, like TensorIterator's promote_integer_inputs_to_float.
 * Results of the transcendental functions come from libm, within an ulp of PyTorch's SLEEF. */
#include <math.h>
#include <stdint.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"
#include "dispatch/scope.h"

#define UNARY_LOOP(NAME, T, EXPR)                                                   \
    static void NAME(char **p, const int64_t *s, int64_t n, const void *ctx)       \
    {                                                                              \
        (void)ctx;                                                                 \
        const int64_t es = (int64_t)sizeof(T);                                     \
        if (s[0] == es && s[1] == es) {                                            \
            T *o = (T *)p[0];                                                      \
            const T *x = (const T *)p[1];                                          \
            for (int64_t i = 0; i < n; i++) {                                      \
                T a = x[i];                                                        \
                o[i] = (EXPR);                                                     \
            }                                                                      \
            return;                                                                \
        }                                                                          \
        char *po = p[0];                                                           \
        const char *pa = p[1];                                                     \
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1]) {                  \
            T a = *(const T *)pa;                                                  \
            *(T *)po = (EXPR);                                                     \
        }                                                                          \
    }

UNARY_LOOP(neg_f32, float, -a)
UNARY_LOOP(neg_f64, double, -a)
UNARY_LOOP(neg_i64, int64_t, (int64_t)(0 - (uint64_t)a))
UNARY_LOOP(neg_i32, int32_t, (int32_t)(0 - (uint32_t)a))
UNARY_LOOP(relu_f32, float, a < 0 ? 0.0f : a)
UNARY_LOOP(relu_f64, double, a < 0 ? 0.0 : a)
UNARY_LOOP(relu_i64, int64_t, a < 0 ? 0 : a)
UNARY_LOOP(relu_i32, int32_t, a < 0 ? 0 : a)
UNARY_LOOP(sin_f32, float, sinf(a))
UNARY_LOOP(sin_f64, double, sin(a))
UNARY_LOOP(cos_f32, float, cosf(a))
UNARY_LOOP(cos_f64, double, cos(a))
UNARY_LOOP(exp_f32, float, expf(a))
UNARY_LOOP(exp_f64, double, exp(a))

/* [op][float32, float64, int64, int32] */
static const cfx_loop_fn loops[][4] = {
    [CFX_UNOP_NEG] = {neg_f32, neg_f64, neg_i64, neg_i32},
    [CFX_UNOP_RELU] = {relu_f32, relu_f64, relu_i64, relu_i32},
    [CFX_UNOP_SIN] = {sin_f32, sin_f64, NULL, NULL},
    [CFX_UNOP_COS] = {cos_f32, cos_f64, NULL, NULL},
    [CFX_UNOP_EXP] = {exp_f32, exp_f64, NULL, NULL},
};

static cfx_tensor *unary(cfx_unop kind, const char *op, cfx_tensor *a)
{
    cfx_iter it;
    if (!cfx_structured_unary(&it, kind, op, a))
        return NULL;
    cfx_tensor *out = cfx_iter_new_output(&it, -1, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    cfx_dtype dt = it.common_dtype;
    cfx_loop_fn fn = loops[kind][dt == CFX_FLOAT32 ? 0 : dt == CFX_FLOAT64 ? 1 : dt == CFX_INT64 ? 2 : 3];
    cfx_loop l;
    if ((cfx_dtype)a->dtype == dt) {
        const cfx_tensor *in[1] = {a};
        cfx_loop_init(&l, out, in, 1);
        cfx_loop_run(&l, fn, NULL);
        return out;
    }
    /* integer input of a float op: convert first, in a scope that frees the temporary */
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *in[1] = {cfx_cpu_to_dtype(a, dt)};
    if (in[0]) {
        cfx_loop_init(&l, out, in, 1);
        cfx_loop_run(&l, fn, NULL);
    }
    cfx_scope_end(s);
    if (!in[0]) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_cpu_neg(cfx_tensor *self) { return unary(CFX_UNOP_NEG, "aten::neg", self); }
cfx_tensor *cfx_cpu_relu(cfx_tensor *self) { return unary(CFX_UNOP_RELU, "aten::relu", self); }
cfx_tensor *cfx_cpu_sin(cfx_tensor *self) { return unary(CFX_UNOP_SIN, "aten::sin", self); }
cfx_tensor *cfx_cpu_cos(cfx_tensor *self) { return unary(CFX_UNOP_COS, "aten::cos", self); }
cfx_tensor *cfx_cpu_exp(cfx_tensor *self) { return unary(CFX_UNOP_EXP, "aten::exp", self); }

int cfx_kernels_register_cpu_unary(const cfx_kernel_libs *L)
{
    const cfx_kernel_reg regs[] = {
        CFX_KERNEL(L->cpu, neg, cfx_cpu_neg),
        CFX_KERNEL(L->cpu, relu, cfx_cpu_relu),
        CFX_KERNEL(L->cpu, sin, cfx_cpu_sin),
        CFX_KERNEL(L->cpu, cos, cfx_cpu_cos),
        CFX_KERNEL(L->cpu, exp, cfx_cpu_exp),
    };
    return CFX_REGISTER_KERNELS(regs);
}
