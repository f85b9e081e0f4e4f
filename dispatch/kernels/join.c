/* join.c - copy_, cat, stack, split.Tensor and split_with_sizes.
 *
 * cat is structured in PyTorch: its CPU kernel runs the C++ meta function (TORCH_META_FUNC(cat):
 * zero-dim check, legacy dim wrap, "Sizes of tensors must match except in dimension 0. Expected
 * size 3 but got size 4 for tensor number 1 in the list."), while 2.13's Meta key runs the
 * Python reference torch._refs.cat, whose checks and texts differ ("Expected 3 in dimension 1
 * but got 4 ..."; a 0-dim input fails with Python's "list assignment index out of range").
 * Both skip legacy empty 1-D inputs, promote the dtypes (result_type) and lay the output out
 * in the inputs' common suggested memory format (contiguous unless all agree on channels-last).
 * stack is CompositeExplicitAutograd (C++ texts, any device) with a Meta kernel of its own (the
 * reference's texts); both are cat along the wrapped dim viewed with the new dim inserted, or
 * cat of the unsqueezed inputs when the new dim is last. The split ops are views made with
 * slice's geometry. copy_ writes src, broadcast, into self with conversion; into a meta self
 * it only checks the shapes, out of a meta src it fails, as in ATen's copy_impl. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/shape.h"

static cfx_tensor *same(cfx_tensor *self) { return cfx_autorelease(cfx_tensor_retain(self)); }

/* ---- copy_ -------------------------------------------------------------------------------- */

cfx_tensor *cfx_kernel_copy_(cfx_tensor *self, cfx_tensor *src, bool non_blocking)
{
    (void)non_blocking; /* synchronous on CPU */
    const char *op = "aten::copy_";
    if (self == src) {
        cfx_tensor_bump_version(self);
        return same(self);
    }
    bool meta = self->device.type == CFX_DEVICE_META;
    if (!meta && src->device.type == CFX_DEVICE_META) {
        cfx_error_set(CFX_ERR_NOTIMPL, op, "Cannot copy out of meta tensor; no data!");
        return NULL;
    }
    if (!meta && cfx_iter_internal_overlap(self)) {
        cfx_error_set(CFX_ERR, op,
                      "unsupported operation: more than one element of the written-to tensor refers to a single "
                      "memory location. Please clone() the tensor before performing the operation.");
        return NULL;
    }
    if (!meta && cfx_iter_partial_overlap(self, src)) {
        cfx_error_set(CFX_ERR, op,
                      "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                      "single memory location. Please clone() the tensor before performing the operation.");
        return NULL;
    }
    int64_t shape[CFX_MAX_DIMS];
    int n;
    if (!cfx_geom_broadcast(self->sizes, self->ndim, src->sizes, src->ndim, shape, &n, op))
        return NULL;
    if (n != self->ndim || memcmp(shape, self->sizes, (size_t)n * sizeof shape[0])) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "output with shape ");
        cfx_geom_put_dims(&b, self->sizes, self->ndim);
        cfx_buf_puts(&b, " doesn't match the broadcast shape ");
        cfx_geom_put_dims(&b, shape, n);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "output shape mismatch");
        cfx_free(msg);
        return NULL;
    }
    if (!meta) {
        /* src broadcast to self's shape: stride 0 along the new and the size-1 dims */
        int64_t strides[CFX_MAX_DIMS];
        for (int d = 0; d < n; d++) {
            int sd = d - (n - src->ndim);
            strides[d] = sd < 0 || src->sizes[sd] != shape[d] ? 0 : src->strides[sd];
        }
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *from = cfx_tensor_new_view(src, shape, strides, n, src->storage_offset);
        if (from)
            cfx_cpu_copy(self, from);
        cfx_scope_end(s);
        if (!from)
            return NULL;
    }
    cfx_tensor_bump_version(self);
    return same(self);
}

/* ---- cat ------------------------------------------------------------------------------------ */

