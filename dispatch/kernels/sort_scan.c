/* sort_scan.c - cumsum, sort (both overloads) and topk: the Core ATen ops that order or scan
 * along one dim.
 *
 * Each CPU kernel works on a contiguous copy of self (cfx_cpu_contiguous), one line along the
 * dim at a time, and writes the outputs laid out as PyTorch's meta functions say:
 *   cumsum   contiguous, dtype the argument else int64 for integral and bool inputs; the sum
 *            accumulates in at::acc_type (double for float32, int64 for integers);
 *   sort     values and indices with self's strides when self is non-overlapping and dense,
 *            else infer_dense_strides (Meta: empty_like, the Python meta_sort, which checks no
 *            dim); the order is stable for every call: 2.13's CPU sort with stable=False may
 *            order equal elements differently (NaN sorts above everything, as in PyTorch);
 *   topk     contiguous, the k largest (smallest) in that order; ties are taken in index order
 *            where PyTorch's partial sort leaves their order unspecified.
 * cumsum_ writes cumsum's result into self, which must keep its dtype.
 * Elements are compared as long double, exact for every int64 and float. */
#include <math.h>
#include <string.h>

#include "dispatch/alloc.h"
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"

/* Element i of a contiguous array of dtype t. */
static long double load(const void *p, int64_t i, cfx_dtype t)
{
    switch (t) {
    case CFX_BOOL: return ((const bool *)p)[i];
    case CFX_UINT8: return ((const uint8_t *)p)[i];
    case CFX_INT8: return ((const int8_t *)p)[i];
    case CFX_INT16: return ((const int16_t *)p)[i];
    case CFX_INT32: return ((const int32_t *)p)[i];
    case CFX_INT64: return ((const int64_t *)p)[i];
    case CFX_FLOAT32: return ((const float *)p)[i];
    case CFX_FLOAT64: return ((const double *)p)[i];
    case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* sort and topk refuse them first */
    }
    return 0;
}

/* The geometry of the lines along dim d of a contiguous tensor. */
typedef struct lines {
    int64_t outer, len, inner;
} lines;

static lines lines_of(const int64_t *sizes, int n, int d)
{
    lines l = {1, n ? sizes[d] : 1, 1};
    for (int i = 0; i < n; i++) {
        if (i < d)
            l.outer *= sizes[i];
        else if (i > d)
            l.inner *= sizes[i];
    }
    return l;
}

/* ---- cumsum ------------------------------------------------------------------------------- */

static bool cumsum_meta(const char *op, const cfx_tensor *self, int64_t dim, cfx_value dtype, int64_t *d,
                        cfx_dtype *out)
{
    if (!cfx_geom_wrap_dim(dim, self->ndim, d, op))
        return false;
    int64_t code;
    if (cfx_geom_opt_int(dtype, &code))
        *out = (cfx_dtype)code;
    else
        *out = cfx_dtype_is_integral((cfx_dtype)self->dtype, true) ? CFX_INT64 : (cfx_dtype)self->dtype;
    return true;
}

cfx_tensor *cfx_meta_cumsum(cfx_tensor *self, int64_t dim, cfx_value dtype)
{
    int64_t d;
    cfx_dtype dt;
    if (!cumsum_meta("aten::cumsum", self, dim, dtype, &d, &dt))
        return NULL;
    return cfx_tensor_new(self->sizes, self->ndim, dt, self->device);
}

/* The running sum of each line of src (contiguous, dtype dt) into out (contiguous, dt). */
#define CUMSUM(T, ACC)                                                                          \
    do {                                                                                        \
        const T *x = src;                                                                       \
        T *y = dst;                                                                             \
        for (int64_t o = 0; o < l.outer; o++)                                                   \
            for (int64_t i = 0; i < l.inner; i++) {                                             \
                ACC acc = 0;                                                                    \
                for (int64_t k = 0, at = o * l.len * l.inner + i; k < l.len; k++, at += l.inner) { \
                    acc += (ACC)x[at];                                                          \
                    y[at] = (T)acc;                                                             \
                }                                                                               \
            }                                                                                   \
    } while (0)

