/* reorder.c - flip, repeat and diagonal: the Core ATen ops that move elements (or, for
 * diagonal, strides) around without computing.
 *
 * flip (CPU and Meta kernels): empty_like(self, preserve_format) filled with the elements at
 * the mirrored index along the flipped dims; the dims are checked by dim_list_to_bitset on
 * CPU ("dim 0 appears multiple times in the list of dims") and by the Python meta on Meta
 * ("duplicate value in the list of dims").
 * repeat (CompositeExplicitAutograd; Meta: the Python decomposition's checks): a contiguous
 * result of size padded(self) * repeats, each element self's at the index modulo self's
 * sizes (self padded with leading size-1 dims).
 * diagonal (CompositeExplicitAutograd, a view): at::native::diagonal's size, strides and
 * storage offset, the joint dim appended last. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/shape.h"

/* out[i] = self[src(i)] for every index i of out (CPU): src(i) along dim d is
 * (flip[d] ? size - 1 - i : i) % self's size, with self's dims aligned to out's last ones. */
static void gather(cfx_tensor *out, const cfx_tensor *self, const bool *flip)
{
    int n = out->ndim, lead = out->ndim - self->ndim;
    if (cfx_tensor_numel(out) == 0)
        return;
    size_t es = cfx_dtype_size((cfx_dtype)out->dtype);
    char *dst = cfx_tensor_data(out);
    const char *src = cfx_tensor_data(self);
    int64_t idx[CFX_MAX_DIMS] = {0};
    do {
        int64_t so = 0, doff = 0;
        for (int d = 0; d < n; d++) {
            doff += idx[d] * out->strides[d];
            if (d < lead)
                continue;
            int64_t s = self->sizes[d - lead], i = idx[d] % s;
            so += (flip && flip[d] ? s - 1 - i : i) * self->strides[d - lead];
        }
        memcpy(dst + doff * (int64_t)es, src + so * (int64_t)es, es);
    } while (cfx_geom_next_index(idx, out->sizes, n));
}

static cfx_tensor *flip_out(cfx_tensor *self)
{
    int64_t strides[CFX_MAX_DIMS];
    cfx_geom_preserve_strides(self->sizes, self->strides, self->ndim, strides);
    return cfx_tensor_new_strided(self->sizes, strides, self->ndim, (cfx_dtype)self->dtype, self->device);
}

cfx_tensor *cfx_cpu_flip(cfx_tensor *self, cfx_int_list dims)
{
    bool mask[CFX_MAX_DIMS] = {false};
    if (!cfx_shape_list_ok("aten::flip", dims) || !cfx_shape_dim_mask("aten::flip", dims, self->ndim, mask))
        return NULL;
    cfx_tensor *out = flip_out(self);
    if (out)
        gather(out, self, mask);
    return out;
}

cfx_tensor *cfx_meta_flip(cfx_tensor *self, cfx_int_list dims)
{
    const char *op = "aten::flip";
    if (!cfx_shape_list_ok(op, dims))
        return NULL;
    bool seen[CFX_MAX_DIMS] = {false};
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d;
        if (!cfx_geom_wrap_dim(dims.data[i], self->ndim, &d, op))
            return NULL;
        if (seen[d]) {
            cfx_error_set(CFX_ERR, op, "duplicate value in the list of dims");
            return NULL;
        }
        seen[d] = true;
    }
    return flip_out(self);
}

/* ---- repeat ------------------------------------------------------------------------------ */

static bool repeat_sizes(const char *op, const cfx_tensor *self, cfx_int_list repeats, int64_t *target)
{
    if (!cfx_shape_list_ok(op, repeats))
        return false;
    if (repeats.len < self->ndim) {
        cfx_error_set(CFX_ERR, op,
                      "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
        return false;
    }
    int lead = (int)repeats.len - self->ndim;
    for (int d = 0; d < (int)repeats.len; d++)
        target[d] = (d < lead ? 1 : self->sizes[d - lead]) * repeats.data[d];
    return true;
}

cfx_tensor *cfx_kernel_repeat(cfx_tensor *self, cfx_int_list repeats)
{
    int64_t target[CFX_MAX_DIMS];
    if (!repeat_sizes("aten::repeat", self, repeats, target))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(target, (int)repeats.len, (cfx_dtype)self->dtype, self->device);
    if (out && !cfx_tensor_is_meta(out))
        gather(out, self, NULL);
    return out;
}

cfx_tensor *cfx_meta_repeat(cfx_tensor *self, cfx_int_list repeats)
{
    const char *op = "aten::repeat";
    int64_t target[CFX_MAX_DIMS];
    if (!repeat_sizes(op, self, repeats, target))
        return NULL;
    for (int64_t i = 0; i < repeats.len; i++)
        if (repeats.data[i] < 0) {
            cfx_error_set(CFX_ERR, op, "Repeats cannot be negative, found %lld at index %lld",
                          (long long)repeats.data[i], (long long)i);
            return NULL;
        }
    return cfx_tensor_new(target, (int)repeats.len, (cfx_dtype)self->dtype, self->device);
}

/* ---- diagonal ---------------------------------------------------------------------------- */

cfx_tensor *cfx_kernel_diagonal(cfx_tensor *self, int64_t offset, int64_t dim1, int64_t dim2)
{
    const char *op = "aten::diagonal";
    int n = self->ndim;
    int64_t d1, d2;
    if (!cfx_geom_wrap_dim(dim1, n, &d1, op) || !cfx_geom_wrap_dim(dim2, n, &d2, op))
        return NULL;
    if (d1 == d2) {
        cfx_error_set(CFX_ERR, op, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1,
                      (long long)dim2);
        return NULL;
    }
    int64_t s1 = self->sizes[d1], s2 = self->sizes[d2], diag;
    if (offset >= 0)
        diag = s1 < s2 - offset ? s1 : s2 - offset;
    else
        diag = s1 + offset < s2 ? s1 + offset : s2;
    if (diag < 0)
        diag = 0;
    int64_t storage_offset = self->storage_offset;
    if (diag > 0)
        storage_offset += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    int m = 0;
    for (int d = 0; d < n; d++)
        if (d != d1 && d != d2) {
            sizes[m] = self->sizes[d];
            strides[m++] = self->strides[d];
        }
    sizes[m] = diag;
    strides[m++] = self->strides[d1] + self->strides[d2];
    return cfx_tensor_new_view(self, sizes, strides, m, storage_offset);
}
