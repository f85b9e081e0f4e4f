/* backward_pool.c - the backward ops of 2-d pooling, CPU and Meta kernels:
 * max_pool2d_with_indices_backward, avg_pool2d_backward, _adaptive_avg_pool2d_backward.
 *
 * Each gradient has self's shape in self's suggested memory format (contiguous or channels
 * last), on both keys, as 2.13's CPU kernels and meta functions make it. The pooling arguments
 * are read and checked as the forward op reads them (nn_shapes.c), then grad_output must have
 * the forward output's plane count and spatial sizes (check_dim_size, whose text differs a
 * little between the C++ kernel and the Python meta function). The CPU kernels zero the
 * gradient and scatter each grad_output element back: to its argmax (max), or spread over its
 * window divided as the forward divided (avg: the divisor override, else the window with or
 * without padding; adaptive: the window's area). Elements are addressed through strides, so
 * every layout of grad_output, self and indices is read in place. */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/pool_window.h"

/* check_dim_size(grad, ndim, dim, size) for the three trailing dims */
static bool check_grad(const char *op, const cfx_tensor *grad, const cfx_tensor *self, int64_t oh, int64_t ow,
                       bool meta)
{
    int n = self->ndim;
    int64_t want[3] = {self->sizes[n - 3], oh, ow};
    for (int k = 0; k < 3; k++) {
        int d = n - 3 + k;
        if (grad->ndim == n && grad->sizes[d] == want[k])
            continue;
        int64_t got = d < grad->ndim ? grad->sizes[d] : -1;
        cfx_error_set(CFX_ERR, op, "Expected a tensor of dimension %d and tensor.size[%d] == %lld%s dimension %d and "
                      "tensor.size[%d] = %lld", n, d, (long long)want[k], meta ? ", but got :" : " but got:",
                      grad->ndim, d, (long long)got);
        return false;
    }
    if (n == 4 && grad->sizes[0] != self->sizes[0]) { /* the kernels walk self's batch */
        cfx_error_set(CFX_ERR, op, "Expected a tensor of dimension 4 and tensor.size[0] == %lld%s dimension 4 and "
                      "tensor.size[0] = %lld", (long long)self->sizes[0], meta ? ", but got :" : " but got:",
                      (long long)grad->sizes[0]);
        return false;
    }
    return true;
}

/* strides of the batch, plane and spatial dims (batch 0 for a 3-d tensor) */
typedef struct dims4 {
    int64_t nb, c, h, w;     /* sizes */
    int64_t sn, sc, sh, sw;  /* strides */
} dims4;

static dims4 dims_of(const cfx_tensor *t)
{
    int n = t->ndim;
    dims4 d = {n == 4 ? t->sizes[0] : 1, t->sizes[n - 3], t->sizes[n - 2], t->sizes[n - 1],
               n == 4 ? t->strides[0] : 0, t->strides[n - 3], t->strides[n - 2], t->strides[n - 1]};
    return d;
}

/* adds g to every element of the window [h0, h1) x [w0, w1) of the plane at offset plane */
static void spread(cfx_tensor *gi, const dims4 *gd, int64_t plane, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                   double g)
{
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) {
            int64_t off = plane + h * gd->sh + w * gd->sw;
            cfx_nn_set(gi, off, cfx_nn_get(gi, off) + g);
        }
}

static cfx_tensor *zeroed_like(const cfx_tensor *self)
{
    cfx_tensor *gi = cfx_pool2d_output(self, self->sizes[self->ndim - 2], self->sizes[self->ndim - 1],
                                       (cfx_dtype)self->dtype);
    if (gi && cfx_tensor_numel(gi))
        memset(cfx_tensor_data(gi), 0, (size_t)cfx_tensor_numel(gi) * cfx_dtype_size((cfx_dtype)gi->dtype));
    return gi;
}

static bool floating(const char *op, const char *kernel, const cfx_tensor *t)
{
    if (t->dtype == CFX_FLOAT32 || t->dtype == CFX_FLOAT64)
        return true;
    cfx_kernel_not_implemented(op, kernel, (cfx_dtype)t->dtype);
    return false;
}

/* ---- max_pool2d_with_indices_backward ------------------------------------------------------- */

static const char MAX_OP[] = "aten::max_pool2d_with_indices_backward";

static bool max_bw_check(cfx_tensor *grad, cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                         cfx_int_list padding, cfx_int_list dilation, bool ceil_mode, bool meta)
{
    cfx_pool2d p;
    return cfx_pool2d_params(MAX_OP, self, kernel_size, stride, padding, &dilation, ceil_mode, &p) &&
           check_grad(MAX_OP, grad, self, p.oh, p.ow, meta);
}

