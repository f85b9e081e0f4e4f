/* operator_internal.h - what an operator and a kernel are inside the dispatcher.
 *
 * Not a public header: users hold a cfx_op only by pointer and ask about it through
 * operator.h's functions, and register kernels through library.h. The dispatch path, the
 * registry, the generated entry points (ops_table.h) and the proxy mode read the fields
 * directly, and tests inspect dispatch tables with them. */
#ifndef CFX_OPERATOR_INTERNAL_H
#define CFX_OPERATOR_INTERNAL_H

#include <stdatomic.h>

#include "dispatch/boxing_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kernel.h"
#include "dispatch/keys_internal.h"
#include "dispatch/operator.h"
#include "dispatch/tensor.h"

/* A kernel as the dispatch table holds it. A fallthrough kernel is only a marker: the
 * dispatcher masks its key out and never calls it. */
enum {
    CFX_KERNEL_VALID = 1u << 0,
    CFX_KERNEL_FALLTHROUGH = 1u << 1,
    CFX_KERNEL_AMBIGUOUS_AUTOGRADOTHER = 1u << 2,
};

typedef struct cfx_kernel {
    cfx_boxed_fn boxed;
    void *ctx;          /* boxed_fn's context (for unboxed kernels: their libffi adapter) */
    cfx_fnptr unboxed;  /* the plain C function, or NULL for boxed-only kernels */
    unsigned flags;
    const char *debug;  /* "registered at FILE:LINE" (owned by the registry) */
    /* "(Tensor _0, Tensor _1, Scalar _2) -> Tensor _0" for unboxed kernels, else NULL */
    const char *inferred_schema;
} cfx_kernel;

static inline bool cfx_kernel_is_valid(const cfx_kernel *k) { return k->flags & CFX_KERNEL_VALID; }
static inline bool cfx_kernel_is_fallthrough(const cfx_kernel *k) { return k->flags & CFX_KERNEL_FALLTHROUGH; }

typedef struct cfx_kernel_entry cfx_kernel_entry; /* a registration: kernel + owner handle */

struct cfx_op {
    /* hot fields first: the dispatch path reads only these */
    cfx_kernel table[CFX_NUM_RUNTIME_ENTRIES];
    cfx_keyset non_fallthrough;                         /* when all backends agree */
    cfx_keyset non_fallthrough_per_backend[CFX_NUM_BACKENDS];
    bool per_backend_masks_differ;                      /* requiresBitsetPerBackend */
    const cfx_schema *schema;                           /* NULL until def'd */
    /* Argument positions, from the schema (0 while there is none): */
    uint64_t dispatch_arg_mask;    /* Tensor, Tensor?, Tensor[], Tensor?[] (= tensor_arg_mask) */
    uint64_t required_tensor_mask; /* plain Tensor: a NULL there is a propagated failure */
    cfx_box_step *arg_steps;       /* each argument's boxing rule (NULL without a schema): computed
                                      once for the boxed call's argument check, not per call */
    /* per argument, the value kinds cfx_op_call takes there with nothing to do (a tensor's key
       set to add at most): cfx_box_kinds_as_is, without TENSOR where no key set counts (in the
       block of arg_steps) */
    const uint32_t *arg_kinds_as_is;
    bool numbers_as_tensors;       /* its Tensor arguments take numbers (wrapped_internal.h) */
    uint32_t id;                                        /* cfx_op_id */
    cfx_tag_set tags;                                   /* from the def (tags.h) */
    /* cold state */
    char *qualified_name;                               /* "aten::add.Tensor" */
    char *schema_debug;                                 /* "registered at FILE:LINE" */
    int alias_analysis;                                 /* cfx_alias_analysis */
    bool alias_analysis_is_default;
    cfx_kernel_entry *kernels[CFX_KEY_COUNT];           /* newest first */
    /* debug of the first C-function kernel ever registered (c10's cpp_signature_ debug; the
     * override warning prints it as "previous kernel") */
    char *cpp_signature_debug;
    int def_count;
    int def_and_impl_count;                             /* the entry dies when this hits 0 */
    struct cfx_op *reg_prev, *reg_next;                 /* registry order (dispatcher.c) */
};

/* ks without the keys whose slots hold fallthrough kernels (the op's non-fallthrough mask, the
 * per-backend one when the op's masks differ by backend). Idempotent. */
static inline cfx_keyset cfx_op_skip_fallthrough(const cfx_op *op, cfx_keyset ks)
{
    const cfx_keyset *mask = &op->non_fallthrough;
    if (op->per_backend_masks_differ) {
        cfx_backend b = cfx_keys_highest_backend(ks);
        if (b != CFX_BACKEND_INVALID)
            mask = &op->non_fallthrough_per_backend[b - 1];
    }
    return cfx_keyset_and(ks, *mask);
}
/* Same as cfx_op_dispatch_keyset, from an already-computed union of the tensor arguments' key
 * sets. */
static inline cfx_keyset cfx_op_mask_keyset(const cfx_op *op, cfx_keyset args, cfx_local_keys tls)
{
    return cfx_op_skip_fallthrough(op, cfx_keyset_minus(cfx_keyset_or(args, tls.included), tls.excluded));
}

/* The kernel in the slot for ks (may be invalid: see cfx_dispatch_missing_kernel_error). */
static inline const cfx_kernel *cfx_op_kernel_for(const cfx_op *op, cfx_keyset ks)
{
    return &op->table[(unsigned)cfx_keys_table_index(ks)]; /* never negative: no sign extension */
}


