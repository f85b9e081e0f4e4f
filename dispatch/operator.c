/* operator.c - one operator's kernels and its computed dispatch table (c10's OperatorEntry).
 *
 * The canonical state of an operator is its schema (maybe none yet) and, per dispatch key
 * (runtime or alias), a list of registered kernels, newest first. The dispatch table is
 * DERIVED state: one kernel per runtime slot, computed by PyTorch's precedence rules from the
 * canonical state and the dispatcher-wide backend fallbacks (compute_entry, which is
 * computeDispatchTableEntryWithDebug line by line). Whenever a registration changes, only the
 * slots that can depend on it are recomputed (update_table, c10's updateDispatchTable_), and
 * the per-op "non-fallthrough" masks follow the slots, so the call path never looks at
 * anything but the table and the masks. cfx_op_check_invariants recomputes everything and
 * compares, exactly as c10 does, which is how the tests catch a missed update.
 *
 * A kernel registered as a plain C function has no boxed entry of its own; its libffi adapter
 * needs the schema, so it is built when both the kernel and the def exist and dropped when
 * either goes away. Because the table holds copies of kernels, a change of adapter refreshes
 * the whole table. A C function registered together with a boxed entry compiled for its
 * signature (the built-in kernels, ops.h) needs no adapter: it keeps that entry for life and
 * only its inferred schema text follows the def. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/registry.h"
#include "dispatch/wrapped_internal.h"

/* ---- static key lists ------------------------------------------------------------------- */

/* Runtime keys of FULL in ascending order (c10's allDispatchKeysInFullSet). */
static cfx_dispatch_key full_keys[CFX_NUM_RUNTIME_ENTRIES];
static int n_full_keys;
/* Expansion of each key (alias or runtime), filled on first use. */
static cfx_dispatch_key *expansion[CFX_KEY_COUNT];
static int n_expansion[CFX_KEY_COUNT];
static cfx_dispatch_key expansion_store[CFX_KEY_COUNT * 4 + 1024];
static pthread_once_t key_lists_once = PTHREAD_ONCE_INIT;

static void init_key_lists(void)
{
    n_full_keys = cfx_keyset_runtime_keys(cfx_keyset_full(), full_keys, CFX_NUM_RUNTIME_ENTRIES);
    int used = 0;
    for (int k = 0; k < CFX_KEY_COUNT; k++) {
        cfx_dispatch_key tmp[CFX_NUM_RUNTIME_ENTRIES];
        int n = 0;
        if (k != CFX_KEY_Undefined && (cfx_key_is_alias((cfx_dispatch_key)k) || cfx_key_is_runtime((cfx_dispatch_key)k)))
            n = cfx_key_expand((cfx_dispatch_key)k, tmp, CFX_NUM_RUNTIME_ENTRIES);
        if (n < 0)
            n = 0;
        if (used + n > (int)(sizeof expansion_store / sizeof expansion_store[0]))
            n = 0; /* cannot happen with the real key counts; keeps the store in bounds */
        memcpy(expansion_store + used, tmp, (size_t)n * sizeof tmp[0]);
        expansion[k] = expansion_store + used;
        n_expansion[k] = n;
        used += n;
    }
}

static void key_lists(void) { pthread_once(&key_lists_once, init_key_lists); }

/* ---- special kernels --------------------------------------------------------------------- */

static const cfx_kernel missing_kernel; /* all zero: invalid */

static void dump_state(const cfx_op *op, cfx_buf *b);

/* KernelFunction.cpp's ambiguous_autogradother_kernel (2.13's text, without the "0 INTERNAL
 * ASSERT FAILED at <PyTorch source>, please report a bug to PyTorch. " prefix). */
