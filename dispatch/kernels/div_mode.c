/* div_mode.c - div with rounding_mode (div.Tensor_mode, div.Scalar_mode and their in-place
 * forms).
 *
 * ATen's structured meta function picks the TensorIterator by the mode: None is true division
 * (integers promoted to float, div.Tensor's kernel), "trunc" and "floor" keep the common dtype
 * (integer division stays integer) and run div_trunc_kernel / div_floor_kernel, which refuse
 * bool ("div_trunc_cpu" not implemented for 'Bool') and an integer zero divisor
 * (ZeroDivisionError). Floor division follows Python's: c10::div_floor_integer and
 * div_floor_floating (the quotient rounded towards -inf, computed from fmod so that it agrees
 * with remainder). The Meta kernels are torch._refs.div: true_divide, _div_trunc (trunc of the
 * true quotient, prims.div on integers) or floor_divide, which refuses bool. The Scalar
 * overloads wrap the number and call the Tensor overload (CompositeExplicitAutograd). */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/inplace.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/wrapped_internal.h"

enum { MODE_TRUE, MODE_TRUNC, MODE_FLOOR, MODE_BAD };

static int mode_of(const char *m)
{
    return !m ? MODE_TRUE : !strcmp(m, "trunc") ? MODE_TRUNC : !strcmp(m, "floor") ? MODE_FLOOR : MODE_BAD;
}

