/* sym.c - sym_size.int, sym_stride.int, sym_numel, sym_storage_offset: a tensor's geometry as
 * an operator (Core ATen's sym ops).
 *
 * In 2.13 these are CompositeImplicitAutograd kernels that read the tensor's (Sym)Int metadata
 * without dispatching anything, so with static shapes make_fx never sees them: a program
 * calling torch.ops.aten.sym_size.int(x, 1) under make_fx records no node and the number
 * enters the graph as a literal (`mul.Tensor(x_1, 2)`), in real and fake mode alike. cfx has
 * static shapes only, so each returns the int from the tensor (real, meta or fake alike); a
 * bad dim is c10's maybe_wrap_dim error (a 0-dim tensor has none). */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"

/* maybe_wrap_dim(dim, ndim, wrap_scalar=false): a 0-dim tensor has no dim to ask about; -1 with
 * the error recorded */
static int wrap(const char *op, int64_t dim, int ndim)
{
    if (ndim == 0) {
        cfx_error_set(CFX_ERR, op, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
        return -1;
    }
    int64_t n = ndim;
    if (dim < -n || dim >= n) {
        cfx_error_set(CFX_ERR, op, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-n, (long long)(n - 1), (long long)dim);
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

int64_t cfx_composite_sym_size_int(cfx_tensor *self, int64_t dim)
{
    int d = wrap("aten::sym_size.int", dim, self->ndim);
    return d < 0 ? 0 : self->sizes[d];
}

int64_t cfx_composite_sym_stride_int(cfx_tensor *self, int64_t dim)
{
    int d = wrap("aten::sym_stride.int", dim, self->ndim);
    return d < 0 ? 0 : self->strides[d];
}

int64_t cfx_composite_sym_numel(cfx_tensor *self) { return cfx_tensor_numel(self); }

int64_t cfx_composite_sym_storage_offset(cfx_tensor *self) { return self->storage_offset; }
