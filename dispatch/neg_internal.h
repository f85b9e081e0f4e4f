/* neg_internal.h - what the library shares about negative views (dispatch/kernels/neg_view.c). */
#ifndef CFX_NEG_INTERNAL_H
#define CFX_NEG_INTERNAL_H

#include "dispatch/library.h"
#include "dispatch/neg.h"

/* The data of a CPU tensor negated in place (cfx_cpu_copy's neg handling); bool data is left
 * as it is (2.13 refuses it: "neg_cpu" not implemented for 'Bool'). */
void cfx_neg_data_inplace(cfx_tensor *t);
/* The Negative key's fallback (a boxed kernel), registered with the default fallbacks
 * (fallbacks.c); the ops that handle the bit pass through it unchanged. */
int cfx_neg_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

#endif
