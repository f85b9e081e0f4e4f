/* nn.c - the Meta kernels of the nn operators (softmax, embedding, convolution, pooling,
 * batch norm, nll_loss_forward, mse_loss) and the nll_loss checks both devices share.
 *
 * 2.13's are Python meta functions; where their metadata differs from the CPU kernels' it is
 * theirs that is followed: convolution's result is contiguous even for a channels-last input,
 * batch norm's saved statistics are [C] on meta tensors but [0] on fake CPU ones (CPU: [0]),
 * _softmax checks nothing. */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/structured.h"

static void put_size(cfx_buf *b, const cfx_tensor *t, bool meta)
{
    if (meta)
        cfx_prims_put_size(b, t->sizes, t->ndim);
    else
        cfx_geom_put_dims(b, t->sizes, t->ndim);
}

bool cfx_nll_loss_check(const char *op, const cfx_tensor *self, const cfx_tensor *target, const cfx_tensor *weight,
                        bool meta)
{
    if (self->ndim < 1 || self->ndim > 2) {
        if (meta)
            cfx_error_set(CFX_ERR, op, "input tensor should be 1D or 2D, got %dD", self->ndim);
        else
            cfx_error_set(CFX_ERR, op, "input tensor should be 1D or 2D");
        return false;
    }
    if (target->ndim > 1) {
        cfx_error_set(CFX_ERR, op, "0D or 1D target tensor expected, multi-target not supported");
        return false;
    }
    if (target->dtype != CFX_INT64 && target->dtype != CFX_INT32) {
        cfx_error_set(CFX_ERR, op, "expected scalar type Long but found %s", cfx_dtype_scalar_name((cfx_dtype)target->dtype));
        return false;
    }
    bool no_batch = self->ndim == 1 && target->ndim == 0;
    cfx_buf b;
    cfx_buf_init(&b);
    if (!no_batch && (target->ndim == 0 || self->sizes[0] != target->sizes[0])) {
        cfx_buf_puts(&b, "size mismatch (got input: ");
        put_size(&b, self, meta);
        cfx_buf_puts(&b, ", target: ");
        put_size(&b, target, meta);
        cfx_buf_puts(&b, ")");
        goto fail;
    }
    int64_t classes = self->sizes[self->ndim - 1];
    if (weight && (weight->ndim != 1 || weight->sizes[0] != classes)) {
        cfx_buf_printf(&b, "weight tensor should be defined either for all %lld classes or no classes but got weight "
                           "tensor of shape: ", (long long)classes);
        put_size(&b, weight, meta);
        goto fail;
    }
    cfx_buf_free(&b);
    return true;
fail:;
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "nll_loss: bad arguments");
    cfx_free(msg);
    return false;
}

cfx_tensor *cfx_meta__softmax(cfx_tensor *self, int64_t dim, bool half_to_float)
{
    (void)dim;
    if (half_to_float) {
        cfx_error_set(CFX_ERR, "aten::_softmax", "half_to_float is True but x.dtype is %s, expected half or bfloat16",
                      cfx_dtype_torch_name((cfx_dtype)self->dtype));
        return NULL;
    }
    return cfx_tensor_new(self->sizes, self->ndim, (cfx_dtype)self->dtype, self->device);
}

cfx_tensor *cfx_meta__log_softmax(cfx_tensor *self, int64_t dim, bool half_to_float)
{
    (void)dim;
    if (half_to_float) {
        cfx_error_set(CFX_ERR, "aten::_log_softmax", "half_to_float is True but x.dtype is %s, expected half or "
                      "bfloat16", cfx_dtype_torch_name((cfx_dtype)self->dtype));
        return NULL;
    }
    return cfx_tensor_new(self->sizes, self->ndim, (cfx_dtype)self->dtype, self->device);
}

