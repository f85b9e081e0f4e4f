/* layer_norm.c - the CPU kernel of native_layer_norm (ATen's layer_norm_cpu).
 *
 * The input is viewed as M rows of N elements (N = the product of normalized_shape). Each row
 * gets its mean and rstd = 1 / sqrt(biased variance + eps), and
 *     y = (x * rstd + (-rstd * mean)) * weight + bias
 * in that association, as LayerNormKernelImplInternal writes it: 0 * inf and inf - inf then
 * give PyTorch's NaNs. Moments are Welford updates in double followed by the merge with an
 * empty partial (AddMoments(0, 0, 0)) that ends RowwiseMoments; the merge is what turns an
 * infinite mean into NaN there, and an empty row (N = 0) has mean 0 and variance 0/0. eps is
 * first rounded to the tensor's dtype (static_cast<T>(eps)). Everything else is computed in
 * double and rounded once, which stays within a few float ulps of PyTorch's float arithmetic.
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

/* The values of t in row-major order as doubles (a contiguous copy when t is not). */
static double *row_major(const cfx_tensor *t, int64_t n)
{
    double *out = malloc((n > 0 ? (size_t)n : 1) * sizeof *out);
    if (!out) {
        cfx_error_set(CFX_ERR_NOMEM, OP, "out of memory in native_layer_norm");
        return NULL;
    }
    if (n == 0)
        return out;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *c = t;
    if (!cfx_tensor_is_contiguous(t)) {
        cfx_tensor *tmp = cfx_tensor_new(t->sizes, t->ndim, (cfx_dtype)t->dtype, cfx_device_make(CFX_DEVICE_CPU));
        if (tmp)
            cfx_cpu_copy(tmp, t);
        c = tmp;
    }
    if (c) {
        const void *p = cfx_tensor_data(c);
        for (int64_t i = 0; i < n; i++)
            out[i] = c->dtype == CFX_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
    }
    cfx_scope_end(s);
    if (!c) {
        free(out);
        return NULL;
    }
    return out;
}

static void store(cfx_tensor *t, int64_t i, double v)
{
    void *p = cfx_tensor_data(t);
    if (t->dtype == CFX_FLOAT32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

/* One row: RowwiseMoments, then the affine map. */
static void normalize_row(const double *x, int64_t N, double eps, const double *g, const double *b,
                          double *mean_out, double *rstd_out, cfx_tensor *Y, int64_t y0)
{
    double m1 = 0, m2 = 0;
    int64_t m0 = 0;
    for (int64_t j = 0; j < N; j++) {
        double delta = x[j] - m1;
        m0++;
        m1 += delta / (double)m0;
        m2 += delta * (x[j] - m1);
    }
    double c = 0, delta = 0 - m1; /* AddMoments(0, 0, 0, m0, m1, m2) */
    m1 += c * delta;
    m2 += 0 + delta * delta * c * (double)m0;
    double var = m2 / (double)N;
    double rstd = 1 / sqrt(var + eps);
    double scale = rstd, shift = -rstd * m1;
    for (int64_t j = 0; j < N; j++)
        store(Y, y0 + j, (x[j] * scale + shift) * (g ? g[j] : 1) + (b ? b[j] : 0));
    *mean_out = m1;
    *rstd_out = rstd;
}

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
        cfx_error_set(CFX_ERR, OP, "\"LayerNormKernelImpl\" not implemented for '%s'", cfx_dtype_scalar_name(dt));
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
    double *x = rstd ? row_major(input, M * N) : NULL;
    double *g = x && weight ? row_major(weight, N) : NULL;
    double *b = x && bias ? row_major(bias, N) : NULL;
    bool ok = x && (!weight || g) && (!bias || b);
    if (ok) {
        double eps_t = dt == CFX_FLOAT32 ? (double)(float)eps : eps;
        for (int64_t i = 0; i < M; i++) {
            double mu, rs;
            normalize_row(x + i * N, N, eps_t, g, b, &mu, &rs, Y, i * N);
            store(mean, i, mu);
            store(rstd, i, rs);
        }
    }
    free(x);
    free(g);
    free(b);
    if (!ok) {
        cfx_kernel_discard(Y);
        cfx_kernel_discard(mean);
        cfx_kernel_discard(rstd);
        return none;
    }
    return (cfx_native_layer_norm_result){{Y, mean, rstd}};
}
