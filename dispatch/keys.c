/* keys.c - dispatch keys and key sets, as c10/core/DispatchKey{,Set}.{h,cpp} define them.
 *
 * A key set is one uint64: the low 16 bits are backend components (CPU, CUDA, ..., Meta), the
 * bits above are functionalities in priority order. A per-backend runtime key such as
 * AutogradCPU is not a bit of its own but the pair (AutogradFunctionality bit, CPU bit), which
 * is why a set cannot say "dense CPU and autograd CUDA" and why removing a key clears only its
 * functionality bit: the backend bit may be shared with other keys of the tensor.
 *
 * Everything observable follows PyTorch 2.13 byte for byte, checked against it by
 * tests/dispatch/test_keys.c: toString names (the StartOf<F>Backends markers print as
 * "<F prefix>Undefined", Dense's prefix being empty, and EndOfFunctionalityKeys as
 * "UnknownUnknown"), the subset of names parseDispatchKey accepts (not every runtime key:
 * "AutogradHIP" or "QuantizedMeta" are refused), the printing order (ascending priority; a
 * per-backend functionality bit without a backend bit prints nothing), FULL_AFTER, the alias
 * expansions and their odd corners (isIncludedInAlias says yes for alias keys themselves,
 * because their key set is empty; AutogradMTIA has no backend set although MTIA tensors carry
 * it).
 *
 * The names, the enum and the per-functionality table all come from keys.h's X-macro lists,
 * so they cannot drift apart. The hot queries (highest key, table slot) are inline in keys.h
 * and read the per-functionality table below; the table is built by constant expressions, so
 * it exists before any constructor that registers kernels runs. */
#include <string.h>

#include "dispatch/keys_internal.h"

#define FBIT CFX_KEYS_FUNCTIONALITY_BIT
#define BACKEND_MASK ((1ull << CFX_NUM_BACKENDS) - 1)
#define BACKEND_BIT CFX_KEYS_BACKEND_BIT

#define PB_MASK_(x, Name, prefix) (1ull << CFX_KEY_##Name) |
#define PER_BACKEND_FUNCTIONALITIES (CFX_FOR_EACH_FUNCTIONALITY(CFX_KEYS_IGNORE_, PB_MASK_, ) 0)
#define IS_PER_BACKEND(f) ((unsigned)(f) < 64 && ((PER_BACKEND_FUNCTIONALITIES >> (f)) & 1))

/* 2.13's numbering, as torch._C.DispatchKey reports it. */
_Static_assert(CFX_NUM_BACKENDS == 16, "CPU .. Meta");
_Static_assert(CFX_NUM_FUNCTIONALITY_KEYS == 47, "Undefined + 46 functionality keys");
_Static_assert(CFX_KEY_Python == 13 && CFX_KEY_PythonTLSSnapshot == 41 && CFX_KEY_PythonDispatcher == 46,
               "functionality numbering");
_Static_assert(CFX_KEY_CPU == 49 && CFX_KEY_Meta == 64 && CFX_KEY_AutogradCPU == 134 &&
                   CFX_KEY_AutogradMeta == 149 && CFX_KEY_EndOfRuntimeBackendKeys == 149,
               "runtime key numbering");
_Static_assert(CFX_KEY_Autograd == 150 && CFX_KEY_CompositeExplicitAutogradNonFunctional == 155 &&
                   CFX_KEY_COUNT == 156,
               "alias key numbering");
_Static_assert(CFX_NUM_RUNTIME_ENTRIES == 137, "47 + 6 * 15 runtime slots");
_Static_assert(CFX_NUM_BACKENDS + CFX_NUM_FUNCTIONALITY_KEYS <= 64, "a key set is one uint64");
_Static_assert(CFX_KEY_AutocastPrivateUse1 - CFX_KEY_AutocastCPU == 9,
               "the ten Autocast keys are consecutive (CFX_KEYS_DEFAULT_EXCLUDED)");

/* ---------------------------------------------------------------- per-functionality table */

/* One entry per functionality, written out by number: the entries use the X-macro lists
 * themselves (IS_PER_BACKEND, the slot), and an X-macro cannot expand inside its own
 * expansion. The static asserts below tie the count to the enum. */
