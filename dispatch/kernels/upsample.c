/* upsample.c - upsample_nearest2d and upsample_bilinear2d (CPU and Meta) and their .vec
 * overloads, the CompositeImplicitAutograd ones F.interpolate calls: .vec turns
 * output_size / scale_factors into the output size (UpSample.cpp's compute_output_size, the
 * size truncated from input * scale) and calls .default with the scales, so make_fx records
 * upsample_nearest2d.default(x, [8, 8], 2.0, 2.0) as 2.13 does.
 *
 * The index rules are UpSample.h's, in its types: nearest reads floor(o * scale) in float
 * (o itself when the sizes are equal, o >> 1 when doubled); bilinear maps o to
 * scale * o (align_corners) or scale * (o + 0.5) - 0.5 clamped at 0, with scale =
 * (in - 1) / (out - 1) or 1 / scales_x when given and positive, else in / out, and blends
 * the two neighbours (the second clamped to the edge). Outputs keep the input's suggested
 * memory format (channels-last stays channels-last), as the CPU kernels and the Python meta
 * functions both do. */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/prims.h"

/* upsample_2d_common_check (C++) / upsample_common_check (Python): the output's 4 sizes */
static bool common_check(const char *op, const cfx_tensor *in, cfx_int_list output_size, bool python, int64_t *out)
{
    if (output_size.len != 2) {
        cfx_error_set(CFX_ERR, op, "It is expected output_size equals to 2, but got size %lld", (long long)output_size.len);
        return false;
    }
    if (in->ndim != 4) {
        cfx_error_set(CFX_ERR, op, "It is expected input_size equals to 4, but got size %d", in->ndim);
        return false;
    }
    int64_t ih = in->sizes[2], iw = in->sizes[3], oh = output_size.data[0], ow = output_size.data[1];
    if (!(ih > 0 && iw > 0 && oh > 0 && ow > 0)) {
        if (python) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "Input and output sizes should be greater than 0, but got input size ");
            cfx_prims_put_size(&b, in->sizes, in->ndim);
            cfx_buf_printf(&b, " and output size [%lld, %lld]", (long long)oh, (long long)ow);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "upsample: sizes must be positive");
            cfx_free(msg);
        } else {
            cfx_error_set(CFX_ERR, op, "Input and output sizes should be greater than 0, but got input (H: %lld, W: "
                          "%lld) output (H: %lld, W: %lld)", (long long)ih, (long long)iw, (long long)oh, (long long)ow);
        }
        return false;
    }
    out[0] = in->sizes[0], out[1] = in->sizes[1], out[2] = oh, out[3] = ow;
    return true;
}

/* The output in the input's suggested memory format. */
static cfx_tensor *new_output(const cfx_tensor *in, const int64_t *sizes)
{
    int64_t strides[4];
    cfx_memory_format mf = cfx_geom_suggest_memory_format(in->sizes, in->strides, 4);
    if (!cfx_geom_memory_format_strides(sizes, 4, mf, strides, NULL))
        cfx_geom_contiguous_strides(sizes, 4, strides);
    return cfx_tensor_new_strided(sizes, strides, 4, (cfx_dtype)in->dtype, in->device);
}

/* The meta functions' output and checks; nearest also asks for a non-empty input. */
static cfx_tensor *output_for(const char *op, const cfx_tensor *in, cfx_int_list output_size, bool nearest, bool python)
{
    int64_t sizes[4];
    if (python && !common_check(op, in, output_size, true, sizes))
        return NULL;
    if (!python && !common_check(op, in, output_size, false, sizes))
        return NULL;
    /* C++: both ops refuse an empty input unless only the batch is empty; the Python meta of
     * nearest hands torch._check the int product when numel is 0, so it always raises */
    if (cfx_tensor_numel(in) == 0 && python && nearest) {
        cfx_error_set(CFX_ERR, op, "cond must be a bool, but got <class 'int'>");
        return NULL;
    }
    if (cfx_tensor_numel(in) == 0 && !python && cfx_geom_numel(in->sizes + 1, in->ndim - 1) == 0) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Non-empty 4D data tensor expected but got a tensor with sizes ");
        cfx_geom_put_dims(&b, in->sizes, in->ndim);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "upsample: empty input");
        cfx_free(msg);
        return NULL;
    }
    return new_output(in, sizes);
}

