/* meta.c - Meta kernels of the structured built-ins: the meta function, then an output.
 *
 * A Meta kernel runs exactly the checks and metadata computation of its CPU twin
 * (structured.c / iter.c) and allocates a meta tensor: no data, storage size tracked. As in
 * PyTorch, the output of a Meta kernel is always a meta tensor, even when some inputs are CPU
 * scalars or (for mm, whose meta function has no device check) CPU matrices.
 *
 * relu is the exception PyTorch 1.13 has: its Meta kernel is the Python reference
 * where(le(a, 0), 0, a), with no bool check and prims' output-stride rule
 * (cfx_iter_relu_meta_strides). */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/structured.h"

static cfx_device meta(void) { return cfx_device_make(CFX_DEVICE_META); }

/* binary's full path: every check in PyTorch's order, then an output as the iterator says. */
static __attribute__((noinline)) cfx_tensor *binary_full(cfx_binop kind, const char *op, cfx_tensor *a,
                                                         cfx_tensor *b, cfx_value alpha)
{
    cfx_iter it;
    const cfx_tensor *in[2] = {a, b};
    if (!cfx_structured_binary_full(&it, kind, op, NULL, in, &alpha))
        return NULL;
    return cfx_iter_new_output(&it, -1, meta());
}

/* Inlined into each wrapper: the shortcut's test then runs with no call in between, and when
 * it passes the output is a's layout in the result dtype, with no iterator filled in. */
CFX_KERNEL_INLINE cfx_tensor *binary(cfx_binop kind, const char *op, cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    const cfx_tensor *in[2] = {a, b};
    cfx_dtype dt;
    if (cfx_structured_binary_test(kind, in, &alpha, &dt))
        return cfx_tensor_new_strided(a->sizes, a->strides, a->ndim, dt, meta());
    return binary_full(kind, op, a, b, alpha);
}

CFX_DEFINE_BINARY_KERNELS(cfx_meta, binary)

cfx_tensor *cfx_meta_add__Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)
{
    cfx_iter it;
    const cfx_tensor *in[2] = {self, other};
    if (!cfx_structured_binary(&it, CFX_BINOP_ADD, "aten::add_.Tensor", self, in, &alpha))
        return NULL;
    cfx_tensor_bump_version(self);
    return self;
}

static cfx_tensor *unary(cfx_unop kind, const char *op, cfx_tensor *a)
{
    cfx_iter it;
    if (!cfx_structured_unary(&it, kind, op, a))
        return NULL;
    return cfx_iter_new_output(&it, -1, meta());
}

cfx_tensor *cfx_meta_neg(cfx_tensor *self) { return unary(CFX_UNOP_NEG, "aten::neg", self); }
cfx_tensor *cfx_meta_sin(cfx_tensor *self) { return unary(CFX_UNOP_SIN, "aten::sin", self); }
cfx_tensor *cfx_meta_cos(cfx_tensor *self) { return unary(CFX_UNOP_COS, "aten::cos", self); }
cfx_tensor *cfx_meta_exp(cfx_tensor *self) { return unary(CFX_UNOP_EXP, "aten::exp", self); }

cfx_tensor *cfx_meta_relu(cfx_tensor *self)
{
    int64_t buf[CFX_MAX_DIMS];
    const int64_t *strides = cfx_iter_relu_meta_strides(self, buf);
    return cfx_tensor_new_strided(self->sizes, strides, self->ndim, (cfx_dtype)self->dtype, meta());
}

cfx_tensor *cfx_meta_sum_dim_IntList(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    cfx_reduce_shape r;
    if (!cfx_structured_sum(&r, "aten::sum.dim_IntList", self, dim, keepdim, dtype))
        return NULL;
    return cfx_tensor_new(r.sizes, r.ndim, r.dtype, meta());
}

cfx_tensor *cfx_meta_mm(cfx_tensor *self, cfx_tensor *mat2)
{
    if (!cfx_structured_mm("aten::mm", self, mat2))
        return NULL;
    int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
    return cfx_tensor_new(sizes, 2, (cfx_dtype)self->dtype, meta());
}

cfx_tensor2 cfx_meta_max_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    cfx_reduce_shape r;
    int64_t w;
    if (!cfx_structured_max_dim(&r, &w, "aten::max.dim", self, dim, keepdim))
        return (cfx_tensor2){NULL, NULL};
    cfx_tensor *values = cfx_tensor_new(r.sizes, r.ndim, r.dtype, meta());
    cfx_tensor *indices = values ? cfx_tensor_new(r.sizes, r.ndim, CFX_INT64, meta()) : NULL;
    if (!indices) {
        cfx_kernel_discard(values);
        return (cfx_tensor2){NULL, NULL};
    }
    return (cfx_tensor2){values, indices};
}

int cfx_kernels_register_meta(const cfx_kernel_libs *L)
{
    const cfx_kernel_reg regs[] = {
        CFX_KERNEL(L->meta, add_Tensor, cfx_meta_add_Tensor),
        CFX_KERNEL(L->meta, sub_Tensor, cfx_meta_sub_Tensor),
        CFX_KERNEL(L->meta, mul_Tensor, cfx_meta_mul_Tensor),
        CFX_KERNEL(L->meta, div_Tensor, cfx_meta_div_Tensor),
        CFX_KERNEL(L->meta, neg, cfx_meta_neg),
        CFX_KERNEL(L->meta, relu, cfx_meta_relu),
        CFX_KERNEL(L->meta, sin, cfx_meta_sin),
        CFX_KERNEL(L->meta, cos, cfx_meta_cos),
        CFX_KERNEL(L->meta, exp, cfx_meta_exp),
        CFX_KERNEL(L->meta, sum_dim_IntList, cfx_meta_sum_dim_IntList),
        CFX_KERNEL(L->meta, mm, cfx_meta_mm),
        CFX_KERNEL(L->meta, add__Tensor, cfx_meta_add__Tensor),
        CFX_KERNEL(L->meta, max_dim, cfx_meta_max_dim),
    };
    return CFX_REGISTER_KERNELS(regs);
}
