/* geometry.c - shape and stride arithmetic, transcribed from c10/ATen.
 *
 * Output layouts are part of PyTorch's observable behaviour (a traced graph records strides,
 * fake tensors compare them), so each helper follows its c10 original line for line,
 * including the odd corners: size-1 dimensions are ignored by contiguity checks but still get
 * strides, channels-last detection falls back to NCHW for ambiguous N111 shapes, and
 * infer_dense_strides treats a zero stride as "no opinion". Error texts are PyTorch's. */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"

int64_t cfx_geom_numel(const int64_t *sizes, int n)
{
    int64_t r = 1;
    for (int i = 0; i < n; i++)
        r *= sizes[i];
    return r;
}

void cfx_geom_put_dims(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_putc(b, '[');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, i ? ", %lld" : "%lld", (long long)d[i]);
    cfx_buf_putc(b, ']');
}

void cfx_geom_contiguous_strides(const int64_t *sizes, int n, int64_t *out)
{
    int64_t z = 1;
    for (int d = n - 1; d >= 0; d--) {
        out[d] = z;
        z *= sizes[d] > 1 ? sizes[d] : 1;
    }
}

/* TensorImpl::empty_tensor_restride */
bool cfx_geom_memory_format_strides(const int64_t *sizes, int n, cfx_memory_format mf,
                                    int64_t *out, const char *op)
{
    switch (mf) {
    case CFX_CONTIGUOUS_FORMAT:
        cfx_geom_contiguous_strides(sizes, n, out);
        return true;
    case CFX_CHANNELS_LAST:
        if (n != 4) {
            cfx_error_set(CFX_ERR, op, "required rank 4 tensor to use channels_last format");
            return false;
        }
        /* get_channels_last_strides_2d: no max(size, 1) here, unlike contiguous */
        out[1] = 1;
        out[3] = sizes[1];
        out[2] = out[3] * sizes[3];
        out[0] = out[2] * sizes[2];
        return true;
    case CFX_CHANNELS_LAST_3D:
        if (n != 5) {
            cfx_error_set(CFX_ERR, op, "required rank 5 tensor to use channels_last_3d format");
            return false;
        }
        out[1] = 1;
        out[4] = sizes[1];
        out[3] = out[4] * sizes[4];
        out[2] = out[3] * sizes[3];
        out[0] = out[2] * sizes[2];
        return true;
    case CFX_PRESERVE_FORMAT:
        cfx_error_set(CFX_ERR, op, "unsupported memory format Preserve");
        return false;
    }
    cfx_error_set(CFX_ERR, op, "unsupported memory format %d", (int)mf);
    return false;
}

static bool channels_last_contiguous_order(const int64_t *sizes, const int64_t *strides,
                                           const int *order, int n)
{
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (sizes[d] != 1) {
            if (strides[d] != expected)
                return false;
            expected *= sizes[d];
        }
    }
    return true;
}

static const int order_2d[4] = {1, 3, 2, 0};
static const int order_3d[5] = {1, 4, 3, 2, 0};

/* compute_channels_last_contiguous_2d (only rank 4 qualifies) */
bool cfx_geom_is_channels_last_contiguous(const int64_t *sizes, const int64_t *strides, int n)
{
    return n == 4 && channels_last_contiguous_order(sizes, strides, order_2d, 4);
}

static bool is_channels_last_3d_contiguous(const int64_t *sizes, const int64_t *strides, int n)
{
    return n == 5 && channels_last_contiguous_order(sizes, strides, order_3d, 5);
}

/* TensorImpl::compute_non_overlapping_and_dense: sort dims by stride (size < 2 last) and
 * check they tile memory exactly. */
static bool compute_non_overlapping_and_dense(const int64_t *sizes, const int64_t *strides, int n)
{
    if (n == 1)
        return sizes[0] < 2 || strides[0] == 1;
    int perm[CFX_MAX_DIMS];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    /* std::sort with "a before b"; an insertion sort gives the same multiset order for the
     * check below, which only looks at strides in ascending order. */
    for (int i = 1; i < n; i++) {
        int x = perm[i], j = i - 1;
        for (; j >= 0; j--) {
            int y = perm[j];
            bool x_before_y;
            if (sizes[x] < 2)
                x_before_y = false;
            else if (sizes[y] < 2)
                x_before_y = true;
            else
                x_before_y = strides[x] < strides[y];
            if (!x_before_y)
                break;
            perm[j + 1] = y;
        }
        perm[j + 1] = x;
    }
    int64_t require = 1;
    for (int i = 0; i < n; i++) {
        int64_t size = sizes[perm[i]];
        if (size < 2)
            return true;
        if (strides[perm[i]] != require)
            return false;
        require *= size;
    }
    return true;
}

