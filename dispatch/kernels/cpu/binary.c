/* binary.c - CPU kernels of add, sub, mul, div (and the in-place add_).
 *
 * The meta function (structured.c) decides shape, dtype and layout; this file only computes.
 * Arithmetic runs in the common dtype, as TensorIterator arranges on CPU: an input of another
 * dtype is first converted into a temporary, and an in-place output of another dtype receives
 * its values through a temporary in the common dtype. Inner loops are generated per
 * (operation, dtype) with fast paths for contiguous operands and for a broadcast scalar
 * operand; integer arithmetic wraps (done in unsigned types, as the hardware does).
 * sub is add with -alpha, as in ATen (a + (-alpha) * b). */
#include <stdbool.h>
#include <stdint.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"
#include "dispatch/scope.h"

typedef struct alpha_ctx {
    double d;
    int64_t i;
} alpha_ctx;

/* The three-operand loop with its fast paths; EXPR computes from a, b (and alpha). */
#define BINARY_LOOP(NAME, T, ALPHA_T, ALPHA_FIELD, EXPR)                                      \
    static void NAME(char **p, const int64_t *s, int64_t n, const void *ctx)                 \
    {                                                                                        \
        const ALPHA_T alpha = (ALPHA_T)((const alpha_ctx *)ctx)->ALPHA_FIELD;                \
        (void)alpha;                                                                         \
        const int64_t es = (int64_t)sizeof(T);                                               \
        T *o = (T *)p[0];                                                                    \
        const T *x = (const T *)p[1], *y = (const T *)p[2];                                  \
        if (s[0] == es && s[1] == es && s[2] == es) {                                        \
            for (int64_t i = 0; i < n; i++) {                                                \
                T a = x[i], b = y[i];                                                        \
                o[i] = (EXPR);                                                               \
            }                                                                                \
        } else if (s[0] == es && s[1] == es && s[2] == 0) {                                  \
            T b = *y;                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                \
                T a = x[i];                                                                  \
                o[i] = (EXPR);                                                               \
            }                                                                                \
        } else if (s[0] == es && s[1] == 0 && s[2] == es) {                                  \
            T a = *x;                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                \
                T b = y[i];                                                                  \
                o[i] = (EXPR);                                                               \
            }                                                                                \
        } else {                                                                             \
            char *po = p[0];                                                                 \
            const char *pa = p[1], *pb = p[2];                                               \
            for (int64_t i = 0; i < n; i++, po += s[0], pa += s[1], pb += s[2]) {            \
                T a = *(const T *)pa, b = *(const T *)pb;                                    \
                *(T *)po = (EXPR);                                                           \
            }                                                                                \
        }                                                                                    \
    }

/* wrapping integer arithmetic */
#define WADD(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define WSUB(T, U, a, b) ((T)((U)(a) - (U)(b)))
#define WMUL(T, U, a, b) ((T)((U)(a) * (U)(b)))

BINARY_LOOP(add_f32, float, float, d, a + alpha * b)
BINARY_LOOP(add_f64, double, double, d, a + alpha * b)
BINARY_LOOP(add_i64, int64_t, int64_t, i, WADD(int64_t, uint64_t, a, WMUL(int64_t, uint64_t, alpha, b)))
BINARY_LOOP(add_i32, int32_t, int32_t, i, WADD(int32_t, uint32_t, a, WMUL(int32_t, uint32_t, alpha, b)))
BINARY_LOOP(add_b8, bool, bool, i, a || (alpha && b))
BINARY_LOOP(mul_f32, float, float, d, a * b)
BINARY_LOOP(mul_f64, double, double, d, a * b)
BINARY_LOOP(mul_i64, int64_t, int64_t, i, WMUL(int64_t, uint64_t, a, b))
BINARY_LOOP(mul_i32, int32_t, int32_t, i, WMUL(int32_t, uint32_t, a, b))
BINARY_LOOP(mul_b8, bool, bool, i, a && b)
BINARY_LOOP(div_f32, float, float, d, a / b)
BINARY_LOOP(div_f64, double, double, d, a / b)

