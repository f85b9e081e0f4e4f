/* index.c - index.Tensor (advanced indexing), index_select, gather, scatter.src/.value.
 *
 * index.Tensor follows ATen's AdvancedIndex: index dtypes checked ("tensors used as indices
 * must be long, int, byte or bool tensors"), bool masks turned into long indices through
 * nonzero (on meta that is where 2.13 gives up: nonzero's NotImplementedError), the indices
 * broadcast together, the indexed dims transposed to the front when they are not adjacent,
 * and the result shaped before-dims + broadcast shape + after-dims. Its layout is
 * TensorIterator's over the restrided source (stride 0 in the replaced dims) and the indexers
 * (the broadcast indices with size-1 dims around them), as build_index_op allocates it; the
 * values are read element by element, a negative index counting from the end and an index out
 * of range failing with "index 3 is out of bounds for dimension 0 with size 3" (dimension =
 * position among the indices; the Meta kernel checks no values). index_select, gather and
 * scatter have contiguous outputs; their checks and texts are the C++ ones on CPU, with
 * 2.13's Python meta functions' differences on Meta (no bounds, index_select's list
 * assignment, scatter's src text). _index_put_impl_ (index_put_, index_put) writes through the
 * same index walk; its meta functions check nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/scatter_internal.h"
#include "dispatch/kernels/shape.h"
#include "dispatch/kernels/structured.h"

static bool index_dtype_ok(const cfx_tensor *t)
{
    return t->dtype == CFX_INT64 || t->dtype == CFX_INT32 || t->dtype == CFX_BOOL;
}

static int64_t index_at(const cfx_tensor *t, int64_t elem_offset)
{
    const char *p = (const char *)t->storage->data;
    return t->dtype == CFX_INT32 ? ((const int32_t *)p)[elem_offset] : ((const int64_t *)p)[elem_offset];
}

static bool out_of_bounds(const char *op, int64_t v, int dim, int64_t size)
{
    if (v < -size || v >= size) {
        cfx_error_set(CFX_ERR, op, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, dim,
                      (long long)size);
        return true;
    }
    return false;
}

/* ---- index.Tensor ---------------------------------------------------------------------------- */

typedef struct adv {
    int n;                          /* self's dims */
    const cfx_tensor *idx[CFX_MAX_DIMS]; /* per (possibly transposed) self dim, NULL = not indexed */
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS]; /* self, transposed when needed */
    int before, indexed;
    int bn;
    int64_t bshape[CFX_MAX_DIMS];
    int rn;
    int64_t rshape[CFX_MAX_DIMS];
} adv;

static void put_shapes(cfx_buf *b, const cfx_tensor *const *ts, int n)
{
    bool first = true;
    for (int i = 0; i < n; i++)
        if (ts[i]) {
            cfx_buf_puts(b, first ? "" : ", ");
            cfx_geom_put_dims(b, ts[i]->sizes, ts[i]->ndim);
            first = false;
        }
}

/* The checks and shapes of index(self, indices); masks expanded on CPU (their nonzero
 * columns are scope-owned tensors). */