bool cfx_geom_is_non_overlapping_and_dense(const int64_t *sizes, const int64_t *strides, int n)
{
    return cfx_geom_is_contiguous(sizes, strides, n) ||
           cfx_geom_is_channels_last_contiguous(sizes, strides, n) ||
           is_channels_last_3d_contiguous(sizes, strides, n) ||
           compute_non_overlapping_and_dense(sizes, strides, n);
}

/* is_channels_last_strides_2d_s4 / _3d_s5 */
static bool strides_like_channels_last(const int64_t *sizes, const int64_t *strides,
                                       const int *order, int n)
{
    int64_t min = 0;
    if (strides[1] == 0)
        return false;
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (sizes[d] == 0)
            return false;
        if (strides[d] < min)
            return false;
        /* N111 (or N11W sliced on W): ambiguous, NCHW wins */
        if (d == 0 && min == strides[1])
            return false;
        min = strides[d];
        if (sizes[d] > 1)
            min *= sizes[d];
    }
    return true;
}

cfx_memory_format cfx_geom_suggest_memory_format(const int64_t *sizes, const int64_t *strides, int n)
{
    if (n == 4 && strides_like_channels_last(sizes, strides, order_2d, 4))
        return CFX_CHANNELS_LAST;
    if (n == 5 && strides_like_channels_last(sizes, strides, order_3d, 5))
        return CFX_CHANNELS_LAST_3D;
    return CFX_CONTIGUOUS_FORMAT;
}

/* at::infer_dense_strides: TensorIterator's insertion sort on one tensor. */
void cfx_geom_infer_dense_strides(const int64_t *sizes, const int64_t *strides, int n, int64_t *out)
{
    if (n == 0)
        return;
    if (n == 1) {
        out[0] = 1;
        return;
    }
    int perm[CFX_MAX_DIMS];
    for (int i = 0; i < n; i++)
        perm[i] = n - 1 - i;
    for (int i = 1; i < n; i++) {
        int dim1 = i;
        for (int j = 1; j <= i; j++) {
            int dim0 = i - j;
            int64_t s0 = strides[perm[dim0]], s1 = strides[perm[dim1]];
            int cmp;
            if (s0 == 0 || s1 == 0)
                cmp = 0;
            else if (s0 < s1)
                cmp = -1;
            else if (s0 > s1)
                cmp = 1;
            else
                cmp = sizes[perm[dim0]] > sizes[perm[dim1]] ? 1 : 0;
            if (cmp > 0) {
                int t = perm[dim0];
                perm[dim0] = perm[dim1];
                perm[dim1] = t;
                dim1 = dim0;
            } else if (cmp < 0) {
                break;
            }
        }
    }
    int64_t cur = 1;
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        out[d] = cur;
        if (sizes[d] > 1)
            cur *= sizes[d];
    }
}

/* empty_like(self) with MemoryFormat::Preserve on a strided tensor. */
void cfx_geom_preserve_strides(const int64_t *sizes, const int64_t *strides, int n, int64_t *out)
{
    if (cfx_geom_is_non_overlapping_and_dense(sizes, strides, n)) {
        for (int i = 0; i < n; i++)
            out[i] = strides[i];
        return;
    }
    cfx_geom_infer_dense_strides(sizes, strides, n, out);
}

bool cfx_geom_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                        int *nout, const char *op)
{
    int n = na > nb ? na : nb;
    for (int i = n - 1; i >= 0; i--) {
        int off = n - 1 - i;
        int da = na - 1 - off, db = nb - 1 - off;
        int64_t sa = da >= 0 ? a[da] : 1, sb = db >= 0 ? b[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            cfx_error_set(CFX_ERR, op,
                          "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                          "non-singleton dimension %d",
                          (long long)sa, (long long)sb, i);
            return false;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return true;
}

bool cfx_geom_wrap_dim(int64_t dim, int ndim, int64_t *out, const char *op)
{
    int64_t n = ndim <= 0 ? 1 : ndim;
    int64_t min = -n, max = n - 1;
    if (dim < min || dim > max) {
        cfx_error_set(CFX_ERR, op,
                      "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)min, (long long)max, (long long)dim);
        return false;
    }
    *out = dim < 0 ? dim + n : dim;
    return true;
}

void cfx_geom_error_dims(const char *op, const char *prefix, const int64_t *shape, int n, const char *suffix)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, prefix);
    cfx_geom_put_dims(&b, shape, n);
    cfx_buf_puts(&b, suffix);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : prefix);
    cfx_free(msg);
}