static int ambiguous_autogradother_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)ks, (void)stack;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b,
                   "%s has kernels registered to both CompositeImplicitAutograd and a backend mapped to "
                   "AutogradOther. This makes the backend kernel unreachable; the dispatcher will always "
                   "prefer the CompositeImplicitAutograd lowering (see Note [Ambiguity in AutogradOther "
                   "kernel]). If you want to override CompositeImplicitAutograd, please open an issue to "
                   "request a dedicated Autograd dispatch key for the backend.\nIf you only want to run "
                   "inference instead of training, in C++, add `c10::InferenceMode mode;` before "
                   "model.forward(); in Python, use `torch.inference_mode()` as a context manager (see "
                   "https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html)."
                   "\nCanonical state\n~~~~~~~~~~~\n",
                   cfx_op_name(op));
    dump_state(op, &b);
    cfx_buf_puts(&b, "\n\n");
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, cfx_op_name(op), msg ? msg : "ambiguous AutogradOther kernel");
    cfx_free(msg);
    return rc;
}

static const cfx_kernel ambiguous_kernel = {
    .boxed = ambiguous_autogradother_kernel,
    .flags = CFX_KERNEL_VALID | CFX_KERNEL_AMBIGUOUS_AUTOGRADOTHER,
    .debug = "ambiguous_autogradother",
};

int cfx_fallthrough_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)ks, (void)stack;
    return cfx_error_set_text(CFX_ERR, op ? cfx_op_name(op) : NULL,
                              "fallthrough_kernel was executed but it should have been short-circuited by the "
                              "dispatcher. This could occur if you registered a fallthrough kernel as a override "
                              "for a specific operator (as opposed to a backend fallback); this is NOT currently "
                              "supported, and we do not intend to add support for it in the near future.  If you "
                              "do find yourself in need of this, let us know in the bug tracker.");
}

/* ---- computeDispatchTableEntryWithDebug ---------------------------------------------------- */

static const cfx_kernel *front(const cfx_op *op, cfx_dispatch_key k)
{
    return op->kernels[k] ? &op->kernels[k]->kernel : NULL;
}

static bool in_alias(cfx_dispatch_key k, cfx_dispatch_key alias)
{
    return cfx_key_in_expansion(alias, k);
}

/* hasKernelForAnyDispatchKey: a direct (non-alias) registration on a key of ks. */
static bool has_kernel_in(const cfx_op *op, cfx_keyset ks)
{
    if (cfx_keyset_is_empty(ks))
        return false;
    for (int k = 1; k <= CFX_KEY_EndOfRuntimeBackendKeys; k++)
        if (op->kernels[k] && cfx_keyset_has(ks, (cfx_dispatch_key)k))
            return true;
    return false;
}

/* c10::autogradother_backends. */
static cfx_keyset autogradother_backends(void)
{
    return cfx_keyset_backend_from_autograd(CFX_KEY_AutogradOther);
}

static const cfx_kernel *compute_entry(const cfx_op *op, cfx_dispatch_key k, const char **reason)
{
    const cfx_kernel *r;
    /* 1. a kernel registered directly on this key */
    if ((r = front(op, k))) {
        *reason = "kernel";
        return r;
    }
    /* 2.1 / 2.2: Undefined counts as included in the composite aliases (it cannot be in a set) */
    bool undef = k == CFX_KEY_Undefined;
    if ((undef || in_alias(k, CFX_KEY_CompositeExplicitAutogradNonFunctional)) &&
        (r = front(op, CFX_KEY_CompositeExplicitAutogradNonFunctional))) {
        *reason = "default backend kernel";
        return r;
    }
    if ((undef || in_alias(k, CFX_KEY_CompositeExplicitAutograd)) && (r = front(op, CFX_KEY_CompositeExplicitAutograd))) {
        *reason = "default backend kernel";
        return r;
    }
    /* A backend kernel (or CompositeExplicitAutograd) keeps the autograd slot of that backend
     * from decomposing: it goes to the Autograd alias or the fallback instead. */
    bool has_backend_kernel = has_kernel_in(op, cfx_keyset_backend_from_autograd(k)) ||
                              front(op, CFX_KEY_CompositeExplicitAutograd) != NULL;
    /* 2.3 */
    if (!undef && in_alias(k, CFX_KEY_CompositeImplicitAutogradNestedTensor) &&
        (r = front(op, CFX_KEY_CompositeImplicitAutogradNestedTensor))) {
        *reason = "nested kernel";
        return r;
    }
    if ((undef || in_alias(k, CFX_KEY_CompositeImplicitAutograd)) && (r = front(op, CFX_KEY_CompositeImplicitAutograd))) {
        if (k == CFX_KEY_AutogradOther && has_kernel_in(op, autogradother_backends())) {
            *reason = "ambiguous autogradother";
            return &ambiguous_kernel;
        }
        if (!has_backend_kernel) {
            *reason = "math kernel";
            return r;
        }
    }
    /* 2.4 */
    if (in_alias(k, CFX_KEY_Autograd) && (r = front(op, CFX_KEY_Autograd))) {
        *reason = "autograd kernel";
        return r;
    }
    /* 2.5: functorch's batching rules (disjoint from the aliases above, so the order is moot) */
    if (in_alias(k, CFX_KEY_FuncTorchBatchedDecomposition) && (r = front(op, CFX_KEY_FuncTorchBatchedDecomposition))) {
        *reason = "batched kernel";
        return r;
    }
    /* 3. backend fallback */
    int idx = cfx_key_table_index(k);
    if (idx >= 0) {
        r = cfx_dispatcher_backend_fallback(idx);
        if (r && cfx_kernel_is_valid(r)) {
            *reason = "backend fallback";
            return r;
        }
    }
    *reason = "missing";
    return &missing_kernel;
}

