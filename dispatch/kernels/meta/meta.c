/* meta.c - Meta kernels of the reductions, mm and the data-dependent ops.
 *
 * In PyTorch 2.13 these are Python (torch/_meta_registrations.py), not the C++ meta functions
 * their CPU kernels run (structured.c): sum is torch._refs.sum (reduction_dims, with its own
 * "duplicate value in the list of dims"; the output is prims' reduction, keepdim re-inserting
 * dims through broadcast_in_dim), max.dim is meta_max_dim (no empty-dim check: reducing an
 * empty dim is fine on meta), mm is meta_mm ("a must be 2D", and its result is
 * a.new_empty, on a's device even when that is CPU). The data-dependent ops' Meta kernels only
 * refuse, with PyTorch's messages. The pointwise ops' Meta kernels are in pointwise_refs.c. */
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/prims.h"

/* self.new_empty(sizes, dtype): contiguous, on self's device */
static cfx_tensor *new_empty(const cfx_tensor *self, const int64_t *sizes, int n, cfx_dtype dt)
{
    return cfx_tensor_new(sizes, n, dt, self->device);
}

cfx_tensor *cfx_meta_sum_dim_IntList(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    const char *op = "aten::sum.dim_IntList";
    int64_t code;
    cfx_dtype dt = !cfx_dtype_is_integral((cfx_dtype)self->dtype, true) ? (cfx_dtype)self->dtype : CFX_INT64;
    if (cfx_geom_opt_int(dtype, &code)) {
        if (!cfx_dtype_valid(code)) {
            cfx_error_set(CFX_ERR, op, "sum: unsupported dtype code %lld", (long long)code);
            return NULL;
        }
        dt = (cfx_dtype)code;
    }
    cfx_tmeta a, out;
    cfx_tmeta_of(&a, self);
    bool reduced[CFX_MAX_DIMS];
    /* dim=None and dim=[] both reduce everything */
    if (!cfx_prims_reduction_dims(op, a.ndim, dim.len > 0 ? dim.data : NULL, (int)dim.len, reduced))
        return NULL;
    cfx_prims_to(&a, dt); /* the computation dtype is the requested one */
    cfx_prims_reduction(&out, &a, reduced, keepdim);
    return cfx_tmeta_new_tensor(&out);
}

cfx_max_dim_result cfx_meta_max_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    cfx_max_dim_result none = {{NULL, NULL}};
    bool reduced[CFX_MAX_DIMS];
    if (!cfx_prims_reduction_dims("aten::max.dim", self->ndim, &dim, 1, reduced))
        return none;
    int64_t sizes[CFX_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++) /* _compute_reduction_shape */
        if (!reduced[d] || keepdim)
            sizes[n++] = reduced[d] ? 1 : self->sizes[d];
    cfx_tensor *values = new_empty(self, sizes, n, (cfx_dtype)self->dtype);
    cfx_tensor *indices = values ? new_empty(self, sizes, n, CFX_INT64) : NULL;
    if (!indices) {
        cfx_kernel_discard(values);
        return none;
    }
    return (cfx_max_dim_result){{values, indices}};
}

cfx_tensor *cfx_meta_mm(cfx_tensor *self, cfx_tensor *mat2)
{
    const char *op = "aten::mm";
    if (self->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "a must be 2D");
        return NULL;
    }
    if (mat2->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "b must be 2D");
        return NULL;
    }
    if (self->sizes[1] != mat2->sizes[0]) {
        cfx_error_set(CFX_ERR, op, "a and b must have same reduction dim, but got [%lld, %lld] X [%lld, %lld].",
                      (long long)self->sizes[0], (long long)self->sizes[1], (long long)mat2->sizes[0],
                      (long long)mat2->sizes[1]);
        return NULL;
    }
    int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
    return new_empty(self, sizes, 2, (cfx_dtype)self->dtype);
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