#define FIRST_RUNTIME_KEY_(f, Name, prefix) (f) == CFX_KEY_##Name ? CFX_KEY_StartOf##Name##Backends :
#define FIRST_RUNTIME_KEY(f) (CFX_FOR_EACH_FUNCTIONALITY(CFX_KEYS_IGNORE_, FIRST_RUNTIME_KEY_, f)(f))

#define INFO(f) [f] = {CFX_KEYS_FUNCTIONALITY_SLOT(f), IS_PER_BACKEND(f) ? BACKEND_MASK : 0, FIRST_RUNTIME_KEY(f)}

const cfx_keys_functionality_info cfx_keys_infos[64] = {
    INFO(0),  INFO(1),  INFO(2),  INFO(3),  INFO(4),  INFO(5),  INFO(6),  INFO(7),  INFO(8),
    INFO(9),  INFO(10), INFO(11), INFO(12), INFO(13), INFO(14), INFO(15), INFO(16), INFO(17),
    INFO(18), INFO(19), INFO(20), INFO(21), INFO(22), INFO(23), INFO(24), INFO(25), INFO(26),
    INFO(27), INFO(28), INFO(29), INFO(30), INFO(31), INFO(32), INFO(33), INFO(34), INFO(35),
    INFO(36), INFO(37), INFO(38), INFO(39), INFO(40), INFO(41), INFO(42), INFO(43), INFO(44),
    INFO(45), INFO(46),
    /* EndOfFunctionalityKeys' bit (only cfx_keyset_of(EndOfFunctionalityKeys) has it) is its
     * own highest key, as in c10, whose table lookup would read past the end; here slot 0.
     * Higher bits belong to no key and stay zero. */
    [CFX_KEY_EndOfFunctionalityKeys] = {0, 0, CFX_KEY_EndOfFunctionalityKeys},
};
_Static_assert(CFX_KEY_EndOfFunctionalityKeys == 46 + 1, "one INFO entry per functionality key");
_Static_assert(CFX_KEYS_FUNCTIONALITY_SLOT(CFX_KEY_EndOfFunctionalityKeys - 1) == CFX_NUM_RUNTIME_ENTRIES - 1,
               "the highest functionality (PythonDispatcher) is not per-backend and takes the last slot");

cfx_dispatch_key cfx_keyset_highest_functionality(cfx_keyset s)
{
    return (cfx_dispatch_key)cfx_keys_high_bit(s.repr >> CFX_NUM_BACKENDS);
}

cfx_backend cfx_keyset_highest_backend(cfx_keyset s) { return cfx_keys_highest_backend(s); }

cfx_dispatch_key cfx_keyset_highest_priority(cfx_keyset s)
{
    const cfx_keys_functionality_info *fi = &cfx_keys_infos[cfx_keys_high_bit(s.repr >> CFX_NUM_BACKENDS)];
    return (cfx_dispatch_key)(fi->base + cfx_keys_high_bit(s.repr & fi->mask));
}

int cfx_keyset_table_index(cfx_keyset s) { return cfx_keys_table_index(s); }

/* ---------------------------------------------------------------- names */

/* c10's toString: functionality and alias keys by name, runtime keys as <prefix><Backend>,
 * the block markers as <prefix>Undefined (the backend component is InvalidBit). */
