/* keys.h - dispatch keys and dispatch key sets, as c10 defines them.
 *
 * The enum is PyTorch 2.13's c10::DispatchKey value for value (checked against
 * int(torch._C.DispatchKey.X) by tests/dispatch/test_keys.c), generated from the two lists
 * below exactly as c10 generates it from C10_FORALL_BACKEND_COMPONENTS and
 * C10_FORALL_FUNCTIONALITY_KEYS. Keeping the real order means every printed key set, computed
 * dispatch table and error message reads like PyTorch's.
 *
 * Three kinds of identifiers share the enum:
 *  - functionality keys 0..CFX_KEY_EndOfFunctionalityKeys-1 (lowest priority first);
 *  - runtime per-backend keys (CPU, Meta, AutogradCPU, ...), one block per per-backend
 *    functionality (Dense, Quantized, Sparse, SparseCsr, NestedTensor, AutogradFunctionality);
 *  - alias keys (Autograd, CompositeImplicitAutograd, ...), never in a key set.
 *
 * A cfx_keyset is one uint64: bit (b-1) for backend component b, bit (16 + f - 1) for
 * functionality f. A runtime per-backend key sets two bits (functionality + backend). */
#ifndef CFX_KEYS_H
#define CFX_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/value.h"

/* c10's C10_FORALL_BACKEND_COMPONENTS, in BackendComponent order: X(x, Name, NAME) with the
 * key spelling and cfx_backend's. x is passed through (a prefix, or an expression). */
#define CFX_FOR_EACH_BACKEND(X, x)                                                              \
    X(x, CPU, CPU) X(x, CUDA, CUDA) X(x, HIP, HIP) X(x, XLA, XLA) X(x, MPS, MPS) X(x, IPU, IPU) \
    X(x, XPU, XPU) X(x, HPU, HPU) X(x, VE, VE) X(x, Lazy, LAZY) X(x, MTIA, MTIA)                \
    X(x, MAIA, MAIA) X(x, PrivateUse1, PRIVATEUSE1) X(x, PrivateUse2, PRIVATEUSE2)              \
    X(x, PrivateUse3, PRIVATEUSE3) X(x, Meta, META)

/* c10::DispatchKey's functionality keys 1..46, lowest priority first: F(x, Name) for a plain
 * one, P(x, Name, prefix) for a per-backend one (its runtime keys are <prefix><Backend>; the
 * order of the P entries is C10_FORALL_FUNCTIONALITY_KEYS', so also that of the blocks). */
#define CFX_FOR_EACH_FUNCTIONALITY(F, P, x)                                                    \
    P(x, Dense, ) F(x, FPGA) F(x, Vulkan) F(x, Metal) P(x, Quantized, Quantized)              \
    F(x, CustomRNGKeyId) F(x, MkldnnCPU) P(x, Sparse, Sparse) P(x, SparseCsr, SparseCsr)      \
    P(x, NestedTensor, NestedTensor) F(x, BackendSelect) F(x, Fake) F(x, Python)              \
    F(x, FuncTorchDynamicLayerBackMode) F(x, Functionalize) F(x, Conjugate) F(x, Negative)    \
    F(x, ZeroTensor) F(x, ADInplaceOrView) F(x, AutogradOther)                                \
    P(x, AutogradFunctionality, Autograd) F(x, AutogradNestedTensor) F(x, Tracer)             \
    F(x, AutocastCPU) F(x, AutocastMTIA) F(x, AutocastMAIA) F(x, AutocastXPU)                 \
    F(x, AutocastIPU) F(x, AutocastHPU) F(x, AutocastXLA) F(x, AutocastMPS)                   \
    F(x, AutocastCUDA) F(x, AutocastPrivateUse1) F(x, FuncTorchBatched)                       \
    F(x, BatchedNestedTensor) F(x, FuncTorchVmapMode) F(x, Batched) F(x, VmapMode)            \
    F(x, FuncTorchGradWrapper) F(x, DeferredInit) F(x, PythonTLSSnapshot)                     \
    F(x, FuncTorchDynamicLayerFrontMode) F(x, TESTING_ONLY_GenericWrapper)                    \
    F(x, TESTING_ONLY_GenericMode) F(x, PreDispatch) F(x, PythonDispatcher)

