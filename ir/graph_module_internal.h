/* graph_module_internal.h - what hop/ installs into the graph module (not installed). */
#ifndef CFX_IR_GRAPH_MODULE_INTERNAL_H
#define CFX_IR_GRAPH_MODULE_INTERNAL_H

#include "dispatch/value.h"

/* The reference counting of script objects (hop/object.c), installed by cfx_hop_init: a
 * graph module retains its object attributes and releases them when freed. */
void ir_graph_module_set_object_refcount(cfx_object *(*retain)(cfx_object *), void (*release)(cfx_object *));

#endif
