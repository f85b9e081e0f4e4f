/* verify.h - a graph checked as the loader and the `verify` pass check it.
 *
 * cfx_graph_lint (FX's Graph.lint), then what a graph must also satisfy to print, run and be
 * saved as FX would: at most one output node, and it is the last node; every call_function
 * of an operator binds to the operator's schema (no keyword repeating a positional, every
 * argument without a default given; extra positional arguments and unknown keywords are not
 * refused yet), with the texts of
 * c10's FunctionSchema::checkAndNormalizeInputs. Returns CFX_OK, or CFX_ERR with the message
 * recorded. */
#ifndef CFX_IR_VERIFY_H
#define CFX_IR_VERIFY_H

#include "dispatch/export.h"
#include "ir/node.h"

CFX_API int cfx_graph_verify(cfx_graph *g);
/* The per-node part alone: n's call binds to its operator's schema (other nodes: CFX_OK). */
CFX_API int cfx_node_verify_schema(const cfx_node *n);

#endif
