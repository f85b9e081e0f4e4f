/* scatter_reduce.c - scatter_add, scatter_reduce.two and their in-place forms: src's elements
 * combined into a copy of self (or self) at the positions index names along dim.
 *
 * The checks are scatter's (scatter_meta_impl, cfx_scatter_check: C++ texts on CPU, the Python
 * meta functions' on Meta), then for scatter_reduce the reduction's name: the CPU accepts
 * ReductionType's names, "max" and "min" included ("reduce argument must be either sum, prod,
 * mean, amax or amin, got foo"), the Python meta only the five documented ones ("... or
 * amin."). Results are contiguous (the structured kernel's empty output, the meta's
 * new_empty), the in-place forms write self and refuse an internally overlapping self on CPU.
 *
 * The CPU kernel is scatter_reduce_two_impl: with include_self=False the scattered-to
 * positions start at the reduction's identity (self.scatter_(dim, index, init)), then each
 * index element combines src into out in the element type as cpu_scatter_gather_base_kernel
 * does (sum +=, prod *=, amax/amin propagating a NaN from src, bool as C++ bool arithmetic);
 * mean sums, then divides by the count of contributions (self counting as one when included,
 * a count of 0 read as 1), floor division for integers; mean of bool is not implemented, as
 * in 2.13 ("scatter_gather_tensor_cpu_reduce_mean"). Index values are checked as they are
 * read ("index 5 is out of bounds for dimension 0 with size 2"). */
#include <math.h>
#include <string.h>

#include "dispatch/alloc.h"
#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/scatter_internal.h"

typedef enum { R_SUM, R_PROD, R_MEAN, R_AMAX, R_AMIN } reduction;

/* get_reduction_enum (CPU) or the Python meta's get_operator_enum(use_new_options=True). */
static bool reduction_of(const char *op, const char *s, bool meta, reduction *r)
{
    static const struct {
        const char *name;
        reduction r;
        bool cpu_only;
    } names[] = {{"sum", R_SUM, false}, {"prod", R_PROD, false}, {"mean", R_MEAN, false}, {"amax", R_AMAX, false},
                 {"amin", R_AMIN, false}, {"max", R_AMAX, true},  {"min", R_AMIN, true}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name) && !(meta && names[i].cpu_only)) {
            *r = names[i].r;
            return true;
        }
    if (meta)
        cfx_error_set(CFX_ERR, op, "reduce argument must be either sum, prod, mean, amax or amin.");
    else
        cfx_error_set(CFX_ERR, op, "reduce argument must be either sum, prod, mean, amax or amin, got %s", s);
    return false;
}

typedef struct sr_ctx {
    const char *op;
    int64_t dim;
    const cfx_tensor *src; /* NULL: write the identity (include_self=False's first pass) */
    cfx_tensor *out;
    reduction r;
    int64_t *count; /* mean: contributions per element of out, row-major; else NULL */
} sr_ctx;

/* One element of src into *d (C++'s ReduceAdd, ReduceMultiply, ReduceMaximum, ReduceMinimum). */
#define COMBINE(T, d, s, r)                                                                       \
    do {                                                                                          \
        T a_ = *(T *)(d), b_ = *(const T *)(s);                                                   \
        switch (r) {                                                                              \
        case R_SUM:                                                                               \
        case R_MEAN: a_ = (T)(a_ + b_); break;                                                    \
        case R_PROD: a_ = (T)(a_ * b_); break;                                                    \
        case R_AMAX: a_ = b_ != b_ ? b_ : (a_ < b_ ? b_ : a_); break;                             \
        case R_AMIN: a_ = b_ != b_ ? b_ : (b_ < a_ ? b_ : a_); break;                              \
        }                                                                                         \
        *(T *)(d) = a_;                                                                           \
    } while (0)

/* The identity include_self=False starts from: 0, 1, the lowest or the highest value. */
#define IDENTITY(T, d, r, lo, hi) (*(T *)(d) = (r) == R_PROD ? (T)1 : (r) == R_AMAX ? (lo) : (r) == R_AMIN ? (hi) : (T)0)

