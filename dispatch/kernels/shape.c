/* shape.c - the view operators: expand, unsqueeze, squeeze (3 overloads), transpose.int,
 * permute, slice.Tensor, select.int, alias, as_strided, _unsafe_view.
 *
 * Each is a new tensor header over its input's storage with other sizes, strides or storage
 * offset, so one C function serves every device: PyTorch registers them all as
 * CompositeExplicitAutograd (as_strided on CPU and Meta) and so do we. The geometry and every
 * check follow the ATen function named in each comment (TensorShape.cpp, ExpandUtils.h), with
 * its error text; where 2.13's Meta key runs Python instead (_unsafe_view, as_strided), the
 * Meta behaviour is noted. _unsafe_view is view's geometry on a result that autograd does not
 * treat as a view; it still shares the storage. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/shape.h"

static cfx_tensor *restride(cfx_tensor *self, const int64_t *sizes, const int64_t *strides, int n, int64_t offset)
{
    return cfx_tensor_new_view(self, sizes, strides, n, offset);
}

cfx_tensor *cfx_kernel_alias(cfx_tensor *self)
{
    return restride(self, self->sizes, self->strides, self->ndim, self->storage_offset);
}

bool cfx_shape_list_ok(const char *op, cfx_int_list l)
{
    if (l.len < 0 || l.len > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, op, "%s: expected a list of at most %d dimensions", op, CFX_MAX_DIMS);
        return false;
    }
    return true;
}

/* at::native::_unsafe_view: view's size inference and stride computation (and its texts). */
cfx_tensor *cfx_kernel__unsafe_view(cfx_tensor *self, cfx_int_list size) { return cfx_kernel_view(self, size); }

/* 2.13's Meta registration of _unsafe_view is the same computation (view's). */
cfx_tensor *cfx_meta__unsafe_view(cfx_tensor *self, cfx_int_list size)
{
    return cfx_kernel__unsafe_view(self, size);
}

/* Tensor::toString as expand's message prints it: "torch.FloatTensor", "MetaFloatType". */
static void put_type_string(cfx_buf *b, const cfx_tensor *t)
{
    const char *s = cfx_dtype_scalar_name((cfx_dtype)t->dtype);
    if (t->device.type == CFX_DEVICE_META)
        cfx_buf_printf(b, "Meta%sType", s);
    else
        cfx_buf_printf(b, "torch.%sTensor", s);
}

/* at::native::expand + inferExpandGeometry */
cfx_tensor *cfx_kernel_expand(cfx_tensor *self, cfx_int_list size, bool implicit)
{
    (void)implicit; /* only autograd's record of the call: the result is the same */
    const char *op = "aten::expand";
    if (!cfx_shape_list_ok(op, size))
        return NULL;
    int n = (int)size.len, tn = self->ndim;
    if (n < tn) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "expand(");
        put_type_string(&b, self);
        cfx_buf_putc(&b, '{');
        cfx_geom_put_dims(&b, self->sizes, tn);
        cfx_buf_puts(&b, "}, size=");
        cfx_geom_put_dims(&b, size.data, n);
        cfx_buf_printf(&b,
                       "): the number of sizes provided (%d) must be greater or equal to the number of "
                       "dimensions in the tensor (%d)",
                       n, tn);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "expand: too few sizes");
        cfx_free(msg);
        return NULL;
    }
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    if (tn == 0) {
        for (int i = 0; i < n; i++) {
            sizes[i] = size.data[i];
            strides[i] = 0;
        }
        return restride(self, sizes, strides, n, self->storage_offset);
    }
    for (int i = n - 1; i >= 0; i--) {
        int off = n - 1 - i, dim = tn - 1 - off;
        int64_t sz = dim >= 0 ? self->sizes[dim] : 1;
        int64_t st = dim >= 0 ? self->strides[dim] : sizes[i + 1] * strides[i + 1];
        int64_t target = size.data[i];
        if (target == -1) {
            if (dim < 0) {
                cfx_error_set(CFX_ERR, op,
                              "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                              "dimension %d",
                              i);
                return NULL;
            }
            target = sz;
        }
        if (sz != target) {
            if (sz != 1) {
                char prefix[160];
                snprintf(prefix, sizeof prefix,
                         "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                         "non-singleton dimension %d.  Target sizes: ",
                         (long long)target, (long long)sz, i);
                cfx_buf b;
                cfx_buf_init(&b);
                cfx_buf_puts(&b, prefix);
                cfx_geom_put_dims(&b, size.data, n);
                cfx_buf_puts(&b, ".  Tensor sizes: ");
                cfx_geom_put_dims(&b, self->sizes, tn);
                char *msg = cfx_buf_take(&b);
                cfx_error_set_text(CFX_ERR, op, msg ? msg : prefix);
                cfx_free(msg);
                return NULL;
            }
            sz = target;
            st = 0;
        }
        sizes[i] = sz;
        strides[i] = st;
    }
    return restride(self, sizes, strides, n, self->storage_offset);
}

