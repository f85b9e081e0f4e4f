/* kernels.h - the built-in kernels as plain C functions, and their registration hooks.
 *
 * Kernels have exactly their operator's unboxed signature (cfx_kfn_<id> in ops.h) and are
 * callable directly, without the dispatcher (the benchmarks compare against that). Each
 * kernel file registers its own kernels with CFX_IMPL_OP into the IMPL libraries that
 * cfx_builtin_ops_init creates, one per dispatch key as PyTorch's TORCH_LIBRARY_IMPL blocks,
 * so a dump shows the file and line of each kernel. Which keys an op gets follows PyTorch
 * 1.13's registrations (see ops.c). */
#ifndef CFX_KERNELS_KERNELS_H
#define CFX_KERNELS_KERNELS_H

#include "dispatch/ops.h"
#include "dispatch/scope.h"

typedef struct cfx_kernel_libs {
    cfx_library *cpu;            /* CPU */
    cfx_library *meta;           /* Meta */
    cfx_library *backend_select; /* BackendSelect */
    cfx_library *cea;            /* CompositeExplicitAutograd */
    cfx_library *ceanf;          /* CompositeExplicitAutogradNonFunctional */
} cfx_kernel_libs;

/* Keeps the first failing status of a sequence of registrations. */
#define CFX_KEEP_FIRST(rc, call)        \
    do {                                \
        int rc_ = (call);               \
        if ((rc) == CFX_OK && rc_ < 0)  \
            (rc) = rc_;                 \
    } while (0)

/* One entry of a kernel registration list. CFX_KERNEL checks fn against op id's C signature
 * (as CFX_IMPL_OP does) and keeps the line it is written on, so each kernel's "registered at
 * FILE:LINE" still points at its own entry, as a TORCH_LIBRARY_IMPL m.impl line does. */
typedef struct cfx_kernel_reg {
    cfx_library *lib;
    cfx_opid id;
    cfx_fnptr fn;
    cfx_boxed_fn boxed;
    int line;
} cfx_kernel_reg;
#define CFX_KERNEL(lib, id, fn) {(lib), CFX_OPID_##id, cfx_kfn_check_##id(fn), cfx_kfn_boxed_##id, __LINE__}

/* Registers every entry of regs[0..n) in order (a failure does not stop the rest, so one bad
 * kernel cannot hide the others); the first failing status, else CFX_OK. */
int cfx_kernels_register_list(const cfx_kernel_reg *regs, size_t n, const char *file);
/* regs: an array (not a pointer) of CFX_KERNEL entries written in the calling file. */
#define CFX_REGISTER_KERNELS(regs) cfx_kernels_register_list((regs), sizeof(regs) / sizeof *(regs), __FILE__)

/* Defines <prefix>_add_Tensor, _sub_Tensor, _mul_Tensor and _div_Tensor, a backend's
 * out-of-place binary kernels: each only names its op to the backend's shared
 * impl(cfx_binop, op name, self, other, alpha); mul and div have no alpha, so 1. */
#define CFX_DEFINE_BINARY_KERNELS(prefix, impl)                                                 \
    cfx_tensor *prefix##_add_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)       \
    {                                                                                           \
        return impl(CFX_BINOP_ADD, "aten::add.Tensor", self, other, alpha);                     \
    }                                                                                           \
    cfx_tensor *prefix##_sub_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha)       \
    {                                                                                           \
        return impl(CFX_BINOP_SUB, "aten::sub.Tensor", self, other, alpha);                     \
    }                                                                                           \
    cfx_tensor *prefix##_mul_Tensor(cfx_tensor *self, cfx_tensor *other)                        \
    {                                                                                           \
        return impl(CFX_BINOP_MUL, "aten::mul.Tensor", self, other, cfx_int(1));                \
    }                                                                                           \
    cfx_tensor *prefix##_div_Tensor(cfx_tensor *self, cfx_tensor *other)                        \
    {                                                                                           \
        return impl(CFX_BINOP_DIV, "aten::div.Tensor", self, other, cfx_int(1));                \
    }

/* Drops a tensor a kernel made but will not return: released unless a scope owns it. */
static inline void cfx_kernel_discard(cfx_tensor *t)
{
    if (t && cfx_scope_depth() == 0)
        cfx_tensor_release(t);
}

