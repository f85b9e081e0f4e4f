/* collectives.h - in-place collectives rewritten into functional ones when traced
 * (Dynamo's CollectiveFunctionRewriteVariable, torch/distributed/_functional_collectives.py).
 *
 * `dist.all_reduce(t)` mutates t and may return a work handle; a graph wants values. As
 * Dynamo does, cfx rewrites the call: y = _c10d_functional::all_reduce(t, "sum", group),
 * y = _c10d_functional::wait_tensor(y), then t.copy_(y). The two operators are registered
 * with PyTorch 2.13's schemas ("_c10d_functional::all_reduce(Tensor input, str reduce_op,
 * Any group_name) -> Tensor", "_c10d_functional::wait_tensor(Tensor tensor) -> Tensor");
 * their CPU kernels are those of a one-process world (the reduction of one tensor is itself),
 * their Meta kernels give the input's metadata, so the same code runs eagerly, traced on real
 * tensors and traced on fake ones. */
#ifndef CFX_TRACER_COLLECTIVES_H
#define CFX_TRACER_COLLECTIVES_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"

/* torch.distributed.ReduceOp's RedOpType values. */
typedef enum cfx_reduce_op {
    CFX_REDUCE_SUM = 0,
    CFX_REDUCE_AVG = 1,
    CFX_REDUCE_PRODUCT = 2,
    CFX_REDUCE_MIN = 3,
    CFX_REDUCE_MAX = 4,
    CFX_REDUCE_BAND = 5,
    CFX_REDUCE_BOR = 6,
    CFX_REDUCE_BXOR = 7,
    CFX_REDUCE_PREMUL_SUM = 8,
    CFX_REDUCE_UNUSED = 9,
} cfx_reduce_op;

/* torch.distributed.all_reduce(t, op, group, async_op), rewritten: t receives the reduction.
 * group: the process group's name (NULL: the default group, "0"). Errors as Dynamo's:
 * async_op (a work handle cannot be traced) and a reduce op functional collectives lack
 * ("Unsupported all_reduce op: RedOpType.PREMUL_SUM"). */
CFX_API int cfx_dist_all_reduce(cfx_tensor *t, cfx_reduce_op op, const char *group, bool async_op);

#endif
