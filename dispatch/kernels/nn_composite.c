/* nn_composite.c - the CompositeImplicitAutograd nn operators, as 2.13's C++ decomposes them.
 *
 * layer_norm -> native_layer_norm[0]; softmax.int / log_softmax.int -> _softmax / _log_softmax
 * (after _to_copy only when the dtype changes: toType of the same dtype is the tensor itself); dropout: dropout.c;
 * conv2d / conv1d / conv_transpose2d / conv_transpose1d -> convolution, an unbatched input
 * between unsqueeze(0) and squeeze.dim(0); conv2d.padding / conv1d.padding ("same", "valid") ->
 * convolution with the padding computed (an asymmetric "same" is refused: no constant_pad_nd);
 * max_pool2d -> max_pool2d_with_indices[0]; adaptive_avg_pool2d -> mean.dim([-1, -2], keepdim) for
 * a 1x1 output (2.13's fast path), else _adaptive_avg_pool2d; nll_loss -> nll_loss_forward[0]; nll_loss_nd ->
 * nll_loss for 1-D/2-D inputs; cross_entropy_loss with class-index targets -> nll_loss_nd of
 * log_softmax(self, class dim, self's dtype). Each is written with cfx_op_* calls so a mode
 * or tracer sees exactly these calls (see composite.h). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"

static cfx_tensor *not_implemented(const char *op, const char *what)
{
    cfx_error_set(CFX_ERR_NOTIMPL, op, "%s is not implemented in cfx", what);
    return NULL;
}

cfx_tensor *cfx_composite_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape, cfx_tensor *weight,
                                     cfx_tensor *bias, double eps, bool cudnn_enable)
{
    (void)cudnn_enable;
    cfx_scope s = cfx_scope_begin();
    cfx_native_layer_norm_result r = cfx_op_native_layer_norm(NULL, input, normalized_shape, weight, bias, eps);
    return cfx_composite_return(s, r.out);
}

/* input.toType(dtype): the tensor itself when the dtype does not change, else
 * to(options().dtype(dtype)), which 2.13 records as _to_copy with the tensor's layout and
 * device spelled out (TensorOptions carries them; a fake tensor's is the device it fakes). */
static cfx_tensor *to_dtype(cfx_tensor *self, cfx_value dtype)
{
    int64_t code;
    if (!cfx_geom_opt_int(dtype, &code) || code == self->dtype)
        return self;
    return cfx_op__to_copy(NULL, self, dtype, cfx_layout_value(CFX_LAYOUT_STRIDED), cfx_device_value(cfx_tensor_fake_device(self)),
                           cfx_none(), false, cfx_none());
}

cfx_tensor *cfx_composite_softmax_int(cfx_tensor *self, int64_t dim, cfx_value dtype)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = to_dtype(self, dtype);
    return cfx_composite_return(s, x ? cfx_op__softmax(NULL, x, dim, false) : NULL);
}

cfx_tensor *cfx_composite_log_softmax_int(cfx_tensor *self, int64_t dim, cfx_value dtype)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = to_dtype(self, dtype);
    return cfx_composite_return(s, x ? cfx_op__log_softmax(NULL, x, dim, false) : NULL);
}

/* ---- convolutions (Convolution.cpp's conv1d/conv2d/conv_transpose*d, their .padding forms) ---- */

/* conv{1,2,3}d's bias check (conv_transpose*d has none). */
static bool conv_bias_ok(const char *op, const cfx_tensor *input, const cfx_tensor *bias)
{
    if (!bias || bias->dtype == input->dtype)
        return true;
    cfx_error_set(CFX_ERR, op, "Input type (%s) and bias type (%s) should be the same",
                  cfx_dtype_type_meta_name((cfx_dtype)input->dtype), cfx_dtype_type_meta_name((cfx_dtype)bias->dtype));
    return false;
}

/* batchify: an input of spatial + 1 dims is a batch of one, unsqueeze(0); *batched says
 * whether it already had the batch dim. NULL with 2.13's message for any other rank. */
