/* strip_asserts.c - erase assertion nodes (see strip_asserts.h).
 *
 * Assertions are recognised by name rather than by a list, so that the family PyTorch keeps
 * growing (_assert_async, _assert_scalar, _assert_tensor_metadata, ...) is covered without
 * edits here: an operator whose overload packet starts with `_assert`, a builtin function
 * whose __name__ does. Functional assertions (_functional_assert_async) return a token other
 * nodes depend on and are not matched. */
#include <string.h>

#include "ir/passes/strip_asserts.h"

static bool starts_assert(const char *s, size_t n) { return n >= 7 && strncmp(s, "_assert", 7) == 0; }

bool cfx_node_is_assert(const cfx_node *n)
{
    if (!n || cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
        return false;
    const cfx_target_info *t = cfx_node_target_info(n);
    const cfx_op *op = cfx_target_info_op(t);
    if (op) {
        const char *packet;
        size_t len = cfx_op_packet_name(cfx_op_name(op), &packet);
        return starts_assert(packet, len);
    }
    const cfx_builtin_fn *fn = cfx_target_info_fn(t);
    return fn && fn->name && starts_assert(fn->name, strlen(fn->name));
}

int cfx_pass_strip_asserts(cfx_graph *g, bool *changed)
{
    if (changed)
        *changed = false;
    if (!g)
        return CFX_ERR;
    bool any = false;
    for (cfx_node *n = cfx_graph_first(g), *next; n; n = next) {
        next = cfx_node_next(n);
        if (!cfx_node_is_assert(n) || cfx_node_num_users(n) != 0)
            continue;
        int rc = cfx_graph_erase_node(g, n);
        if (rc != CFX_OK)
            return rc;
        any = true;
    }
    if (changed)
        *changed = any;
    return CFX_OK;
}
