/* reductions.c - the CPU kernels of sum, mean (.dim, .default), prod (.default, .dim_int),
 * amax, amin, min.dim, argmax, argmin, var.correction, std.correction, any and all (.default,
 * .dim, and any.dims).
 * With them, two reductions' composites that only call others through the dispatcher:
 * var.dim's (CompositeImplicitAutograd) and any.dims' default (CompositeExplicitAutograd).
 *
 * Each runs its structured op's C++ meta function first (output dtype, the dim checks and
 * PyTorch's texts: "mean(): could not infer output dtype. ...", "amax(): Expected reduction
 * dim 1 to have non-zero size.", "argmax(): Expected reduction dim to be specified for
 * input.numel() == 0.", "std and var only support floating point and complex dtypes") and
 * allocates a contiguous output, then walks the input once in its logical row-major order,
 * every element folding into its output slot (offsets advance by per-dim steps, 0 along reduced
 * dims). Floating values fold in double and round once; integers fold exactly in int64 (sums
 * and products wrap); the input is first converted to the output dtype where ATen does
 * (sum, prod, mean). Extremes propagate NaN; arg- and min.dim keep the first of equal values
 * and the first NaN, as ATen's kernels do, because the walk visits lower indices first. var
 * is two passes: the mean of each slot, then the squared deviations over max(0, N - correction).
 * Complex inputs fold in complex double for sum, prod and mean, as a squared modulus for var,
 * and as "either part nonzero" for any and all; the extremes refuse them before. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/reduce.h"
#include "dispatch/kernels/shape.h"
#include "dispatch/kernels/structured.h"

typedef enum rkind { RK_SUM, RK_PROD, RK_MAX, RK_MIN, RK_ANY, RK_ALL, RK_ARGMAX, RK_ARGMIN, RK_SQDEV } rkind;

typedef struct rstate {
    rkind kind;
    bool as_int;       /* fold int64 (integral or bool values) rather than double */
    bool as_complex;   /* fold complex values in double precision (sum, prod; var into d) */
    double *d;         /* per output slot */
    cfx_complex128 *z; /* as_complex: per output slot */
    const cfx_complex128 *zmean; /* as_complex RK_SQDEV: the slot's mean */
    int64_t *i;
    int64_t *at;       /* the index an arg reduction picked */
    bool *set;
    const double *mean; /* RK_SQDEV: the slot's mean */
} rstate;

static double get_d(const char *p, cfx_dtype t)
{
    switch (t) {
    case CFX_FLOAT32: return *(const float *)p;
    case CFX_FLOAT64: return *(const double *)p;
    case CFX_INT64: return (double)*(const int64_t *)p;
    case CFX_INT32: return *(const int32_t *)p;
    case CFX_BOOL: return *(const bool *)p;
    case CFX_UINT8: return *(const uint8_t *)p;
    case CFX_INT8: return *(const int8_t *)p;
    case CFX_INT16: return *(const int16_t *)p;
    case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* visit folds them as complex (get_z) */
    }
    return 0;
}

static int64_t get_i(const char *p, cfx_dtype t)
{
    switch (t) {
    case CFX_INT64: return *(const int64_t *)p;
    case CFX_INT32: return *(const int32_t *)p;
    case CFX_BOOL: return *(const bool *)p;
    default: return (int64_t)get_d(p, t);
    }
}

/* A complex element (of a complex64 or complex128 tensor) in double precision. */
static cfx_complex128 get_z(const char *p, cfx_dtype t)
{
    return t == CFX_COMPLEX64 ? (cfx_complex128)*(const cfx_complex64 *)p : *(const cfx_complex128 *)p;
}

/* The squared modulus of z (a complex variance adds both parts' squared deviations, as ATen's
 * std_var_out sums the variances of the real and imaginary parts). */
static double norm2(cfx_complex128 z)
{
    return creal(z) * creal(z) + cimag(z) * cimag(z);
}

