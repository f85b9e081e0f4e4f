/* shape_composite.c - the CompositeImplicitAutograd shape operators: reshape, flatten.using_ints,
 * unflatten.int, contiguous, narrow, chunk.
 *
 * Their kernels call other operators through the dispatcher (cfx_op_*(NULL, ...): NULL keeps
 * the user's call site), exactly the calls ATen's kernel makes, so that make_fx records what
 * PyTorch 2.13's make_fx records: reshape is view(self, shape) when the view is possible
 * (with the shape as given, -1 included) and otherwise
 * _unsafe_view(clone(self, memory_format=contiguous_format), inferred shape); flatten and
 * unflatten are reshape/view with the computed shape (or self itself: nothing recorded);
 * contiguous is self when already contiguous in the format, else clone(memory_format);
 * narrow is slice(self, dim, start, start + length) with dim as given and start wrapped;
 * chunk is split.Tensor (split_with_sizes when both the chunk size and the dim are 0). When an
 * operator returns its input itself it hands back a new reference, as lift_fresh does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/shape.h"

static cfx_tensor *same(cfx_tensor *self) { return cfx_autorelease(cfx_tensor_retain(self)); }

/* at::native::reshape_symint */
static cfx_tensor *reshape(const char *op, cfx_tensor *self, cfx_int_list shape)
{
    if (!cfx_shape_list_ok(op, shape))
        return NULL;
    int n = (int)shape.len;
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    if (!cfx_geom_infer_view_size(shape.data, n, cfx_tensor_numel(self), sizes, op))
        return NULL;
    if (cfx_geom_view_strides(self->sizes, self->strides, self->ndim, sizes, n, strides))
        return cfx_op_view(NULL, self, shape);
    cfx_tensor *copy = cfx_op_clone(NULL, self, cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT));
    if (!copy)
        return NULL;
    cfx_tensor *r = cfx_op__unsafe_view(NULL, copy, cfx_ints(sizes, n));
    cfx_kernel_discard(copy);
    return r;
}

cfx_tensor *cfx_composite_reshape(cfx_tensor *self, cfx_int_list shape)
{
    return reshape("aten::reshape", self, shape);
}

cfx_tensor *cfx_composite_flatten_using_ints(cfx_tensor *self, int64_t start_dim, int64_t end_dim)
{
    const char *op = "aten::flatten.using_ints";
    int n = self->ndim;
    int64_t a, b;
    if (!cfx_geom_wrap_dim(start_dim, n, &a, op) || !cfx_geom_wrap_dim(end_dim, n, &b, op))
        return NULL;
    if (a > b) {
        cfx_error_set(CFX_ERR, op, "flatten() has invalid args: start_dim cannot come after end_dim");
        return NULL;
    }
    if (n == 0)
        return cfx_op_reshape(NULL, self, CFX_INTS(1));
    if (a == b)
        return same(self);
    int64_t shape[CFX_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < a; d++)
        shape[m++] = self->sizes[d];
    int64_t numel = 1;
    for (int64_t d = a; d <= b; d++)
        numel *= self->sizes[d];
    shape[m++] = numel;
    for (int64_t d = b + 1; d < n; d++)
        shape[m++] = self->sizes[d];
    return reshape(op, self, cfx_ints(shape, m));
}

/* at::native::unflatten_symint: infer_size_dv's "shape '[4, 2]' is invalid" is reworded by
 * handle_unflatten_exception; its other errors are wrapped as "unexpected". */
cfx_tensor *cfx_composite_unflatten_int(cfx_tensor *self, int64_t dim, cfx_int_list sizes)
{
    const char *op = "aten::unflatten.int";
    int n = self->ndim;
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, n, &d, op) || !cfx_shape_list_ok(op, sizes))
        return NULL;
    if (sizes.len == 0) {
        cfx_error_set(CFX_ERR, op, "unflatten: sizes must be non-empty");
        return NULL;
    }
    if (n == 0 || n - 1 + sizes.len > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, op, "unflatten got an unexpected error:\nDimension specified as %lld but tensor has no "
                      "dimensions", (long long)dim);
        return NULL;
    }
    int k = (int)sizes.len;
    int64_t inferred[CFX_MAX_DIMS];
    cfx_scope s = cfx_scope_begin();
    bool ok = cfx_geom_infer_view_size(sizes.data, k, self->sizes[d], inferred, op);
    if (!ok) {
        char *why = cfx_error_message() ? cfx_strdup(cfx_error_message()) : NULL;
        bool bad_shape = why && strncmp(why, "shape '", 7) == 0;
        cfx_error_clear();
        if (bad_shape) {
            char suffix[128];
            snprintf(suffix, sizeof suffix, " don't multiply up to the size of dim %lld (%lld) in the input tensor",
                     (long long)d, (long long)self->sizes[d]);
            cfx_geom_error_dims(op, "unflatten: Provided sizes ", sizes.data, k, suffix);
        } else {
            cfx_error_set(CFX_ERR, op, "unflatten got an unexpected error:\n%s", why ? why : "");
        }
        cfx_free(why);
    }
    cfx_scope_end(s);
    if (!ok)
        return NULL;
    int64_t shape[CFX_MAX_DIMS];
    int m = 0;
    for (int i = 0; i < d; i++)
        shape[m++] = self->sizes[i];
    for (int i = 0; i < k; i++)
        shape[m++] = inferred[i];
    for (int i = (int)d + 1; i < n; i++)
        shape[m++] = self->sizes[i];
    return cfx_op_view(NULL, self, cfx_ints(shape, m));
}