static void identity(cfx_dtype dt, void *d, reduction r)
{
    switch (dt) {
    case CFX_FLOAT32: IDENTITY(float, d, r, -INFINITY, INFINITY); break;
    case CFX_FLOAT64: IDENTITY(double, d, r, -INFINITY, INFINITY); break;
    case CFX_INT64: IDENTITY(int64_t, d, r, INT64_MIN, INT64_MAX); break;
    case CFX_INT32: IDENTITY(int32_t, d, r, INT32_MIN, INT32_MAX); break;
    case CFX_INT16: IDENTITY(int16_t, d, r, INT16_MIN, INT16_MAX); break;
    case CFX_INT8: IDENTITY(int8_t, d, r, INT8_MIN, INT8_MAX); break;
    case CFX_UINT8: IDENTITY(uint8_t, d, r, 0, UINT8_MAX); break;
    case CFX_BOOL: IDENTITY(bool, d, r, false, true); break;
    case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* refused before (reduce_into) */
    }
}

static void combine(cfx_dtype dt, void *d, const void *s, reduction r)
{
    switch (dt) {
    case CFX_FLOAT32: COMBINE(float, d, s, r); break;
    case CFX_FLOAT64: COMBINE(double, d, s, r); break;
    case CFX_INT64: COMBINE(int64_t, d, s, r); break;
    case CFX_INT32: COMBINE(int32_t, d, s, r); break;
    case CFX_INT16: COMBINE(int16_t, d, s, r); break;
    case CFX_INT8: COMBINE(int8_t, d, s, r); break;
    case CFX_UINT8: COMBINE(uint8_t, d, s, r); break;
    case CFX_BOOL: { /* C++ bool arithmetic: + and max are or, * and min are and */
        bool a = *(bool *)d, b = *(const bool *)s;
        *(bool *)d = r == R_PROD || r == R_AMIN ? a && b : a || b;
        break;
    }
    case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* refused before (reduce_into) */
    }
}

static bool reduce_one(void *vctx, const int64_t *pos, int64_t v)
{
    sr_ctx *c = vctx;
    const cfx_tensor *out = c->out;
    int64_t size = out->ndim ? out->sizes[c->dim] : 1;
    if (v < 0 || v >= size) {
        cfx_error_set(CFX_ERR, c->op, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v,
                      (long long)c->dim, (long long)size);
        return false;
    }
    size_t item = cfx_dtype_size((cfx_dtype)out->dtype);
    char *dst = (char *)out->storage->data + cfx_index_offset_of(out, pos, c->dim, v) * (int64_t)item;
    if (!c->src) {
        identity((cfx_dtype)out->dtype, dst, c->r);
        return true;
    }
    const char *sp = (const char *)c->src->storage->data + cfx_index_offset_of(c->src, pos, -1, 0) * (int64_t)item;
    combine((cfx_dtype)out->dtype, dst, sp, c->r);
    if (c->count) {
        int64_t at = 0;
        for (int k = 0; k < out->ndim; k++)
            at = at * out->sizes[k] + (k == c->dim ? v : pos[k]);
        c->count[at]++;
    }
    return true;
}

/* out / count per element (count 0 read as 1): true division for floats, floor for integers. */
#define DIVIDE(T, FLOAT)                                                                          \
    do {                                                                                          \
        T *p_ = (T *)((char *)out->storage->data + off * (int64_t)sizeof(T));                     \
        int64_t n_ = count[e] ? count[e] : 1;                                                     \
        if (FLOAT)                                                                                \
            *p_ = (T)(*p_ / (T)n_);                                                               \
        else {                                                                                    \
            int64_t q_ = (int64_t)*p_ / n_;                                                       \
            *p_ = (T)(q_ * n_ != (int64_t)*p_ && ((int64_t)*p_ < 0) != (n_ < 0) ? q_ - 1 : q_);    \
        }                                                                                         \
    } while (0)

static void divide_by_count(cfx_tensor *out, const int64_t *count)
{
    int64_t total = cfx_tensor_numel(out), pos[CFX_MAX_DIMS] = {0};
    for (int64_t e = 0; e < total; e++) {
        int64_t off = cfx_index_offset_of(out, pos, -1, 0);
        switch ((cfx_dtype)out->dtype) {
        case CFX_FLOAT32: DIVIDE(float, 1); break;
        case CFX_FLOAT64: DIVIDE(double, 1); break;
        case CFX_INT64: DIVIDE(int64_t, 0); break;
        case CFX_INT32: DIVIDE(int32_t, 0); break;
        case CFX_INT16: DIVIDE(int16_t, 0); break;
        case CFX_INT8: DIVIDE(int8_t, 0); break;
        case CFX_UINT8: DIVIDE(uint8_t, 0); break;
        case CFX_BOOL: case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* refused before */
        }
        for (int k = out->ndim - 1; k >= 0; k--) {
            if (++pos[k] < out->sizes[k])
                break;
            pos[k] = 0;
        }
    }
}

