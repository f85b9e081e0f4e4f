/* conj_internal.h - what the library shares about conjugate views (dispatch/kernels/conj.c). */
#ifndef CFX_CONJ_INTERNAL_H
#define CFX_CONJ_INTERNAL_H

#include "dispatch/conj.h"
#include "dispatch/library.h"

/* The data of a CPU complex tensor conjugated in place (cfx_cpu_copy's conj handling). */
void cfx_conj_data_inplace(cfx_tensor *t);
/* The Conjugate key's fallback (a boxed kernel), registered with the default fallbacks
 * (fallbacks.c); the ops that handle the bit pass through it unchanged. */
int cfx_conj_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

#endif
