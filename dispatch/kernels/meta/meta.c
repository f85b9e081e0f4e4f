/* meta.c - Meta kernels of the structured built-ins that are not pointwise: the meta
 * function, then an output (pointwise ops get theirs from pointwise.c).
 *
 * A Meta kernel runs exactly the checks and metadata computation of its CPU twin
 * (structured.c / iter.c) and allocates a meta tensor: no data, storage size tracked. As in
 * PyTorch, the output of a Meta kernel is always a meta tensor, even when some inputs are CPU
 * scalars or (for mm, whose meta function has no device check) CPU matrices.
 *
 * relu is the exception: its Meta kernel is PyTorch's Python reference
 * where(le(a, 0), 0, a), with no bool check and prims' output-stride rule
 * (cfx_iter_relu_meta_strides). The data-dependent ops have Meta kernels that only refuse,
 * with PyTorch's messages. */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/structured.h"

static cfx_device meta(void) { return cfx_device_make(CFX_DEVICE_META); }

cfx_tensor *cfx_meta_relu(cfx_tensor *self)
{
    int64_t strides[CFX_MAX_DIMS];
    cfx_iter_relu_meta_strides(self, strides);
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

cfx_max_dim_result cfx_meta_max_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    cfx_reduce_shape r;
    int64_t w;
    if (!cfx_structured_max_dim(&r, &w, "aten::max.dim", self, dim, keepdim))
        return (cfx_max_dim_result){{NULL, NULL}};
    cfx_tensor *values = cfx_tensor_new(r.sizes, r.ndim, r.dtype, meta());
    cfx_tensor *indices = values ? cfx_tensor_new(r.sizes, r.ndim, CFX_INT64, meta()) : NULL;
    if (!indices) {
        cfx_kernel_discard(values);
        return (cfx_max_dim_result){{NULL, NULL}};
    }
    return (cfx_max_dim_result){{values, indices}};
}

cfx_value cfx_meta__local_scalar_dense(cfx_tensor *self)
{
    (void)self;
    cfx_error_set(CFX_ERR, "aten::_local_scalar_dense", "Tensor.item() cannot be called on meta tensors");
    return cfx_none();
}

cfx_tensor *cfx_meta_nonzero(cfx_tensor *self)
{
    (void)self;
    cfx_error_set(CFX_ERR_NOTIMPL, "aten::nonzero",
                  "The register_meta function for torch.nonzero() raises unimplemented by default, as a correct "
                  "data-independent implementation does not exist. This implementation returns a fake value, "
                  "assuming all elements of the tensor are non-zero. To enable this registration, please set "
                  "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.");
    return NULL;
}
