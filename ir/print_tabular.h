/* print_tabular.h - Graph.print_tabular(): the graph as a table, one row per node.
 *
 * FX prints [n.op, n.name, n.target, n.args, n.kwargs] for every node through the `tabulate`
 * package's default "simple" format with headers opcode, name, target, args, kwargs:
 *
 *     opcode         name    target           args        kwargs
 *     -------------  ------  ---------------  ----------  --------
 *     placeholder    x       x                ()          {}
 *     call_function  add     aten.add.Tensor  (x, x)      {}
 *     output         output  output           (add,)      {}
 *
 * Each column is as wide as its widest cell or its header plus two, cells are left-aligned and
 * stripped of surrounding whitespace, columns are separated by two spaces, and every line is
 * stripped of trailing spaces. Widths count code points (tabulate without `wcwidth`).
 *
 * Cells are Python's str() of each field: an operator prints as its OpOverload
 * (`aten.add.Tensor`), functions of operator, builtins and math as
 * `<built-in function getitem>`, a
 * higher-order operator by its name. C-native choices: other Python functions (torch._assert)
 * print as `<function _assert>` (Python appends " at 0x..." with the object's address); and a
 * column whose every cell reads as a number (placeholders all named `nan`), which tabulate
 * would right-align as floats, stays left-aligned. */
#ifndef CFX_IR_PRINT_TABULAR_H
#define CFX_IR_PRINT_TABULAR_H

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/graph.h"

/* The largest table printed: every row is as long as the widest cell of each column makes it,
 * so a node with a million arguments makes a million rows megabytes long each (terabytes in
 * all, which Python would print too). Such a table is refused rather than filling memory. */
#define CFX_PRINT_TABULAR_MAX_BYTES ((size_t)1 << 32)

/* Appends the table (no trailing newline; Python's print adds one) to b. CFX_OK, CFX_ERR
 * (recorded, nothing appended) when the table would exceed CFX_PRINT_TABULAR_MAX_BYTES, or
 * CFX_ERR_NOMEM (recorded) with b->oom set. Every cell is rendered twice, once to measure and
 * once to write, so no per-cell storage is kept: time and memory are linear in the table's
 * size, itself linear in the graph's as long as no cell is huge. */
CFX_API int cfx_graph_print_tabular(const cfx_graph *g, cfx_buf *b);

#endif