static bool adv_init(adv *a, const char *op, const cfx_tensor *self, cfx_tensor_list indices, bool meta)
{
    int n = self->ndim;
    if (indices.len > n) {
        cfx_error_set(CFX_ERR, op, "too many indices for tensor of dimension %d (got %lld)", n, (long long)indices.len);
        return false;
    }
    for (int64_t i = 0; i < indices.len; i++)
        if (indices.data[i] && !index_dtype_ok(indices.data[i])) {
            cfx_error_set(CFX_ERR, op, "tensors used as indices must be long, int, byte or bool tensors");
            return false;
        }
    const cfx_tensor *list[CFX_MAX_DIMS];
    int m = 0;
    for (int64_t i = 0; i < indices.len; i++) {
        cfx_tensor *t = indices.data[i];
        if (!t || t->dtype != CFX_BOOL) {
            if (m >= CFX_MAX_DIMS)
                break;
            list[m++] = t;
            continue;
        }
        if (meta) {
            cfx_meta_nonzero(t);
            return false;
        }
        for (int j = 0; j < t->ndim; j++)
            if (m + j >= n || t->sizes[j] != self->sizes[m + j]) {
                cfx_buf b;
                cfx_buf_init(&b);
                cfx_buf_puts(&b, "The shape of the mask ");
                cfx_geom_put_dims(&b, t->sizes, t->ndim);
                cfx_buf_printf(&b, " at index %d does not match the shape of the indexed tensor ", j);
                cfx_geom_put_dims(&b, self->sizes, n);
                cfx_buf_printf(&b, " at index %d", m + j);
                char *msg = cfx_buf_take(&b);
                cfx_error_set_text(CFX_ERR, op, msg ? msg : "mask shape mismatch");
                cfx_free(msg);
                return false;
            }
        cfx_tensor *nz = cfx_cpu_nonzero(t);
        if (!nz)
            return false;
        for (int j = 0; j < t->ndim; j++) {
            list[m++] = cfx_kernel_select_int(nz, 1, j);
            if (!list[m - 1])
                return false;
        }
        cfx_kernel_discard(nz);
    }
    if (m > n) {
        cfx_error_set(CFX_ERR, op, "too many indices for tensor of dimension %d (got %d)", n, m);
        return false;
    }
    /* broadcast the defined indices */
    a->bn = 0;
    int ndef = 0;
    for (int i = 0; i < m; i++) {
        if (!list[i])
            continue;
        int64_t prev[CFX_MAX_DIMS];
        int pn = a->bn;
        memcpy(prev, a->bshape, (size_t)pn * sizeof prev[0]);
        if (ndef == 0) {
            a->bn = list[i]->ndim;
            memcpy(a->bshape, list[i]->sizes, (size_t)a->bn * sizeof a->bshape[0]);
        } else if (!cfx_geom_broadcast(prev, pn, list[i]->sizes, list[i]->ndim, a->bshape, &a->bn, op)) {
            cfx_error_clear();
            if (meta) {
                cfx_buf b;
                cfx_buf_init(&b);
                int64_t len = list[i]->sizes[list[i]->ndim - 1];
                cfx_buf_printf(&b, "Attempting to broadcast a dimension of length %lld at -1! Mismatching argument at "
                                   "index %d had ", (long long)len, ndef);
                cfx_prims_put_size(&b, list[i]->sizes, list[i]->ndim);
                cfx_buf_puts(&b, "; but expected shape should be broadcastable to ");
                cfx_geom_put_dims(&b, prev, pn);
                char *msg = cfx_buf_take(&b);
                cfx_error_set_text(CFX_ERR, op, msg ? msg : "broadcast mismatch");
                cfx_free(msg);
            } else {
                cfx_buf b;
                cfx_buf_init(&b);
                cfx_buf_puts(&b, "shape mismatch: indexing tensors could not be broadcast together with shapes ");
                put_shapes(&b, list, m);
                char *msg = cfx_buf_take(&b);
                cfx_error_set_text(CFX_ERR, op, msg ? msg : "shape mismatch");
                cfx_free(msg);
            }
            return false;
        }
        ndef++;
    }
    /* hasContiguousSubspace, else transposeToFront */
    int first = -1, last = -1;
    for (int i = 0; i < m; i++)
        if (list[i]) {
            if (first < 0)
                first = i;
            last = i;
        }
    bool contiguous = true;
    for (int i = first; i >= 0 && i <= last; i++)
        contiguous &= list[i] != NULL;
    a->n = n;
    int k = 0;
    if (contiguous) {
        for (int d = 0; d < n; d++) {
            a->idx[d] = d < m ? list[d] : NULL;
            a->sizes[d] = self->sizes[d];
            a->strides[d] = self->strides[d];
        }
    } else {
        for (int pass = 0; pass < 2; pass++)
            for (int d = 0; d < n; d++) {
                bool indexed = d < m && list[d];
                if (indexed != (pass == 0))
                    continue;
                a->idx[k] = indexed ? list[d] : NULL;
                a->sizes[k] = self->sizes[d];
                a->strides[k++] = self->strides[d];
            }
    }
    a->before = a->indexed = 0;
    for (int d = 0; d < n; d++) {
        if (a->idx[d])
            a->indexed++;
        else if (a->indexed == 0)
            a->before++;
    }
    if (ndef == 0)
        a->before = n; /* no index at all: the result is self's shape */
    a->rn = 0;
    for (int d = 0; d < a->before; d++)
        a->rshape[a->rn++] = a->sizes[d];
    for (int d = 0; d < a->bn && ndef; d++)
        a->rshape[a->rn++] = a->bshape[d];
    for (int d = a->before + a->indexed; d < n; d++)
        a->rshape[a->rn++] = a->sizes[d];
    return true;
}

