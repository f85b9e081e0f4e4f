/* cse.h - common subexpression elimination.
 *
 * torch.fx.passes.dialect.common.cse_pass.CSEPass, made safe for graphs that are not
 * functional: two nodes are merged when they have the same opcode, target, args and kwargs
 * (with every node argument replaced by its representative), and the later one's users are
 * moved to the earlier one, which keeps its name and meta. Never merged:
 *   - placeholders, outputs and get_attr nodes (as in CSEPass);
 *   - impure nodes (cfx_node_is_impure: the side-effect registry, `Tensor(a!)` schemas);
 *   - nondeterministic_seeded operators (tagged in the op table or registered as such): two
 *     rand_like calls are two different samples. PyTorch's CSEPass merges them unless told not
 *     to through banned_ops; cfx never does;
 *   - pure nodes across a mutation: a node that mutates an argument, or another side-effectful
 *     call other than an assertion, starts a new generation, and a node only merges with one
 *     of its own generation (with aliasing unknown, any mutation may have changed any input).
 * The pass is linear in the size of the graph (one hash table, one rewrite per affected user)
 * and does not recurse, so a million duplicates feeding one node cost a million steps. */
#ifndef CFX_IR_PASSES_CSE_H
#define CFX_IR_PASSES_CSE_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/graph.h"

/* CFX_OK (and *changed, may be NULL) or a negative status with the error recorded. The graph
 * must be topologically ordered (it is linted first). */
CFX_API int cfx_pass_cse(cfx_graph *g, bool *changed);

#endif
