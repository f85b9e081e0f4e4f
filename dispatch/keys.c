/* keys.c - dispatch keys and key sets, as c10/core/DispatchKey{,Set}.{h,cpp} define them.
 *
 * A key set is one uint64: the low 14 bits are backend components (CPU, CUDA, ..., Meta, ...),
 * the bits above are functionalities in priority order. A per-backend runtime key such as
 * AutogradCPU is not a bit of its own but the pair (AutogradFunctionality bit, CPU bit), which
 * is why a set cannot say "dense CPU and autograd CUDA" and why removing a key clears only its
 * functionality bit: the backend bit may be shared with other keys of the tensor.
 *
 * Everything observable follows PyTorch 1.13 byte for byte, checked against it by
 * tests/dispatch/test_keys.c: toString names (the StartOf<F>Backends markers print as
 * "<F>Unknown", with Dense's prefix empty, so "Unknown"), the subset of names
 * parseDispatchKey accepts (not every runtime key: "AutogradHIP" or "QuantizedMeta" are
 * refused), the printing order (ascending priority; a per-backend functionality bit without a
 * backend bit prints nothing), FULL_AFTER, the alias expansions and their odd corners
 * (isIncludedInAlias says yes for alias keys themselves, because their key set is empty). The
 * one deliberate difference is PreDispatch, a 2.x key kept at its 2.x place below
 * PythonDispatcher, so PythonDispatcher's slot and everything numbered after it moves up by one.
 *
 * The hot queries (highest key, table slot) are inline in keys.h and read the per-functionality
 * table below; the table is built by constant expressions, so it exists before any constructor
 * that registers kernels runs. */
#include <string.h>

#include "dispatch/keys.h"

#define FBIT CFX_KEYS_FUNCTIONALITY_BIT
#define BACKEND_MASK ((1ull << CFX_NUM_BACKENDS) - 1)
#define BACKEND_BIT(b) (1ull << ((int)(b) - 1))
#define PER_BACKEND_FUNCTIONALITIES                                                   \
    ((1ull << CFX_KEY_Dense) | (1ull << CFX_KEY_Quantized) | (1ull << CFX_KEY_Sparse) | \
     (1ull << CFX_KEY_NestedTensor) | (1ull << CFX_KEY_AutogradFunctionality))
#define IS_PER_BACKEND(f) ((unsigned)(f) < 64 && ((PER_BACKEND_FUNCTIONALITIES >> (f)) & 1))

_Static_assert(CFX_NUM_FUNCTIONALITY_KEYS == 42, "1.13's 41 functionality keys + PreDispatch");
_Static_assert(CFX_NUM_RUNTIME_ENTRIES == 107, "42 + 5 * 13 runtime slots");
_Static_assert(CFX_NUM_BACKENDS + CFX_NUM_FUNCTIONALITY_KEYS <= 64, "a key set is one uint64");
_Static_assert(CFX_KEY_StartOfDenseBackends + CFX_NUM_BACKENDS == CFX_KEY_EndOfDenseBackends &&
                   CFX_KEY_StartOfAutogradFunctionalityBackends + CFX_NUM_BACKENDS ==
                       CFX_KEY_EndOfAutogradFunctionalityBackends,
               "per-backend blocks list the backends in BackendComponent order");

/* ---------------------------------------------------------------- per-functionality table */

/* c10's initializeFunctionalityOffsetsAndMasks, in closed form: every per-backend functionality
 * below f took num_backends slots instead of one. */
#define PB_BELOW(f)                                                                  \
    (((f) > CFX_KEY_Dense) + ((f) > CFX_KEY_Quantized) + ((f) > CFX_KEY_Sparse) + \
     ((f) > CFX_KEY_NestedTensor) + ((f) > CFX_KEY_AutogradFunctionality))