/* The alias keys, in enum order (StartOfAliasKeys..EndOfAliasKeys). */
#define CFX_FOR_EACH_ALIAS(F, x)                                                         \
    F(x, Autograd) F(x, CompositeImplicitAutograd) F(x, FuncTorchBatchedDecomposition)   \
    F(x, CompositeImplicitAutogradNestedTensor) F(x, CompositeExplicitAutograd)          \
    F(x, CompositeExplicitAutogradNonFunctional)

/* An X-macro argument that drops the entries it is given. */
#define CFX_KEYS_IGNORE_(...)

/* Backend components (c10::BackendComponent). */
#define CFX_BACKEND_ENUM_(x, Name, NAME) CFX_BACKEND_##NAME,
typedef enum cfx_backend {
    CFX_BACKEND_INVALID = 0,
    CFX_FOR_EACH_BACKEND(CFX_BACKEND_ENUM_, )
    CFX_NUM_BACKENDS = CFX_BACKEND_META /* 16, EndOfBackendKeys */
} cfx_backend;

#define CFX_KEY_ENUM_(x, Name) CFX_KEY_##Name,
#define CFX_KEY_ENUM_PB_(x, Name, prefix) CFX_KEY_##Name,
#define CFX_KEY_ENUM_RUNTIME_(prefix, Name, NAME) CFX_KEY_##prefix##Name,
#define CFX_KEY_ENUM_BLOCK_(x, Name, prefix)                  \
    CFX_KEY_StartOf##Name##Backends,                          \
    CFX_FOR_EACH_BACKEND(CFX_KEY_ENUM_RUNTIME_, prefix)       \
    CFX_KEY_EndOf##Name##Backends = CFX_KEY_##prefix##Meta,

typedef enum cfx_dispatch_key {
    CFX_KEY_Undefined = 0,
    CFX_FOR_EACH_FUNCTIONALITY(CFX_KEY_ENUM_, CFX_KEY_ENUM_PB_, )
    CFX_KEY_EndOfFunctionalityKeys,
    /* runtime per-backend keys: StartOf<F>Backends, then F x every backend */
    CFX_FOR_EACH_FUNCTIONALITY(CFX_KEYS_IGNORE_, CFX_KEY_ENUM_BLOCK_, )
    CFX_KEY_EndOfRuntimeBackendKeys = CFX_KEY_EndOfAutogradFunctionalityBackends,
    CFX_FOR_EACH_ALIAS(CFX_KEY_ENUM_, )
    CFX_KEY_COUNT /* one past the last alias key */
} cfx_dispatch_key;
#undef CFX_BACKEND_ENUM_
#undef CFX_KEY_ENUM_
#undef CFX_KEY_ENUM_PB_
#undef CFX_KEY_ENUM_RUNTIME_
#undef CFX_KEY_ENUM_BLOCK_

#define CFX_NUM_FUNCTIONALITY_KEYS ((int)CFX_KEY_EndOfFunctionalityKeys) /* 47 */

/* c10's initializeFunctionalityOffsetsAndMasks in closed form, as constant expressions (so
 * callers can name a slot in a static initialiser or a case label): every per-backend
 * functionality below f took num_backends slots instead of one. For a per-backend f this is
 * the slot of its CPU instance. */