/* ---- keeping the table and masks in sync --------------------------------------------------- */

/* c10's DispatchKeyExtractor::setOperatorHasFallthroughForKey. */
static void set_fallthrough(cfx_op *op, cfx_dispatch_key k, bool ft)
{
    op->non_fallthrough = ft ? cfx_keyset_remove(op->non_fallthrough, k) : cfx_keyset_add(op->non_fallthrough, k);
    if (cfx_key_is_per_backend_functionality(cfx_key_to_functionality(k))) {
        int b = (int)cfx_key_to_backend(k) - 1;
        if (b < 0 || b >= CFX_NUM_BACKENDS)
            return;
        cfx_keyset *m = &op->non_fallthrough_per_backend[b];
        *m = ft ? cfx_keyset_remove(*m, k) : cfx_keyset_add(*m, k);
        bool differ = false;
        for (int i = 0; i + 1 < CFX_NUM_BACKENDS; i++)
            if (!cfx_keyset_eq(op->non_fallthrough_per_backend[i], op->non_fallthrough_per_backend[i + 1]))
                differ = true;
        op->per_backend_masks_differ = differ;
    } else {
        for (int i = 0; i < CFX_NUM_BACKENDS; i++) {
            cfx_keyset *m = &op->non_fallthrough_per_backend[i];
            *m = ft ? cfx_keyset_remove(*m, k) : cfx_keyset_add(*m, k);
        }
    }
}

_Atomic uint64_t cfx_dispatch_tables_generation_raw;

static void update_entry(cfx_op *op, cfx_dispatch_key k)
{
    int idx = cfx_key_table_index(k);
    if (idx < 0 || idx >= CFX_NUM_RUNTIME_ENTRIES)
        return;
    atomic_fetch_add_explicit(&cfx_dispatch_tables_generation_raw, 1, memory_order_relaxed);
    const char *reason;
    op->table[idx] = *compute_entry(op, k, &reason);
    set_fallthrough(op, k, cfx_kernel_is_fallthrough(&op->table[idx]));
}

/* c10's updateDispatchTable_: the slots k covers, Undefined for the composite aliases, and the
 * autograd slots whose has_backend_kernel may have flipped.
 *
 * For the last part c10 refreshes only getAutogradKeyFromBackend(toBackendComponent(k)) of a
 * backend key k and misses three dependencies, leaving stale slots that its own
 * checkInvariants then rejects (reproduced on 1.13 and still so on 2.13; the table then
 * depends on registration order):
 *  - a kernel on one of AutogradOther's backends (SparseCPU, QuantizedCPU, ...) can make
 *    AutogradOther the ambiguity kernel (rule 2.3), but c10 refreshes AutogradCPU:
 *    "CIA, then SparseCPU";
 *  - a NestedTensorCPU kernel is a backend kernel for AutogradNestedTensor: "CIA, then
 *    NestedTensorCPU";
 *  - a CompositeExplicitAutograd kernel counts as a backend kernel everywhere, which stops the
 *    CIA kernel on the keys CEA does not cover (autograd, NestedTensor): "CIA, then CEA".
 * cfx refreshes every autograd slot whose backend set contains k (which includes c10's one)
 * and, for CEA, everything CIA covers, so the table always equals what the rules compute. */