/* at::native::unsqueeze + inferUnsqueezeGeometry */
cfx_tensor *cfx_kernel_unsqueeze(cfx_tensor *self, int64_t dim)
{
    int n = self->ndim;
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, n + 1, &d, "aten::unsqueeze"))
        return NULL;
    if (n + 1 > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, "aten::unsqueeze", "unsqueeze: at most %d dimensions are supported", CFX_MAX_DIMS);
        return NULL;
    }
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    for (int i = 0, j = 0; i <= n; i++) {
        if (i == d) {
            sizes[i] = 1;
            strides[i] = d >= n ? 1 : self->sizes[d] * self->strides[d];
        } else {
            sizes[i] = self->sizes[j];
            strides[i] = self->strides[j];
            j++;
        }
    }
    return restride(self, sizes, strides, n + 1, self->storage_offset);
}

/* Drops the dims of self with drop[d] set and size 1 (inferSqueezeGeometry). */
static cfx_tensor *squeeze_mask(cfx_tensor *self, const bool *drop)
{
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < self->ndim; d++)
        if (!(drop[d] && self->sizes[d] == 1)) {
            sizes[m] = self->sizes[d];
            strides[m++] = self->strides[d];
        }
    return restride(self, sizes, strides, m, self->storage_offset);
}

cfx_tensor *cfx_kernel_squeeze(cfx_tensor *self)
{
    bool all[CFX_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++)
        all[d] = true;
    return squeeze_mask(self, all);
}

cfx_tensor *cfx_kernel_squeeze_dim(cfx_tensor *self, int64_t dim)
{
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, "aten::squeeze.dim"))
        return NULL;
    bool one[CFX_MAX_DIMS] = {false};
    if (self->ndim > 0)
        one[d] = true;
    return squeeze_mask(self, one);
}

/* dim_list_to_bitset: wrapped dims, each at most once. */
bool cfx_shape_dim_mask(const char *op, cfx_int_list dims, int ndim, bool *mask)
{
    if (!cfx_shape_list_ok(op, dims))
        return false;
    for (int d = 0; d < CFX_MAX_DIMS; d++)
        mask[d] = false;
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d;
        if (!cfx_geom_wrap_dim(dims.data[i], ndim, &d, op))
            return false;
        if (mask[d]) {
            cfx_error_set(CFX_ERR, op, "dim %lld appears multiple times in the list of dims", (long long)d);
            return false;
        }
        mask[d] = true;
    }
    return true;
}

cfx_tensor *cfx_kernel_squeeze_dims(cfx_tensor *self, cfx_int_list dim)
{
    bool mask[CFX_MAX_DIMS];
    if (!cfx_shape_dim_mask("aten::squeeze.dims", dim, self->ndim, mask))
        return NULL;
    return squeeze_mask(self, mask);
}

cfx_tensor *cfx_kernel_transpose_int(cfx_tensor *self, int64_t dim0, int64_t dim1)
{
    const char *op = "aten::transpose.int";
    int64_t a, b;
    if (!cfx_geom_wrap_dim(dim0, self->ndim, &a, op) || !cfx_geom_wrap_dim(dim1, self->ndim, &b, op))
        return NULL;
    int n = self->ndim;
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)n * sizeof sizes[0]);
    memcpy(strides, self->strides, (size_t)n * sizeof strides[0]);
    if (a != b) {
        sizes[a] = self->sizes[b];
        sizes[b] = self->sizes[a];
        strides[a] = self->strides[b];
        strides[b] = self->strides[a];
    }
    return restride(self, sizes, strides, n, self->storage_offset);
}

cfx_tensor *cfx_kernel_permute(cfx_tensor *self, cfx_int_list dims)
{
    const char *op = "aten::permute";
    int n = self->ndim;
    if (dims.len != n) {
        cfx_error_set(CFX_ERR, op,
                      "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                      "the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %lld",
                      n, (long long)(dims.len < 0 ? 0 : dims.len));
        return NULL;
    }
    bool seen[CFX_MAX_DIMS] = {false};
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (!cfx_geom_wrap_dim(dims.data[i], n, &d, op))
            return NULL;
        if (seen[d]) {
            cfx_error_set(CFX_ERR, op, "permute(): duplicate dims are not allowed.");
            return NULL;
        }
        seen[d] = true;
        sizes[i] = self->sizes[d];
        strides[i] = self->strides[d];
    }
    return restride(self, sizes, strides, n, self->storage_offset);
}