#define FIRST_RUNTIME_KEY(f)                                                       \
    ((f) == CFX_KEY_Dense ? CFX_KEY_StartOfDenseBackends                             \
     : (f) == CFX_KEY_Quantized ? CFX_KEY_StartOfQuantizedBackends                   \
     : (f) == CFX_KEY_Sparse ? CFX_KEY_StartOfSparseBackends                         \
     : (f) == CFX_KEY_NestedTensor ? CFX_KEY_StartOfNestedTensorBackends             \
     : (f) == CFX_KEY_AutogradFunctionality ? CFX_KEY_StartOfAutogradFunctionalityBackends \
                                            : (f))
#define INFO(f) [f] = {(f) + (CFX_NUM_BACKENDS - 1) * PB_BELOW(f), \
                       IS_PER_BACKEND(f) ? BACKEND_MASK : 0, FIRST_RUNTIME_KEY(f)}

const cfx_keys_functionality_info cfx_keys_functionality_infos[64] = {
    INFO(0),  INFO(1),  INFO(2),  INFO(3),  INFO(4),  INFO(5),  INFO(6),  INFO(7),  INFO(8),
    INFO(9),  INFO(10), INFO(11), INFO(12), INFO(13), INFO(14), INFO(15), INFO(16), INFO(17),
    INFO(18), INFO(19), INFO(20), INFO(21), INFO(22), INFO(23), INFO(24), INFO(25), INFO(26),
    INFO(27), INFO(28), INFO(29), INFO(30), INFO(31), INFO(32), INFO(33), INFO(34), INFO(35),
    INFO(36), INFO(37), INFO(38), INFO(39), INFO(40), INFO(41),
    /* EndOfFunctionalityKeys' bit (only cfx_keyset_of(EndOfFunctionalityKeys) has it) is its
     * own highest key, as in c10, whose table lookup would read past the end; here slot 0.
     * Higher bits belong to no key and stay zero. */
    [CFX_KEY_EndOfFunctionalityKeys] = {0, 0, CFX_KEY_EndOfFunctionalityKeys},
};
_Static_assert(CFX_NUM_FUNCTIONALITY_KEYS - 1 + (CFX_NUM_BACKENDS - 1) *
                       PB_BELOW(CFX_NUM_FUNCTIONALITY_KEYS - 1) ==
                   CFX_NUM_RUNTIME_ENTRIES - 1,
               "the highest functionality (PythonDispatcher) takes the last slot");

/* ---------------------------------------------------------------- names */

#define NAME(k) [CFX_KEY_##k] = #k
#define PB_NAME(p, b) [CFX_KEY_##p##b] = #p #b
#define PB_NAMES(p)                                                                      \
    PB_NAME(p, CPU), PB_NAME(p, CUDA), PB_NAME(p, HIP), PB_NAME(p, XLA), PB_NAME(p, MPS), \
        PB_NAME(p, IPU), PB_NAME(p, XPU), PB_NAME(p, HPU), PB_NAME(p, VE), PB_NAME(p, Lazy), \
        PB_NAME(p, Meta), PB_NAME(p, PrivateUse1), PB_NAME(p, PrivateUse2), PB_NAME(p, PrivateUse3)

