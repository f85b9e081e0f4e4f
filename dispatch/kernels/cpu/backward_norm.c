/* backward_norm.c - native_layer_norm_backward on CPU and Meta (ATen's
 * layer_norm_backward_cpu and LayerNormBackwardKernelImpl).
 *
 * The input is M rows of N elements, as in the forward op (layer_norm.c); mean and rstd are
 * the forward's saved [M] statistics. Per row, with g the weight (1 without one):
 *     ds = sum(dy * g * x), db = sum(dy * g)
 *     b  = (db * mean - ds) * rstd^3 / N,  c = -b * mean - db * rstd / N
 *     dx = rstd * dy * g + b * x + c
 * and over the rows dgamma = sum(dy * (x - mean) * rstd), dbeta = sum(dy). Sums are taken in
 * double (ATen's float ones differ by a few ulps). Each output exists only where output_mask
 * asks for it (an undefined Tensor, None, elsewhere); all are contiguous (dx like the input,
 * dgamma and dbeta like the weight), on both keys: 2.13's Meta kernel (the decomposition) lays
 * them out the same. A gradient of a missing weight or bias is PyTorch's "tensor does not have
 * a device" (it reads the device of the undefined tensor). */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"

static const char OP[] = "aten::native_layer_norm_backward";

/* output_mask[i] (a bool[3] value) */
static bool mask_at(const cfx_value *mask, int i)
{
    return mask && mask->kind == CFX_V_LIST && (uint32_t)i < mask->len && mask->u.items[i].kind == CFX_V_BOOL &&
           mask->u.items[i].u.b;
}

#define DEFINE_LN_BACKWARD(S, T)                                                                  \
    static void ln_backward_##S(const T *dy, const T *x, const T *mean, const T *rstd, const T *g, T *dx, \
                                T *dg, T *db, int64_t M, int64_t N)                               \
    {                                                                                             \
        for (int64_t j = 0; dg && j < N; j++)                                                     \
            dg[j] = 0;                                                                            \
        for (int64_t j = 0; db && j < N; j++)                                                     \
            db[j] = 0;                                                                            \
        for (int64_t i = 0; i < M; i++, dy += N, x += N) {                                        \
            double mu = mean[i], rs = rstd[i];                                                    \
            if (dx) {                                                                             \
                double ds = 0, dbs = 0;                                                           \
                for (int64_t j = 0; j < N; j++) {                                                 \
                    double gj = g ? (double)g[j] : 1.0;                                           \
                    ds += (double)dy[j] * gj * (double)x[j];                                      \
                    dbs += (double)dy[j] * gj;                                                    \
                }                                                                                 \
                double b = (dbs * mu - ds) * rs * rs * rs / (double)N;                            \
                double c = -b * mu - dbs * rs / (double)N;                                        \
                for (int64_t j = 0; j < N; j++)                                                   \
                    dx[i * N + j] = (T)(rs * (double)dy[j] * (g ? (double)g[j] : 1.0) + b * (double)x[j] + c); \
            }                                                                                     \
            for (int64_t j = 0; dg && j < N; j++)                                                 \
                dg[j] += (T)((double)dy[j] * ((double)x[j] - mu) * rs);                           \
            for (int64_t j = 0; db && j < N; j++)                                                 \
                db[j] += dy[j];                                                                   \
        }                                                                                         \
    }
DEFINE_LN_BACKWARD(f32, float)
DEFINE_LN_BACKWARD(f64, double)

/* The checks and the outputs (uninitialised) of both keys; false with the error recorded. */
static bool ln_backward_outputs(cfx_tensor *grad_out, cfx_tensor *input, cfx_int_list normalized_shape,
                                cfx_tensor *weight, cfx_tensor *bias, const cfx_value *output_mask, int64_t *M,
                                int64_t *N, cfx_tensor **out)
{
    out[0] = out[1] = out[2] = NULL;
    if (!cfx_check_layer_norm_inputs(OP, input, normalized_shape, weight, bias, M, N))
        return false;
    if ((mask_at(output_mask, 1) && !weight) || (mask_at(output_mask, 2) && !bias)) {
        cfx_error_set(CFX_ERR, OP, "tensor does not have a device");
        return false;
    }
    if (grad_out->ndim != input->ndim || memcmp(grad_out->sizes, input->sizes, sizeof(int64_t) * (size_t)input->ndim)) {
        cfx_error_set(CFX_ERR, OP, "Expected grad_out to have the input's shape");
        return false;
    }
    const cfx_tensor *like[3] = {input, weight, bias};
    for (int k = 0; k < 3; k++) {
        if (!mask_at(output_mask, k))
            continue;
        out[k] = cfx_tensor_new(like[k]->sizes, like[k]->ndim, (cfx_dtype)like[k]->dtype, input->device);
        if (!out[k]) {
            for (int j = 0; j < k; j++)
                cfx_kernel_discard(out[j]);
            return false;
        }
    }
    return true;
}

