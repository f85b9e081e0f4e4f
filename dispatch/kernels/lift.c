/* lift.c - lift_fresh, lift_fresh_copy and tensor literals.
 *
 * torch.tensor([...]) builds its tensor with dispatch turned off and then returns
 * at::lift_fresh(t): the one call a mode or tracer sees is lift_fresh on a tensor it has never
 * met, which is how make_fx notices a literal (it interns the tensor as _tensor_constantN and
 * records lift_fresh_copy instead, so the program cannot mutate the stored constant).
 * cfx_tensor_literal does the same: cfx_tensor_new does not dispatch, lift_fresh does.
 *
 * lift_fresh returns its argument itself (Tensor(a) -> Tensor(a)), as PyTorch returns the same
 * tensor object. For the ownership rules every operator result obeys, the result is a new
 * reference: retained, then autoreleased into the innermost scope (with no scope open the
 * caller owns that reference). lift_fresh_copy is the composite torchgen generates for a
 * view_copy op: lift_fresh, then clone(memory_format=contiguous_format) (a contiguous copy
 * whatever the input's layout), both through the dispatcher, so a kernel registered on either
 * is seen, as in PyTorch. Both are one kernel for every device. */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"

cfx_tensor *cfx_kernel_lift_fresh(cfx_tensor *self)
{
    return cfx_autorelease(cfx_tensor_retain(self));
}

cfx_tensor *cfx_kernel_lift_fresh_copy(cfx_tensor *self)
{
    cfx_tensor *t = cfx_op_lift_fresh(NULL, self);
    if (!t)
        return NULL;
    cfx_tensor *r = cfx_op_clone(NULL, t, cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT));
    cfx_kernel_discard(t);
    return r;
}

static void fill(cfx_tensor *t, const double *data, int64_t n)
{
    void *p = cfx_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        double v = data[i];
        switch ((cfx_dtype)t->dtype) {
        case CFX_FLOAT32: ((float *)p)[i] = (float)v; break;
        case CFX_FLOAT64: ((double *)p)[i] = v; break;
        case CFX_INT64: ((int64_t *)p)[i] = cfx_conv_f64_i64(v); break;
        case CFX_INT32: ((int32_t *)p)[i] = cfx_conv_f64_i32(v); break;
        case CFX_BOOL: ((bool *)p)[i] = v != 0; break;
        case CFX_UINT8: ((uint8_t *)p)[i] = (uint8_t)cfx_conv_f64_i32(v); break;
        case CFX_INT8: ((int8_t *)p)[i] = (int8_t)cfx_conv_f64_i32(v); break;
        case CFX_INT16: ((int16_t *)p)[i] = (int16_t)cfx_conv_f64_i32(v); break;
        case CFX_COMPLEX64: ((float *)p)[2 * i] = (float)v, ((float *)p)[2 * i + 1] = 0; break;
        case CFX_COMPLEX128: ((double *)p)[2 * i] = v, ((double *)p)[2 * i + 1] = 0; break;
        }
    }
}

static cfx_tensor *literal(const double *data, const int64_t *sizes, int ndim, cfx_dtype dtype)
{
    const char *op = "cfx_tensor_literal";
    if (ndim < 0 || ndim > CFX_MAX_DIMS || (ndim > 0 && !sizes)) {
        cfx_error_set(CFX_ERR, op, "tensor literal: expected 0 to %d sizes, got %d", CFX_MAX_DIMS, ndim);
        return NULL;
    }
    if (!cfx_dtype_valid(dtype)) {
        cfx_error_set(CFX_ERR, op, "tensor literal: unsupported dtype code %d", (int)dtype);
        return NULL;
    }
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!t)
        return NULL;
    int64_t n = cfx_tensor_numel(t);
    if (n > 0 && !data) {
        cfx_kernel_discard(t);
        cfx_error_set(CFX_ERR, op, "tensor literal: no data for %lld elements", (long long)n);
        return NULL;
    }
    fill(t, data, n);
    cfx_tensor *r = cfx_op_lift_fresh(NULL, t);
    cfx_kernel_discard(t); /* r holds its own reference (or is another tensor) */
    return r;
}

cfx_tensor *cfx_tensor_literal_at(const cfx_site *site, const double *data, const int64_t *sizes, int ndim,
                                  cfx_dtype dtype)
{
    const cfx_site *prev = site ? cfx_set_current_site(site) : NULL;
    cfx_tensor *r = literal(data, sizes, ndim, dtype);
    if (site)
        cfx_set_current_site(prev);
    return r;
}

/* The function behind the macro of the same name in ops.h. */
cfx_tensor *(cfx_tensor_literal)(const double *data, const int64_t *sizes, int ndim, cfx_dtype dtype)
{
    return literal(data, sizes, ndim, dtype);
}
