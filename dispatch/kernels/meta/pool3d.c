/* pool3d.c - the Meta kernels of the 3-d pooling ops (max_pool3d_with_indices, avg_pool3d,
 * _adaptive_avg_pool3d): 2.13's Python meta functions, which check the arguments as the CPU
 * kernels do (pool3d_shapes.c, their own wording) but not the dtype, and make contiguous
 * outputs except max_pool3d's of a channels_last_3d input. */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pool_window.h"
#include "dispatch/kernels/prims.h"

cfx_max_pool3d_with_indices_result cfx_meta_max_pool3d_with_indices(cfx_tensor *self, cfx_int_list kernel_size,
                                                                    cfx_int_list stride, cfx_int_list padding,
                                                                    cfx_int_list dilation, bool ceil_mode)
{
    cfx_max_pool3d_with_indices_result none = {{NULL, NULL}};
    cfx_pool_window w;
    if (!cfx_pool3d_params("aten::max_pool3d_with_indices", self, kernel_size, stride, padding, &dilation, ceil_mode,
                           cfx_none(), true, &w))
        return none;
    cfx_tensor *out, *idx;
    if (!cfx_pool3d_outputs(self, &w, &out, &idx))
        return none;
    return (cfx_max_pool3d_with_indices_result){{out, idx}};
}

cfx_tensor *cfx_meta_avg_pool3d(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list stride,
                                cfx_int_list padding, bool ceil_mode, bool count_include_pad,
                                cfx_value divisor_override)
{
    (void)count_include_pad;
    cfx_pool_window w;
    if (!cfx_pool3d_params("aten::avg_pool3d", self, kernel_size, stride, padding, NULL, ceil_mode, divisor_override,
                           true, &w))
        return NULL;
    return cfx_pool3d_output(self, &w, (cfx_dtype)self->dtype, false);
}

/* self.new_empty(self.shape[:-3] + output_size): only the rank is checked. */
cfx_tensor *cfx_meta__adaptive_avg_pool3d(cfx_tensor *self, cfx_int_list output_size)
{
    const char *op = "aten::_adaptive_avg_pool3d";
    int n = self->ndim;
    if (n != 4 && n != 5) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Expected 4D or 5D tensor, but got ");
        cfx_prims_put_size(&b, self->sizes, n);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "adaptive_avg_pool3d: bad rank");
        cfx_free(msg);
        return NULL;
    }
    int64_t sizes[CFX_MAX_DIMS];
    int m = n - 3;
    for (int i = 0; i < m; i++)
        sizes[i] = self->sizes[i];
    for (int64_t i = 0; i < output_size.len && m < CFX_MAX_DIMS; i++)
        sizes[m++] = output_size.data[i];
    return cfx_tensor_new(sizes, m, (cfx_dtype)self->dtype, self->device);
}
