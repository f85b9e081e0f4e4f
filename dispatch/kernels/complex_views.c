/* complex_views.c - aten::view_as_real, view_as_complex (CPU and Meta: one C++ function in
 * PyTorch) and the CompositeImplicitAutograd real and imag built on them.
 *
 * A complex64 element is two float32s, so the views reinterpret the same bytes: view_as_real
 * appends a dim of size 2 and stride 1 and doubles the other strides and the offset;
 * view_as_complex undoes that, with PyTorch's checks (and texts) on the last dim, the strides
 * and the offset. The view is first made in the source dtype's units, where the storage bound
 * check is the source's, then given the new dtype and geometry. real and imag select the part
 * from view_as_real's last dim, as 2.13's make_fx records them (select.int(view_as_real, -1
 * wrapped, 0 or 1)); real of a real tensor is the tensor itself. */
#include "dispatch/conj.h"
#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/tensor_internal.h"

static cfx_tensor *retyped_view(cfx_tensor *self, cfx_dtype dt, const int64_t *sizes, const int64_t *strides, int nd,
                                int64_t offset)
{
    cfx_tensor *v = cfx_tensor_new_view(self, self->sizes, self->strides, self->ndim, self->storage_offset);
    if (!v)
        return NULL;
    v->dtype = (int8_t)dt;
    v->storage_offset = offset;
    if (!cfx_tensor_set_geometry(v, sizes, strides, nd)) {
        cfx_kernel_discard(v);
        return NULL;
    }
    return v;
}

cfx_tensor *cfx_kernel_view_as_real(cfx_tensor *self)
{
    if (!cfx_dtype_is_complex((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, "aten::view_as_real", "view_as_real is only supported for complex tensors");
        return NULL;
    }
    if (cfx_is_conj(self)) {
        cfx_error_set(CFX_ERR, "aten::view_as_real",
                      "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so "
                      "you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor "
                      "will NOT alias the original.");
        return NULL;
    }
    if (self->ndim + 1 > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, "aten::view_as_real", "view_as_real: a tensor of %d dims has no room for another",
                      self->ndim);
        return NULL;
    }
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        sizes[d] = self->sizes[d];
        strides[d] = 2 * self->strides[d];
    }
    sizes[self->ndim] = 2;
    strides[self->ndim] = 1;
    return retyped_view(self, cfx_dtype_to_real((cfx_dtype)self->dtype), sizes, strides, self->ndim + 1,
                        2 * self->storage_offset);
}

cfx_tensor *cfx_kernel_view_as_complex(cfx_tensor *self)
{
    const char *op = "aten::view_as_complex";
    cfx_dtype dt = (cfx_dtype)self->dtype;
    int n = self->ndim;
    if (dt != CFX_FLOAT32 && dt != CFX_FLOAT64) {
        cfx_error_set(CFX_ERR, op,
                      "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                      "scalar type: %s",
                      cfx_dtype_scalar_name(dt));
        return NULL;
    }
    const char *err = n == 0                        ? "Input tensor must have one or more dimensions"
                      : self->sizes[n - 1] != 2     ? "Tensor must have a last dimension of size 2"
                      : self->strides[n - 1] != 1   ? "Tensor must have a last dimension with stride 1"
                                                    : NULL;
    for (int d = 0; !err && d < n - 1; d++)
        if (self->strides[d] % 2 != 0)
            err = "Tensor must have a stride divisible by 2 for all but last dimension";
    if (!err && self->storage_offset % 2 != 0)
        err = "Tensor must have a storage_offset divisible by 2";
    if (err) {
        cfx_error_set(CFX_ERR, op, "%s", err);
        return NULL;
    }
    int64_t strides[CFX_MAX_DIMS];
    for (int d = 0; d < n - 1; d++)
        strides[d] = self->strides[d] / 2;
    return retyped_view(self, (cfx_dtype)cfx_dtype_to_complex(dt), self->sizes, strides, n - 1,
                        self->storage_offset / 2);
}

/* The real parts of a complex tensor as a view of its dtype's real type, without the
 * dispatcher: what a kernel needs of at::real (abs and angle's complex-to-float path). */
cfx_tensor *cfx_kernel_real_part(cfx_tensor *self)
{
    int64_t strides[CFX_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++)
        strides[d] = 2 * self->strides[d];
    return retyped_view(self, cfx_dtype_to_real((cfx_dtype)self->dtype), self->sizes, strides, self->ndim,
                        2 * self->storage_offset);
}

/* Of a conjugate view, ATen views the real pairs of its data (`view_as_real(self._conj())`);
 * the imaginary parts of those are the negatives of the view's: a negative view
 * (`_neg_view`, neg_view.c), set before the select so that the select keeps it. */
static cfx_tensor *part(cfx_tensor *self, int64_t which)
{
    bool conj = cfx_is_conj(self);
    cfx_tensor *r = cfx_view_as_real(conj ? cfx__conj(self) : self);
    if (r && conj && which == 1)
        r = cfx__neg_view(r);
    return r ? cfx_select(r, (int64_t)r->ndim - 1, which) : NULL;
}

cfx_tensor *cfx_composite_real(cfx_tensor *self)
{
    if (!cfx_dtype_is_complex((cfx_dtype)self->dtype))
        return cfx_autorelease(cfx_tensor_retain(self)); /* the input itself, as returned by any kernel */
    return part(self, 0);
}

cfx_tensor *cfx_composite_imag(cfx_tensor *self)
{
    if (!cfx_dtype_is_complex((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, "aten::imag", "imag is not implemented for tensors with non-complex dtypes.");
        return NULL;
    }
    return part(self, 1);
}
