/* value_internal.h - the hook through which ir/ prints node references in values.
 *
 * Not a public header: values (value.h) know nodes only as pointers; ir/graph.c installs the
 * printer when the first graph is made. */
#ifndef CFX_VALUE_INTERNAL_H
#define CFX_VALUE_INTERNAL_H

#include "dispatch/value.h"

/* Node references print through this hook: appends the node's name. */
typedef void (*cfx_node_name_fn)(const struct cfx_node *n, cfx_buf *b);
void cfx_value_set_node_printer(cfx_node_name_fn fn);

#endif
