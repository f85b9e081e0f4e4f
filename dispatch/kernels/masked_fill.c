/* masked_fill.c - masked_fill.Tensor (a 0-dim tensor as the value) and the in-place
 * masked_fill_.Scalar / masked_fill_.Tensor, beside masked_fill.Scalar (convert.c).
 *
 * CPU, as ATen: masked_fill.Tensor is masked_fill.Scalar's composite with the value read out of
 * its 0-dim tensor (masked_fill__cpu's value.item(), after its check "masked_fill_ only
 * supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."); the in-place
 * forms write the out-of-place result into self with TensorIterator's checks (inplace.h): the
 * mask may broadcast to self, not self to the mask, and the value is cast to self's dtype.
 * Meta, as 2.13's Python: masked_fill.Tensor is torch._refs.masked_fill (its own 0-dim and
 * device checks, then where(mask, value, a).contiguous()); masked_fill_.Scalar's meta function
 * is check_inplace_broadcast(self.shape, mask.shape) alone; masked_fill_.Tensor is the reference
 * made in-place (_make_inplace). */
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/inplace.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/scope.h"

static bool value_is_0dim(const cfx_tensor *value, bool meta)
{
    if (value->ndim == 0)
        return true;
    if (meta)
        cfx_error_set(CFX_ERR, "aten::masked_fill",
                      "only supports a 0-dimensional value tensor, but got tensor with %d dimension", value->ndim);
    else
        cfx_error_set(CFX_ERR, "aten::masked_fill_",
                      "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                      value->ndim);
    return false;
}

/* expand_outplace(mask, self)'s check, which ATen's composite runs before masked_fill_'s */
static bool broadcastable(const cfx_tensor *self, const cfx_tensor *mask)
{
    int64_t shape[CFX_MAX_DIMS];
    int nd;
    return cfx_geom_broadcast(mask->sizes, mask->ndim, self->sizes, self->ndim, shape, &nd, "aten::masked_fill");
}

cfx_tensor *cfx_kernel_masked_fill_Tensor(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *value)
{
    if (!broadcastable(self, mask) || !value_is_0dim(value, false))
        return NULL;
    cfx_value v = cfx_cpu__local_scalar_dense(value);
    return v.kind == CFX_V_NONE ? NULL : cfx_kernel_masked_fill_Scalar(self, mask, v);
}

cfx_tensor *cfx_meta_masked_fill_Tensor(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *value)
{
    if (!value_is_0dim(value, true))
        return NULL;
    if (value->device.type != self->device.type) {
        cfx_error_set(CFX_ERR, "aten::masked_fill", "Expected `value` to be on same device as `a`");
        return NULL;
    }
    /* the value only takes part in the broadcast (0-dim) and is cast to a's dtype */
    return cfx_meta_masked_fill_Scalar(self, mask, cfx_int(0));
}

cfx_tensor *cfx_cpu_masked_fill__Scalar(cfx_tensor *self, cfx_tensor *mask, cfx_value value)
{
    /* TensorIterator's broadcast of (self, mask), in that order */
    int64_t shape[CFX_MAX_DIMS];
    int nd;
    if (!cfx_geom_broadcast(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, &nd, "aten::masked_fill_"))
        return NULL;
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *r = cfx_cpu_into_self("aten::masked_fill_", self, cfx_kernel_masked_fill_Scalar(self, mask, value), false);
    cfx_scope_end(sc);
    return r ? cfx_autorelease(cfx_tensor_retain(r)) : NULL;
}

cfx_tensor *cfx_meta_masked_fill__Scalar(cfx_tensor *self, cfx_tensor *mask, cfx_value value)
{
    (void)value;
    if (!cfx_pointwise_inplace_broadcast("aten::masked_fill_", self, mask))
        return NULL;
    cfx_tensor_bump_version(self);
    return cfx_autorelease(cfx_tensor_retain(self));
}

cfx_tensor *cfx_cpu_masked_fill__Tensor(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *value)
{
    if (!value_is_0dim(value, false))
        return NULL;
    cfx_value v = cfx_cpu__local_scalar_dense(value);
    return v.kind == CFX_V_NONE ? NULL : cfx_cpu_masked_fill__Scalar(self, mask, v);
}

cfx_tensor *cfx_meta_masked_fill__Tensor(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *value)
{
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *r = cfx_meta_into_self("aten::masked_fill_", self, cfx_meta_masked_fill_Tensor(self, mask, value));
    cfx_scope_end(sc);
    return r ? cfx_autorelease(cfx_tensor_retain(r)) : NULL;
}
