/* fft.h - what the FFT kernels share: the checks and output layout of aten::_fft_r2c,
 * _fft_c2r and _fft_c2c (fft_layout.c), and the 1-D transform (cpu/fft_engine.c).
 *
 * PyTorch 2.13's CPU kernels (_fft_*_mkl in aten/src/ATen/native/mkl/SpectralOps.cpp) and
 * their Meta registrations (meta_fft_* in torch/_meta_registrations.py) give the output a
 * layout of their own: _exec_fft permutes the batch dimensions first, sorted by the input's
 * strides, then the transformed ones in the order given, allocates that contiguously and
 * permutes back. Both keys compute it here, so the CPU result and the meta result agree on
 * strides as PyTorch's do. */
#ifndef CFX_KERNELS_FFT_H
#define CFX_KERNELS_FFT_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/tensor.h"

/* normalization (fft_norm_mode): 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the product of the
 * real-domain signal sizes of the transformed dims */
enum { CFX_FFT_NORM_NONE = 0, CFX_FFT_NORM_BY_ROOT_N = 1, CFX_FFT_NORM_BY_N = 2 };

typedef enum cfx_fft_kind { CFX_FFT_R2C, CFX_FFT_C2R, CFX_FFT_C2C } cfx_fft_kind;

/* One call, checked and laid out: the output's sizes, strides and dtype; the dims (wrapped
 * and checked, in the order given); for C2R the c2c dims come first, the last dim is the
 * real one. */
typedef struct cfx_fft_plan {
    cfx_fft_kind kind;
    int ndim;
    int ndims; /* transformed dims */
    int dims[CFX_MAX_DIMS];
    int64_t out_sizes[CFX_MAX_DIMS];
    int64_t out_strides[CFX_MAX_DIMS];
    cfx_dtype out_dtype;
    bool clone; /* c2c with no dims: a clone of the input (preserve format) */
} cfx_fft_plan;

/* The checks of the CPU kernel (meta = false) or of the meta function (meta = true), then
 * the output layout. last_dim_size is C2R's, onesided R2C's. false with the error recorded. */
bool cfx_fft_plan_make(cfx_fft_plan *p, const char *op, cfx_fft_kind kind, const cfx_tensor *self, cfx_int_list dim,
                       int64_t normalization, bool onesided, int64_t last_dim_size, bool meta);

/* The normalization's factor for n points. */
double cfx_fft_scale(int64_t normalization, int64_t n);

/* x[0..n) = its DFT (sign -1, forward) or the unnormalised inverse (sign +1), in place, in
 * double precision, O(n log n) for every n (radix-2, Bluestein for other lengths). false only
 * when out of memory. */
bool cfx_fft_1d(double _Complex *x, int64_t n, bool forward);

#endif
