/* batch_norm.c - batch normalization in training mode (CPU), and the _native_batch_norm_legit
 * overloads (CPU and Meta) that share native_batch_norm's kernels.
 *
 * Training uses the batch's own statistics per channel c (dim 1, over every other dim): mean,
 * the biased variance for the output and save_invstd = 1 / sqrt(var + eps), and, when running
 * statistics are given, updates them in place as ATen's batch_norm_cpu_update_stats_template
 * does: running_mean = momentum * mean + (1 - momentum) * running_mean, running_var the same
 * with the unbiased variance (var_sum / (n - 1)). The output is x * alpha + beta with alpha =
 * invstd * w, beta = b - mean * alpha (ATen's transform), laid out as empty_like(input); the
 * statistics are contiguous [C]. Sums are in double (ATen's accumulate type for float on CPU),
 * two passes (mean, then squared deviations), each result rounded once. */
#include <inttypes.h>
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/kernels/batch_norm.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};

/* Offset (in elements) of element (n, c, i) of t, i the row-major index over dims 2.. */
static int64_t offset_of(const cfx_tensor *t, int64_t n, int64_t c, int64_t i)
{
    int64_t off = n * t->strides[0] + c * t->strides[1];
    for (int d = t->ndim - 1; d >= 2; d--) {
        off += (i % t->sizes[d]) * t->strides[d];
        i /= t->sizes[d];
    }
    return off;
}

static double at1(const cfx_tensor *t, int64_t c, double dflt)
{
    return t ? cfx_nn_get(t, c * t->strides[0]) : dflt;
}

cfx_native_batch_norm_result cfx_cpu_batch_norm_train(const char *op, cfx_tensor *input, cfx_tensor *weight,
                                                      cfx_tensor *bias, cfx_tensor *running_mean,
                                                      cfx_tensor *running_var, double momentum, double eps)
{
    cfx_native_batch_norm_result none = {{NULL, NULL, NULL}};
    if (input->ndim < 2) {
        cfx_error_set(CFX_ERR, op, "batch_norm: expected an input with at least 2 dimensions");
        return none;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype)) {
        cfx_kernel_not_implemented(op, "batch_norm", (cfx_dtype)input->dtype);
        return none;
    }
    int64_t N = input->sizes[0], C = input->sizes[1], inner = cfx_geom_numel(input->sizes + 2, input->ndim - 2);
    const cfx_tensor *per_channel[4] = {weight, bias, running_mean, running_var};
    for (int k = 0; k < 4; k++)
        if (per_channel[k] && (per_channel[k]->ndim != 1 || per_channel[k]->sizes[0] != C)) {
            cfx_error_set(CFX_ERR, op, "%s should contain %" PRId64 " elements not %" PRId64,
                          k == 0 ? "weight" : k == 1 ? "bias" : k == 2 ? "running_mean" : "running_var", C,
                          cfx_tensor_numel(per_channel[k]));
            return none;
        }
    int64_t strides[CFX_MAX_DIMS];
    cfx_geom_preserve_strides(input->sizes, input->strides, input->ndim, strides);
    cfx_dtype dt = (cfx_dtype)input->dtype;
    cfx_tensor *out = cfx_tensor_new_strided(input->sizes, strides, input->ndim, dt, CPU);
    cfx_tensor *sm = out ? cfx_tensor_new(&C, 1, dt, CPU) : NULL;
    cfx_tensor *si = sm ? cfx_tensor_new(&C, 1, dt, CPU) : NULL;
    if (!si) {
        cfx_kernel_discard(out);
        cfx_kernel_discard(sm);
        return none;
    }
    int64_t n = N * inner;
    for (int64_t c = 0; c < C; c++) {
        double sum = 0, var_sum = 0;
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < inner; i++)
                sum += cfx_nn_get(input, offset_of(input, b, c, i));
        double mean = n ? sum / (double)n : NAN;
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < inner; i++) {
                double d = cfx_nn_get(input, offset_of(input, b, c, i)) - mean;
                var_sum += d * d;
            }
        double invstd = 1.0 / sqrt(var_sum / (double)n + eps);
        cfx_nn_set(sm, c, mean);
        cfx_nn_set(si, c, invstd);
        if (running_mean)
            cfx_nn_set(running_mean, c * running_mean->strides[0],
                       momentum * mean + (1 - momentum) * at1(running_mean, c, 0));
        if (running_var)
            cfx_nn_set(running_var, c * running_var->strides[0],
                       momentum * (var_sum / (double)(n - 1)) + (1 - momentum) * at1(running_var, c, 0));
        double alpha = invstd * at1(weight, c, 1.0), beta = at1(bias, c, 0.0) - mean * alpha;
        for (int64_t b = 0; b < N; b++)
            for (int64_t i = 0; i < inner; i++)
                cfx_nn_set(out, offset_of(out, b, c, i), cfx_nn_get(input, offset_of(input, b, c, i)) * alpha + beta);
    }
    return (cfx_native_batch_norm_result){{out, sm, si}};
}

/* ---- _native_batch_norm_legit: native_batch_norm with the running statistics required
 * (Tensor(a!)) or absent (.no_stats) ------------------------------------------------------ */

static cfx__native_batch_norm_legit_result legit(cfx_native_batch_norm_result r)
{
    return (cfx__native_batch_norm_legit_result){{r.t[0], r.t[1], r.t[2]}};
}

cfx__native_batch_norm_legit_result cfx_cpu__native_batch_norm_legit(cfx_tensor *input, cfx_tensor *weight,
                                                                     cfx_tensor *bias, cfx_tensor *running_mean,
                                                                     cfx_tensor *running_var, bool training,
                                                                     double momentum, double eps)
{
    return legit(cfx_cpu_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

cfx__native_batch_norm_legit_result cfx_meta__native_batch_norm_legit(cfx_tensor *input, cfx_tensor *weight,
                                                                      cfx_tensor *bias, cfx_tensor *running_mean,
                                                                      cfx_tensor *running_var, bool training,
                                                                      double momentum, double eps)
{
    return legit(cfx_meta_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

cfx__native_batch_norm_legit_no_stats_result cfx_cpu__native_batch_norm_legit_no_stats(cfx_tensor *input,
                                                                                       cfx_tensor *weight,
                                                                                       cfx_tensor *bias, bool training,
                                                                                       double momentum, double eps)
{
    cfx_native_batch_norm_result r =
        cfx_cpu_native_batch_norm(input, weight, bias, NULL, NULL, training, momentum, eps);
    return (cfx__native_batch_norm_legit_no_stats_result){{r.t[0], r.t[1], r.t[2]}};
}

cfx__native_batch_norm_legit_no_stats_result cfx_meta__native_batch_norm_legit_no_stats(cfx_tensor *input,
                                                                                        cfx_tensor *weight,
                                                                                        cfx_tensor *bias, bool training,
                                                                                        double momentum, double eps)
{
    cfx_native_batch_norm_result r =
        cfx_meta_native_batch_norm(input, weight, bias, NULL, NULL, training, momentum, eps);
    return (cfx__native_batch_norm_legit_no_stats_result){{r.t[0], r.t[1], r.t[2]}};
}
