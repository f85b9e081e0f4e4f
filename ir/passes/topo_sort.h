/* topo_sort.h - stable topological sort of a graph's nodes.
 *
 * Kahn's algorithm with one tie-break: nodes are emitted in their current order whenever
 * their inputs allow it, and a node that had to wait is emitted right after its last input.
 * A graph that is already topologically ordered is left exactly as it is (changed = false).
 * O(nodes + uses), no recursion. A cycle (a node that is, through its arguments, its own
 * input) is an error naming a node on it; the graph is then left unchanged. */
#ifndef CFX_IR_PASSES_TOPO_SORT_H
#define CFX_IR_PASSES_TOPO_SORT_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/graph.h"

/* CFX_OK (and *changed, may be NULL) or a negative status with the error recorded. */
CFX_API int cfx_pass_topo_sort(cfx_graph *g, bool *changed);

#endif
