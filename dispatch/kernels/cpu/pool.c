/* pool.c - the CPU kernels of the pooling ops, 2-d and 3-d: max_pool2d/3d_with_indices,
 * avg_pool2d/3d and _adaptive_avg_pool2d/3d, as ATen's CPU loops compute them. One set of
 * window loops serves both ranks (a 2-d window is a 3-d one with T = 1, pool_window.h):
 *   max: the window starts at the lowest value with the index of its first in-bounds element
 *        and takes a value when it is greater or NaN; indices are flat (t * H + h) * W + w
 *        within the plane;
 *   avg: the window clipped to input + padding gives the count_include_pad divisor, clipped
 *        to the input the summed elements (divisor_override wins); integers divide truncating;
 *   adaptive: rows [floor(o * I / O), ceil((o + 1) * I / O)) per dim.
 * Floating values are computed in double, integers in int64. The 2-d outputs are in the
 * input's suggested memory format (cfx_pool2d_output), the 3-d ones contiguous except
 * max_pool3d's of a channels_last_3d input (cfx_pool3d_output). */
#include <math.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/pool_window.h"

cfx_pool_window cfx_pool_window_2d(const cfx_pool2d *p)
{
    return (cfx_pool_window){.nd = 2, .k = {1, p->kh, p->kw}, .s = {1, p->sh, p->sw}, .p = {0, p->ph, p->pw},
                             .d = {1, p->dh, p->dw}, .in = {1, p->ih, p->iw}, .out = {1, p->oh, p->ow},
                             .planes = p->planes};
}

/* Element (plane, t, h, w) of a [N,]C,[T,]H,W tensor with nd spatial dims: its offset. */
static int64_t offset_of(const cfx_tensor *t, int nd, int64_t plane, const int64_t *pos)
{
    int n = t->ndim;
    int64_t off = 0;
    for (int i = 0; i < nd; i++)
        off += pos[3 - nd + i] * t->strides[n - nd + i];
    if (n == nd + 2)
        off += (plane / t->sizes[1]) * t->strides[0] + (plane % t->sizes[1]) * t->strides[1];
    else
        off += plane * t->strides[0];
    return off;
}

static void set_int(cfx_tensor *t, int64_t off, int64_t v)
{
    void *d = cfx_tensor_data(t);
    switch ((cfx_dtype)t->dtype) {
    case CFX_UINT8: ((uint8_t *)d)[off] = (uint8_t)v; break;
    case CFX_INT8: ((int8_t *)d)[off] = (int8_t)v; break;
    case CFX_INT16: ((int16_t *)d)[off] = (int16_t)v; break;
    case CFX_INT32: ((int32_t *)d)[off] = (int32_t)v; break;
    case CFX_BOOL: ((uint8_t *)d)[off] = v != 0; break;
    default: ((int64_t *)d)[off] = v; break;
    }
}

/* Output position o (flat over w->out) as (t, h, w). */
static void position(const cfx_pool_window *w, int64_t o, int64_t *pos)
{
    pos[2] = o % w->out[2];
    pos[1] = (o / w->out[2]) % w->out[1];
    pos[0] = o / (w->out[2] * w->out[1]);
}

static void max_window(const cfx_tensor *self, const cfx_pool_window *w, cfx_tensor *out, cfx_tensor *idx)
{
    bool fl = cfx_dtype_is_floating((cfx_dtype)self->dtype);
    int64_t *pi = cfx_tensor_data(idx), nout = w->out[0] * w->out[1] * w->out[2];
    for (int64_t pl = 0; pl < w->planes; pl++)
        for (int64_t o = 0; o < nout; o++) {
            int64_t pos[3], lo[3], hi[3], at[3];
            position(w, o, pos);
            for (int i = 0; i < 3; i++) {
                lo[i] = pos[i] * w->s[i] - w->p[i];
                hi[i] = lo[i] + (w->k[i] - 1) * w->d[i] + 1 < w->in[i] ? lo[i] + (w->k[i] - 1) * w->d[i] + 1 : w->in[i];
                while (lo[i] < 0)
                    lo[i] += w->d[i];
            }
            int64_t best = (lo[0] * w->in[1] + lo[1]) * w->in[2] + lo[2];
            double m = -INFINITY;
            int64_t mi = INT64_MIN;
            for (at[0] = lo[0]; at[0] < hi[0]; at[0] += w->d[0])
                for (at[1] = lo[1]; at[1] < hi[1]; at[1] += w->d[1])
                    for (at[2] = lo[2]; at[2] < hi[2]; at[2] += w->d[2]) {
                        int64_t off = offset_of(self, w->nd, pl, at);
                        bool take;
                        if (fl) {
                            double v = cfx_nn_get(self, off);
                            take = v > m || isnan(v);
                            m = take ? v : m;
                        } else {
                            int64_t v = cfx_load_int(cfx_tensor_data(self), off, (cfx_dtype)self->dtype);
                            take = v > mi;
                            mi = take ? v : mi;
                        }
                        if (take)
                            best = (at[0] * w->in[1] + at[1]) * w->in[2] + at[2];
                    }
            int64_t ooff = offset_of(out, w->nd, pl, pos);
            if (fl)
                cfx_nn_set(out, ooff, m);
            else
                set_int(out, ooff, mi);
            pi[offset_of(idx, w->nd, pl, pos)] = best;
        }
}