cfx_tensor *cfx_meta_embedding(cfx_tensor *weight, cfx_tensor *indices, int64_t padding_idx, bool scale_grad_by_freq,
                               bool sparse)
{
    (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;
    const char *op = "aten::embedding";
    if (weight->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "'weight' must be 2-D, got %d-D", weight->ndim);
        return NULL;
    }
    if (indices->dtype != CFX_INT64 && indices->dtype != CFX_INT32) {
        cfx_error_set(CFX_ERR, op, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                      "types: Long, Int; but got %s instead", cfx_dtype_torch_name((cfx_dtype)indices->dtype));
        return NULL;
    }
    int64_t sizes[CFX_MAX_DIMS];
    int n = indices->ndim;
    for (int i = 0; i < n; i++)
        sizes[i] = indices->sizes[i];
    sizes[n] = weight->sizes[1];
    return cfx_tensor_new(sizes, n + 1, (cfx_dtype)weight->dtype, weight->device);
}

cfx_tensor *cfx_meta_convolution(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias, cfx_int_list stride,
                                 cfx_int_list padding, cfx_int_list dilation, bool transposed,
                                 cfx_int_list output_padding, int64_t groups)
{
    int64_t sizes[CFX_MAX_DIMS];
    if (!cfx_conv_output_size("aten::convolution", input, weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups, sizes))
        return NULL;
    return cfx_tensor_new(sizes, input->ndim, (cfx_dtype)input->dtype, input->device);
}

cfx_max_pool2d_with_indices_result cfx_meta_max_pool2d_with_indices(cfx_tensor *self, cfx_int_list kernel_size,
                                                                    cfx_int_list stride, cfx_int_list padding,
                                                                    cfx_int_list dilation, bool ceil_mode)
{
    cfx_max_pool2d_with_indices_result none = {{NULL, NULL}};
    cfx_pool2d p;
    if (!cfx_pool2d_params("aten::max_pool2d_with_indices", self, kernel_size, stride, padding, &dilation, ceil_mode,
                           &p))
        return none;
    cfx_tensor *out, *idx;
    if (!cfx_pool2d_outputs(self, &p, &out, &idx))
        return none;
    return (cfx_max_pool2d_with_indices_result){{out, idx}};
}