/* One element into slot o (k: its index within the reduced dims). */
static void visit(rstate *s, int64_t o, int64_t k, const char *p, cfx_dtype t)
{
    if (s->as_complex) {
        cfx_complex128 v = get_z(p, t);
        if (s->kind == RK_SUM)
            s->z[o] += v;
        else if (s->kind == RK_PROD)
            s->z[o] *= v;
        else if (s->kind == RK_SQDEV)
            s->d[o] += norm2(v - s->zmean[o]);
        else if (s->kind == RK_ANY) /* a complex value is true when either part is nonzero */
            s->d[o] = s->d[o] != 0 || v != 0;
        else if (s->kind == RK_ALL)
            s->d[o] = s->d[o] != 0 && v != 0;
        return;
    }
    if (s->as_int) {
        int64_t v = get_i(p, t);
        int64_t *a = &s->i[o];
        switch (s->kind) {
        case RK_SUM: *a = (int64_t)((uint64_t)*a + (uint64_t)v); return;
        case RK_PROD: *a = (int64_t)((uint64_t)*a * (uint64_t)v); return;
        case RK_ANY: *a = *a || v; return;
        case RK_ALL: *a = *a && v; return;
        case RK_MAX:
        case RK_MIN:
        case RK_ARGMAX:
        case RK_ARGMIN: {
            bool better = !s->set[o] || (s->kind == RK_MAX || s->kind == RK_ARGMAX ? v > *a : v < *a);
            if (better) {
                *a = v;
                s->at[o] = k;
                s->set[o] = true;
            }
            return;
        }
        case RK_SQDEV: return;
        }
        return;
    }
    double v = get_d(p, t);
    double *a = &s->d[o];
    switch (s->kind) {
    case RK_SUM: *a += v; return;
    case RK_PROD: *a *= v; return;
    case RK_ANY: *a = *a != 0 || v != 0; return;
    case RK_ALL: *a = *a != 0 && v != 0; return;
    case RK_SQDEV: *a += (v - s->mean[o]) * (v - s->mean[o]); return;
    case RK_MAX:
    case RK_MIN:
    case RK_ARGMAX:
    case RK_ARGMIN: {
        bool better;
        if (!s->set[o])
            better = true;
        else if (isnan(*a))
            better = false; /* the first NaN stays */
        else if (isnan(v))
            better = true;
        else
            better = s->kind == RK_MAX || s->kind == RK_ARGMAX ? v > *a : v < *a;
        if (better) {
            *a = v;
            s->at[o] = k;
            s->set[o] = true;
        }
        return;
    }
    }
}

/* Folds every element of in into the slots of the contiguous output out (whose dims are in's
 * unreduced ones, with size-1 kept dims when keepdim). */
static void walk(const cfx_tensor *in, const cfx_tensor *out, const bool *reduced, rstate *s)
{
    int n = in->ndim;
    int64_t numel = cfx_tensor_numel(in);
    if (numel == 0)
        return;
    int64_t ostep[CFX_MAX_DIMS], kstep[CFX_MAX_DIMS], idx[CFX_MAX_DIMS];
    int od = out->ndim - 1;
    int64_t kz = 1;
    for (int d = n - 1; d >= 0; d--) {
        idx[d] = 0;
        if (reduced[d]) {
            ostep[d] = 0;
            kstep[d] = kz;
            kz *= in->sizes[d];
            if (out->ndim == n)
                od--;
        } else {
            ostep[d] = out->strides[od--];
            kstep[d] = 0;
        }
    }
    cfx_dtype t = (cfx_dtype)in->dtype;
    int64_t item = (int64_t)cfx_dtype_size(t);
    const char *p = (const char *)cfx_tensor_data(in);
    int64_t o = 0, k = 0;
    for (int64_t e = 0; e < numel; e++) {
        visit(s, o, k, p, t);
        for (int d = n - 1; d >= 0; d--) {
            p += in->strides[d] * item;
            o += ostep[d];
            k += kstep[d];
            if (++idx[d] < in->sizes[d])
                break;
            p -= in->strides[d] * in->sizes[d] * item;
            o -= ostep[d] * in->sizes[d];
            k -= kstep[d] * in->sizes[d];
            idx[d] = 0;
        }
    }
}

