/* blas.h - the CPU kernels' one door to BLAS (OpenBLAS through CBLAS, the serial build).
 *
 * Every float32/float64 matrix product of the built-in kernels (mm, bmm, addmm, baddbmm, dot,
 * mv, convolution's im2col product) goes through cfx_cpu_gemm, which maps strided operands
 * onto BLAS's (transposed) leading dimensions and copies an operand BLAS cannot address. */
#ifndef CFX_KERNELS_BLAS_H
#define CFX_KERNELS_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/tensor.h"

/* One strided matrix operand: element pointer, rows x cols, row and column strides. */
typedef struct cfx_mat {
    void *p;
    int64_t rows, cols, rs, cs;
} cfx_mat;

/* The 2-D view of a tensor's dims d0, d1 (its data pointer advanced by `offset` elements). */
cfx_mat cfx_mat_of(const cfx_tensor *t, int d0, int d1, int64_t offset);

/* c = alpha * a @ b + beta * c in dtype dt (float32, float64, int32 or int64; the scalars
 * are truncated for integers); beta == 0 ignores c's old contents (NaN included), as BLAS
 * does. False on out of memory (an operand copy). */
bool cfx_blas_gemm(int dt, cfx_mat c, cfx_mat a, cfx_mat b, double alpha, double beta);

/* out = alpha * a @ b + beta * out for 2-D tensors of out's (floating) dtype. */
bool cfx_cpu_gemm(cfx_tensor *out, const cfx_tensor *a, const cfx_tensor *b, double beta, double alpha);

#endif
