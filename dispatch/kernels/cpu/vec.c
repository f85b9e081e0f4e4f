/* vec.c - the vectorized row primitives of vec.h.
 *
 * Written once over a 32-byte vector of T (GCC vector extensions: 8 floats or 4 doubles), so
 * float and double share every loop; only exp differs (a polynomial on float lanes, libm on
 * double ones). A tail shorter than a vector goes through the same lane code, padded with a
 * value that cannot change the result. The float exp's multiply-adds are fused (one rounding,
 * _mm256_fmadd_ps) in the AVX2 compilation, as ATen's Vectorized<float>::exp does, and rounded
 * twice as written in the baseline one (ISO C's fp-contract=off): the two may differ in the
 * last bit of an exp, both within the 2 ulp of libm's expf that vec.h promises.
 *
 * Speed: the exp's chain of dependent operations, not the number of operations, bounds a
 * row (each vector's exp waits on its own previous step), so the polynomial runs on fused
 * multiply-adds (half the latency of a multiply then an add) and the range checks clamp the
 * argument instead of masking it, which keeps them off that chain. The max keeps four
 * independent accumulators for the same reason (a NaN-propagating maximum is a compare, an
 * or and a blend, each waiting on the last). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/kernels/vec.h"

/* Each primitive is compiled twice, for x86-64-v3 (AVX2) and for the baseline, and the public
 * function picks one per call from the CPU's features. (Not GCC's target_clones: its ifunc
 * symbols escape -fvisibility=hidden and would be exported from libcfx.so.) */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AVX2 __attribute__((target("arch=x86-64-v3")))
/* a * b + c on 8 float lanes, rounded once (has_avx2 requires FMA too) */
#define MADD_avx2(a, b, c) _mm256_fmadd_ps(a, b, c)
static bool has_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
#define AVX2
#define MADD_avx2(a, b, c) ((a) * (b) + (c))
static bool has_avx2(void)
{
    return false;
}
#endif

/* a * b + c rounded twice, as written */
#define MADD_base(a, b, c) ((a) * (b) + (c))

typedef float f32v __attribute__((vector_size(32)));
typedef double f64v __attribute__((vector_size(32)));
typedef int32_t f32m __attribute__((vector_size(32))); /* comparison masks of f32v */
typedef int64_t f64m __attribute__((vector_size(32)));

/* lanes of a where mask m is set, else of b */
#define SELECT(M, V, m, a, b) ((V)(((M)(a) & (m)) | ((M)(b) & ~(m))))

/* v = exp(v) on 8 float lanes: Cephes' expf. n = round(v / ln 2) by the 1.5 * 2^23 trick, a
 * Cody-Waite reduction r = v - n ln 2 (C1 has 9 bits, so n * C1 is exact), a degree-6
 * polynomial, and 2^n applied as two factors 2^(n/2) so that every n of [-150, 128] stays a
 * normal float until the last product (which rounds to a denormal below -87.3). The argument
 * is clamped to [-104, 88.72] for the computation; lanes outside (and NaN lanes, which compare
 * false and compute garbage) take 0, inf or their NaN at the end. MADD is the variant's
 * multiply-add. A statement macro, not a function: a 32-byte vector argument would change the
 * baseline ABI. */
#define EXP_LANES_f32(v, MADD)                                                                  \
    do {                                                                                        \
        const f32v lo_ = (f32v){0} - 104.0f, hi_ = (f32v){0} + 88.7228394f;                     \
        f32m under_ = v < lo_, over_ = v > hi_, nan_ = v != v;                                  \
        f32v c_ = SELECT(f32m, f32v, under_, lo_, v);                                           \
        c_ = SELECT(f32m, f32v, over_, hi_, c_);                                                \
        f32v n_ = MADD(c_, (f32v){0} + 1.44269504088896341f, (f32v){0} + 12582912.0f) - 12582912.0f; \
        f32v r_ = MADD(n_, (f32v){0} - 0.693359375f, c_);                                       \
        r_ = MADD(n_, (f32v){0} + 2.12194440e-4f, r_);                                          \
        f32v p_ = (f32v){0} + 1.9875691500e-4f;                                                 \
        p_ = MADD(p_, r_, (f32v){0} + 1.3981999507e-3f);                                        \
        p_ = MADD(p_, r_, (f32v){0} + 8.3334519073e-3f);                                        \
        p_ = MADD(p_, r_, (f32v){0} + 4.1665795894e-2f);                                        \
        p_ = MADD(p_, r_, (f32v){0} + 1.6666665459e-1f);                                        \
        p_ = MADD(p_, r_, (f32v){0} + 5.0000001201e-1f);                                        \
        p_ = MADD(p_ * r_, r_, r_) + 1.0f;                                                      \
        f32m ni_ = __builtin_convertvector(n_, f32m), n1_ = ni_ >> 1, n2_ = ni_ - n1_;          \
        f32v res_ = p_ * (f32v)((n1_ + 127) << 23) * (f32v)((n2_ + 127) << 23);                 \
        res_ = SELECT(f32m, f32v, under_, (f32v){0}, res_);                                     \
        res_ = SELECT(f32m, f32v, over_, (f32v){0} + INFINITY, res_);                           \
        v = SELECT(f32m, f32v, nan_, v, res_);                                                  \
    } while (0)

/* v = exp(v) on 4 double lanes: libm's. */
#define EXP_LANES_f64(v, MADD)                                                                        \
    do {                                                                                        \
        for (int j_ = 0; j_ < 4; j_++)                                                          \
            v[j_] = exp(v[j_]);                                                                 \
    } while (0)

