/* iter.c - TensorIterator::build's metadata steps (aten/src/ATen/TensorIterator.cpp).
 *
 * The steps run in PyTorch's order because the first failing check decides the error text:
 * compute_mem_overlaps, compute_shape (+ the in-place output check of mark_resize_outputs),
 * compute_types (common dtype, common device, safe casting), then either fast_set_up or
 * compute_strides + reorder_dimensions + allocate_or_resize_outputs for the new output's
 * strides. Strides are compared in elements rather than bytes: reorder_dimensions only ever
 * compares two strides of the same operand, so the element size cancels out.
 *
 * Everything lives on the stack; for the common 1-4 dim case this touches a few cache lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"

static inline bool dims_equal(const int64_t *a, const int64_t *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* ---- type promotion (c10/core/ScalarType.h, ATen/native/TypeProperties.cpp) ---------------- */

const char *cfx_dtype_scalar_name(cfx_dtype t)
{
    switch (t) {
    case CFX_INT32: return "Int";
    case CFX_INT64: return "Long";
    case CFX_FLOAT32: return "Float";
    case CFX_FLOAT64: return "Double";
    case CFX_BOOL: return "Bool";
    case CFX_UINT8: return "Byte";
    case CFX_INT8: return "Char";
    case CFX_INT16: return "Short";
    case CFX_COMPLEX64: return "ComplexFloat";
    case CFX_COMPLEX128: return "ComplexDouble";
    }
    return "Undefined";
}

bool cfx_kernel_not_implemented(const char *op, const char *kernel, cfx_dtype dt)
{
    cfx_error_set(CFX_ERR_NOTIMPL, op, "\"%s\" not implemented for '%s'", kernel, cfx_dtype_scalar_name(dt));
    return false;
}

bool cfx_kernel_refuse_complex(const char *op, const char *kernel, const char *fn, const cfx_tensor *t)
{
    cfx_dtype dt = (cfx_dtype)t->dtype;
    if (!cfx_dtype_is_complex(dt))
        return false;
    if (kernel)
        cfx_kernel_not_implemented(op, kernel, dt);
    else if (fn)
        cfx_error_set(CFX_ERR, op, "%s: does not support complex input", fn);
    else
        cfx_error_set(CFX_ERR_NOTIMPL, op, "%s: cfx has no kernel for %s inputs (PyTorch has one)", op,
                      cfx_dtype_torch_name(dt));
    return true;
}

const char *cfx_dtype_type_meta_name(cfx_dtype t)
{
    switch (t) {
    case CFX_FLOAT32: return "float";
    case CFX_FLOAT64: return "double";
    case CFX_INT64: return "long int";
    case CFX_INT32: return "int";
    case CFX_INT16: return "short int";
    case CFX_INT8: return "signed char";
    case CFX_UINT8: return "unsigned char";
    case CFX_BOOL: return "bool";
    case CFX_COMPLEX64: return "c10::complex<float>";
    case CFX_COMPLEX128: return "c10::complex<double>";
    }
    return "?";
}

static int promote_skip_undefined(int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return (int)cfx_dtype_promote((cfx_dtype)a, (cfx_dtype)b);
}

void cfx_result_type_update(cfx_result_type_state *s, const cfx_tensor *t)
{
    if (t->is_wrapped_number) {
        /* a wrapped float counts as the default dtype (float32), a complex as the default
         * complex dtype (complex64), an int or bool as itself */
        int cur = cfx_dtype_is_floating((cfx_dtype)t->dtype)  ? CFX_FLOAT32
                  : cfx_dtype_is_complex((cfx_dtype)t->dtype) ? CFX_COMPLEX64
                                                               : t->dtype;
        s->wrapped_result = promote_skip_undefined(s->wrapped_result, cur);
    } else if (t->ndim == 0)
        s->zero_result = promote_skip_undefined(s->zero_result, t->dtype);
    else
        s->dim_result = promote_skip_undefined(s->dim_result, t->dtype);
}

static bool is_float(int t) { return t == CFX_FLOAT32 || t == CFX_FLOAT64; }

/* combine_categories: a higher-priority result keeps its dtype unless the lower one is of a
 * higher category (bool < integral < floating < complex); a lower complex keeps a floating
 * higher's precision (float32 tensor with a 0-dim complex128: complex64). */
static int combine_categories(int higher, int lower)
{
    if (higher >= 0 && cfx_dtype_is_complex((cfx_dtype)higher))
        return higher;
    if (lower >= 0 && cfx_dtype_is_complex((cfx_dtype)lower))
        return is_float(higher) ? cfx_dtype_to_complex((cfx_dtype)higher) : lower;
    if (is_float(higher))
        return higher;
    if (higher == CFX_BOOL || is_float(lower))
        return promote_skip_undefined(higher, lower);
    if (higher >= 0)
        return higher;
    return lower;
}