static bool state_init(rstate *s, rkind kind, bool as_int, bool as_complex, int64_t nout)
{
    size_t m = nout ? (size_t)nout : 1;
    *s = (rstate){.kind = kind, .as_int = as_int, .as_complex = as_complex};
    s->z = as_complex ? cfx_calloc(m, sizeof *s->z) : NULL;
    s->d = cfx_calloc(m, sizeof *s->d);
    s->i = cfx_calloc(m, sizeof *s->i);
    s->at = cfx_calloc(m, sizeof *s->at);
    s->set = cfx_calloc(m, sizeof *s->set);
    if (!s->d || !s->i || !s->at || !s->set || (as_complex && !s->z)) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory in a reduction");
        return false;
    }
    double d0 = kind == RK_PROD || kind == RK_ALL ? 1 : 0;
    for (int64_t j = 0; j < nout; j++) {
        s->d[j] = d0;
        s->i[j] = (int64_t)d0;
        if (as_complex)
            s->z[j] = d0;
    }
    return true;
}

static void state_free(rstate *s)
{
    cfx_free(s->z);
    cfx_free(s->d);
    cfx_free(s->i);
    cfx_free(s->at);
    cfx_free(s->set);
}

/* Writes the slots (or the picked indices) into out. */
static void state_store(const rstate *s, cfx_tensor *out, bool indices)
{
    int64_t nout = cfx_tensor_numel(out);
    void *dst = cfx_tensor_data(out);
    for (int64_t j = 0; j < nout; j++) {
        if (indices) {
            ((int64_t *)dst)[j] = s->at[j];
            continue;
        }
        double d = s->as_int ? (double)s->i[j] : s->d[j];
        switch ((cfx_dtype)out->dtype) {
        case CFX_FLOAT32: ((float *)dst)[j] = (float)d; break;
        case CFX_FLOAT64: ((double *)dst)[j] = d; break;
        case CFX_INT64: ((int64_t *)dst)[j] = s->as_int ? s->i[j] : cfx_conv_f64_i64(d); break;
        case CFX_INT32: ((int32_t *)dst)[j] = s->as_int ? (int32_t)(uint32_t)s->i[j] : cfx_conv_f64_i32(d); break;
        case CFX_BOOL: ((bool *)dst)[j] = d != 0; break;
        case CFX_UINT8: ((uint8_t *)dst)[j] = (uint8_t)(s->as_int ? s->i[j] : cfx_conv_f64_i64(d)); break;
        case CFX_INT8: ((int8_t *)dst)[j] = (int8_t)(s->as_int ? s->i[j] : cfx_conv_f64_i64(d)); break;
        case CFX_INT16: ((int16_t *)dst)[j] = (int16_t)(s->as_int ? s->i[j] : cfx_conv_f64_i64(d)); break;
        case CFX_COMPLEX64: ((cfx_complex64 *)dst)[j] = (cfx_complex64)s->z[j]; break;
        case CFX_COMPLEX128: ((cfx_complex128 *)dst)[j] = s->z[j]; break;
        }
    }
}

