/* pool3d_composite.c - the CompositeImplicitAutograd 3-d pooling operators, as 2.13's C++
 * decomposes them: max_pool3d -> max_pool3d_with_indices[0]; adaptive_avg_pool3d ->
 * mean.dim([-1, -2, -3], keepdim) for a 1x1x1 output (2.13's fast path), else
 * _adaptive_avg_pool3d. Written with cfx_op_* calls so a mode or tracer sees exactly these
 * calls (composite.h). */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"

cfx_tensor *cfx_composite_max_pool3d(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                                     cfx_int_list padding, cfx_int_list dilation, bool ceil_mode)
{
    cfx_scope s = cfx_scope_begin();
    cfx_max_pool3d_with_indices_result r =
        cfx_op_max_pool3d_with_indices(NULL, self, kernel_size, stride, padding, dilation, ceil_mode);
    return cfx_composite_return(s, r.values);
}

cfx_tensor *cfx_composite_adaptive_avg_pool3d(cfx_tensor *self, cfx_int_list output_size)
{
    const char *op = "aten::adaptive_avg_pool3d";
    if (output_size.len != 3) {
        cfx_error_set(CFX_ERR, op, "adaptive_avg_pool3d: output_size must be 3");
        return NULL;
    }
    const int64_t *o = output_size.data;
    if (o[0] < 0 || o[1] < 0 || o[2] < 0) { /* sic: 2.13 has no space before the third */
        cfx_error_set(CFX_ERR, op,
                      "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but received "
                      "{%lld, %lld,%lld}", (long long)o[0], (long long)o[1], (long long)o[2]);
        return NULL;
    }
    if (o[0] != 1 || o[1] != 1 || o[2] != 1)
        return cfx_op__adaptive_avg_pool3d(NULL, self, output_size);
    /* a channels_last_3d input makes 2.13 restride the mean with as_strided_, which cfx lacks */
    if (cfx_geom_suggest_memory_format(self->sizes, self->strides, self->ndim) == CFX_CHANNELS_LAST_3D) {
        cfx_error_set(CFX_ERR_NOTIMPL, op, "a 1x1x1 adaptive_avg_pool3d of a channels_last_3d input (it needs "
                      "as_strided_) is not implemented in cfx");
        return NULL;
    }
    int64_t dims[3] = {-1, -2, -3};
    return cfx_op_mean_dim(NULL, self, cfx_ints(dims, 3), true, cfx_none());
}