/* cat_compute_output_memory_format (C++ and reference alike) */
static cfx_memory_format cat_memory_format(cfx_tensor_list ts)
{
    bool have = false;
    cfx_memory_format format = CFX_CONTIGUOUS_FORMAT;
    for (int64_t i = 0; i < ts.len; i++) {
        const cfx_tensor *t = ts.data[i];
        cfx_memory_format f = cfx_geom_suggest_memory_format(t->sizes, t->strides, t->ndim);
        if (f == CFX_CONTIGUOUS_FORMAT || (have && f != format))
            return CFX_CONTIGUOUS_FORMAT;
        format = f;
        have = true;
    }
    return format;
}

static bool legacy_empty(const cfx_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* The output of a cat whose checks passed: sizes (n dims) in memory format mf. */
static cfx_tensor *cat_output(const char *op, const int64_t *sizes, int n, cfx_dtype dt, cfx_memory_format mf,
                              cfx_device dev)
{
    int64_t strides[CFX_MAX_DIMS];
    if (!cfx_geom_memory_format_strides(sizes, n, mf, strides, op))
        return NULL;
    return cfx_tensor_new_strided(sizes, strides, n, dt, dev);
}

static cfx_dtype cat_dtype(cfx_tensor_list ts)
{
    cfx_result_type_state st = {-1, -1};
    for (int64_t i = 0; i < ts.len; i++)
        cfx_result_type_update(&st, ts.data[i]);
    return cfx_result_type(&st);
}

static bool list_ok(const char *op, cfx_tensor_list ts)
{
    for (int64_t i = 0; i < ts.len; i++)
        if (!ts.data[i]) {
            cfx_error_set(CFX_ERR, op, "%s: expected a tensor at position %lld, got None", op, (long long)i);
            return false;
        }
    return true;
}

/* TORCH_META_FUNC(cat): the checks and the output of the CPU kernel. *wdim gets the wrapped
 * dim. */
static cfx_tensor *cat_structured(const char *op, cfx_tensor_list ts, int64_t dim, int64_t *wdim)
{
    if (!list_ok(op, ts))
        return NULL;
    for (int64_t i = 0; i < ts.len; i++)
        if (ts.data[i]->ndim == 0) {
            cfx_error_set(CFX_ERR, op, "zero-dimensional tensor (at position %lld) cannot be concatenated",
                          (long long)i);
            return NULL;
        }
    for (int64_t i = 0; i < ts.len; i++) /* legacy_cat_wrap_dim */
        if (!legacy_empty(ts.data[i])) {
            if (!cfx_geom_wrap_dim(dim, ts.data[i]->ndim, &dim, op))
                return NULL;
            break;
        }
    if (ts.len == 0) {
        cfx_error_set(CFX_ERR, op, "torch.cat(): expected a non-empty list of Tensors");
        return NULL;
    }
    *wdim = dim;
    int64_t valid = ts.len;
    for (int64_t i = 0; i < ts.len && valid == ts.len; i++)
        if (!legacy_empty(ts.data[i]))
            valid = i;
    cfx_memory_format mf = cat_memory_format(ts);
    cfx_dtype dt = cat_dtype(ts);
    cfx_device dev = ts.data[0]->device;
    if (valid == ts.len) {
        int64_t zero = 0;
        return cat_output(op, &zero, 1, dt, CFX_CONTIGUOUS_FORMAT, dev);
    }
    const cfx_tensor *ref = ts.data[valid];
    int64_t at_dim = 0;
    for (int64_t i = 0; i < ts.len; i++) {
        const cfx_tensor *t = ts.data[i];
        if (legacy_empty(t))
            continue;
        if (t->ndim != ref->ndim) {
            cfx_error_set(CFX_ERR, op, "Tensors must have same number of dimensions: got %d and %d", ref->ndim,
                          t->ndim);
            return NULL;
        }
        for (int d = 0; d < t->ndim; d++)
            if (d != dim && t->sizes[d] != ref->sizes[d]) {
                cfx_error_set(CFX_ERR, op,
                              "Sizes of tensors must match except in dimension %lld. Expected size %lld but got size "
                              "%lld for tensor number %lld in the list.",
                              (long long)dim, (long long)ref->sizes[d], (long long)t->sizes[d], (long long)i);
                return NULL;
            }
        at_dim += t->sizes[dim];
    }
    int64_t sizes[CFX_MAX_DIMS];
    memcpy(sizes, ref->sizes, (size_t)ref->ndim * sizeof sizes[0]);
    sizes[dim] = at_dim;
    return cat_output(op, sizes, ref->ndim, dt, mf, dev);
}

cfx_tensor *cfx_cpu_cat(cfx_tensor_list tensors, int64_t dim)
{
    int64_t d;
    cfx_tensor *out = cat_structured("aten::cat", tensors, dim, &d);
    if (!out || out->device.type != CFX_DEVICE_CPU)
        return out;
    int64_t at = 0;
    for (int64_t i = 0; i < tensors.len; i++) {
        cfx_tensor *t = tensors.data[i];
        if (legacy_empty(t))
            continue;
        int64_t len = t->sizes[d];
        if (len > 0 && cfx_tensor_numel(t) > 0) {
            cfx_scope s = cfx_scope_begin();
            int64_t sizes[CFX_MAX_DIMS];
            memcpy(sizes, out->sizes, (size_t)out->ndim * sizeof sizes[0]);
            sizes[d] = len;
            cfx_tensor *part = cfx_tensor_new_view(out, sizes, out->strides, out->ndim,
                                                   out->storage_offset + at * out->strides[d]);
            if (part)
                cfx_cpu_copy(part, t);
            cfx_scope_end(s);
            if (!part) {
                cfx_kernel_discard(out);
                return NULL;
            }
        }
        at += len;
    }
    return out;
}

/* torch._refs.cat, then prims.cat's _cat_meta on the inputs it keeps. */
static cfx_tensor *cat_reference(const char *op, cfx_tensor_list ts, int64_t dim)
{
    if (!list_ok(op, ts))
        return NULL;
    if (ts.len == 0) { /* no meta tensor to dispatch on: PyTorch runs the CPU kernel */
        cfx_error_set(CFX_ERR, op, "torch.cat(): expected a non-empty list of Tensors");
        return NULL;
    }
    const cfx_tensor *example = NULL;
    for (int64_t i = 0; i < ts.len; i++) {
        const cfx_tensor *t = ts.data[i];
        if (t->ndim == 1)
            continue;
        if (!example)
            example = t;
        else if (t->ndim != example->ndim) {
            cfx_error_set(CFX_ERR, op,
                          "Number of dimensions of tensors must match.  Expected %d-D tensors, but got %d-D for tensor "
                          "number %lld in the list",
                          example->ndim, t->ndim, (long long)i);
            return NULL;
        }
    }
    if (!example)
        example = ts.data[0];
    const cfx_tensor **kept = cfx_scope_alloc((size_t)ts.len * sizeof *kept);
    if (!kept)
        return NULL;
    int64_t nk = 0;
    for (int64_t i = 0; i < ts.len; i++) {
        const cfx_tensor *t = ts.data[i];
        if (t->ndim != example->ndim && t->sizes[0] != 0) {
            cfx_error_set(CFX_ERR, op,
                          "Number of dimensions of tensors must match.  Expected %d-D tensors, but got 1-D for tensor "
                          "number %lld in the list",
                          example->ndim, (long long)i);
            return NULL;
        }
        if (!legacy_empty(t))
            kept[nk++] = t;
    }
    cfx_memory_format mf = cat_memory_format(ts);
    cfx_dtype dt = cat_dtype(ts);
    cfx_device dev = ts.data[0]->device;
    if (nk == 0) {
        int64_t zero = 0;
        return cat_output(op, &zero, 1, dt, mf, dev);
    }
    const cfx_tensor *first = kept[0];
    if (!cfx_geom_wrap_dim(dim, first->ndim, &dim, op))
        return NULL;
    if (first->ndim == 0) {
        cfx_error_set(CFX_ERR, op, "list assignment index out of range");
        return NULL;
    }
    int64_t at_dim = 0;
    for (int64_t i = 0; i < nk; i++) {
        for (int d = 0; d < first->ndim; d++)
            if (d != dim && kept[i]->sizes[d] != first->sizes[d]) {
                cfx_error_set(CFX_ERR, op,
                              "Sizes of tensors must match except in dimension %lld. Expected %lld in dimension %d but "
                              "got %lld for tensor number %lld in the list",
                              (long long)dim, (long long)first->sizes[d], d, (long long)kept[i]->sizes[d],
                              (long long)i);
                return NULL;
            }
        at_dim += kept[i]->sizes[dim];
    }
    int64_t sizes[CFX_MAX_DIMS];
    memcpy(sizes, first->sizes, (size_t)first->ndim * sizeof sizes[0]);
    sizes[dim] = at_dim;
    return cat_output(op, sizes, first->ndim, dt, mf, dev);
}

cfx_tensor *cfx_meta_cat(cfx_tensor_list tensors, int64_t dim)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = cfx_tensor_retain(cat_reference("aten::cat", tensors, dim));
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

/* ---- stack ---------------------------------------------------------------------------------- */

static bool any_meta(cfx_tensor_list ts)
{
    for (int64_t i = 0; i < ts.len; i++)
        if (ts.data[i] && ts.data[i]->device.type == CFX_DEVICE_META)
            return true;
    return false;
}

/* at::native::stack (reference = false) or torch._refs.stack (true). */
static cfx_tensor *stack(cfx_tensor_list ts, int64_t dim, bool reference)
{
    const char *op = "aten::stack";
    if (ts.len == 0) {
        cfx_error_set(CFX_ERR, op, "stack expects a non-empty TensorList");
        return NULL;
    }
    if (!list_ok(op, ts))
        return NULL;
    const cfx_tensor *t0 = ts.data[0];
    int64_t wd;
    if (!cfx_geom_wrap_dim(dim, t0->ndim + 1, &wd, op))
        return NULL;
    if (t0->ndim + 1 > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, op, "stack: at most %d dimensions are supported", CFX_MAX_DIMS);
        return NULL;
    }
    bool meta = reference || any_meta(ts);
    if (wd < t0->ndim) {
        for (int64_t i = 1; i < ts.len; i++) {
            const cfx_tensor *t = ts.data[i];
            if (t->ndim == t0->ndim && !memcmp(t->sizes, t0->sizes, (size_t)t0->ndim * sizeof t0->sizes[0]))
                continue;
            cfx_buf b;
            cfx_buf_init(&b);
            if (reference) {
                cfx_buf_puts(&b, "stack expects each tensor to be equal size, but got torch.Size(");
                cfx_geom_put_dims(&b, t0->sizes, t0->ndim);
                cfx_buf_puts(&b, ") at entry 0 ");
            } else {
                cfx_buf_puts(&b, "stack expects each tensor to be equal size, but got ");
                cfx_geom_put_dims(&b, t0->sizes, t0->ndim);
                cfx_buf_puts(&b, " at entry 0 and ");
                cfx_geom_put_dims(&b, t->sizes, t->ndim);
                cfx_buf_printf(&b, " at entry %lld", (long long)i);
            }
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "stack expects each tensor to be equal size");
            cfx_free(msg);
            return NULL;
        }
        cfx_tensor *out = meta ? cat_reference(op, ts, wd) : cfx_cpu_cat(ts, wd);
        if (!out)
            return NULL;
        int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
        int n = t0->ndim + 1;
        for (int i = 0, j = 0; i < n; i++)
            sizes[i] = i == wd ? ts.len : t0->sizes[j++];
        cfx_geom_view_strides(out->sizes, out->strides, out->ndim, sizes, n, strides);
        cfx_tensor *r = cfx_tensor_new_view(out, sizes, strides, n, out->storage_offset);
        cfx_kernel_discard(out);
        return r;
    }
    /* the new dim is last: cat of the inputs unsqueezed there (C++ unsqueezes at dim as given) */
    cfx_tensor **parts = cfx_scope_alloc((size_t)ts.len * sizeof *parts);
    if (!parts)
        return NULL;
    for (int64_t i = 0; i < ts.len; i++) {
        parts[i] = cfx_kernel_unsqueeze(ts.data[i], reference ? wd : dim);
        if (!parts[i])
            return NULL;
    }
    cfx_tensor_list l = {parts, ts.len};
    return meta ? cat_reference(op, l, dim) : cfx_cpu_cat(l, dim);
}

