/* composite.c - the CompositeExplicitAutogradNonFunctional kernels of the structured ops.
 *
 * PyTorch 1.13 registers every structured operator (add, sub, mul, div, neg, sin, cos, exp,
 * sum.dim_IntList, mm, add_, max.dim) a third time, on CompositeExplicitAutogradNonFunctional: a
 * backend-generic kernel that allocates the output on the inputs' device and runs that
 * device's implementation. It fills the Undefined slot and every backend without its own
 * kernel in the computed dispatch table. Ours picks the Meta kernel when any input is a meta
 * tensor and the CPU kernel otherwise, which is what the generic kernel amounts to with the
 * two backends cfx has. */
#include "dispatch/kernels/kernels.h"

static bool is_meta(const cfx_tensor *t) { return t->device.type == CFX_DEVICE_META; }

static cfx_tensor *add_generic(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    return is_meta(self) || is_meta(other) ? cfx_meta_add_Tensor(self, other, alpha)
                                           : cfx_cpu_add_Tensor(self, other, alpha);
}

static cfx_tensor *sub_generic(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    return is_meta(self) || is_meta(other) ? cfx_meta_sub_Tensor(self, other, alpha)
                                           : cfx_cpu_sub_Tensor(self, other, alpha);
}

static cfx_tensor *add__generic(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    return is_meta(self) || is_meta(other) ? cfx_meta_add__Tensor(self, other, alpha)
                                           : cfx_cpu_add__Tensor(self, other, alpha);
}

static cfx_tensor *mul_generic(cfx_tensor *self, cfx_tensor *other)
{
    return is_meta(self) || is_meta(other) ? cfx_meta_mul_Tensor(self, other) : cfx_cpu_mul_Tensor(self, other);
}

static cfx_tensor *div_generic(cfx_tensor *self, cfx_tensor *other)
{
    return is_meta(self) || is_meta(other) ? cfx_meta_div_Tensor(self, other) : cfx_cpu_div_Tensor(self, other);
}

static cfx_tensor *mm_generic(cfx_tensor *self, cfx_tensor *mat2)
{
    return is_meta(self) || is_meta(mat2) ? cfx_meta_mm(self, mat2) : cfx_cpu_mm(self, mat2);
}

static cfx_tensor *neg_generic(cfx_tensor *self) { return is_meta(self) ? cfx_meta_neg(self) : cfx_cpu_neg(self); }
static cfx_tensor *sin_generic(cfx_tensor *self) { return is_meta(self) ? cfx_meta_sin(self) : cfx_cpu_sin(self); }
static cfx_tensor *cos_generic(cfx_tensor *self) { return is_meta(self) ? cfx_meta_cos(self) : cfx_cpu_cos(self); }
static cfx_tensor *exp_generic(cfx_tensor *self) { return is_meta(self) ? cfx_meta_exp(self) : cfx_cpu_exp(self); }

static cfx_tensor *sum_generic(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    return is_meta(self) ? cfx_meta_sum_dim_IntList(self, dim, keepdim, dtype)
                         : cfx_cpu_sum_dim_IntList(self, dim, keepdim, dtype);
}

static cfx_tensor2 max_dim_generic(cfx_tensor *self, int64_t dim, bool keepdim)
{
    return is_meta(self) ? cfx_meta_max_dim(self, dim, keepdim) : cfx_cpu_max_dim(self, dim, keepdim);
}

int cfx_kernels_register_composite(const cfx_kernel_libs *L)
{
    const cfx_kernel_reg regs[] = {
        CFX_KERNEL(L->ceanf, add_Tensor, add_generic),
        CFX_KERNEL(L->ceanf, sub_Tensor, sub_generic),
        CFX_KERNEL(L->ceanf, mul_Tensor, mul_generic),
        CFX_KERNEL(L->ceanf, div_Tensor, div_generic),
        CFX_KERNEL(L->ceanf, neg, neg_generic),
        CFX_KERNEL(L->ceanf, sin, sin_generic),
        CFX_KERNEL(L->ceanf, cos, cos_generic),
        CFX_KERNEL(L->ceanf, exp, exp_generic),
        CFX_KERNEL(L->ceanf, sum_dim_IntList, sum_generic),
        CFX_KERNEL(L->ceanf, mm, mm_generic),
        CFX_KERNEL(L->ceanf, add__Tensor, add__generic),
        CFX_KERNEL(L->ceanf, max_dim, max_dim_generic),
    };
    return CFX_REGISTER_KERNELS(regs);
}
