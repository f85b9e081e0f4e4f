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

#include "dispatch/export.h"
#include "dispatch/mode.h"
#include "dispatch/operator.h"

/* Built-in operators and fallbacks are registered on first use of the dispatcher (or of any
 * op wrapper); calling this explicitly is optional and idempotent. */
CFX_API void cfx_dispatcher_init(void);

/* The operator with a schema for "ns::name.overload" (overload may be omitted for ""). NULL if
 * none is defined (impl-only operators are not found, as in PyTorch), with PyTorch's error
 * recorded: "Could not find schema for aten::sine.". cfx_op_lookup is the same without an
 * error, for code that only asks whether an operator exists. */
CFX_API cfx_op *cfx_op_find(const char *qualified_name);
CFX_API cfx_op *cfx_op_lookup(const char *qualified_name);
/* All defined operators, in registration order; returns the count written (or needed). */
CFX_API int cfx_op_list(cfx_op **out, int cap);
/* dumpState of every operator with kernels but no schema (findDanglingImpls). */
CFX_API int cfx_op_list_dangling(cfx_op **out, int cap);
/* checkInvariants on every operator; CFX_OK or the first failure. */
CFX_API int cfx_dispatcher_check_all_invariants(void);

/* Calls op with boxed arguments (torch.ops.ns.name.overload(*args)). stack has room for cap
 * values, which must be at least max(n_args, n_returns) of the schema (an error otherwise:
 * nothing is written past cap); n is the number of arguments given (positional, in schema
 * order); missing trailing arguments are filled from schema defaults. Every argument is
 * checked against its schema type before dispatch, with PyTorch's binding errors:
 * "ns::name() is missing value for argument 'x'. Declaration: <schema>", "... expected at most
 * N argument(s) but received M argument(s). ...", "ns::name() Expected a value of type 'Tensor'
 * for argument 'other' but instead found type 'str'. ...", and for a NULL/None plain Tensor
 * "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #i 'x'".
 * Returns CFX_OK with the returns at stack[0..n_returns), or a negative status with the error
 * recorded (op NULL: the failed lookup's error, kept). */
CFX_API int cfx_op_call(cfx_op *op, cfx_value *stack, int n, int cap);
/* Calls the kernel for an explicit key set; for kernels that redispatch, with
 * ks & cfx_keyset_full_after(own key). The thread's include/exclude sets are not re-applied
 * (ks already went through them); the op's fallthrough mask is (idempotent). Missing kernel:
 * the error below. */
CFX_API int cfx_op_redispatch(const cfx_op *op, cfx_keyset ks, cfx_value *stack);
/* A fresh dispatch of a full stack (all schema arguments, defaults included): the key set of
 * cfx_op_dispatch_keyset (tensor arguments + the thread's local sets), then cfx_op_redispatch.
 * What `func(*args)` inside a mode's handler does (cfx_mode_redispatch). */
CFX_API int cfx_op_dispatch_stack(const cfx_op *op, cfx_value *stack);

#endif