cfx_dtype cfx_result_type(const cfx_result_type_state *s)
{
    return (cfx_dtype)combine_categories(s->dim_result, combine_categories(s->zero_result, s->wrapped_result));
}

bool cfx_dtype_can_cast(cfx_dtype from, cfx_dtype to)
{
    if (cfx_dtype_is_complex(from) && !cfx_dtype_is_complex(to))
        return false;
    if (is_float(from) && cfx_dtype_is_integral(to, false))
        return false;
    if (from != CFX_BOOL && to == CFX_BOOL)
        return false;
    return true;
}

/* ---- memory overlap (ATen/MemoryOverlap.cpp) ----------------------------------------------- */

static bool dense(const cfx_tensor *t)
{
    return cfx_geom_is_non_overlapping_and_dense(t->sizes, t->strides, t->ndim);
}

static bool has_internal_overlap(const cfx_tensor *t)
{
    if (dense(t))
        return false;
    for (int i = 0; i < t->ndim; i++)
        if (t->strides[i] == 0 && t->sizes[i] > 1)
            return true;
    return false; /* "too hard" counts as no */
}

static bool partial_overlap(const cfx_tensor *a, const cfx_tensor *b)
{
    if (a == b)
        return false;
    int64_t na = cfx_geom_numel(a->sizes, a->ndim), nb = cfx_geom_numel(b->sizes, b->ndim);
    if (na == 0 || nb == 0 || !dense(a) || !dense(b) || a->storage != b->storage)
        return false;
    int64_t ia = (int64_t)cfx_dtype_size((cfx_dtype)a->dtype), ib = (int64_t)cfx_dtype_size((cfx_dtype)b->dtype);
    int64_t a0 = a->storage_offset * ia, a1 = a0 + na * ia;
    int64_t b0 = b->storage_offset * ib, b1 = b0 + nb * ib;
    if (a0 == b0 && a1 == b1) {
        if (a->ndim != b->ndim)
            return true;
        for (int i = 0; i < a->ndim; i++)
            if (a->strides[i] != b->strides[i])
                return true;
        return false;
    }
    return a0 < b1 && b0 < a1;
}

/* ---- output layout ------------------------------------------------------------------------- */

/* reorder_dimensions' comparator: 1 if dim0 should come after dim1, -1 before, 0 unknown. */
static int should_swap(int dim0, int dim1, const int64_t *shape, const int64_t *const *strides,
                       int nstrides)
{
    for (int k = 0; k < nstrides; k++) {
        int64_t s0 = strides[k][dim0], s1 = strides[k][dim1];
        if (s0 == 0 || s1 == 0)
            continue;
        if (s0 < s1)
            return -1;
        if (s0 > s1)
            return 1;
        if (shape[dim0] > shape[dim1])
            return 1;
    }
    return 0;
}

void cfx_iter_output_strides(const int64_t *shape, int ndim, const int64_t *const *strides,
                             int nstrides, int64_t *out)
{
    int perm[CFX_MAX_DIMS];
    if (ndim == 0)
        return;
    for (int i = 0; i < ndim; i++)
        perm[i] = ndim - 1 - i;
    for (int i = 1; i < ndim; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int c = should_swap(perm[dim0], perm[dim1], shape, strides, nstrides);
            if (c > 0) {
                int t = perm[dim0];
                perm[dim0] = perm[dim1];
                perm[dim1] = t;
                dim1 = dim0;
            } else if (c < 0) {
                break;
            }
        }
    }
    bool inverted = true;
    for (int j = 0; j < ndim && inverted; j++)
        inverted = perm[j] == ndim - j - 1;
    if (inverted) {
        cfx_geom_contiguous_strides(shape, ndim, out);
        return;
    }
    /* compatible_stride on the permuted shape (raw sizes: a 0 zeroes what follows) */
    int64_t next = 1;
    for (int d = 0; d < ndim; d++) {
        out[perm[d]] = next;
        next *= shape[perm[d]];
    }
}

/* Strides of operand t as compute_strides sees it against shape: leading and broadcast
 * dims get 0. */
static void broadcast_strides(const int64_t *shape, int ndim, const int64_t *sizes,
                              const int64_t *strides, int n, int64_t *out)
{
    int off = ndim - n;
    for (int i = 0; i < off; i++)
        out[i] = 0;
    for (int i = 0; i < n; i++)
        out[off + i] = (sizes[i] == 1 && shape[off + i] != 1) ? 0 : strides[i];
}

