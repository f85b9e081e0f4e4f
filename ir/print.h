/* print.h - the text forms of a graph, byte for byte as PyTorch 2.13 prints them.
 *
 * str(graph): "graph():" and one line per node (format_node), e.g.
 *     %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, %y), kwargs = {})
 * and the forward() source of python_code(root_module) (FX's CodeGen._gen_python_code with its
 * defaults: no annotations, no "# File:" comments), e.g.
 *     def forward(self, x, y):
 *         add = torch.ops.aten.add.Tensor(x, y);  x = y = None
 *         return add
 * Both write into one cfx_buf without printf: names and integers are rendered by hand. As in
 * FX, python_code also frees a value with no users right after it is computed
 * (`_assert = torch._assert(...);  _assert = None`). */
#ifndef CFX_IR_PRINT_H
#define CFX_IR_PRINT_H

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/node.h"

/* str(graph) (no trailing newline). */
CFX_API void cfx_graph_print(const cfx_graph *g, cfx_buf *b);
CFX_API char *cfx_graph_to_string(const cfx_graph *g);     /* malloc'd, NULL on OOM */
/* node.format_node(): one line, no newline. */
CFX_API void cfx_node_format(const cfx_node *n, cfx_buf *b);
/* str(node.target) as format_node shows it: `torch.ops.aten.add.Tensor`, `operator.getitem`. */
CFX_API void cfx_node_print_target(const cfx_node *n, cfx_buf *b);

/* Argument text in FX's three spellings: format_node's _format_arg (nodes `%x`, strings
 * unquoted), Python str() (what `return {args[0]}` shows) and repr() (python_code). */
typedef enum cfx_arg_style {
    CFX_ARG_FX,
    CFX_ARG_STR,
    CFX_ARG_REPR,
} cfx_arg_style;
CFX_API void cfx_ir_print_value(cfx_value v, cfx_arg_style style, cfx_buf *b);
/* Python repr() of a string: quotes chosen as Python does, escapes as Python does. */
CFX_API void cfx_ir_print_py_string(const char *s, size_t len, cfx_buf *b);

/* Graph.python_code(root_module).src. CFX_OK, or a negative status (OOM). */
CFX_API int cfx_graph_python_code(const cfx_graph *g, const char *root_module, cfx_buf *b);
CFX_API char *cfx_graph_python_code_string(const cfx_graph *g, const char *root_module); /* malloc'd */

#endif
