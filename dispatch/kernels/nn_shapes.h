/* nn_shapes.h - the shape rules the CPU and Meta kernels of convolution and pooling share:
 * argument expansion (a 1-element int[2] means both dims, an empty pooling stride means the
 * kernel size), ATen's output-size formulas and checks, and the output layout (the input's
 * suggested memory format). */
#ifndef CFX_KERNELS_NN_SHAPES_H
#define CFX_KERNELS_NN_SHAPES_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/tensor.h"

/* A 2-D pooling window, expanded: kernel, stride, padding, dilation per spatial dim. */
typedef struct cfx_pool2d {
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t ih, iw, oh, ow; /* input and output spatial sizes */
    int64_t planes;         /* N * C (or C for a 3-D input) */
} cfx_pool2d;

/* Reads and checks the pooling arguments of a [N,]C,H,W input (max_pool2d's checks when
 * dilation is given, avg_pool2d's otherwise) and computes the output size. */
bool cfx_pool2d_params(const char *op, const cfx_tensor *self, cfx_int_list kernel, cfx_int_list stride,
                       cfx_int_list padding, const cfx_int_list *dilation, bool ceil_mode, cfx_pool2d *p);

/* A new tensor of self's rank with spatial dims oh x ow, in self's suggested memory format. */
cfx_tensor *cfx_pool2d_output(const cfx_tensor *self, int64_t oh, int64_t ow, cfx_dtype dt);

/* Element at offset off (in elements) of a float32 or float64 tensor, as a double, and back:
 * the nn CPU kernels compute in double whatever the floating dtype. */
static inline double cfx_nn_get(const cfx_tensor *t, int64_t off)
{
    return t->dtype == CFX_FLOAT32 ? ((const float *)cfx_tensor_data(t))[off] : ((const double *)cfx_tensor_data(t))[off];
}

static inline void cfx_nn_set(cfx_tensor *t, int64_t off, double v)
{
    if (t->dtype == CFX_FLOAT32)
        ((float *)cfx_tensor_data(t))[off] = (float)v;
    else
        ((double *)cfx_tensor_data(t))[off] = v;
}

/* max_pool2d_with_indices' two results (values in dt, int64 indices), in self's suggested
 * memory format; false (nothing kept) when one cannot be made. */
bool cfx_pool2d_outputs(const cfx_tensor *self, const cfx_pool2d *p, cfx_tensor **values, cfx_tensor **indices);

/* convolution's checks (check_shape_forward's, in its order) and output sizes, plain or
 * transposed; out has input->ndim entries. */
bool cfx_conv_output_size(const char *op, const cfx_tensor *input, const cfx_tensor *weight, const cfx_tensor *bias,
                          cfx_int_list stride, cfx_int_list padding, cfx_int_list dilation, bool transposed,
                          cfx_int_list output_padding, int64_t groups, int64_t *out);

#endif
