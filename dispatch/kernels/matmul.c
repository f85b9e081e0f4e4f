/* matmul.c - matmul and linear, the CompositeImplicitAutograd decompositions of 2.13's
 * LinearAlgebra.cpp / Linear.cpp (_matmul_impl, linear, _flatten_nd_linear).
 *
 * Every step is an operator call through the dispatcher, in ATen's order, so make_fx records
 * the same nodes as PyTorch: linear of a 2-D input with bias is t + addmm; of a contiguous
 * input with bias (3-D, or any rank with a 1-D bias) view + t + addmm + view; otherwise
 * matmul(input, t(weight)) then an out-of-place add of the bias (under a mode, bias is
 * "tensor-subclass-like", so ATen takes add, not add_). matmul picks dot / mv / mm by rank. */
#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"

cfx_tensor *cfx_composite_matmul(cfx_tensor *self, cfx_tensor *other)
{
    const char *op = "aten::matmul";
    int d1 = self->ndim, d2 = other->ndim;
    if (d1 == 0 || d2 == 0) {
        cfx_error_set(CFX_ERR, op, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", d1,
                      d2);
        return NULL;
    }
    if (d1 == 1 && d2 == 1)
        return cfx_op_dot(NULL, self, other);
    if (d1 == 2 && d2 == 1)
        return cfx_op_mv(NULL, self, other);
    if (d1 == 2 && d2 == 2)
        return cfx_op_mm(NULL, self, other);
    cfx_error_set(CFX_ERR_NOTIMPL, op, "matmul of %dD and %dD tensors is not implemented in cfx yet", d1, d2);
    return NULL;
}

/* _flatten_nd_linear: input.reshape([prod(sizes[:-1]), sizes[-1]]) (a view: the input is
 * contiguous), addmm(bias, that, weight.t()), then a view back to sizes[:-1] + [out_features]. */
static cfx_tensor *flatten_nd_linear(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias)
{
    int n = input->ndim;
    int64_t flat[2] = {cfx_geom_numel(input->sizes, n - 1), input->sizes[n - 1]};
    cfx_tensor *r = cfx_op_view(NULL, input, cfx_ints(flat, 2));
    cfx_tensor *t = r ? cfx_op_t(NULL, weight) : NULL;
    r = t ? cfx_op_addmm(NULL, bias, r, t, cfx_int(1), cfx_int(1)) : NULL;
    if (!r)
        return NULL;
    int64_t sizes[CFX_MAX_DIMS];
    for (int i = 0; i < n - 1; i++)
        sizes[i] = input->sizes[i];
    sizes[n - 1] = r->sizes[1];
    return cfx_op_view(NULL, r, cfx_ints(sizes, n));
}

static cfx_tensor *linear(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias)
{
    int di = input->ndim, dw = weight->ndim;
    if (di == 0 || dw == 0) {
        cfx_error_set(CFX_ERR, "aten::linear", "both arguments to linear need to be at least 1D, but they are %dD and %dD",
                      di, dw);
        return NULL;
    }
    if (di == 2 && bias) {
        cfx_tensor *t = cfx_op_t(NULL, weight);
        return t ? cfx_op_addmm(NULL, bias, input, t, cfx_int(1), cfx_int(1)) : NULL;
    }
    if (bias && cfx_geom_is_contiguous(input->sizes, input->strides, di) && (di == 3 || bias->ndim == 1))
        return flatten_nd_linear(input, weight, bias);
    cfx_tensor *t = cfx_op_t(NULL, weight);
    cfx_tensor *out = t ? cfx_op_matmul(NULL, input, t) : NULL;
    if (!out || !bias)
        return out;
    return cfx_op_add_Tensor(NULL, out, bias, cfx_int(1));
}

cfx_tensor *cfx_composite_linear(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias)
{
    cfx_scope s = cfx_scope_begin();
    return cfx_composite_return(s, linear(input, weight, bias));
}