static void update_table(cfx_op *op, cfx_dispatch_key k)
{
    key_lists();
    if (k == CFX_KEY_Undefined) {
        update_entry(op, k);
        return;
    }
    for (int i = 0; i < n_expansion[k]; i++)
        update_entry(op, expansion[k][i]);
    if (k == CFX_KEY_CompositeImplicitAutograd || k == CFX_KEY_CompositeExplicitAutograd ||
        k == CFX_KEY_CompositeExplicitAutogradNonFunctional)
        update_entry(op, CFX_KEY_Undefined);
    if (k == CFX_KEY_CompositeExplicitAutograd)
        for (int i = 0; i < n_expansion[CFX_KEY_CompositeImplicitAutograd]; i++)
            update_entry(op, expansion[CFX_KEY_CompositeImplicitAutograd][i]);
    if (!cfx_key_is_alias(k)) {
        const cfx_dispatch_key *ag = expansion[CFX_KEY_Autograd];
        for (int i = 0; i < n_expansion[CFX_KEY_Autograd]; i++)
            if (ag[i] != k && cfx_keyset_has(cfx_keyset_backend_from_autograd(ag[i]), k))
                update_entry(op, ag[i]);
    }
}

static void update_full(cfx_op *op)
{
    key_lists();
    update_table(op, CFX_KEY_Undefined);
    for (int i = 0; i < n_full_keys; i++)
        update_table(op, full_keys[i]);
}

void cfx_opentry_update_fallback(cfx_op *op, cfx_dispatch_key key) { update_table(op, key); }

/* ---- registration -------------------------------------------------------------------------- */

/* Ids are handed out under the registry lock and never reused, so a table indexed by id
 * never mistakes a new op for a freed one. */
static uint32_t next_id;

uint32_t cfx_op_id_bound(void) { return __atomic_load_n(&next_id, __ATOMIC_RELAXED); }

const cfx_schema *cfx_op_schema(const cfx_op *op) { return op->schema; }
const char *cfx_op_name(const cfx_op *op) { return op->qualified_name; }
cfx_tag_set cfx_op_tags(const cfx_op *op) { return op->tags; }
bool cfx_op_has_tag(const cfx_op *op, cfx_tag t) { return (op->tags & cfx_tag_bit(t)) != 0; }

bool cfx_op_has_kernel_for_key(const cfx_op *op, cfx_dispatch_key k)
{
    if (!op || (int)k <= 0 || (int)k >= CFX_KEY_COUNT)
        return false;
    cfx_registry_lock();
    bool has = op->kernels[k] != NULL;
    cfx_registry_unlock();
    return has;
}
uint32_t cfx_op_id(const cfx_op *op) { return op->id; }

cfx_op *cfx_opentry_new(const char *qualified_name)
{
    cfx_op *op = cfx_calloc(1, sizeof *op);
    if (!op || !(op->qualified_name = cfx_strdup(qualified_name))) {
        cfx_free(op);
        cfx_error_set(CFX_ERR_NOMEM, qualified_name, "out of memory");
        return NULL;
    }
    op->id = next_id;
    __atomic_store_n(&next_id, next_id + 1, __ATOMIC_RELAXED);
    op->non_fallthrough = cfx_keyset_full();
    for (int i = 0; i < CFX_NUM_BACKENDS; i++)
        op->non_fallthrough_per_backend[i] = cfx_keyset_full();
    update_full(op); /* picks up the backend fallbacks registered so far */
    return op;
}

/* A C function that came with its own boxed entry: an unboxed kernel whose boxed entry is set
 * but is not an adapter (an adapter's entry is only set while the adapter exists). */
