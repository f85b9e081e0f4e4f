/* reductions.c - Meta kernels of sum, mean, prod, amax, amin, min.dim, argmax, argmin, var,
 * std, any and all.
 *
 * In PyTorch 2.13 these run Python: the references of torch/_refs (mean, prod, amax, amin,
 * var, std, any, all: reduction_dims with its "duplicate value in the list of dims", the
 * output of prims' reduction, keepdim re-inserting dims through broadcast_in_dim, which is
 * why a kept dim next to an empty one can have stride 0) or torch/_meta_registrations.py
 * (min.dim and argmax/argmin: contiguous new_empty outputs). Their texts differ from the
 * C++ ones: "Got: torch.int32", "argmax: Expected ..." (for argmin too), "reducing over
 * zero-size dimension for reduction operation without identity". The references of mean, any
 * and all end in an elementwise op, whose output is laid out anew. */
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/reduce.h"

/* torch._refs._reduction's output for self reduced over dims (NULL: all) in dtype dt. */
static cfx_tensor *ref_reduction(const char *op, const cfx_tensor *self, const int64_t *dims, int ndims, bool keepdim,
                                 cfx_dtype dt, bool has_identity)
{
    cfx_tmeta a, out;
    cfx_tmeta_of(&a, self);
    bool reduced[CFX_MAX_DIMS];
    if (!cfx_prims_reduction_dims(op, a.ndim, dims, ndims, reduced))
        return NULL;
    if (!has_identity && self->ndim > 0)
        for (int d = 0; d < self->ndim; d++)
            if (reduced[d] && self->sizes[d] == 0) {
                cfx_error_set(CFX_ERR, op, "reducing over zero-size dimension for reduction operation without identity");
                return NULL;
            }
    cfx_prims_to(&a, dt);
    cfx_prims_reduction(&out, &a, reduced, keepdim);
    return cfx_tmeta_new_tensor(&out);
}

/* The reference's elementwise op after the reduction (mean's true_divide, any's and all's
 * comparison): a new tensor laid out by prims' permutation of the reduction's output. */
static cfx_tensor *elementwise_after(cfx_tensor *r)
{
    if (!r)
        return NULL;
    cfx_tmeta a, out;
    cfx_tmeta_of(&a, r);
    const cfx_tmeta *just_a[1] = {&a};
    int buf[CFX_MAX_DIMS];
    cfx_prims_empty_permuted(&out, r->sizes, r->ndim, cfx_prims_l2p_perm(just_a, 1, buf), (cfx_dtype)r->dtype,
                             r->device);
    cfx_tensor *t = cfx_tensor_new_strided(r->sizes, out.strides, r->ndim, (cfx_dtype)r->dtype, r->device);
    cfx_kernel_discard(r);
    return t;
}

static const int64_t *dims_of(cfx_int_list l) { return l.len > 0 ? l.data : NULL; }

cfx_tensor *cfx_meta_sum(cfx_tensor *self, cfx_value dtype)
{
    return cfx_meta_sum_dim_IntList(self, (cfx_int_list){NULL, -1}, false, dtype);
}

cfx_tensor *cfx_meta_mean_dim(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    const char *op = "aten::mean.dim";
    cfx_dtype dt;
    if (!cfx_reduce_mean_dtype(op, self, dtype, true, &dt))
        return NULL;
    return elementwise_after(ref_reduction(op, self, dims_of(dim), (int)dim.len, keepdim, dt, true));
}

cfx_tensor *cfx_meta_mean(cfx_tensor *self, cfx_value dtype)
{
    return cfx_meta_mean_dim(self, (cfx_int_list){NULL, -1}, false, dtype);
}


cfx_tensor *cfx_meta_prod(cfx_tensor *self, cfx_value dtype)
{
    cfx_dtype dt;
    if (!cfx_reduce_prod_dtype("aten::prod", self, dtype, &dt))
        return NULL;
    return ref_reduction("aten::prod", self, NULL, 0, false, dt, true);
}

cfx_tensor *cfx_meta_prod_dim_int(cfx_tensor *self, int64_t dim, bool keepdim, cfx_value dtype)
{
    cfx_dtype dt;
    if (!cfx_reduce_prod_dtype("aten::prod.dim_int", self, dtype, &dt))
        return NULL;
    return ref_reduction("aten::prod.dim_int", self, &dim, 1, keepdim, dt, true);
}

cfx_tensor *cfx_meta_amax(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    return ref_reduction("aten::amax", self, dims_of(dim), (int)dim.len, keepdim, (cfx_dtype)self->dtype, false);
}

