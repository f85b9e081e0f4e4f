/* wrapped_internal.h - where wrapped numbers (cfx_num, tensor.h) turn into numbers and back.
 *
 * PyTorch passes a Python number given for a Tensor as a wrapped-number tensor
 * (toIValue: scalar_to_tensor + set_wrapped_number), and hands a wrapped number to a
 * __torch_dispatch__ mode as the number again (toPyObject). So a mode sees `2`, records the
 * literal, and when it calls the op again the number becomes a wrapped tensor once more. cfx
 * does the same at the same two boundaries: the Python key's fallback (numbers out) and every
 * boxed entry into the dispatcher that may carry numbers (cfx_op_call, the modes' redispatch:
 * numbers in). */
#ifndef CFX_WRAPPED_INTERNAL_H
#define CFX_WRAPPED_INTERNAL_H

#include "dispatch/operator.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"

/* The wrapped numbers made for one call (few: one per Tensor argument given as a number). */
typedef struct cfx_wrapped_batch {
    int n;
    cfx_tensor *made[8];
} cfx_wrapped_batch;

/* Whether the op's Tensor arguments take numbers (torch._C._should_allow_numbers_as_tensors:
 * add, sub, mul, div and their variants, to, _to_copy, copy_, ...); the others refuse them. */
bool cfx_allows_numbers_as_tensors(const cfx_schema *s);
/* For an op that allows it, replaces each number given for a Tensor (or Tensor?) argument of stack[0..n_args) by a new
 * wrapped number, recorded in b. CFX_OK, or an error (out of memory, more than 8). The op's
 * facts (whether it allows numbers, which arguments are Tensors) are its own, computed once. */
int cfx_wrap_numbers(const cfx_op *op, cfx_value *stack, cfx_wrapped_batch *b);
/* After the call: drops b's tensors, except one the call returned (among stack[0..n_returns)),
 * which becomes the caller's like any new result. (Inline: most calls made none.) */
void cfx_wrapped_batch_drop(cfx_wrapped_batch *b, const cfx_value *stack, int n_returns);
static inline void cfx_wrap_numbers_end(cfx_wrapped_batch *b, const cfx_value *stack, int n_returns)
{
    if (b->n > 0)
        cfx_wrapped_batch_drop(b, stack, n_returns);
}
/* A fresh dispatch of stack (all n_args) whose Tensor arguments may hold numbers, as a mode's
 * call below itself passes them: wrapped for the call (cfx_wrap_numbers), dropped after. */
int cfx_dispatch_wrapping_numbers(const cfx_op *op, cfx_value *stack);
/* Replaces each wrapped-number tensor argument of stack[0..n_args) by its number, as a mode
 * receives it. Nothing to look for while no wrapped number is alive (the usual case). */
void cfx_unwrap_numbers(const cfx_schema *s, cfx_value *stack);
/* The count of live wrapped numbers that cfx_unwrap_numbers consults: a tensor becomes a
 * wrapped number only through cfx_wrapped_number_mark, and tensor.c reports each one's death
 * (every thread's, hence atomic). */
void cfx_wrapped_number_mark(cfx_tensor *t);
void cfx_wrapped_number_died(void);
/* A new wrapped number (owned by the open scope if there is one, else the caller's reference):
 * what a kernel of a Scalar overload makes of its Scalar (wrapped_scalar_tensor). NULL + error
 * if v is no number. */
cfx_tensor *cfx_wrapped_number_new(cfx_value v);
/* In a kernel of a Scalar overload: returns call, made with w_ = the Scalar num wrapped
 * (wrapped_scalar_tensor), and drops w_ afterwards unless the call returned it (as
 * cfx_kernel_discard: released only when no scope owns it, since an open scope took it). */
#define CFX_WITH_WRAPPED(num, call)                                                             \
    do {                                                                                        \
        cfx_tensor *w_ = cfx_wrapped_number_new(num);                                           \
        if (!w_)                                                                                \
            return NULL;                                                                        \
        cfx_tensor *r_ = (call);                                                                \
        if (r_ != w_ && cfx_scope_depth() == 0)                                                 \
            cfx_tensor_release(w_);                                                             \
        return r_;                                                                              \
    } while (0)
/* The number a wrapped-number tensor holds. */
cfx_value cfx_wrapped_number_value(const cfx_tensor *t);

#endif
