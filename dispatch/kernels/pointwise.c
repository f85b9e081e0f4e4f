/* pointwise.c - the pointwise families' CPU kernels (pointwise.h): PyTorch's C++ structured
 * kernels.
 *
 * The meta function is PyTorch's TORCH_META_FUNC of the family, in its order: a non-number
 * alpha is the argument-binding error, then the op's own dtype check (sub's bool checks come
 * before broadcasting), then TensorIterator's build (iter.c), then alpha against the result
 * dtype. The CPU kernels run it and compute in the common dtype. (The Meta kernels are the
 * Python references since 2.13, in pointwise_refs.c.) */
#include <stdlib.h>

#include "dispatch/boxing.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/kernels/structured.h"
#include "dispatch/scope.h"

static const cfx_iter_config configs[] = {
    [CFX_POINTWISE_UNARY] = {.check_mem_overlap = true},
    [CFX_POINTWISE_UNARY_FLOAT] = {.promote_inputs = true, .int_to_float = true, .check_mem_overlap = true},
    [CFX_POINTWISE_BINARY] = {.promote_inputs = true, .allow_cpu_scalars = true, .check_mem_overlap = true},
    [CFX_POINTWISE_BINARY_FLOAT] = {.promote_inputs = true, .int_to_float = true, .allow_cpu_scalars = true,
                                    .check_mem_overlap = true},
    [CFX_POINTWISE_COMPARE] = {.promote_inputs = true, .allow_cpu_scalars = true, .check_mem_overlap = true},
};

static bool is_binary(const cfx_pointwise *p)
{
    return p->kind == CFX_POINTWISE_BINARY || p->kind == CFX_POINTWISE_BINARY_FLOAT ||
           p->kind == CFX_POINTWISE_COMPARE;
}

/* The argument-binding error PyTorch raises when alpha is not a number (boxing.c's text). */
bool cfx_pointwise_alpha_ok(const cfx_pointwise *p, cfx_value alpha)
{
    if (!p->has_alpha || cfx_value_is_number(alpha))
        return true;
    cfx_op *h = cfx_op_find(p->name);
    const cfx_schema *sc = h ? cfx_op_schema(h) : NULL;
    int i = sc ? cfx_schema_find_arg(sc, "alpha") : -1;
    if (i < 0)
        cfx_error_set(CFX_ERR, p->name, "%s: alpha must be a number", p->name);
    else
        cfx_argument_type_error(sc, p->name, i, alpha);
    return false;
}

/* The family's meta function for out = op(a[, b]) (out: the in-place output or NULL). */
static bool meta_function(const cfx_pointwise *p, cfx_iter *it, const cfx_tensor *out, const cfx_tensor *a,
                          const cfx_tensor *b, cfx_value alpha)
{
    if (!cfx_pointwise_alpha_ok(p, alpha))
        return false;
    if (p->check && !p->check(p->name, a, b))
        return false;
    const cfx_tensor *in[2] = {a, b};
    if (!cfx_iter_build(it, &configs[p->kind], p->name, out, in, is_binary(p) ? 2 : 1))
        return false;
    if (p->has_alpha) {
        cfx_dtype dt = it->common_dtype;
        if (alpha.kind == CFX_V_BOOL && dt != CFX_BOOL) {
            cfx_error_set(CFX_ERR, p->name, "Boolean alpha only supported for Boolean results.");
            return false;
        }
        if (!cfx_dtype_is_floating(dt) && !cfx_dtype_is_complex(dt) && alpha.kind == CFX_V_DOUBLE) {
            cfx_error_set(CFX_ERR, p->name,
                          "For integral input tensors, argument alpha must not be a floating point number.");
            return false;
        }
    }
    return true;
}

/* Computes the op into out (laid out as the iterator says) in dtype dt. Inputs of another
 * dtype and an output of another dtype go through temporaries in dt, in a scope of their own
 * so that they die here. */
