/* loops.c - the strided iteration engine of the CPU kernels, and copy-with-cast.
 *
 * cfx_loop_init orders the output's dimensions innermost-first by stride, gives every input
 * its broadcast byte strides (0 along broadcast dimensions), and coalesces dimensions the way
 * TensorIterator does: two neighbours merge when one has size 1 or every operand's stride
 * carries over (shape0 * stride0 == stride1). A contiguous operation of any rank therefore
 * runs as one call of the typed inner function, which is where the fast paths live.
 *
 * The 64 conversion loops are generated from one dtype list; conversions follow c10: to bool
 * is "!= 0" (NaN is true), float to integer truncates and saturates to INT_MIN as x86 does,
 * integer narrowing wraps. */
#include <stdbool.h>
#include <string.h>

#include "dispatch/conj_internal.h"
#include "dispatch/neg_internal.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/loops.h"

void cfx_loop_init(cfx_loop *l, cfx_tensor *out, const cfx_tensor *const *in, int nin)
{
    int n = out->ndim;
    l->ntensors = 1 + nin;
    l->ptr[0] = cfx_tensor_data(out);
    for (int k = 0; k < nin; k++)
        l->ptr[1 + k] = cfx_tensor_data(in[k]);

    /* innermost first: start from the last dim, stable insertion by output stride */
    int perm[CFX_MAX_DIMS];
    for (int j = 0; j < n; j++) {
        int d = n - 1 - j, i = j - 1;
        for (; i >= 0 && out->strides[perm[i]] > out->strides[d]; i--)
            perm[i + 1] = perm[i];
        perm[i + 1] = d;
    }
    size_t es[CFX_LOOP_MAX_OPERANDS];
    es[0] = cfx_dtype_size((cfx_dtype)out->dtype);
    for (int k = 0; k < nin; k++)
        es[1 + k] = cfx_dtype_size((cfx_dtype)in[k]->dtype);
    for (int j = 0; j < n; j++) {
        int d = perm[j];
        l->shape[j] = out->sizes[d];
        l->stride[j][0] = out->strides[d] * (int64_t)es[0];
        for (int k = 0; k < nin; k++) {
            const cfx_tensor *t = in[k];
            int td = d - (n - t->ndim);
            int64_t s = 0;
            if (td >= 0 && !(t->sizes[td] == 1 && out->sizes[d] != 1))
                s = t->strides[td] * (int64_t)es[1 + k];
            l->stride[j][1 + k] = s;
        }
    }
    /* coalesce_dimensions */
    int nt = l->ntensors;
    if (n > 1) {
        int prev = 0;
        for (int d = 1; d < n; d++) {
            bool can = l->shape[prev] == 1 || l->shape[d] == 1;
            if (!can) {
                can = true;
                for (int k = 0; k < nt && can; k++)
                    can = l->shape[prev] * l->stride[prev][k] == l->stride[d][k];
            }
            if (can) {
                if (l->shape[prev] == 1)
                    for (int k = 0; k < nt; k++)
                        l->stride[prev][k] = l->stride[d][k];
                l->shape[prev] *= l->shape[d];
            } else {
                prev++;
                if (prev != d) {
                    for (int k = 0; k < nt; k++)
                        l->stride[prev][k] = l->stride[d][k];
                    l->shape[prev] = l->shape[d];
                }
            }
        }
        n = prev + 1;
    }
    l->ndim = n;
}

void cfx_loop_run(const cfx_loop *l, cfx_loop_fn fn, const void *ctx)
{
    int n = l->ndim, nt = l->ntensors;
    char *p[CFX_LOOP_MAX_OPERANDS];
    for (int k = 0; k < nt; k++)
        p[k] = l->ptr[k];
    if (n == 0) {
        static const int64_t zero[CFX_LOOP_MAX_OPERANDS];
        fn(p, zero, 1, ctx);
        return;
    }
    for (int d = 0; d < n; d++)
        if (l->shape[d] == 0)
            return;
    if (n == 1) {
        fn(p, l->stride[0], l->shape[0], ctx);
        return;
    }
    int64_t idx[CFX_MAX_DIMS];
    memset(idx, 0, (size_t)n * sizeof idx[0]);
    for (;;) {
        fn(p, l->stride[0], l->shape[0], ctx);
        int d = 1;
        for (; d < n; d++) {
            for (int k = 0; k < nt; k++)
                p[k] += l->stride[d][k];
            if (++idx[d] < l->shape[d])
                break;
            for (int k = 0; k < nt; k++)
                p[k] -= l->stride[d][k] * l->shape[d];
            idx[d] = 0;
        }
        if (d == n)
            return;
    }
}

/* ---- conversions ---------------------------------------------------------------------------- */

#define CONV_F_F(D, v) ((D)(v))
#define CONV_F_I(D, v) ((D)(v))
#define CONV_F_B(D, v) ((D)(v))
#define CONV_B_F(D, v) ((v) != 0)
#define CONV_B_I(D, v) ((v) != 0)
#define CONV_B_B(D, v) (v)
#define CONV_I_F(D, v) ((D)_Generic((D)0, int64_t: cfx_conv_f64_i64, default: cfx_conv_f64_i32)((double)(v)))
#define CONV_I_I(D, v) ((D)(v))
#define CONV_I_B(D, v) ((D)(v))