static cfx_tensor *batchify(const char *op, const char *name, int spatial, cfx_tensor *input, bool *batched)
{
    *batched = input->ndim == spatial + 2;
    if (*batched)
        return input;
    if (input->ndim == spatial + 1)
        return cfx_op_unsqueeze(NULL, input, 0);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: ", spatial + 1,
                   spatial + 2, name);
    cfx_geom_put_dims(&b, input->sizes, input->ndim);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "bad input rank");
    cfx_free(msg);
    return NULL;
}

/* The result of a batchified call: squeeze(0) undoes the unsqueeze of an unbatched input. */
static cfx_tensor *unbatchify(cfx_scope s, cfx_tensor *out, bool batched)
{
    if (out && !batched)
        out = cfx_op_squeeze_dim(NULL, out, 0);
    return cfx_composite_return(s, out);
}

/* conv1d / conv2d / conv3d / conv_transpose1d / conv_transpose2d: batchify, then convolution. */
static cfx_tensor *conv_nd(const char *op, const char *name, int spatial, cfx_tensor *input, cfx_tensor *weight,
                           cfx_tensor *bias, cfx_int_list stride, cfx_int_list padding, cfx_int_list dilation,
                           bool transposed, cfx_int_list output_padding, int64_t groups)
{
    if (!transposed && !conv_bias_ok(op, input, bias))
        return NULL;
    cfx_scope s = cfx_scope_begin();
    bool batched;
    cfx_tensor *x = batchify(op, name, spatial, input, &batched);
    cfx_tensor *out = x ? cfx_op_convolution(NULL, x, weight, bias, stride, padding, dilation, transposed,
                                             output_padding, groups)
                        : NULL;
    return unbatchify(s, out, batched);
}

cfx_tensor *cfx_composite_conv2d(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias, cfx_int_list stride,
                                 cfx_int_list padding, cfx_int_list dilation, int64_t groups)
{
    int64_t zeros[2] = {0, 0};
    return conv_nd("aten::conv2d", "conv2d", 2, input, weight, bias, stride, padding, dilation, false,
                   cfx_ints(zeros, 2), groups);
}

cfx_tensor *cfx_composite_conv1d(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias, cfx_int_list stride,
                                 cfx_int_list padding, cfx_int_list dilation, int64_t groups)
{
    int64_t zeros[1] = {0};
    return conv_nd("aten::conv1d", "conv1d", 1, input, weight, bias, stride, padding, dilation, false,
                   cfx_ints(zeros, 1), groups);
}

cfx_tensor *cfx_composite_conv3d(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias, cfx_int_list stride,
                                 cfx_int_list padding, cfx_int_list dilation, int64_t groups)
{
    int64_t zeros[3] = {0, 0, 0};
    return conv_nd("aten::conv3d", "conv3d", 3, input, weight, bias, stride, padding, dilation, false,
                   cfx_ints(zeros, 3), groups);
}