/* the C++ meta function's text (CPU) and the reference's ValueError (Meta) */
static int checked_mode(cfx_value v, bool meta)
{
    const char *m = v.kind == CFX_V_STRING ? v.u.s : NULL;
    int k = mode_of(m);
    if (k == MODE_BAD)
        cfx_error_set(CFX_ERR, "aten::div", meta ? "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found %s."
                                                 : "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                      m);
    return k;
}

/* ---- element functions ---------------------------------------------------------------------- */

static inline int64_t div_trunc_int(int64_t a, int64_t b)
{
    return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b; /* INT64_MIN / -1 wraps, as on x86 */
}
static inline int64_t div_floor_int(int64_t a, int64_t b)
{
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
#define DIV_FLOOR_FLOATING(T, FMOD, FLOOR, COPYSIGN)                                            \
    static inline T div_floor_##T(T a, T b)                                                     \
    {                                                                                           \
        if (b == 0)                                                                             \
            return a / b;                                                                       \
        T mod = FMOD(a, b), div = (a - mod) / b;                                                \
        if (mod != 0 && (b < 0) != (mod < 0))                                                   \
            div -= 1;                                                                           \
        if (div == 0)                                                                           \
            return COPYSIGN((T)0, a / b);                                                       \
        T fl = FLOOR(div);                                                                      \
        return div - fl > (T)0.5 ? fl + 1 : fl;                                                 \
    }
DIV_FLOOR_FLOATING(float, fmodf, floorf, copysignf)
DIV_FLOOR_FLOATING(double, fmod, floor, copysign)

#define TRUNC_BODY _Generic(a, float: truncf(a / b), double: trunc(a / b), default: div_trunc_int(a, b))
#define FLOOR_BODY _Generic(a, float: div_floor_float(a, b), double: div_floor_double(a, b), default: div_floor_int(a, b))

#define LOOPS(name, BODY)                                                                       \
    static void name##_f32(char **p, const int64_t *s, int64_t n, const void *ctx)              \
    {                                                                                           \
        CFX_POINTWISE_BINARY_LOOP(float, float, BODY);                                          \
    }                                                                                           \
    static void name##_f64(char **p, const int64_t *s, int64_t n, const void *ctx)              \
    {                                                                                           \
        CFX_POINTWISE_BINARY_LOOP(double, double, BODY);                                        \
    }                                                                                           \
    static void name##_i32(char **p, const int64_t *s, int64_t n, const void *ctx)              \
    {                                                                                           \
        CFX_POINTWISE_BINARY_LOOP(int32_t, int64_t, BODY);                                      \
    }                                                                                           \
    static void name##_i64(char **p, const int64_t *s, int64_t n, const void *ctx)              \
    {                                                                                           \
        CFX_POINTWISE_BINARY_LOOP(int64_t, int64_t, BODY);                                      \
    }
LOOPS(trunc, TRUNC_BODY)
LOOPS(floor, FLOOR_BODY)

static const cfx_pointwise pw_trunc = {
    .name = "aten::div.Tensor_mode", .kind = CFX_POINTWISE_BINARY, .cpu_name = "div_trunc_cpu", .check = cfx_pointwise_check_remainder,
    .loops = {[CFX_FLOAT32] = trunc_f32, [CFX_FLOAT64] = trunc_f64, [CFX_INT32] = trunc_i32, [CFX_INT64] = trunc_i64},
};
static const cfx_pointwise pw_floor = {
    .name = "aten::div.Tensor_mode", .kind = CFX_POINTWISE_BINARY, .cpu_name = "div_floor_cpu", .check = cfx_pointwise_check_remainder,
    .loops = {[CFX_FLOAT32] = floor_f32, [CFX_FLOAT64] = floor_f64, [CFX_INT32] = floor_i32, [CFX_INT64] = floor_i64},
};
/* the references compute in the common dtype without a check of their own */
static const cfx_pointwise ref_trunc = {.name = "aten::div.Tensor_mode", .kind = CFX_POINTWISE_BINARY};

/* floor_divide's reference refuses bool after type promotion */
static bool floor_bool(cfx_tensor *a, cfx_tensor *b)
{
    bool both = a->dtype == CFX_BOOL && (b->dtype == CFX_BOOL || b->is_wrapped_number);
    if (both)
        cfx_error_set(CFX_ERR, "aten::div", "torch.bool not supported for floor_divide");
    return both;
}

/* ---- the kernels ------------------------------------------------------------------------------ */

cfx_tensor *cfx_cpu_div_Tensor_mode(cfx_tensor *self, cfx_tensor *other, cfx_value rounding_mode)
{
    switch (checked_mode(rounding_mode, false)) {
    case MODE_TRUE: return cfx_cpu_div_Tensor(self, other);
    case MODE_TRUNC: return cfx_pointwise_cpu(&pw_trunc, self, other, cfx_int(1));
    case MODE_FLOOR: return cfx_pointwise_cpu(&pw_floor, self, other, cfx_int(1));
    default: return NULL;
    }
}
cfx_tensor *cfx_cpu_div__Tensor_mode(cfx_tensor *self, cfx_tensor *other, cfx_value rounding_mode)
{
    switch (checked_mode(rounding_mode, false)) {
    case MODE_TRUE: return cfx_cpu_div__Tensor(self, other);
    case MODE_TRUNC: return cfx_pointwise_cpu_inplace(&pw_trunc, self, other, cfx_int(1));
    case MODE_FLOOR: return cfx_pointwise_cpu_inplace(&pw_floor, self, other, cfx_int(1));
    default: return NULL;
    }
}
/* The layout of _floor_divide_float's result, found empirically from 2.13 (its last op is
 * where(ne(b, 0), floor_div, basic_div), after a chain of where/copysign): a number b leaves
 * the usual elementwise layout; a tensor b of the result's shape gives b's own layout; a
 * broadcast b a contiguous result. */
static cfx_tensor *floor_float_layout(cfx_tensor *r, cfx_tensor *b)
{
    if (!r || !cfx_dtype_is_floating((cfx_dtype)r->dtype) || b->is_wrapped_number)
        return r;
    bool full = b->ndim == r->ndim;
    for (int d = 0; full && d < r->ndim; d++)
        full = b->sizes[d] == r->sizes[d];
    cfx_tensor *like = full ? cfx_pointwise_meta(&ref_trunc, b, b, cfx_int(1)) : NULL;
    if (full && !like)
        return NULL;
    int64_t st[CFX_MAX_DIMS];
    if (!full)
        cfx_contiguous_strides(r->sizes, r->ndim, st);
    return cfx_tensor_new_strided(r->sizes, full ? like->strides : st, r->ndim, (cfx_dtype)r->dtype, r->device);
}

static cfx_tensor *meta_floor(cfx_tensor *self, cfx_tensor *other)
{
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *r = floor_float_layout(cfx_pointwise_meta(&ref_trunc, self, other, cfx_int(1)), other);
    cfx_tensor_retain(r);
    cfx_scope_end(sc);
    return r ? cfx_autorelease(r) : NULL;
}

cfx_tensor *cfx_meta_div_Tensor_mode(cfx_tensor *self, cfx_tensor *other, cfx_value rounding_mode)
{
    switch (checked_mode(rounding_mode, true)) {
    case MODE_TRUE: return cfx_meta_div_Tensor(self, other);
    case MODE_FLOOR: return floor_bool(self, other) ? NULL : meta_floor(self, other);
    case MODE_TRUNC: return cfx_pointwise_meta(&ref_trunc, self, other, cfx_int(1));
    default: return NULL;
    }
}
/* _make_inplace(div): the reference's result, cast and resized into self */
cfx_tensor *cfx_meta_div__Tensor_mode(cfx_tensor *self, cfx_tensor *other, cfx_value rounding_mode)
{
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *r = cfx_meta_into_self("aten::div_", self, cfx_meta_div_Tensor_mode(self, other, rounding_mode));
    cfx_scope_end(sc);
    return r ? cfx_autorelease(cfx_tensor_retain(r)) : NULL;
}

/* the Scalar overloads: the Tensor overload with the number wrapped */

cfx_tensor *cfx_kernel_div_Scalar_mode(cfx_tensor *self, cfx_value other, cfx_value rounding_mode)
{
    CFX_WITH_WRAPPED(other, cfx_div_Tensor_mode(self, w_, rounding_mode));
}
cfx_tensor *cfx_kernel_div__Scalar_mode(cfx_tensor *self, cfx_value other, cfx_value rounding_mode)
{
    CFX_WITH_WRAPPED(other, cfx_div__Tensor_mode(self, w_, rounding_mode));
}
cfx_tensor *cfx_meta_div_Scalar_mode(cfx_tensor *self, cfx_value other, cfx_value rounding_mode)
{
    CFX_WITH_WRAPPED(other, cfx_meta_div_Tensor_mode(self, w_, rounding_mode));
}
cfx_tensor *cfx_meta_div__Scalar_mode(cfx_tensor *self, cfx_value other, cfx_value rounding_mode)
{
    CFX_WITH_WRAPPED(other, cfx_meta_div__Tensor_mode(self, w_, rounding_mode));
}