#define SRC_TYPES(X, D, DK) X(D, DK, float, F) X(D, DK, double, F) X(D, DK, int64_t, I) \
    X(D, DK, int32_t, I) X(D, DK, bool, B) X(D, DK, uint8_t, I) X(D, DK, int8_t, I) X(D, DK, int16_t, I) \
    X(D, DK, cfx_complex64, F) X(D, DK, cfx_complex128, F)
/* C's conversions are c10's for the complex types too: to a real type the imaginary part is
 * discarded, to bool both parts count (1j is true) */
#define DST_TYPES(Y) Y(float, F) Y(double, F) Y(int64_t, I) Y(int32_t, I) Y(bool, B) Y(uint8_t, I) Y(int8_t, I) \
    Y(int16_t, I) Y(cfx_complex64, F) Y(cfx_complex128, F)

#define DEFINE_COPY(D, DK, S, SK)                                                         \
    static void copy_##D##_##S(char **p, const int64_t *s, int64_t n, const void *ctx)    \
    {                                                                                     \
        (void)ctx;                                                                        \
        char *o = p[0];                                                                   \
        const char *a = p[1];                                                             \
        if (s[0] == (int64_t)sizeof(D) && s[1] == (int64_t)sizeof(S)) {                   \
            D *od = (D *)o;                                                               \
            const S *as = (const S *)a;                                                   \
            for (int64_t i = 0; i < n; i++)                                               \
                od[i] = CONV_##DK##_##SK(D, as[i]);                                       \
            return;                                                                       \
        }                                                                                 \
        for (int64_t i = 0; i < n; i++, o += s[0], a += s[1]) {                           \
            S v;                                                                          \
            memcpy(&v, a, sizeof v);                                                      \
            D r = CONV_##DK##_##SK(D, v);                                                 \
            memcpy(o, &r, sizeof r);                                                      \
        }                                                                                 \
    }
#define DEFINE_COPIES_TO(D, DK) SRC_TYPES(DEFINE_COPY, D, DK)
DST_TYPES(DEFINE_COPIES_TO)

#define COPY_ENTRY(D, DK, S, SK) copy_##D##_##S,
#define COPY_ROW(D, DK) {SRC_TYPES(COPY_ENTRY, D, DK)},
static const cfx_loop_fn copy_fns[10][10] = {DST_TYPES(COPY_ROW)};

/* Row/column of a dtype in the tables above (float, double, int64, int32, bool, uint8, int8,
 * int16, complex64, complex128). */
static int dtype_slot(cfx_dtype t)
{
    switch (t) {
    case CFX_FLOAT32: return 0;
    case CFX_FLOAT64: return 1;
    case CFX_INT64: return 2;
    case CFX_INT32: return 3;
    case CFX_BOOL: return 4;
    case CFX_UINT8: return 5;
    case CFX_INT8: return 6;
    case CFX_INT16: return 7;
    case CFX_COMPLEX64: return 8;
    case CFX_COMPLEX128: return 9;
    }
    return 0;
}

static void copy_same(char **p, const int64_t *s, int64_t n, const void *ctx)
{
    size_t es = *(const size_t *)ctx;
    if (s[0] == (int64_t)es && s[1] == (int64_t)es) {
        memmove(p[0], p[1], (size_t)n * es);
        return;
    }
    char *o = p[0];
    const char *a = p[1];
    for (int64_t i = 0; i < n; i++, o += s[0], a += s[1])
        memcpy(o, a, es);
}

void cfx_cpu_copy(cfx_tensor *dst, const cfx_tensor *src)
{
    cfx_loop l;
    const cfx_tensor *in[1] = {src};
    cfx_loop_init(&l, dst, in, 1);
    if (dst->dtype == src->dtype) {
        size_t es = cfx_dtype_size((cfx_dtype)dst->dtype);
        cfx_loop_run(&l, copy_same, &es);
    } else {
        cfx_loop_run(&l, copy_fns[dtype_slot((cfx_dtype)dst->dtype)][dtype_slot((cfx_dtype)src->dtype)], NULL);
    }
    /* copy_impl's conj handling: a conjugate view's values are its data's conjugates */
    if (cfx_is_conj(src) != cfx_is_conj(dst))
        cfx_conj_data_inplace(dst);
    /* and its neg handling (copy_kernel's requires_neg): a negative view's values are its
     * data's negatives */
    if (cfx_is_neg(src) != cfx_is_neg(dst))
        cfx_neg_data_inplace(dst);
}

cfx_tensor *cfx_cpu_to_dtype(const cfx_tensor *src, cfx_dtype dtype)
{
    if ((cfx_dtype)src->dtype == dtype)
        return (cfx_tensor *)src;
    int64_t strides[CFX_MAX_DIMS];
    cfx_geom_preserve_strides(src->sizes, src->strides, src->ndim, strides);
    cfx_tensor *t = cfx_tensor_new_strided(src->sizes, strides, src->ndim, dtype,
                                           cfx_device_make(CFX_DEVICE_CPU));
    if (t)
        cfx_cpu_copy(t, src);
    return t;
}

const cfx_tensor *cfx_cpu_contiguous(const cfx_tensor *src)
{
    if (cfx_tensor_is_contiguous(src))
        return src;
    cfx_tensor *t = cfx_tensor_new(src->sizes, src->ndim, (cfx_dtype)src->dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (t)
        cfx_cpu_copy(t, src);
    return t;
}
