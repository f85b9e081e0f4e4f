/* backward_pointwise.c - the elementwise backward ops: threshold_backward (relu's), and
 * sigmoid_backward, tanh_backward, gelu_backward.
 *
 * On CPU each is a structured op whose meta function builds a binary TensorIterator with type
 * promotion, so the result dtype and layout are the iterator's (pointwise.c does that part).
 * threshold_backward builds it over (self, grad), in that order, which is why a transposed
 * grad does not transpose the result; the others over (grad_output, output). Only the floating
 * loops exist for the three activations ("sigmoid_backward_cpu" not implemented for 'Long');
 * threshold computes every dtype but bool ("threshold_cpu").
 *
 * On the Meta key 2.13 runs different things: sigmoid, tanh and gelu backward keep the C++
 * structured meta function (TensorIterator on meta tensors: an int64 result for int64 inputs,
 * no dtype check), but threshold_backward's is the decomposition
 * torch.where(self <= threshold, 0, grad_output): grad's dtype (bool becomes int64, the 0
 * being an int), laid out by where's reference. Shape errors on meta are the references'
 * broadcast text, and gelu_backward's meta takes any approximation but "tanh" as "none". */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/scope.h"

/* ---- the loops: p[0] out, p[1] first input, p[2] second; ctx the Scalar (as alpha) ---------- */

#define BW_LOOP(T, BODY)                                                                        \
    do {                                                                                        \
        const cfx_pointwise_alpha *k_ = ctx;                                                    \
        (void)k_;                                                                               \
        char *po = p[0];                                                                        \
        const char *pa = p[1], *pb = p[2];                                                      \
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1], pb += s[2]) {                   \
            T a = *(const T *)pa, b = *(const T *)pb;                                           \
            *(T *)po = (T)(BODY);                                                               \
        }                                                                                       \
    } while (0)

/* threshold_backward: a = self, b = grad; the threshold as the computation dtype reads it */
#define THR_F(T) BW_LOOP(T, a <= (T)k_->d ? (T)0 : b)
#define THR_I(T) BW_LOOP(T, a <= (T)k_->i ? (T)0 : b)
static void thr_f32(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_F(float); }
static void thr_f64(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_F(double); }
static void thr_i64(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_I(int64_t); }
static void thr_i32(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_I(int32_t); }
static void thr_i16(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_I(int16_t); }
static void thr_i8(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_I(int8_t); }
static void thr_u8(char **p, const int64_t *s, int64_t n, const void *ctx) { THR_I(uint8_t); }

/* a = grad_output, b = output (sigmoid's y, tanh's y) */
static void sig_f32(char **p, const int64_t *s, int64_t n, const void *ctx) { BW_LOOP(float, a * (1.0f - b) * b); }
static void sig_f64(char **p, const int64_t *s, int64_t n, const void *ctx) { BW_LOOP(double, a * (1.0 - b) * b); }
static void tanh_f32(char **p, const int64_t *s, int64_t n, const void *ctx) { BW_LOOP(float, a * (1.0f - b * b)); }
static void tanh_f64(char **p, const int64_t *s, int64_t n, const void *ctx) { BW_LOOP(double, a * (1.0 - b * b)); }

/* GeluBackwardKernelImpl: a = grad, b = x; ctx->i 1 for the tanh approximation */
#define GELU_BW(T, ERF, EXP, TANH)                                                              \
    do {                                                                                        \
        const bool tanh_ = ((const cfx_pointwise_alpha *)ctx)->i != 0;                          \
        const T k_beta = (T)(1.41421356237309504880 * 1.12837916709551257390 * 0.5);            \
        const T k_kappa = (T)0.044715, k_alpha = (T)0.70710678118654752440;                     \
        const T k_pdf = (T)(1.12837916709551257390 * 0.70710678118654752440 * 0.5);             \
        char *po = p[0];                                                                        \
        const char *pa = p[1], *pb = p[2];                                                      \
        for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1], pb += s[2]) {                   \
            T dy = *(const T *)pa, x = *(const T *)pb, r;                                       \
            if (tanh_) {                                                                        \
                T x_sq = x * x, x_cube = x_sq * x;                                              \
                T inner = k_beta * (x + k_kappa * x_cube), t = TANH(inner);                     \
                T left = (T)0.5 * x, right = (T)1 + t;                                          \
                T left_d = (T)0.5 * right;                                                      \
                T right_d = left * ((T)1 - t * t) * k_beta * ((T)1 + (T)3 * k_kappa * x_sq);   \
                r = dy * (left_d + right_d);                                                    \
            } else {                                                                            \
                T cdf = (T)0.5 * ((T)1 + ERF(x * k_alpha));                                     \
                T pdf = k_pdf * EXP((T)-0.5 * x * x);                                           \
                r = dy * (cdf + x * pdf);                                                       \
            }                                                                                   \
            *(T *)po = r;                                                                       \
        }                                                                                       \
    } while (0)
static void gelu_bw_f32(char **p, const int64_t *s, int64_t n, const void *ctx) { GELU_BW(float, erff, expf, tanhf); }
static void gelu_bw_f64(char **p, const int64_t *s, int64_t n, const void *ctx) { GELU_BW(double, erf, exp, tanh); }

