/* collectives.c - dist.all_reduce rewritten into functional collectives (collectives.h).
 *
 * What Dynamo's CollectiveFunctionRewriteVariable does to `dist.all_reduce(t, op, group,
 * async_op)`: refuse async_op (a work handle has no graph form), map the ReduceOp to the
 * string functional collectives take (REDUCE_OP_TO_STR: a reduce op missing there is
 * refused), and call the traceable replacement, `all_reduce_inplace`, which is
 * `t.copy_(wait_tensor(all_reduce(t, op, group)))`. Those are ordinary operator calls here,
 * so the proxy mode records three nodes and the same code runs eagerly.
 *
 * The operators are registered on first use (not at load: the built-in table stays
 * PyTorch's aten). Their kernels are a one-process world's: every reduction of a single
 * contribution is that contribution, so all_reduce is a copy and wait_tensor the identity;
 * the Meta kernel of all_reduce is empty_like, as in PyTorch. */
#include <pthread.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "tracer/collectives.h"

/* REDUCE_OP_TO_STR, indexed by RedOpType (PREMUL_SUM and UNUSED have none). */
static const char *const reduce_op_str[] = {"sum", "avg", "product", "min", "max", "band", "bor", "bxor"};
static const char *const red_op_type_name[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR",
                                               "BXOR", "PREMUL_SUM", "UNUSED"};
enum { N_REDUCE_STR = sizeof reduce_op_str / sizeof reduce_op_str[0] };

static cfx_library *lib;
static cfx_op *all_reduce_op, *wait_tensor_op;
static int register_status = CFX_OK;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static bool known_reduce_op(const char *s)
{
    for (int i = 0; i < N_REDUCE_STR; i++)
        if (!strcmp(s, reduce_op_str[i]))
            return true;
    return false;
}

static cfx_tensor *all_reduce_cpu(cfx_tensor *input, const char *reduce_op, const cfx_value *group_name)
{
    (void)group_name; /* every group of a one-process world is that process */
    if (!known_reduce_op(reduce_op)) {
        cfx_error_set(CFX_ERR, "_c10d_functional::all_reduce", "Unrecognized reduce_op: %s", reduce_op);
        return NULL;
    }
    return cfx_clone(input);
}

static cfx_tensor *all_reduce_meta(cfx_tensor *input, const char *reduce_op, const cfx_value *group_name)
{
    (void)reduce_op;
    (void)group_name;
    return cfx_empty_like(input);
}

static cfx_tensor *wait_tensor_any(cfx_tensor *tensor) { return cfx_autorelease(cfx_tensor_retain(tensor)); }

static void register_ops(void)
{
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "_c10d_functional");
    int rc = lib ? CFX_OK : cfx_error_status();
    if (rc == CFX_OK)
        rc = cfx_library_def(lib, "_c10d_functional::all_reduce(Tensor input, str reduce_op, Any group_name) -> Tensor");
    if (rc == CFX_OK)
        rc = cfx_library_def(lib, "_c10d_functional::wait_tensor(Tensor tensor) -> Tensor");
    if (rc == CFX_OK)
        rc = CFX_IMPL(lib, "all_reduce", CFX_KEY_CPU, all_reduce_cpu);
    if (rc == CFX_OK)
        rc = CFX_IMPL(lib, "all_reduce", CFX_KEY_Meta, all_reduce_meta);
    if (rc == CFX_OK)
        rc = CFX_IMPL(lib, "wait_tensor", CFX_KEY_CompositeExplicitAutograd, wait_tensor_any);
    if (rc == CFX_OK && !((all_reduce_op = cfx_op_find("_c10d_functional::all_reduce")) &&
                          (wait_tensor_op = cfx_op_find("_c10d_functional::wait_tensor"))))
        rc = cfx_error_status();
    register_status = rc;
}

/* PyTorch 2.13's graph break for async_op=True (CollectiveFunctionRewriteVariable), for the
 * call with every argument given as a literal, as the C call gives them. Python prints the
 * function object as `<function all_reduce at 0x7f...>`, an id() that changes every run; the
 * address is dropped so the text is deterministic (gen_callables.py drops it the same way). */
static int async_op_refused(const char *group)
{
    return cfx_error_set(
        CFX_ERR, NULL,
        "async_op=True for distributed collectives\n"
        "  Explanation: `torch.compile` doesn't support `async_op=True for <function all_reduce>\n"
        "  Hint: It may be possible to write Dynamo tracing rules for this code. Please report an issue to PyTorch "
        "if you encounter this graph break often and it is causing performance issues.\n"
        "\n"
        "  Developer debug context: <function all_reduce>, args=[], kwargs={'tensor': TensorVariable(), "
        "'op': LazyVariableTracker(unrealized: <class 'torch._C._distributed_c10d.ReduceOp.RedOpType'>), "
        "'group': ConstantVariable(%s%s%s), 'async_op': ConstantVariable(bool: True)}\n"
        "\n"
        " For more details about this graph break, please visit: "
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0172.html",
        group ? "str: '" : "NoneType: None", group ? group : "", group ? "'" : "");
}

int cfx_dist_all_reduce(cfx_tensor *t, cfx_reduce_op op, const char *group, bool async_op)
{
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!t)
        return cfx_error_set(CFX_ERR, NULL, "cfx_dist_all_reduce: NULL tensor");
    if (async_op)
        return async_op_refused(group);
    if ((unsigned)op >= N_REDUCE_STR)
        return cfx_error_set(CFX_ERR, NULL, "Unsupported all_reduce op: RedOpType.%s",
                             (unsigned)op < sizeof red_op_type_name / sizeof red_op_type_name[0]
                                 ? red_op_type_name[op] : "?");
    pthread_once(&once, register_ops);
    if (register_status != CFX_OK)
        return cfx_error_set(CFX_ERR, NULL, "the _c10d_functional operators could not be registered");
    /* all_reduce_inplace: tensor.copy_(wait_tensor(all_reduce(tensor, op, group))) */
    cfx_value stack[4] = {cfx_tensor_value(t), cfx_string(reduce_op_str[op]), cfx_string(group ? group : "0")};
    int rc = cfx_op_call(all_reduce_op, stack, 3, 4);
    if (rc == CFX_OK)
        rc = cfx_op_call(wait_tensor_op, stack, 1, 4);
    if (rc == CFX_OK && !cfx_copy_(t, stack[0].u.t, false))
        rc = cfx_error_status();
    return rc;
}
