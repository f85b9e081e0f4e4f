/* pool.c - the CPU kernels of max_pool2d_with_indices, avg_pool2d and _adaptive_avg_pool2d
 * (float32/float64), as ATen's CPU loops compute them:
 *   max: the window starts at -inf with the index of its first in-bounds element and takes a
 *        value when it is greater or NaN; indices are flat h * W + w within the plane;
 *   avg: the window clipped to input + padding gives the count_include_pad divisor, clipped
 *        to the input the summed elements (divisor_override wins);
 *   adaptive: rows [floor(o * I / O), ceil((o + 1) * I / O)).
 * Outputs are in the input's suggested memory format (cfx_pool2d_output). */
#include <math.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"

/* Element (plane, h, w) of a [N,]C,H,W tensor: its offset in elements. */
static int64_t offset_of(const cfx_tensor *t, int64_t plane, int64_t h, int64_t w)
{
    int n = t->ndim;
    int64_t off = h * t->strides[n - 2] + w * t->strides[n - 1];
    if (n == 4)
        off += (plane / t->sizes[1]) * t->strides[0] + (plane % t->sizes[1]) * t->strides[1];
    else
        off += plane * t->strides[0];
    return off;
}

static bool floating_only(const char *op, const char *kernel, const cfx_tensor *self)
{
    if (cfx_dtype_is_floating((cfx_dtype)self->dtype))
        return true;
    cfx_error_set(CFX_ERR, op, "\"%s\" not implemented for '%s'", kernel, cfx_dtype_name((cfx_dtype)self->dtype));
    return false;
}

cfx_max_pool2d_with_indices_result cfx_cpu_max_pool2d_with_indices(cfx_tensor *self, cfx_int_list kernel_size,
                                                                   cfx_int_list stride, cfx_int_list padding,
                                                                   cfx_int_list dilation, bool ceil_mode)
{
    const char *op = "aten::max_pool2d_with_indices";
    cfx_max_pool2d_with_indices_result none = {{NULL, NULL}};
    cfx_pool2d p;
    if (!cfx_pool2d_params(op, self, kernel_size, stride, padding, &dilation, ceil_mode, &p) ||
        !floating_only(op, "max_pool2d", self))
        return none;
    cfx_tensor *out, *idx;
    if (!cfx_pool2d_outputs(self, &p, &out, &idx))
        return none;
    int64_t *pi = cfx_tensor_data(idx);
    for (int64_t pl = 0; pl < p.planes; pl++)
        for (int64_t oh = 0; oh < p.oh; oh++)
            for (int64_t ow = 0; ow < p.ow; ow++) {
                int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
                int64_t h1 = h0 + (p.kh - 1) * p.dh + 1 < p.ih ? h0 + (p.kh - 1) * p.dh + 1 : p.ih;
                int64_t w1 = w0 + (p.kw - 1) * p.dw + 1 < p.iw ? w0 + (p.kw - 1) * p.dw + 1 : p.iw;
                while (h0 < 0)
                    h0 += p.dh;
                while (w0 < 0)
                    w0 += p.dw;
                int64_t best = h0 * p.iw + w0;
                double m = -INFINITY;
                for (int64_t h = h0; h < h1; h += p.dh)
                    for (int64_t w = w0; w < w1; w += p.dw) {
                        double v = cfx_nn_get(self, offset_of(self, pl, h, w));
                        if (v > m || isnan(v)) {
                            m = v;
                            best = h * p.iw + w;
                        }
                    }
                cfx_nn_set(out, offset_of(out, pl, oh, ow), m);
                pi[offset_of(idx, pl, oh, ow)] = best;
            }
    return (cfx_max_pool2d_with_indices_result){{out, idx}};
}

cfx_tensor *cfx_cpu_avg_pool2d(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                               cfx_int_list padding, bool ceil_mode, bool count_include_pad,
                               cfx_value divisor_override)
{
    const char *op = "aten::avg_pool2d";
    cfx_pool2d p;
    int64_t divisor = 0;
    bool has_divisor = cfx_geom_opt_int(divisor_override, &divisor);
    if (!cfx_pool2d_params(op, self, kernel_size, stride, padding, NULL, ceil_mode, &p) ||
        !floating_only(op, "avg_pool2d_out_frame", self))
        return NULL;
    if (has_divisor && divisor == 0) {
        cfx_error_set(CFX_ERR, op, "divisor must be not zero");
        return NULL;
    }
    cfx_tensor *out = cfx_pool2d_output(self, p.oh, p.ow, (cfx_dtype)self->dtype);
    if (!out)
        return NULL;
    for (int64_t pl = 0; pl < p.planes; pl++)
        for (int64_t oh = 0; oh < p.oh; oh++)
            for (int64_t ow = 0; ow < p.ow; ow++) {
                int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
                int64_t h1 = h0 + p.kh < p.ih + p.ph ? h0 + p.kh : p.ih + p.ph;
                int64_t w1 = w0 + p.kw < p.iw + p.pw ? w0 + p.kw : p.iw + p.pw;
                int64_t pool = (h1 - h0) * (w1 - w0);
                h0 = h0 < 0 ? 0 : h0, w0 = w0 < 0 ? 0 : w0;
                h1 = h1 > p.ih ? p.ih : h1, w1 = w1 > p.iw ? p.iw : w1;
                double sum = 0;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        sum += cfx_nn_get(self, offset_of(self, pl, h, w));
                int64_t div = has_divisor ? divisor : count_include_pad ? pool : (h1 - h0) * (w1 - w0);
                cfx_nn_set(out, offset_of(out, pl, oh, ow), h0 >= h1 || w0 >= w1 ? 0.0 : sum / (double)div);
            }
    return out;
}

cfx_tensor *cfx_cpu__adaptive_avg_pool2d(cfx_tensor *self, cfx_int_list output_size)
{
    const char *op = "aten::_adaptive_avg_pool2d";
    if (output_size.len != 2) {
        cfx_error_set(CFX_ERR, op, "adaptive_avg_pool2d: output_size must be 2");
        return NULL;
    }
    int n = self->ndim;
    if (n != 3 && n != 4) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ");
        cfx_geom_put_dims(&b, self->sizes, n);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "adaptive_avg_pool2d: bad rank");
        cfx_free(msg);
        return NULL;
    }
    if (!floating_only(op, "adaptive_avg_pool2d_cpu", self))
        return NULL;
    int64_t oh = output_size.data[0], ow = output_size.data[1], ih = self->sizes[n - 2], iw = self->sizes[n - 1];
    cfx_tensor *out = cfx_pool2d_output(self, oh, ow, (cfx_dtype)self->dtype);
    if (!out)
        return NULL;
    int64_t planes = cfx_geom_numel(self->sizes, n - 2);
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t y = 0; y < oh; y++)
            for (int64_t x = 0; x < ow; x++) {
                int64_t h0 = y * ih / oh, h1 = ((y + 1) * ih + oh - 1) / oh;
                int64_t w0 = x * iw / ow, w1 = ((x + 1) * iw + ow - 1) / ow;
                double sum = 0;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        sum += cfx_nn_get(self, offset_of(self, pl, h, w));
                cfx_nn_set(out, offset_of(out, pl, y, x), sum / (double)((h1 - h0) * (w1 - w0)));
            }
    return out;
}
