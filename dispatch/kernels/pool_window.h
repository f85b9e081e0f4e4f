/* pool_window.h - a pooling window over 2 or 3 spatial dims, shared by the 2-d and 3-d
 * pooling kernels: a 2-d pool is a 3-d one whose time dim has size, kernel, stride and
 * dilation 1, so one set of window loops (cpu/pool.c) computes max_pool2d/3d, avg_pool2d/3d
 * and _adaptive_avg_pool2d/3d. The 3-d argument checks (ATen's pool3d_shape_check and
 * pooling_output_shape, CPU and 2.13's Python meta wording) are in pool3d_shapes.c. */
#ifndef CFX_KERNELS_POOL_WINDOW_H
#define CFX_KERNELS_POOL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/tensor.h"

/* Per spatial dim (T, H, W): kernel, stride, padding, dilation, input and output size. */
typedef struct cfx_pool_window {
    int nd; /* the op's spatial dims, 2 or 3; a 2-d window has T = 1 */
    int64_t k[3], s[3], p[3], d[3], in[3], out[3];
    int64_t planes; /* N * C (or C without a batch dim) */
} cfx_pool_window;

/* The window of a checked 2-d pool (cfx_pool2d_params). */
cfx_pool_window cfx_pool_window_2d(const cfx_pool2d *p);

/* AvgPoolKernel.cpp's window at output position pos (T, H, W), shared by avg_pool2d/3d and
 * avg_pool2d_backward: [lo, hi) clipped to the input; *pool the extent clipped to input +
 * padding (count_include_pad's divisor), *count the elements inside the input. */
void cfx_pool_avg_extent(const cfx_pool_window *w, const int64_t pos[3], int64_t lo[3], int64_t hi[3], int64_t *pool,
                         int64_t *count);

/* The two 3-d pools' checks in 2.13's order and words, then the output size: max_pool3d's
 * when dilation is given, avg_pool3d's (with its divisor_override check) otherwise. meta
 * picks the Python meta function's wording where it differs from the C++ kernel's. */
bool cfx_pool3d_params(const char *op, const cfx_tensor *self, cfx_int_list kernel, cfx_int_list stride,
                       cfx_int_list padding, const cfx_int_list *dilation, bool ceil_mode, cfx_value divisor_override,
                       bool meta, cfx_pool_window *w);

/* A new tensor of self's rank with spatial dims w->out: channels_last_3d when keep_format and
 * self is a 5-d tensor that suggests it (max_pool3d), else contiguous. */
cfx_tensor *cfx_pool3d_output(const cfx_tensor *self, const cfx_pool_window *w, cfx_dtype dt, bool keep_format);

/* max_pool3d_with_indices' two results (values in self's dtype, int64 indices), in the layout
 * cfx_pool3d_output keeps; false (nothing kept) when one cannot be made. */
bool cfx_pool3d_outputs(const cfx_tensor *self, const cfx_pool_window *w, cfx_tensor **values, cfx_tensor **indices);

#endif
