/* pool3d_shapes.c - max_pool3d_with_indices' and avg_pool3d's argument checks and output
 * sizes, shared by their CPU and Meta kernels. The order is the C++ kernels' (argument
 * lengths, rank, divisor, pooling_output_shape per dim, then pool3d_shape_check), which 2.13's
 * Python meta functions repeat; where the texts differ (comma-separated values, torch.Size,
 * the function name in the message) `meta` selects the Python one. */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pool_window.h"
#include "dispatch/kernels/prims.h"

/* An int[3] argument: one value means all three dims; an empty stride means the kernel. */
static bool triple(const char *op, const char *msg, cfx_int_list l, const int64_t *dflt, int64_t *out)
{
    if (l.len == 0 && dflt) {
        for (int i = 0; i < 3; i++)
            out[i] = dflt[i];
        return true;
    }
    if (l.len != 1 && l.len != 3) {
        cfx_error_set_text(CFX_ERR, op, msg);
        return false;
    }
    for (int i = 0; i < 3; i++)
        out[i] = l.data[l.len == 1 ? 0 : i];
    return true;
}

/* pooling_output_shape's checks and div_rtn formula (the ceil-mode rule keeps the last window
 * starting inside the input or its left padding). */
static bool output_size(const char *op, int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                        bool ceil_mode, int64_t *out)
{
    if (stride == 0) {
        cfx_error_set(CFX_ERR, op, "stride should not be zero");
        return false;
    }
    if (pad < 0) {
        cfx_error_set(CFX_ERR, op, "pad must be non-negative, but got pad: %lld", (long long)pad);
        return false;
    }
    if (pad > ((k - 1) * dil + 1) / 2) {
        cfx_error_set(CFX_ERR, op, "pad should be at most half of effective kernel size, but got pad=%lld, "
                      "kernel_size=%lld and dilation=%lld", (long long)pad, (long long)k, (long long)dil);
        return false;
    }
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t q = num / stride, r = num % stride;
    if (r != 0 && ((r < 0) != (stride < 0)))
        q--;
    *out = q + 1;
    if (ceil_mode && (*out - 1) * stride >= in + pad)
        (*out)--;
    return true;
}

/* "T: 0 H: 1 W: 1" (C++) or "T: 0, H: 1, W: 1" (Python) with the given letter prefix. */
static void put_thw(cfx_buf *b, const char *pre, const int64_t *v, bool meta)
{
    const char *sep = meta ? ", " : " ";
    cfx_buf_printf(b, "%sT: %lld%s%sH: %lld%s%sW: %lld", pre, (long long)v[0], sep, pre, (long long)v[1], sep, pre,
                   (long long)v[2]);
}

static bool fail(const char *op, cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "pool3d: bad arguments");
    cfx_free(msg);
    return false;
}

/* pool3d_shape_check, in its order. */
static bool shape_check(const char *op, const cfx_tensor *self, const cfx_pool_window *w, bool avg, bool meta)
{
    cfx_buf b;
    cfx_buf_init(&b);
    const int64_t *lists[3] = {w->k, w->s, w->d};
    const char *what[3] = {"kernel size", "stride", "dilation"}, *pre[3] = {"k", "d", "dilation"};
    for (int i = 0; i < 3; i++)
        if (lists[i][0] <= 0 || lists[i][1] <= 0 || lists[i][2] <= 0) {
            cfx_buf_printf(&b, "%s should be greater than zero, but got ", what[i]);
            put_thw(&b, pre[i], lists[i], meta);
            return fail(op, &b);
        }
    const char *fn = avg ? "avg_pool3d()" : meta ? "max_pool3d_with_indices()"
                                                 : "max_pool3d_with_indices_out_cpu_template()";
    int n = self->ndim;
    for (int i = n == 5 ? 1 : 0; i < n; i++)
        if (self->sizes[i] <= 0) {
            cfx_buf_printf(&b, "%s: Expected input's non-batch dimensions to have positive length, but input has a "
                           "shape of ", fn);
            if (meta)
                cfx_prims_put_size(&b, self->sizes, n);
            else
                cfx_geom_put_dims(&b, self->sizes, n);
            cfx_buf_printf(&b, " and non-batch dimension %lld has length zero!", (long long)self->sizes[i]);
            return fail(op, &b);
        }
    if (avg && (w->in[0] < w->k[0] || w->in[1] < w->k[1] || w->in[2] < w->k[2])) {
        cfx_buf_printf(&b, "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld kH: %lld kW: "
                       "%lld)", (long long)w->in[0], (long long)w->in[1], (long long)w->in[2], (long long)w->k[0],
                       (long long)w->k[1], (long long)w->k[2]);
        return fail(op, &b);
    }
    if (w->k[0] / 2 < w->p[0] || w->k[2] / 2 < w->p[2] || w->k[1] / 2 < w->p[1]) {
        cfx_buf_printf(&b, "pad should be smaller than or equal to half of kernel size, but got kT: %lld kW: %lld "
                       "kH: %lld padT: %lld padW: %lld padH: %lld", (long long)w->k[0], (long long)w->k[2],
                       (long long)w->k[1], (long long)w->p[0], (long long)w->p[2], (long long)w->p[1]);
        return fail(op, &b);
    }
    if (w->out[0] < 1 || w->out[1] < 1 || w->out[2] < 1) {
        int64_t c = self->sizes[n - 4];
        cfx_buf_printf(&b, "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lldx%lld). "
                       "Output size is too small", (long long)c, (long long)w->in[0], (long long)w->in[1],
                       (long long)w->in[2], (long long)c, (long long)w->out[0], (long long)w->out[1],
                       (long long)w->out[2]);
        return fail(op, &b);
    }
    cfx_buf_free(&b);
    return true;
}