void cfx_pool_avg_extent(const cfx_pool_window *w, const int64_t pos[3], int64_t lo[3], int64_t hi[3], int64_t *pool,
                         int64_t *count)
{
    *pool = *count = 1;
    for (int i = 0; i < 3; i++) {
        lo[i] = pos[i] * w->s[i] - w->p[i];
        hi[i] = lo[i] + w->k[i] < w->in[i] + w->p[i] ? lo[i] + w->k[i] : w->in[i] + w->p[i];
        *pool *= hi[i] - lo[i];
        lo[i] = lo[i] < 0 ? 0 : lo[i];
        hi[i] = hi[i] > w->in[i] ? w->in[i] : hi[i];
        *count *= hi[i] > lo[i] ? hi[i] - lo[i] : 0;
    }
}

/* divisor: divisor_override's value, or 0 for none. */
static void avg_window(const cfx_tensor *self, const cfx_pool_window *w, bool count_include_pad, int64_t divisor,
                       cfx_tensor *out)
{
    bool fl = cfx_dtype_is_floating((cfx_dtype)self->dtype);
    int64_t nout = w->out[0] * w->out[1] * w->out[2];
    for (int64_t pl = 0; pl < w->planes; pl++)
        for (int64_t o = 0; o < nout; o++) {
            int64_t pos[3], lo[3], hi[3], at[3], pool, count;
            position(w, o, pos);
            cfx_pool_avg_extent(w, pos, lo, hi, &pool, &count);
            double sum = 0;
            int64_t isum = 0;
            for (at[0] = lo[0]; at[0] < hi[0]; at[0]++)
                for (at[1] = lo[1]; at[1] < hi[1]; at[1]++)
                    for (at[2] = lo[2]; at[2] < hi[2]; at[2]++) {
                        int64_t off = offset_of(self, w->nd, pl, at);
                        if (fl)
                            sum += cfx_nn_get(self, off);
                        else
                            isum += cfx_load_int(cfx_tensor_data(self), off, (cfx_dtype)self->dtype);
                    }
            int64_t div = divisor ? divisor : count_include_pad ? pool : count;
            int64_t ooff = offset_of(out, w->nd, pl, pos);
            if (fl)
                cfx_nn_set(out, ooff, count == 0 ? 0.0 : sum / (double)div);
            else
                set_int(out, ooff, count == 0 ? 0 : isum / div);
        }
}

/* Output sizes in w->out, input sizes in w->in; floating dtypes only. */
static void adaptive_avg_window(const cfx_tensor *self, const cfx_pool_window *w, cfx_tensor *out)
{
    int64_t nout = w->out[0] * w->out[1] * w->out[2];
    for (int64_t pl = 0; pl < w->planes; pl++)
        for (int64_t o = 0; o < nout; o++) {
            int64_t pos[3], lo[3], hi[3], at[3], count = 1;
            position(w, o, pos);
            for (int i = 0; i < 3; i++) {
                lo[i] = pos[i] * w->in[i] / w->out[i];
                hi[i] = ((pos[i] + 1) * w->in[i] + w->out[i] - 1) / w->out[i];
                count *= hi[i] - lo[i];
            }
            double sum = 0;
            for (at[0] = lo[0]; at[0] < hi[0]; at[0]++)
                for (at[1] = lo[1]; at[1] < hi[1]; at[1]++)
                    for (at[2] = lo[2]; at[2] < hi[2]; at[2]++)
                        sum += cfx_nn_get(self, offset_of(self, w->nd, pl, at));
            cfx_nn_set(out, offset_of(out, w->nd, pl, pos), sum / (double)count);
        }
}

