/* pointwise.h - the pointwise families: what every elementwise op of a family shares.
 *
 * A pointwise op is one row of the op table with a scalar expression (its .body): tools/opgen
 * compiles the expression into one inner loop per dtype the family computes in, with the
 * loop shapes below, and makes the op's CPU and Meta kernels calls of the functions here.
 *
 * The two keys run different code in PyTorch 2.13, and so here. The CPU kernel is the C++
 * structured kernel: the family's meta function in PyTorch's order (the op's own dtype check,
 * then TensorIterator's build: overlap, broadcasting, type promotion, devices, then alpha's
 * checks against the result dtype), then the computation: inputs whose dtype differs from the
 * computation dtype are converted into temporaries first, and an in-place output of another
 * dtype receives its values through one, as TensorIterator does on CPU (pointwise.c). The
 * Meta kernel is the op's Python reference (torch/_refs, pointwise_refs.c): type promotion,
 * broadcasting, the reference's own checks, then the prim, laid out by prims' rule; an
 * in-place op's Meta kernel is _meta_registrations' meta_binop_inplace(_alpha) instead.
 *
 * Families (TensorIteratorConfig of PyTorch's structured kernels):
 *   UNARY        out = body(a) in a's dtype                                      neg, relu
 *   UNARY_FLOAT  integer and bool inputs computed in float32 (the default dtype)  sin, exp
 *   BINARY       a and b promoted to their common dtype (result_type), alpha     add, mul
 *   BINARY_FLOAT the same, integers promoted to float32                          div
 *   COMPARE      a and b promoted to their common dtype, a bool result           eq, lt
 * The loops are compiled with wrapping integer arithmetic (-fwrapv), which is what PyTorch's
 * kernels produce on overflow. */
#ifndef CFX_KERNELS_POINTWISE_H
#define CFX_KERNELS_POINTWISE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "dispatch/kernels/loops.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"

typedef enum cfx_pointwise_kind {
    CFX_POINTWISE_UNARY,
    CFX_POINTWISE_UNARY_FLOAT,
    CFX_POINTWISE_BINARY,
    CFX_POINTWISE_BINARY_FLOAT,
    CFX_POINTWISE_COMPARE,
} cfx_pointwise_kind;

/* An op's own check in its C++ kernel, run before anything else: false with the error
 * recorded. b is NULL for a unary op. */
typedef bool (*cfx_pointwise_check_fn)(const char *op, const cfx_tensor *a, const cfx_tensor *b);

/* The checks of an op's Python reference, run on the computation dtype after type promotion
 * and broadcasting. alpha is what the reference receives: None when the caller's equals the
 * schema default (a Python kernel is not passed such keyword arguments). *scale tells whether
 * the reference multiplies the second operand by alpha (prims.mul) before its prim. ntensors
 * counts the operands that are tensors (a wrapped number reaches a reference as a number). */
typedef bool (*cfx_pointwise_ref_fn)(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale,
                                     int ntensors);

/* One pointwise op, as generated from its row. */
typedef struct cfx_pointwise {
    const char *name;            /* "aten::add.Tensor" */
    cfx_pointwise_kind kind;
    bool has_alpha;              /* the schema has a Scalar alpha */
    cfx_value alpha_default;     /* its schema default (None: it has none) */
    const char *cpu_name;        /* the C++ kernel in "not implemented for" (NULL: the op) */
    cfx_pointwise_check_fn check;
    cfx_pointwise_ref_fn ref_check;
    int to_real;                 /* complex inputs give the real dtype (abs, angle): 0 no, 1 laid out
                                  * as the input (abs: empty_like), 2 contiguous (angle: the out=
                                  * path's resize_output of an empty result); on an in-place op
                                  * (abs_), its Meta kernel's exact-dtype refusal */
    cfx_loop_fn loops[CFX_DTYPE_CODES]; /* by computation dtype; NULL: not computed in it */
} cfx_pointwise;