/* scatter_reduce_two_impl on out (already self's values). */
static bool reduce_into(const char *op, cfx_tensor *out, int64_t d, const cfx_tensor *index, const cfx_tensor *src,
                        reduction r, bool include_self)
{
    sr_ctx c = {op, d, NULL, out, r, NULL};
    if (cfx_kernel_refuse_complex(op, r == R_AMAX ? "scatter_gather_tensor_cpu_reduce_amax"
                                      : r == R_AMIN ? "scatter_gather_tensor_cpu_reduce_amin" : NULL, NULL, out))
        return false;
    if (!include_self && !cfx_index_each(index, reduce_one, &c))
        return false;
    if (r == R_MEAN && out->dtype == CFX_BOOL) {
        cfx_kernel_not_implemented(op, "scatter_gather_tensor_cpu_reduce_mean", CFX_BOOL);
        return false;
    }
    int64_t n = cfx_tensor_numel(out);
    if (r == R_MEAN) {
        c.count = cfx_calloc(n ? (size_t)n : 1, sizeof *c.count);
        if (!c.count) {
            cfx_error_set(CFX_ERR_NOMEM, op, "out of memory");
            return false;
        }
        for (int64_t e = 0; include_self && e < n; e++)
            c.count[e] = 1;
    }
    c.src = src;
    bool ok = cfx_index_each(index, reduce_one, &c);
    if (ok && c.count)
        divide_by_count(out, c.count);
    cfx_free(c.count);
    return ok;
}

/* The four entry points of each device: out-of-place (a contiguous copy of self) or in place. */
static cfx_tensor *scatter_reduce(const char *op, cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src,
                                  const char *reduce, bool include_self, bool inplace, bool meta)
{
    int64_t d;
    reduction r = R_SUM;
    if (!cfx_scatter_check(op, self, dim, index, src, meta, &d) || (reduce && !reduction_of(op, reduce, meta, &r)))
        return NULL;
    if (inplace && !meta && !cfx_iter_check_no_internal_overlap(op, self))
        return NULL;
    cfx_tensor *out = inplace ? self : cfx_tensor_new(self->sizes, self->ndim, (cfx_dtype)self->dtype, self->device);
    if (!out)
        return NULL;
    if (!meta) {
        if (!inplace)
            cfx_cpu_copy(out, self);
        if (!reduce_into(op, out, d, index, src, r, include_self)) {
            if (!inplace)
                cfx_kernel_discard(out);
            return NULL;
        }
    }
    if (!inplace)
        return out;
    cfx_tensor_bump_version(self); /* on meta: ADInplaceOrView, above the Meta kernel in PyTorch */
    return self;
}

cfx_tensor *cfx_cpu_scatter_add(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src)
{
    return scatter_reduce("aten::scatter_add", self, dim, index, src, NULL, true, false, false);
}

cfx_tensor *cfx_meta_scatter_add(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src)
{
    return scatter_reduce("aten::scatter_add", self, dim, index, src, NULL, true, false, true);
}

cfx_tensor *cfx_cpu_scatter_add_(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src)
{
    return scatter_reduce("aten::scatter_add_", self, dim, index, src, NULL, true, true, false);
}

cfx_tensor *cfx_meta_scatter_add_(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src)
{
    return scatter_reduce("aten::scatter_add_", self, dim, index, src, NULL, true, true, true);
}

cfx_tensor *cfx_cpu_scatter_reduce_two(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src,
                                       const char *reduce, bool include_self)
{
    return scatter_reduce("aten::scatter_reduce.two", self, dim, index, src, reduce, include_self, false, false);
}

cfx_tensor *cfx_meta_scatter_reduce_two(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src,
                                        const char *reduce, bool include_self)
{
    return scatter_reduce("aten::scatter_reduce.two", self, dim, index, src, reduce, include_self, false, true);
}

cfx_tensor *cfx_cpu_scatter_reduce__two(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src,
                                        const char *reduce, bool include_self)
{
    return scatter_reduce("aten::scatter_reduce_.two", self, dim, index, src, reduce, include_self, true, false);
}

cfx_tensor *cfx_meta_scatter_reduce__two(cfx_tensor *self, int64_t dim, cfx_tensor *index, cfx_tensor *src,
                                         const char *reduce, bool include_self)
{
    return scatter_reduce("aten::scatter_reduce_.two", self, dim, index, src, reduce, include_self, true, true);
}
