/* pointwise_scalar.c - the Scalar overloads of the pointwise ops (mul.Scalar, eq.Scalar,
 * pow.Tensor_Scalar, ...), rsub, and the ops' own dtype checks that the families cannot say.
 *
 * PyTorch implements a Scalar overload by wrapping the Scalar (wrapped_scalar_tensor: a
 * wrapped number, tensor.h) and calling the Tensor overload: through the dispatcher for the
 * CompositeExplicitAutograd ones (add.Scalar, mul_.Scalar, rsub.Scalar), straight into the
 * structured kernel for the structured ones (eq.Scalar, pow.Tensor_Scalar). Their Meta kernels
 * are the Python references called with a number, which is what the Tensor overload's Meta
 * kernel does with a wrapped number (pointwise_refs.c). So every kernel here is one call with
 * the Scalar wrapped. */
#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/ops.h"
#include "dispatch/wrapped_internal.h"

/* ---- CompositeExplicitAutograd: through the dispatcher ----------------------------------- */

cfx_tensor *cfx_kernel_add_Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_add(self, w_, alpha));
}
cfx_tensor *cfx_kernel_sub_Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_sub(self, w_, alpha));
}
cfx_tensor *cfx_kernel_mul_Scalar(cfx_tensor *self, cfx_value other) { CFX_WITH_WRAPPED(other, cfx_mul(self, w_)); }
cfx_tensor *cfx_kernel_div_Scalar(cfx_tensor *self, cfx_value other) { CFX_WITH_WRAPPED(other, cfx_div(self, w_)); }
cfx_tensor *cfx_kernel_rsub_Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_rsub(self, w_, alpha));
}
cfx_tensor *cfx_kernel_add__Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_add_(self, w_, alpha));
}
cfx_tensor *cfx_kernel_sub__Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_sub_(self, w_, alpha));
}
cfx_tensor *cfx_kernel_mul__Scalar(cfx_tensor *self, cfx_value other) { CFX_WITH_WRAPPED(other, cfx_mul_(self, w_)); }
cfx_tensor *cfx_kernel_div__Scalar(cfx_tensor *self, cfx_value other) { CFX_WITH_WRAPPED(other, cfx_div_(self, w_)); }

/* ---- Meta: the references with a number ----------------------------------------------------- */

/* add.Scalar and sub.Scalar have a meta function of their own, meta_binop_alpha:
 * elementwise_meta(self, other, DEFAULT), the reference's promotion and layout without its
 * checks (neither alpha nor sub's bools are looked at) */
static const cfx_pointwise elementwise_default = {.name = "aten::add.Scalar", .kind = CFX_POINTWISE_BINARY};

cfx_tensor *cfx_meta_add_Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    (void)alpha;
    CFX_WITH_WRAPPED(other, cfx_pointwise_meta(&elementwise_default, self, w_, cfx_int(1)));
}
cfx_tensor *cfx_meta_sub_Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    (void)alpha;
    CFX_WITH_WRAPPED(other, cfx_pointwise_meta(&elementwise_default, self, w_, cfx_int(1)));
}
cfx_tensor *cfx_meta_mul_Scalar(cfx_tensor *self, cfx_value other) { CFX_WITH_WRAPPED(other, cfx_meta_mul_Tensor(self, w_)); }
cfx_tensor *cfx_meta_div_Scalar(cfx_tensor *self, cfx_value other) { CFX_WITH_WRAPPED(other, cfx_meta_div_Tensor(self, w_)); }
/* torch._refs.rsub(a, b): torch.sub(b, a, alpha=alpha) */
cfx_tensor *cfx_meta_rsub_Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_meta_sub_Tensor(w_, self, alpha));
}
cfx_tensor *cfx_meta_add__Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_meta_add__Tensor(self, w_, alpha));
}
cfx_tensor *cfx_meta_sub__Scalar(cfx_tensor *self, cfx_value other, cfx_value alpha)
{
    CFX_WITH_WRAPPED(other, cfx_meta_sub__Tensor(self, w_, alpha));
}
cfx_tensor *cfx_meta_mul__Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_meta_mul__Tensor(self, w_));
}
cfx_tensor *cfx_meta_div__Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_meta_div__Tensor(self, w_));
}