/* The strides of index t broadcast to the result (0 outside its dims and where it is 1). */
static void indexer_strides(const adv *a, const cfx_tensor *t, int64_t *out)
{
    for (int d = 0; d < a->rn; d++)
        out[d] = 0;
    int off = a->before + a->bn - t->ndim;
    for (int j = 0; j < t->ndim; j++)
        out[off + j] = t->sizes[j] == 1 && a->rshape[off + j] != 1 ? 0 : t->strides[j];
}

/* TensorIterator's output layout over the restrided source and the indexers. */
static void adv_output_strides(const adv *a, int64_t *out)
{
    int64_t ops[CFX_MAX_DIMS + 1][CFX_MAX_DIMS];
    const int64_t *lists[CFX_MAX_DIMS + 1];
    int nops = 0, r = 0;
    for (int d = 0; d < a->before; d++)
        ops[0][r++] = a->strides[d];
    for (int d = 0; d < a->bn && a->indexed; d++)
        ops[0][r++] = 0;
    for (int d = a->before + a->indexed; d < a->n; d++)
        ops[0][r++] = a->strides[d];
    lists[nops++] = ops[0];
    bool same_shape = true; /* every indexer spans the whole result */
    for (int d = 0; d < a->n; d++)
        if (a->idx[d]) {
            indexer_strides(a, a->idx[d], ops[nops]);
            lists[nops] = ops[nops];
            nops++;
        }
    for (int d = 0; d < a->rn; d++)
        if ((d < a->before || d >= a->before + a->bn) && a->rshape[d] != 1)
            same_shape = false;
    if (nops == 1 || !same_shape || !cfx_iter_fast_setup_strides(a->rshape, a->rn, lists, nops, out))
        cfx_iter_output_strides(a->rshape, a->rn, lists, nops, out);
}

/* The element offset in self's storage of the result position pos (false + error: an index
 * out of range). */
static bool adv_offset(const adv *a, const char *op, const cfx_tensor *self, const int64_t *pos, int64_t *out)
{
    int64_t off = self->storage_offset;
    int r = 0;
    for (int d = 0; d < a->before; d++, r++)
        off += pos[r] * a->strides[d];
    int k = 0;
    for (int d = a->before; d < a->before + a->indexed; d++, k++) {
        const cfx_tensor *t = a->idx[d];
        int64_t io = t->storage_offset;
        int toff = a->bn - t->ndim;
        for (int j = 0; j < t->ndim; j++)
            io += t->sizes[j] == 1 ? 0 : pos[a->before + toff + j] * t->strides[j];
        int64_t v = index_at(t, io);
        if (out_of_bounds(op, v, k, a->sizes[d]))
            return false;
        off += (v < 0 ? v + a->sizes[d] : v) * a->strides[d];
    }
    r = a->before + (a->indexed ? a->bn : 0);
    for (int d = a->before + a->indexed; d < a->n; d++, r++)
        off += pos[r] * a->strides[d];
    *out = off;
    return true;
}

/* pos += 1 in the result's row-major order */
static void adv_next(const adv *a, int64_t *pos)
{
    for (int d = a->rn - 1; d >= 0; d--) {
        if (++pos[d] < a->rshape[d])
            break;
        pos[d] = 0;
    }
}

