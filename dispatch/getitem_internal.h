/* getitem_internal.h - the steps of Python's indexing that x[...] (getitem.c) and
 * x[...] = v (setitem.c) share. op names the caller in error messages. */
#ifndef CFX_GETITEM_INTERNAL_H
#define CFX_GETITEM_INTERNAL_H

#include "dispatch/getitem.h"

/* "step must be greater than zero" unless s->step > 0 */
bool cfx_index_step_ok(const char *op, const cfx_index *s);
/* slice.Tensor(x, dim, start, stop, step) with Python's bounds (None start 0, None stop max) */
cfx_tensor *cfx_index_slice(cfx_tensor *x, int64_t dim, const cfx_index *s);
/* applySelect: Python's 0-dim and bounds checks, then select.int with the raw index */
cfx_tensor *cfx_index_select_checked(const char *op, cfx_tensor *x, int64_t dim, int64_t index, int64_t real_dim);
/* applySlicing for the tuple form: the basic indices applied as views (x itself when none
 * changes it); the tensor indices land in tensors[0..*ntensors) by dim (NULL between them),
 * tensors having room for CFX_MAX_DIMS. NULL with the error recorded. */
cfx_tensor *cfx_index_apply_slicing(const char *op, cfx_tensor *x, const cfx_index *idx, int n,
                                    cfx_tensor **tensors, int *ntensors);

#endif
