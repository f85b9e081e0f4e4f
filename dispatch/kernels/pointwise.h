/* pointwise.h - the pointwise families: what every elementwise op of a family shares.
 *
 * A pointwise op is one row of the op table with a scalar expression (its .body): tools/opgen
 * compiles the expression into one inner loop per dtype the family computes in, with the
 * loop shapes below, and makes the op's CPU and Meta kernels calls of the functions here.
 * These run the family's meta function, in PyTorch's order (the op's own dtype check, then
 * TensorIterator's build: overlap, broadcasting, type promotion, devices, then alpha's checks
 * against the result dtype), and the CPU ones compute: inputs whose dtype differs from the
 * computation dtype are converted into temporaries first, and an in-place output of another
 * dtype receives its values through one, as TensorIterator does on CPU.
 *
 * Families (TensorIteratorConfig of PyTorch's structured kernels):
 *   UNARY        out = body(a) in a's dtype                                      neg, relu
 *   UNARY_FLOAT  integer and bool inputs computed in float32 (the default dtype)  sin, exp
 *   BINARY       a and b promoted to their common dtype (result_type), alpha     add, mul
 *   BINARY_FLOAT the same, integers promoted to float32                          div
 * The loops are compiled with wrapping integer arithmetic (-fwrapv), which is what PyTorch's
 * kernels produce on overflow. */
#ifndef CFX_KERNELS_POINTWISE_H
#define CFX_KERNELS_POINTWISE_H

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
} cfx_pointwise_kind;

/* An op's own check, run before anything else: false with the error recorded. b is NULL for
 * a unary op. */
typedef bool (*cfx_pointwise_check_fn)(const char *op, const cfx_tensor *a, const cfx_tensor *b);

/* One pointwise op, as generated from its row. */
typedef struct cfx_pointwise {
    const char *name;            /* "aten::add.Tensor" */
    cfx_pointwise_kind kind;
    bool has_alpha;              /* the schema has a Scalar alpha */
    cfx_pointwise_check_fn check;
    cfx_loop_fn loops[CFX_DTYPE_CODES]; /* by computation dtype; NULL: not computed in it */
} cfx_pointwise;

/* The kernels: a new output (CPU or meta), or the result written into a (in-place; returns a).
 * b is NULL and alpha ignored for a unary op; alpha is ignored unless has_alpha. */
cfx_tensor *cfx_pointwise_cpu(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);
cfx_tensor *cfx_pointwise_meta(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);
cfx_tensor *cfx_pointwise_cpu_inplace(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);
cfx_tensor *cfx_pointwise_meta_inplace(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha);

/* The ops' own checks (their rows name them), with PyTorch's messages. */
bool cfx_pointwise_check_sub(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_neg(const char *op, const cfx_tensor *a, const cfx_tensor *b);
bool cfx_pointwise_check_relu(const char *op, const cfx_tensor *a, const cfx_tensor *b);

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
