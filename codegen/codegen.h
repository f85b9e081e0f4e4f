/* codegen.h - a graph leaves cfx as source text: Graphviz DOT, a Python module, C.
 *
 * DOT (dot.c) draws the graph for people: one box per node with its name as the Graphviz id,
 * its target and the shape and dtype of its `val`; inputs, attributes, the output and
 * side-effecting nodes each look different. Python (python.c) is a standalone module whose
 * `forward` is FX's python_code, runnable under PyTorch with the weights cfx saved beside the
 * JSON. C (c.c) is one function per graph calling cfx's typed operator entry points, to be
 * compiled against the installed library.
 *
 * All emitters append to a cfx_buf and return CFX_OK or a negative status with the error
 * recorded (a graph they cannot express: a call_module node, an operator without a C form). */
#ifndef CFX_CODEGEN_H
#define CFX_CODEGEN_H

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/graph.h"
#include "ir/graph_module.h"

/* `digraph "name" { ... }` (name NULL: "graph"). Deterministic: node ids are node names, nodes
 * and edges in graph order; linear in the graph's size. */
CFX_API int cfx_graph_to_dot(const cfx_graph *g, const char *name, cfx_buf *b);

/* A Python module (PyTorch 2.13) with one torch.nn.Module class named after gm, whose forward
 * is FX's python_code of gm's graph and whose constructor loads gm's attributes from the
 * safetensors file weights_file (resolved against the module's own directory, unless
 * absolute; NULL: the class must be given the file). call_module and call_method nodes cannot
 * be generated (cfx graphs have no Python objects behind them): error. */
CFX_API int cfx_graph_module_to_python(const cfx_graph_module *gm, const char *weights_file, cfx_buf *b);

/* C source of one function running g through cfx's operator API (no interpreter):
 *     int fn_name(const cfx_graph_module *self, const cfx_value *args, int n_args, cfx_value *out);
 * args in placeholder order, get_attr tensors from self, *out as cfx_graph_module_run gives it
 * (in the caller's innermost scope). Built-in operators are called through their typed entry
 * points cfx_op_<id>, others boxed by name (cfx_op_call). Refused, naming the node: call_module
 * and call_method nodes, builtin functions other than getitem on a tuple result. */
CFX_API int cfx_graph_to_c(const cfx_graph *g, const char *fn_name, cfx_buf *b);

#endif