/* Runs stack in a scope of its own: the unsqueezed inputs and lists die with it. */
static cfx_tensor *stack_scoped(cfx_tensor_list ts, int64_t dim, bool reference)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = cfx_tensor_retain(stack(ts, dim, reference));
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

cfx_tensor *cfx_kernel_stack(cfx_tensor_list tensors, int64_t dim) { return stack_scoped(tensors, dim, false); }

cfx_tensor *cfx_meta_stack(cfx_tensor_list tensors, int64_t dim) { return stack_scoped(tensors, dim, true); }

/* ---- split ---------------------------------------------------------------------------------- */

static cfx_tensor_list fail(void) { return (cfx_tensor_list){NULL, -1}; }

/* n views of self along dim d: piece i is [starts[i], starts[i] + lens[i]) clamped as slice. */
static cfx_tensor_list pieces(cfx_tensor *self, int64_t d, const int64_t *lens, int64_t n)
{
    cfx_tensor **out = cfx_scope_alloc((size_t)(n ? n : 1) * sizeof *out);
    if (!out)
        return fail();
    int64_t start = 0;
    for (int64_t i = 0; i < n; i++) {
        out[i] = cfx_kernel_slice_Tensor(self, d, cfx_int(start), cfx_int(start + lens[i]), 1);
        if (!out[i])
            return fail();
        start += lens[i];
    }
    return (cfx_tensor_list){out, n};
}

