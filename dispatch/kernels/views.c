/* views.c - view and t: new tensor headers over the input's storage.
 *
 * A view shares its base's storage (and so its version counter) and storage offset; only sizes
 * and strides change, so the same C function serves every device. PyTorch registers view on
 * CPU and Meta and t as CompositeExplicitAutograd; we do the same. view follows
 * at::native::view: infer the -1 size, then computeStride, failing with PyTorch's "view size
 * is not compatible ..." text when the new shape would straddle non-contiguous chunks. */
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"

cfx_tensor *cfx_kernel_view(cfx_tensor *self, cfx_int_list size)
{
    const char *op = "aten::view";
    if (size.len < 0 || size.len > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, op, "view: expected a size list of at most %d dimensions", CFX_MAX_DIMS);
        return NULL;
    }
    int n = (int)size.len;
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    if (!cfx_geom_infer_view_size(size.data, n, cfx_tensor_numel(self), sizes, op))
        return NULL;
    if (!cfx_geom_view_strides(self->sizes, self->strides, self->ndim, sizes, n, strides)) {
        cfx_error_set(CFX_ERR, op,
                      "view size is not compatible with input tensor's size and stride (at least one dimension "
                      "spans across two contiguous subspaces). Use .reshape(...) instead.");
        return NULL;
    }
    return cfx_tensor_new_view(self, sizes, strides, n, self->storage_offset);
}

cfx_tensor *cfx_kernel_t(cfx_tensor *self)
{
    int n = self->ndim;
    if (n > 2) {
        cfx_error_set(CFX_ERR, "aten::t", "t() expects a tensor with <= 2 dimensions, but self is %dD", n);
        return NULL;
    }
    int64_t sizes[2], strides[2];
    for (int i = 0; i < n; i++) {
        sizes[i] = self->sizes[n - 1 - i];
        strides[i] = self->strides[n - 1 - i];
    }
    return cfx_tensor_new_view(self, sizes, strides, n, self->storage_offset);
}
