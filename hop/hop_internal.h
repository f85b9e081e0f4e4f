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

/* Start-up registrations cfx_hop_init runs (torchbind.c), one per file. */
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
