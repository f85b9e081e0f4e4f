/* functional.h - functionalization: functional tensors, the Functionalize key, the functional
 * mode (at::FunctionalTensorWrapper, FunctionalizeFallbackKernel.cpp, torch.func.functionalize
 * and FunctionalTensorMode of PyTorch 2.13).
 *
 * A functional tensor wraps a plain (or fake) tensor, its current VALUE, and carries the
 * Functionalize key, which sits above Python, so every operator on it reaches the
 * functionalization kernel before any mode (proxy, fake) sees the call. That kernel removes
 * mutation and aliasing from what the modes below see:
 *  - an in-place op (`add_.Tensor`, schema `Tensor(a!) self`) runs its functional variant
 *    (`add.Tensor`) on the unwrapped values and REPLACES the wrapper's value with the result;
 *    if the wrapper is a view, the update is queued on the storage shared by all aliases;
 *  - a view op (`view`, `t`, schema `Tensor(a) self -> Tensor(a)`) runs on the unwrapped value
 *    (views are re-applied, remove='mutations') and returns a new wrapper sharing the storage,
 *    remembering the view so it can be replayed from the base;
 *  - before any other use, a wrapper whose storage saw updates is SYNCED: the queued updates
 *    are applied to the base through the inverse views (`view(mutated, base sizes)`, `t`, ...),
 *    and the wrapper's value is regenerated from the new base by replaying its views;
 *  - any other op unwraps (syncing) its arguments, runs below, and wraps its results.
 * So a traced program gets the ops PyTorch 2.13's make_fx(torch.func.functionalize(f)) records,
 * in the same order, with `copy_` back into each mutated input at the end.
 *
 * The functional mode (FUNCTIONAL slot of mode.h) is what turns functionalization on for a
 * thread: while it is set the Functionalize key is in the thread's included set (so factory
 * ops are functionalized too), it holds the effect tokens (effects.h), and calls that reach it
 * through the Python key pass through. cfx_functionalize_begin/end wrap a call as
 * torch.func.functionalize's wrapper does. Everything here needs an open autorelease scope
 * (scope.h; make_fx has one): wrappers and intermediate values live in it. */
#ifndef CFX_FUNCTIONAL_H
#define CFX_FUNCTIONAL_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/mode.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"

/* to_functional_tensor: a new wrapper of value (a plain or fake tensor, not functional), with
 * its own fresh storage. Autoreleased into the current scope. NULL + error on failure. */
CFX_API cfx_tensor *cfx_functional_wrap(cfx_tensor *value);
/* torch._is_functional_tensor. NULL-safe. */
CFX_API bool cfx_tensor_is_functional(const cfx_tensor *t);
/* torch._from_functional_tensor: the wrapper's current value (borrowed; NOT synced), or t
 * itself when t is not functional. */
CFX_API cfx_tensor *cfx_functional_value(const cfx_tensor *t);
/* torch._sync: applies pending updates of t's storage and regenerates t from its base (ops run
 * below functionalization, so a tracer records them). No-op for a plain tensor. */
CFX_API int cfx_functional_sync(cfx_tensor *t);
/* torch._functionalize_has_data_mutation: the storage of t saw an update. */
CFX_API bool cfx_functional_has_data_mutation(const cfx_tensor *t);

/* The functional mode. */
typedef struct cfx_functional_mode cfx_functional_mode;
CFX_API cfx_functional_mode *cfx_functional_mode_new(void);
CFX_API cfx_mode *cfx_functional_mode_base(cfx_functional_mode *m);
CFX_API cfx_functional_mode *cfx_functional_mode_from_base(cfx_mode *m); /* NULL if another kind */
/* The functional mode set on this thread, or NULL. */
CFX_API cfx_functional_mode *cfx_functional_mode_current(void);
/* Effect tokens (effects.h): with tokens on, effectful ops are rewritten through with_effects;
 * without discovery a missing token is an error, with it a fresh token is made. */
CFX_API void cfx_functional_mode_enable_tokens(cfx_functional_mode *m, bool allow_discovery);
CFX_API bool cfx_functional_mode_tokens_on(const cfx_functional_mode *m);
CFX_API bool cfx_functional_mode_allow_token_discovery(const cfx_functional_mode *m);
/* The current token of effect type e (borrowed; NULL if none), and replacing it (retained). */
CFX_API cfx_tensor *cfx_functional_mode_token(const cfx_functional_mode *m, int e);
CFX_API int cfx_functional_mode_set_token(cfx_functional_mode *m, int e, cfx_tensor *token);
/* Drops the creator's reference (the mode must not be set). NULL-safe. */
CFX_API void cfx_functional_mode_free(cfx_functional_mode *m);

/* torch.func.functionalize(f)(*args) around a C call: begin wraps every tensor of args[0..n)
 * in place (keeping the originals), sets a fresh functional mode and includes Functionalize;
 * the caller then runs f on args; end unwraps the returns rets[0..n_rets) in place (synced),
 * syncs the wrapped inputs, turns functionalization off and copies the final value into every
 * input whose storage was mutated (`copy_(input, value)`, recorded by a tracer below), as
 * _propagate_functional_input_mutation does. With ok false (f failed) end only cleans up. */
enum { CFX_FUNCTIONALIZE_MAX_ARGS = 64 };
typedef struct cfx_functionalize_call {
    cfx_functional_mode *mode;
    cfx_value orig[CFX_FUNCTIONALIZE_MAX_ARGS];
    cfx_value wrapped[CFX_FUNCTIONALIZE_MAX_ARGS];
    int n;
    cfx_key_guard keys;
    bool mode_set, keys_set;
} cfx_functionalize_call;
CFX_API int cfx_functionalize_begin(cfx_functionalize_call *c, cfx_value *args, int n);
CFX_API int cfx_functionalize_end(cfx_functionalize_call *c, cfx_value *rets, int n_rets, bool ok);

#endif