cfx_tensor_list cfx_kernel_split_Tensor(cfx_tensor *self, int64_t split_size, int64_t dim)
{
    const char *op = "aten::split.Tensor";
    if (self->ndim == 0) {
        cfx_error_set(CFX_ERR, op, "split expects at least a 1-dimensional tensor");
        return fail();
    }
    if (split_size < 0) {
        cfx_error_set(CFX_ERR, op, "split expects split_size be non-negative, but got split_size=%lld",
                      (long long)split_size);
        return fail();
    }
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return fail();
    int64_t dim_size = self->sizes[d];
    if (split_size == 0 && dim_size != 0) {
        cfx_error_set(CFX_ERR, op, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                      (long long)dim_size);
        return fail();
    }
    int64_t num = 1;
    if (split_size != 0) {
        num = (dim_size + split_size - 1) / split_size;
        if (num < 1)
            num = 1;
    }
    int64_t *lens = cfx_malloc((size_t)num * sizeof *lens);
    if (!lens) {
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in split");
        return fail();
    }
    for (int64_t i = 0; i < num; i++)
        lens[i] = i < num - 1 ? split_size : split_size - (split_size * num - dim_size);
    cfx_tensor_list r = pieces(self, d, lens, num);
    cfx_free(lens);
    return r;
}

cfx_tensor_list cfx_kernel_split_with_sizes(cfx_tensor *self, cfx_int_list split_sizes, int64_t dim)
{
    const char *op = "aten::split_with_sizes";
    if (self->ndim == 0) {
        cfx_error_set(CFX_ERR, op, "split expects at least a 1-dimensional tensor");
        return fail();
    }
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return fail();
    int64_t n = split_sizes.len < 0 ? 0 : split_sizes.len, total = 0;
    for (int64_t i = 0; i < n; i++) {
        if (split_sizes.data[i] < 0) {
            cfx_geom_error_dims(op, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                                 "split_sizes=", split_sizes.data, (int)n, "");
            return fail();
        }
        total += split_sizes.data[i];
    }
    if (total != self->sizes[d]) {
        char prefix[160];
        snprintf(prefix, sizeof prefix,
                 "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at dimension %lld), "
                 "but got split_sizes=",
                 (long long)self->sizes[d], (long long)dim);
        cfx_geom_error_dims(op, prefix, split_sizes.data, (int)n, "");
        return fail();
    }
    return pieces(self, d, split_sizes.data, n);
}