static cfx_tensor *index_tensor(cfx_tensor *self, cfx_tensor_list indices, bool meta)
{
    const char *op = "aten::index.Tensor";
    cfx_scope sc = cfx_scope_begin();
    adv a;
    cfx_tensor *out = NULL;
    if (adv_init(&a, op, self, indices, meta)) {
        int64_t strides[CFX_MAX_DIMS];
        adv_output_strides(&a, strides);
        out = cfx_tensor_new_strided(a.rshape, strides, a.rn, (cfx_dtype)self->dtype, self->device);
    }
    if (out && !meta) {
        int64_t numel = cfx_tensor_numel(out), pos[CFX_MAX_DIMS] = {0};
        size_t item = cfx_dtype_size((cfx_dtype)self->dtype);
        const char *src = (const char *)self->storage->data;
        char *dst = (char *)cfx_tensor_data(out);
        for (int64_t e = 0; e < numel && out; e++) {
            int64_t off, o = 0;
            if (!adv_offset(&a, op, self, pos, &off)) {
                cfx_kernel_discard(out);
                out = NULL;
                break;
            }
            for (int d = 0; d < a.rn; d++)
                o += pos[d] * out->strides[d];
            memcpy(dst + o * (int64_t)item, src + off * (int64_t)item, item);
            adv_next(&a, pos);
        }
    }
    cfx_tensor_retain(out);
    cfx_scope_end(sc);
    return out ? cfx_autorelease(out) : NULL;
}

cfx_tensor *cfx_cpu_index_Tensor(cfx_tensor *self, cfx_tensor_list indices) { return index_tensor(self, indices, false); }
cfx_tensor *cfx_meta_index_Tensor(cfx_tensor *self, cfx_tensor_list indices) { return index_tensor(self, indices, true); }

/* ---- _index_put_impl_, index_put_, index_put -------------------------------------------------- */

/* _index_put_impl_ on CPU: the result positions of index(self, indices) receive values
 * broadcast to the indexing result's shape ("shape mismatch: value tensor of shape [2] cannot
 * be broadcast to indexing result of shape [3, 3]"), of self's dtype; accumulate adds, in
 * order (duplicates add up, as PyTorch's serial accumulate kernel). */
cfx_tensor *cfx_cpu__index_put_impl_(cfx_tensor *self, cfx_tensor_list indices, cfx_tensor *values, bool accumulate,
                                     bool unsafe)
{
    (void)unsafe;
    const char *op = "aten::_index_put_impl_";
    cfx_scope sc = cfx_scope_begin();
    adv a;
    bool ok = adv_init(&a, op, self, indices, false);
    int64_t vst[CFX_MAX_DIMS] = {0};
    if (ok) {
        int off = a.rn - values->ndim;
        ok = off >= 0;
        for (int j = 0; ok && j < values->ndim; j++) {
            ok = values->sizes[j] == 1 || values->sizes[j] == a.rshape[off + j];
            vst[off + j] = values->sizes[j] == 1 ? 0 : values->strides[j];
        }
        if (!ok) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "shape mismatch: value tensor of shape ");
            cfx_geom_put_dims(&b, values->sizes, values->ndim);
            cfx_buf_puts(&b, " cannot be broadcast to indexing result of shape ");
            cfx_geom_put_dims(&b, a.rshape, a.rn);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "shape mismatch");
            cfx_free(msg);
        }
    }
    if (ok && values->dtype != self->dtype) {
        cfx_error_set(CFX_ERR, op,
                      "Index put requires the source and destination dtypes match, got %s for the destination and %s "
                      "for the source.",
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype), cfx_dtype_scalar_name((cfx_dtype)values->dtype));
        ok = false;
    }
    int64_t numel = 1, pos[CFX_MAX_DIMS] = {0};
    for (int d = 0; ok && d < a.rn; d++)
        numel *= a.rshape[d];
    size_t item = cfx_dtype_size((cfx_dtype)self->dtype);
    char *dst = (char *)self->storage->data;
    const char *src = (const char *)values->storage->data;
    for (int64_t e = 0; ok && e < numel; e++) {
        int64_t off, vo = values->storage_offset;
        if (!(ok = adv_offset(&a, op, self, pos, &off)))
            break;
        for (int d = 0; d < a.rn; d++)
            vo += pos[d] * vst[d];
        char *to = dst + off * (int64_t)item;
        const char *from = src + vo * (int64_t)item;
        if (!accumulate) {
            memcpy(to, from, item);
        } else {
            switch ((cfx_dtype)self->dtype) {
            case CFX_FLOAT32: *(float *)to += *(const float *)from; break;
            case CFX_FLOAT64: *(double *)to += *(const double *)from; break;
            case CFX_INT32: *(int32_t *)to = (int32_t)((uint32_t)*(int32_t *)to + (uint32_t)*(const int32_t *)from); break;
            case CFX_INT64: *(int64_t *)to = (int64_t)((uint64_t)*(int64_t *)to + (uint64_t)*(const int64_t *)from); break;
            case CFX_INT16: *(int16_t *)to = (int16_t)((uint16_t)*(int16_t *)to + (uint16_t)*(const int16_t *)from); break;
            case CFX_INT8: *(int8_t *)to = (int8_t)((uint8_t)*(int8_t *)to + (uint8_t)*(const int8_t *)from); break;
            case CFX_UINT8: *(uint8_t *)to = (uint8_t)(*(uint8_t *)to + *(const uint8_t *)from); break;
            case CFX_BOOL: *(bool *)to = *(bool *)to || *(const bool *)from; break;
            case CFX_COMPLEX64: /* both parts */
                ((float *)to)[0] += ((const float *)from)[0], ((float *)to)[1] += ((const float *)from)[1];
                break;
            case CFX_COMPLEX128:
                ((double *)to)[0] += ((const double *)from)[0], ((double *)to)[1] += ((const double *)from)[1];
                break;
            }
        }
        adv_next(&a, pos);
    }
    cfx_scope_end(sc);
    if (!ok)
        return NULL;
    cfx_tensor_bump_version(self);
    return cfx_autorelease(cfx_tensor_retain(self));
}