static bool entry_own_boxed(const cfx_kernel_entry *e)
{
    return e->kernel.unboxed && e->kernel.boxed && !e->adapter;
}

/* Undoes entry_build_adapter: the schema went away (or the build is being rolled back). */
static void entry_drop_adapter(cfx_kernel_entry *e)
{
    if (!e->inferred)
        return;
    cfx_free(e->inferred);
    e->inferred = NULL;
    e->kernel.inferred_schema = NULL;
    if (!e->adapter)
        return; /* an own boxed entry stays */
    cfx_adapter_free(e->adapter);
    e->adapter = NULL;
    e->kernel.boxed = NULL;
    e->kernel.ctx = NULL;
}

/* The schema is known: the inferred schema text, and the libffi adapter unless the kernel
 * brought its own boxed entry. */
static int entry_build_adapter(cfx_kernel_entry *e, const cfx_schema *s)
{
    cfx_adapter *a = NULL;
    if (!entry_own_boxed(e) && !(a = cfx_adapter_new(s, e->kernel.unboxed)))
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR, cfx_op_name(e->op),
                                                                         "cannot build a boxed adapter");
    char *inf = cfx_adapter_inferred_schema(s);
    if (!inf) {
        cfx_adapter_free(a);
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR_NOMEM, cfx_op_name(e->op), "out of memory");
    }
    e->inferred = inf;
    e->kernel.inferred_schema = inf;
    if (a) {
        e->adapter = a;
        e->kernel.boxed = cfx_adapter_call_boxed;
        e->kernel.ctx = a;
    }
    return CFX_OK;
}

static void entry_free(cfx_kernel_entry *e)
{
    entry_drop_adapter(e);
    cfx_free(e->debug);
    cfx_free(e);
}

void cfx_opentry_free(cfx_op *op)
{
    if (!op)
        return;
    for (int k = 0; k < CFX_KEY_COUNT; k++) {
        cfx_kernel_entry *e = op->kernels[k];
        while (e) {
            cfx_kernel_entry *next = e->next;
            entry_free(e);
            e = next;
        }
    }
    cfx_schema_free((cfx_schema *)op->schema);
    cfx_free(op->schema_debug);
    cfx_free(op->arg_steps);
    cfx_free(op->cpp_signature_debug);
    cfx_free(op->qualified_name);
    cfx_free(op);
}

static uint64_t required_tensors(const cfx_schema *s)
{
    uint64_t m = 0;
    for (int i = 0; i < s->n_args && i < 64; i++)
        if (s->args[i].type->kind == CFX_TYPE_TENSOR)
            m |= 1ull << i;
    return m;
}

/* Room for a schema's argument steps and, after them, the kinds each argument takes as is
 * (one block: the op owns it through arg_steps). */
static cfx_box_step *steps_alloc(const cfx_schema *s)
{
    size_t n = (size_t)s->n_args + 1;
    return cfx_malloc(n * sizeof(cfx_box_step) + n * sizeof(uint32_t));
}

/* The argument positions the dispatch path reads and the arguments' boxing steps, from the
 * schema (none without one). steps is steps_alloc(s); the op owns it. */
static void set_dispatch_args(cfx_op *op, const cfx_schema *s, cfx_box_step *steps)
{
    uint64_t m = s ? s->tensor_arg_mask : 0;
    op->dispatch_arg_mask = m;
    op->required_tensor_mask = s ? required_tensors(s) : 0;
    op->numbers_as_tensors = s && cfx_allows_numbers_as_tensors(s);
    uint32_t *kinds = s ? (uint32_t *)(steps + s->n_args + 1) : NULL;
    for (int i = 0; s && i < s->n_args; i++) {
        steps[i] = cfx_box_arg_step(&s->args[i]);
        kinds[i] = cfx_box_kinds_as_is(steps[i]);
        /* cfx_op_call adds a tensor's key set where it takes a tensor as is: only for a Tensor
         * (or Tensor?) among the first 64 arguments, the dispatch arguments */
        if (steps[i].form != CFX_BOX_TENSOR || i >= 64)
            kinds[i] &= ~(1u << CFX_V_TENSOR);
    }
    cfx_free(op->arg_steps);
    op->arg_steps = steps;
    op->arg_kinds_as_is = kinds;
}