#define NAME_(x, Name) [CFX_KEY_##Name] = #Name,
#define NAME_PB_(x, Name, prefix) [CFX_KEY_##Name] = #Name,
#define NAME_RUNTIME_(prefix, Name, NAME) [CFX_KEY_##prefix##Name] = #prefix #Name,
#define NAME_BLOCK_(x, Name, prefix) \
    [CFX_KEY_StartOf##Name##Backends] = #prefix "Undefined", CFX_FOR_EACH_BACKEND(NAME_RUNTIME_, prefix)

static const char *const names[] = {
    NAME_(, Undefined)
    CFX_FOR_EACH_FUNCTIONALITY(NAME_, NAME_PB_, )
    [CFX_KEY_EndOfFunctionalityKeys] = "UnknownUnknown",
    CFX_FOR_EACH_FUNCTIONALITY(CFX_KEYS_IGNORE_, NAME_BLOCK_, )
    CFX_FOR_EACH_ALIAS(NAME_, )
};
_Static_assert(sizeof names / sizeof names[0] == CFX_KEY_COUNT, "one name per key, alias keys last");

const char *cfx_key_name(cfx_dispatch_key k)
{
    if ((unsigned)k >= CFX_KEY_COUNT)
        return "UnknownUnknown"; /* toString's default */
    return names[k];
}

/* c10::parseDispatchKey's key_map (2.13): every functionality and alias key, but only some
 * runtime keys. c10 keeps that map by hand; here it is, per per-backend functionality, the
 * backends whose runtime key it names. Enum aliases ("CatchAll", "DefaultBackend",
 * "Autocast", "CPUTensorId") have no name of their own in `names`, so they are refused. */
#define B(b) (1u << (CFX_BACKEND_##b - 1))
static const uint16_t parseable_backends[CFX_NUM_FUNCTIONALITY_KEYS] = {
    [CFX_KEY_Dense] = (uint16_t)BACKEND_MASK,
    [CFX_KEY_Quantized] = B(CPU) | B(CUDA) | B(XPU) | B(PRIVATEUSE1),
    [CFX_KEY_Sparse] = B(CPU) | B(CUDA) | B(HIP) | B(MPS) | B(XPU) | B(VE) | B(PRIVATEUSE1) | B(META),
    [CFX_KEY_SparseCsr] = B(CPU) | B(CUDA) | B(HIP) | B(MPS) | B(XPU) | B(VE) | B(PRIVATEUSE1) | B(META),
    [CFX_KEY_NestedTensor] = B(CPU) | B(CUDA) | B(XPU) | B(HPU) | B(PRIVATEUSE1) | B(META),
    [CFX_KEY_AutogradFunctionality] = B(CPU) | B(CUDA) | B(XLA) | B(MPS) | B(IPU) | B(XPU) | B(HPU) | B(LAZY) |
                                      B(PRIVATEUSE1) | B(PRIVATEUSE2) | B(PRIVATEUSE3) | B(META),
};
#undef B

static bool parseable(cfx_dispatch_key k)
{
    if (k < CFX_KEY_EndOfFunctionalityKeys || cfx_key_is_alias(k))
        return true;
    cfx_backend b = cfx_key_to_backend(k);
    return b != CFX_BACKEND_INVALID && (parseable_backends[cfx_key_to_functionality(k)] >> (b - 1)) & 1;
}

bool cfx_key_parse(const char *name, cfx_dispatch_key *out)
{
    if (!name)
        return false;
    for (int k = 0; k < CFX_KEY_COUNT; k++) {
        if (strcmp(names[k], name) == 0 && parseable((cfx_dispatch_key)k)) {
            if (out)
                *out = (cfx_dispatch_key)k;
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

/* toFunctionalityKey. The blocks of runtime keys (StartOf<F>Backends and one key per backend)
 * follow each other in functionality order. */
#define BLOCK_FUNCTIONALITY_(x, Name, prefix) CFX_KEY_##Name,
static const uint8_t block_functionality[] = {
    CFX_FOR_EACH_FUNCTIONALITY(CFX_KEYS_IGNORE_, BLOCK_FUNCTIONALITY_, )};
_Static_assert(CFX_KEY_EndOfRuntimeBackendKeys - CFX_KEY_EndOfFunctionalityKeys ==
                   (int)sizeof block_functionality * (CFX_NUM_BACKENDS + 1),
               "one block of num_backends + 1 keys per per-backend functionality");

cfx_dispatch_key cfx_key_to_functionality(cfx_dispatch_key k)
{
    if ((unsigned)k > CFX_KEY_EndOfRuntimeBackendKeys)
        return CFX_KEY_Undefined; /* alias keys */
    if (k <= CFX_KEY_EndOfFunctionalityKeys)
        return k;
    return (cfx_dispatch_key)block_functionality[(k - CFX_KEY_StartOfDenseBackends) / (CFX_NUM_BACKENDS + 1)];
}

cfx_backend cfx_key_to_backend(cfx_dispatch_key k)
{
    cfx_dispatch_key f = cfx_key_to_functionality(k);
    if (k <= CFX_KEY_EndOfFunctionalityKeys || !IS_PER_BACKEND(f))
        return CFX_BACKEND_INVALID;
    /* the StartOf<F>Backends marker itself maps to InvalidBit (0) */
    return (cfx_backend)(k - cfx_keys_infos[f].base);
}

cfx_dispatch_key cfx_key_for_backend(cfx_dispatch_key functionality, cfx_backend b)
{
    if (!IS_PER_BACKEND(functionality) || (unsigned)b > CFX_NUM_BACKENDS)
        return CFX_KEY_Undefined;
    return (cfx_dispatch_key)(cfx_keys_infos[functionality].base + b);
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
 * Undefined) keep c10's arithmetic: the low 15 backend bits only, so Meta's bit is out. */
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
        int base = cfx_keys_infos[f].base;
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

/* The constant key sets of DispatchKeySet.{h,cpp} (2.13). */
#define AUTOGRAD_KS                                                    \
    (FBIT(CFX_KEY_AutogradFunctionality) | FBIT(CFX_KEY_AutogradOther) | \
     FBIT(CFX_KEY_AutogradNestedTensor))
/* Backends without an Autograd key of their own; with every backend bit, because registration
 * walks the runtime keys of this set (QuantizedCPU, SparseCUDA, ...). */
#define AUTOGRADOTHER_BACKENDS                                                                  \
    (FBIT(CFX_KEY_FPGA) | FBIT(CFX_KEY_Vulkan) | FBIT(CFX_KEY_Metal) | FBIT(CFX_KEY_CustomRNGKeyId) | \
     FBIT(CFX_KEY_MkldnnCPU) | FBIT(CFX_KEY_Sparse) | FBIT(CFX_KEY_SparseCsr) |                    \
     FBIT(CFX_KEY_Quantized) | BACKEND_MASK)
/* CompositeExplicitAutograd: every backend, but not NestedTensor (structured kernels that use
 * the DefaultBackend key do not work for it). */
#define BACKEND_KS (AUTOGRADOTHER_BACKENDS | FBIT(CFX_KEY_Dense))
/* CompositeExplicitAutogradNonFunctional: not for the functional backends (XLA, Lazy) nor
 * Sparse (SparseCsr stays). */
#define NON_FUNCTIONAL_BACKEND_KS                                            \
    (BACKEND_KS & ~(FBIT(CFX_KEY_Sparse) | BACKEND_BIT(CFX_BACKEND_XLA) | \
                    BACKEND_BIT(CFX_BACKEND_LAZY)))
/* CompositeImplicitAutograd: backends, NestedTensor (implicit decompositions do work there) and
 * autograd. (Some 2.x releases had Functionalize in it; 2.13 does not.) */
#define MATH_KS (BACKEND_KS | AUTOGRAD_KS | FBIT(CFX_KEY_NestedTensor))
#define NESTED_KS (FBIT(CFX_KEY_AutogradNestedTensor) | FBIT(CFX_KEY_NestedTensor) | BACKEND_MASK)
/* FuncTorchBatchedDecomposition: functorch's batching rule keys. */
#define FUNCTORCH_BATCHED_KS FBIT(CFX_KEY_FuncTorchBatched)

/* getRuntimeDispatchKeySet */
static cfx_keyset runtime_set(cfx_dispatch_key k)
{
    switch (k) {
    case CFX_KEY_Autograd:
        return (cfx_keyset){AUTOGRAD_KS | BACKEND_MASK};
    case CFX_KEY_CompositeImplicitAutograd:
        return (cfx_keyset){MATH_KS};
    case CFX_KEY_FuncTorchBatchedDecomposition:
        return (cfx_keyset){FUNCTORCH_BATCHED_KS};
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

/* isIncludedInAlias(k, alias) = runtimeDispatchKeySetHas(alias, k). */
bool cfx_key_in_expansion(cfx_dispatch_key alias, cfx_dispatch_key k)
{
    if (k == CFX_KEY_Undefined || alias == CFX_KEY_Undefined)
        return false;
    switch (alias) {
    case CFX_KEY_Autograd:
        return cfx_keyset_has((cfx_keyset){AUTOGRAD_KS}, cfx_key_to_functionality(k));
    case CFX_KEY_CompositeImplicitAutograd:
        return cfx_keyset_has((cfx_keyset){MATH_KS}, k);
    case CFX_KEY_FuncTorchBatchedDecomposition:
        return cfx_keyset_has((cfx_keyset){FUNCTORCH_BATCHED_KS}, k);
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

/* getBackendKeySetFromAutograd. Its switch names every Autograd<Backend> key except HIP and
 * VE (whose tensors carry AutogradOther) and MTIA (an omission of 2.13's: MTIA tensors do carry
 * AutogradMTIA), so those three map to the empty set. */
cfx_keyset cfx_keyset_backend_from_autograd(cfx_dispatch_key k)
{
    switch (k) {
    case CFX_KEY_AutogradOther:
        return (cfx_keyset){AUTOGRADOTHER_BACKENDS};
    case CFX_KEY_AutogradNestedTensor:
        return (cfx_keyset){FBIT(CFX_KEY_NestedTensor) | BACKEND_MASK};
    case CFX_KEY_AutogradHIP:
    case CFX_KEY_AutogradVE:
    case CFX_KEY_AutogradMTIA:
        return cfx_keyset_empty();
    default:
        if (k > CFX_KEY_StartOfAutogradFunctionalityBackends &&
            k <= CFX_KEY_EndOfAutogradFunctionalityBackends)
            return cfx_keyset_of(cfx_key_for_backend(CFX_KEY_Dense, cfx_key_to_backend(k)));
        return cfx_keyset_empty();
    }
}

/* getAutogradKeyFromBackend, i.e. getAutogradRelatedKeySetFromBackend(b).highestPriorityTypeId():
 * HIP, VE and anything unknown fall back to AutogradOther. */
cfx_dispatch_key cfx_key_autograd_from_backend(cfx_backend b)
{
    if (b == CFX_BACKEND_INVALID || (unsigned)b > CFX_NUM_BACKENDS || b == CFX_BACKEND_HIP ||
        b == CFX_BACKEND_VE)
        return CFX_KEY_AutogradOther;
    return cfx_key_for_backend(CFX_KEY_AutogradFunctionality, b);
}

/* getAutocastRelatedKeySetFromBackend: the backends with an Autocast key of their own. */
static uint64_t autocast_bit(cfx_backend b)
{
    switch (b) {
    case CFX_BACKEND_CPU: return FBIT(CFX_KEY_AutocastCPU);
    case CFX_BACKEND_MTIA: return FBIT(CFX_KEY_AutocastMTIA);
    case CFX_BACKEND_MAIA: return FBIT(CFX_KEY_AutocastMAIA);
    case CFX_BACKEND_XPU: return FBIT(CFX_KEY_AutocastXPU);
    case CFX_BACKEND_IPU: return FBIT(CFX_KEY_AutocastIPU);
    case CFX_BACKEND_HPU: return FBIT(CFX_KEY_AutocastHPU);
    case CFX_BACKEND_CUDA: return FBIT(CFX_KEY_AutocastCUDA);
    case CFX_BACKEND_XLA: return FBIT(CFX_KEY_AutocastXLA);
    case CFX_BACKEND_PRIVATEUSE1: return FBIT(CFX_KEY_AutocastPrivateUse1);
    case CFX_BACKEND_MPS: return FBIT(CFX_KEY_AutocastMPS);
    default: return 0;
    }
}

/* TensorImpl's constructor: the backend key, getAutocastRelatedKeySetFromBackend and
 * getAutogradRelatedKeySetFromBackend (ADInplaceOrView + the Autograd key). */
cfx_keyset cfx_keyset_for_tensor(cfx_backend b)
{
    if (b == CFX_BACKEND_INVALID || (unsigned)b > CFX_NUM_BACKENDS)
        return cfx_keyset_empty();
    return (cfx_keyset){cfx_keyset_of(cfx_key_for_backend(CFX_KEY_Dense, b)).repr |
                        FBIT(CFX_KEY_ADInplaceOrView) |
                        cfx_keyset_of(cfx_key_autograd_from_backend(b)).repr | autocast_bit(b)};
}