/* 2.13's meta functions check nothing: self (in place) or empty_like(self) */
cfx_tensor *cfx_meta__index_put_impl_(cfx_tensor *self, cfx_tensor_list indices, cfx_tensor *values, bool accumulate,
                                      bool unsafe)
{
    (void)indices, (void)values, (void)accumulate, (void)unsafe;
    cfx_tensor_bump_version(self);
    return cfx_autorelease(cfx_tensor_retain(self));
}
cfx_tensor *cfx_meta_index_put_(cfx_tensor *self, cfx_tensor_list indices, cfx_tensor *values, bool accumulate)
{
    return cfx_meta__index_put_impl_(self, indices, values, accumulate, false);
}
cfx_tensor *cfx_meta_index_put(cfx_tensor *self, cfx_tensor_list indices, cfx_tensor *values, bool accumulate)
{
    (void)indices, (void)values, (void)accumulate;
    return cfx_kernel_empty_like(self, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());
}

/* CompositeExplicitAutograd: index_put_ is _index_put_impl_(unsafe=false); index_put is
 * self.clone(preserve_format).index_put_(...), through the dispatcher */
cfx_tensor *cfx_kernel_index_put_(cfx_tensor *self, cfx_tensor_list indices, cfx_tensor *values, bool accumulate)
{
    return cfx__index_put_impl_(self, indices, values, accumulate, false);
}
cfx_tensor *cfx_kernel_index_put(cfx_tensor *self, cfx_tensor_list indices, cfx_tensor *values, bool accumulate)
{
    cfx_tensor *c = cfx_clone(self, cfx_int(CFX_PRESERVE_FORMAT));
    return c ? cfx_index_put_(c, indices, values, accumulate) : NULL;
}

/* ---- index_select ---------------------------------------------------------------------------- */