/* at::native::slice: None bounds are 0 and INT64_MAX; negative ones count from the end; both
 * are clamped into [0, size] and end to at least start. */
cfx_tensor *cfx_kernel_slice_Tensor(cfx_tensor *self, int64_t dim, cfx_value start, cfx_value end, int64_t step)
{
    const char *op = "aten::slice.Tensor";
    int n = self->ndim;
    if (n == 0) {
        cfx_error_set(CFX_ERR, op, "slice() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, n, &d, op))
        return NULL;
    int64_t lo = start.kind == CFX_V_INT ? start.u.i : 0;
    int64_t hi = end.kind == CFX_V_INT ? end.u.i : INT64_MAX;
    if (step <= 0) {
        cfx_error_set(CFX_ERR, op, "slice step must be positive");
        return NULL;
    }
    int64_t size = self->sizes[d];
    if (lo < 0)
        lo += size;
    if (hi < 0)
        hi += size;
    if (lo < 0)
        lo = 0;
    else if (lo >= size)
        lo = size;
    if (hi < lo)
        hi = lo;
    else if (hi >= size)
        hi = size;
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)n * sizeof sizes[0]);
    memcpy(strides, self->strides, (size_t)n * sizeof strides[0]);
    sizes[d] = (hi - lo + step - 1) / step;
    strides[d] = self->strides[d] * step;
    return restride(self, sizes, strides, n, self->storage_offset + lo * self->strides[d]);
}

/* at::native::select */
cfx_tensor *cfx_kernel_select_int(cfx_tensor *self, int64_t dim, int64_t index)
{
    const char *op = "aten::select.int";
    int n = self->ndim;
    if (n == 0) {
        cfx_error_set(CFX_ERR, op, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, n, &d, op))
        return NULL;
    int64_t size = self->sizes[d];
    if (size <= -1 - index || size <= index) {
        char prefix[96], suffix[48];
        snprintf(prefix, sizeof prefix, "select(): index %lld out of range for tensor of size ", (long long)index);
        snprintf(suffix, sizeof suffix, " at dimension %lld", (long long)d);
        cfx_geom_error_dims(op, prefix, self->sizes, n, suffix);
        return NULL;
    }
    if (index < 0)
        index += size;
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    for (int i = 0, j = 0; i < n; i++)
        if (i != d) {
            sizes[j] = self->sizes[i];
            strides[j++] = self->strides[i];
        }
    return restride(self, sizes, strides, n - 1, self->storage_offset + index * self->strides[d]);
}

/* as_strided_tensorimpl + setStrided: cfx_tensor_new_view makes setStrided's checks with its
 * texts (negative strides, storage size overflow, checkInBoundsForStorage, the offset). 2.13's
 * Meta path checks no bounds, and a negative size fails its numel instead: a meta storage has
 * no data, so its recorded extent grows to what the view spans. */
cfx_tensor *cfx_kernel_as_strided(cfx_tensor *self, cfx_int_list size, cfx_int_list stride, cfx_value storage_offset)
{
    const char *op = "aten::as_strided";
    if (!cfx_shape_list_ok(op, size) || !cfx_shape_list_ok(op, stride))
        return NULL;
    int n = (int)size.len;
    int64_t offset = storage_offset.kind == CFX_V_INT ? storage_offset.u.i : self->storage_offset;
    if (stride.len != size.len) {
        cfx_error_set(CFX_ERR, op, "mismatch in length of strides and shape");
        return NULL;
    }
    if (self->device.type == CFX_DEVICE_META) {
        for (int i = 0; i < n; i++)
            if (size.data[i] < 0) {
                cfx_error_set(CFX_ERR, op, "numel: integer multiplication overflow");
                return NULL;
            }
        size_t item = cfx_dtype_size((cfx_dtype)self->dtype);
        uint64_t nbytes;
        bool nonneg = offset >= 0;
        for (int i = 0; i < n; i++)
            nonneg &= stride.data[i] >= 0;
        if (nonneg && cfx_geom_storage_nbytes(size.data, stride.data, n, item, &nbytes) && nbytes > 0 &&
            nbytes + (uint64_t)offset * item > self->storage->nbytes)
            self->storage->nbytes = nbytes + (uint64_t)offset * item;
    }
    return restride(self, size.data, stride.data, n, offset);
}