cfx_tensor *cfx_meta_max_pool2d_with_indices_backward(cfx_tensor *grad_output, cfx_tensor *self,
                                                      cfx_int_list kernel_size, cfx_int_list stride,
                                                      cfx_int_list padding, cfx_int_list dilation, bool ceil_mode,
                                                      cfx_tensor *indices)
{
    (void)indices;
    if (!max_bw_check(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, true))
        return NULL;
    return cfx_pool2d_output(self, self->sizes[self->ndim - 2], self->sizes[self->ndim - 1], (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_cpu_max_pool2d_with_indices_backward(cfx_tensor *grad_output, cfx_tensor *self,
                                                     cfx_int_list kernel_size, cfx_int_list stride,
                                                     cfx_int_list padding, cfx_int_list dilation, bool ceil_mode,
                                                     cfx_tensor *indices)
{
    if (!max_bw_check(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, false) ||
        !floating(MAX_OP, "max_pool2d_backward_out_frame", self))
        return NULL;
    if (indices->dtype != CFX_INT64 || indices->ndim != grad_output->ndim ||
        memcmp(indices->sizes, grad_output->sizes, sizeof(int64_t) * (size_t)grad_output->ndim)) {
        cfx_error_set(CFX_ERR, MAX_OP, "max_pool2d_with_indices_backward: indices must be int64 and of grad_output's "
                      "shape");
        return NULL;
    }
    if (grad_output->dtype != self->dtype) {
        cfx_error_set(CFX_ERR, MAX_OP, "expected scalar type %s but found %s",
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype), cfx_dtype_scalar_name((cfx_dtype)grad_output->dtype));
        return NULL;
    }
    cfx_tensor *gi = zeroed_like(self);
    if (!gi)
        return NULL;
    dims4 gd = dims_of(gi), od = dims_of(grad_output), id = dims_of(indices);
    const int64_t *ix = cfx_tensor_data(indices);
    for (int64_t n = 0; n < gd.nb; n++)
        for (int64_t c = 0; c < gd.c; c++)
            for (int64_t h = 0; h < od.h; h++)
                for (int64_t w = 0; w < od.w; w++) {
                    int64_t k = ix[n * id.sn + c * id.sc + h * id.sh + w * id.sw];
                    if (k < 0 || k >= gd.h * gd.w) {
                        cfx_kernel_discard(gi);
                        cfx_error_set(CFX_ERR, MAX_OP, "index %lld is out of bounds for the %lldx%lld input plane",
                                      (long long)k, (long long)gd.h, (long long)gd.w);
                        return NULL;
                    }
                    int64_t off = n * gd.sn + c * gd.sc + (k / gd.w) * gd.sh + (k % gd.w) * gd.sw;
                    cfx_nn_set(gi, off, cfx_nn_get(gi, off) +
                                            cfx_nn_get(grad_output, n * od.sn + c * od.sc + h * od.sh + w * od.sw));
                }
    return gi;
}

/* ---- avg_pool2d_backward ---------------------------------------------------------------------- */

static const char AVG_OP[] = "aten::avg_pool2d_backward";

static bool avg_bw_check(cfx_tensor *grad, cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                         cfx_int_list padding, bool ceil_mode, cfx_value divisor_override, bool meta, cfx_pool2d *p)
{
    if (!cfx_pool2d_params(AVG_OP, self, kernel_size, stride, padding, NULL, ceil_mode, p))
        return false;
    if (divisor_override.kind == CFX_V_INT && divisor_override.u.i == 0) {
        cfx_error_set(CFX_ERR, AVG_OP, "divisor must be not zero");
        return false;
    }
    return check_grad(AVG_OP, grad, self, p->oh, p->ow, meta);
}

cfx_tensor *cfx_meta_avg_pool2d_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_int_list kernel_size,
                                         cfx_int_list stride, cfx_int_list padding, bool ceil_mode,
                                         bool count_include_pad, cfx_value divisor_override)
{
    (void)count_include_pad;
    cfx_pool2d p;
    if (!avg_bw_check(grad_output, self, kernel_size, stride, padding, ceil_mode, divisor_override, true, &p))
        return NULL;
    return cfx_pool2d_output(self, p.ih, p.iw, (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_cpu_avg_pool2d_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_int_list kernel_size,
                                        cfx_int_list stride, cfx_int_list padding, bool ceil_mode,
                                        bool count_include_pad, cfx_value divisor_override)
{
    cfx_pool2d p;
    if (!avg_bw_check(grad_output, self, kernel_size, stride, padding, ceil_mode, divisor_override, false, &p) ||
        !floating(AVG_OP, "avg_pool2d_backward_out_frame", self))
        return NULL;
    cfx_tensor *gi = zeroed_like(self);
    if (!gi)
        return NULL;
    dims4 gd = dims_of(gi), od = dims_of(grad_output);
    cfx_pool_window w = cfx_pool_window_2d(&p);
    for (int64_t n = 0; n < gd.nb; n++)
        for (int64_t c = 0; c < gd.c; c++)
            for (int64_t oh = 0; oh < p.oh; oh++)
                for (int64_t ow = 0; ow < p.ow; ow++) {
                    int64_t pos[3] = {0, oh, ow}, lo[3], hi[3], pool, count;
                    cfx_pool_avg_extent(&w, pos, lo, hi, &pool, &count);
                    if (!count)
                        continue; /* a window wholly in the padding reads and spreads nothing */
                    int64_t div = divisor_override.kind == CFX_V_INT ? divisor_override.u.i
                                  : count_include_pad               ? pool
                                                                    : count;
                    double g = cfx_nn_get(grad_output, n * od.sn + c * od.sc + oh * od.sh + ow * od.sw) / (double)div;
                    spread(gi, &gd, n * gd.sn + c * gd.sc, lo[1], hi[1], lo[2], hi[2], g);
                }
    return gi;
}

/* ---- _adaptive_avg_pool2d_backward ------------------------------------------------------------ */

static const char ADAPT_OP[] = "aten::_adaptive_avg_pool2d_backward";

static bool adaptive_bw_check(const cfx_tensor *grad, const cfx_tensor *self)
{
    if (self->ndim != 3 && self->ndim != 4) {
        cfx_error_set(CFX_ERR, ADAPT_OP, "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got %d",
                      self->ndim);
        return false;
    }
    if (grad->ndim != self->ndim) {
        cfx_error_set(CFX_ERR, ADAPT_OP, "adaptive_avg_pool2d_backward(): Expected dimensions %d for `grad_output` "
                      "but got dimensions %d", self->ndim, grad->ndim);
        return false;
    }
    if (grad->dtype != self->dtype) {
        cfx_error_set(CFX_ERR, ADAPT_OP, "expected dtype %s for `grad_output` but got dtype %s",
                      cfx_dtype_torch_name((cfx_dtype)self->dtype), cfx_dtype_torch_name((cfx_dtype)grad->dtype));
        return false;
    }
    for (int d = 0; d < self->ndim - 2; d++)
        if (grad->sizes[d] != self->sizes[d]) { /* the kernel walks self's planes */
            cfx_error_set(CFX_ERR, ADAPT_OP, "adaptive_avg_pool2d_backward(): grad_output's size %lld at dimension %d "
                          "is not the input's %lld", (long long)grad->sizes[d], d, (long long)self->sizes[d]);
            return false;
        }
    return true;
}

cfx_tensor *cfx_meta__adaptive_avg_pool2d_backward(cfx_tensor *grad_output, cfx_tensor *self)
{
    if (!adaptive_bw_check(grad_output, self))
        return NULL;
    return cfx_pool2d_output(self, self->sizes[self->ndim - 2], self->sizes[self->ndim - 1], (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_cpu__adaptive_avg_pool2d_backward(cfx_tensor *grad_output, cfx_tensor *self)
{
    if (!adaptive_bw_check(grad_output, self) || !floating(ADAPT_OP, "adaptive_avg_pool2d_backward_cpu", self))
        return NULL;
    cfx_tensor *gi = zeroed_like(self);
    if (!gi)
        return NULL;
    dims4 gd = dims_of(gi), od = dims_of(grad_output);
    for (int64_t n = 0; n < gd.nb; n++)
        for (int64_t c = 0; c < gd.c; c++)
            for (int64_t oh = 0; oh < od.h; oh++)
                for (int64_t ow = 0; ow < od.w; ow++) {
                    /* start_index / end_index: floor(o * I / O), ceil((o + 1) * I / O) */
                    int64_t h0 = oh * gd.h / od.h, h1 = ((oh + 1) * gd.h + od.h - 1) / od.h;
                    int64_t w0 = ow * gd.w / od.w, w1 = ((ow + 1) * gd.w + od.w - 1) / od.w;
                    double g = cfx_nn_get(grad_output, n * od.sn + c * od.sc + oh * od.sh + ow * od.sw) /
                               (double)(h1 - h0) / (double)(w1 - w0);
                    spread(gi, &gd, n * gd.sn + c * gd.sc, h0, h1, w0, w1, g);
                }
    return gi;
}