int cfx_opentry_register_schema(cfx_op *op, cfx_schema *schema, const char *debug, int alias_analysis,
                                bool alias_is_default, cfx_tag_set tags)
{
    char *d = cfx_strdup(debug);
    cfx_box_step *steps = steps_alloc(schema);
    if (!d || !steps) {
        cfx_free(d);
        cfx_free(steps);
        cfx_schema_free(schema);
        return cfx_error_set(CFX_ERR_NOMEM, cfx_op_name(op), "out of memory");
    }
    bool rebuilt = false;
    for (int k = 0; k < CFX_KEY_COUNT; k++)
        for (cfx_kernel_entry *e = op->kernels[k]; e; e = e->next) {
            if (!e->kernel.unboxed || e->inferred)
                continue;
            int rc = entry_build_adapter(e, schema);
            if (rc != CFX_OK) {
                /* undo: the op stays exactly as it was */
                for (int j = 0; j < CFX_KEY_COUNT; j++)
                    for (cfx_kernel_entry *f = op->kernels[j]; f; f = f->next)
                        if (f->kernel.unboxed)
                            entry_drop_adapter(f);
                cfx_free(d);
                cfx_free(steps);
                cfx_schema_free(schema);
                return rc;
            }
            rebuilt = true;
        }
    op->schema = schema;
    op->schema_debug = d;
    op->alias_analysis = alias_analysis;
    op->alias_analysis_is_default = alias_is_default;
    op->tags = tags;
    set_dispatch_args(op, schema, steps);
    if (rebuilt)
        update_full(op); /* the table holds copies of the kernels that just got a boxed entry */
    return CFX_OK;
}

void cfx_opentry_deregister_schema(cfx_op *op)
{
    bool dropped = false;
    for (int k = 0; k < CFX_KEY_COUNT; k++)
        for (cfx_kernel_entry *e = op->kernels[k]; e; e = e->next)
            if (e->inferred) {
                entry_drop_adapter(e);
                dropped = true;
            }
    if (dropped)
        update_full(op);
    cfx_schema_free((cfx_schema *)op->schema);
    cfx_free(op->schema_debug);
    op->schema = NULL;
    op->schema_debug = NULL;
    op->tags = 0;
    set_dispatch_args(op, NULL, NULL);
}

/* registerKernel's TORCH_WARN_ONCE: the first override in the process warns, for any
 * operator; overrides on Meta and MTIA never do (PyTorch overrides C++ Meta kernels with
 * Python ones on purpose, and MTIA falls back to CPU that way). */
static atomic_flag override_warned = ATOMIC_FLAG_INIT;

static void warn_override(const cfx_op *op, bool has_key, cfx_dispatch_key key, const char *debug)
{
    if (has_key && (key == CFX_KEY_Meta || key == CFX_KEY_MTIA))
        return;
    if (atomic_flag_test_and_set(&override_warned))
        return;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "Warning only once for all operators,  other operators may also be overridden.\n"
                     "  Overriding a previously registered kernel for the same operator and the same dispatch key\n"
                     "  operator: ");
    if (op->schema)
        cfx_schema_print(op->schema, &b);
    else
        cfx_buf_puts(&b, op->qualified_name);
    cfx_buf_printf(&b, "\n    %s\n  dispatch key: %s\n  previous kernel: %s\n       new kernel: %s",
                   op->schema ? op->schema_debug : "no debug info", has_key ? cfx_key_name(key) : "(catch all)",
                   op->cpp_signature_debug ? op->cpp_signature_debug : "no debug info", debug);
    char *msg = cfx_buf_take(&b);
    if (msg)
        cfx_warn("%s", msg);
    cfx_free(msg);
}

