/* functional_internal.h - what the functionalization kernel (functionalize.c) shares with the
 * functional tensor (functional_tensor.c), the view inverses (functional_views.c), the mode
 * (functional_mode.c) and the crossref check (crossref.c). Not a public header. */
#ifndef CFX_FUNCTIONAL_INTERNAL_H
#define CFX_FUNCTIONAL_INTERNAL_H

#include <stdatomic.h>

#include "dispatch/functional.h"
#include "dispatch/keys.h"
#include "dispatch/operator.h"
#include "dispatch/tensor_ext.h"

/* One view op applied to a base: the op and its arguments after self (deep copies; tensors
 * retained). Shared by reference count between wrappers and queued updates (ViewMeta). */
typedef struct cfx_fview {
    int refcount;
    const cfx_op *op;
    cfx_value *args; /* args[0] unused (self) */
    int n_args;
} cfx_fview;

/* A binding owner id (tensor_ext.h) taken on first use and kept in *slot, race-free: the
 * functional wrappers' state and the token marks each have one. */
static inline uint64_t cfx_lazy_binding_owner(atomic_uint_fast64_t *slot)
{
    uint64_t v = atomic_load_explicit(slot, memory_order_acquire);
    if (!v) {
        uint_fast64_t fresh = cfx_binding_owner_new(), expected = 0;
        atomic_compare_exchange_strong(slot, &expected, fresh);
        v = atomic_load_explicit(slot, memory_order_acquire);
    }
    return v;
}

/* at::AutoDispatchSkipFunctionalize: Functionalize excluded for the guard's extent. */
void cfx_functional_skip_begin(cfx_key_guard *g);

/* A new view meta for op called with stack[0..n) (stack[0] = self); NULL + error on OOM. */
cfx_fview *cfx_fview_new(const cfx_op *op, const cfx_value *stack, int n);
void cfx_fview_release(cfx_fview *v);
/* forward_fn: op(base, *args), run below functionalization. NULL + error on failure. */
cfx_tensor *cfx_fview_forward(const cfx_fview *v, cfx_tensor *base);
/* reverse_fn (FunctionalInverses.cpp, reapply_views): the base updated with the mutated view;
 * NULL + error for a view op cfx has no inverse for. */
cfx_tensor *cfx_fview_inverse(const cfx_fview *v, cfx_tensor *base, cfx_tensor *mutated);

/* The view wrapper of view_value taken from base by the view v (FunctionalTensorWrapper's view
 * constructor): shares base's storage, appends v to base's views. */
cfx_tensor *cfx_functional_wrap_view(cfx_tensor *view_value, cfx_tensor *base, cfx_fview *v);
/* replace_ + commit_update + sync, what an in-place op's kernel does with its result. */
int cfx_functional_mutate(cfx_tensor *wrapper, cfx_tensor *new_value);

/* The Functionalize key's backend fallback (crossref.c: the crossref check, then the call). */
int cfx_functionalize_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);
/* The plain functionalization of one call, without the crossref check. */
int cfx_functionalize_call_op(const cfx_op *op, cfx_value *stack);

#endif
