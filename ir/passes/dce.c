/* dce.c - dead-code elimination (Graph.eliminate_dead_code).
 *
 * FX's pass, unchanged in substance: lint first (a graph that is not topologically ordered
 * would have users counted wrongly), then walk backwards. A node that is pure and unused is
 * erased; erasing drops its uses, so by the time the walk reaches a producer its users count
 * already excludes every dead consumer, and a whole dead chain goes in one pass. The walk
 * steps to the previous node before erasing, though erased nodes keep their links anyway.
 *
 * Purity comes from the one shared oracle (side_effects.h) unless the caller passes its own,
 * which is then consulted for every node, as FX calls is_impure_node for every node. */
#include "ir/passes/dce.h"

int cfx_pass_eliminate_dead_code(cfx_graph *g, const cfx_dce_options *opts, bool *changed)
{
    if (changed)
        *changed = false;
    if (!g)
        return CFX_ERR;
    int rc = cfx_graph_lint(g);
    if (rc != CFX_OK)
        return rc;
    cfx_impure_fn custom = opts ? opts->is_impure : NULL;
    void *custom_ctx = opts ? opts->is_impure_ctx : NULL;
    bool any = false;
    for (cfx_node *n = cfx_graph_last(g), *prev; n; n = prev) {
        prev = cfx_node_prev(n);
        bool impure = custom ? custom(n, custom_ctx) : (n->n_users == 0 && cfx_node_is_impure(n));
        if (impure || n->n_users != 0)
            continue;
        rc = cfx_graph_erase_node(g, n);
        if (rc != CFX_OK)
            return rc;
        any = true;
        if (opts && opts->on_removed)
            opts->on_removed(n, opts->on_removed_ctx);
    }
    if (changed)
        *changed = any;
    return CFX_OK;
}
