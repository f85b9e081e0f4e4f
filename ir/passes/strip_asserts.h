/* strip_asserts.h - remove runtime check nodes.
 *
 * Exported and traced graphs carry assertion nodes that compute nothing: aten::_assert_async,
 * aten::_assert_scalar, aten::_assert_tensor_metadata (any operator whose overload packet name
 * starts with `_assert`) and the builtin functions torch._assert and torch._assert_async (any
 * builtin whose name starts with `_assert`). They are impure, so DCE keeps them; this pass
 * erases them, trading the checks for a smaller graph. An assertion node whose result is used
 * by another node is kept (erasing it would break the user). Reports changed when it erased
 * a node. */
#ifndef CFX_IR_PASSES_STRIP_ASSERTS_H
#define CFX_IR_PASSES_STRIP_ASSERTS_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/graph.h"

/* Whether n calls an assertion (the targets above). */
CFX_API bool cfx_node_is_assert(const cfx_node *n);

/* CFX_OK (and *changed, may be NULL) or a negative status with the error recorded. */
CFX_API int cfx_pass_strip_asserts(cfx_graph *g, bool *changed);

#endif
