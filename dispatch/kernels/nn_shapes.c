/* nn_shapes.c - convolution's and 2-D pooling's argument checks and output sizes, shared by
 * their CPU and Meta kernels (ATen's pool2d_shape_check / pooling_output_shape and
 * ConvUtils' check_shape_forward / conv_output_size, in their words where the two devices
 * agree). */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"

/* An int[2] argument: one value means both dims; `dflt` stands for an empty list. */
static bool pair(const char *op, const char *what, cfx_int_list l, const int64_t *dflt, int64_t *a, int64_t *b)
{
    if (l.len <= 0 && dflt) {
        *a = dflt[0], *b = dflt[1];
        return true;
    }
    if (l.len != 1 && l.len != 2) {
        cfx_error_set(CFX_ERR, op, "%s must either be a single int, or a tuple of two ints", what);
        return false;
    }
    *a = l.data[0], *b = l.data[l.len - 1];
    return true;
}

/* pooling_output_shape_pad_lr: div_rtn, then the ceil-mode rule that the last window starts
 * inside the input (or its left padding). */
static int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode)
{
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t q = num / stride, r = num % stride;
    if (r != 0 && ((r < 0) != (stride < 0)))
        q--;
    int64_t out = q + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad)
        out--;
    return out;
}

/* pool2d_shape_check's "<what> should be greater than zero, but got <h> <w>" */
static bool positive_pair(const char *op, const char *fmt, int64_t h, int64_t w)
{
    if (h > 0 && w > 0)
        return true;
    cfx_error_set(CFX_ERR, op, fmt, (long long)h, (long long)w);
    return false;
}