static cfx_tensor *index_select(cfx_tensor *self, int64_t dim, cfx_tensor *index, bool meta)
{
    const char *op = "aten::index_select";
    int n = self->ndim;
    int64_t d = dim;
    int64_t numel = cfx_tensor_numel(index);
    if (meta) { /* meta_index_select: result_size[dim] = index.numel() on a Python list */
        if (n > 0 && (dim >= n || dim < -n)) {
            cfx_error_set(CFX_ERR, op, "list assignment index out of range");
            return NULL;
        }
        d = dim < 0 ? dim + n : dim;
    } else {
        if (!cfx_geom_wrap_dim(dim, n, &d, op))
            return NULL;
        if (index->ndim > 1) {
            cfx_error_set(CFX_ERR, op, "index_select(): Index is supposed to be a vector");
            return NULL;
        }
        if (n == 0 && numel != 1) {
            cfx_error_set(CFX_ERR, op, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                          (long long)numel);
            return NULL;
        }
        if (index->dtype != CFX_INT64 && index->dtype != CFX_INT32) {
            cfx_error_set(CFX_ERR, op, "index_select(): Expected dtype int32 or int64 for index");
            return NULL;
        }
    }
    int64_t sizes[CFX_MAX_DIMS];
    memcpy(sizes, self->sizes, (size_t)n * sizeof sizes[0]);
    if (n > 0)
        sizes[d] = numel;
    cfx_tensor *out = cfx_tensor_new(sizes, n, (cfx_dtype)self->dtype, self->device);
    if (!out || meta)
        return out;
    /* out[..., i, ...] = self[..., index[i], ...], in out's row-major order */
    int64_t size_d = n ? self->sizes[d] : 1, total = cfx_tensor_numel(out);
    size_t item = cfx_dtype_size((cfx_dtype)self->dtype);
    int64_t pos[CFX_MAX_DIMS] = {0};
    for (int64_t e = 0; e < total; e++) {
        int64_t off = self->storage_offset;
        for (int k = 0; k < n; k++) {
            int64_t p = pos[k];
            if (k == d) {
                int64_t io = index->storage_offset + (index->ndim ? p * index->strides[0] : 0);
                p = index_at(index, io);
                if (p < 0 || p >= size_d) {
                    cfx_error_set(CFX_ERR, op, "index out of range in self");
                    cfx_kernel_discard(out);
                    return NULL;
                }
            }
            off += p * self->strides[k];
        }
        if (n == 0) {
            int64_t p = index_at(index, index->storage_offset);
            if (p != 0 && p != -1) {
                cfx_error_set(CFX_ERR, op, "index out of range in self");
                cfx_kernel_discard(out);
                return NULL;
            }
        }
        memcpy((char *)cfx_tensor_data(out) + e * (int64_t)item, (const char *)self->storage->data + off * (int64_t)item,
               item);
        for (int k = n - 1; k >= 0; k--) {
            if (++pos[k] < sizes[k])
                break;
            pos[k] = 0;
        }
    }
    return out;
}

cfx_tensor *cfx_cpu_index_select(cfx_tensor *self, int64_t dim, cfx_tensor *index) { return index_select(self, dim, index, false); }
cfx_tensor *cfx_meta_index_select(cfx_tensor *self, int64_t dim, cfx_tensor *index) { return index_select(self, dim, index, true); }

/* ---- gather and scatter ------------------------------------------------------------------------- */

static int64_t nonempty_size(const cfx_tensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }


bool cfx_index_each(const cfx_tensor *index, cfx_index_fn fn, void *ctx)
{
    int64_t numel = cfx_tensor_numel(index), pos[CFX_MAX_DIMS] = {0};
    for (int64_t e = 0; e < numel; e++) {
        int64_t io = index->storage_offset;
        for (int k = 0; k < index->ndim; k++)
            io += pos[k] * index->strides[k];
        if (!fn(ctx, pos, index_at(index, io)))
            return false;
        for (int k = index->ndim - 1; k >= 0; k--) {
            if (++pos[k] < index->sizes[k])
                break;
            pos[k] = 0;
        }
    }
    return true;
}

typedef struct gs_ctx {
    const char *op;
    int64_t dim;
    const cfx_tensor *self, *src; /* gather: read self; scatter: read src (NULL: value) */
    cfx_tensor *out;
    cfx_value value;
} gs_ctx;

int64_t cfx_index_offset_of(const cfx_tensor *t, const int64_t *pos, int64_t dim, int64_t at)
{
    int64_t off = t->storage_offset;
    for (int k = 0; k < t->ndim; k++)
        off += (k == dim ? at : pos[k]) * t->strides[k];
    return off;
}

static bool gather_one(void *vctx, const int64_t *pos, int64_t v)
{
    gs_ctx *c = vctx;
    int64_t size = nonempty_size(c->self, (int)c->dim);
    if (v < 0 || v >= size) {
        cfx_error_set(CFX_ERR, c->op, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v,
                      (long long)c->dim, (long long)size);
        return false;
    }
    size_t item = cfx_dtype_size((cfx_dtype)c->self->dtype);
    int64_t so = cfx_index_offset_of(c->self, pos, c->dim, v), oo = cfx_index_offset_of(c->out, pos, -1, 0);
    memcpy((char *)c->out->storage->data + oo * (int64_t)item, (const char *)c->self->storage->data + so * (int64_t)item,
           item);
    return true;
}

