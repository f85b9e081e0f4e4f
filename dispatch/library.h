/* library.h - registration blocks (torch::Library): DEF, IMPL, FRAGMENT.
 *
 * A library groups registrations and owns them: freeing it deregisters everything it
 * registered (kernels come off, older ones become active again; a DEF's schemas go away and
 * its namespace can be claimed again). PyTorch's rules and messages:
 *  - DEF claims a namespace; a second DEF of it fails ("Only a single TORCH_LIBRARY can be used
 *    to register the namespace ..."). FRAGMENT defines without claiming. IMPL only impls and
 *    registers fallbacks (namespace "_" = every namespace).
 *  - Defining the same name and overload twice fails; impl before def is allowed and goes live
 *    when the def arrives; registering a second kernel for the same op and key keeps the old
 *    one inactive, and the first such override in the process (not on Meta or MTIA) warns
 *    ("Warning only once for all operators, ... Overriding a previously registered kernel ...").
 *
 *     cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "myns");
 *     cfx_library_def(lib, "scale(Tensor x, float s) -> Tensor");
 *     CFX_IMPL(lib, "scale", CFX_KEY_CPU, my_scale_cpu);  // cfx_tensor *my_scale_cpu(cfx_tensor *, double)
 */
#ifndef CFX_LIBRARY_H
#define CFX_LIBRARY_H

#include "dispatch/export.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel.h"

typedef enum cfx_library_kind { CFX_LIB_DEF, CFX_LIB_IMPL, CFX_LIB_FRAGMENT } cfx_library_kind;

typedef struct cfx_library cfx_library;

/* key = CFX_KEY_Undefined for no block key. NULL + error on a rule violation. */
CFX_API cfx_library *cfx_library_new(cfx_library_kind kind, const char *ns, cfx_dispatch_key key,
                                     const char *file, int line);
CFX_API void cfx_library_free(cfx_library *lib); /* deregisters everything; NULL-safe */

#define CFX_LIBRARY(kind, ns) cfx_library_new((kind), (ns), CFX_KEY_Undefined, __FILE__, __LINE__)
#define CFX_LIBRARY_IMPL(ns, key) cfx_library_new(CFX_LIB_IMPL, (ns), (key), __FILE__, __LINE__)

/* def(schema): the namespace is filled in or checked. alias kind: pass -1 for "not given"
 * (reports CONSERVATIVE with " (default)" in dumps, like def_legacy). */
CFX_API int cfx_library_def_at(cfx_library *lib, const char *schema, int alias_analysis,
                               const char *file, int line);
#define cfx_library_def(lib, schema) cfx_library_def_at((lib), (schema), CFX_ALIAS_FROM_SCHEMA, __FILE__, __LINE__)
/* def(schema, tags): the operator carries tags (tags.h), as torch.library.define(..., tags=). */
CFX_API int cfx_library_def_tagged_at(cfx_library *lib, const char *schema, int alias_analysis, cfx_tag_set tags,
                                      const char *file, int line);
#define cfx_library_def_tagged(lib, schema, tags) \
    cfx_library_def_tagged_at((lib), (schema), CFX_ALIAS_FROM_SCHEMA, (tags), __FILE__, __LINE__)

/* impl(name, fn, key): key CFX_KEY_Undefined = the block's key, else catch-all
 * (CompositeImplicitAutograd). Unboxed kernels get their libffi adapter when the schema is
 * known (now, or when the def arrives). */
CFX_API int cfx_library_impl_at(cfx_library *lib, const char *name, cfx_dispatch_key key, cfx_fnptr fn,
                                const char *file, int line);
CFX_API int cfx_library_impl_boxed_at(cfx_library *lib, const char *name, cfx_dispatch_key key,
                                      cfx_boxed_fn fn, void *ctx, const char *file, int line);
/* impl(name, fn, key) for a C function that brings its own boxed entry, compiled for its
 * signature (the built-in kernels: ops.h generates one per operator of ops.def, as c10's
 * make_boxed_from_unboxed_functor does). boxed(ctx, ...) must call unboxed with the schema's
 * C signature; it replaces the libffi adapter, while unboxed stays the typed wrappers' fast
 * path and the dump shows the inferred schema and "[ boxed unboxed ]" as for CFX_IMPL. */
CFX_API int cfx_library_impl_boxed_unboxed_at(cfx_library *lib, const char *name, cfx_dispatch_key key,
                                              cfx_fnptr unboxed, cfx_boxed_fn boxed, void *ctx,
                                              const char *file, int line);
CFX_API int cfx_library_impl_fallthrough_at(cfx_library *lib, const char *name, cfx_dispatch_key key,
                                            const char *file, int line);
#define CFX_IMPL(lib, name, key, fn) cfx_library_impl_at((lib), (name), (key), (cfx_fnptr)(fn), __FILE__, __LINE__)
#define CFX_IMPL_BOXED(lib, name, key, fn, ctx) cfx_library_impl_boxed_at((lib), (name), (key), (fn), (ctx), __FILE__, __LINE__)

/* fallback(): only in an IMPL library with namespace "_"; an alias key registers on every
 * runtime key it covers. fn == NULL registers a fallthrough fallback. */
CFX_API int cfx_library_fallback_at(cfx_library *lib, cfx_dispatch_key key, cfx_boxed_fn fn, void *ctx,
                                    const char *file, int line);
#define CFX_FALLBACK(lib, key, fn, ctx) cfx_library_fallback_at((lib), (key), (fn), (ctx), __FILE__, __LINE__)

#endif
