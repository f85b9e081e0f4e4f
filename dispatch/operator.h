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

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/keys.h"
#include "dispatch/schema.h"
#include "dispatch/tags.h"


typedef enum cfx_alias_analysis {
    CFX_ALIAS_CONSERVATIVE = 0,
    CFX_ALIAS_FROM_SCHEMA,
    CFX_ALIAS_PURE_FUNCTION,
    CFX_ALIAS_INTERNAL_SPECIAL_CASE,
} cfx_alias_analysis;

/* "CONSERVATIVE", "FROM_SCHEMA", "PURE_FUNCTION", "INTERNAL_SPECIAL_CASE"; NULL otherwise. */
CFX_API const char *cfx_alias_analysis_name(int kind);
/* The Python binding's parseAliasAnalysisKind: "" -> FROM_SCHEMA, "CONSERVATIVE", "FROM_SCHEMA",
 * "PURE_FUNCTION" -> that kind; anything else records "could not parse <s>" and returns CFX_ERR. */
CFX_API int cfx_alias_analysis_parse(const char *s, int *out);

/* The schema (NULL for an impl-only operator), "ns::name.overload", the tags of its def. */
CFX_API const cfx_schema *cfx_op_schema(const cfx_op *op);
CFX_API const char *cfx_op_name(const cfx_op *op);
CFX_API cfx_tag_set cfx_op_tags(const cfx_op *op);
CFX_API bool cfx_op_has_tag(const cfx_op *op, cfx_tag t);
/* torch._C._dispatch_has_kernel_for_dispatch_key: a kernel is registered directly on key k
 * (runtime or alias key: CompositeImplicitAutograd, where catch-all kernels go, says whether
 * the op has a decomposition that runs in the dispatcher). */
CFX_API bool cfx_op_has_kernel_for_key(const cfx_op *op, cfx_dispatch_key k);
/* Dense and never reused: layers above dispatch keep their per-op facts in tables indexed by
 * it (the proxy mode's plans, ...), so an operator carries no state of theirs. */
CFX_API uint32_t cfx_op_id(const cfx_op *op);
/* One more than the largest op id handed out so far (a bound for per-op tables). */
CFX_API uint32_t cfx_op_id_bound(void);

/* The key set a call is dispatched with, from its boxed arguments and the thread's local
 * sets: ((union of tensor args' sets | included) - excluded) & non-fallthrough mask. */
CFX_API cfx_keyset cfx_op_dispatch_keyset(const cfx_op *op, const cfx_value *stack);
/* dumpState / dumpComputedTable in PyTorch's exact text (malloc'd). */
CFX_API char *cfx_op_dump_state(const cfx_op *op);
CFX_API char *cfx_op_dump_computed_table(const cfx_op *op);
/* checkInvariants: CFX_OK, or an error whose message is PyTorch's "Canonical state" text. */
CFX_API int cfx_op_check_invariants(const cfx_op *op);

#endif