static bool floating_only(const char *op, const char *kernel, const cfx_tensor *in)
{
    if (cfx_dtype_is_floating((cfx_dtype)in->dtype))
        return true;
    cfx_kernel_not_implemented(op, kernel, (cfx_dtype)in->dtype);
    return false;
}

/* compute_scales_value<float>: 1 / scale when given and positive, else in / out */
static float scale_value(cfx_value scale, int64_t in, int64_t out)
{
    if (scale.kind != CFX_V_NONE && cfx_value_to_double(scale) > 0)
        return (float)(1.0 / cfx_value_to_double(scale));
    return (float)in / (float)out;
}

/* nearest_idx */
static int64_t nearest_idx(int64_t o, int64_t in, int64_t out, cfx_value scale)
{
    if (out == in)
        return o;
    if (out == 2 * in)
        return o >> 1;
    float s = scale_value(scale, in, out);
    int64_t i = (int64_t)floorf((float)o * s);
    return i < in - 1 ? i : in - 1;
}

static int64_t at(const cfx_tensor *t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3];
}

cfx_tensor *cfx_cpu_upsample_nearest2d(cfx_tensor *self, cfx_int_list output_size, cfx_value scales_h, cfx_value scales_w)
{
    const char *op = "aten::upsample_nearest2d";
    cfx_tensor *out = output_for(op, self, output_size, true, false);
    if (!out)
        return NULL;
    if (!floating_only(op, "upsample_nearest2d_channels_last", self)) {
        cfx_kernel_discard(out);
        return NULL;
    }
    int64_t ih = self->sizes[2], iw = self->sizes[3], oh = out->sizes[2], ow = out->sizes[3];
    for (int64_t n = 0; n < out->sizes[0]; n++)
        for (int64_t c = 0; c < out->sizes[1]; c++)
            for (int64_t y = 0; y < oh; y++) {
                int64_t sy = nearest_idx(y, ih, oh, scales_h);
                for (int64_t x = 0; x < ow; x++)
                    cfx_nn_set(out, at(out, n, c, y, x), cfx_nn_get(self, at(self, n, c, sy, nearest_idx(x, iw, ow, scales_w))));
            }
    return out;
}

cfx_tensor *cfx_meta_upsample_nearest2d(cfx_tensor *self, cfx_int_list output_size, cfx_value scales_h, cfx_value scales_w)
{
    (void)scales_h, (void)scales_w;
    return output_for("aten::upsample_nearest2d", self, output_size, true, true);
}

/* compute_indices_weights_linear for one output index: the two source indices and weights */
typedef struct lin {
    int64_t i0, i1;
    double l0, l1;
} lin;

static lin linear_at(int64_t o, int64_t in, int64_t out, bool align_corners, cfx_value scale, bool is_double)
{
    double s, src;
    if (align_corners)
        s = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
    else
        s = is_double ? (scale.kind != CFX_V_NONE && cfx_value_to_double(scale) > 0 ? 1.0 / cfx_value_to_double(scale)
                                                                                     : (double)in / (double)out)
                      : scale_value(scale, in, out);
    if (!is_double) { /* opmath float: every step rounds to float */
        float fs = (float)s, fsrc = align_corners ? fs * (float)o : fs * ((float)o + 0.5f) - 0.5f;
        src = fsrc < 0 ? 0 : fsrc;
    } else {
        src = align_corners ? s * (double)o : s * ((double)o + 0.5) - 0.5;
        src = src < 0 ? 0 : src;
    }
    lin r;
    r.i0 = (int64_t)src < in - 1 ? (int64_t)src : in - 1;
    r.i1 = r.i0 + (r.i0 < in - 1 ? 1 : 0);
    double l = src - (double)r.i0;
    r.l1 = l < 0 ? 0 : l > 1 ? 1 : l;
    r.l0 = 1 - r.l1;
    return r;
}