static cfx_tensor *gather(cfx_tensor *self, int64_t dim, cfx_tensor *index, bool meta)
{
    const char *op = "aten::gather";
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return NULL;
    int sd = self->ndim ? self->ndim : 1, id = index->ndim ? index->ndim : 1;
    if (sd != id) {
        cfx_error_set(CFX_ERR, op, "Index tensor must have the same number of dimensions as input tensor");
        return NULL;
    }
    if (index->dtype != CFX_INT64 && index->dtype != CFX_INT32) {
        cfx_error_set(CFX_ERR, op, "gather(): Expected dtype int32/int64 for index");
        return NULL;
    }
    for (int k = 0; k < self->ndim && cfx_tensor_numel(index) > 0; k++)
        if (k != d && nonempty_size(index, k) > nonempty_size(self, k)) {
            char prefix[96], mid[64];
            snprintf(prefix, sizeof prefix, "Size does not match at dimension %d expected index ", k);
            snprintf(mid, sizeof mid, " apart from dimension %lld", (long long)d);
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, prefix);
            cfx_geom_put_dims(&b, index->sizes, index->ndim);
            cfx_buf_puts(&b, " to be no larger than self ");
            cfx_geom_put_dims(&b, self->sizes, self->ndim);
            cfx_buf_puts(&b, mid);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : prefix);
            cfx_free(msg);
            return NULL;
        }
    cfx_tensor *out = cfx_tensor_new(index->sizes, index->ndim, (cfx_dtype)self->dtype, self->device);
    if (!out || meta)
        return out;
    gs_ctx c = {op, d, self, NULL, out, cfx_none()};
    if (!cfx_index_each(index, gather_one, &c)) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_cpu_gather(cfx_tensor *self, int64_t dim, cfx_tensor *index, bool sparse_grad)
{
    (void)sparse_grad; /* only the backward's layout */
    return gather(self, dim, index, false);
}

cfx_tensor *cfx_meta_gather(cfx_tensor *self, int64_t dim, cfx_tensor *index, bool sparse_grad)
{
    (void)sparse_grad;
    return gather(self, dim, index, true);
}

static bool scatter_one(void *vctx, const int64_t *pos, int64_t v)
{
    gs_ctx *c = vctx;
    int64_t size = nonempty_size(c->out, (int)c->dim);
    if (v < 0 || v >= size) {
        cfx_error_set(CFX_ERR, c->op, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v,
                      (long long)c->dim, (long long)size);
        return false;
    }
    size_t item = cfx_dtype_size((cfx_dtype)c->out->dtype);
    int64_t oo = cfx_index_offset_of(c->out, pos, c->dim, v);
    char *dst = (char *)c->out->storage->data + oo * (int64_t)item;
    if (c->src) {
        memcpy(dst, (const char *)c->src->storage->data + cfx_index_offset_of(c->src, pos, -1, 0) * (int64_t)item, item);
        return true;
    }
    double d = cfx_scalar_to_double(c->value);
    int64_t i = cfx_scalar_to_int64(c->value);
    switch ((cfx_dtype)c->out->dtype) {
    case CFX_FLOAT32: *(float *)dst = (float)d; break;
    case CFX_FLOAT64: *(double *)dst = d; break;
    case CFX_INT64: *(int64_t *)dst = i; break;
    case CFX_INT32: *(int32_t *)dst = (int32_t)i; break;
    case CFX_BOOL: *(bool *)dst = c->value.kind == CFX_V_DOUBLE ? d != 0 : i != 0; break;
    case CFX_UINT8: *(uint8_t *)dst = (uint8_t)i; break;
    case CFX_INT8: *(int8_t *)dst = (int8_t)i; break;
    case CFX_INT16: *(int16_t *)dst = (int16_t)i; break;
    case CFX_COMPLEX64: ((float *)dst)[0] = (float)d, ((float *)dst)[1] = 0; break;
    case CFX_COMPLEX128: ((double *)dst)[0] = d, ((double *)dst)[1] = 0; break;
    }
    return true;
}

/* scatter_meta_impl's checks (src NULL: the value overload), shared with scatter_add and
 * scatter_reduce (scatter_reduce.c): *d is the wrapped dim. */
