/* dispatcher.h - the operator registry and the call path (c10::Dispatcher).
 *
 * The registry maps "ns::name.overload" to its cfx_op, holds the dispatcher-wide backend
 * fallbacks, and runs calls: compute the key set, pick the slot, call the kernel. Kernels
 * redispatch with the key set below their own key (cfx_keyset_full_after). A missing kernel
 * gives PyTorch's NotImplementedError text ("Could not run 'ns::op' with arguments from the
 * 'Meta' backend. ... 'ns::op' is only available for these backends: [...]" + the computed
 * table). The registry is process-wide; registration is serialised by a lock, while calls read
 * the tables without locking (register before you call from several threads). */
#ifndef CFX_DISPATCHER_H
#define CFX_DISPATCHER_H

#include "dispatch/mode.h"
#include "dispatch/operator.h"

/* Built-in operators and fallbacks are registered on first use of the dispatcher (or of any
 * op wrapper); calling this explicitly is optional and idempotent. */
void cfx_dispatcher_init(void);

/* The operator with a schema for "ns::name.overload" (overload may be omitted for ""), or
 * NULL if none is defined (impl-only operators are not found, as in PyTorch). */
cfx_op *cfx_op_find(const char *qualified_name);
/* All defined operators, in registration order; returns the count written (or needed). */
int cfx_op_list(cfx_op **out, int cap);
/* dumpState of every operator with kernels but no schema (findDanglingImpls). */
int cfx_op_list_dangling(cfx_op **out, int cap);
/* checkInvariants on every operator; CFX_OK or the first failure. */
int cfx_dispatcher_check_all_invariants(void);

/* Calls op with boxed arguments. stack has room for max(n_args, n_returns) values; n is the
 * number of arguments given (positional, in schema order); missing trailing arguments are
 * filled from schema defaults. PyTorch's binding errors: "ns::name() is missing value for
 * argument 'x'. Declaration: <schema>", "ns::name() expected at most N argument(s) but received
 * M argument(s). Declaration: ...", and for a NULL/None plain Tensor "Expected a proper Tensor
 * but got None (or an undefined Tensor in C++) for argument #i 'x'". Returns CFX_OK with the
 * returns at stack[0..n_returns), or a negative status with the error recorded. */
int cfx_op_call(cfx_op *op, cfx_value *stack, int n);
/* The typed fast path (used by the generated wrappers in ops.c): computes the call's key set
 * from the boxed arguments (stack holds all n_args, defaults included) and returns the kernel
 * to run, storing the key set in *ks. Returns NULL if a required (non-optional) Tensor
 * argument is NULL (no new error: NULL propagates) or if the slot has no kernel (the
 * missing-kernel error is recorded). The caller then calls k->unboxed with its typed
 * arguments when it is non-NULL, else k->boxed on the stack. */
const cfx_kernel *cfx_dispatch_select(const cfx_op *op, const cfx_value *stack, cfx_keyset *ks);

/* Calls the kernel for an explicit key set; for kernels that redispatch, with
 * ks & cfx_keyset_full_after(own key). The thread's include/exclude sets are not re-applied
 * (ks already went through them); the op's fallthrough mask is (idempotent). Missing kernel:
 * the error below. */
int cfx_op_redispatch(const cfx_op *op, cfx_keyset ks, cfx_value *stack);
/* The same call, inline, for the fallbacks every traced call passes through (python_fallback.c):
 * a slot that cannot be called goes to cfx_op_redispatch, which reports why. */
static inline int cfx_op_redispatch_inline(const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    ks = cfx_op_skip_fallthrough(op, ks);
    const cfx_kernel *k = cfx_op_kernel_for(op, ks);
    if (__builtin_expect(k->boxed != NULL, 1)) /* an invalid slot is all zero */
        return k->boxed(k->ctx, op, ks, stack);
    return cfx_op_redispatch(op, ks, stack);
}
/* Whether a call with key set ks reaches the Python key next, finds the Python fallback there
 * and a mode set: the fallback would then only hand the call to the top mode, which
 * cfx_mode_call_top_python / _snapshot do directly (dispatcher.c's fresh dispatch and the
 * PythonTLSSnapshot fallback take that shortcut). Python's slot and shift are constants. */
static inline bool cfx_op_python_fallback_next(const cfx_op *op, cfx_keyset ks)
{
    return (ks.repr >> CFX_MODE_PYTHON_SHIFT) == 1 && op->table[CFX_MODE_PYTHON_SLOT].boxed == cfx_python_fallback &&
           cfx_mode_any_set();
}
/* A fresh dispatch of a full stack (all schema arguments, defaults included): the key set of
 * cfx_op_dispatch_keyset (tensor arguments + the thread's local sets, a NULL required Tensor
 * contributing nothing), then its kernel as cfx_op_redispatch calls it. cfx_mode_redispatch's
 * body: every traced node runs it twice, so the key set is masked once, not twice. */
int cfx_op_dispatch_stack(const cfx_op *op, cfx_value *stack);
/* Records the missing-kernel error for ks on op and returns CFX_ERR_NOTIMPL: PyTorch's
 * reportError text for highestPriorityTypeId(ks) (the "no tensor arguments" variant for
 * Undefined), followed by the computed table. Like c10 it checks the op's invariants first
 * and reports a violation instead (CFX_ERR). */
int cfx_dispatch_missing_kernel_error(const cfx_op *op, cfx_keyset ks);

/* The dispatcher-wide backend fallback for a table slot (an invalid kernel if none; NULL for
 * an index out of range). Its debug is "registered at FILE:LINE". */
const cfx_kernel *cfx_dispatcher_backend_fallback(int table_index);

/* Deregisters cfx's default fallbacks (fallbacks.c). For tests that install PyTorch's own set
 * of fallbacks to compare dispatch tables with PyTorch's text. */
void cfx_dispatcher_drop_default_fallbacks(void);

#endif