#define CFX_KEYS_IS_BELOW_(f, Name, prefix) ((int)(f) > (int)CFX_KEY_##Name) +
#define CFX_KEYS_PER_BACKEND_BELOW(f) (CFX_FOR_EACH_FUNCTIONALITY(CFX_KEYS_IGNORE_, CFX_KEYS_IS_BELOW_, f) 0)
#define CFX_KEYS_FUNCTIONALITY_SLOT(f) ((int)(f) + (CFX_NUM_BACKENDS - 1) * CFX_KEYS_PER_BACKEND_BELOW(f))
/* Runtime table slots: one per functionality, num_backends for each per-backend one. */
#define CFX_NUM_RUNTIME_ENTRIES (CFX_KEYS_FUNCTIONALITY_SLOT(CFX_KEY_EndOfFunctionalityKeys)) /* 137 */

typedef struct cfx_keyset {
    uint64_t repr;
} cfx_keyset;

static inline cfx_keyset cfx_keyset_empty(void) { return (cfx_keyset){0}; }
CFX_API cfx_keyset cfx_keyset_of(cfx_dispatch_key k); /* alias keys and Undefined -> empty */
CFX_API cfx_keyset cfx_keyset_full(void);
/* All bits strictly below k's functionality bit (all backend bits), plus PythonDispatcher. */
CFX_API cfx_keyset cfx_keyset_full_after(cfx_dispatch_key k);
static inline cfx_keyset cfx_keyset_or(cfx_keyset a, cfx_keyset b) { return (cfx_keyset){a.repr | b.repr}; }
static inline cfx_keyset cfx_keyset_and(cfx_keyset a, cfx_keyset b) { return (cfx_keyset){a.repr & b.repr}; }
/* a - b: clears b's bits except backend bits, as c10's operator-. */
static inline cfx_keyset cfx_keyset_minus(cfx_keyset a, cfx_keyset b)
{
    return (cfx_keyset){a.repr & (((1ull << CFX_NUM_BACKENDS) - 1) | ~b.repr)};
}
static inline bool cfx_keyset_is_empty(cfx_keyset a) { return a.repr == 0; }
static inline bool cfx_keyset_eq(cfx_keyset a, cfx_keyset b) { return a.repr == b.repr; }
CFX_API cfx_keyset cfx_keyset_add(cfx_keyset s, cfx_dispatch_key k);
/* Clears only k's functionality bit (backend bits stay), as c10's remove(). */
CFX_API cfx_keyset cfx_keyset_remove(cfx_keyset s, cfx_dispatch_key k);
CFX_API bool cfx_keyset_has(cfx_keyset s, cfx_dispatch_key k);
CFX_API bool cfx_keyset_has_any(cfx_keyset s, cfx_keyset t);

CFX_API cfx_dispatch_key cfx_keyset_highest_functionality(cfx_keyset s); /* Undefined when empty */
CFX_API cfx_backend cfx_keyset_highest_backend(cfx_keyset s);            /* INVALID when none */
/* The runtime key that wins dispatch (Dense + CPU bit -> CPU); Undefined when empty. A
 * per-backend functionality with no backend bit gives its StartOf<F>Backends marker, as c10. */
CFX_API cfx_dispatch_key cfx_keyset_highest_priority(cfx_keyset s);
/* Index into an operator's runtime dispatch table (0..CFX_NUM_RUNTIME_ENTRIES-1). */
CFX_API int cfx_keyset_table_index(cfx_keyset s);
/* Same for a single runtime key; -1 for alias keys. */
CFX_API int cfx_key_table_index(cfx_dispatch_key k);

/* Iteration over the runtime keys of a set, ascending priority: returns the number written. */
CFX_API int cfx_keyset_runtime_keys(cfx_keyset s, cfx_dispatch_key *out, int cap);
/* "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)" into b. */
CFX_API void cfx_keyset_print(cfx_keyset s, cfx_buf *b);