cfx_native_layer_norm_backward_result cfx_meta_native_layer_norm_backward(cfx_tensor *grad_out, cfx_tensor *input,
                                                                          cfx_int_list normalized_shape,
                                                                          cfx_tensor *mean, cfx_tensor *rstd,
                                                                          cfx_tensor *weight, cfx_tensor *bias,
                                                                          const cfx_value *output_mask)
{
    (void)mean, (void)rstd;
    cfx_native_layer_norm_backward_result r = {{NULL, NULL, NULL}};
    int64_t M, N;
    if (!ln_backward_outputs(grad_out, input, normalized_shape, weight, bias, output_mask, &M, &N, r.t))
        return (cfx_native_layer_norm_backward_result){{NULL, NULL, NULL}};
    return r;
}

cfx_native_layer_norm_backward_result cfx_cpu_native_layer_norm_backward(cfx_tensor *grad_out, cfx_tensor *input,
                                                                         cfx_int_list normalized_shape,
                                                                         cfx_tensor *mean, cfx_tensor *rstd,
                                                                         cfx_tensor *weight, cfx_tensor *bias,
                                                                         const cfx_value *output_mask)
{
    cfx_native_layer_norm_backward_result none = {{NULL, NULL, NULL}}, r = none;
    int64_t M, N;
    cfx_dtype dt = (cfx_dtype)input->dtype;
    if (!ln_backward_outputs(grad_out, input, normalized_shape, weight, bias, output_mask, &M, &N, r.t))
        return none;
    bool ok = cfx_dtype_is_floating(dt);
    if (!ok)
        cfx_kernel_not_implemented(OP, "LayerNormBackwardKernelImpl", dt);
    const cfx_tensor *params[4] = {grad_out, mean, rstd, weight};
    for (int k = 0; ok && k < 4; k++)
        if (params[k] && (cfx_dtype)params[k]->dtype != dt) {
            cfx_error_set(CFX_ERR, OP, "expected scalar type %s but found %s", cfx_dtype_scalar_name(dt),
                          cfx_dtype_scalar_name((cfx_dtype)params[k]->dtype));
            ok = false;
        }
    if (ok && (cfx_tensor_numel(mean) < M || cfx_tensor_numel(rstd) < M)) {
        cfx_error_set(CFX_ERR, OP, "mean and rstd must hold one value per normalized row (%lld)", (long long)M);
        ok = false;
    }
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *dy = ok ? cfx_cpu_contiguous(grad_out) : NULL, *x = dy ? cfx_cpu_contiguous(input) : NULL;
    const cfx_tensor *mu = x ? cfx_cpu_contiguous(mean) : NULL, *rs = mu ? cfx_cpu_contiguous(rstd) : NULL;
    const cfx_tensor *g = rs && weight ? cfx_cpu_contiguous(weight) : NULL;
    ok = rs && (!weight || g);
    void *o[3];
    for (int k = 0; k < 3; k++)
        o[k] = r.t[k] ? cfx_tensor_data(r.t[k]) : NULL;
    if (ok && dt == CFX_FLOAT32)
        ln_backward_f32(cfx_tensor_data(dy), cfx_tensor_data(x), cfx_tensor_data(mu), cfx_tensor_data(rs),
                        g ? cfx_tensor_data(g) : NULL, o[0], o[1], o[2], M, N);
    else if (ok)
        ln_backward_f64(cfx_tensor_data(dy), cfx_tensor_data(x), cfx_tensor_data(mu), cfx_tensor_data(rs),
                        g ? cfx_tensor_data(g) : NULL, o[0], o[1], o[2], M, N);
    cfx_scope_end(s);
    if (!ok) {
        for (int k = 0; k < 3; k++)
            cfx_kernel_discard(r.t[k]);
        return none;
    }
    return r;
}
