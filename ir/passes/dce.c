/* dce.c - dead-code elimination (Graph.eliminate_dead_code).
 *
 * FX's pass, unchanged in substance: lint first (a graph that is not topologically ordered
 * would have users counted wrongly), then walk backwards. A node that is pure and unused is
 * erased; erasing drops its uses, so by the time the walk reaches a producer its users count
 * already excludes every dead consumer, and a whole dead chain goes in one pass.
 *
 * The backward walk goes over the array of nodes lint collected on its forward walk rather
 * than over the prev links: chasing prev links through a million nodes is one dependent
 * cache miss per node, while the array's loads are independent and overlap. Nodes erased
 * under the walk (by a callback) are skipped; a callback that inserts nodes does not get them
 * visited.
 *
 * Purity comes from the one shared oracle (side_effects.h) unless the caller passes its own,
 * which is then consulted for every node, as FX calls is_impure_node for every node. */
#include <stdlib.h>

#include "ir/internal.h"
#include "ir/passes/dce.h"

int cfx_pass_eliminate_dead_code(cfx_graph *g, const cfx_dce_options *opts, bool *changed)
{
    if (changed)
        *changed = false;
    if (!g)
        return CFX_ERR;
    cfx_node **order;
    uint32_t count = g->len;
    int rc = ir_lint_collect(g, &order);
    if (rc != CFX_OK)
        return rc;
    cfx_impure_fn custom = opts ? opts->is_impure : NULL;
    void *custom_ctx = opts ? opts->is_impure_ctx : NULL;
    bool any = false;
    for (uint32_t i = count; i-- > 0;) {
        cfx_node *n = order[i];
        if (cfx_node_is_erased(n))
            continue;
        bool impure = custom ? custom(n, custom_ctx) : (n->n_users == 0 && cfx_node_is_impure(n));
        if (impure || n->n_users != 0)
            continue;
        rc = cfx_graph_erase_node(g, n);
        if (rc != CFX_OK) {
            cfx_free(order);
            return rc;
        }
        any = true;
        if (opts && opts->on_removed)
            opts->on_removed(n, opts->on_removed_ctx);
    }
    cfx_free(order);
    if (changed)
        *changed = any;
    return CFX_OK;
}