cfx_kernel_entry *cfx_opentry_register_kernel(cfx_op *op, bool has_key, cfx_dispatch_key key,
                                              cfx_boxed_fn boxed, void *ctx, cfx_fnptr unboxed,
                                              bool fallthrough, const char *debug)
{
    cfx_dispatch_key slot = has_key ? key : CFX_KEY_CompositeImplicitAutograd;
    cfx_kernel_entry *e = cfx_calloc(1, sizeof *e);
    if (!e || !(e->debug = cfx_strdup(debug))) {
        cfx_free(e);
        cfx_error_set(CFX_ERR_NOMEM, cfx_op_name(op), "out of memory");
        return NULL;
    }
    e->op = op;
    e->key = slot;
    e->catch_all = !has_key;
    e->kernel.flags = CFX_KERNEL_VALID;
    e->kernel.debug = e->debug;
    if (fallthrough) {
        e->kernel.boxed = cfx_fallthrough_kernel;
        e->kernel.flags |= CFX_KERNEL_FALLTHROUGH;
    } else if (unboxed) {
        e->kernel.unboxed = unboxed;
        e->kernel.boxed = boxed; /* NULL: an adapter is built from the schema */
        e->kernel.ctx = ctx;
        if (op->schema && entry_build_adapter(e, op->schema) != CFX_OK) {
            entry_free(e);
            return NULL;
        }
    } else {
        e->kernel.boxed = boxed;
        e->kernel.ctx = ctx;
    }
    /* c10 records the first C++ signature before it warns, so a first C kernel that overrides
     * a boxed one reports itself as "previous kernel". */
    if (unboxed && !op->cpp_signature_debug)
        op->cpp_signature_debug = cfx_strdup(debug);
    if (op->kernels[slot])
        warn_override(op, has_key, key, debug);
    e->next = op->kernels[slot];
    op->kernels[slot] = e;
    if (has_key)
        update_table(op, key);
    else
        update_full(op);
    return e;
}

void cfx_opentry_deregister_kernel(cfx_kernel_entry *e)
{
    cfx_op *op = e->op;
    cfx_kernel_entry **p = &op->kernels[e->key];
    while (*p && *p != e)
        p = &(*p)->next;
    if (*p)
        *p = e->next;
    update_table(op, e->key);
    entry_free(e);
}

/* ---- dumps and invariants ------------------------------------------------------------------- */

const char *cfx_alias_analysis_name(int k)
{
    switch (k) {
    case CFX_ALIAS_CONSERVATIVE: return "CONSERVATIVE";
    case CFX_ALIAS_FROM_SCHEMA: return "FROM_SCHEMA";
    case CFX_ALIAS_PURE_FUNCTION: return "PURE_FUNCTION";
    case CFX_ALIAS_INTERNAL_SPECIAL_CASE: return "INTERNAL_SPECIAL_CASE";
    }
    return NULL;
}

int cfx_alias_analysis_parse(const char *s, int *out)
{
    if (s && !*s) {
        *out = CFX_ALIAS_FROM_SCHEMA;
        return CFX_OK;
    }
    for (int k = CFX_ALIAS_CONSERVATIVE; s && k <= CFX_ALIAS_PURE_FUNCTION; k++)
        if (strcmp(s, cfx_alias_analysis_name(k)) == 0) {
            *out = k;
            return CFX_OK;
        }
    return cfx_error_set(CFX_ERR, NULL, "could not parse %s", s ? s : "(null)");
}

