/* lint.h - Graph.lint: is this graph well formed?
 *
 * FX's checks that apply to a graph without an owning module, in FX's order and with its
 * messages (RuntimeError texts of torch/fx/graph.py):
 *   "Node {n} had unknown opcode {op}!"
 *   "Node '{n}' does not belong to this Graph!"
 *   "Argument '{a}' of Node '{n}' does not belong to this Graph, but was used as an argument!
 *    If you are copying nodes from another graph, make sure to use ``arg_transform`` on
 *    node_copy() to remap values\n{graph}"
 *   "Argument '{a}' of Node '{n}' was used before it has been defined! Please check that Nodes
 *    in the graph are topologically ordered\n{graph}"
 *   "Node redefined name {name}!"
 * Returns CFX_OK, or CFX_ERR with the message recorded through cfx_error_set. */
#ifndef CFX_IR_LINT_H
#define CFX_IR_LINT_H

#include "dispatch/export.h"
#include "ir/node.h"

CFX_API int cfx_graph_lint(cfx_graph *g);

#endif
