/* data_dependent.c - kernels of the operators whose output depends on tensor data:
 * aten::_local_scalar_dense (what Tensor.item() dispatches) and aten::nonzero (an output
 * shape only the data decides), and cfx_item.
 *
 * They are the canonical calls a fake tensor cannot answer; their tags (data_dependent_output,
 * dynamic_output_shape) tell the fake mode so, as in PyTorch. Their Meta kernels refuse
 * (meta.c). cfx_item mirrors Python's Tensor.item(): the element-count check with the message
 * Python gives, then _local_scalar_dense through the dispatcher, so modes see the call. */
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"

/* The element at the view's offset (PyTorch reads the first element, whatever the size). */
cfx_value cfx_cpu__local_scalar_dense(cfx_tensor *t)
{
    const char *op = "aten::_local_scalar_dense";
    if (cfx_tensor_numel(t) < 1) {
        cfx_error_set(CFX_ERR, op, "_local_scalar_dense: Empty tensor not supported");
        return cfx_none();
    }
    const void *p = cfx_tensor_data(t);
    switch ((cfx_dtype)t->dtype) {
    case CFX_FLOAT32: return cfx_double(*(const float *)p);
    case CFX_FLOAT64: return cfx_double(*(const double *)p);
    case CFX_INT32: return cfx_int(*(const int32_t *)p);
    case CFX_INT64: return cfx_int(*(const int64_t *)p);
    case CFX_BOOL: return cfx_bool(*(const bool *)p);
    case CFX_UINT8: return cfx_int(*(const uint8_t *)p);
    case CFX_INT8: return cfx_int(*(const int8_t *)p);
    case CFX_INT16: return cfx_int(*(const int16_t *)p);
    case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* a Scalar holds no complex number in cfx */
    }
    cfx_error_set(CFX_ERR, op, "_local_scalar_dense: unsupported dtype");
    return cfx_none();
}

/* int64 [count, ndim] indices in row-major order, laid out as PyTorch's CPU kernel leaves
 * them: the transpose of a contiguous [ndim, count], strides (1, count). */
cfx_tensor *cfx_cpu_nonzero(cfx_tensor *t)
{
    int64_t numel = cfx_tensor_numel(t), count = 0;
    for (int64_t i = 0; i < numel; i++)
        count += cfx_tensor_get_double(t, i) != 0; /* NaN counts, as in PyTorch */
    int64_t sizes[2] = {count, t->ndim}, strides[2] = {1, count};
    cfx_tensor *out = cfx_tensor_new_strided(sizes, strides, 2, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    int64_t *o = cfx_tensor_data(out), k = 0;
    for (int64_t i = 0; i < numel; i++) {
        if (cfx_tensor_get_double(t, i) == 0)
            continue;
        int64_t rest = i;
        for (int d = t->ndim - 1; d >= 0; d--) {
            o[k + d * count] = rest % t->sizes[d];
            rest /= t->sizes[d];
        }
        k++;
    }
    return out;
}

double cfx_item(cfx_tensor *t)
{
    if (!t)
        return NAN;
    if (cfx_tensor_numel(t) != 1) {
        cfx_error_set(CFX_ERR, NULL, "only one element tensors can be converted to Python scalars");
        return NAN;
    }
    cfx_value v = cfx__local_scalar_dense(t);
    return cfx_value_is_number(v) ? cfx_value_to_double(v) : NAN;
}
