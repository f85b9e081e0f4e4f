/* batch_norm_composite.c - aten::batch_norm, the CompositeImplicitAutograd path F.batch_norm
 * takes, as 2.13's C++ writes it (with _batch_norm_impl_index, itself CompositeImplicitAutograd
 * and so never recorded, inlined: cfx's table has no op of it yet, its int result being beyond
 * the golden cases' format).
 *
 * _batch_norm_impl_index first makes the cuDNN reserve buffer, at::empty({0}, options with
 * dtype kByte) (on CPU it stays unused, but make_fx records it: empty.memory_format([0],
 * dtype=torch.uint8, layout=torch.strided, device=cpu)), checks the per-channel arguments
 * against C = input.size(1), then returns native_batch_norm's three results, the reserve and
 * the backend index 0; batch_norm returns the first. The running statistics (when given) are
 * updated in place by native_batch_norm in training mode. */
#include <inttypes.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/kernels.h"

static bool matches_features(const char *op, const char *name, const cfx_tensor *t, int64_t c)
{
    if (!t || cfx_tensor_numel(t) == c)
        return true;
    cfx_error_set(CFX_ERR, op, "%s should contain %" PRId64 " elements not %" PRId64, name, c, cfx_tensor_numel(t));
    return false;
}

/* _batch_norm_impl_index's native path: its output (the reserve stays in the scope) */
static cfx_tensor *batch_norm_impl_index(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                         cfx_tensor *running_mean, cfx_tensor *running_var, bool training,
                                         double momentum, double eps)
{
    const char *op = "aten::_batch_norm_impl_index";
    cfx_tensor *none = NULL;
    if (input->ndim < 2) {
        cfx_error_set(CFX_ERR, op, "batch_norm: expected an input with at least 2 dimensions");
        return none;
    }
    if (cfx_tensor_numel(input) == 0) {
        cfx_error_set(CFX_ERR_NOTIMPL, op, "batch_norm of an empty input is not implemented in cfx");
        return none;
    }
    cfx_tensor *reserve = cfx_op_empty_memory_format(NULL, CFX_INTS(0), cfx_dtype_value(CFX_UINT8),
                                       cfx_layout_value(CFX_LAYOUT_STRIDED),
                                       cfx_device_value(cfx_tensor_fake_device(input)), cfx_none(), cfx_none());
    if (!reserve)
        return none;
    int64_t c = input->sizes[1];
    if (running_mean ? !matches_features(op, "running_mean", running_mean, c) : !training) {
        if (!running_mean)
            cfx_error_set(CFX_ERR, op, "running_mean must be defined in evaluation mode");
        return none;
    }
    if (running_var ? !matches_features(op, "running_var", running_var, c) : !training) {
        if (!running_var)
            cfx_error_set(CFX_ERR, op, "running_var must be defined in evaluation mode");
        return none;
    }
    if (!matches_features(op, "weight", weight, c) || !matches_features(op, "bias", bias, c))
        return none;
    cfx_native_batch_norm_result r =
        cfx_op_native_batch_norm(NULL, input, weight, bias, running_mean, running_var, training, momentum, eps);
    return r.out;
}

cfx_tensor *cfx_composite_batch_norm(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                     cfx_tensor *running_mean, cfx_tensor *running_var, bool training,
                                     double momentum, double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled; /* no cuDNN: the native path */
    cfx_scope s = cfx_scope_begin();
    return cfx_composite_return(
        s, batch_norm_impl_index(input, weight, bias, running_mean, running_var, training, momentum, eps));
}
