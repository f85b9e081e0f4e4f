/* pointwise_core.c - the hand-written kernels of fmod, atan2, isnan and isinf (Core ATen ops
 * whose main kernels are family rows of dispatch/ops.def).
 *
 * fmod_.Tensor and atan2_ on Meta are the references made in-place (_make_inplace), not
 * meta_binop_inplace: an int self refused with "Attempting to cast from torch.float32 ...".
 * fmod.Scalar is fmod(self, wrapped(other)) through the dispatcher
 * (CompositeExplicitAutograd), as remainder.Scalar. isnan is self != self on CPU
 * (TensorCompare.cpp) and prims.ne(a, a) in its reference; isinf (CompositeExplicitAutograd,
 * and its reference on Meta, which does the same calls) is zeros_like(self, bool, preserve)
 * for integers and abs(self) == inf for floats. */
#include <math.h>

#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/inplace.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/wrapped_internal.h"

cfx_tensor *cfx_meta_fmod__Tensor(cfx_tensor *self, cfx_tensor *other)
{
    INTO_SELF(cfx_meta_into_self, "aten::fmod_", self, cfx_meta_fmod_Tensor(self, other));
}
cfx_tensor *cfx_kernel_fmod_Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_fmod(self, w_));
}
cfx_tensor *cfx_meta_fmod_Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_meta_fmod_Tensor(self, w_));
}
cfx_tensor *cfx_kernel_fmod__Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_fmod_(self, w_));
}
cfx_tensor *cfx_meta_fmod__Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_meta_fmod__Tensor(self, w_));
}

cfx_tensor *cfx_meta_atan2_(cfx_tensor *self, cfx_tensor *other)
{
    INTO_SELF(cfx_meta_into_self, "aten::atan2_", self, cfx_meta_atan2(self, other));
}

cfx_tensor *cfx_cpu_isnan(cfx_tensor *self) { return cfx_cpu_ne_Tensor(self, self); }
cfx_tensor *cfx_meta_isnan(cfx_tensor *self) { return cfx_meta_ne_Tensor(self, self); }

cfx_tensor *cfx_kernel_isinf(cfx_tensor *self)
{
    if (cfx_dtype_is_integral((cfx_dtype)self->dtype, true))
        return cfx_zeros_like(self, cfx_dtype_value(CFX_BOOL), cfx_none(), cfx_none(), cfx_none(),
                              cfx_memory_format_value(CFX_PRESERVE_FORMAT));
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = cfx_abs(self);
    return cfx_composite_return(s, a ? cfx_eq_Scalar(a, cfx_double(INFINITY)) : NULL);
}
