/* graph.h - the FX-style graph: an ordered list of nodes with one name space and one arena.
 *
 * This is torch.fx.Graph. Nodes are created at the insertion point (the end of the graph
 * unless moved with cfx_graph_inserting_before/after), named by FX's rules (names.h), and
 * erased only when nothing uses them. Iteration is over live nodes and tolerates mutation.
 * Everything a graph holds lives in its arena and dies with cfx_graph_free. No function here
 * recurses on anything user-sized: nested argument values are walked with explicit stacks.
 *
 * Errors follow cfx's convention: a failing call records the first error (dispatch/error.h,
 * with PyTorch's message where FX has one) and returns NULL or a negative status. A NULL
 * graph or NULL node argument returns NULL/CFX_ERR without a new message, so builder code can
 * be written straight through and checked once.
 *
 * This header is the umbrella of the IR: it includes node, target, names, meta, print, lint
 * and side-effect headers. */
#ifndef CFX_IR_GRAPH_H
#define CFX_IR_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/error.h"
#include "dispatch/value.h"
#include "ir/names.h"
#include "ir/node.h"
#include "ir/target.h"
#include "ir/meta.h"
#include "ir/print.h"
#include "ir/lint.h"
#include "ir/side_effects.h"

CFX_API cfx_graph *cfx_graph_new(void);
CFX_API void cfx_graph_free(cfx_graph *g);

/* ---- building ----------------------------------------------------------------------------- */

/* Graph.create_node(op, target, args, kwargs, name). `name` is the naming candidate; NULL
 * derives it from the target as FX's _target_to_str does, except that an operator target
 * uses its overload packet name as make_fx names its nodes (`sum`, not `sum_dim_int_list`).
 * call_function needs an OP or FN target, every other op a STRING target (FX's ValueError
 * otherwise). Args and kwargs are deep-copied into the graph. Every creator below is this
 * function with some arguments fixed. */
CFX_API cfx_node *cfx_graph_create_node(cfx_graph *g, cfx_node_op op, cfx_target target, const cfx_value *args,
                                        uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs, const char *name);

/* Graph.placeholder(name) / placeholder(name, default_value=v). */
CFX_API cfx_node *cfx_graph_placeholder(cfx_graph *g, const char *name);
CFX_API cfx_node *cfx_graph_placeholder_default(cfx_graph *g, const char *name, cfx_value default_value);
/* Graph.get_attr(qualified_name). */
CFX_API cfx_node *cfx_graph_get_attr(cfx_graph *g, const char *qualified_name);
/* Graph.call_function with an operator / builtin function target (name NULL = default). */
CFX_API cfx_node *cfx_graph_call_op(cfx_graph *g, const cfx_op *op, const cfx_value *args, uint32_t n_args,
                                    const cfx_kwarg *kwargs, uint32_t n_kwargs);
CFX_API cfx_node *cfx_graph_call_fn(cfx_graph *g, const cfx_builtin_fn *fn, const cfx_value *args,
                                    uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs);
CFX_API cfx_node *cfx_graph_call_method(cfx_graph *g, const char *method, const cfx_value *args,
                                        uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs);
CFX_API cfx_node *cfx_graph_call_module(cfx_graph *g, const char *module_path, const cfx_value *args,
                                        uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs);
/* Graph.output(result): target "output", args (result,). */
CFX_API cfx_node *cfx_graph_output(cfx_graph *g, cfx_value result);

/* Graph.node_copy(node, arg_transform): a copy of `node` (possibly from another graph) in g,
 * named from node's name, meta copied shallowly; every node reference in its args/kwargs is
 * passed through `map` (NULL = kept as is). */
typedef cfx_node *(*cfx_node_map_fn)(cfx_node *n, void *ctx);
CFX_API cfx_node *cfx_graph_node_copy(cfx_graph *g, const cfx_node *node, cfx_node_map_fn map, void *ctx);

/* ---- insertion point ----------------------------------------------------------------------- */

/* Where create_node puts new nodes: just before `at` (FX's n.prepend) or just after it (n.append:
 * consecutive creations then come out in reverse order, as in FX). */
typedef struct cfx_insert_point {
    cfx_node *at;
    bool after;
} cfx_insert_point;

/* inserting_before(n) / inserting_after(n); n NULL = start / end of graph, as in FX (before
 * None = after the sentinel; after None = before the sentinel = append). Each returns the
 * previous insertion point, to be restored with cfx_graph_set_insert_point (FX's `with`). */
CFX_API cfx_insert_point cfx_graph_inserting_before(cfx_graph *g, cfx_node *n);
CFX_API cfx_insert_point cfx_graph_inserting_after(cfx_graph *g, cfx_node *n);
CFX_API void cfx_graph_set_insert_point(cfx_graph *g, cfx_insert_point p);

/* ---- erasing ------------------------------------------------------------------------------ */

/* Graph.erase_node: refuses a node that still has users (RuntimeError text:
 * "Tried to erase Node x but it still had 2 users in the graph: {add: None, mul: None}!").
 * The node is unlinked, tombstoned, and its node arguments are replaced by None so that its
 * producers drop it from their users. Erasing an erased node warns and does nothing. */
CFX_API int cfx_graph_erase_node(cfx_graph *g, cfx_node *n);

/* ---- walking ------------------------------------------------------------------------------ */

/* First / last live node, or NULL. With cfx_node_next / cfx_node_prev:
 *   for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) ...
 * is safe when the body erases n or inserts nodes (inserted after n: visited). */
CFX_API cfx_node *cfx_graph_first(const cfx_graph *g);
CFX_API cfx_node *cfx_graph_last(const cfx_graph *g);
CFX_API uint32_t cfx_graph_num_nodes(const cfx_graph *g);     /* live nodes (len(graph.nodes)) */
CFX_API uint32_t cfx_graph_num_created(const cfx_graph *g);   /* nodes ever created: seq bound */
/* The output node (the last node, if it is an output), else NULL. */
CFX_API cfx_node *cfx_graph_output_node(const cfx_graph *g);
/* The live node named s, or NULL (linear scan). */
CFX_API cfx_node *cfx_graph_find_node(const cfx_graph *g, const char *name);

/* The graph's name space (node names) and arena, for layers that build on the IR. */
CFX_API cfx_names *cfx_graph_names(cfx_graph *g);
CFX_API cfx_arena *cfx_graph_arena(cfx_graph *g);
/* Bytes the graph obtained from malloc for its arena. */
CFX_API size_t cfx_graph_arena_bytes(const cfx_graph *g);

/* call_module purity: FX asks the owning module's submodule for `_is_impure`. The owner of a
 * graph (a tracer, a module table) answers through this hook; without one, call_module nodes
 * are pure (a module without `_is_impure`). */
typedef bool (*cfx_module_impure_fn)(const cfx_graph *g, const char *module_path, void *ctx);
CFX_API void cfx_graph_set_module_impure_fn(cfx_graph *g, cfx_module_impure_fn fn, void *ctx);

#endif