cfx_tensor *cfx_cpu_upsample_bilinear2d(cfx_tensor *self, cfx_int_list output_size, bool align_corners,
                                        cfx_value scales_h, cfx_value scales_w)
{
    const char *op = "aten::upsample_bilinear2d";
    cfx_tensor *out = output_for(op, self, output_size, false, false);
    if (!out)
        return NULL;
    if (!floating_only(op, "upsample_bilinear2d_channels_last", self)) {
        cfx_kernel_discard(out);
        return NULL;
    }
    bool dbl = self->dtype == CFX_FLOAT64;
    int64_t ih = self->sizes[2], iw = self->sizes[3], oh = out->sizes[2], ow = out->sizes[3];
    for (int64_t n = 0; n < out->sizes[0]; n++)
        for (int64_t c = 0; c < out->sizes[1]; c++)
            for (int64_t y = 0; y < oh; y++) {
                lin h = linear_at(y, ih, oh, align_corners, scales_h, dbl);
                for (int64_t x = 0; x < ow; x++) {
                    lin w = linear_at(x, iw, ow, align_corners, scales_w, dbl);
                    double v = h.l0 * (w.l0 * cfx_nn_get(self, at(self, n, c, h.i0, w.i0)) +
                                       w.l1 * cfx_nn_get(self, at(self, n, c, h.i0, w.i1))) +
                               h.l1 * (w.l0 * cfx_nn_get(self, at(self, n, c, h.i1, w.i0)) +
                                       w.l1 * cfx_nn_get(self, at(self, n, c, h.i1, w.i1)));
                    cfx_nn_set(out, at(out, n, c, y, x), v);
                }
            }
    return out;
}

cfx_tensor *cfx_meta_upsample_bilinear2d(cfx_tensor *self, cfx_int_list output_size, bool align_corners,
                                         cfx_value scales_h, cfx_value scales_w)
{
    (void)align_corners, (void)scales_h, (void)scales_w;
    return output_for("aten::upsample_bilinear2d", self, output_size, false, true);
}

/* ---- .vec ---------------------------------------------------------------------------------- */

/* compute_output_size; the scales .default is called with (get_scale_value) */
static bool vec_sizes(const char *op, const cfx_tensor *in, cfx_int_list output_size, cfx_value scale_factors,
                      int64_t *osize, cfx_value *scales)
{
    bool has_scales = scale_factors.kind != CFX_V_NONE;
    int64_t spatial = in->ndim - 2;
    scales[0] = scales[1] = cfx_none();
    if (output_size.len >= 0) {
        if (has_scales) {
            cfx_error_set(CFX_ERR, op, "Must specify exactly one of output_size and scale_factors");
            return false;
        }
        if (output_size.len != spatial) {
            cfx_error_set(CFX_ERR, op, "Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions to "
                          "be true, but got false.  (Could this error message be improved?  If so, please report an "
                          "enhancement request to PyTorch.)");
            return false;
        }
        for (int64_t i = 0; i < spatial; i++)
            osize[i] = output_size.data[i];
        return true;
    }
    if (!has_scales) {
        cfx_error_set(CFX_ERR, op, "Must specify exactly one of output_size and scale_factors");
        return false;
    }
    if ((int64_t)scale_factors.len != spatial) {
        cfx_error_set(CFX_ERR, op, "Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions to be "
                      "true, but got false.  (Could this error message be improved?  If so, please report an "
                      "enhancement request to PyTorch.)");
        return false;
    }
    for (int64_t i = 0; i < spatial; i++) {
        double f = cfx_value_to_double(scale_factors.u.items[i]), size = (double)in->sizes[i + 2] * f;
        if (!cfx_scalar_converts(op, cfx_double(size), CFX_INT64)) /* a NaN or huge scale */
            return false;
        osize[i] = (int64_t)size;
        if (i < 2)
            scales[i] = cfx_double(f);
    }
    return true;
}

cfx_tensor *cfx_composite_upsample_nearest2d_vec(cfx_tensor *input, cfx_int_list output_size,
                                                 cfx_value scale_factors)
{
    int64_t osize[CFX_MAX_DIMS];
    cfx_value scales[2];
    if (!vec_sizes("aten::upsample_nearest2d.vec", input, output_size, scale_factors, osize, scales))
        return NULL;
    return cfx_op_upsample_nearest2d(NULL, input, (cfx_int_list){osize, input->ndim > 2 ? input->ndim - 2 : 0}, scales[0], scales[1]);
}

cfx_tensor *cfx_composite_upsample_bilinear2d_vec(cfx_tensor *input, cfx_int_list output_size, bool align_corners,
                                                  cfx_value scale_factors)
{
    int64_t osize[CFX_MAX_DIMS];
    cfx_value scales[2];
    if (!vec_sizes("aten::upsample_bilinear2d.vec", input, output_size, scale_factors, osize, scales))
        return NULL;
    return cfx_op_upsample_bilinear2d(NULL, input, (cfx_int_list){osize, input->ndim > 2 ? input->ndim - 2 : 0}, align_corners, scales[0],
                                      scales[1]);
}
