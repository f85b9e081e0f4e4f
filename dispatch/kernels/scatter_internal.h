/* scatter_internal.h - what the scatter family shares between index.c (scatter.src/.value,
 * gather) and scatter_reduce.c (scatter_add, scatter_reduce.two and their in-place forms):
 * scatter_meta_impl's checks with their C++ and Python texts, the walk over an index tensor,
 * and the offset of an element addressed through it. */
#ifndef CFX_KERNELS_SCATTER_INTERNAL_H
#define CFX_KERNELS_SCATTER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/tensor.h"

/* scatter_meta_impl's checks for op (dim wrapped into *wrapped, index dtype, src dtype, the
 * index no larger than self and src); src NULL for a value. meta: the Python meta texts. */
bool cfx_scatter_check(const char *op, const cfx_tensor *self, int64_t dim, const cfx_tensor *index,
                       const cfx_tensor *src, bool meta, int64_t *wrapped);

/* Walks index in row-major order; fn(ctx, position, value) for every element. false stops. */
typedef bool (*cfx_index_fn)(void *ctx, const int64_t *pos, int64_t v);
bool cfx_index_each(const cfx_tensor *index, cfx_index_fn fn, void *ctx);

/* The storage offset (in elements) of t at pos, with pos[dim] replaced by at (dim -1: none). */
int64_t cfx_index_offset_of(const cfx_tensor *t, const int64_t *pos, int64_t dim, int64_t at);

#endif
