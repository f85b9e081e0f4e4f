/* tensor_internal.h - what tensor.c needs from tensor_ext.c, and what it offers the rest of
 * the library beyond the public API.
 *
 * tensor.c empties a header's mode state when it makes a tensor and drops it when the tensor
 * dies (a recycled header then starts empty); it never copies it into views or new tensors. */
#ifndef CFX_TENSOR_INTERNAL_H
#define CFX_TENSOR_INTERNAL_H

#include "dispatch/tensor_ext.h"

/* Empties the state of a new header (no mode, no bindings). */
static inline void cfx_tensor_ext_init(struct cfx_tensor_ext *ext)
{
    ext->mode = NULL;
    ext->is_fake = false;
    ext->fake_meta = NULL;
    ext->n_bindings = 0;
    ext->bindings = ext->inline_bindings;
    ext->cap_bindings = CFX_TENSOR_EXT_INLINE_BINDINGS;
}
/* Runs the binding free_fns, frees a grown binding array and releases the mode reference,
 * leaving the state empty. Called by tensor.c when the tensor dies. */
void cfx_tensor_ext_drop(struct cfx_tensor_ext *ext);

/* Gives t new sizes and strides in place (same header, same storage and offset): the
 * in-place view ops (squeeze_, unsqueeze_). false + error only when out of memory. */
bool cfx_tensor_set_geometry(cfx_tensor *t, const int64_t *sizes, const int64_t *strides, int ndim);

/* A new tensor with its own storage of nbytes, the sizes and strides copied from a record
 * of a tensor this library made before with the same dtype and device (the fake cache's
 * entries): they were checked when that tensor was made, and nbytes is its storage size, so
 * nothing is checked again. Autoreleased; NULL + error only when out of memory. */
cfx_tensor *cfx_tensor_new_recorded(const int64_t *sizes, const int64_t *strides, int ndim, cfx_dtype dtype,
                                    cfx_device device, uint64_t nbytes);

#endif