static const char *const names[CFX_KEY_COUNT] = {
    NAME(Undefined), NAME(Dense), NAME(FPGA), NAME(ORT), NAME(Vulkan), NAME(Metal),
    NAME(Quantized), NAME(CustomRNGKeyId), NAME(MkldnnCPU), NAME(Sparse), NAME(SparseCsrCPU),
    NAME(SparseCsrCUDA), NAME(NestedTensor), NAME(BackendSelect), NAME(Python), NAME(Fake),
    NAME(FuncTorchDynamicLayerBackMode), NAME(Functionalize), NAME(Named), NAME(Conjugate),
    NAME(Negative), NAME(ZeroTensor), NAME(ADInplaceOrView), NAME(AutogradOther),
    NAME(AutogradFunctionality), NAME(AutogradNestedTensor), NAME(Tracer), NAME(AutocastCPU),
    NAME(AutocastXPU), NAME(AutocastCUDA), NAME(FuncTorchBatched), NAME(FuncTorchVmapMode),
    NAME(Batched), NAME(VmapMode), NAME(FuncTorchGradWrapper), NAME(DeferredInit),
    NAME(PythonTLSSnapshot), NAME(FuncTorchDynamicLayerFrontMode),
    NAME(TESTING_ONLY_GenericWrapper), NAME(TESTING_ONLY_GenericMode), NAME(PreDispatch),
    NAME(PythonDispatcher),
    /* c10's toString falls through to "<functionality prefix><backend>" with an invalid
     * backend printing as "Unknown", and an invalid functionality too. */
    [CFX_KEY_EndOfFunctionalityKeys] = "UnknownUnknown",
    [CFX_KEY_StartOfDenseBackends] = "Unknown",
    [CFX_KEY_StartOfQuantizedBackends] = "QuantizedUnknown",
    [CFX_KEY_StartOfSparseBackends] = "SparseUnknown",
    [CFX_KEY_StartOfNestedTensorBackends] = "NestedTensorUnknown",
    [CFX_KEY_StartOfAutogradFunctionalityBackends] = "AutogradUnknown",
    PB_NAMES(), PB_NAMES(Quantized), PB_NAMES(Sparse), PB_NAMES(NestedTensor), PB_NAMES(Autograd),
    NAME(Autograd), NAME(CompositeImplicitAutograd), NAME(CompositeImplicitAutogradNestedTensor),
    NAME(CompositeExplicitAutograd), NAME(CompositeExplicitAutogradNonFunctional),
};

const char *cfx_key_name(cfx_dispatch_key k)
{
    if ((unsigned)k >= CFX_KEY_COUNT || !names[k])
        return "UnknownUnknown";
    return names[k];
}

/* The names c10::parseDispatchKey knows in 1.13 (its key_map), plus 2.x's PreDispatch. Not
 * every runtime key is there; "CatchAll", "DefaultBackend" and "Autocast" are refused too. */
static const cfx_dispatch_key parseable[] = {
    CFX_KEY_Undefined, CFX_KEY_Dense, CFX_KEY_FPGA, CFX_KEY_ORT, CFX_KEY_Vulkan, CFX_KEY_Metal,
    CFX_KEY_Quantized, CFX_KEY_CustomRNGKeyId, CFX_KEY_MkldnnCPU, CFX_KEY_Sparse,
    CFX_KEY_SparseCsrCPU, CFX_KEY_SparseCsrCUDA, CFX_KEY_NestedTensor, CFX_KEY_BackendSelect,
    CFX_KEY_Python, CFX_KEY_Fake, CFX_KEY_FuncTorchDynamicLayerBackMode, CFX_KEY_Functionalize,
    CFX_KEY_Named, CFX_KEY_Conjugate, CFX_KEY_Negative, CFX_KEY_ZeroTensor,
    CFX_KEY_ADInplaceOrView, CFX_KEY_AutogradOther, CFX_KEY_AutogradFunctionality,
    CFX_KEY_AutogradNestedTensor, CFX_KEY_Tracer, CFX_KEY_AutocastCPU, CFX_KEY_AutocastXPU,
    CFX_KEY_AutocastCUDA, CFX_KEY_FuncTorchBatched, CFX_KEY_FuncTorchVmapMode, CFX_KEY_Batched,
    CFX_KEY_VmapMode, CFX_KEY_FuncTorchGradWrapper, CFX_KEY_DeferredInit,
    CFX_KEY_PythonTLSSnapshot, CFX_KEY_FuncTorchDynamicLayerFrontMode,
    CFX_KEY_TESTING_ONLY_GenericWrapper, CFX_KEY_TESTING_ONLY_GenericMode, CFX_KEY_PreDispatch,
    CFX_KEY_PythonDispatcher,
    CFX_KEY_CPU, CFX_KEY_CUDA, CFX_KEY_HIP, CFX_KEY_XLA, CFX_KEY_MPS, CFX_KEY_IPU, CFX_KEY_XPU,
    CFX_KEY_HPU, CFX_KEY_VE, CFX_KEY_Lazy, CFX_KEY_Meta, CFX_KEY_PrivateUse1,
    CFX_KEY_PrivateUse2, CFX_KEY_PrivateUse3,
    CFX_KEY_QuantizedCPU, CFX_KEY_QuantizedCUDA, CFX_KEY_QuantizedXPU,
    CFX_KEY_SparseCPU, CFX_KEY_SparseCUDA, CFX_KEY_SparseHIP, CFX_KEY_SparseXPU, CFX_KEY_SparseVE,
    CFX_KEY_NestedTensorCPU, CFX_KEY_NestedTensorCUDA,
    CFX_KEY_AutogradCPU, CFX_KEY_AutogradCUDA, CFX_KEY_AutogradXLA, CFX_KEY_AutogradMPS,
    CFX_KEY_AutogradIPU, CFX_KEY_AutogradXPU, CFX_KEY_AutogradHPU, CFX_KEY_AutogradLazy,
    CFX_KEY_AutogradMeta, CFX_KEY_AutogradPrivateUse1, CFX_KEY_AutogradPrivateUse2,
    CFX_KEY_AutogradPrivateUse3,
    CFX_KEY_Autograd, CFX_KEY_CompositeImplicitAutograd,
    CFX_KEY_CompositeImplicitAutogradNestedTensor, CFX_KEY_CompositeExplicitAutograd,
    CFX_KEY_CompositeExplicitAutogradNonFunctional,
};