static void dump_state(const cfx_op *op, cfx_buf *b)
{
    cfx_buf_printf(b, "name: %s\n", op->qualified_name);
    if (op->schema) {
        cfx_buf_puts(b, "schema: ");
        cfx_schema_print(op->schema, b);
        cfx_buf_printf(b, "\ndebug: %s\nalias analysis kind: %s%s\n", op->schema_debug,
                       cfx_alias_analysis_name(op->alias_analysis) ? cfx_alias_analysis_name(op->alias_analysis) : "?",
                       op->alias_analysis_is_default ? " (default)" : "");
    } else {
        cfx_buf_puts(b, "schema: (none)\n");
    }
    /* enum order, so the text is stable (c10 iterates DispatchKey 0..EndOfAliasKeys) */
    for (int k = 0; k < CFX_KEY_COUNT; k++) {
        int i = 0;
        for (const cfx_kernel_entry *e = op->kernels[k]; e; e = e->next, i++) {
            const cfx_kernel *kn = &e->kernel;
            cfx_buf_printf(b, "%s%s%s: %s :: %s [ %s%s%s]\n", cfx_key_name((cfx_dispatch_key)k),
                           cfx_key_is_alias((cfx_dispatch_key)k) ? "[alias]" : "", i > 0 ? " (inactive)" : "",
                           e->debug, kn->inferred_schema ? kn->inferred_schema : "(none)",
                           cfx_kernel_is_fallthrough(kn) ? "fallthrough " : "",
                           (kn->boxed || cfx_kernel_is_fallthrough(kn)) ? "boxed " : "", kn->unboxed ? "unboxed " : "");
        }
    }
}

char *cfx_op_dump_state(const cfx_op *op)
{
    cfx_buf b;
    cfx_buf_init(&b);
    dump_state(op, &b);
    return cfx_buf_take(&b);
}

static void dump_computed_table(const cfx_op *op, cfx_buf *b)
{
    key_lists();
    for (int i = -1; i < n_full_keys; i++) {
        cfx_dispatch_key k = i < 0 ? CFX_KEY_Undefined : full_keys[i];
        const char *reason;
        const cfx_kernel *kn = compute_entry(op, k, &reason);
        if (!cfx_kernel_is_valid(kn))
            continue;
        cfx_buf_printf(b, "%s: %s%s [%s]\n", cfx_key_name(k), cfx_kernel_is_fallthrough(kn) ? "fallthrough " : "",
                       kn->debug ? kn->debug : "", reason);
    }
}

char *cfx_op_dump_computed_table(const cfx_op *op)
{
    cfx_buf b;
    cfx_buf_init(&b);
    dump_computed_table(op, &b);
    return cfx_buf_take(&b);
}

static bool same_kernel(const cfx_kernel *a, const cfx_kernel *b)
{
    return a->boxed == b->boxed && a->ctx == b->ctx && a->unboxed == b->unboxed &&
           a->flags == b->flags;
}

static int invariant_failed(const cfx_op *op, bool with_table)
{
    cfx_buf b;
    cfx_buf_init(&b);
    if (with_table)
        cfx_buf_puts(&b, "Canonical state\n~~~~~~~~~~~\n");
    dump_state(op, &b);
    if (with_table) {
        cfx_buf_puts(&b, "\n\nComputed table:\n~~~~~~~~~~~\n");
        dump_computed_table(op, &b);
    }
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, op->qualified_name, msg ? msg : "invariant violated");
    cfx_free(msg);
    return rc;
}

int cfx_op_check_invariants(const cfx_op *op)
{
    if (op->schema) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_schema_print_name(op->schema, &b);
        char *name = cfx_buf_take(&b);
        bool same = name && strcmp(name, op->qualified_name) == 0;
        cfx_free(name);
        if (!same || op->dispatch_arg_mask != op->schema->tensor_arg_mask ||
            op->required_tensor_mask != required_tensors(op->schema))
            return invariant_failed(op, false);
    }
    if (op->kernels[CFX_KEY_Undefined])
        return invariant_failed(op, false);
    key_lists();
    for (int i = 0; i < n_full_keys; i++) {
        cfx_dispatch_key k = full_keys[i];
        int idx = cfx_key_table_index(k);
        if (idx < 0)
            continue;
        const char *reason;
        if (!same_kernel(compute_entry(op, k, &reason), &op->table[idx]))
            return invariant_failed(op, true);
    }
    /* The call paths test a slot's entries alone (cfx_dispatch_call_slot, ops.c's wrappers): a
     * slot that cannot be called must have none. */
    for (int i = 0; i < CFX_NUM_RUNTIME_ENTRIES; i++)
        if ((op->table[i].boxed || op->table[i].unboxed) && !cfx_kernel_is_valid(&op->table[i]))
            return invariant_failed(op, true);
    return CFX_OK;
}
