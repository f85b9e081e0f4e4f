/* euclidean_dist.c - aten::_euclidean_dist, cdist's matrix-product path for p = 2, as 2.13 runs
 * it: CompositeExplicitAutograd C++ on CPU (native/Distance.cpp: the squared norms and ones
 * padded onto -2 * x1 and x2 so that one matmul gives |x1|^2 - 2 x1.x2 + |x2|^2, then
 * clamp_min_(1e-30) and sqrt_), and on meta 2.13's Python decomposition of the same steps
 * (clamp_min(0), sqrt), which lays the result out alike. Either way make_fx records the one
 * node `_euclidean_dist.default`: its steps run below the tracer. */
#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/kernels.h"

static cfx_tensor *euclidean_dist(cfx_tensor *x1, cfx_tensor *x2, bool meta)
{
    cfx_scope s = cfx_scope_begin();
    int64_t last = -1;
    cfx_int_list dim = {&last, 1};
    cfx_value contiguous = cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT);
    cfx_tensor *r = NULL;
    cfx_tensor *sq1 = cfx_op_pow_Tensor_Scalar(NULL, x1, cfx_int(2));
    cfx_tensor *n1 = sq1 ? cfx_op_sum_dim_IntList(NULL, sq1, dim, true, cfx_none()) : NULL;
    cfx_tensor *p1 = n1 ? cfx_op_ones_like(NULL, n1, cfx_none(), cfx_none(), cfx_none(), cfx_none(), contiguous) : NULL;
    cfx_tensor *sq2 = p1 ? cfx_op_pow_Tensor_Scalar(NULL, x2, cfx_int(2)) : NULL;
    cfx_tensor *n2 = sq2 ? cfx_op_sum_dim_IntList(NULL, sq2, dim, true, cfx_none()) : NULL;
    cfx_tensor *p2 = n2 ? cfx_op_ones_like(NULL, n2, cfx_none(), cfx_none(), cfx_none(), cfx_none(), contiguous) : NULL;
    cfx_tensor *m1 = p2 ? cfx_op_mul_Scalar(NULL, x1, cfx_int(-2)) : NULL;
    cfx_tensor *a = m1 ? cfx_op_cat(NULL, (cfx_tensor_list){(cfx_tensor *[]){m1, n1, p1}, 3}, -1) : NULL;
    cfx_tensor *b = a ? cfx_op_cat(NULL, (cfx_tensor_list){(cfx_tensor *[]){x2, p2, n2}, 3}, -1) : NULL;
    if (b && b->ndim < 2) {
        cfx_error_set(CFX_ERR, "aten::_euclidean_dist",
                      "tensor.mT is only supported on matrices or batches of matrices. Got %d-D tensor.", b->ndim);
        b = NULL;
    }
    cfx_tensor *bt = b ? cfx_op_transpose_int(NULL, b, -2, -1) : NULL; /* mT */
    cfx_tensor *mm = bt ? cfx_op_matmul(NULL, a, bt) : NULL;
    if (mm && meta) {
        cfx_tensor *c = cfx_op_clamp_min(NULL, mm, cfx_int(0));
        r = c ? cfx_op_sqrt(NULL, c) : NULL;
    } else if (mm) {
        r = cfx_op_clamp_min_(NULL, mm, cfx_double(1e-30)) ? cfx_op_sqrt_(NULL, mm) : NULL;
    }
    return cfx_composite_return(s, r);
}

cfx_tensor *cfx_kernel__euclidean_dist(cfx_tensor *x1, cfx_tensor *x2) { return euclidean_dist(x1, x2, false); }

cfx_tensor *cfx_meta__euclidean_dist(cfx_tensor *x1, cfx_tensor *x2) { return euclidean_dist(x1, x2, true); }
