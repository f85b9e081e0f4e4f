/* interp_internal.h - what the interpreter's files share (not installed, not exported). */
#ifndef CFX_IR_INTERP_INTERNAL_H
#define CFX_IR_INTERP_INTERNAL_H

#include "dispatch/value.h"
#include "ir/target.h"

/* Calls builtin fn on args[0..n) (node values, borrowed; a node with kwargs is refused by the
 * caller). A number or None result lands in *out (nothing to own); getitem's result is the
 * borrowed item, which the caller owns a copy of. CFX_OK or an error recorded. */
int ir_interp_builtin(const cfx_builtin_fn *fn, const cfx_value *args, uint32_t n, cfx_value *out);

/* Python's type name of a value, as TypeError messages show it: "int", "float", "Tensor". */
const char *ir_interp_type_name(cfx_value v);

#endif
