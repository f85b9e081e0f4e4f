/* scatter_views.c - select_scatter and slice_scatter (Meta and
 * CompositeExplicitAutogradNonFunctional), the functional forms of writing into a view:
 * the result is clone_preserve_strides(self) (a copy of self's storage viewed with self's
 * sizes, strides and offset, so the result has self's exact layout; a self whose elements
 * overlap is cloned instead) with src copied into its select / slice. The CPU side is
 * TensorShape.cpp's (the slice's sizes must equal src's); Meta is 2.13's Python
 * _scatter_meta_output, which checks nothing. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"

static cfx_tensor *clone_preserve_strides(cfx_tensor *self)
{
    int n = self->ndim;
    if (cfx_iter_internal_overlap(self)) { /* self.clone() */
        int64_t strides[CFX_MAX_DIMS];
        cfx_geom_preserve_strides(self->sizes, self->strides, n, strides);
        cfx_tensor *out = cfx_tensor_new_strided(self->sizes, strides, n, (cfx_dtype)self->dtype, self->device);
        if (out && out->device.type == CFX_DEVICE_CPU)
            cfx_cpu_copy(out, self);
        return out;
    }
    /* the span self reaches: its storage offset plus its extent */
    int64_t span = self->storage_offset + 1;
    for (int d = 0; d < n; d++) {
        if (self->sizes[d] == 0) {
            span = self->storage_offset;
            break;
        }
        span += (self->sizes[d] - 1) * self->strides[d];
    }
    size_t es = cfx_dtype_size((cfx_dtype)self->dtype);
    if (self->storage && self->storage->data && (int64_t)(self->storage->nbytes / es) > span)
        span = (int64_t)(self->storage->nbytes / es);
    cfx_tensor *base = cfx_tensor_new(&span, 1, (cfx_dtype)self->dtype, self->device);
    if (!base)
        return NULL;
    if (base->device.type == CFX_DEVICE_CPU && span > 0)
        memcpy(cfx_tensor_data(base), self->storage->data, (size_t)span * es);
    cfx_tensor *out = cfx_tensor_new_view(base, self->sizes, self->strides, n, self->storage_offset);
    cfx_kernel_discard(base);
    return out;
}

static bool sizes_match(const char *op, const cfx_tensor *src, const cfx_tensor *view)
{
    bool same = src->ndim == view->ndim;
    for (int d = 0; same && d < src->ndim; d++)
        same = src->sizes[d] == view->sizes[d];
    if (same)
        return true;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "expected src to have a size equal to the slice of self. src size = ");
    cfx_geom_put_dims(&b, src->sizes, src->ndim);
    cfx_buf_puts(&b, ", slice size = ");
    cfx_geom_put_dims(&b, view->sizes, view->ndim);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "scatter: size mismatch");
    cfx_free(msg);
    return false;
}

/* out = clone_preserve_strides(self); view (made by the caller from out); view.copy_(src) */
static cfx_tensor *finish(const char *op, cfx_tensor *out, cfx_tensor *view, cfx_tensor *src)
{
    bool ok = view && sizes_match(op, src, view) && cfx_kernel_copy_(view, src, false);
    cfx_kernel_discard(view);
    if (!ok) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_kernel_select_scatter(cfx_tensor *self, cfx_tensor *src, int64_t dim, int64_t index)
{
    cfx_tensor *out = clone_preserve_strides(self);
    return out ? finish("aten::select_scatter", out, cfx_kernel_select_int(out, dim, index), src) : NULL;
}

cfx_tensor *cfx_kernel_slice_scatter(cfx_tensor *self, cfx_tensor *src, int64_t dim, cfx_value start, cfx_value end,
                                     int64_t step)
{
    cfx_tensor *out = clone_preserve_strides(self);
    return out ? finish("aten::slice_scatter", out, cfx_kernel_slice_Tensor(out, dim, start, end, step), src) : NULL;
}

cfx_tensor *cfx_meta_select_scatter(cfx_tensor *self, cfx_tensor *src, int64_t dim, int64_t index)
{
    (void)src, (void)dim, (void)index;
    return clone_preserve_strides(self);
}

cfx_tensor *cfx_meta_slice_scatter(cfx_tensor *self, cfx_tensor *src, int64_t dim, cfx_value start, cfx_value end,
                                   int64_t step)
{
    (void)src, (void)dim, (void)start, (void)end, (void)step;
    return clone_preserve_strides(self);
}