bool cfx_scatter_check(const char *op, const cfx_tensor *self, int64_t dim, const cfx_tensor *index,
                       const cfx_tensor *src, bool meta, int64_t *wrapped)
{
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return false;
    /* scatter_gather_dtype_check: the index is read as int32 or int64 */
    if (cfx_tensor_numel(index) && index->dtype != CFX_INT64 && index->dtype != CFX_INT32) {
        cfx_error_set(CFX_ERR, op, "scatter(): Expected dtype int32/int64 for index");
        return false;
    }
    if (src && src->dtype != self->dtype) {
        cfx_error_set(CFX_ERR, op, "scatter(): Expected self.dtype to be equal to src.dtype");
        return false;
    }
    if (cfx_tensor_numel(index) > 0) {
        if ((self->ndim ? self->ndim : 1) != (index->ndim ? index->ndim : 1)) {
            cfx_error_set(CFX_ERR, op, "Index tensor must have the same number of dimensions as self tensor");
            return false;
        }
        int dims = self->ndim ? self->ndim : 1;
        bool wrong_self = false, wrong_src = false;
        for (int k = 0; k < dims; k++)
            wrong_self |= k != d && nonempty_size(index, k) > nonempty_size(self, k);
        /* scatter_shape_check: the C++ check reads src.size(k) up to self's dims (an IndexError
         * past src's own) before it compares src's dims with index's; the meta checks the dims
         * first. Either way src is read only within its dims. */
        bool same_dims = !src || (src->ndim ? src->ndim : 1) == (index->ndim ? index->ndim : 1);
        for (int k = 0; src && !wrong_self && !wrong_src && k < dims && (same_dims || !meta); k++) {
            if (src->ndim && k >= src->ndim) {
                cfx_error_set(CFX_ERR, op, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                              -src->ndim, src->ndim - 1, k);
                return false;
            }
            wrong_src = nonempty_size(index, k) > nonempty_size(src, k);
        }
        if (!same_dims && !(meta && wrong_self)) {
            cfx_error_set(CFX_ERR, op, "Index tensor must have the same number of dimensions as src tensor");
            return false;
        }
        if (wrong_self || wrong_src) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "Expected index ");
            if (meta && wrong_self) { /* the Python meta checks self, then src, each on its own */
                cfx_prims_put_size(&b, index->sizes, index->ndim);
                cfx_buf_puts(&b, " to be no larger than self ");
                cfx_prims_put_size(&b, self->sizes, self->ndim);
                cfx_buf_printf(&b, " apart from dimension %lld", (long long)d);
            } else if (meta) {
                cfx_prims_put_size(&b, index->sizes, index->ndim);
                cfx_buf_puts(&b, " to be no larger than src ");
                cfx_prims_put_size(&b, src->sizes, src->ndim);
            } else {
                cfx_geom_put_dims(&b, index->sizes, index->ndim);
                cfx_buf_puts(&b, " to be no larger than self ");
                cfx_geom_put_dims(&b, self->sizes, self->ndim);
                cfx_buf_printf(&b, " apart from dimension %lld", (long long)d);
                if (src) {
                    cfx_buf_puts(&b, " and to be no larger size than src ");
                    cfx_geom_put_dims(&b, src->sizes, src->ndim);
                }
            }
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "scatter: index too large");
            cfx_free(msg);
            return false;
        }
    }
    *wrapped = d;
    return true;
}

/* scatter_meta_impl + the CPU kernel (src NULL: the value overload) */
static cfx_tensor *scatter(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src, cfx_value value, bool meta)
{
    const char *op = src ? "aten::scatter.src" : "aten::scatter.value";
    int64_t d;
    if (!cfx_scatter_check(op, self, dim, index, src, meta, &d))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(self->sizes, self->ndim, (cfx_dtype)self->dtype, self->device);
    if (!out || meta)
        return out;
    cfx_cpu_copy(out, self);
    gs_ctx c = {op, d, self, src, out, value};
    if (!cfx_index_each(index, scatter_one, &c)) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_cpu_scatter_src(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src)
{
    return scatter(self, dim, index, src, cfx_none(), false);
}

cfx_tensor *cfx_meta_scatter_src(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src)
{
    return scatter(self, dim, index, src, cfx_none(), true);
}

cfx_tensor *cfx_cpu_scatter_value(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_value value)
{
    return scatter(self, dim, index, NULL, value, false);
}

cfx_tensor *cfx_meta_scatter_value(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_value value)
{
    return scatter(self, dim, index, NULL, value, true);
}