/* The kernels: a new output (CPU or meta), or the result written into a (in-place; returns a).
 * b is NULL and alpha ignored for a unary op; alpha is ignored unless has_alpha. */
cfx_tensor *cfx_pointwise_cpu(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);
cfx_tensor *cfx_pointwise_meta(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);
cfx_tensor *cfx_pointwise_cpu_inplace(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);
cfx_tensor *cfx_pointwise_meta_inplace(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);

/* The ops' own checks (their rows name them), with PyTorch's messages: the C++ kernels'... */
bool cfx_pointwise_check_sub(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_neg(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_relu(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_silu(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_abs_(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_remainder(const char *op, const cfx_tensor *a, const cfx_tensor *b);

/* remainder's element functions (BinaryOpsKernel.cpp remainder_kernel): Python's modulo, whose
 * result has the divisor's sign. The integer one is never called with b == 0 (the op's check
 * refuses it first) and gives 0 for b == -1, where C's % is undefined for the minimum. */
static inline float cfx_pw_remainder_f32(float a, float b)
{
    float m = fmodf(a, b);
    return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
static inline double cfx_pw_remainder_f64(double a, double b)
{
    double m = fmod(a, b);
    return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
static inline int64_t cfx_pw_remainder_int(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* fmod's integer element function (BinaryOpsKernel.cpp fmod_kernel): C's truncating %, the
 * sign of the dividend. Never called with b == 0 (the op's check refuses it first); b == -1
 * gives 0, where C's % is undefined for the minimum. */
static inline int64_t cfx_pw_fmod_int(int64_t a, int64_t b)
{
    return (b == 0 || b == -1) ? 0 : a % b;
}

/* sign (UnaryOpsKernel.cpp sign_kernel: (0 < a) - (a < 0)): 0 for NaN and for -0.0. Integers
 * and bool go through int64_t, so the body has no comparison a type-limits warning would flag
 * for uint8. */
static inline double cfx_pw_sign_f64(double a) { return (double)((0 < a) - (a < 0)); }
static inline int64_t cfx_pw_sign_int(int64_t a) { return (0 < a) - (a < 0); }

/* abs and angle (UnaryOpsKernel.cpp, c10's std::abs and std::arg of a complex): the real
 * dtypes' bodies as ATen's (abs of -0.0 is 0.0; angle is NaN for NaN, else pi for a negative
 * value and 0 otherwise, -0.0 included); a complex one's modulus (hypot) and argument
 * (atan2(imag, real)), whose value the .to_real kernels keep. Functions chosen by _Generic,
 * since a comparison of complex values does not compile even in an unselected branch. */
static inline float cfx_pw_abs_f32(float a) { return fabsf(a); }
static inline double cfx_pw_abs_f64(double a) { return fabs(a); }
static inline int64_t cfx_pw_abs_int(int64_t a) { return a < 0 ? (int64_t)(0 - (uint64_t)a) : a; }
/* a complex value is an array of its two parts (C11 6.2.5): no <complex.h> (its I and complex
 * macros) in the files that include this header */
static inline float cfx_pw_abs_c64(cfx_complex64 a) { const float *z = (const float *)&a; return hypotf(z[0], z[1]); }
static inline double cfx_pw_abs_c128(cfx_complex128 a) { const double *z = (const double *)&a; return hypot(z[0], z[1]); }
#define CFX_PW_ABS(a)                                                                           \
    _Generic((a), float: cfx_pw_abs_f32, double: cfx_pw_abs_f64, cfx_complex64: cfx_pw_abs_c64,  \
             cfx_complex128: cfx_pw_abs_c128, default: cfx_pw_abs_int)(a)
#define CFX_PW_PI 3.14159265358979323846 /* c10::pi<double> */
static inline float cfx_pw_angle_f32(float a) { return a != a ? a : a < 0 ? (float)CFX_PW_PI : 0.0f; }
static inline double cfx_pw_angle_f64(double a) { return a != a ? a : a < 0 ? CFX_PW_PI : 0.0; }
static inline float cfx_pw_angle_c64(cfx_complex64 a) { const float *z = (const float *)&a; return atan2f(z[1], z[0]); }
static inline double cfx_pw_angle_c128(cfx_complex128 a) { const double *z = (const double *)&a; return atan2(z[1], z[0]); }
#define CFX_PW_ANGLE(a)                                                                         \
    _Generic((a), float: cfx_pw_angle_f32, cfx_complex64: cfx_pw_angle_c64,                     \
             cfx_complex128: cfx_pw_angle_c128, default: cfx_pw_angle_f64)(a)

/* sgn (UnaryOpsKernel.cpp sgn_kernel): sign for the real dtypes; a complex z is 0 at 0, else
 * z / abs(z) with c10::complex's division by the complex abs(z) + 0j (numpy's algorithm:
 * rat = 0 / c, scl = 1 / (c + 0 * rat)), so an infinite part gives NaN + NaNj as ATen's
 * scalar loop does. */
static inline float cfx_pw_sgn_f32(float a) { return (float)((0 < a) - (a < 0)); }
static inline cfx_complex64 cfx_pw_sgn_c64(cfx_complex64 a)
{
    float *z = (float *)&a, re = z[0], im = z[1];
    if (re == 0 && im == 0) {
        z[0] = z[1] = 0; /* c10::complex(0, 0), not a signed zero */
        return a;
    }
    float c = hypotf(re, im), rat = 0.0f / c, scl = 1.0f / (c + 0.0f * rat);
    z[0] = (re + im * rat) * scl;
    z[1] = (im - re * rat) * scl;
    return a;
}
static inline cfx_complex128 cfx_pw_sgn_c128(cfx_complex128 a)
{
    double *z = (double *)&a, re = z[0], im = z[1];
    if (re == 0 && im == 0) {
        z[0] = z[1] = 0;
        return a;
    }
    double c = hypot(re, im), rat = 0.0 / c, scl = 1.0 / (c + 0.0 * rat);
    z[0] = (re + im * rat) * scl;
    z[1] = (im - re * rat) * scl;
    return a;
}
#define CFX_PW_SGN(a)                                                                           \
    _Generic((a), float: cfx_pw_sgn_f32, double: cfx_pw_sign_f64,                              \
             cfx_complex64: cfx_pw_sgn_c64, cfx_complex128: cfx_pw_sgn_c128, default: cfx_pw_sign_int)(a)

/* ... and the references' (torch._refs add, sub and neg's _neg_meta) */
bool cfx_pointwise_ref_add(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale, int ntensors);
bool cfx_pointwise_ref_sub(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale, int ntensors);
bool cfx_pointwise_ref_neg(const char *op, cfx_dtype computation, cfx_value alpha, bool *scale, int ntensors);

/* _meta_registrations' check_inplace_broadcast(self.shape, other.shape): other broadcasts to
 * self without growing it ("output with shape torch.Size([3]) doesn't match the broadcast
 * shape (2, 3)"); false + error otherwise. */
bool cfx_pointwise_inplace_broadcast(const char *op, const cfx_tensor *self, const cfx_tensor *other);

/* A non-number alpha: PyTorch's argument-binding error (false), recorded before anything
 * else on either key. */
bool cfx_pointwise_alpha_ok(const cfx_pointwise *p, cfx_value alpha);

/* ---- the loop shapes the generated loops are written in --------------------------------- */

/* What a binary loop's ctx points at: alpha as the float and as the integer computation
 * dtypes read it. */
typedef struct cfx_pointwise_alpha {
    double d;
    int64_t i;
} cfx_pointwise_alpha;

#define CFX_POINTWISE_ALPHA_(C, ctx)                                                            \
    _Generic((C)0, float: (float)((const cfx_pointwise_alpha *)(ctx))->d,                     \
             double: ((const cfx_pointwise_alpha *)(ctx))->d,                                  \
             cfx_complex64: (cfx_complex64)(float)((const cfx_pointwise_alpha *)(ctx))->d,      \
             cfx_complex128: (cfx_complex128)((const cfx_pointwise_alpha *)(ctx))->d,          \
             default: (C)((const cfx_pointwise_alpha *)(ctx))->i)

/* The body of a loop function (char **p, const int64_t *s, int64_t n, const void *ctx): p[0]
 * the output, p[1] (and p[2]) the inputs, s their byte strides, elements of type T; BODY
 * computes from a (and b, alpha) read as type C, the arithmetic type of T (int for bool, whose
 * bodies the generator wraps in `!= 0`). The contiguous case is a plain indexed loop, which
 * compilers vectorize. */
#define CFX_POINTWISE_UNARY_LOOP(T, C, BODY)                                                       \
    do {                                                                                        \
        (void)ctx;                                                                              \
        const int64_t es_ = (int64_t)sizeof(T);                                                 \
        if (s[0] == es_ && s[1] == es_) {                                                       \
            T *o_ = (T *)p[0];                                                                  \
            const T *x_ = (const T *)p[1];                                                      \
            for (int64_t i_ = 0; i_ < n; i_++) {                                                \
                T a = x_[i_];                                                                   \
                o_[i_] = (T)(BODY);                                                             \
            }                                                                                   \
        } else {                                                                                \
            char *po_ = p[0];                                                                   \
            const char *pa_ = p[1];                                                             \
            for (int64_t i_ = 0; i_ < n; i_++, po_ += s[0], pa_ += s[1]) {                      \
                T a = *(const T *)pa_;                                                          \
                *(T *)po_ = (T)(BODY);                                                          \
            }                                                                                   \
        }                                                                                       \
    } while (0)

/* aten::pow on integers is c10's powi, not libm's pow: exact, wrapping on overflow, and a
 * negative exponent gives 0 except for a base of 1 or -1 (pow's inf cast to an integer was
 * undefined behaviour, found by fuzz/fuzz_op_call.c). Floating types keep pow. */
static inline int64_t cfx_powi(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, x = (uint64_t)a;
    for (; b; b >>= 1, x *= x)
        if (b & 1)
            r *= x;
    return (int64_t)r;
}
#define CFX_POW(a, b)                                                                           \
    _Generic((a), signed char: cfx_powi((int64_t)(a), (int64_t)(b)),                            \
             unsigned char: cfx_powi((int64_t)(a), (int64_t)(b)),                               \
             short: cfx_powi((int64_t)(a), (int64_t)(b)), int: cfx_powi((int64_t)(a), (int64_t)(b)), \
             long: cfx_powi((int64_t)(a), (int64_t)(b)), long long: cfx_powi((int64_t)(a), (int64_t)(b)), \
             default: pow((a), (b)))

#define CFX_POINTWISE_BINARY_LOOP(T, C, BODY)                                                   \
    do {                                                                                        \
        const C alpha = CFX_POINTWISE_ALPHA_(C, ctx);                                           \
        (void)alpha;                                                                            \
        const int64_t es_ = (int64_t)sizeof(T);                                                 \
        if (s[0] == es_ && s[1] == es_ && s[2] == es_) {                                        \
            T *o_ = (T *)p[0];                                                                  \
            const T *x_ = (const T *)p[1], *y_ = (const T *)p[2];                               \
            for (int64_t i_ = 0; i_ < n; i_++) {                                                \
                C a = x_[i_], b = y_[i_];                                                       \
                o_[i_] = (T)(BODY);                                                             \
            }                                                                                   \
        } else {                                                                                \
            char *po_ = p[0];                                                                   \
            const char *pa_ = p[1], *pb_ = p[2];                                                \
            for (int64_t i_ = 0; i_ < n; i_++, po_ += s[0], pa_ += s[1], pb_ += s[2]) {         \
                C a = *(const T *)pa_, b = *(const T *)pb_;                                     \
                *(T *)po_ = (T)(BODY);                                                          \
            }                                                                                   \
        }                                                                                       \
    } while (0)

#endif