int cfx_kernels_register_cpu_binary(const cfx_kernel_libs *L);
int cfx_kernels_register_cpu_unary(const cfx_kernel_libs *L);
int cfx_kernels_register_cpu_reduce(const cfx_kernel_libs *L);
int cfx_kernels_register_cpu_mm(const cfx_kernel_libs *L);
int cfx_kernels_register_meta(const cfx_kernel_libs *L);
int cfx_kernels_register_views(const cfx_kernel_libs *L);
int cfx_kernels_register_factory(const cfx_kernel_libs *L);
int cfx_kernels_register_composite(const cfx_kernel_libs *L);
int cfx_kernels_register_cpu_layer_norm(const cfx_kernel_libs *L);
int cfx_kernels_register_norm(const cfx_kernel_libs *L);
int cfx_kernels_register_lift(const cfx_kernel_libs *L);

/* CPU */
cfx_tensor *cfx_cpu_add_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha);
cfx_tensor *cfx_cpu_sub_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha);
cfx_tensor *cfx_cpu_mul_Tensor(cfx_tensor *self, cfx_tensor *other);
cfx_tensor *cfx_cpu_div_Tensor(cfx_tensor *self, cfx_tensor *other);
cfx_tensor *cfx_cpu_add__Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha);
cfx_tensor *cfx_cpu_neg(cfx_tensor *self);
cfx_tensor *cfx_cpu_relu(cfx_tensor *self);
cfx_tensor *cfx_cpu_sin(cfx_tensor *self);
cfx_tensor *cfx_cpu_cos(cfx_tensor *self);
cfx_tensor *cfx_cpu_exp(cfx_tensor *self);
cfx_tensor *cfx_cpu_sum_dim_IntList(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype);
cfx_tensor *cfx_cpu_mm(cfx_tensor *self, cfx_tensor *mat2);
cfx_tensor2 cfx_cpu_max_dim(cfx_tensor *self, int64_t dim, bool keepdim);
cfx_tensor3 cfx_cpu_native_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape, cfx_tensor *weight,
                                      cfx_tensor *bias, double eps);

/* Meta */
cfx_tensor *cfx_meta_add_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha);
cfx_tensor *cfx_meta_sub_Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha);
cfx_tensor *cfx_meta_mul_Tensor(cfx_tensor *self, cfx_tensor *other);
cfx_tensor *cfx_meta_div_Tensor(cfx_tensor *self, cfx_tensor *other);
cfx_tensor *cfx_meta_add__Tensor(cfx_tensor *self, cfx_tensor *other, cfx_value alpha);
cfx_tensor *cfx_meta_neg(cfx_tensor *self);
cfx_tensor *cfx_meta_relu(cfx_tensor *self);
cfx_tensor *cfx_meta_sin(cfx_tensor *self);
cfx_tensor *cfx_meta_cos(cfx_tensor *self);
cfx_tensor *cfx_meta_exp(cfx_tensor *self);
cfx_tensor *cfx_meta_sum_dim_IntList(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype);
cfx_tensor *cfx_meta_mm(cfx_tensor *self, cfx_tensor *mat2);
cfx_tensor2 cfx_meta_max_dim(cfx_tensor *self, int64_t dim, bool keepdim);

/* Device-independent (views.c, factory.c, norm.c, lift.c) */
/* math_native_layer_norm, native_layer_norm's CompositeExplicitAutograd kernel: what meta
 * tensors run (1.13 has no Meta kernel for it); all-CPU arguments go to the CPU kernel. */
cfx_tensor3 cfx_kernel_native_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape, cfx_tensor *weight,
                                         cfx_tensor *bias, double eps);
cfx_tensor *cfx_kernel_lift_fresh(cfx_tensor *self);
cfx_tensor *cfx_kernel_lift_fresh_copy(cfx_tensor *self);
cfx_tensor *cfx_kernel_view(cfx_tensor *self, cfx_int_list size);
cfx_tensor *cfx_kernel_t(cfx_tensor *self);
cfx_tensor *cfx_kernel_clone(cfx_tensor *self, cfx_value memory_format);
cfx_tensor *cfx_kernel_empty_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                  cfx_value pin_memory, cfx_value memory_format);
cfx_tensor *cfx_cpu_empty_memory_format(cfx_int_list size, cfx_value dtype, cfx_value layout,
                                        cfx_value device, cfx_value pin_memory, cfx_value memory_format);
cfx_tensor *cfx_meta_empty_memory_format(cfx_int_list size, cfx_value dtype, cfx_value layout,
                                         cfx_value device, cfx_value pin_memory, cfx_value memory_format);
cfx_tensor *cfx_cpu_empty_strided(cfx_int_list size, cfx_int_list stride, cfx_value dtype,
                                  cfx_value layout, cfx_value device, cfx_value pin_memory);
cfx_tensor *cfx_meta_empty_strided(cfx_int_list size, cfx_int_list stride, cfx_value dtype,
                                   cfx_value layout, cfx_value device, cfx_value pin_memory);

#endif