/* Key properties. */
CFX_API const char *cfx_key_name(cfx_dispatch_key k); /* "AutogradCPU", "CompositeExplicitAutograd" */
CFX_API bool cfx_key_parse(const char *name, cfx_dispatch_key *out);
CFX_API bool cfx_key_is_alias(cfx_dispatch_key k);
CFX_API bool cfx_key_is_per_backend_functionality(cfx_dispatch_key k); /* Dense, Quantized, ... */
CFX_API bool cfx_key_is_runtime(cfx_dispatch_key k);                  /* not alias, not a block marker */
CFX_API cfx_dispatch_key cfx_key_to_functionality(cfx_dispatch_key k);  /* AutogradCPU -> AutogradFunctionality */
CFX_API cfx_backend cfx_key_to_backend(cfx_dispatch_key k);             /* AutogradCPU -> CPU */
CFX_API cfx_dispatch_key cfx_key_for_backend(cfx_dispatch_key functionality, cfx_backend b);

/* Alias handling (c10's getRuntimeDispatchKeySet and friends). */
/* Runtime keys an alias (or plain) key covers; writes them ascending; returns count. */
CFX_API int cfx_key_expand(cfx_dispatch_key k, cfx_dispatch_key *out, int cap);
CFX_API bool cfx_key_in_expansion(cfx_dispatch_key alias, cfx_dispatch_key runtime_key);
CFX_API cfx_keyset cfx_keyset_backend_from_autograd(cfx_dispatch_key k); /* getBackendKeySetFromAutograd */
CFX_API cfx_dispatch_key cfx_key_autograd_from_backend(cfx_backend b);   /* CPU -> AutogradCPU */
/* The key set a dense tensor on this backend carries (TensorImpl's constructor): backend +
 * ADInplaceOrView + AutogradX (AutogradOther for HIP and VE) + AutocastX where the backend has
 * an Autocast key (CPU -> AutocastCPU, ...). */
CFX_API cfx_keyset cfx_keyset_for_tensor(cfx_backend b);

/* Thread-local included/excluded sets (c10::impl::LocalDispatchKeySet). Defaults: included =
 * {BackendSelect, ADInplaceOrView}, excluded = every Autocast key (c10's default_excluded_set
 * is its autocast_dispatch_keyset). */
typedef struct cfx_local_keys {
    cfx_keyset included, excluded;
} cfx_local_keys;

/* Bit of a functionality key (not a per-backend runtime key) in a cfx_keyset. */
#define CFX_KEYS_FUNCTIONALITY_BIT(k) (1ull << (CFX_NUM_BACKENDS + (int)(k) - 1))
/* Bit of a backend (CPU, Meta, ...) in a cfx_keyset. */
#define CFX_KEYS_BACKEND_BIT(b) (1ull << ((int)(b) - 1))
/* cfx_keyset_full_after(k) for a functionality key k, as a constant. */
#define CFX_KEYS_FULL_AFTER_FUNCTIONALITY(k) \
    ((cfx_keyset){(CFX_KEYS_FUNCTIONALITY_BIT(k) - 1) | CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_PythonDispatcher)})
#define CFX_KEYS_DEFAULT_INCLUDED                       \
    (CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_BackendSelect) | \
     CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_ADInplaceOrView))
/* The Autocast keys are consecutive functionalities, AutocastCPU .. AutocastPrivateUse1. */
#define CFX_KEYS_DEFAULT_EXCLUDED                                   \
    ((CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_AutocastPrivateUse1) << 1) - \
     CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_AutocastCPU))

/* This thread's sets (a new thread starts with the defaults). */
CFX_API cfx_local_keys cfx_local_keys_get(void);
CFX_API void cfx_local_keys_set(cfx_local_keys k);

/* RAII-style guards: declare, then *_end in reverse order. */
typedef struct cfx_key_guard {
    cfx_local_keys saved;
} cfx_key_guard;
CFX_API void cfx_include_keys_begin(cfx_key_guard *g, cfx_keyset s);
CFX_API void cfx_exclude_keys_begin(cfx_key_guard *g, cfx_keyset s);
CFX_API void cfx_key_guard_end(cfx_key_guard *g); /* restores exactly what was saved */

#endif