/* The dispatcher-wide backend fallback for a table slot (an invalid kernel if none; NULL for
 * an index out of range). Its debug is "registered at FILE:LINE". */
const cfx_kernel *cfx_dispatcher_backend_fallback(int table_index);

/* Records the missing-kernel error for ks on op and returns CFX_ERR_NOTIMPL: PyTorch's
 * reportError text for highestPriorityTypeId(ks) (the "no tensor arguments" variant for
 * Undefined), followed by the computed table. Like c10 it checks the op's invariants first
 * and reports a violation instead (CFX_ERR). */
int cfx_dispatch_missing_kernel_error(const cfx_op *op, cfx_keyset ks);

/* The union of the tensor arguments' key sets (tensor lists included). *missing is set when a
 * tensor argument has no tensor where one is needed: a required (plain) Tensor that is NULL or
 * None (a failure upstream, or a binding error), or a number given for a Tensor or Tensor?
 * (only a mode's call below itself passes one: cfx_mode_redispatch wraps it first). Inline:
 * every call computes it (up to three times per traced node), and a call per use cost more
 * than the walk over two or three arguments. */
static inline uint64_t cfx_op_arg_keys(const cfx_op *op, const cfx_value *stack, bool *missing)
{
    uint64_t ks = 0, m = op->dispatch_arg_mask, req = op->required_tensor_mask;
    *missing = false;
    while (m) {
        int i = __builtin_ctzll(m);
        m &= m - 1;
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            ks |= v->u.t->keys.repr;
        } else if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && v->u.items[j].u.t)
                    ks |= v->u.items[j].u.t->keys.repr;
        } else if ((req >> i & 1) || cfx_value_is_number(*v)) {
            *missing = true;
        }
    }
    return ks;
}

/* The kernel a call of op with stack (all n_args, defaults included) dispatches to, with the
 * key set in *ks: c10's KernelFunction lookup, for the typed entry points (ops_table.h), which
 * then call it unboxed when it has a C function and boxed otherwise. NULL if a required
 * (plain) Tensor argument is NULL (a failure upstream: no new error) or if the slot has no
 * kernel (the missing-kernel error is recorded). Inline, so that an entry point's whole
 * selection is one function; the error path is not. */
static inline const cfx_kernel *cfx_dispatch_select(const cfx_op *op, const cfx_value *stack, cfx_keyset *ks)
{
    bool missing;
    uint64_t args = cfx_op_arg_keys(op, stack, &missing);
    if (missing)
        return NULL;
    cfx_keyset s = cfx_op_mask_keyset(op, (cfx_keyset){args}, cfx_keys_local());
    const cfx_kernel *k = cfx_op_kernel_for(op, s);
    if (!cfx_kernel_is_valid(k)) {
        cfx_dispatch_missing_kernel_error(op, s);
        return NULL;
    }
    *ks = s;
    return k;
}

/* Records why the slot for an (already masked) ks cannot be called (nothing there, or no
 * boxed entry) and returns the status (dispatcher.c). */
int cfx_dispatch_slot_error(const cfx_op *op, cfx_keyset ks);

/* Calls the kernel in the slot for ks, which has its fallthrough keys masked out, boxed. An
 * invalid slot is all zero (cfx_op_check_invariants checks it), so a boxed entry alone says it
 * can be called. */
static inline int cfx_dispatch_call_slot(const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    const cfx_kernel *k = cfx_op_kernel_for(op, ks);
    if (!k->boxed)
        return cfx_dispatch_slot_error(op, ks);
    return k->boxed(k->ctx, op, ks, stack);
}

/* cfx_op_redispatch (dispatcher.h), inline for the dispatch path's own redispatches (the
 * PythonTLSSnapshot fallback), which the exported function wraps: ks with its fallthrough keys
 * masked out (idempotent), then the slot's kernel. */
static inline int cfx_dispatch_redispatch(const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    return cfx_dispatch_call_slot(op, cfx_op_skip_fallthrough(op, ks), stack);
}

/* cfx_op_dispatch_keyset (a NULL or None plain Tensor contributes nothing). */
static inline cfx_keyset cfx_dispatch_keyset(const cfx_op *op, const cfx_value *stack)
{
    bool missing;
    uint64_t args = cfx_op_arg_keys(op, stack, &missing);
    return cfx_op_mask_keyset(op, (cfx_keyset){args}, cfx_keys_local());
}

/* cfx_op_dispatch_stack, inline for a mode calling an op below itself (cfx_mode_redispatch):
 * a fresh dispatch of a full stack. */
static inline int cfx_dispatch_stack(const cfx_op *op, cfx_value *stack)
{
    return cfx_dispatch_call_slot(op, cfx_dispatch_keyset(op, stack), stack);
}

/* Counts the changes of any op's dispatch table slot (registrations, deregistrations,
 * fallbacks), so that a cache of what kernels answered (the fake mode's) can tell that a
 * kernel may have changed since. */
extern _Atomic uint64_t cfx_dispatch_tables_generation_raw;
static inline uint64_t cfx_dispatch_tables_generation(void)
{
    return atomic_load_explicit(&cfx_dispatch_tables_generation_raw, memory_order_relaxed);
}

/* Deregisters cfx's default fallbacks (fallbacks.c). For tests that install PyTorch's own set
 * of fallbacks to compare dispatch tables with PyTorch's text. */
void cfx_dispatcher_drop_default_fallbacks(void);

#endif
