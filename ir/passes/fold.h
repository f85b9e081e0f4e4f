/* fold.h - constant folding: compute once what depends only on constants
 * (torch._inductor.constant_folding.constant_fold, PyTorch 2.13).
 *
 * A node is constant when it is a get_attr naming a tensor of the graph module, or a
 * call_function whose every input node is constant (literals are constants too): an operator
 * call, or an operator.getitem of a constant tuple. Constant operator calls are run through
 * the dispatcher on the real tensors, in graph order. Then, as Inductor does, only the last
 * constant of each constant sub-graph is materialized: a constant call_function node with
 * a tensor value and at least one non-constant user is replaced by a get_attr of a new
 * attribute named `_frozen_param<i>` (Inductor's replace_node_with_constant: the first i from
 * 0 that names nothing in the module), inserted where the node was, carrying the node's meta
 * (val, tensor_meta, stack_trace, entries) and then the node's own name. Constant nodes that
 * the replacement left without users are erased (Inductor's eliminate_dead_code after the
 * replacement), newest first.
 *
 * Never folded, as in Inductor:
 *   - impure nodes (cfx_node_is_impure: side-effectful targets, `(a!)` schemas);
 *   - operators tagged nondeterministic_seeded (rand_like: each run must differ);
 *   - constructors (calls with no tensor among their constant inputs, such as `ones`), unless
 *     fold_constructors is set: Inductor's skip_constructors, which it sets because a
 *     materialized constant costs a memory read that recomputing does not;
 *   - results with more than max_numel elements (the size limit: a folded result is a weight
 *     saved with the graph). Such a result is treated as non-constant, so nothing is folded
 *     through it either.
 * A mutating node that reads a constant ends folding: constants evaluated before it read the
 * attribute's value as it was, but after it any constant could alias what was written, so the
 * rest of the graph is left alone (Inductor instead requires mutations to be removed first).
 *
 * C-native choices: attributes whose get_attr nodes the pass erased stay registered on the
 * module (a graph module has no delattr here); Inductor deletes them. An operator that fails
 * on its constant inputs fails the pass with its error (the graph would fail when run). */
#ifndef CFX_IR_PASSES_FOLD_H
#define CFX_IR_PASSES_FOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "ir/graph_module.h"

/* Default size limit: a folded result has at most this many elements. */
#define CFX_FOLD_DEFAULT_MAX_NUMEL ((int64_t)1 << 16)

typedef struct cfx_fold_options {
    int64_t max_numel;      /* 0: CFX_FOLD_DEFAULT_MAX_NUMEL; negative: no limit */
    bool fold_constructors; /* fold calls without tensor inputs too (default false) */
} cfx_fold_options;

/* ctx: a cfx_fold_options, or NULL for the defaults. CFX_OK (and *changed: some node was
 * replaced) or an error status with the error recorded; changed may be NULL. */
CFX_API int cfx_pass_fold(cfx_graph_module *gm, void *ctx, bool *changed);

#endif
