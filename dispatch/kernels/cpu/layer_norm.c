/* layer_norm.c - the CPU kernel of native_layer_norm (ATen's layer_norm_cpu).
 *
 * The input is viewed as M rows of N elements (N = the product of normalized_shape). Each row
 * gets its mean and rstd = 1 / sqrt(biased variance + eps), and
 *     y = (x * rstd + (-rstd * mean)) * weight + bias
 * in that association, as LayerNormKernelImplInternal writes it: 0 * inf and inf - inf then
 * give PyTorch's NaNs. Moments are Welford updates in double followed by the merge with an
 * empty partial (AddMoments(0, 0, 0)) that ends RowwiseMoments; the merge is what turns an
 * infinite mean into NaN there, and an empty row (N = 0) has mean 0 and variance 0/0. eps is
 * first rounded to the tensor's dtype (static_cast<T>(eps)). The moments are more exact than
 * PyTorch's float ones (within a few float ulps); the affine map is computed in the tensor's
 * dtype on contiguous rows, with scale and shift rounded to it, as ATen's vec::map3 does.
 *
 * Layout follows layer_norm_cpu: the output is contiguous (empty_like(X, Contiguous)), mean
 * and rstd are empty({M}) viewed as the input's leading sizes followed by ones. Errors come in
 * its order: the mixed-dtype check (the first parameter given decides whether the call is
 * "mixed"; a mixed call is refused unless the input is a reduced float, which cfx has none
 * of), the input checks, then the dtype dispatch ("LayerNormKernelImpl" not implemented for
 * 'Long'), then the other parameter's dtype (data_ptr<T>: "expected scalar type Float but
 * found Double"); all of them even when the input is empty. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"

static const char OP[] = "aten::native_layer_norm";

/* The end of RowwiseMoments after the Welford updates (m0, *m1, m2) of a row of N: the merge
 * with an empty partial, AddMoments(0, 0, 0, m0, m1, m2), which turns an infinite mean into
 * NaN; returns the biased variance. */
static double merged_variance(double *m1, double m2, int64_t m0, int64_t N)
{
    double c = 0, delta = 0 - *m1;
    *m1 += c * delta;
    m2 += 0 + delta * delta * c * (double)m0;
    return m2 / (double)N;
}

/* M rows of N elements of type T: the moments, then y = (x * scale + shift) * g + b in T, as
 * LayerNormKernelImplInternal's vec::map3 (scale = rstd, shift = -rstd * mean). */
#define DEFINE_LAYER_NORM(S, T)                                                                   \
    static void layer_norm_##S(T *y, T *mean_out, T *rstd_out, const T *x, const T *g, const T *b, \
                               int64_t M, int64_t N, double eps)                                  \
    {                                                                                             \
        for (int64_t i = 0; i < M; i++, x += N, y += N) {                                         \
            double m1 = 0, m2 = 0;                                                                \
            int64_t m0 = 0;                                                                       \
            for (int64_t j = 0; j < N; j++) {                                                     \
                double delta = x[j] - m1;                                                         \
                m0++;                                                                             \
                m1 += delta / (double)m0;                                                         \
                m2 += delta * (x[j] - m1);                                                        \
            }                                                                                     \
            double rstd = 1 / sqrt(merged_variance(&m1, m2, m0, N) + eps);                        \
            T scale = (T)rstd, shift = (T)(-rstd * m1);                                           \
            for (int64_t j = 0; j < N; j++)                                                       \
                y[j] = (x[j] * scale + shift) * (g ? g[j] : (T)1) + (b ? b[j] : (T)0);            \
            mean_out[i] = (T)m1;                                                                  \
            rstd_out[i] = (T)rstd;                                                                \
        }                                                                                         \
    }
DEFINE_LAYER_NORM(f32, float)
DEFINE_LAYER_NORM(f64, double)

