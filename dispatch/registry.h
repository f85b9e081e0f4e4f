/* registry.h - internal interface between operator.c, dispatcher.c, library.c, fallbacks.c.
 *
 * Not a public header: libraries (library.h) are the only way users register things. Here are
 * the pieces c10 splits between OperatorEntry (one op's kernels and table), Dispatcher (the
 * name -> op map, namespaces, backend fallbacks) and RegistrationHandleRAII (what a Library
 * holds to undo a registration). Every function here must be called with the registry lock
 * held (cfx_registry_lock), except where noted. */
#ifndef CFX_REGISTRY_H
#define CFX_REGISTRY_H

#include "dispatch/boxing.h"
#include "dispatch/operator_internal.h"

/* One registration of a kernel for one key of one op (c10's AnnotatedKernel plus the handle
 * that removes it). `kernel` is what the dispatch table copies. */
struct cfx_kernel_entry {
    cfx_kernel kernel;
    struct cfx_kernel_entry *next; /* the next older registration for the same key */
    cfx_op *op;
    cfx_dispatch_key key;          /* where it is stored: CompositeImplicitAutograd for catch-all */
    bool catch_all;
    char *debug;                   /* "registered at FILE:LINE" */
    char *inferred;                /* cfx_adapter_inferred_schema(), for C-function kernels */
    cfx_adapter *adapter;          /* boxed entry of a C-function kernel, once the schema is known */
};

/* --- operator.c: one op's state ------------------------------------------------------------ */
cfx_op *cfx_opentry_new(const char *qualified_name); /* table = backend fallbacks */
void cfx_opentry_free(cfx_op *op);
/* Takes ownership of schema (already namespaced). Builds the boxed adapters of C-function
 * kernels registered before the def; fails (nothing changed) if one cannot be built. */
int cfx_opentry_register_schema(cfx_op *op, cfx_schema *schema, const char *debug, int alias_analysis,
                                bool alias_is_default, cfx_tag_set tags);
void cfx_opentry_deregister_schema(cfx_op *op);
/* has_key false = catch-all. Exactly one of boxed / unboxed / fallthrough, except that an
 * unboxed kernel may bring its own boxed entry (then no libffi adapter is built). */
cfx_kernel_entry *cfx_opentry_register_kernel(cfx_op *op, bool has_key, cfx_dispatch_key key,
                                              cfx_boxed_fn boxed, void *ctx, cfx_fnptr unboxed,
                                              bool fallthrough, const char *debug);
void cfx_opentry_deregister_kernel(cfx_kernel_entry *e);
/* A backend fallback for this runtime key changed: recompute what depends on it. */
void cfx_opentry_update_fallback(cfx_op *op, cfx_dispatch_key key);

/* --- dispatcher.c: the registry ------------------------------------------------------------ */
void cfx_registry_lock(void);   /* recursive: a warning handler may look ops up */
void cfx_registry_unlock(void);
cfx_op *cfx_registry_find_or_create(const char *qualified_name);
/* Drops the entry if nothing references it any more (c10's Dispatcher::cleanup). */
void cfx_registry_cleanup(cfx_op *op);
int cfx_registry_claim_namespace(const char *ns, const char *debug);
void cfx_registry_release_namespace(const char *ns);
int cfx_registry_register_fallback(cfx_dispatch_key runtime_key, cfx_boxed_fn fn, void *ctx,
                                   const char *debug);
void cfx_registry_deregister_fallback(cfx_dispatch_key runtime_key);

/* The boxed body of every fallthrough kernel: never meant to run (records c10's error). */
int cfx_fallthrough_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

/* --- fallbacks.c ---------------------------------------------------------------------------- */
/* Registers cfx's dispatcher-wide default fallbacks; called once from cfx_dispatcher_init. */
void cfx_fallbacks_register_defaults(void);
/* aten::_print and 2.13's pre-registered effects (effects.c). */
void cfx_effects_init(void);

#endif
