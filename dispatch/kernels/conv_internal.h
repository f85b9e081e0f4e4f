/* conv_internal.h - what convolution's CPU kernel (cpu/conv.c) shares with convolution_backward
 * (cpu/backward_conv.c): the index geometry of im2col/col2im, the column walk and the
 * per-image, per-group gemm loop. The backward op's gradients are the forward's adjoints: the
 * input gradient is the opposite-direction convolution (plain <-> transposed) of grad_output
 * over the same geometry, the weight gradient a gemm of grad_output with the columns. */
#ifndef CFX_KERNELS_CONV_INTERNAL_H
#define CFX_KERNELS_CONV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/tensor.h"

enum { CFX_CONV_MAXK = 3 };

/* The index geometry shared by im2col and col2im. The "image" side is what the columns are
 * read from (plain: the input) or added into (transposed: the output); the "grid" side is the
 * other one, whose positions are the columns. Grid position o and kernel offset kk meet image
 * position o * s - p + kk * d in every spatial dim. */
typedef struct conv_geom {
    int k;                                        /* spatial dims */
    int64_t image[CFX_CONV_MAXK], grid[CFX_CONV_MAXK], ker[CFX_CONV_MAXK];
    int64_t s[CFX_CONV_MAXK], p[CFX_CONV_MAXK], d[CFX_CONV_MAXK];
    int64_t image_numel, cols, kprod;             /* prod(image), prod(grid), prod(ker) */
} conv_geom;

/* The geometry of a convolution of input by weight whose output has out_sizes. */
void cfx_conv_geom_init(conv_geom *g, const cfx_tensor *input, const cfx_tensor *weight, const int64_t *out_sizes,
                        cfx_int_list stride, cfx_int_list padding, cfx_int_list dilation, bool transposed);

/* im2col of `channels` image planes into col (scatter false), or col2im adding col into
 * them (scatter true); float32 or float64. */
void cfx_conv_columns(cfx_dtype dt, void *image, void *col, int64_t channels, const conv_geom *g, bool scatter);

/* out (contiguous) = conv(x, w) + bias (bias may be NULL); x and w contiguous, all of out's
 * dtype. False on out of memory. */
bool cfx_conv_cpu(cfx_tensor *out, const cfx_tensor *x, const cfx_tensor *w, const cfx_tensor *bias,
                  const conv_geom *g, int64_t groups, bool transposed);

/* slow_conv_transpose's check of output_padding against stride and dilation, and
 * select_conv_backend's of an empty input (its error recorded for op). */
bool cfx_conv_output_padding_ok(const char *op, int k, cfx_int_list output_padding, const int64_t *s, const int64_t *d);
bool cfx_conv_empty_input_ok(const char *op, const cfx_tensor *input);

#endif