bool cfx_key_parse(const char *name, cfx_dispatch_key *out)
{
    if (!name)
        return false;
    for (size_t i = 0; i < sizeof parseable / sizeof parseable[0]; i++) {
        if (strcmp(names[parseable[i]], name) == 0) {
            if (out)
                *out = parseable[i];
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------- key properties */

bool cfx_key_is_alias(cfx_dispatch_key k)
{
    return k >= CFX_KEY_Autograd && k <= CFX_KEY_CompositeExplicitAutogradNonFunctional;
}

bool cfx_key_is_per_backend_functionality(cfx_dispatch_key k) { return IS_PER_BACKEND(k); }

cfx_dispatch_key cfx_key_to_functionality(cfx_dispatch_key k)
{
    if ((unsigned)k > CFX_KEY_EndOfRuntimeBackendKeys)
        return CFX_KEY_Undefined; /* alias keys */
    if (k <= CFX_KEY_EndOfFunctionalityKeys)
        return k;
    if (k <= CFX_KEY_EndOfDenseBackends)
        return CFX_KEY_Dense;
    if (k <= CFX_KEY_EndOfQuantizedBackends)
        return CFX_KEY_Quantized;
    if (k <= CFX_KEY_EndOfSparseBackends)
        return CFX_KEY_Sparse;
    if (k <= CFX_KEY_EndOfNestedTensorBackends)
        return CFX_KEY_NestedTensor;
    return CFX_KEY_AutogradFunctionality;
}

cfx_backend cfx_key_to_backend(cfx_dispatch_key k)
{
    cfx_dispatch_key f = cfx_key_to_functionality(k);
    if (k <= CFX_KEY_EndOfFunctionalityKeys || !IS_PER_BACKEND(f))
        return CFX_BACKEND_INVALID;
    /* the StartOf<F>Backends marker itself maps to InvalidBit (0) */
    return (cfx_backend)(k - cfx_keys_functionality_infos[f].base);
}

cfx_dispatch_key cfx_key_for_backend(cfx_dispatch_key functionality, cfx_backend b)
{
    if (!IS_PER_BACKEND(functionality) || (unsigned)b > CFX_NUM_BACKENDS)
        return CFX_KEY_Undefined;
    return (cfx_dispatch_key)(cfx_keys_functionality_infos[functionality].base + b);
}

/* Keys with a slot of their own: Undefined, the functionalities that are not per-backend, and
 * the per-backend instances. Dense or AutogradFunctionality alone are "building blocks" in
 * c10's words, the StartOf markers and EndOfFunctionalityKeys are not keys at all. */
bool cfx_key_is_runtime(cfx_dispatch_key k)
{
    if ((unsigned)k < CFX_KEY_EndOfFunctionalityKeys)
        return !IS_PER_BACKEND(k);
    if (k > CFX_KEY_EndOfFunctionalityKeys && k <= CFX_KEY_EndOfRuntimeBackendKeys)
        return cfx_key_to_backend(k) != CFX_BACKEND_INVALID;
    return false;
}

/* ---------------------------------------------------------------- key sets */

/* DispatchKeySet(DispatchKey): Undefined and alias keys are the empty set. EndOfFunctionalityKeys
 * gets a bit above FULL like in c10; iteration never yields it (c10's iterator stops there). */
cfx_keyset cfx_keyset_of(cfx_dispatch_key k)
{
    if (k == CFX_KEY_Undefined || (unsigned)k > CFX_KEY_EndOfRuntimeBackendKeys)
        return cfx_keyset_empty();
    if (k <= CFX_KEY_EndOfFunctionalityKeys)
        return (cfx_keyset){FBIT(k)};
    cfx_backend b = cfx_key_to_backend(k);
    return (cfx_keyset){FBIT(cfx_key_to_functionality(k)) |
                        (b == CFX_BACKEND_INVALID ? 0 : BACKEND_BIT(b))};
}

cfx_keyset cfx_keyset_full(void)
{
    return (cfx_keyset){(1ull << (CFX_NUM_BACKENDS + CFX_NUM_FUNCTIONALITY_KEYS - 1)) - 1};
}

/* Everything strictly below k's functionality bit. Undefined and alias keys (functionality
 * Undefined) keep c10's arithmetic: the low 13 backend bits only, so PrivateUse3's bit is out. */
cfx_keyset cfx_keyset_full_after(cfx_dispatch_key k)
{
    int f = cfx_key_to_functionality(k);
    uint64_t below = (1ull << (CFX_NUM_BACKENDS + f - 1)) - 1;
    return (cfx_keyset){below | FBIT(CFX_KEY_PythonDispatcher)};
}

cfx_keyset cfx_keyset_add(cfx_keyset s, cfx_dispatch_key k)
{
    return cfx_keyset_or(s, cfx_keyset_of(k));
}

cfx_keyset cfx_keyset_remove(cfx_keyset s, cfx_dispatch_key k)
{
    return (cfx_keyset){s.repr & ~(cfx_keyset_of(k).repr & ~BACKEND_MASK)};
}

/* All bits of k: AutogradCPU needs both the AutogradFunctionality and the CPU bit. As in
 * c10's release builds, a key whose set is empty (Undefined, alias keys) is in every set. */
bool cfx_keyset_has(cfx_keyset s, cfx_dispatch_key k)
{
    uint64_t r = cfx_keyset_of(k).repr;
    return (s.repr & r) == r;
}

bool cfx_keyset_has_any(cfx_keyset s, cfx_keyset t) { return (s.repr & t.repr) != 0; }

int cfx_key_table_index(cfx_dispatch_key k)
{
    if ((unsigned)k > CFX_KEY_EndOfRuntimeBackendKeys || k == CFX_KEY_EndOfFunctionalityKeys)
        return -1;
    return cfx_keyset_table_index(cfx_keyset_of(k));
}

/* c10's DispatchKeySet::iterator: functionality bits lowest first; a per-backend one yields one
 * key per backend bit (lowest first) and nothing when there is none. Bits at or above
 * EndOfFunctionalityKeys end the walk, as they do in c10. */
int cfx_keyset_runtime_keys(cfx_keyset s, cfx_dispatch_key *out, int cap)
{
    int n = 0;
    uint64_t backends = s.repr & BACKEND_MASK;
    uint64_t fbits = s.repr >> CFX_NUM_BACKENDS;
    fbits &= (1ull << (CFX_NUM_FUNCTIONALITY_KEYS - 1)) - 1;
    while (fbits && n < cap) {
        int f = __builtin_ctzll(fbits) + 1;
        fbits &= fbits - 1;
        if (!IS_PER_BACKEND(f)) {
            out[n++] = (cfx_dispatch_key)f;
            continue;
        }
        int base = cfx_keys_functionality_infos[f].base;
        for (uint64_t bb = backends; bb && n < cap; bb &= bb - 1)
            out[n++] = (cfx_dispatch_key)(base + __builtin_ctzll(bb) + 1);
    }
    return n;
}

void cfx_keyset_print(cfx_keyset s, cfx_buf *b)
{
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    int n = cfx_keyset_runtime_keys(s, keys, CFX_NUM_RUNTIME_ENTRIES);
    cfx_buf_puts(b, "DispatchKeySet(");
    for (int i = 0; i < n; i++) {
        if (i)
            cfx_buf_puts(b, ", ");
        cfx_buf_puts(b, names[keys[i]]);
    }
    cfx_buf_putc(b, ')');
}

/* ---------------------------------------------------------------- alias keys */

/* The constant key sets of DispatchKeySet.{h,cpp} (1.13). */
#define AUTOGRAD_KS                                                    \
    (FBIT(CFX_KEY_AutogradFunctionality) | FBIT(CFX_KEY_AutogradOther) | \
     FBIT(CFX_KEY_AutogradNestedTensor))
/* Backends without an Autograd key of their own; with every backend bit, because registration
 * walks the runtime keys of this set (QuantizedCPU, SparseCUDA, ...). */
#define AUTOGRADOTHER_BACKENDS                                                              \
    (FBIT(CFX_KEY_FPGA) | FBIT(CFX_KEY_ORT) | FBIT(CFX_KEY_Vulkan) | FBIT(CFX_KEY_Metal) |  \
     FBIT(CFX_KEY_SparseCsrCPU) | FBIT(CFX_KEY_SparseCsrCUDA) | FBIT(CFX_KEY_CustomRNGKeyId) | \
     FBIT(CFX_KEY_MkldnnCPU) | FBIT(CFX_KEY_Sparse) | FBIT(CFX_KEY_Quantized) | BACKEND_MASK)
/* CompositeExplicitAutograd: every backend, but not NestedTensor (structured kernels that use
 * the DefaultBackend key do not work for it). */
#define BACKEND_KS (AUTOGRADOTHER_BACKENDS | FBIT(CFX_KEY_Dense))
/* CompositeExplicitAutogradNonFunctional: not for the functional backends (XLA, Lazy) nor
 * Sparse. */
#define NON_FUNCTIONAL_BACKEND_KS                                            \
    (BACKEND_KS & ~(FBIT(CFX_KEY_Sparse) | BACKEND_BIT(CFX_BACKEND_XLA) | \
                    BACKEND_BIT(CFX_BACKEND_LAZY)))
/* CompositeImplicitAutograd: backends, NestedTensor (implicit decompositions do work there) and
 * autograd. 1.13 does not have 2.x's Functionalize in it. */
#define MATH_KS (BACKEND_KS | AUTOGRAD_KS | FBIT(CFX_KEY_NestedTensor))
#define NESTED_KS (FBIT(CFX_KEY_AutogradNestedTensor) | FBIT(CFX_KEY_NestedTensor) | BACKEND_MASK)

/* getRuntimeDispatchKeySet */
static cfx_keyset runtime_set(cfx_dispatch_key k)
{
    switch (k) {
    case CFX_KEY_Autograd:
        return (cfx_keyset){AUTOGRAD_KS | BACKEND_MASK};
    case CFX_KEY_CompositeImplicitAutograd:
        return (cfx_keyset){MATH_KS};
    case CFX_KEY_CompositeImplicitAutogradNestedTensor:
        return (cfx_keyset){NESTED_KS};
    case CFX_KEY_CompositeExplicitAutograd:
        return (cfx_keyset){BACKEND_KS};
    case CFX_KEY_CompositeExplicitAutogradNonFunctional:
        return (cfx_keyset){NON_FUNCTIONAL_BACKEND_KS};
    default:
        return cfx_keyset_of(k);
    }
}

/* Undefined is not representable in a set: registrations to the Composite* aliases also fill
 * the Undefined slot, which the caller (the operator table) does itself. */
int cfx_key_expand(cfx_dispatch_key k, cfx_dispatch_key *out, int cap)
{
    if (k == CFX_KEY_Undefined)
        return 0;
    return cfx_keyset_runtime_keys(runtime_set(k), out, cap);
}

/* isIncludedInAlias(k, alias) = runtimeDispatchKeySetHas(alias, k), 1.13's version. */
bool cfx_key_in_expansion(cfx_dispatch_key alias, cfx_dispatch_key k)
{
    if (k == CFX_KEY_Undefined || alias == CFX_KEY_Undefined)
        return false;
    switch (alias) {
    case CFX_KEY_Autograd:
        return cfx_keyset_has((cfx_keyset){AUTOGRAD_KS}, cfx_key_to_functionality(k));
    case CFX_KEY_CompositeImplicitAutograd:
        return cfx_keyset_has((cfx_keyset){MATH_KS}, k);
    case CFX_KEY_CompositeImplicitAutogradNestedTensor:
        return cfx_keyset_has((cfx_keyset){NESTED_KS}, k);
    case CFX_KEY_CompositeExplicitAutograd:
        return k != CFX_KEY_NestedTensor && cfx_keyset_has((cfx_keyset){BACKEND_KS}, k);
    case CFX_KEY_CompositeExplicitAutogradNonFunctional:
        return k != CFX_KEY_NestedTensor &&
               cfx_keyset_has((cfx_keyset){NON_FUNCTIONAL_BACKEND_KS}, k);
    default:
        return alias == k;
    }
}

/* getBackendKeySetFromAutograd. HIP and VE have no Autograd key of their own in 1.13 (their
 * tensors carry AutogradOther), so AutogradHIP and AutogradVE map to the empty set. */
cfx_keyset cfx_keyset_backend_from_autograd(cfx_dispatch_key k)
{
    switch (k) {
    case CFX_KEY_AutogradOther:
        return (cfx_keyset){AUTOGRADOTHER_BACKENDS};
    case CFX_KEY_AutogradNestedTensor:
        return (cfx_keyset){FBIT(CFX_KEY_NestedTensor) | BACKEND_MASK};
    case CFX_KEY_AutogradHIP:
    case CFX_KEY_AutogradVE:
        return cfx_keyset_empty();
    default:
        if (k > CFX_KEY_StartOfAutogradFunctionalityBackends &&
            k <= CFX_KEY_EndOfAutogradFunctionalityBackends)
            return cfx_keyset_of(cfx_key_for_backend(CFX_KEY_Dense, cfx_key_to_backend(k)));
        return cfx_keyset_empty();
    }
}

/* getAutogradRelatedKeySetFromBackend(b).highestPriorityTypeId(): HIP, VE and anything
 * unknown fall back to AutogradOther. */
cfx_dispatch_key cfx_key_autograd_from_backend(cfx_backend b)
{
    if (b == CFX_BACKEND_INVALID || (unsigned)b > CFX_NUM_BACKENDS || b == CFX_BACKEND_HIP ||
        b == CFX_BACKEND_VE)
        return CFX_KEY_AutogradOther;
    return cfx_key_for_backend(CFX_KEY_AutogradFunctionality, b);
}

/* TensorImpl's constructor: the backend key, getAutocastRelatedKeySetFromBackend and
 * getAutogradRelatedKeySetFromBackend (ADInplaceOrView + the Autograd key). */
cfx_keyset cfx_keyset_for_tensor(cfx_backend b)
{
    if (b == CFX_BACKEND_INVALID || (unsigned)b > CFX_NUM_BACKENDS)
        return cfx_keyset_empty();
    uint64_t r = cfx_keyset_of(cfx_key_for_backend(CFX_KEY_Dense, b)).repr |
                 FBIT(CFX_KEY_ADInplaceOrView) |
                 cfx_keyset_of(cfx_key_autograd_from_backend(b)).repr;
    switch (b) {
    case CFX_BACKEND_CPU:
        r |= FBIT(CFX_KEY_AutocastCPU);
        break;
    case CFX_BACKEND_XPU:
        r |= FBIT(CFX_KEY_AutocastXPU);
        break;
    case CFX_BACKEND_CUDA:
    case CFX_BACKEND_XLA:
        r |= FBIT(CFX_KEY_AutocastCUDA);
        break;
    default:
        break;
    }
    return (cfx_keyset){r};
}
