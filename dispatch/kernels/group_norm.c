/* group_norm.c - native_group_norm (CPU, Meta, CompositeExplicitAutograd: one kernel that
 * computes on CPU tensors and only shapes otherwise) and group_norm, the
 * CompositeImplicitAutograd op F.group_norm calls: it checks the arguments, makes the input
 * contiguous in its suggested memory format (a no-op, so no node, when it already is) and
 * calls native_group_norm(X, gamma, beta, N, C, HxW, group, eps), as 2.13's make_fx records.
 *
 * Y = (x - mean) * rstd * weight + bias per (n, group), with the biased variance and
 * rstd = 1 / sqrt(var + eps); mean and rstd are returned as [N, group] in the input's dtype.
 * Y keeps the input's suggested memory format on CPU. */
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/prims.h"

/* check_group_norm_inputs */
static bool check_inputs(const char *op, const cfx_tensor *input, const cfx_tensor *weight, const cfx_tensor *bias,
                         int64_t C, int64_t groups)
{
    cfx_buf b;
    if (groups <= 0) {
        cfx_error_set(CFX_ERR, op, "Expected num groups to be greater than 0, got %lld", (long long)groups);
        return false;
    }
    cfx_buf_init(&b);
    if (C % groups != 0) {
        cfx_buf_puts(&b, "Expected number of channels in input to be divisible by num_groups, but got input of shape ");
        cfx_geom_put_dims(&b, input->sizes, input->ndim);
        cfx_buf_printf(&b, " and num_groups=%lld", (long long)groups);
    } else if (weight && !(weight->ndim == 1 && cfx_tensor_numel(weight) == C)) {
        cfx_buf_puts(&b, "Expected weight to be a vector of size equal to the number of channels in input, but got "
                         "weight of shape ");
        cfx_geom_put_dims(&b, weight->sizes, weight->ndim);
        cfx_buf_puts(&b, " and input of shape ");
        cfx_geom_put_dims(&b, input->sizes, input->ndim);
    } else if (bias && !(bias->ndim == 1 && cfx_tensor_numel(bias) == C)) {
        /* ATen prints the weight's shape here (its message reuses weight.sizes()) */
        cfx_buf_puts(&b, "Expected bias to be a vector of size equal to the number of channels in input, but got "
                         "bias of shape ");
        if (weight)
            cfx_geom_put_dims(&b, weight->sizes, weight->ndim);
        else
            cfx_buf_puts(&b, "[0]");
        cfx_buf_puts(&b, " and input of shape ");
        cfx_geom_put_dims(&b, input->sizes, input->ndim);
    } else {
        cfx_free(cfx_buf_take(&b));
        return true;
    }
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "group_norm: invalid arguments");
    cfx_free(msg);
    return false;
}

