/* structured.c - meta functions of the structured built-ins (ATen's TORCH_META_FUNCs), run by
 * their CPU kernels.
 *
 * Each function is the checks and output metadata of one PyTorch meta function, in its order:
 * mm checks ranks before shapes, sum wraps every dim before looking for repeats, max wraps
 * its dim before the empty-dim check (the pointwise families' are in pointwise.c).
 * native_layer_norm is not structured, but its CPU kernel's input checks and stats layout
 * are kept here the same way. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/structured.h"
#include "dispatch/ops.h"

bool cfx_structured_sum(cfx_reduce_shape *r, const char *op, const cfx_tensor *self, cfx_int_list dim,
                  bool keepdim, cfx_value dtype)
{
    int n = self->ndim;
    int64_t dt;
    if (cfx_geom_opt_int(dtype, &dt)) {
        if (!cfx_dtype_valid(dt)) {
            cfx_error_set(CFX_ERR, op, "sum: unsupported dtype code %lld", (long long)dt);
            return false;
        }
        r->dtype = (cfx_dtype)dt;
    } else {
        r->dtype = !cfx_dtype_is_integral((cfx_dtype)self->dtype, true) ? (cfx_dtype)self->dtype : CFX_INT64;
    }
    for (int i = 0; i < n; i++)
        r->reduced[i] = dim.len <= 0; /* None or [] reduces everything */
    if (dim.len > 0) {
        /* maybe_wrap_dims over the whole list first, then dim_list_to_bitset's repeat check */
        for (int64_t i = 0; i < dim.len; i++) {
            int64_t w;
            if (!cfx_geom_wrap_dim(dim.data[i], n, &w, op))
                return false;
        }
        uint64_t seen = 0;
        for (int64_t i = 0; i < dim.len; i++) {
            int64_t w;
            cfx_geom_wrap_dim(dim.data[i], n, &w, op);
            if (seen >> w & 1) {
                cfx_error_set(CFX_ERR, op, "dim %lld appears multiple times in the list of dims", (long long)w);
                return false;
            }
            seen |= 1ull << w;
            if (w < n)
                r->reduced[w] = true;
        }
    }
    r->ndim = 0;
    for (int i = 0; i < n; i++) {
        if (!r->reduced[i])
            r->sizes[r->ndim++] = self->sizes[i];
        else if (keepdim)
            r->sizes[r->ndim++] = 1;
    }
    return true;
}

bool cfx_structured_max_dim(cfx_reduce_shape *r, int64_t *wrapped, const char *op, const cfx_tensor *self,
                            int64_t dim, bool keepdim)
{
    int n = self->ndim;
    int64_t w;
    if (cfx_kernel_refuse_complex(op, NULL, "max()", self) || !cfx_geom_wrap_dim(dim, n, &w, op))
        return false;
    /* a 0-dim input accepts exactly the dims wrap_dim lets through (0, -1) */
    if (n > 0 && self->sizes[w] == 0) {
        cfx_error_set(CFX_ERR, op, "max(): Expected reduction dim %lld to have non-zero size.", (long long)w);
        return false;
    }
    *wrapped = w;
    r->dtype = (cfx_dtype)self->dtype;
    r->ndim = 0;
    for (int i = 0; i < n; i++) {
        r->reduced[i] = i == w;
        if (i != w)
            r->sizes[r->ndim++] = self->sizes[i];
        else if (keepdim)
            r->sizes[r->ndim++] = 1;
    }
    return true;
}

