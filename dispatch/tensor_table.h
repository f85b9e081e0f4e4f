/* tensor_table.h - named tensors in insertion order, retained: the state behind both an
 * nn.Module's parameters (tracer/module.h) and a GraphModule's attributes (ir/graph_module.h).
 *
 * A zero-initialised table is empty and ready. The table holds one reference on each tensor
 * and a copy of each name; lookups by name and by tensor address are hashed. */
#ifndef CFX_DISPATCH_TENSOR_TABLE_H
#define CFX_DISPATCH_TENSOR_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/tensor.h"

typedef struct cfx_tensor_table_entry {
    char *name;
    cfx_tensor *t;
} cfx_tensor_table_entry;

/* Fields are private to tensor_table.c; embed the struct by value. */
typedef struct cfx_tensor_table {
    cfx_tensor_table_entry *entries;
    int n, cap;
    int *by_name; /* entry position + 1, 0 = empty */
    int *by_ptr;
    int idx_cap;  /* power of two, shared by both indexes */
} cfx_tensor_table;

/* Releases every tensor and frees all storage; the table is empty again. NULL-safe. */
void cfx_tensor_table_clear(cfx_tensor_table *tt);
/* Registers (retains) t under name, or replaces (retain new, release old) the tensor of an
 * existing entry, which keeps its position. Returns CFX_OK or CFX_ERR_NOMEM (error set). */
int cfx_tensor_table_put(cfx_tensor_table *tt, const char *name, cfx_tensor *t);
/* The position of name / of the first entry holding t (pointer identity), or -1. */
int cfx_tensor_table_find(const cfx_tensor_table *tt, const char *name);
int cfx_tensor_table_find_tensor(const cfx_tensor_table *tt, const cfx_tensor *t);
/* Entries in registration order; out-of-range i (or a NULL table) gives NULL / 0. */
int cfx_tensor_table_count(const cfx_tensor_table *tt);
const char *cfx_tensor_table_name_at(const cfx_tensor_table *tt, int i);
cfx_tensor *cfx_tensor_table_tensor_at(const cfx_tensor_table *tt, int i);
/* Whether some name is path[0..len) or starts with it followed by '.' (a submodule path).
 * Linear in the number of entries. */
bool cfx_tensor_table_has_prefix(const cfx_tensor_table *tt, const char *path, size_t len);

#endif