cfx_native_group_norm_result cfx_kernel_native_group_norm(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                                          int64_t N, int64_t C, int64_t HxW, int64_t group, double eps)
{
    const char *op = "aten::native_group_norm";
    cfx_native_group_norm_result none = {{NULL, NULL, NULL}};
    /* a meta argument makes it the Meta kernel's call, as the dispatcher's highest backend key */
    bool meta = input->device.type == CFX_DEVICE_META || (weight && weight->device.type == CFX_DEVICE_META) ||
                (bias && bias->device.type == CFX_DEVICE_META);
    cfx_device out_dev = meta ? cfx_device_make(CFX_DEVICE_META) : input->device;
    if (meta) { /* _refs.native_group_norm's checks */
        if (input->ndim < 2) {
            cfx_error_set(CFX_ERR, op, "Expected at least 2 dimensions for input tensor but received %d", input->ndim);
            return none;
        }
        if (group == 0 || C % group != 0) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "Expected number of channels in input to be divisible by num_groups, but got input of shape ");
            cfx_prims_put_size(&b, input->sizes, input->ndim);
            cfx_buf_printf(&b, " and num_groups = %lld", (long long)group);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "group_norm: bad groups");
            cfx_free(msg);
            return none;
        }
        if (!cfx_dtype_is_floating((cfx_dtype)input->dtype)) {
            cfx_error_set(CFX_ERR, op, "mean(): could not infer output dtype. Input dtype must be either a floating "
                          "point or complex dtype. Got: %s", cfx_dtype_torch_name((cfx_dtype)input->dtype));
            return none;
        }
    } else if (!check_inputs(op, input, weight, bias, C, group)) {
        return none;
    } else if ((weight && weight->dtype != input->dtype) || (bias && bias->dtype != input->dtype)) {
        /* the CPU kernel reads its parameters in the input's dtype */
        cfx_error_set(CFX_ERR, op, "mixed dtype (CPU): expect parameter to have scalar type of %s",
                      cfx_dtype_scalar_name((cfx_dtype)input->dtype));
        return none;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype)) {
        cfx_kernel_not_implemented(op, "GroupNormKernelImpl", (cfx_dtype)input->dtype);
        return none;
    }
    if (N * C * HxW != cfx_tensor_numel(input) || input->ndim < 2) {
        cfx_error_set(CFX_ERR, op, "Expected N * C * HxW to be the input's number of elements");
        return none;
    }
    int64_t strides[CFX_MAX_DIMS], stat[2] = {N, group};
    cfx_memory_format mf = cfx_geom_suggest_memory_format(input->sizes, input->strides, input->ndim);
    if (!cfx_geom_memory_format_strides(input->sizes, input->ndim, mf, strides, op))
        return none;
    cfx_tensor *t[3];
    t[0] = cfx_tensor_new_strided(input->sizes, strides, input->ndim, (cfx_dtype)input->dtype, out_dev);
    t[1] = t[0] ? cfx_tensor_new(stat, 2, (cfx_dtype)input->dtype, out_dev) : NULL;
    t[2] = t[1] ? cfx_tensor_new(stat, 2, (cfx_dtype)input->dtype, out_dev) : NULL;
    if (!t[2]) {
        cfx_kernel_discard(t[0]);
        cfx_kernel_discard(t[1]);
        return none;
    }
    if (out_dev.type != CFX_DEVICE_CPU)
        return (cfx_native_group_norm_result){{t[0], t[1], t[2]}};
    /* element (n, c, s) of a [N, C, *] tensor whose spatial dims are flattened to s */
    int nd = input->ndim;
    int64_t per = C / group;
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < group; g++) {
            double sum = 0, sq = 0;
            int64_t count = per * HxW;
            for (int pass = 0; pass < 3; pass++) {
                double mean = sum / (double)(count ? count : 1), rstd = 1 / sqrt(sq / (double)(count ? count : 1) + eps);
                for (int64_t c = g * per; c < (g + 1) * per; c++) {
                    double w = weight ? cfx_nn_get(weight, c * weight->strides[0]) : 1;
                    double bb = bias ? cfx_nn_get(bias, c * bias->strides[0]) : 0;
                    for (int64_t s = 0; s < HxW; s++) {
                        int64_t xo = n * input->strides[0] + c * input->strides[1], yo = n * t[0]->strides[0] + c * t[0]->strides[1];
                        for (int d = nd - 1, r = (int)s; d >= 2; d--) { /* unflatten s */
                            int64_t i = (int64_t)r % input->sizes[d];
                            r = (int)((int64_t)r / input->sizes[d]);
                            xo += i * input->strides[d], yo += i * t[0]->strides[d];
                        }
                        double x = cfx_nn_get(input, xo);
                        if (pass == 0)
                            sum += x;
                        else if (pass == 1)
                            sq += (x - mean) * (x - mean);
                        else
                            cfx_nn_set(t[0], yo, (x - mean) * rstd * w + bb);
                    }
                }
                if (pass == 2) {
                    cfx_nn_set(t[1], n * group + g, mean);
                    cfx_nn_set(t[2], n * group + g, rstd);
                }
            }
        }
    return (cfx_native_group_norm_result){{t[0], t[1], t[2]}};
}

cfx_tensor *cfx_composite_group_norm(cfx_tensor *input, int64_t num_groups, cfx_tensor *weight, cfx_tensor *bias,
                                     double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled;
    const char *op = "aten::group_norm";
    if (input->ndim < 2) {
        cfx_error_set(CFX_ERR, op, "Dimension out of range (expected to be in range of [-%d, %d], but got 1)",
                      input->ndim ? input->ndim : 1, input->ndim ? input->ndim - 1 : 0);
        return NULL;
    }
    int64_t N = input->sizes[0], C = input->sizes[1];
    if (!check_inputs(op, input, weight, bias, C, num_groups))
        return NULL;
    int64_t HxW = cfx_geom_numel(input->sizes + 2, input->ndim - 2);
    cfx_device dev = cfx_tensor_fake_device(input);
    cfx_memory_format mf = dev.type == CFX_DEVICE_CPU ? cfx_geom_suggest_memory_format(input->sizes, input->strides, input->ndim)
                                                      : CFX_CONTIGUOUS_FORMAT;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *X = cfx_op_contiguous(NULL, input, mf);
    cfx_tensor *gamma = weight && X ? cfx_op_contiguous(NULL, weight, CFX_CONTIGUOUS_FORMAT) : NULL;
    cfx_tensor *beta = bias && X ? cfx_op_contiguous(NULL, bias, CFX_CONTIGUOUS_FORMAT) : NULL;
    if (!X || (weight && !gamma) || (bias && !beta))
        return cfx_composite_return(s, NULL);
    cfx_native_group_norm_result r = cfx_op_native_group_norm(NULL, X, gamma, beta, N, C, HxW, num_groups, eps);
    return cfx_composite_return(s, r.t[0]);
}
