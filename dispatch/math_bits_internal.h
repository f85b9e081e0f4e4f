/* math_bits_internal.h - the fallback shared by the tensor "math bits" (dispatch/kernels/math_bits.c):
 * the conj bit (Conjugate key, conj.c) and the neg bit (Negative key, neg_view.c), as 2.13's
 * MathOpFallback serves both ConjugateFallback.cpp and NegateFallback.cpp. */
#ifndef CFX_MATH_BITS_INTERNAL_H
#define CFX_MATH_BITS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/keys.h"
#include "dispatch/library.h"
#include "dispatch/tensor.h"

typedef struct cfx_math_bit {
    cfx_dispatch_key key; /* the bit is this functionality key in a tensor's key set */
    const char *name;     /* "conjugate", "negation": MathOpFallback's op_name, in its error texts */
    /* the ops registered as fallthroughs on the key (names without "aten::"): they handle the
     * bit themselves and run below the key unchanged */
    const char *const *passthrough;
    size_t n_passthrough;
} cfx_math_bit;

/* t carries the bit (its key is in t's key set) */
static inline bool cfx_math_bit_set(const cfx_math_bit *b, const cfx_tensor *t)
{
    return t && (t->keys.repr & CFX_KEYS_FUNCTIONALITY_BIT(b->key)) != 0;
}

/* self.alias() with the bit of key flipped (_conj, _neg_view: the bit is set or cleared on a
 * view of the same data) */
cfx_tensor *cfx_math_bit_flipped_view(cfx_tensor *self, cfx_dispatch_key key);
/* resolve_conj / resolve_neg: self when it does not carry the bit, else its clone through the
 * dispatcher (clone materialises the bit: cfx_cpu_copy) */
cfx_tensor *cfx_math_bit_resolve(cfx_tensor *self, cfx_dispatch_key key);

/* MathOpFallback::fallback_impl for bit b: views and passthrough ops go below the key as they
 * are; any other op sees clones of its arguments with the bit (clone materialises it), and
 * a mutated argument with the bit gets the result copied back. */
int cfx_math_bit_fallback(const cfx_math_bit *b, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

#endif