cfx_tensor *cfx_composite_conv_transpose1d(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                           cfx_int_list stride, cfx_int_list padding, cfx_int_list output_padding,
                                           int64_t groups, cfx_int_list dilation)
{
    return conv_nd("aten::conv_transpose1d", "conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                   true, output_padding, groups);
}

cfx_tensor *cfx_composite_conv_transpose2d_input(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                                 cfx_int_list stride, cfx_int_list padding,
                                                 cfx_int_list output_padding, int64_t groups, cfx_int_list dilation)
{
    return conv_nd("aten::conv_transpose2d.input", "conv_transpose2d", 2, input, weight, bias, stride, padding,
                   dilation, true, output_padding, groups);
}

/* _convolution_same: each dim's total padding d * (k - 1) split as left = total / 2 and
 * right = total - left (pooling_same_mode_padding_lr); stride must be 1. Symmetric padding is
 * convolution's own. An odd total (an even kernel with odd dilation) is 2.13's zero-padded
 * copy: constant_pad_nd adds the extra element on the high side of each such dim (F.pad's
 * order, last dim first), then convolution pads both sides by the left amount. */
static cfx_tensor *convolution_same(const char *op, cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                    cfx_int_list stride, cfx_int_list dilation, int64_t groups)
{
    int k = weight->ndim, dim = k - 2;
    if (k <= 2) {
        cfx_error_set(CFX_ERR, op, "weight should have at least three dimensions");
        return NULL;
    }
    if (groups <= 0) {
        cfx_error_set(CFX_ERR, op, "non-positive groups is not supported");
        return NULL;
    }
    if (input->ndim != k) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "Expected %d-dimensional input for %d-dimensional weight", k, k);
        cfx_geom_put_dims(&b, weight->sizes, k);
        cfx_buf_printf(&b, ", but got %d-dimensional input of size ", input->ndim);
        cfx_geom_put_dims(&b, input->sizes, input->ndim);
        cfx_buf_puts(&b, " instead");
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "bad input rank");
        cfx_free(msg);
        return NULL;
    }
    const cfx_int_list *lists[2] = {&stride, &dilation};
    const char *names[2] = {"stride", "dilation"};
    for (int i = 0; i < 2; i++)
        if (lists[i]->len != dim && lists[i]->len != 1) {
            cfx_error_set(CFX_ERR, op, "%s cannot broadcast to %d dimensions", names[i], dim);
            return NULL;
        }
    for (int i = 0; i < (int)stride.len; i++)
        if (stride.data[i] != 1) {
            cfx_error_set(CFX_ERR, op, "padding='same' is not supported for strided convolutions");
            return NULL;
        }
    int64_t pad[CFX_MAX_DIMS], zeros[CFX_MAX_DIMS] = {0}, pad_nd[2 * CFX_MAX_DIMS] = {0};
    bool symmetric = true;
    for (int i = 0; i < dim; i++) {
        int64_t total = dilation.data[dilation.len == 1 ? 0 : i] * (weight->sizes[i + 2] - 1);
        pad[i] = total / 2;
        pad_nd[2 * (dim - 1 - i) + 1] = total - pad[i] - pad[i]; /* 0 or 1: right - left */
        symmetric &= total % 2 == 0;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = symmetric ? input : cfx_op_constant_pad_nd(NULL, input, cfx_ints(pad_nd, 2 * dim), cfx_int(0));
    cfx_tensor *out = x ? cfx_op_convolution(NULL, x, weight, bias, stride, cfx_ints(pad, dim), dilation, false,
                                             cfx_ints(zeros, dim), groups)
                        : NULL;
    return cfx_composite_return(s, out);
}

/* conv{1,2,3}d.padding: batchify, then _convolution_mode ("same" or "valid", which is
 * convolution with the one-element lists [0]). */
static cfx_tensor *conv_padding_mode(const char *op, const char *name, int spatial, cfx_tensor *input,
                                     cfx_tensor *weight, cfx_tensor *bias, cfx_int_list stride, const char *padding,
                                     cfx_int_list dilation, int64_t groups)
{
    if (!conv_bias_ok(op, input, bias))
        return NULL;
    cfx_scope s = cfx_scope_begin();
    bool batched;
    cfx_tensor *x = batchify(op, name, spatial, input, &batched), *out = NULL;
    int64_t zero = 0;
    if (x && !strcmp(padding, "same"))
        out = convolution_same(op, x, weight, bias, stride, dilation, groups);
    else if (x && !strcmp(padding, "valid"))
        out = cfx_op_convolution(NULL, x, weight, bias, stride, cfx_ints(&zero, 1), dilation, false,
                                 cfx_ints(&zero, 1), groups);
    else if (x)
        cfx_error_set(CFX_ERR, op, "Invalid padding string: '%s'", padding);
    return unbatchify(s, out, batched);
}

cfx_tensor *cfx_composite_conv2d_padding(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                         cfx_int_list stride, const char *padding, cfx_int_list dilation,
                                         int64_t groups)
{
    return conv_padding_mode("aten::conv2d.padding", "conv2d", 2, input, weight, bias, stride, padding, dilation,
                             groups);
}

cfx_tensor *cfx_composite_conv1d_padding(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                         cfx_int_list stride, const char *padding, cfx_int_list dilation,
                                         int64_t groups)
{
    return conv_padding_mode("aten::conv1d.padding", "conv1d", 1, input, weight, bias, stride, padding, dilation,
                             groups);
}

cfx_tensor *cfx_composite_conv3d_padding(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                         cfx_int_list stride, const char *padding, cfx_int_list dilation,
                                         int64_t groups)
{
    return conv_padding_mode("aten::conv3d.padding", "conv3d", 3, input, weight, bias, stride, padding, dilation,
                             groups);
}