static bool compute(const cfx_pointwise *p, cfx_dtype dt, cfx_tensor *out, const cfx_tensor *a, const cfx_tensor *b,
                    cfx_value alpha)
{
    cfx_loop_fn fn = (unsigned)dt < CFX_DTYPE_CODES ? p->loops[dt] : NULL;
    if (!fn) {
        cfx_kernel_not_implemented(p->name, p->cpu_name ? p->cpu_name : p->name, dt);
        return false;
    }
    /* alpha as the kernel reads it, Scalar::to<scalar_t>(): in a bool computation any
     * nonzero alpha is true (a + (-1) * b is a || b there, not a - b) */
    cfx_pointwise_alpha ctx = {cfx_value_to_double(alpha), cfx_scalar_to_int64(alpha)};
    if (dt == CFX_BOOL)
        ctx.i = ctx.i != 0;
    int nin = is_binary(p) ? 2 : 1;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *in[2] = {cfx_cpu_to_dtype(a, dt), b ? cfx_cpu_to_dtype(b, dt) : NULL};
    cfx_tensor *target = out;
    if ((cfx_dtype)out->dtype != dt)
        target = cfx_tensor_new_strided(out->sizes, out->strides, out->ndim, dt, out->device);
    bool ok = in[0] && (nin == 1 || in[1]) && target;
    if (ok) {
        cfx_loop l;
        cfx_loop_init(&l, target, in, nin);
        cfx_loop_run(&l, fn, &ctx);
        /* a .to_real op computes complex -> complex and keeps the real part, as ATen's
         * unary_op_impl_with_complex_to_float_out (result.copy_(at::real(complex_result))) */
        const cfx_tensor *from = target;
        if (target != out && p->to_real && cfx_dtype_is_complex(dt) && !cfx_dtype_is_complex((cfx_dtype)out->dtype))
            ok = (from = cfx_kernel_real_part(target)) != NULL;
        if (ok && target != out)
            cfx_cpu_copy(out, from);
    }
    cfx_scope_end(s);
    return ok;
}

cfx_tensor *cfx_pointwise_cpu(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    cfx_iter it;
    if (!meta_function(p, &it, NULL, a, b, alpha))
        return NULL;
    /* a comparison's result is bool: computed in the common dtype, then converted; a .to_real
     * op's is the real dtype of a complex one, in the input's layout (abs: empty_like) or
     * contiguous (angle: resize_output of an empty result) */
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    cfx_tensor *out;
    if (p->to_real && cfx_dtype_is_complex(it.common_dtype)) {
        cfx_dtype rt = cfx_dtype_to_real(it.common_dtype);
        out = p->to_real == 2 ? cfx_tensor_new(it.shape, it.ndim, rt, cpu) : cfx_iter_new_output(&it, (int)rt, cpu);
    } else {
        out = cfx_iter_new_output(&it, p->kind == CFX_POINTWISE_COMPARE ? CFX_BOOL : -1, cpu);
    }
    if (out && !compute(p, it.common_dtype, out, a, b, alpha)) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_pointwise_cpu_inplace(const cfx_pointwise *p, cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    cfx_iter it;
    if (!meta_function(p, &it, a, a, b, alpha) || !compute(p, it.common_dtype, a, a, b, alpha))
        return NULL;
    cfx_tensor_bump_version(a);
    return a;
}

/* ---- the ops' own checks in their C++ kernels --------------------------------------------- */

/* remainder (and div's trunc and floor modes) on integers: the kernel's TORCH_CHECK(b != 0,
 * "ZeroDivisionError") per element; two bools compute in bool, which the dtype dispatch
 * refuses first */
bool cfx_pointwise_check_remainder(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    if (cfx_dtype_is_floating((cfx_dtype)a->dtype) || cfx_dtype_is_floating((cfx_dtype)b->dtype))
        return true;
    if (a->dtype == CFX_BOOL && b->dtype == CFX_BOOL)
        return true;
    int64_t n = cfx_tensor_numel(b);
    for (int64_t i = 0; i < n; i++)
        if (cfx_tensor_get_double(b, i) == 0) {
            cfx_error_set(CFX_ERR, op, "ZeroDivisionError");
            return false;
        }
    return true;
}

bool cfx_pointwise_check_sub(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    if (a->dtype == CFX_BOOL && b->dtype == CFX_BOOL) {
        cfx_error_set(CFX_ERR, op,
                      "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                      "`logical_xor()` operator instead.");
        return false;
    }
    if (a->dtype == CFX_BOOL || b->dtype == CFX_BOOL) {
        cfx_error_set(CFX_ERR, op,
                      "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                      "invert a mask, use the `~` or `logical_not()` operator instead.");
        return false;
    }
    return true;
}

bool cfx_pointwise_check_neg(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    (void)b;
    if (a->dtype != CFX_BOOL)
        return true;
    cfx_error_set(CFX_ERR, op,
                  "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                  "mask, use the `~` or `logical_not()` operator instead.");
    return false;
}

/* abs_ (UnaryOps.cpp): its result would be real */
bool cfx_pointwise_check_abs_(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    (void)b;
    if (!cfx_dtype_is_complex((cfx_dtype)a->dtype))
        return true;
    cfx_error_set(CFX_ERR, op, "In-place abs is not supported for complex tensors.");
    return false;
}

bool cfx_pointwise_check_relu(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    (void)b;
    if (cfx_dtype_is_complex((cfx_dtype)a->dtype)) { /* relu is clamp_min(0) in C++ */
        cfx_error_set(CFX_ERR_NOTIMPL, op, "clamp is not supported for complex types");
        return false;
    }
    if (a->dtype != CFX_BOOL)
        return true;
    cfx_error_set(CFX_ERR, op, "Boolean inputs not supported for relu");
    return false;
}