/* at::infer_size_impl */
bool cfx_geom_infer_view_size(const int64_t *shape, int n, int64_t numel, int64_t *out,
                              const char *op)
{
    int64_t newsize = 1;
    int infer_dim = -1;
    for (int d = 0; d < n; d++) {
        out[d] = shape[d];
        if (shape[d] == -1) {
            if (infer_dim >= 0) {
                cfx_error_set(CFX_ERR, op, "only one dimension can be inferred");
                return false;
            }
            infer_dim = d;
        } else if (shape[d] >= 0) {
            newsize *= shape[d];
        } else {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "invalid shape dimension %lld at index %d of shape ", (long long)shape[d],
                     d);
            cfx_geom_error_dims(op, prefix, shape, n, "");
            return false;
        }
    }
    if (numel == newsize || (infer_dim >= 0 && newsize > 0 && numel % newsize == 0)) {
        if (infer_dim >= 0) {
            if (newsize == 0) {
                char prefix[96];
                snprintf(prefix, sizeof prefix, "cannot reshape tensor of 0 elements into shape ");
                cfx_geom_error_dims(op, prefix, shape, n,
                            " because the unspecified dimension size -1 can be any value and is "
                            "ambiguous");
                return false;
            }
            out[infer_dim] = numel / newsize;
        }
        return true;
    }
    char suffix[96];
    snprintf(suffix, sizeof suffix, "' is invalid for input of size %lld", (long long)numel);
    cfx_geom_error_dims(op, "shape '", shape, n, suffix);
    return false;
}

/* at::detail::computeStride_impl */
bool cfx_geom_view_strides(const int64_t *old_sizes, const int64_t *old_strides, int on,
                           const int64_t *new_sizes, int nn, int64_t *out)
{
    if (on == 0) {
        for (int i = 0; i < nn; i++)
            out[i] = 1;
        return true;
    }
    int64_t numel = cfx_geom_numel(old_sizes, on);
    if (numel == 0) {
        bool same = on == nn;
        for (int i = 0; same && i < on; i++)
            same = old_sizes[i] == new_sizes[i];
        if (same) {
            for (int i = 0; i < on; i++)
                out[i] = old_strides[i];
            return true;
        }
        for (int d = nn - 1; d >= 0; d--) {
            if (d == nn - 1)
                out[d] = 1;
            else
                out[d] = (new_sizes[d + 1] > 1 ? new_sizes[d + 1] : 1) * out[d + 1];
        }
        return true;
    }
    int view_d = nn - 1;
    int64_t chunk_base_stride = old_strides[on - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int tensor_d = on - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= old_sizes[tensor_d];
        if (tensor_d == 0 ||
            (old_sizes[tensor_d - 1] != 1 &&
             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
                out[view_d] = view_numel * chunk_base_stride;
                view_numel *= new_sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (tensor_d > 0) {
                chunk_base_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

bool cfx_geom_opt_int(cfx_value v, int64_t *out)
{
    switch (v.kind) {
    case CFX_V_INT: *out = v.u.i; return true;
    case CFX_V_DTYPE: *out = (int64_t)v.u.dtype; return true;
    case CFX_V_MEMORY_FORMAT: *out = v.u.memory_format; return true;
    case CFX_V_LAYOUT: *out = v.u.layout; return true;
    default: return false;
    }
}

bool cfx_geom_opt_device(cfx_value v, cfx_device *out)
{
    if (v.kind == CFX_V_DEVICE) {
        *out = v.u.device;
        return true;
    }
    if (v.kind == CFX_V_STRING)
        return cfx_device_parse(v.u.s, out);
    return false;
}

/* at::detail::computeStorageNbytes. Products are taken into uint64, so a negative stride
 * "overflows" unless a size is 0. */
bool cfx_geom_storage_nbytes(const int64_t *sizes, const int64_t *strides, int n, size_t itemsize, uint64_t *out)
{
    uint64_t total = 1;
    bool overflow = false;
    for (int i = 0; i < n; i++) {
        if (sizes[i] == 0) {
            *out = 0;
            return true;
        }
        uint64_t span;
        overflow |= __builtin_mul_overflow(strides[i], sizes[i] - 1, &span);
        overflow |= __builtin_add_overflow(total, span, &total);
    }
    overflow |= __builtin_mul_overflow(total, (uint64_t)itemsize, &total);
    *out = total;
    return !(overflow || total > (uint64_t)INT64_MAX);
}
