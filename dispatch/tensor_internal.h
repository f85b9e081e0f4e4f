/* tensor_internal.h - tensor.c's general paths, for the tests that hold its fast paths to
 * them; not public.
 *
 * cfx_tensor_new_strided and cfx_tensor_free_unreferenced each take a fast path for the usual
 * case (a small meta tensor; the death of a fake or meta tensor with nothing to undo) and hand
 * everything else to a general path. These run the general path whatever the input, so a test
 * can make the same tensor both ways and compare. */
#ifndef CFX_TENSOR_INTERNAL_H
#define CFX_TENSOR_INTERNAL_H

#include "dispatch/tensor.h"

/* cfx_tensor_new_strided with every check and no fast path (same results and errors). */
cfx_tensor *cfx_tensor_new_strided_general(const int64_t *sizes, const int64_t *strides, int ndim,
                                           cfx_dtype dtype, cfx_device device);
/* cfx_tensor_free_unreferenced without its fast path. */
void cfx_tensor_free_unreferenced_general(cfx_tensor *t);

#endif