bool cfx_check_layer_norm_inputs(const char *op, const cfx_tensor *input, cfx_int_list normalized_shape,
                                 const cfx_tensor *weight, const cfx_tensor *bias, int64_t *M, int64_t *N)
{
    const int64_t *ns = normalized_shape.data;
    int64_t nn = normalized_shape.len < 0 ? 0 : normalized_shape.len;
    cfx_buf b;
    cfx_buf_init(&b);
    if (nn < 1) {
        cfx_buf_puts(&b, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                         "element, but got normalized_shape = ");
        cfx_geom_put_dims(&b, ns, (int)nn);
        goto fail;
    }
    const cfx_tensor *params[2] = {weight, bias};
    const char *names[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) {
        const cfx_tensor *p = params[k];
        if (!p || (p->ndim == nn && !memcmp(p->sizes, ns, (size_t)nn * sizeof *ns)))
            continue;
        cfx_buf_printf(&b, "Expected %s to be of same shape as normalized_shape, but got %s of shape ", names[k],
                       names[k]);
        cfx_geom_put_dims(&b, p->sizes, p->ndim);
        cfx_buf_puts(&b, " and normalized_shape = ");
        cfx_geom_put_dims(&b, ns, (int)nn);
        goto fail;
    }
    int n = input->ndim, axis = (int)(n - nn);
    if (n < nn || memcmp(input->sizes + axis, ns, (size_t)nn * sizeof *ns)) {
        cfx_buf_puts(&b, "Given normalized_shape=");
        cfx_geom_put_dims(&b, ns, (int)nn);
        cfx_buf_puts(&b, ", expected input with shape [*");
        for (int64_t i = 0; i < nn; i++)
            cfx_buf_printf(&b, ", %lld", (long long)ns[i]);
        cfx_buf_puts(&b, "], but got input of size");
        cfx_geom_put_dims(&b, input->sizes, n);
        goto fail;
    }
    *M = cfx_geom_numel(input->sizes, axis);
    *N = cfx_geom_numel(input->sizes + axis, (int)nn);
    cfx_buf_free(&b);
    return true;
fail:;
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "native_layer_norm: bad normalized_shape");
    cfx_free(msg);
    return false;
}

void cfx_layer_norm_stat_layout(const cfx_tensor *input, int axis, int64_t M, int64_t *sizes, int64_t *strides)
{
    int n = input->ndim;
    for (int i = 0; i < n; i++)
        sizes[i] = i < axis ? input->sizes[i] : 1;
    int64_t one = 1;
    /* viewing a [M] tensor never fails: every size is a factor of M */
    cfx_geom_view_strides(&M, &one, 1, sizes, n, strides);
}

bool cfx_structured_mm(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    if (a->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "self must be a matrix");
        return false;
    }
    if (b->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "mat2 must be a matrix");
        return false;
    }
    if (a->sizes[1] != b->sizes[0]) {
        cfx_error_set(CFX_ERR, op, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                      (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0],
                      (long long)b->sizes[1]);
        return false;
    }
    return true;
}

double cfx_scalar_to_double(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_DOUBLE: return v.u.d;
    case CFX_V_INT: return (double)v.u.i;
    case CFX_V_BOOL: return v.u.b ? 1.0 : 0.0;
    default: return 0.0;
    }
}

int64_t cfx_scalar_to_int64(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_INT: return v.u.i;
    case CFX_V_BOOL: return v.u.b;
    case CFX_V_DOUBLE:
        /* NaN and numbers past int64 (undefined in C) give INT64_MIN, as x86's cvttsd2si does
         * for PyTorch's own cast; callers that must refuse them check the double first */
        return v.u.d > -9223372036854775808.0 && v.u.d < 9223372036854775808.0 ? (int64_t)v.u.d : INT64_MIN;
    default: return 0;
    }
}

/* p[j] = the number in dtype dt: d for floating and complex dtypes, i for integral ones, b for bool. */
void cfx_put_number(void *p, int64_t j, cfx_dtype dt, double d, int64_t i, bool b)
{
    switch (dt) {
    case CFX_FLOAT32: ((float *)p)[j] = (float)d; break;
    case CFX_FLOAT64: ((double *)p)[j] = d; break;
    case CFX_INT64: ((int64_t *)p)[j] = i; break;
    case CFX_INT32: ((int32_t *)p)[j] = (int32_t)i; break;
    case CFX_UINT8: ((uint8_t *)p)[j] = (uint8_t)i; break;
    case CFX_INT8: ((int8_t *)p)[j] = (int8_t)i; break;
    case CFX_INT16: ((int16_t *)p)[j] = (int16_t)i; break;
    case CFX_BOOL: ((bool *)p)[j] = b; break;
    case CFX_COMPLEX64: ((float *)p)[2 * j] = (float)d, ((float *)p)[2 * j + 1] = 0; break;
    case CFX_COMPLEX128: ((double *)p)[2 * j] = d, ((double *)p)[2 * j + 1] = 0; break;
    }
}