bool cfx_pool3d_params(const char *op, const cfx_tensor *self, cfx_int_list kernel, cfx_int_list stride,
                       cfx_int_list padding, const cfx_int_list *dilation, bool ceil_mode, cfx_value divisor_override,
                       bool meta, cfx_pool_window *w)
{
    bool avg = dilation == NULL;
    static const int64_t one[3] = {1, 1, 1};
    w->nd = 3;
    if (!triple(op, avg ? "avg_pool3d: kernel_size must be a single int, or a tuple of three ints"
                        : "max_pool3d: kernel_size must either be a single int, or a tuple of three ints",
                kernel, NULL, w->k) ||
        !triple(op, avg ? "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints"
                        : "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints",
                stride, w->k, w->s))
        return false;
    if (avg && meta && self->dtype == CFX_UINT8) {
        cfx_error_set(CFX_ERR, op, "\"avg_pool3d\" not implemented for 'torch.uint8'");
        return false;
    }
    if (!triple(op, avg ? "avg_pool3d: padding must be a single int, or a tuple of three ints"
                        : "max_pool3d: padding must either be a single int, or a tuple of three ints",
                padding, NULL, w->p) ||
        !triple(op, "max_pool3d: dilation must be either a single int, or a tuple of three ints",
                avg ? (cfx_int_list){one, 1} : *dilation, NULL, w->d))
        return false;
    int n = self->ndim;
    if (n != 4 && n != 5) {
        cfx_error_set(CFX_ERR, op, "non-empty 4D or 5D (batch mode) tensor expected for input");
        return false;
    }
    /* the C++ max kernel takes contiguous and channels_last_3d inputs only */
    if (!avg && !meta && cfx_geom_suggest_memory_format(self->sizes, self->strides, n) == CFX_CHANNELS_LAST) {
        cfx_error_set(CFX_ERR, op, "Unsupported memory format. Supports only ChannelsLast3d, Contiguous");
        return false;
    }
    int64_t divisor;
    if (avg && cfx_geom_opt_int(divisor_override, &divisor) && divisor == 0) {
        cfx_error_set(CFX_ERR, op, "divisor must be not zero");
        return false;
    }
    for (int i = 0; i < 3; i++) {
        w->in[i] = self->sizes[n - 3 + i];
        if (!output_size(op, w->in[i], w->k[i], w->p[i], w->s[i], w->d[i], ceil_mode, &w->out[i]))
            return false;
    }
    w->planes = cfx_geom_numel(self->sizes, n - 3);
    return shape_check(op, self, w, avg, meta);
}

cfx_tensor *cfx_pool3d_output(const cfx_tensor *self, const cfx_pool_window *w, cfx_dtype dt, bool keep_format)
{
    int n = self->ndim;
    int64_t sizes[5], strides[5];
    for (int i = 0; i < n - 3; i++)
        sizes[i] = self->sizes[i];
    for (int i = 0; i < 3; i++)
        sizes[n - 3 + i] = w->out[i];
    if (keep_format && n == 5 &&
        cfx_geom_suggest_memory_format(self->sizes, self->strides, n) == CFX_CHANNELS_LAST_3D)
        cfx_geom_memory_format_strides(sizes, n, CFX_CHANNELS_LAST_3D, strides, NULL); /* 5 dims: cannot fail */
    else
        cfx_geom_contiguous_strides(sizes, n, strides);
    return cfx_tensor_new_strided(sizes, strides, n, dt, self->device);
}

bool cfx_pool3d_outputs(const cfx_tensor *self, const cfx_pool_window *w, cfx_tensor **values, cfx_tensor **indices)
{
    *values = cfx_pool3d_output(self, w, (cfx_dtype)self->dtype, true);
    *indices = *values ? cfx_pool3d_output(self, w, CFX_INT64, true) : NULL;
    if (*indices)
        return true;
    cfx_kernel_discard(*values);
    return false;
}