static const cfx_pointwise pw_threshold = {
    .name = "aten::threshold_backward", .kind = CFX_POINTWISE_BINARY, .cpu_name = "threshold_cpu",
    .loops = {[CFX_FLOAT32] = thr_f32, [CFX_FLOAT64] = thr_f64, [CFX_INT64] = thr_i64, [CFX_INT32] = thr_i32,
              [CFX_INT16] = thr_i16, [CFX_INT8] = thr_i8, [CFX_UINT8] = thr_u8},
};
static const cfx_pointwise pw_sigmoid = {
    .name = "aten::sigmoid_backward", .kind = CFX_POINTWISE_BINARY, .cpu_name = "sigmoid_backward_cpu",
    .loops = {[CFX_FLOAT32] = sig_f32, [CFX_FLOAT64] = sig_f64},
};
static const cfx_pointwise pw_tanh = {
    .name = "aten::tanh_backward", .kind = CFX_POINTWISE_BINARY, .cpu_name = "tanh_backward_cpu",
    .loops = {[CFX_FLOAT32] = tanh_f32, [CFX_FLOAT64] = tanh_f64},
};
static const cfx_pointwise pw_gelu = {
    .name = "aten::gelu_backward", .kind = CFX_POINTWISE_BINARY, .cpu_name = "GeluBackwardKernelImpl",
    .loops = {[CFX_FLOAT32] = gelu_bw_f32, [CFX_FLOAT64] = gelu_bw_f64},
};

/* The structured meta function on meta tensors: the binary TensorIterator's checks, dtype and
 * layout, nothing computed. */
static cfx_tensor *binary_meta(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    /* the decomposition's broadcast comes first, with the references' text */
    cfx_tmeta ma, mb;
    cfx_tmeta_of(&ma, a);
    cfx_tmeta_of(&mb, b);
    const cfx_tmeta *ms[2] = {&ma, &mb};
    int64_t buf[CFX_MAX_DIMS];
    const int64_t *common;
    int nd;
    unsigned differs;
    if (!cfx_prims_broadcast_shapes(op, ms, 2, buf, &common, &nd, &differs))
        return NULL;
    static const cfx_iter_config cfg = {.promote_inputs = true, .allow_cpu_scalars = true, .check_mem_overlap = true};
    const cfx_tensor *in[2] = {a, b};
    cfx_iter it;
    if (!cfx_iter_build(&it, &cfg, op, NULL, in, 2))
        return NULL;
    return cfx_iter_new_output(&it, -1, it.device);
}

/* get_gelutype_enum: 0 none, 1 tanh, -1 with the error recorded */
static int gelu_type(const char *approximate)
{
    if (approximate && !strcmp(approximate, "none"))
        return 0;
    if (approximate && !strcmp(approximate, "tanh"))
        return 1;
    cfx_error_set(CFX_ERR, "aten::gelu_backward", "approximate argument must be either none or tanh.");
    return -1;
}

cfx_tensor *cfx_cpu_threshold_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_value threshold)
{
    return cfx_pointwise_cpu(&pw_threshold, self, grad_output, threshold);
}

cfx_tensor *cfx_meta_threshold_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_value threshold)
{
    /* where(self <= threshold, 0, grad_output), each step its reference */
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *out = NULL, *cond = cfx_meta_le_Scalar(self, threshold);
    cfx_tensor *zero = cond ? cfx_num_int(0) : NULL;
    if (zero) {
        cfx_dtype rt = grad_output->dtype == CFX_BOOL ? CFX_INT64 : (cfx_dtype)grad_output->dtype;
        cfx_tensor *g = grad_output;
        if (rt != (cfx_dtype)grad_output->dtype)
            g = cfx_tensor_new_strided(grad_output->sizes, grad_output->strides, grad_output->ndim, rt,
                                       grad_output->device);
        out = g ? cfx_tensor_retain(cfx_meta_where_self(cond, zero, g)) : NULL;
    }
    cfx_scope_end(sc);
    return out ? cfx_autorelease(out) : NULL;
}

cfx_tensor *cfx_cpu_sigmoid_backward(cfx_tensor *grad_output, cfx_tensor *output)
{
    return cfx_pointwise_cpu(&pw_sigmoid, grad_output, output, cfx_int(0));
}

cfx_tensor *cfx_meta_sigmoid_backward(cfx_tensor *grad_output, cfx_tensor *output)
{
    return binary_meta(pw_sigmoid.name, grad_output, output);
}

cfx_tensor *cfx_cpu_tanh_backward(cfx_tensor *grad_output, cfx_tensor *output)
{
    return cfx_pointwise_cpu(&pw_tanh, grad_output, output, cfx_int(0));
}

cfx_tensor *cfx_meta_tanh_backward(cfx_tensor *grad_output, cfx_tensor *output)
{
    return binary_meta(pw_tanh.name, grad_output, output);
}

cfx_tensor *cfx_cpu_gelu_backward(cfx_tensor *grad_output, cfx_tensor *self, const char *approximate)
{
    int t = gelu_type(approximate);
    /* the loops read the approximation where a binary loop reads alpha */
    return t < 0 ? NULL : cfx_pointwise_cpu(&pw_gelu, grad_output, self, cfx_int(t));
}

cfx_tensor *cfx_meta_gelu_backward(cfx_tensor *grad_output, cfx_tensor *self, const char *approximate)
{
    (void)approximate; /* the meta function takes any string but "tanh" for "none" */
    return binary_meta(pw_gelu.name, grad_output, self);
}