/* TensorImpl::is_contiguous(memory_format) */
static bool contiguous_in(const cfx_tensor *t, cfx_memory_format mf)
{
    static const int order_3d[5] = {1, 4, 3, 2, 0};
    switch (mf) {
    case CFX_CHANNELS_LAST:
        return cfx_geom_is_channels_last_contiguous(t->sizes, t->strides, t->ndim);
    case CFX_CHANNELS_LAST_3D: {
        if (t->ndim != 5)
            return false;
        int64_t expected = 1;
        for (int i = 0; i < 5; i++) {
            int d = order_3d[i];
            if (t->sizes[d] != 1) {
                if (t->strides[d] != expected)
                    return false;
                expected *= t->sizes[d];
            }
        }
        return true;
    }
    default:
        return cfx_geom_is_contiguous(t->sizes, t->strides, t->ndim);
    }
}

cfx_tensor *cfx_composite_contiguous(cfx_tensor *self, int64_t memory_format)
{
    const char *op = "aten::contiguous";
    if (memory_format < CFX_CONTIGUOUS_FORMAT || memory_format > CFX_CHANNELS_LAST_3D) {
        cfx_error_set(CFX_ERR, op, "contiguous: invalid memory format code %lld", (long long)memory_format);
        return NULL;
    }
    cfx_memory_format mf = (cfx_memory_format)memory_format;
    if (contiguous_in(self, mf))
        return same(self);
    if (mf == CFX_PRESERVE_FORMAT) {
        cfx_error_set(CFX_ERR, op, "preserve memory format is unsupported by the contiguous operator");
        return NULL;
    }
    return cfx_op_clone(NULL, self, cfx_memory_format_value(mf));
}

/* at::native::narrow_symint */
cfx_tensor *cfx_composite_narrow(cfx_tensor *self, int64_t dim, int64_t start, int64_t length)
{
    const char *op = "aten::narrow";
    if (self->ndim == 0) {
        cfx_error_set(CFX_ERR, op, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    if (length < 0) {
        cfx_error_set(CFX_ERR, op, "narrow(): length must be non-negative.");
        return NULL;
    }
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return NULL;
    int64_t cur = self->sizes[d];
    if (start < -cur || start > cur) {
        cfx_error_set(CFX_ERR, op, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-cur, (long long)cur, (long long)start);
        return NULL;
    }
    if (start < 0)
        start += cur;
    if (start > cur - length) {
        cfx_error_set(CFX_ERR, op, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start,
                      (long long)length, (long long)cur);
        return NULL;
    }
    return cfx_op_slice_Tensor(NULL, self, dim, cfx_int(start), cfx_int(start + length), 1);
}

/* at::native::chunk */
cfx_tensor_list cfx_composite_chunk(cfx_tensor *self, int64_t chunks, int64_t dim)
{
    const char *op = "aten::chunk";
    cfx_tensor_list none = {NULL, -1};
    if (self->ndim == 0) {
        cfx_error_set(CFX_ERR, op, "chunk expects at least a 1-dimensional tensor");
        return none;
    }
    if (chunks <= 0) {
        cfx_error_set(CFX_ERR, op, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
        return none;
    }
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return none;
    int64_t dim_size = self->sizes[d];
    int64_t split_size = (dim_size + chunks - 1) / chunks;
    if (split_size == 0 && dim_size == 0) {
        int64_t *sizes = cfx_scope_alloc((size_t)chunks * sizeof(int64_t));
        if (!sizes) {
            cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in chunk");
            return none;
        }
        memset(sizes, 0, (size_t)chunks * sizeof(int64_t));
        return cfx_op_split_with_sizes(NULL, self, cfx_ints(sizes, chunks), dim);
    }
    return cfx_op_split_Tensor(NULL, self, split_size, dim);
}
