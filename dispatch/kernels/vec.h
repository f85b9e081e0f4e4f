/* vec.h - the vectorized row primitives of the float kernels (softmax), ATen's
 * vec::map / vec::reduce_all in C.
 *
 * Each works on a contiguous run of n elements of float or double and accumulates in that
 * type, lane by lane (8 float or 4 double lanes, then the lanes in order), as ATen's
 * Vectorized<T> reductions do: a float softmax sums in float. The float exp is a vectorized
 * polynomial (Cephes' expf, within 2 ulp of libm's, denormal results down to -104, then 0,
 * and inf above 88.72) standing for ATen's Sleef exp; double calls libm. The functions are
 * compiled for AVX2 (x86-64-v3) and for the baseline and pick one by the CPU's features,
 * since the baseline x86-64 build has 4-lane SSE only. */
#ifndef CFX_KERNELS_VEC_H
#define CFX_KERNELS_VEC_H

#include <stdint.h>

/* max(x[0..n)); NaN if any element is NaN; -inf when n == 0. */
float cfx_vec_max_f32(const float *x, int64_t n);
double cfx_vec_max_f64(const double *x, int64_t n);

/* o[i] = exp(x[i] - shift); returns the sum of the o[i]. o may be x. */
float cfx_vec_exp_sum_f32(float *o, const float *x, float shift, int64_t n);
double cfx_vec_exp_sum_f64(double *o, const double *x, double shift, int64_t n);

/* o[i] = (x[i] - a) * s - b, in that association: softmax's out * (1 / sum) is a = b = 0,
 * log_softmax's x - max - log(sum) is s = 1 (both exact). o may be x. */
void cfx_vec_normalize_f32(float *o, const float *x, float a, float s, float b, int64_t n);
void cfx_vec_normalize_f64(double *o, const double *x, double a, double s, double b, int64_t n);

#endif