cfx_tensor *cfx_meta_avg_pool2d(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                                cfx_int_list padding, bool ceil_mode, bool count_include_pad,
                                cfx_value divisor_override)
{
    (void)count_include_pad, (void)divisor_override;
    cfx_pool2d p;
    if (!cfx_pool2d_params("aten::avg_pool2d", self, kernel_size, stride, padding, NULL, ceil_mode, &p))
        return NULL;
    return cfx_pool2d_output(self, p.oh, p.ow, (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_meta__adaptive_avg_pool2d(cfx_tensor *self, cfx_int_list output_size)
{
    const char *op = "aten::_adaptive_avg_pool2d";
    if (output_size.len != 2) {
        cfx_error_set(CFX_ERR, op, "adaptive_avg_pool2d: output_size must be 2");
        return NULL;
    }
    if (self->ndim != 3 && self->ndim != 4) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Expected 3D or 4D tensor, but got ");
        cfx_prims_put_size(&b, self->sizes, self->ndim);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "adaptive_avg_pool2d: bad rank");
        cfx_free(msg);
        return NULL;
    }
    return cfx_pool2d_output(self, output_size.data[0], output_size.data[1], (cfx_dtype)self->dtype);
}

/* empty_like(input) and the saved statistics of 2.13's native_batch_norm_helper (the
 * decomposition that is these ops' Meta kernel): [C] on a non-CPU device, but in inference
 * on a tensor whose device is cpu (a fake tensor's: the fake mode calls this kernel with its
 * fake tensors) empty [0] ones, as the CPU kernel's; in training [C] everywhere. */
static bool batch_norm_meta(const cfx_tensor *input, bool training, cfx_tensor **t)
{
    if (input->ndim < 2) {
        cfx_error_set(CFX_ERR, "aten::native_batch_norm", "batch_norm: expected an input with at least 2 dimensions");
        return false;
    }
    cfx_device dev = cfx_tensor_is_fake(input) ? cfx_tensor_fake_device(input) : input->device;
    int64_t strides[CFX_MAX_DIMS], c = dev.type == CFX_DEVICE_CPU && !training ? 0 : input->sizes[1];
    cfx_geom_preserve_strides(input->sizes, input->strides, input->ndim, strides);
    t[0] = cfx_tensor_new_strided(input->sizes, strides, input->ndim, (cfx_dtype)input->dtype, input->device);
    t[1] = t[0] ? cfx_tensor_new(&c, 1, (cfx_dtype)input->dtype, input->device) : NULL;
    t[2] = t[1] ? cfx_tensor_new(&c, 1, (cfx_dtype)input->dtype, input->device) : NULL;
    if (t[2])
        return true;
    cfx_kernel_discard(t[0]);
    cfx_kernel_discard(t[1]);
    return false;
}

cfx_native_batch_norm_result cfx_meta_native_batch_norm(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                                        cfx_tensor *running_mean, cfx_tensor *running_var,
                                                        bool training, double momentum, double eps)
{
    (void)weight, (void)bias, (void)running_mean, (void)running_var, (void)momentum, (void)eps;
    cfx_native_batch_norm_result r = {{NULL, NULL, NULL}};
    if (training && !cfx_dtype_is_floating((cfx_dtype)input->dtype)) { /* the batch mean's reference */
        cfx_error_set(CFX_ERR, "aten::native_batch_norm", "mean(): could not infer output dtype. Input dtype must be "
                      "either a floating point or complex dtype. Got: %s", cfx_dtype_torch_name((cfx_dtype)input->dtype));
        return r;
    }
    if (!batch_norm_meta(input, training, r.t))
        return (cfx_native_batch_norm_result){{NULL, NULL, NULL}};
    return r;
}

cfx__native_batch_norm_legit_no_training_result
cfx_meta__native_batch_norm_legit_no_training(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                              cfx_tensor *running_mean, cfx_tensor *running_var, double momentum,
                                              double eps)
{
    (void)weight, (void)bias, (void)running_mean, (void)running_var, (void)momentum, (void)eps;
    cfx__native_batch_norm_legit_no_training_result r = {{NULL, NULL, NULL}};
    if (!batch_norm_meta(input, false, r.t))
        return (cfx__native_batch_norm_legit_no_training_result){{NULL, NULL, NULL}};
    return r;
}

cfx_nll_loss_forward_result cfx_meta_nll_loss_forward(cfx_tensor *self, cfx_tensor *target, cfx_tensor *weight,
                                                      int64_t reduction, int64_t ignore_index)
{
    (void)ignore_index;
    cfx_nll_loss_forward_result none = {{NULL, NULL}};
    if (!cfx_nll_loss_check("aten::nll_loss_forward", self, target, weight, true))
        return none;
    bool per_item = reduction == 0 && self->ndim == 2;
    cfx_tensor *out = cfx_tensor_new(self->sizes, per_item ? 1 : 0, (cfx_dtype)self->dtype, self->device);
    cfx_tensor *tw = out ? cfx_tensor_new(NULL, 0, (cfx_dtype)self->dtype, self->device) : NULL;
    if (!tw) {
        cfx_kernel_discard(out);
        return none;
    }
    return (cfx_nll_loss_forward_result){{out, tw}};
}

cfx_tensor *cfx_meta_mse_loss(cfx_tensor *self, cfx_tensor *target, int64_t reduction)
{
    cfx_tensor *d = cfx_meta_sub_Tensor(self, target, cfx_int(1));
    if (!d || reduction == 0)
        return d;
    cfx_tensor *out = cfx_tensor_new(NULL, 0, (cfx_dtype)d->dtype, d->device);
    cfx_kernel_discard(d);
    return out;
}
