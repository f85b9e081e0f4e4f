/* reduce_rules.c - the dtype and dim rules of the reductions (see reduce.h), transcribed from
 * ATen's ReduceOps.cpp meta functions and ReduceOpsUtils.h with their texts. */
#include <stdio.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/reduce.h"

bool cfx_reduce_mean_dtype(const char *op, const cfx_tensor *self, cfx_value dtype, bool python_names,
                           cfx_dtype *out)
{
    int64_t code;
    bool given = cfx_geom_opt_int(dtype, &code);
    if (given && !cfx_dtype_valid(code)) {
        cfx_error_set(CFX_ERR, op, "mean: unsupported dtype code %lld", (long long)code);
        return false;
    }
    cfx_dtype dt = given ? (cfx_dtype)code : (cfx_dtype)self->dtype;
    if (!cfx_dtype_is_floating(dt) && !cfx_dtype_is_complex(dt)) {
        cfx_error_set(CFX_ERR, op,
                      "mean(): could not infer output dtype. %s dtype must be either a floating point or complex "
                      "dtype. Got: %s",
                      given ? "Optional" : "Input", python_names ? cfx_dtype_torch_name(dt) : cfx_dtype_scalar_name(dt));
        return false;
    }
    *out = dt;
    return true;
}

static bool nonzero_dim(const char *op, const char *fn, const cfx_tensor *self, int64_t d)
{
    if (self->ndim > 0 && self->sizes[d] == 0) {
        cfx_error_set(CFX_ERR, op, "%s: Expected reduction dim %lld to have non-zero size.", fn, (long long)d);
        return false;
    }
    return true;
}

bool cfx_reduce_zero_numel_check(const char *op, const char *fn, const cfx_tensor *self, cfx_int_list dims)
{
    if (dims.len <= 0) {
        cfx_error_set(CFX_ERR, op,
                      "%s: Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
                      "with the 'dim' argument.",
                      fn);
        return false;
    }
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d;
        if (!cfx_geom_wrap_dim(dims.data[i], self->ndim, &d, op) || !nonzero_dim(op, fn, self, d))
            return false;
    }
    return true;
}

bool cfx_reduce_one_dim(cfx_reduce_shape *r, int64_t *w, const char *op, const char *fn, const cfx_tensor *self,
                        int64_t dim, bool keepdim)
{
    int n = self->ndim;
    if (!cfx_geom_wrap_dim(dim, n, w, op) || !nonzero_dim(op, fn, self, *w))
        return false;
    r->dtype = (cfx_dtype)self->dtype;
    r->ndim = 0;
    for (int i = 0; i < n; i++) {
        r->reduced[i] = i == *w;
        if (i != *w)
            r->sizes[r->ndim++] = self->sizes[i];
        else if (keepdim)
            r->sizes[r->ndim++] = 1;
    }
    return true;
}

bool cfx_reduce_arg_shape(cfx_reduce_shape *r, const char *op, const char *fn, const cfx_tensor *self, cfx_value dim,
                          bool keepdim)
{
    if (dim.kind == CFX_V_INT) {
        int64_t w;
        if (!cfx_reduce_one_dim(r, &w, op, fn, self, dim.u.i, keepdim))
            return false;
        r->dtype = CFX_INT64;
        return true;
    }
    if (cfx_tensor_numel(self) == 0) {
        cfx_error_set(CFX_ERR, op, "%s: Expected reduction dim to be specified for input.numel() == 0.", fn);
        return false;
    }
    r->dtype = CFX_INT64;
    r->ndim = keepdim ? self->ndim : 0;
    for (int i = 0; i < self->ndim; i++) {
        r->reduced[i] = true;
        if (keepdim)
            r->sizes[i] = 1;
    }
    return true;
}

bool cfx_reduce_prod_dtype(const char *op, const cfx_tensor *self, cfx_value dtype, cfx_dtype *out)
{
    int64_t code;
    if (cfx_geom_opt_int(dtype, &code)) {
        if (!cfx_dtype_valid(code)) {
            cfx_error_set(CFX_ERR, op, "%s: unsupported dtype code %lld", op, (long long)code);
            return false;
        }
        *out = (cfx_dtype)code;
        return true;
    }
    *out = !cfx_dtype_is_integral((cfx_dtype)self->dtype, true) ? (cfx_dtype)self->dtype : CFX_INT64;
    return true;
}