/* TensorIteratorBase::compute_fast_setup_type and the strides fast_set_up gives the output.
 *
 * The contiguous case, the common one, is decided against the strides it would produce: for a
 * non-empty tensor, compute_contiguous's running product over the non-1 sizes equals the
 * contiguous stride of each such dimension, so "stride == the output's stride wherever
 * size != 1" is is_contiguous, and an empty shape makes every input contiguous. */
bool cfx_iter_fast_setup_strides(const int64_t *shape, int n, const int64_t *const *strides, int nin,
                                 int64_t *out)
{
    int64_t z = 1;
    bool empty = false;
    for (int d = n - 1; d >= 0; d--) {
        out[d] = z;
        empty |= shape[d] == 0;
        z *= shape[d] > 1 ? shape[d] : 1;
    }
    if (empty)
        return true;
    bool contig = true;
    for (int i = 0; i < nin; i++)
        for (int d = 0; d < n; d++)
            contig &= shape[d] == 1 || strides[i][d] == out[d];
    /* the TODO PyTorch notes: ambiguous shapes (NC11) are taken as contiguous here */
    if (contig)
        return true;
    bool cl = n == 4;
    for (int i = 0; i < nin && cl; i++)
        cl = cfx_geom_is_channels_last_contiguous(shape, strides[i], n);
    if (cl)
        return cfx_geom_memory_format_strides(shape, n, CFX_CHANNELS_LAST, out, NULL);
    for (int i = 0; i < nin; i++)
        if (!cfx_geom_is_non_overlapping_and_dense(shape, strides[i], n))
            return false;
    /* compared from the last operand back; the output takes the last one's strides */
    for (int i = nin - 2; i >= 0; i--)
        if (!dims_equal(strides[i], strides[nin - 1], n))
            return false;
    for (int d = 0; d < n; d++)
        out[d] = strides[nin - 1][d];
    return true;
}

/* The new output's strides: fast_set_up, else compute_strides + reorder_dimensions +
 * allocate_or_resize_outputs. */
static void layout(cfx_iter *it, const cfx_tensor *const *in, int nin, const int64_t *const *eff)
{
    int n = it->ndim;
    it->out_strides = it->strides_buf;
    if (it->all_same_shape && cfx_iter_fast_setup_strides(it->shape, n, eff, nin, it->strides_buf))
        return;
    int64_t bs[CFX_ITER_MAX_INPUTS][CFX_MAX_DIMS];
    const int64_t *lists[CFX_ITER_MAX_INPUTS];
    for (int i = 0; i < nin; i++) {
        broadcast_strides(it->shape, n, in[i]->sizes, eff[i], in[i]->ndim, bs[i]);
        lists[i] = bs[i];
    }
    cfx_iter_output_strides(it->shape, n, lists, nin, it->strides_buf);
}

static void device_error(const char *op, cfx_device common, cfx_device other)
{
    char a[24], b[24];
    cfx_error_set(CFX_ERR, op,
                  "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                  cfx_device_format(common, a, sizeof a), cfx_device_format(other, b, sizeof b));
}

static void shape_mismatch(const char *op, const cfx_tensor *out, const cfx_iter *it)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "output with shape ");
    cfx_geom_put_dims(&b, out->sizes, out->ndim);
    cfx_buf_puts(&b, " doesn't match the broadcast shape ");
    cfx_geom_put_dims(&b, it->shape, it->ndim);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "output shape mismatch");
    cfx_free(msg);
}