static cfx_tensor *new_out(const cfx_reduce_shape *r, cfx_dtype dt)
{
    return cfx_tensor_new(r->sizes, r->ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
}

/* out (of r's shape and dtype) = the kind-reduction of in over r->reduced; in is converted to
 * convert_to first when that is a valid dtype (>= 0). */
static cfx_tensor *reduce_into(cfx_tensor *out, const cfx_tensor *self, const cfx_reduce_shape *r, rkind kind,
                               int convert_to)
{
    if (!out)
        return NULL;
    cfx_scope sc = cfx_scope_begin();
    const cfx_tensor *in = convert_to >= 0 ? cfx_cpu_to_dtype(self, (cfx_dtype)convert_to) : self;
    cfx_dtype t = in ? (cfx_dtype)in->dtype : CFX_FLOAT32;
    bool as_complex = cfx_dtype_is_complex(t);
    bool as_int = !as_complex && !cfx_dtype_is_floating(t);
    rstate s;
    bool ok = in && state_init(&s, kind, as_int, as_complex, cfx_tensor_numel(out));
    if (ok) {
        walk(in, out, r->reduced, &s);
        state_store(&s, out, kind == RK_ARGMAX || kind == RK_ARGMIN);
    }
    if (in)
        state_free(&s);
    cfx_scope_end(sc);
    if (!ok) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

/* ---- sum, mean, prod ------------------------------------------------------------------------- */

cfx_tensor *cfx_kernel_sum(cfx_tensor *self, cfx_value dtype)
{
    return cfx_cpu_sum_dim_IntList(self, (cfx_int_list){NULL, -1}, false, dtype);
}

cfx_tensor *cfx_cpu_mean_dim(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    const char *op = "aten::mean.dim";
    cfx_dtype dt;
    if (!cfx_reduce_mean_dtype(op, self, dtype, false, &dt))
        return NULL;
    cfx_reduce_shape r;
    if (!cfx_structured_sum(&r, op, self, dim, keepdim, cfx_dtype_value(dt)))
        return NULL;
    cfx_tensor *out = reduce_into(new_out(&r, dt), self, &r, RK_SUM, dt);
    int64_t nout = out ? cfx_tensor_numel(out) : 0;
    if (nout > 0) {
        double count = (double)cfx_tensor_numel(self) / (double)nout;
        void *p = cfx_tensor_data(out);
        for (int64_t j = 0; j < nout; j++) {
            if (dt == CFX_FLOAT32)
                ((float *)p)[j] = (float)((double)((float *)p)[j] / count);
            else if (dt == CFX_COMPLEX64)
                ((cfx_complex64 *)p)[j] = (cfx_complex64)((cfx_complex128)((cfx_complex64 *)p)[j] / count);
            else if (dt == CFX_COMPLEX128)
                ((cfx_complex128 *)p)[j] /= count;
            else
                ((double *)p)[j] /= count;
        }
    }
    return out;
}

cfx_tensor *cfx_kernel_mean(cfx_tensor *self, cfx_value dtype)
{
    return cfx_cpu_mean_dim(self, (cfx_int_list){NULL, -1}, false, dtype);
}

cfx_tensor *cfx_cpu_prod(cfx_tensor *self, cfx_value dtype)
{
    const char *op = "aten::prod";
    cfx_dtype dt;
    cfx_reduce_shape r;
    if (!cfx_reduce_prod_dtype(op, self, dtype, &dt) || !cfx_structured_sum(&r, op, self, (cfx_int_list){NULL, -1}, false,
                                                                 cfx_dtype_value(dt)))
        return NULL;
    return reduce_into(new_out(&r, dt), self, &r, RK_PROD, dt);
}

cfx_tensor *cfx_cpu_prod_dim_int(cfx_tensor *self, int64_t dim, bool keepdim, cfx_value dtype)
{
    const char *op = "aten::prod.dim_int";
    cfx_dtype dt;
    cfx_reduce_shape r;
    if (!cfx_reduce_prod_dtype(op, self, dtype, &dt) ||
        !cfx_structured_sum(&r, op, self, cfx_ints(&dim, 1), keepdim, cfx_dtype_value(dt)))
        return NULL;
    return reduce_into(new_out(&r, dt), self, &r, RK_PROD, dt);
}

/* ---- amax, amin, min.dim, argmax, argmin ----------------------------------------------------- */

static cfx_tensor *extreme(const char *op, const char *fn, cfx_tensor *self, cfx_int_list dim, bool keepdim,
                           rkind kind)
{
    if (cfx_kernel_refuse_complex(op, kind == RK_MAX ? "max_values_cpu" : "min_values_cpu", NULL, self))
        return NULL;
    if (cfx_tensor_numel(self) == 0 && !cfx_reduce_zero_numel_check(op, fn, self, dim))
        return NULL;
    cfx_reduce_shape r;
    if (!cfx_structured_sum(&r, op, self, dim, keepdim, cfx_dtype_value((cfx_dtype)self->dtype)))
        return NULL;
    return reduce_into(new_out(&r, (cfx_dtype)self->dtype), self, &r, kind, -1);
}

cfx_tensor *cfx_cpu_amax(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    return extreme("aten::amax", "amax()", self, dim, keepdim, RK_MAX);
}

cfx_tensor *cfx_cpu_amin(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    return extreme("aten::amin", "amin()", self, dim, keepdim, RK_MIN);
}

cfx_min_dim_result cfx_cpu_min_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    const char *op = "aten::min.dim";
    cfx_min_dim_result none = {{NULL, NULL}};
    cfx_reduce_shape r;
    int64_t w;
    if (cfx_kernel_refuse_complex(op, NULL, "min()", self) || !cfx_reduce_one_dim(&r, &w, op, "min()", self, dim, keepdim))
        return none;
    cfx_tensor *values = new_out(&r, (cfx_dtype)self->dtype);
    cfx_tensor *indices = values ? new_out(&r, CFX_INT64) : NULL;
    if (!indices) {
        cfx_kernel_discard(values);
        return none;
    }
    rstate s;
    bool as_int = !cfx_dtype_is_floating((cfx_dtype)self->dtype);
    if (!state_init(&s, RK_MIN, as_int, false, cfx_tensor_numel(values))) {
        state_free(&s);
        cfx_kernel_discard(values);
        cfx_kernel_discard(indices);
        return none;
    }
    walk(self, values, r.reduced, &s);
    state_store(&s, values, false);
    state_store(&s, indices, true);
    state_free(&s);
    return (cfx_min_dim_result){{values, indices}};
}

static cfx_tensor *arg_extreme(const char *op, const char *fn, cfx_tensor *self, cfx_value dim, bool keepdim,
                               rkind kind)
{
    cfx_reduce_shape r;
    if (cfx_kernel_refuse_complex(op, NULL, fn, self) || !cfx_reduce_arg_shape(&r, op, fn, self, dim, keepdim))
        return NULL;
    return reduce_into(new_out(&r, CFX_INT64), self, &r, kind, -1);
}

cfx_tensor *cfx_cpu_argmax(cfx_tensor *self, cfx_value dim, bool keepdim)
{
    return arg_extreme("aten::argmax", "argmax()", self, dim, keepdim, RK_ARGMAX);
}

cfx_tensor *cfx_cpu_argmin(cfx_tensor *self, cfx_value dim, bool keepdim)
{
    return arg_extreme("aten::argmin", "argmin()", self, dim, keepdim, RK_ARGMIN);
}

/* ---- var, std -------------------------------------------------------------------------------- */

static cfx_tensor *var_std(const char *op, cfx_tensor *self, cfx_int_list dim, cfx_value correction, bool keepdim,
                           bool take_sqrt)
{
    cfx_dtype st = (cfx_dtype)self->dtype;
    bool cplx = cfx_dtype_is_complex(st);
    if (!cfx_dtype_is_floating(st) && !cplx) {
        cfx_error_set(CFX_ERR, op, "std and var only support floating point and complex dtypes");
        return NULL;
    }
    cfx_dtype rt = cfx_dtype_to_real(st); /* a complex input's variance is real */
    cfx_reduce_shape r;
    if (!cfx_structured_sum(&r, op, self, dim, keepdim, cfx_dtype_value(rt)))
        return NULL;
    double corr = cfx_value_is_none(correction) ? 1.0 : cfx_value_to_double(correction);
    cfx_tensor *out = new_out(&r, rt);
    int64_t nout = out ? cfx_tensor_numel(out) : 0;
    rstate mean = {0}, dev = {0};
    bool ok = out && state_init(&mean, RK_SUM, false, cplx, nout) && state_init(&dev, RK_SQDEV, false, cplx, nout);
    if (ok) {
        double n = nout ? (double)cfx_tensor_numel(self) / (double)nout : 0;
        walk(self, out, r.reduced, &mean);
        for (int64_t j = 0; j < nout; j++) {
            mean.d[j] /= n;
            if (cplx)
                mean.z[j] /= n;
        }
        dev.mean = mean.d;
        dev.zmean = mean.z;
        walk(self, out, r.reduced, &dev);
        double divisor = n - corr > 0 ? n - corr : 0;
        for (int64_t j = 0; j < nout; j++) {
            double v = n == 0 ? NAN : dev.d[j] / divisor;
            dev.d[j] = take_sqrt ? sqrt(v) : v;
        }
        state_store(&dev, out, false);
    }
    if (out) {
        state_free(&mean);
        state_free(&dev);
    }
    if (!ok && out) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_cpu_var_correction(cfx_tensor *self, cfx_int_list dim, cfx_value correction, bool keepdim)
{
    return var_std("aten::var.correction", self, dim, correction, keepdim, false);
}

cfx_tensor *cfx_cpu_std_correction(cfx_tensor *self, cfx_int_list dim, cfx_value correction, bool keepdim)
{
    return var_std("aten::std.correction", self, dim, correction, keepdim, true);
}

/* var.dim (CompositeImplicitAutograd): var.correction with correction = unbiased ? 1 : 0,
 * through the dispatcher, as make_fx records it */
cfx_tensor *cfx_composite_var_dim(cfx_tensor *self, cfx_int_list dim, bool unbiased, bool keepdim)
{
    return cfx_op_var_correction(NULL, self, dim, cfx_int(unbiased ? 1 : 0), keepdim);
}

/* ---- any, all -------------------------------------------------------------------------------- */

static cfx_tensor *any_all(const char *op, cfx_tensor *self, cfx_int_list dim, bool keepdim, rkind kind)
{
    cfx_reduce_shape r;
    if (!cfx_structured_sum(&r, op, self, dim, keepdim, cfx_dtype_value(CFX_BOOL)))
        return NULL;
    return reduce_into(new_out(&r, CFX_BOOL), self, &r, kind, -1);
}

cfx_tensor *cfx_cpu_any(cfx_tensor *self) { return any_all("aten::any", self, (cfx_int_list){NULL, -1}, false, RK_ANY); }
cfx_tensor *cfx_cpu_all(cfx_tensor *self) { return any_all("aten::all", self, (cfx_int_list){NULL, -1}, false, RK_ALL); }

cfx_tensor *cfx_cpu_any_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    return any_all("aten::any.dim", self, cfx_ints(&dim, 1), keepdim, RK_ANY);
}

/* any.dims: dim None reduces every dim; an empty list none (allany_meta's allow_empty_dims),
 * which leaves self != 0, contiguous, in any's output dtype (uint8 for a uint8 self) */
cfx_tensor *cfx_cpu_any_dims(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    if (dim.len != 0) {
        cfx_tensor *r = any_all("aten::any.dims", self, dim, keepdim, RK_ANY);
        if (!r || self->dtype != CFX_UINT8)
            return r;
        cfx_tensor *u = cfx_cpu_to_dtype(r, CFX_UINT8); /* a uint8 self gives uint8 */
        cfx_kernel_discard(r);
        return u;
    }
    cfx_dtype dt = self->dtype == CFX_UINT8 ? CFX_UINT8 : CFX_BOOL;
    cfx_tensor *out = cfx_tensor_new(self->sizes, self->ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *ne = out ? cfx_cpu_ne_Scalar(self, cfx_int(0)) : NULL;
    if (ne)
        cfx_cpu_copy(out, ne);
    cfx_scope_end(s);
    if (!ne) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

/* any_dims_default, the CompositeExplicitAutograd kernel (for backends without their own):
 * any() for all dims, else any.dim with keepdim over each listed dim, then squeeze.dims */
cfx_tensor *cfx_kernel_any_dims(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    if (dim.len < 0) {
        cfx_tensor *r = cfx_any(self);
        int64_t ones[CFX_MAX_DIMS];
        for (int d = 0; d < self->ndim; d++)
            ones[d] = 1;
        return r && keepdim ? cfx_expand(r, cfx_ints(ones, self->ndim)) : r;
    }
    if (dim.len == 0)
        return cfx_ne_Scalar(self, cfx_int(0));
    bool mask[CFX_MAX_DIMS] = {false};
    if (!cfx_shape_list_ok("aten::any.dims", dim) || !cfx_shape_dim_mask("aten::any.dims", dim, self->ndim, mask))
        return NULL;
    cfx_tensor *out = self;
    for (int d = 0; d < self->ndim && out; d++)
        if (mask[d])
            out = cfx_any_dim(out, d, true);
    return out && !keepdim ? cfx_squeeze_dims(out, dim) : out;
}

cfx_tensor *cfx_cpu_all_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    return any_all("aten::all.dim", self, cfx_ints(&dim, 1), keepdim, RK_ALL);
}