cfx_tensor *cfx_meta_amin(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    return ref_reduction("aten::amin", self, dims_of(dim), (int)dim.len, keepdim, (cfx_dtype)self->dtype, false);
}

/* meta_min_dim: like meta_max_dim, contiguous outputs on self's device, no empty-dim check */
cfx_min_dim_result cfx_meta_min_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    cfx_min_dim_result none = {{NULL, NULL}};
    bool reduced[CFX_MAX_DIMS];
    if (!cfx_prims_reduction_dims("aten::min.dim", self->ndim, &dim, 1, reduced))
        return none;
    int64_t sizes[CFX_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < self->ndim; d++)
        if (!reduced[d] || keepdim)
            sizes[n++] = reduced[d] ? 1 : self->sizes[d];
    cfx_tensor *values = cfx_tensor_new(sizes, n, (cfx_dtype)self->dtype, self->device);
    cfx_tensor *indices = values ? cfx_tensor_new(sizes, n, CFX_INT64, self->device) : NULL;
    if (!indices) {
        cfx_kernel_discard(values);
        return none;
    }
    return (cfx_min_dim_result){{values, indices}};
}

static cfx_tensor *arg_meta(const char *op, const char *fn, cfx_tensor *self, cfx_value dim, bool keepdim)
{
    cfx_reduce_shape r;
    if (!cfx_reduce_arg_shape(&r, op, fn, self, dim, keepdim))
        return NULL;
    return cfx_tensor_new(r.sizes, r.ndim, CFX_INT64, self->device);
}

cfx_tensor *cfx_meta_argmax(cfx_tensor *self, cfx_value dim, bool keepdim)
{
    return arg_meta("aten::argmax", "argmax", self, dim, keepdim);
}

cfx_tensor *cfx_meta_argmin(cfx_tensor *self, cfx_value dim, bool keepdim)
{
    return arg_meta("aten::argmin", "argmax", self, dim, keepdim); /* 2.13's meta says argmax for both */
}

/* torch._refs.var/std: the output keeps self's dtype (an integral input is not refused), the
 * real one of a complex input (corresponding_real_dtype) */
cfx_tensor *cfx_meta_var_correction(cfx_tensor *self, cfx_int_list dim, cfx_value correction, bool keepdim)
{
    (void)correction;
    return ref_reduction("aten::var.correction", self, dims_of(dim), (int)dim.len, keepdim,
                         cfx_dtype_to_real((cfx_dtype)self->dtype), true);
}

cfx_tensor *cfx_meta_std_correction(cfx_tensor *self, cfx_int_list dim, cfx_value correction, bool keepdim)
{
    (void)correction;
    return ref_reduction("aten::std.correction", self, dims_of(dim), (int)dim.len, keepdim,
                         cfx_dtype_to_real((cfx_dtype)self->dtype), true);
}

cfx_tensor *cfx_meta_any(cfx_tensor *self)
{
    return elementwise_after(ref_reduction("aten::any", self, NULL, 0, false, CFX_BOOL, true));
}

cfx_tensor *cfx_meta_all(cfx_tensor *self)
{
    return elementwise_after(ref_reduction("aten::all", self, NULL, 0, false, CFX_BOOL, true));
}

cfx_tensor *cfx_meta_any_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    return elementwise_after(ref_reduction("aten::any.dim", self, &dim, 1, keepdim, CFX_BOOL, true));
}

/* torch._refs.any: an empty dim list is a.to(bool).clone(), no reduction; a uint8 self
 * gives uint8 */
cfx_tensor *cfx_meta_any_dims(cfx_tensor *self, cfx_int_list dim, bool keepdim)
{
    cfx_tensor *r;
    if (dim.len == 0) {
        cfx_tmeta a;
        cfx_tmeta_of(&a, self);
        if (self->dtype == CFX_BOOL) {
            cfx_geom_preserve_strides(self->sizes, self->strides, self->ndim, a.own_strides);
            a.strides = a.own_strides;
        } else {
            cfx_prims_to(&a, CFX_BOOL);
        }
        r = cfx_tmeta_new_tensor(&a);
    } else {
        r = elementwise_after(ref_reduction("aten::any.dims", self, dims_of(dim), (int)dim.len, keepdim, CFX_BOOL, true));
    }
    if (!r || self->dtype != CFX_UINT8)
        return r;
    cfx_tensor *u = cfx_tensor_new_strided(r->sizes, r->strides, r->ndim, CFX_UINT8, r->device);
    cfx_kernel_discard(r);
    return u;
}

cfx_tensor *cfx_meta_all_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    return elementwise_after(ref_reduction("aten::all.dim", self, &dim, 1, keepdim, CFX_BOOL, true));
}