bool cfx_pool2d_params(const char *op, const cfx_tensor *self, cfx_int_list kernel, cfx_int_list stride,
                       cfx_int_list padding, const cfx_int_list *dilation, bool ceil_mode, cfx_pool2d *p)
{
    const char *kname = dilation ? "max_pool2d: kernel_size" : "avg_pool2d: kernel_size";
    if (!pair(op, kname, kernel, NULL, &p->kh, &p->kw))
        return false;
    int64_t k[2] = {p->kh, p->kw}, one[2] = {1, 1};
    if (!pair(op, dilation ? "max_pool2d: stride" : "avg_pool2d: stride", stride, k, &p->sh, &p->sw) ||
        !pair(op, dilation ? "max_pool2d: padding" : "avg_pool2d: padding", padding, NULL, &p->ph, &p->pw) ||
        !pair(op, "max_pool2d: dilation", dilation ? *dilation : (cfx_int_list){NULL, 0}, one, &p->dh, &p->dw))
        return false;
    if (p->sh == 0 || p->sw == 0) {
        cfx_error_set(CFX_ERR, op, "stride should not be zero");
        return false;
    }
    int n = self->ndim;
    if (n != 3 && n != 4) {
        cfx_error_set(CFX_ERR, op, "non-empty 3D or 4D (batch mode) tensor expected for input");
        return false;
    }
    /* pooling_output_shape's check, height then width: without it and pool2d_shape_check's
     * below, negative windows read outside the input (heap-buffer-overflow, fuzz_op_call) */
    if (p->ph < 0 || p->pw < 0) {
        cfx_error_set(CFX_ERR, op, "pad must be non-negative, but got pad: %lld", (long long)(p->ph < 0 ? p->ph : p->pw));
        return false;
    }
    if (p->ph > (p->dh * (p->kh - 1) + 1) / 2 || p->pw > (p->dw * (p->kw - 1) + 1) / 2) {
        bool h = p->ph > (p->dh * (p->kh - 1) + 1) / 2;
        cfx_error_set(CFX_ERR, op,
                      "pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld and "
                      "dilation=%lld",
                      (long long)(h ? p->ph : p->pw), (long long)(h ? p->kh : p->kw), (long long)(h ? p->dh : p->dw));
        return false;
    }
    /* pool2d_shape_check's texts: the Python meta functions (meta device, fake tensors) put a
     * comma between the two values, the C++ checks do not */
    bool py = self->device.type == CFX_DEVICE_META || self->ext.is_fake;
    if (!positive_pair(op, py ? "kernel size should be greater than zero, but got kH: %lld, kW: %lld"
                              : "kernel size should be greater than zero, but got kH: %lld kW: %lld", p->kh, p->kw) ||
        !positive_pair(op, py ? "stride should be greater than zero, but got dH: %lld, dW: %lld"
                              : "stride should be greater than zero, but got dH: %lld dW: %lld", p->sh, p->sw) ||
        !positive_pair(op, py ? "dilation should be greater than zero, but got dilationH: %lld, dilationW: %lld"
                              : "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                       p->dh, p->dw))
        return false;
    p->ih = self->sizes[n - 2], p->iw = self->sizes[n - 1];
    p->oh = pool_out(p->ih, p->kh, p->ph, p->sh, p->dh, ceil_mode);
    p->ow = pool_out(p->iw, p->kw, p->pw, p->sw, p->dw, ceil_mode);
    int64_t c = self->sizes[n - 3];
    p->planes = cfx_geom_numel(self->sizes, n - 2);
    if (p->oh < 1 || p->ow < 1) {
        cfx_error_set(CFX_ERR, op, "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output "
                      "size is too small", (long long)c, (long long)p->ih, (long long)p->iw, (long long)c,
                      (long long)p->oh, (long long)p->ow);
        return false;
    }
    return true;
}

cfx_tensor *cfx_pool2d_output(const cfx_tensor *self, int64_t oh, int64_t ow, cfx_dtype dt)
{
    int n = self->ndim;
    int64_t sizes[4], strides[4];
    for (int i = 0; i < n - 2; i++)
        sizes[i] = self->sizes[i];
    sizes[n - 2] = oh, sizes[n - 1] = ow;
    cfx_memory_format mf = cfx_geom_suggest_memory_format(self->sizes, self->strides, n);
    if (mf != CFX_CONTIGUOUS_FORMAT && n == 4)
        cfx_geom_memory_format_strides(sizes, n, mf, strides, NULL); /* channels_last on 4 dims: cannot fail */
    else
        cfx_geom_contiguous_strides(sizes, n, strides);
    return cfx_tensor_new_strided(sizes, strides, n, dt, self->device);
}

bool cfx_pool2d_outputs(const cfx_tensor *self, const cfx_pool2d *p, cfx_tensor **values, cfx_tensor **indices)
{
    *values = cfx_pool2d_output(self, p->oh, p->ow, (cfx_dtype)self->dtype);
    *indices = *values ? cfx_pool2d_output(self, p->oh, p->ow, CFX_INT64) : NULL;
    if (*indices)
        return true;
    cfx_kernel_discard(*values);
    return false;
}

bool cfx_conv_output_size(const char *op, const cfx_tensor *input, const cfx_tensor *weight, const cfx_tensor *bias,
                          cfx_int_list stride, cfx_int_list padding, cfx_int_list dilation, bool transposed,
                          cfx_int_list output_padding, int64_t groups, int64_t *out)
{
    int n = input->ndim, k = n - 2;
    if (n < 3 || weight->ndim != n) {
        cfx_error_set(CFX_ERR, op, "Expected %d-dimensional input for %d-dimensional weight, but got %d-dimensional "
                      "input", weight->ndim, weight->ndim, n);
        return false;
    }
    if (groups <= 0) {
        cfx_error_set(CFX_ERR, op, "non-positive groups is not supported");
        return false;
    }
    const cfx_int_list *lists[4] = {&stride, &padding, &dilation, &output_padding};
    const char *names[4] = {"stride", "padding", "dilation", "output_padding"};
    for (int i = 0; i < 4; i++) {
        if (lists[i]->len != k && lists[i]->len != 1) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_printf(&b, "expected %s to be a single integer value or a list of %d values to match the "
                           "convolution dimensions, but got %s=", names[i], k, names[i]);
            cfx_geom_put_dims(&b, lists[i]->data, (int)lists[i]->len);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "convolution: bad argument list");
            cfx_free(msg);
            return false;
        }
    }
    for (int d = 0; d < k; d++) {
        if (padding.data[padding.len == 1 ? 0 : d] < 0) {
            cfx_error_set(CFX_ERR, op, "negative padding is not supported");
            return false;
        }
    }
    for (int d = 0; d < k; d++) {
        if (output_padding.data[output_padding.len == 1 ? 0 : d] < 0) {
            cfx_error_set(CFX_ERR, op, "negative output_padding is not supported");
            return false;
        }
    }
    for (int d = 0; d < k; d++) {
        if (stride.data[stride.len == 1 ? 0 : d] <= 0) {
            cfx_error_set(CFX_ERR, op, "non-positive stride is not supported");
            return false;
        }
    }
    cfx_buf b;
    cfx_buf_init(&b);
    if (weight->sizes[0] % groups) {
        cfx_buf_printf(&b, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight "
                       "of size [", (long long)groups, (long long)groups);
        cfx_geom_put_dims(&b, weight->sizes, weight->ndim);
        cfx_buf_puts(&b, "] instead");
        goto fail;
    }
    /* the input's channels meet weight dim 1 (times groups), or dim 0 when transposed */
    int64_t want_c = transposed ? weight->sizes[0] : weight->sizes[1] * groups;
    if (input->sizes[1] != want_c) {
        if (transposed)
            cfx_buf_puts(&b, "Given transposed=1, weight of size ");
        else
            cfx_buf_printf(&b, "Given groups=%lld, weight of size ", (long long)groups);
        cfx_geom_put_dims(&b, weight->sizes, weight->ndim);
        cfx_buf_puts(&b, ", expected input");
        cfx_geom_put_dims(&b, input->sizes, n);
        cfx_buf_printf(&b, " to have %lld channels, but got %lld channels instead", (long long)want_c,
                       (long long)input->sizes[1]);
        goto fail;
    }
    int64_t out_c = transposed ? weight->sizes[1] * groups : weight->sizes[0];
    if (bias && (bias->ndim != 1 || bias->sizes[0] != out_c)) {
        cfx_buf_puts(&b, transposed ? "Given transposed=1, weight of size " : "Given weight of size ");
        cfx_geom_put_dims(&b, weight->sizes, weight->ndim);
        cfx_buf_printf(&b, ", expected bias to be 1-dimensional with %lld elements, but got bias of size ",
                       (long long)out_c);
        cfx_geom_put_dims(&b, bias->sizes, bias->ndim);
        cfx_buf_puts(&b, " instead");
        goto fail;
    }
    if (transposed) { /* (in - 1) * s - 2p + d (k - 1) + output_padding + 1, which must be positive */
        out[0] = input->sizes[0];
        out[1] = out_c;
        bool small = false;
        for (int d = 0; d < k; d++) {
            int64_t s = stride.data[stride.len == 1 ? 0 : d], p = padding.data[padding.len == 1 ? 0 : d];
            int64_t dl = dilation.data[dilation.len == 1 ? 0 : d];
            int64_t op_ = output_padding.data[output_padding.len == 1 ? 0 : d];
            out[d + 2] = (input->sizes[d + 2] - 1) * s - 2 * p + dl * (weight->sizes[d + 2] - 1) + op_ + 1;
            small = small || out[d + 2] < 1;
        }
        if (small) {
            cfx_buf_puts(&b, "Given input size per channel: (");
            for (int e = 0; e < k; e++)
                cfx_buf_printf(&b, "%s%lld", e ? " x " : "", (long long)input->sizes[e + 2]);
            cfx_buf_puts(&b, "). Calculated output size per channel: (");
            for (int e = 0; e < k; e++)
                cfx_buf_printf(&b, "%s%lld", e ? " x " : "", (long long)out[e + 2]);
            cfx_buf_puts(&b, "). Output size is too small");
            goto fail;
        }
        cfx_buf_free(&b);
        return true;
    }
    out[0] = input->sizes[0];
    out[1] = weight->sizes[0];
    for (int d = 0; d < k; d++) {
        int64_t s = stride.data[stride.len == 1 ? 0 : d], p = padding.data[padding.len == 1 ? 0 : d];
        int64_t dl = dilation.data[dilation.len == 1 ? 0 : d];
        int64_t padded = input->sizes[d + 2] + 2 * p, kern = dl * (weight->sizes[d + 2] - 1) + 1;
        if (padded < kern) {
            cfx_buf_puts(&b, "Calculated padded input size per channel: (");
            for (int e = 0; e < k; e++)
                cfx_buf_printf(&b, "%s%lld", e ? " x " : "",
                               (long long)(input->sizes[e + 2] + 2 * padding.data[padding.len == 1 ? 0 : e]));
            cfx_buf_puts(&b, "). Kernel size: (");
            for (int e = 0; e < k; e++)
                cfx_buf_printf(&b, "%s%lld", e ? " x " : "",
                               (long long)(dilation.data[dilation.len == 1 ? 0 : e] * (weight->sizes[e + 2] - 1) + 1));
            cfx_buf_puts(&b, "). Kernel size can't be greater than actual input size");
            goto fail;
        }
        out[d + 2] = (padded - kern) / s + 1;
    }
    cfx_buf_free(&b);
    return true;
fail:;
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "convolution: bad arguments");
    cfx_free(msg);
    return false;
}
