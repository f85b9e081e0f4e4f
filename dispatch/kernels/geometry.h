/* geometry.h - shape and stride arithmetic shared by every CPU and Meta kernel.
 *
 * Everything a kernel decides about its output's metadata lives here or in iter.h, never in
 * the kernel files, so a CPU kernel and its Meta twin cannot disagree about sizes, strides or
 * the error raised. Each function reproduces one c10/ATen helper (named in the comment) and
 * its exact error text. Arrays are caller-owned with room for CFX_MAX_DIMS entries; nothing
 * here allocates. Functions that can fail take the operator name for the error record and
 * return false after recording the error. */
#ifndef CFX_KERNELS_GEOMETRY_H
#define CFX_KERNELS_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/dtype.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"

int64_t cfx_geom_numel(const int64_t *sizes, int n);

/* c10 contiguous strides (size-0/1 dims do not scale the next stride). */
void cfx_geom_contiguous_strides(const int64_t *sizes, int n, int64_t *out);
/* Strides of an empty tensor in memory format mf (contiguous, channels_last on 4 dims,
 * channels_last_3d on 5 dims); records "required rank 4 tensor to use channels_last format"
 * or "unsupported memory format Preserve" and returns false otherwise. */
bool cfx_geom_memory_format_strides(const int64_t *sizes, int n, cfx_memory_format mf,
                                    int64_t *out, const char *op);

/* TensorImpl's layout predicates. */
/* TensorImpl::compute_contiguous, inline: it is asked of every operand of every traced
 * elementwise op. An empty tensor is contiguous whatever its strides, so a stride that breaks
 * the run is final only once no dim is 0 (z == 0 says a dim already passed was; the dims not
 * yet passed are looked at then). */
static inline bool cfx_geom_is_contiguous(const int64_t *sizes, const int64_t *strides, int n)
{
    int64_t z = 1;
    for (int d = n - 1; d >= 0; d--) {
        if (sizes[d] == 1)
            continue;
        if (strides[d] != z) {
            if (z == 0)
                return true;
            for (; d >= 0; d--)
                if (sizes[d] == 0)
                    return true;
            return false;
        }
        z *= sizes[d];
    }
    return true;
}
bool cfx_geom_is_channels_last_contiguous(const int64_t *sizes, const int64_t *strides, int n);
bool cfx_geom_is_non_overlapping_and_dense(const int64_t *sizes, const int64_t *strides, int n);
/* TensorBase::suggest_memory_format (channels_last / channels_last_3d / contiguous). */
cfx_memory_format cfx_geom_suggest_memory_format(const int64_t *sizes, const int64_t *strides, int n);
/* at::infer_dense_strides: dense strides keeping the input's dimension order. */
void cfx_geom_infer_dense_strides(const int64_t *sizes, const int64_t *strides, int n, int64_t *out);
/* Strides of empty_like(t) with preserve_format (also what .to(dtype) and clone produce). */
void cfx_geom_preserve_strides(const int64_t *sizes, const int64_t *strides, int n, int64_t *out);

/* at::infer_size: the broadcast of a and b into out (room for max(na, nb)); *nout = ndim.
 * "The size of tensor a (2) must match the size of tensor b (5) at non-singleton dimension 1". */
bool cfx_geom_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                        int *nout, const char *op);

/* maybe_wrap_dim with PyTorch's IndexError text; ndim 0 wraps as 1 (scalars accept 0/-1). */
bool cfx_geom_wrap_dim(int64_t dim, int ndim, int64_t *out, const char *op);

/* at::infer_size for view/reshape: resolves one -1 against numel into out. */
bool cfx_geom_infer_view_size(const int64_t *shape, int n, int64_t numel, int64_t *out,
                              const char *op);
/* at::detail::computeStride: strides for viewing (old sizes, strides) as new sizes, or false
 * (no error recorded) when the view would span non-contiguous subspaces. */
bool cfx_geom_view_strides(const int64_t *old_sizes, const int64_t *old_strides, int on,
                           const int64_t *new_sizes, int nn, int64_t *out);

/* at::detail::computeStorageNbytes into *out; false when it overflows (a negative size or
 * stride does, unless a size is 0). */
bool cfx_geom_storage_nbytes(const int64_t *sizes, const int64_t *strides, int n, size_t itemsize, uint64_t *out);

/* Records "<prefix>[2, 3]<suffix>" as op's error (c10's IntArrayRef printing). */
void cfx_geom_error_dims(const char *op, const char *prefix, const int64_t *d, int n, const char *suffix);

/* Appends "[2, 3]" (c10's IntArrayRef printing). */
void cfx_geom_put_dims(cfx_buf *b, const int64_t *d, int n);

/* The value of an optional enum-like argument (ScalarType?, MemoryFormat?, Layout?, Device?)
 * given boxed either by kind or as a plain int (JSON, schema defaults). false if None. */
bool cfx_geom_opt_int(cfx_value v, int64_t *out);
bool cfx_geom_opt_device(cfx_value v, cfx_device *out);

/* Advances idx (row-major over sizes, n dims); false once every index was visited (the
 * element walks of flip, repeat and masked_scatter). */
static inline bool cfx_geom_next_index(int64_t *idx, const int64_t *sizes, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < sizes[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

#endif
