/* dce.h - Graph.eliminate_dead_code.
 *
 * Lint, then walk the nodes in reverse and erase every node that is pure and has no users.
 * Because erasing a node removes it from its producers' users, whole dead chains go in one
 * pass. Purity is cfx_node_is_impure unless the caller supplies its own oracle (FX's
 * is_impure_node argument). Each erased node is reported through on_removed (while it is
 * still readable: its name and target are intact), so a driver can log
 * "The following nodes were dead code eliminated: ..." as FX does. */
#ifndef CFX_IR_PASSES_DCE_H
#define CFX_IR_PASSES_DCE_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/graph.h"

typedef struct cfx_dce_options {
    cfx_impure_fn is_impure; /* NULL: cfx_node_is_impure */
    void *is_impure_ctx;
    void (*on_removed)(const cfx_node *n, void *ctx); /* NULL: no report */
    void *on_removed_ctx;
} cfx_dce_options;

/* CFX_OK (and *changed) or the lint error. opts may be NULL; changed may be NULL. */
CFX_API int cfx_pass_eliminate_dead_code(cfx_graph *g, const cfx_dce_options *opts, bool *changed);

#endif
