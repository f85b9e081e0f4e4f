/* loops.h - strided elementwise iteration for the CPU kernels.
 *
 * A loop walks an output and up to two inputs broadcast to the output's shape. Dimensions are
 * ordered by the output's strides (innermost = smallest) and adjacent ones are merged when
 * every operand steps through them as one (TensorIterator's coalesce_dimensions), so a
 * contiguous or uniformly transposed operation becomes a single inner run. The inner run is a
 * typed function given byte strides, PyTorch's loop2d shape without the second dimension.
 *
 * Also here: the dtype conversions (c10::convert / static_cast semantics, with the UB cases
 * pinned to x86's results) and a strided copy-with-cast, which clone and the mixed-dtype
 * paths of the arithmetic kernels use. */
#ifndef CFX_KERNELS_LOOPS_H
#define CFX_KERNELS_LOOPS_H

#include <stdint.h>

#include "dispatch/tensor.h"

/* The element types of complex64 and complex128 (C99 complex: the layout of c10::complex,
 * real then imaginary part). */
typedef float _Complex cfx_complex64;
typedef double _Complex cfx_complex128;

enum { CFX_LOOP_MAX_OPERANDS = 4 }; /* where: the output and three inputs */

typedef struct cfx_loop {
    int ndim, ntensors;
    char *ptr[CFX_LOOP_MAX_OPERANDS];
    int64_t shape[CFX_MAX_DIMS];
    int64_t stride[CFX_MAX_DIMS][CFX_LOOP_MAX_OPERANDS]; /* bytes, per dim per operand */
} cfx_loop;

/* ptrs/strides indexed by operand (0 = output); n elements along the inner dimension. */
typedef void (*cfx_loop_fn)(char **ptrs, const int64_t *strides, int64_t n, const void *ctx);

/* Plans out = f(in[0..nin)) with the inputs broadcast to out's sizes. */
void cfx_loop_init(cfx_loop *l, cfx_tensor *out, const cfx_tensor *const *in, int nin);
void cfx_loop_run(const cfx_loop *l, cfx_loop_fn fn, const void *ctx);

/* dst[...] = (dst dtype) src[...] for tensors of the same shape (CPU). */
void cfx_cpu_copy(cfx_tensor *dst, const cfx_tensor *src);

/* A CPU tensor with src's values converted to dtype, laid out like empty_like(src); src
 * itself (not a new reference) when it already has that dtype. Autoreleased like any new
 * tensor. */
cfx_tensor *cfx_cpu_to_dtype(const cfx_tensor *src, cfx_dtype dtype);

/* src's values in a contiguous CPU tensor: src itself when it is contiguous (not a new
 * reference), else an autoreleased copy; NULL when out of memory. Tensor.contiguous() as the
 * CPU kernels (softmax, layer_norm, convolution) call it before their row loops. */
const cfx_tensor *cfx_cpu_contiguous(const cfx_tensor *src);

/* Element i of an integer or bool array of dtype dt, as int64: how an index or a size read
 * from a tensor of any integral dtype is used (the conversion c10 makes before reading it). */
static inline int64_t cfx_load_int(const void *data, int64_t i, cfx_dtype dt)
{
    switch (dt) {
    case CFX_UINT8: return ((const uint8_t *)data)[i];
    case CFX_INT8: return ((const int8_t *)data)[i];
    case CFX_INT16: return ((const int16_t *)data)[i];
    case CFX_INT32: return ((const int32_t *)data)[i];
    case CFX_BOOL: return ((const uint8_t *)data)[i];
    default: return ((const int64_t *)data)[i];
    }
}

/* Scalar conversions as c10 performs them on x86-64 (float -> int saturates to INT_MIN). */
static inline int64_t cfx_conv_f64_i64(double v)
{
    if (!(v > -9223372036854775809.0 && v < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)v;
}
static inline int32_t cfx_conv_f64_i32(double v)
{
    if (!(v > -2147483649.0 && v < 2147483648.0))
        return INT32_MIN;
    return (int32_t)v;
}

#endif