static cfx_loop_fn pick(cfx_binop kind, cfx_dtype dt)
{
    static const cfx_loop_fn add[] = {add_f32, add_f64, add_i64, add_i32, add_b8};
    static const cfx_loop_fn mul[] = {mul_f32, mul_f64, mul_i64, mul_i32, mul_b8};
    static const cfx_loop_fn dv[] = {div_f32, div_f64, NULL, NULL, NULL};
    int slot = dt == CFX_FLOAT32 ? 0 : dt == CFX_FLOAT64 ? 1 : dt == CFX_INT64 ? 2 : dt == CFX_INT32 ? 3 : 4;
    switch (kind) {
    case CFX_BINOP_ADD:
    case CFX_BINOP_SUB: return add[slot];
    case CFX_BINOP_MUL: return mul[slot];
    case CFX_BINOP_DIV: return dv[slot];
    }
    return NULL;
}

/* Runs out = a (op) b in dtype dt; out has the iteration shape. */
static bool compute(cfx_binop kind, cfx_dtype dt, cfx_tensor *out, const cfx_tensor *a,
                    const cfx_tensor *b, cfx_value alpha)
{
    alpha_ctx ac = {cfx_scalar_to_double(alpha), cfx_scalar_to_int64(alpha)};
    if (kind == CFX_BINOP_SUB) {
        ac.d = -ac.d;
        ac.i = (int64_t)(0 - (uint64_t)ac.i);
    }
    cfx_loop_fn fn = pick(kind, dt);
    bool fast = (cfx_dtype)a->dtype == dt && (cfx_dtype)b->dtype == dt && (cfx_dtype)out->dtype == dt;
    if (fast) {
        cfx_loop l;
        const cfx_tensor *in[2] = {a, b};
        cfx_loop_init(&l, out, in, 2);
        cfx_loop_run(&l, fn, &ac);
        return true;
    }
    /* temporaries live in a scope of their own so that they die here */
    cfx_scope s = cfx_scope_begin();
    bool ok = false;
    const cfx_tensor *in[2] = {cfx_cpu_to_dtype(a, dt), cfx_cpu_to_dtype(b, dt)};
    cfx_tensor *target = out;
    if ((cfx_dtype)out->dtype != dt)
        target = cfx_tensor_new_strided(out->sizes, out->strides, out->ndim, dt, out->device);
    if (in[0] && in[1] && target) {
        cfx_loop l;
        cfx_loop_init(&l, target, in, 2);
        cfx_loop_run(&l, fn, &ac);
        if (target != out)
            cfx_cpu_copy(out, target);
        ok = true;
    }
    cfx_scope_end(s);
    return ok;
}

static cfx_tensor *binary(cfx_binop kind, const char *op, cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    cfx_iter it;
    const cfx_tensor *in[2] = {a, b};
    if (!cfx_structured_binary(&it, kind, op, NULL, in, &alpha))
        return NULL;
    cfx_tensor *out = cfx_iter_new_output(&it, -1, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    if (!compute(kind, it.common_dtype, out, a, b, alpha)) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

CFX_DEFINE_BINARY_KERNELS(cfx_cpu, binary)

cfx_tensor *cfx_cpu_add__Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    cfx_iter it;
    const cfx_tensor *in[2] = {self, other};
    if (!cfx_structured_binary(&it, CFX_BINOP_ADD, "aten::add_.Tensor", self, in, &alpha))
        return NULL;
    if (!compute(CFX_BINOP_ADD, it.common_dtype, self, self, other, alpha))
        return NULL;
    cfx_tensor_bump_version(self);
    return self;
}

int cfx_kernels_register_cpu_binary(const cfx_kernel_libs *L)
{
    const cfx_kernel_reg regs[] = {
        CFX_KERNEL(L->cpu, add_Tensor, cfx_cpu_add_Tensor),
        CFX_KERNEL(L->cpu, sub_Tensor, cfx_cpu_sub_Tensor),
        CFX_KERNEL(L->cpu, mul_Tensor, cfx_cpu_mul_Tensor),
        CFX_KERNEL(L->cpu, div_Tensor, cfx_cpu_div_Tensor),
        CFX_KERNEL(L->cpu, add__Tensor, cfx_cpu_add__Tensor),
    };
    return CFX_REGISTER_KERNELS(regs);
}