/* is_mixed_type and check_mixed_data_type (ATen/native/mixed_data_type.h) */
static bool mixed_dtype_error(const cfx_tensor *input, const cfx_tensor *weight, const cfx_tensor *bias)
{
    const cfx_tensor *first = weight ? weight : bias;
    if (!first || first->dtype == input->dtype)
        return false;
    const cfx_tensor *params[2] = {weight, bias};
    for (int k = 0; k < 2; k++)
        if (params[k] && params[k]->dtype != CFX_FLOAT32) {
            cfx_error_set(CFX_ERR, OP, "mixed dtype (CPU): expect parameter to have scalar type of Float");
            return true;
        }
    cfx_error_set(CFX_ERR, OP, "mixed dtype (CPU): all inputs must share same datatype.");
    return true;
}

static bool dtype_error(const cfx_tensor *input, const cfx_tensor *weight, const cfx_tensor *bias)
{
    cfx_dtype dt = (cfx_dtype)input->dtype;
    if (!cfx_dtype_is_floating(dt)) {
        cfx_kernel_not_implemented(OP, "LayerNormKernelImpl", dt);
        return true;
    }
    const cfx_tensor *params[2] = {weight, bias};
    for (int k = 0; k < 2; k++)
        if (params[k] && (cfx_dtype)params[k]->dtype != dt) {
            cfx_error_set(CFX_ERR, OP, "expected scalar type %s but found %s", cfx_dtype_scalar_name(dt),
                          cfx_dtype_scalar_name((cfx_dtype)params[k]->dtype));
            return true;
        }
    return false;
}

cfx_native_layer_norm_result cfx_cpu_native_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape, cfx_tensor *weight,
                                      cfx_tensor *bias, double eps)
{
    cfx_native_layer_norm_result none = {{NULL, NULL, NULL}};
    int64_t M, N;
    if (mixed_dtype_error(input, weight, bias) ||
        !cfx_check_layer_norm_inputs(OP, input, normalized_shape, weight, bias, &M, &N) ||
        dtype_error(input, weight, bias))
        return none;
    cfx_dtype dt = (cfx_dtype)input->dtype;
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    int n = input->ndim, axis = n - (int)normalized_shape.len;
    int64_t ssizes[CFX_MAX_DIMS], sstrides[CFX_MAX_DIMS];
    cfx_layer_norm_stat_layout(input, axis, M, ssizes, sstrides);
    cfx_tensor *Y = cfx_tensor_new(input->sizes, n, dt, cpu);
    cfx_tensor *mean = Y ? cfx_tensor_new_strided(ssizes, sstrides, n, dt, cpu) : NULL;
    cfx_tensor *rstd = mean ? cfx_tensor_new_strided(ssizes, sstrides, n, dt, cpu) : NULL;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *x = rstd ? cfx_cpu_contiguous(input) : NULL;
    const cfx_tensor *g = weight ? cfx_cpu_contiguous(weight) : NULL, *b = bias ? cfx_cpu_contiguous(bias) : NULL;
    bool ok = x && (!weight || g) && (!bias || b);
    if (ok && dt == CFX_FLOAT32)
        layer_norm_f32(cfx_tensor_data(Y), cfx_tensor_data(mean), cfx_tensor_data(rstd), cfx_tensor_data(x),
                       g ? cfx_tensor_data(g) : NULL, b ? cfx_tensor_data(b) : NULL, M, N, (double)(float)eps);
    else if (ok)
        layer_norm_f64(cfx_tensor_data(Y), cfx_tensor_data(mean), cfx_tensor_data(rstd), cfx_tensor_data(x),
                       g ? cfx_tensor_data(g) : NULL, b ? cfx_tensor_data(b) : NULL, M, N, eps);
    cfx_scope_end(s);
    if (rstd && !ok)
        cfx_error_set(CFX_ERR_NOMEM, OP, "out of memory in native_layer_norm");
    if (!ok) {
        cfx_kernel_discard(Y);
        cfx_kernel_discard(mean);
        cfx_kernel_discard(rstd);
        return none;
    }
    return (cfx_native_layer_norm_result){{Y, mean, rstd}};
}
