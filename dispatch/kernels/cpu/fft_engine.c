/* fft_engine.c - the 1-D discrete Fourier transform the FFT kernels run along each dim.
 *
 * Every length is O(n log n): a power of two runs an iterative radix-2 transform, any other
 * length Bluestein's algorithm (the DFT as a convolution with a chirp, done by radix-2
 * transforms of a power of two >= 2n - 1). Everything is computed in double precision with
 * twiddles from cos/sin of exact angles (k^2 reduced mod 2n for the chirp), so float32 results
 * are as accurate as pocketfft's and float64 ones within a few ulps of n log n rounding. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "dispatch/alloc.h"
#include "dispatch/kernels/fft.h"

static const double TWO_PI = 6.283185307179586476925286766559;

/* e^(i * 2 pi * num / den) */
static double _Complex unit_root(int64_t num, int64_t den)
{
    double a = TWO_PI * (double)num / (double)den;
    /* not CMPLX: glibc defines it only for GCC, and the fuzz build uses clang; with finite
     * parts the sum is exact all the same */
    return cos(a) + sin(a) * I;
}

static void radix2(double _Complex *x, int64_t m, bool forward)
{
    for (int64_t i = 1, j = 0; i < m; i++) { /* bit reversal */
        int64_t bit = m >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double _Complex t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
    for (int64_t len = 2; len <= m; len <<= 1) {
        int64_t half = len / 2;
        for (int64_t k = 0; k < half; k++) {
            double _Complex w = unit_root(forward ? -k : k, len);
            for (int64_t i = k; i < m; i += len) {
                double _Complex u = x[i], v = x[i + half] * w;
                x[i] = u + v;
                x[i + half] = u - v;
            }
        }
    }
}

static bool bluestein(double _Complex *x, int64_t n, bool forward)
{
    int64_t m = 1;
    while (m < 2 * n - 1)
        m <<= 1;
    double _Complex *w = cfx_malloc((size_t)n * sizeof *w);
    double _Complex *a = cfx_calloc((size_t)m, sizeof *a);
    double _Complex *b = cfx_calloc((size_t)m, sizeof *b);
    if (!w || !a || !b) {
        cfx_free(w);
        cfx_free(a);
        cfx_free(b);
        return false;
    }
    /* chirp w[k] = e^(-+ i pi k^2 / n) = unit_root(-+ k^2 mod 2n, 2n) */
    for (int64_t k = 0; k < n; k++) {
        int64_t k2 = k * k % (2 * n); /* k < n, far below 2^31.5 for any tensor that fits */
        w[k] = unit_root(forward ? -k2 : k2, 2 * n);
    }
    for (int64_t k = 0; k < n; k++)
        a[k] = x[k] * w[k];
    b[0] = conj(w[0]);
    for (int64_t k = 1; k < n; k++)
        b[k] = b[m - k] = conj(w[k]);
    radix2(a, m, true);
    radix2(b, m, true);
    for (int64_t k = 0; k < m; k++)
        a[k] *= b[k];
    radix2(a, m, false);
    for (int64_t k = 0; k < n; k++)
        x[k] = w[k] * a[k] / (double)m;
    cfx_free(w);
    cfx_free(a);
    cfx_free(b);
    return true;
}

bool cfx_fft_1d(double _Complex *x, int64_t n, bool forward)
{
    if (n <= 1)
        return true;
    if ((n & (n - 1)) == 0) {
        radix2(x, n, forward);
        return true;
    }
    return bluestein(x, n, forward);
}
