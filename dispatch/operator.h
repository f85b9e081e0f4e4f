/* operator.h - one operator's dispatch state (c10::impl::OperatorEntry).
 *
 * An operator is identified by "ns::name.overload". It may exist with kernels and no schema
 * (an impl arrived before its def; it is then invisible to callers). Kernels are kept per
 * dispatch key (runtime or alias), newest first; the front one is active, older ones are
 * "(inactive)" and come back when the newer one is removed. From these the operator computes
 * its runtime dispatch table with PyTorch's precedence (computeDispatchTableEntryWithDebug):
 *   direct kernel > CompositeExplicitAutogradNonFunctional > CompositeExplicitAutograd >
 *   CompositeImplicitAutograd (unless a backend kernel exists) > Autograd alias >
 *   FuncTorchBatchedDecomposition > backend fallback > missing,
 * and keeps a non-fallthrough mask so fallthrough keys are skipped before a slot is chosen.
 * The table is maintained incrementally and always equals the rules' result; where PyTorch's
 * incremental update misses a dependency (and fails its own checkInvariants, in 2.13 as in
 * 1.13) cfx refreshes the slot anyway (operator.c, update_table). Registration goes through
 * library.h. */
#ifndef CFX_OPERATOR_H
#define CFX_OPERATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/kernel.h"
#include "dispatch/keys.h"
#include "dispatch/schema.h"
#include "dispatch/tags.h"

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
    /* Dense and never reused: layers above dispatch keep their per-op facts in tables indexed
     * by it (the proxy mode's plans, ...), so an op entry carries no state of theirs. */
    uint32_t id;
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

typedef enum cfx_alias_analysis {
    CFX_ALIAS_CONSERVATIVE = 0,
    CFX_ALIAS_FROM_SCHEMA,
    CFX_ALIAS_PURE_FUNCTION,
    CFX_ALIAS_INTERNAL_SPECIAL_CASE,
} cfx_alias_analysis;

/* "CONSERVATIVE", "FROM_SCHEMA", "PURE_FUNCTION", "INTERNAL_SPECIAL_CASE"; NULL otherwise. */
const char *cfx_alias_analysis_name(int kind);
/* The Python binding's parseAliasAnalysisKind: "" -> FROM_SCHEMA, "CONSERVATIVE", "FROM_SCHEMA",
 * "PURE_FUNCTION" -> that kind; anything else records "could not parse <s>" and returns CFX_ERR. */
int cfx_alias_analysis_parse(const char *s, int *out);

static inline const cfx_schema *cfx_op_schema(const cfx_op *op) { return op->schema; }
static inline const char *cfx_op_name(const cfx_op *op) { return op->qualified_name; }
static inline bool cfx_op_has_tag(const cfx_op *op, cfx_tag t) { return (op->tags & cfx_tag_bit(t)) != 0; }
/* One more than the largest op id handed out so far (a bound for per-op tables). */
uint32_t cfx_op_id_bound(void);

/* The key set a call is dispatched with, from its boxed arguments and the thread's local
 * sets: ((union of tensor args' sets | included) - excluded) & non-fallthrough mask. */
cfx_keyset cfx_op_dispatch_keyset(const cfx_op *op, const cfx_value *stack);
/* ks without the keys whose slots hold fallthrough kernels (the op's non-fallthrough mask, the
 * per-backend one when the op's masks differ by backend). Idempotent. */
static inline cfx_keyset cfx_op_skip_fallthrough(const cfx_op *op, cfx_keyset ks)
{
    const cfx_keyset *mask = &op->non_fallthrough;
    if (op->per_backend_masks_differ) {
        cfx_backend b = cfx_keyset_highest_backend(ks);
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
    return &op->table[(unsigned)cfx_keyset_table_index(ks)]; /* never negative: no sign extension */
}

/* dumpState / dumpComputedTable in PyTorch's exact text (malloc'd). */
char *cfx_op_dump_state(const cfx_op *op);
char *cfx_op_dump_computed_table(const cfx_op *op);
/* checkInvariants: CFX_OK, or an error whose message is PyTorch's "Canonical state" text. */
int cfx_op_check_invariants(const cfx_op *op);

#endif
