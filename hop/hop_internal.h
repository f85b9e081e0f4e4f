/* hop_internal.h - what hop/'s files share (not installed, not exported). */
#ifndef CFX_HOP_INTERNAL_H
#define CFX_HOP_INTERNAL_H

#include "hop/hop.h"

/* Fills a functionalize context for a route with the installed (or default) ops. */
void hop_functionalize_ctx_init(cfx_functionalize_ctx *c, cfx_functionalize_route route, cfx_mode *mode);

/* The functionalize rule of a HOP that is already functional (PyTorch's usual
 * py_functionalize_impl): unwrap the arguments, call the HOP again below functionalization,
 * wrap its results. */
int hop_functionalize_redispatch(cfx_hop *hop, cfx_functionalize_ctx *c, void *ctx, const cfx_value *args, int n,
                                 cfx_value *out);

/* Copies a value tree, mapping each tensor through fn (lists and tuples rebuilt in scope
 * memory). fn returns the new tensor or NULL with an error recorded. */
typedef cfx_tensor *(*hop_tensor_map_fn)(cfx_tensor *t, void *ctx);
int hop_map_tensors(const cfx_value *in, int n, cfx_value *out, hop_tensor_map_fn fn, void *ctx);

/* The arguments of a HOP call as its node's arguments (torchbind.c): tensors and script
 * objects replaced by the nodes pm bound them to, lists and tuples rebuilt (scope memory);
 * NULL + error for an untracked object. */
struct cfx_proxy_mode;
cfx_value *hop_proxy_args(struct cfx_proxy_mode *pm, const cfx_value *args, int n);

/* handle_effects (with_effects.c): op (CFX_V_OP or CFX_V_HOP; name as messages print it)
 * called as with_effects(fm's token for its effect, op, *in) below functionalization, the
 * new token stored in fm, the n_returns results of the op's schema wrapped into outs. */
struct cfx_functional_mode;
int hop_handle_effects(struct cfx_functional_mode *fm, cfx_value op, const char *name, const cfx_value *in, int n_in,
                       int n_returns, cfx_value *outs);

/* A built-in HOP's rules (init.c): NULL rules are not registered; autograd is PyTorch's
 * fallthrough of AutogradCPU or autograd_not_implemented(hop, deferred_error=True). */
typedef enum hop_autograd { HOP_AUTOGRAD_NONE, HOP_AUTOGRAD_FALLTHROUGH, HOP_AUTOGRAD_DEFERRED_ERROR } hop_autograd;
typedef struct hop_rules {
    const char *name;
    bool side_effect;
    cfx_hop_impl_fn dense, proxy, fake; /* CompositeExplicitAutograd, the proxy and fake modes */
    cfx_hop_functionalize_fn functionalize;
    hop_autograd autograd;
} hop_rules;
/* Creates the HOP with its rules; NULL + error if that failed. */
cfx_hop *hop_define(const hop_rules *r);
/* A built-in HOP's public accessor: runs cfx_hop_init, then *slot, or NULL + "NAME could not
 * be created". */
cfx_hop *hop_get(cfx_hop *const *slot, const char *name);

/* Start-up registrations cfx_hop_init runs (init.c), one per file. */
void hop_torchbind_register(void);
void hop_tensor_queue_register(void);
void hop_trace_wrapped_register(void);
void hop_inline_trace_wrapped_register(void);
void hop_with_effects_register(void);
void hop_triton_kernel_wrap_register(void);

/* hop_map_tensors functions of the functionalize API (PythonFunctionalizeAPI's unwrap_tensors:
 * the synced value of a functional tensor; wrap_tensors: a new wrapper), for the rules that do
 * their own unwrapping because the routes' installable ops default to passing values through. */
cfx_tensor *hop_functional_unwrap_one(cfx_tensor *t, void *ctx);
cfx_tensor *hop_functional_wrap_one(cfx_tensor *t, void *ctx);

#endif