cfx_tensor *cfx_cpu_cumsum(cfx_tensor *self, int64_t dim, cfx_value dtype)
{
    const char *op = "aten::cumsum";
    int64_t d;
    cfx_dtype dt;
    if (!cumsum_meta(op, self, dim, dtype, &d, &dt))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(self->sizes, self->ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!out || cfx_tensor_numel(out) == 0)
        return out;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *c = cfx_cpu_to_dtype(self, dt);
    c = c ? cfx_cpu_contiguous(c) : NULL;
    bool ok = c != NULL;
    if (ok && self->ndim == 0) { /* impl_func_cum_ops: result.fill_(self) */
        cfx_cpu_copy(out, c);
    } else if (ok) {
        lines l = lines_of(self->sizes, self->ndim, (int)d);
        const void *src = cfx_tensor_data(c);
        void *dst = cfx_tensor_data(out);
        switch (dt) {
        case CFX_FLOAT32: CUMSUM(float, double); break;
        case CFX_FLOAT64: CUMSUM(double, double); break;
        case CFX_INT64: CUMSUM(int64_t, int64_t); break;
        case CFX_INT32: CUMSUM(int32_t, int64_t); break;
        case CFX_INT16: CUMSUM(int16_t, int64_t); break;
        case CFX_INT8: CUMSUM(int8_t, int64_t); break;
        case CFX_UINT8: CUMSUM(uint8_t, int64_t); break;
        case CFX_COMPLEX64: CUMSUM(cfx_complex64, cfx_complex128); break;
        case CFX_COMPLEX128: CUMSUM(cfx_complex128, cfx_complex128); break;
        case CFX_BOOL:
            cfx_kernel_not_implemented(op, "cumsum_out_cpu", CFX_BOOL);
            ok = false;
            break;
        }
    }
    cfx_scope_end(s);
    if (!ok) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

/* cumsum_: the in-place form writes self's own dtype, so a dtype argument must name it (CPU:
 * the structured kernel's "Bad in-place call: input tensor dtype float and output tensor dtype
 * double should match"; Meta: the reference's out= check). The sum is cumsum's, in that dtype. */
static bool cumsum__check(const char *op, const cfx_tensor *self, int64_t dim, cfx_value dtype, bool meta)
{
    int64_t d, code;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return false;
    if (!cfx_geom_opt_int(dtype, &code) || code == self->dtype)
        return true;
    if (meta)
        cfx_error_set(CFX_ERR, op, "dtype argument and out dtype must match in reduction");
    else
        cfx_error_set(CFX_ERR, op, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                      cfx_dtype_type_meta_name((cfx_dtype)self->dtype), cfx_dtype_type_meta_name((cfx_dtype)code));
    return false;
}

cfx_tensor *cfx_meta_cumsum_(cfx_tensor *self, int64_t dim, cfx_value dtype)
{
    if (!cumsum__check("aten::cumsum_", self, dim, dtype, true))
        return NULL;
    cfx_tensor_bump_version(self); /* ADInplaceOrView, above the Meta kernel in PyTorch */
    return self;
}

cfx_tensor *cfx_cpu_cumsum_(cfx_tensor *self, int64_t dim, cfx_value dtype)
{
    const char *op = "aten::cumsum_";
    if (!cumsum__check(op, self, dim, dtype, false))
        return NULL;
    if (cfx_iter_internal_overlap(self)) {
        cfx_error_set(CFX_ERR, op, "unsupported operation: more than one element of the written-to tensor refers to a "
                                   "single memory location. Please clone() the tensor before performing the operation.");
        return NULL;
    }
    if (self->dtype == CFX_BOOL) {
        cfx_kernel_not_implemented(op, "cumsum_out_cpu", CFX_BOOL);
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *sum = cfx_cpu_cumsum(self, dim, cfx_dtype_value((cfx_dtype)self->dtype));
    if (sum)
        cfx_cpu_copy(self, sum);
    cfx_scope_end(s);
    if (!sum)
        return NULL;
    cfx_tensor_bump_version(self);
    return self;
}

/* ---- ordering ----------------------------------------------------------------------------- */

/* a before b: ascending with NaN last, or descending with NaN first */
static bool before(long double a, long double b, bool descending)
{
    if (descending)
        return a > b || (isnan(a) && !isnan(b));
    return a < b || (!isnan(a) && isnan(b));
}

/* Stable merge sort of idx[0..n) by key, tmp the same size. */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, const long double *key, bool descending)
{
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = before(key[idx[j]], key[idx[i]], descending) ? idx[j++] : idx[i++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

/* For every line along dim d of self: sorts it and writes the first k of the order into
 * values and indices (contiguous, self's sizes but k at d). */
static bool sort_lines(const cfx_tensor *self, int d, int64_t k, bool descending, cfx_tensor *values,
                       cfx_tensor *indices)
{
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *c = cfx_cpu_contiguous(self);
    lines l = lines_of(self->sizes, self->ndim, d);
    int64_t len = l.len > 0 ? l.len : 1;
    long double *key = cfx_malloc((size_t)len * sizeof *key);
    int64_t *idx = cfx_malloc((size_t)len * sizeof *idx), *tmp = cfx_malloc((size_t)len * sizeof *tmp);
    bool ok = c && key && idx && tmp;
    if (ok) {
        cfx_dtype t = (cfx_dtype)self->dtype;
        size_t es = cfx_dtype_size(t);
        const char *src = cfx_tensor_data(c);
        char *vo = cfx_tensor_data(values);
        int64_t *io = cfx_tensor_data(indices);
        for (int64_t o = 0; o < l.outer; o++)
            for (int64_t i = 0; i < l.inner; i++) {
                int64_t base = o * l.len * l.inner + i, obase = o * k * l.inner + i;
                for (int64_t j = 0; j < l.len; j++) {
                    key[j] = load(src, base + j * l.inner, t);
                    idx[j] = j;
                }
                merge_sort(idx, tmp, l.len, key, descending);
                for (int64_t j = 0; j < k; j++) {
                    memcpy(vo + (obase + j * l.inner) * (int64_t)es, src + (base + idx[j] * l.inner) * (int64_t)es, es);
                    io[obase + j * l.inner] = idx[j];
                }
            }
    }
    cfx_free(key);
    cfx_free(idx);
    cfx_free(tmp);
    cfx_scope_end(s);
    return ok;
}

/* ---- sort --------------------------------------------------------------------------------- */

static cfx_sort_stable_result sort_outputs(const cfx_tensor *self, const int64_t *strides)
{
    cfx_tensor *v = cfx_tensor_new_strided(self->sizes, strides, self->ndim, (cfx_dtype)self->dtype, self->device);
    cfx_tensor *i = v ? cfx_tensor_new_strided(self->sizes, strides, self->ndim, CFX_INT64, self->device) : NULL;
    if (!i) {
        cfx_kernel_discard(v);
        v = NULL;
    }
    return (cfx_sort_stable_result){{v, i}};
}

cfx_sort_stable_result cfx_meta_sort_stable(cfx_tensor *self, cfx_value stable, int64_t dim, bool descending)
{
    (void)stable, (void)dim, (void)descending;
    int64_t strides[CFX_MAX_DIMS];
    cfx_geom_preserve_strides(self->sizes, self->strides, self->ndim, strides);
    return sort_outputs(self, strides);
}

cfx_sort_stable_result cfx_cpu_sort_stable(cfx_tensor *self, cfx_value stable, int64_t dim, bool descending)
{
    (void)stable;
    cfx_sort_stable_result none = {{NULL, NULL}};
    int64_t d, strides[CFX_MAX_DIMS];
    if (cfx_dtype_is_complex((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, "aten::sort.stable", " Sort does not support complex dtypes on CPU");
        return none;
    }
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, "aten::sort.stable"))
        return none;
    if (cfx_geom_is_non_overlapping_and_dense(self->sizes, self->strides, self->ndim))
        memcpy(strides, self->strides, (size_t)self->ndim * sizeof *strides);
    else
        cfx_geom_infer_dense_strides(self->sizes, self->strides, self->ndim, strides);
    cfx_sort_stable_result r = sort_outputs(self, strides);
    if (!r.values || cfx_tensor_numel(self) == 0)
        return r;
    /* sorted into contiguous temporaries, then copied into the outputs' layout */
    cfx_scope s = cfx_scope_begin();
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    cfx_tensor *v = cfx_tensor_new(self->sizes, self->ndim, (cfx_dtype)self->dtype, cpu);
    cfx_tensor *i = cfx_tensor_new(self->sizes, self->ndim, CFX_INT64, cpu);
    bool ok = v && i && sort_lines(self, (int)d, self->ndim ? self->sizes[d] : 1, descending, v, i);
    if (ok) {
        cfx_cpu_copy(r.values, v);
        cfx_cpu_copy(r.indices, i);
    }
    cfx_scope_end(s);
    if (!ok) {
        cfx_kernel_discard(r.values);
        cfx_kernel_discard(r.indices);
        return none;
    }
    return r;
}

/* sort(self, dim, descending) is sort.stable with stable=False, through the dispatcher */
cfx_sort_result cfx_kernel_sort(cfx_tensor *self, int64_t dim, bool descending)
{
    cfx_sort_stable_result r = cfx_sort_stable(self, cfx_bool(false), dim, descending);
    return (cfx_sort_result){{r.values, r.indices}};
}
cfx_sort_result cfx_meta_sort(cfx_tensor *self, int64_t dim, bool descending)
{
    cfx_sort_stable_result r = cfx_meta_sort_stable(self, cfx_none(), dim, descending);
    return (cfx_sort_result){{r.values, r.indices}};
}

/* ---- topk --------------------------------------------------------------------------------- */

/* The meta function's checks (CPU: Sorting.cpp's; Meta: the Python topk_meta's texts) and the
 * outputs' sizes. */
static bool topk_shape(const char *op, const cfx_tensor *self, int64_t k, int64_t dim, bool meta, int64_t *d,
                       int64_t *sizes)
{
    if (!cfx_geom_wrap_dim(dim, self->ndim, d, op))
        return false;
    int64_t slice = self->ndim == 0 ? 1 : self->sizes[*d];
    if (k < 0 || k > slice) {
        cfx_error_set(CFX_ERR, op, "%s",
                      !meta ? "selected index k out of range"
                      : k < 0 ? "Expected cond to be True, but got False. (Could this error message be improved? If "
                                "so, please report an enhancement request to PyTorch.)"
                              : "k not in range for dimension");
        return false;
    }
    memcpy(sizes, self->sizes, (size_t)self->ndim * sizeof *sizes);
    if (self->ndim)
        sizes[*d] = k;
    return true;
}

static cfx_topk_result topk_outputs(const cfx_tensor *self, const int64_t *sizes)
{
    cfx_tensor *v = cfx_tensor_new(sizes, self->ndim, (cfx_dtype)self->dtype, self->device);
    cfx_tensor *i = v ? cfx_tensor_new(sizes, self->ndim, CFX_INT64, self->device) : NULL;
    if (!i) {
        cfx_kernel_discard(v);
        v = NULL;
    }
    return (cfx_topk_result){{v, i}};
}

cfx_topk_result cfx_meta_topk(cfx_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted)
{
    (void)largest, (void)sorted;
    int64_t d, sizes[CFX_MAX_DIMS];
    if (!topk_shape("aten::topk", self, k, dim, true, &d, sizes))
        return (cfx_topk_result){{NULL, NULL}};
    return topk_outputs(self, sizes);
}

cfx_topk_result cfx_cpu_topk(cfx_tensor *self, int64_t k, int64_t dim, bool largest, bool sorted)
{
    (void)sorted;
    const char *op = "aten::topk";
    cfx_topk_result none = {{NULL, NULL}};
    int64_t d, sizes[CFX_MAX_DIMS];
    if (cfx_dtype_is_complex((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, op, " topk does not support complex dtypes on CPU");
        return none;
    }
    if (!topk_shape(op, self, k, dim, false, &d, sizes))
        return none;
    if (self->dtype == CFX_BOOL) {
        cfx_error_set(CFX_ERR, op, "topk does not support bool dtypes on CPU");
        return none;
    }
    cfx_topk_result r = topk_outputs(self, sizes);
    /* a 0-dim self is its own top element whatever k (0 or 1) */
    if (self->ndim == 0)
        k = 1;
    if (r.values && cfx_tensor_numel(r.values) > 0 && !sort_lines(self, (int)d, k, largest, r.values, r.indices)) {
        cfx_kernel_discard(r.values);
        cfx_kernel_discard(r.indices);
        return none;
    }
    return r;
}