static bool floating_only(const char *op, const char *kernel, const cfx_tensor *self)
{
    if (cfx_dtype_is_floating((cfx_dtype)self->dtype))
        return true;
    cfx_kernel_not_implemented(op, kernel, (cfx_dtype)self->dtype);
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
    cfx_pool_window w = cfx_pool_window_2d(&p);
    max_window(self, &w, out, idx);
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
    cfx_pool_window w = cfx_pool_window_2d(&p);
    avg_window(self, &w, count_include_pad, has_divisor ? divisor : 0, out);
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
        cfx_geom_error_dims(op, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", self->sizes, n, "");
        return NULL;
    }
    if (!floating_only(op, "adaptive_avg_pool2d_cpu", self))
        return NULL;
    int64_t oh = output_size.data[0], ow = output_size.data[1];
    cfx_tensor *out = cfx_pool2d_output(self, oh, ow, (cfx_dtype)self->dtype);
    if (!out)
        return NULL;
    cfx_pool_window w = {.nd = 2, .in = {1, self->sizes[n - 2], self->sizes[n - 1]}, .out = {1, oh, ow},
                         .planes = cfx_geom_numel(self->sizes, n - 2)};
    adaptive_avg_window(self, &w, out);
    return out;
}

cfx_max_pool3d_with_indices_result cfx_cpu_max_pool3d_with_indices(cfx_tensor *self, cfx_int_list kernel_size,
                                                                   cfx_int_list stride, cfx_int_list padding,
                                                                   cfx_int_list dilation, bool ceil_mode)
{
    const char *op = "aten::max_pool3d_with_indices";
    cfx_max_pool3d_with_indices_result none = {{NULL, NULL}};
    cfx_pool_window w;
    if (!cfx_pool3d_params(op, self, kernel_size, stride, padding, &dilation, ceil_mode, cfx_none(), false, &w))
        return none;
    if (self->dtype == CFX_BOOL) { /* every other dtype cfx has is pooled */
        cfx_kernel_not_implemented(op, "max_pool3d", CFX_BOOL);
        return none;
    }
    cfx_tensor *out, *idx;
    if (!cfx_pool3d_outputs(self, &w, &out, &idx))
        return none;
    max_window(self, &w, out, idx);
    return (cfx_max_pool3d_with_indices_result){{out, idx}};
}

cfx_tensor *cfx_cpu_avg_pool3d(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                               cfx_int_list padding, bool ceil_mode, bool count_include_pad,
                               cfx_value divisor_override)
{
    const char *op = "aten::avg_pool3d";
    cfx_pool_window w;
    int64_t divisor = 0;
    if (!cfx_pool3d_params(op, self, kernel_size, stride, padding, NULL, ceil_mode, divisor_override, false, &w))
        return NULL;
    if (self->dtype != CFX_INT64 && !floating_only(op, "avg_pool3d_out_frame", self))
        return NULL;
    cfx_geom_opt_int(divisor_override, &divisor);
    cfx_tensor *out = cfx_pool3d_output(self, &w, (cfx_dtype)self->dtype, false);
    if (out)
        avg_window(self, &w, count_include_pad, divisor, out);
    return out;
}

cfx_tensor *cfx_cpu__adaptive_avg_pool3d(cfx_tensor *self, cfx_int_list output_size)
{
    const char *op = "aten::_adaptive_avg_pool3d";
    if (output_size.len != 3) {
        cfx_error_set(CFX_ERR, op, "adaptive_avg_pool3d: output_size must be 3");
        return NULL;
    }
    int n = self->ndim;
    if (n != 4 && n != 5) {
        cfx_geom_error_dims(op, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got ", self->sizes, n, "");
        return NULL;
    }
    for (int i = 1; i < n; i++)
        if (self->sizes[i] == 0) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, "
                             "but input has sizes ");
            cfx_geom_put_dims(&b, self->sizes, n);
            cfx_buf_printf(&b, " with dimension %d being empty", i);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "adaptive_avg_pool3d: empty input");
            cfx_free(msg);
            return NULL;
        }
    if (!floating_only(op, "adaptive_avg_pool3d_cpu", self))
        return NULL;
    cfx_pool_window w = {.nd = 3, .planes = cfx_geom_numel(self->sizes, n - 3)};
    for (int i = 0; i < 3; i++) {
        w.in[i] = self->sizes[n - 3 + i];
        w.out[i] = output_size.data[i];
    }
    cfx_tensor *out = cfx_pool3d_output(self, &w, (cfx_dtype)self->dtype, false);
    if (out)
        adaptive_avg_window(self, &w, out);
    return out;
}
