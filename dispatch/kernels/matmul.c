/* matmul.c - matmul and linear, the CompositeImplicitAutograd decompositions of 2.13's
 * LinearAlgebra.cpp / Linear.cpp (_matmul_impl, linear, _flatten_nd_linear).
 *
 * Every step is an operator call through the dispatcher, in ATen's order, so make_fx records
 * the same nodes as PyTorch: linear of a 2-D input with bias is t + addmm; of a contiguous
 * input with bias (3-D, or any rank with a 1-D bias) view + t + addmm + view; otherwise
 * matmul(input, t(weight)) then an out-of-place add of the bias (under a mode, bias is
 * "tensor-subclass-like", so ATen takes add, not add_). matmul (_matmul_impl): dot / mv / mm
 * by rank, else mm/mv on the folded larger operand when should_fold allows it, else bmm over
 * the broadcast batch dims; 1-D @ 2-D is unsqueeze + mm + the in-place squeeze_.dim. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"

static cfx_tensor *mT(cfx_tensor *t) { return cfx_op_transpose_int(NULL, t, -2, -1); }

/* should_fold: whether the larger operand (>= 3-D, against a 1-D or 2-D one) folds into a
 * matrix without a copy, so mm/mv replace bmm. Ordering the operands calls mT on the second
 * when the first is smaller: an operator call make_fx records even when its result is unused. */
static bool should_fold(cfx_tensor *t1_, cfx_tensor *t2_, bool *failed)
{
    bool larger = t1_->ndim >= t2_->ndim;
    cfx_tensor *t1 = larger ? t1_ : mT(t2_);
    if (!t1) {
        *failed = true;
        return false;
    }
    int d1 = t1->ndim, d2 = larger ? t2_->ndim : t1_->ndim;
    if (!(d1 >= 3 && d2 <= 2))
        return false;
    if (t1_->ndim == 2)
        return false;
    if (cfx_tensor_numel(t1) == 0)
        return true;
    for (int i = 0; i < d1 - 2; i++)
        if (t1->strides[i] != t1->strides[i + 1] * t1->sizes[i + 1])
            return false;
    return true;
}

/* The fold: the larger operand reshaped to [prod(batch, n), m] times the other by mm or mv. */
static cfx_tensor *matmul_fold(cfx_tensor *a, cfx_tensor *b)
{
    bool transpose = b->ndim > a->ndim;
    cfx_tensor *t1 = transpose ? mT(b) : a;
    cfx_tensor *t2 = !transpose ? b : a->ndim == 2 ? cfx_op_t(NULL, a) : a;
    if (!t1 || !t2)
        return NULL;
    int n1 = t1->ndim, no = n1 - 1;
    int64_t out_shape[CFX_MAX_DIMS + 1], folded[2];
    for (int i = 0; i < no; i++)
        out_shape[i] = t1->sizes[i];
    folded[0] = cfx_geom_numel(t1->sizes, no), folded[1] = t1->sizes[n1 - 1];
    bool matrix = t2->ndim == 2;
    if (matrix)
        out_shape[no++] = t2->sizes[1];
    cfx_tensor *f = cfx_op_reshape(NULL, t1, cfx_ints(folded, 2));
    if (!f)
        return NULL;
    cfx_tensor *p = matrix ? cfx_op_mm(NULL, f, t2) : cfx_op_mv(NULL, f, t2);
    cfx_tensor *out = p ? cfx_op__unsafe_view(NULL, p, cfx_ints(out_shape, no)) : NULL;
    if (!out || !transpose || !matrix)
        return out;
    cfx_tensor *tt = mT(out);
    return tt ? cfx_op_contiguous(NULL, tt, CFX_CONTIGUOUS_FORMAT) : NULL;
}

/* The batched case: broadcast the batch dims, expand both operands to them, reshape to
 * [prod(batch), n, m] (a vector right operand to [prod(batch), m] then unsqueeze(2)), bmm,
 * and _unsafe_view back (squeezing the vector's dim first). */
static cfx_tensor *matmul_batched(cfx_tensor *a, cfx_tensor *b)
{
    const char *op = "aten::matmul";
    int d1 = a->ndim, d2 = b->ndim;
    int64_t n = d1 > 1 ? a->sizes[d1 - 2] : 1, m1 = a->sizes[d1 - 1];
    int64_t m2 = d2 > 1 ? b->sizes[d2 - 2] : b->sizes[0], p = d2 > 1 ? b->sizes[d2 - 1] : 1;
    int nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 > 2 ? d2 - 2 : 0;
    int64_t shape[CFX_MAX_DIMS + 2];
    int nb;
    if (!cfx_geom_broadcast(a->sizes, nb1, b->sizes, nb2, shape, &nb, op))
        return NULL;
    int64_t batch = cfx_geom_numel(shape, nb);
    int64_t e1[CFX_MAX_DIMS + 2], e2[CFX_MAX_DIMS + 2];
    memcpy(e1, shape, (size_t)nb * sizeof *shape);
    memcpy(e2, shape, (size_t)nb * sizeof *shape);
    e1[nb] = n, e1[nb + 1] = m1;
    bool vec = d2 == 1;
    e2[nb] = m2, e2[nb + 1] = p;
    cfx_tensor *x = cfx_op_expand(NULL, a, cfx_ints(e1, nb + 2), false);
    int64_t r1[3] = {batch, n, m1}, r2[3] = {batch, m2, p};
    x = x ? cfx_op_reshape(NULL, x, cfx_ints(r1, 3)) : NULL;
    cfx_tensor *y = x ? cfx_op_expand(NULL, b, cfx_ints(e2, vec ? nb + 1 : nb + 2), false) : NULL;
    if (vec) {
        y = y ? cfx_op_reshape(NULL, y, cfx_ints(r2, 2)) : NULL;
        y = y ? cfx_op_unsqueeze(NULL, y, 2) : NULL;
    } else {
        y = y ? cfx_op_reshape(NULL, y, cfx_ints(r2, 3)) : NULL;
    }
    int no = nb;
    if (d1 > 1)
        shape[no++] = n;
    if (d2 > 1)
        shape[no++] = p;
    cfx_tensor *r = y ? cfx_op_bmm(NULL, x, y) : NULL;
    if (r && vec)
        r = cfx_op_squeeze_dim(NULL, r, -1);
    return r ? cfx_op__unsafe_view(NULL, r, cfx_ints(shape, no)) : NULL;
}

static cfx_tensor *matmul(cfx_tensor *self, cfx_tensor *other)
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
    if (d1 == 1 && d2 == 2) {
        /* self.unsqueeze(0).mm(other).squeeze_(0): make_fx records the in-place squeeze_ */
        cfx_tensor *u = cfx_op_unsqueeze(NULL, self, 0);
        cfx_tensor *p = u ? cfx_op_mm(NULL, u, other) : NULL;
        return p ? cfx_op_squeeze__dim(NULL, p, 0) : NULL;
    }
    if (d1 == 2 && d2 == 2)
        return cfx_op_mm(NULL, self, other);
    bool failed = false;
    bool fold = should_fold(self, other, &failed);
    if (failed)
        return NULL;
    return fold ? matmul_fold(self, other) : matmul_batched(self, other);
}

cfx_tensor *cfx_composite_matmul(cfx_tensor *self, cfx_tensor *other)
{
    cfx_scope s = cfx_scope_begin();
    return cfx_composite_return(s, matmul(self, other));
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