/* The NaN-propagating maximum of ATen's vec::maximum, on lanes and on scalars. */
#define VMAX(M, V, a, b) SELECT(M, V, ((a) > (b)) | ((a) != (a)), a, b)
#define SMAX(a, b) ((a) > (b) || isnan(a) ? (a) : (b))

#define DEFINE_PRIMITIVES(S, T, V, M, X, ATTR)                                                         \
    ATTR static T max_##S##X(const T *x, int64_t n)                                             \
    {                                                                                           \
        enum { W = sizeof(V) / sizeof(T) };                                                     \
        V a0 = (V){0} - (T)INFINITY, a1 = a0, a2 = a0, a3 = a0, v;                              \
        int64_t i = 0;                                                                          \
        for (; i + 4 * W <= n; i += 4 * W) { /* four chains: see the top of the file */         \
            memcpy(&v, x + i, sizeof v);                                                        \
            a0 = VMAX(M, V, v, a0);                                                             \
            memcpy(&v, x + i + W, sizeof v);                                                    \
            a1 = VMAX(M, V, v, a1);                                                             \
            memcpy(&v, x + i + 2 * W, sizeof v);                                                \
            a2 = VMAX(M, V, v, a2);                                                             \
            memcpy(&v, x + i + 3 * W, sizeof v);                                                \
            a3 = VMAX(M, V, v, a3);                                                             \
        }                                                                                       \
        for (; i + W <= n; i += W) {                                                            \
            memcpy(&v, x + i, sizeof v);                                                        \
            a0 = VMAX(M, V, v, a0);                                                             \
        }                                                                                       \
        a0 = VMAX(M, V, a1, a0);                                                                \
        a2 = VMAX(M, V, a3, a2);                                                                \
        a0 = VMAX(M, V, a2, a0);                                                                \
        T r = -(T)INFINITY;                                                                     \
        for (int j = 0; j < W; j++)                                                             \
            r = SMAX(a0[j], r);                                                                 \
        for (; i < n; i++)                                                                      \
            r = SMAX(x[i], r);                                                                  \
        return r;                                                                               \
    }                                                                                           \
                                                                                                \
    ATTR static T exp_sum_##S##X(T *o, const T *x, T shift, int64_t n)                          \
    {                                                                                           \
        enum { W = sizeof(V) / sizeof(T) };                                                     \
        V acc = {0}, v;                                                                         \
        int64_t i = 0;                                                                          \
        for (; i + W <= n; i += W) {                                                            \
            memcpy(&v, x + i, sizeof v);                                                        \
            v -= shift;                                                                         \
            EXP_LANES_##S(v, MADD##X);                                                                   \
            memcpy(o + i, &v, sizeof v);                                                        \
            acc += v;                                                                           \
        }                                                                                       \
        if (i < n) { /* the tail, padded with exp(-inf) = 0, which adds nothing */              \
            for (int j = 0; j < W; j++)                                                         \
                v[j] = i + j < n ? x[i + j] - shift : -(T)INFINITY;                             \
            EXP_LANES_##S(v, MADD##X);                                                                   \
            for (int j = 0; i + j < n; j++)                                                     \
                o[i + j] = v[j];                                                                \
            acc += v;                                                                           \
        }                                                                                       \
        T r = 0;                                                                                \
        for (int j = 0; j < W; j++)                                                             \
            r += acc[j];                                                                        \
        return r;                                                                               \
    }                                                                                           \
                                                                                                \
    ATTR static void normalize_##S##X(T *o, const T *x, T a, T s, T b, int64_t n)               \
    {                                                                                           \
        enum { W = sizeof(V) / sizeof(T) };                                                     \
        V v;                                                                                    \
        int64_t i = 0;                                                                          \
        for (; i + W <= n; i += W) {                                                            \
            memcpy(&v, x + i, sizeof v);                                                        \
            v = (v - a) * s - b;                                                                \
            memcpy(o + i, &v, sizeof v);                                                        \
        }                                                                                       \
        for (; i < n; i++)                                                                      \
            o[i] = (x[i] - a) * s - b;                                                          \
    }

DEFINE_PRIMITIVES(f32, float, f32v, f32m, _avx2, AVX2)
DEFINE_PRIMITIVES(f32, float, f32v, f32m, _base, )
DEFINE_PRIMITIVES(f64, double, f64v, f64m, _avx2, AVX2)
DEFINE_PRIMITIVES(f64, double, f64v, f64m, _base, )

#define DEFINE_DISPATCH(S, T)                                                                   \
    T cfx_vec_max_##S(const T *x, int64_t n)                                                    \
    {                                                                                           \
        return has_avx2() ? max_##S##_avx2(x, n) : max_##S##_base(x, n);                        \
    }                                                                                           \
    T cfx_vec_exp_sum_##S(T *o, const T *x, T shift, int64_t n)                                 \
    {                                                                                           \
        return has_avx2() ? exp_sum_##S##_avx2(o, x, shift, n) : exp_sum_##S##_base(o, x, shift, n); \
    }                                                                                           \
    void cfx_vec_normalize_##S(T *o, const T *x, T a, T s, T b, int64_t n)                     \
    {                                                                                           \
        if (has_avx2())                                                                         \
            normalize_##S##_avx2(o, x, a, s, b, n);                                             \
        else                                                                                    \
            normalize_##S##_base(o, x, a, s, b, n);                                             \
    }
DEFINE_DISPATCH(f32, float)
DEFINE_DISPATCH(f64, double)