#define BITWISE_SCALAR(name)                                                                    \
    cfx_tensor *cfx_kernel_##name##_Scalar(cfx_tensor *self, cfx_value other)                   \
    {                                                                                           \
        CFX_WITH_WRAPPED(other, cfx_##name##_Tensor(self, w_));                                     \
    }                                                                                           \
    cfx_tensor *cfx_meta_##name##_Scalar(cfx_tensor *self, cfx_value other)                     \
    {                                                                                           \
        CFX_WITH_WRAPPED(other, cfx_meta_##name##_Tensor(self, w_));                                \
    }
BITWISE_SCALAR(bitwise_and)
BITWISE_SCALAR(bitwise_or)
BITWISE_SCALAR(bitwise_xor)

/* logical_not(a) is a == 0 for every dtype (NaN included): the C++ kernel's values and bool
 * result, the reference's own spelling (`a == 0`) on meta */
cfx_tensor *cfx_kernel_logical_not(cfx_tensor *self) { return cfx_cpu_eq_Scalar(self, cfx_int(0)); }
cfx_tensor *cfx_meta_logical_not(cfx_tensor *self) { return cfx_meta_eq_Scalar(self, cfx_int(0)); }

/* ---- rsub.Tensor: at::sub(other, self, alpha) on both keys ------------------------------------ */

cfx_tensor *cfx_cpu_rsub_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    return cfx_cpu_sub_Tensor(other, self, alpha);
}
cfx_tensor *cfx_meta_rsub_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    return cfx_meta_sub_Tensor(other, self, alpha);
}

/* ---- structured Scalar overloads: the Tensor overload's kernel ---------------------------- */

#define COMPARE_SCALAR(name)                                                                    \
    cfx_tensor *cfx_cpu_##name##_Scalar(cfx_tensor *self, cfx_value other)                      \
    {                                                                                           \
        CFX_WITH_WRAPPED(other, cfx_cpu_##name##_Tensor(self, w_));                                 \
    }                                                                                           \
    cfx_tensor *cfx_meta_##name##_Scalar(cfx_tensor *self, cfx_value other)                     \
    {                                                                                           \
        CFX_WITH_WRAPPED(other, cfx_meta_##name##_Tensor(self, w_));                                \
    }
COMPARE_SCALAR(eq)
COMPARE_SCALAR(ne)
COMPARE_SCALAR(lt)
COMPARE_SCALAR(le)
COMPARE_SCALAR(gt)
COMPARE_SCALAR(ge)

cfx_tensor *cfx_cpu_pow_Tensor_Scalar(cfx_tensor *self, cfx_value exponent)
{
    CFX_WITH_WRAPPED(exponent, cfx_cpu_pow_Tensor_Tensor(self, w_));
}
cfx_tensor *cfx_meta_pow_Tensor_Scalar(cfx_tensor *self, cfx_value exponent)
{
    CFX_WITH_WRAPPED(exponent, cfx_meta_pow_Tensor_Tensor(self, w_));
}
/* pow.Scalar's meta function sets a contiguous output of exponent's sizes (no
 * TensorIterator layout); pow_out then fills it */
static cfx_tensor *pow_scalar_contiguous(cfx_tensor *base, cfx_tensor *exponent)
{
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *r = cfx_cpu_pow_Tensor_Tensor(base, exponent), *c = r;
    if (r && !cfx_tensor_is_contiguous(r)) {
        c = cfx_tensor_new(r->sizes, r->ndim, (cfx_dtype)r->dtype, r->device);
        if (c)
            cfx_cpu_copy(c, r);
    }
    cfx_tensor_retain(c);
    cfx_scope_end(sc);
    return c ? cfx_autorelease(c) : NULL;
}

cfx_tensor *cfx_cpu_pow_Scalar(cfx_value self, cfx_tensor *exponent)
{
    CFX_WITH_WRAPPED(self, pow_scalar_contiguous(w_, exponent));
}
cfx_tensor *cfx_meta_pow_Scalar(cfx_value self, cfx_tensor *exponent)
{
    CFX_WITH_WRAPPED(self, cfx_meta_pow_Tensor_Tensor(w_, exponent));
}

/* ---- the C++ kernels' own dtype checks ------------------------------------------------------ */

/* silu_cpu dispatches on floating types only */
bool cfx_pointwise_check_silu(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    (void)b;
    if (cfx_dtype_is_floating((cfx_dtype)a->dtype))
        return true;
    cfx_kernel_not_implemented(op, "silu_cpu", (cfx_dtype)a->dtype);
    return false;
}
