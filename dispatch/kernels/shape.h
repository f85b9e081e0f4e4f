/* shape.h - helpers shared by the shape, joining and composite kernels (shape.c, join.c,
 * shape_composite.c). Library-internal. */
#ifndef CFX_KERNELS_SHAPE_H
#define CFX_KERNELS_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"

/* false (error recorded) unless l is a list of at most CFX_MAX_DIMS entries. */
bool cfx_shape_list_ok(const char *op, cfx_int_list l);
/* dim_list_to_bitset: mask[d] for each wrapped dim of dims ("dim 0 appears multiple times in
 * the list of dims"); mask has CFX_MAX_DIMS entries. */
bool cfx_shape_dim_mask(const char *op, cfx_int_list dims, int ndim, bool *mask);

#endif