bool cfx_iter_build(cfx_iter *it, const cfx_iter_config *cfg, const char *op, const cfx_tensor *out,
                         const cfx_tensor *const *in, int nin)
{
    int64_t *shape = it->shape_buf;
    it->shape = shape;
    it->out_strides = NULL;
    it->ninputs = nin;

    /* compute_mem_overlaps */
    if (out && cfg->check_mem_overlap) {
        if (has_internal_overlap(out)) {
            cfx_error_set(CFX_ERR, op,
                          "unsupported operation: more than one element of the written-to tensor refers to a "
                          "single memory location. Please clone() the tensor before performing the operation.");
            return false;
        }
        for (int i = 0; i < nin; i++)
            if (partial_overlap(out, in[i])) {
                cfx_error_set(CFX_ERR, op,
                              "unsupported operation: some elements of the input tensor and the written-to "
                              "tensor refer to a single memory location. Please clone() the tensor before "
                              "performing the operation.");
                return false;
            }
    }

    /* compute_shape */
    bool has_scalars = false, has_tensors = false;
    it->all_same_shape = true;
    it->ndim = 0;
    for (int i = 0; i < nin; i++) {
        const cfx_tensor *t = in[i];
        if (t->ndim == 0)
            has_scalars = true;
        else
            has_tensors = true;
        if (has_scalars && has_tensors)
            it->all_same_shape = false;
        if (it->ndim == 0) {
            it->ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++)
                shape[d] = t->sizes[d];
        } else if (t->ndim != it->ndim || !dims_equal(t->sizes, it->shape, t->ndim)) {
            it->all_same_shape = false;
            int64_t prev[CFX_MAX_DIMS];
            int pn = it->ndim;
            memcpy(prev, it->shape, (size_t)pn * sizeof(int64_t));
            if (!cfx_geom_broadcast(prev, pn, t->sizes, t->ndim, shape, &it->ndim, op))
                return false;
        }
    }
    bool all_scalars = !has_tensors;
    /* mark_resize_outputs: an in-place output is never resized */
    if (out && (out->ndim != it->ndim || !dims_equal(out->sizes, it->shape, it->ndim))) {
        shape_mismatch(op, out, it);
        return false;
    }

    /* compute_types */
    cfx_dtype common = (cfx_dtype)in[0]->dtype;
    bool different = false;
    for (int i = 1; i < nin; i++)
        different |= (cfx_dtype)in[i]->dtype != common;
    if ((different || all_scalars) && cfg->promote_inputs) {
        cfx_result_type_state st = CFX_RESULT_TYPE_INIT;
        for (int i = 0; i < nin; i++)
            cfx_result_type_update(&st, in[i]);
        common = cfx_result_type(&st);
    }
    if (cfg->int_to_float && cfx_dtype_is_integral(common, true))
        common = CFX_FLOAT32; /* the default dtype */
    it->common_dtype = common;

    cfx_device dev = cfx_device_make(CFX_DEVICE_CPU);
    if (out && out->device.type != CFX_DEVICE_CPU)
        dev = out->device;
    for (int i = 0; i < nin; i++)
        if (dev.type == CFX_DEVICE_CPU && in[i]->device.type != CFX_DEVICE_CPU)
            dev = in[i]->device;
    it->device = dev;
    if (out) {
        if (!cfx_device_eq(out->device, dev)) {
            device_error(op, dev, out->device);
            return false;
        }
        if ((cfx_dtype)out->dtype != common && !cfx_dtype_can_cast(common, (cfx_dtype)out->dtype)) {
            cfx_error_set(CFX_ERR, op, "result type %s can't be cast to the desired output type %s",
                          cfx_dtype_scalar_name(common), cfx_dtype_scalar_name((cfx_dtype)out->dtype));
            return false;
        }
    }
    int cpu_scalars = 0;
    for (int i = 0; i < nin; i++) {
        const cfx_tensor *t = in[i];
        if (dev.type != CFX_DEVICE_CPU && cfg->allow_cpu_scalars && t->ndim == 0 &&
            t->device.type == CFX_DEVICE_CPU) {
            if (cpu_scalars >= 1) {
                cfx_error_set(CFX_ERR, op, "Trying to pass too many CPU scalars to non-CPU kernel!");
                return false;
            }
            cpu_scalars++;
        } else if (!cfx_device_eq(t->device, dev)) {
            device_error(op, dev, t->device);
            return false;
        }
    }
    if (out)
        return true;

    /* the new output's strides; on CPU a promoted input is first copied like empty_like */
    int64_t tmp[CFX_ITER_MAX_INPUTS][CFX_MAX_DIMS];
    const int64_t *eff[CFX_ITER_MAX_INPUTS];
    for (int i = 0; i < nin; i++) {
        eff[i] = in[i]->strides;
        if (dev.type == CFX_DEVICE_CPU && cfg->promote_inputs && (cfx_dtype)in[i]->dtype != common) {
            cfx_geom_preserve_strides(in[i]->sizes, in[i]->strides, in[i]->ndim, tmp[i]);
            eff[i] = tmp[i];
        }
    }
    layout(it, in, nin, eff);
    return true;
}

/* The overlap tests for the kernels that write without a TensorIterator (copy_). */
bool cfx_iter_internal_overlap(const cfx_tensor *t) { return has_internal_overlap(t); }

bool cfx_iter_check_no_internal_overlap(const char *op, const cfx_tensor *t)
{
    if (!has_internal_overlap(t))
        return true;
    cfx_error_set(CFX_ERR, op, "unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.");
    return false;
}
bool cfx_iter_partial_overlap(const cfx_tensor *a, const cfx_tensor *b) { return partial_overlap(a, b); }