cfx_tensor *cfx_composite_max_pool2d(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                                     cfx_int_list padding, cfx_int_list dilation, bool ceil_mode)
{
    cfx_scope s = cfx_scope_begin();
    cfx_max_pool2d_with_indices_result r =
        cfx_op_max_pool2d_with_indices(NULL, self, kernel_size, stride, padding, dilation, ceil_mode);
    return cfx_composite_return(s, r.values);
}

cfx_tensor *cfx_composite_adaptive_avg_pool2d(cfx_tensor *self, cfx_int_list output_size)
{
    const char *op = "aten::adaptive_avg_pool2d";
    if (output_size.len != 2) {
        cfx_error_set(CFX_ERR, op, "adaptive_avg_pool2d: output_size must be 2");
        return NULL;
    }
    const int64_t *o = output_size.data;
    if (o[0] < 0 || o[1] < 0) {
        cfx_error_set(CFX_ERR, op,
                      "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received "
                      "{%lld, %lld}",
                      (long long)o[0], (long long)o[1]);
        return NULL;
    }
    if (o[0] != 1 || o[1] != 1)
        return cfx_op__adaptive_avg_pool2d(NULL, self, output_size);
    /* a channels-last input makes 2.13 restride the mean with as_strided_, which cfx lacks */
    if (cfx_geom_suggest_memory_format(self->sizes, self->strides, self->ndim) == CFX_CHANNELS_LAST)
        return not_implemented(op, "a 1x1 adaptive_avg_pool2d of a channels-last input (it needs as_strided_)");
    int64_t dims[2] = {-1, -2};
    return cfx_op_mean_dim(NULL, self, cfx_ints(dims, 2), true, cfx_none());
}

cfx_tensor *cfx_composite_nll_loss(cfx_tensor *self, cfx_tensor *target, cfx_tensor *weight, int64_t reduction,
                                   int64_t ignore_index)
{
    cfx_scope s = cfx_scope_begin();
    cfx_nll_loss_forward_result r = cfx_op_nll_loss_forward(NULL, self, target, weight, reduction, ignore_index);
    return cfx_composite_return(s, r.output);
}

cfx_tensor *cfx_composite_nll_loss_nd(cfx_tensor *self, cfx_tensor *target, cfx_tensor *weight, int64_t reduction,
                                      int64_t ignore_index)
{
    const char *op = "aten::nll_loss_nd";
    if (self->ndim < 1) {
        cfx_error_set(CFX_ERR, op, "Expected 1 or more dimensions (got %d)", self->ndim);
        return NULL;
    }
    if (self->ndim != 1 && (target->ndim < 1 || self->sizes[0] != target->sizes[0])) {
        cfx_error_set(CFX_ERR, op, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                      (long long)self->sizes[0], (long long)(target->ndim ? target->sizes[0] : 1));
        return NULL;
    }
    if (self->ndim > 2)
        return not_implemented(op, "nll_loss of an input with more than 2 dimensions (nll_loss2d)");
    return cfx_op_nll_loss(NULL, self, target, weight, reduction, ignore_index);
}

cfx_tensor *cfx_composite_cross_entropy_loss(cfx_tensor *self, cfx_tensor *target, cfx_tensor *weight,
                                             int64_t reduction, int64_t ignore_index, double label_smoothing)
{
    const char *op = "aten::cross_entropy_loss";
    bool same = self->ndim == target->ndim &&
                !memcmp(self->sizes, target->sizes, (size_t)self->ndim * sizeof *self->sizes);
    if (same)
        return not_implemented(op, "cross_entropy with class-probability targets");
    if (label_smoothing > 0.0)
        return not_implemented(op, "cross_entropy with label_smoothing");
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *ls = cfx_op_log_softmax_int(NULL, self, self->ndim == 1 ? 0 : 1, cfx_dtype_value((cfx_dtype)self->dtype));
    cfx_tensor *r = ls ? cfx_op_nll_loss_nd(NULL, ls, target, weight, reduction, ignore_index) : NULL;
    return cfx_composite_return(s, r);
}
