/* ops.h - the built-in operators.
 *
 * Generated from the op table (dispatch/ops.def) into dispatch/ops_gen.h: for every operator
 * the id CFX_OPID_<id>, the typed entry point cfx_op_<id>(site, args...), its _redispatch
 * twin (an explicit key set, for kernels that redispatch below themselves), and the
 * convenience macro cfx_<name>(args...) that records the caller's line and fills in
 * PyTorch's defaults for trailing arguments left out (op_api.h has the conventions,
 * docs/ops.md the list):
 *
 *     cfx_tensor *y = cfx_relu(cfx_add(x, cfx_mul(x, w)));
 *     cfx_tensor *s = cfx_sum(y, CFX_INTS(1));
 *     cfx_tensor *v = cfx_view(s, CFX_INTS(2, -1));
 *     cfx_max_dim_result m = cfx_max_dim(y, 1);          (m.values, m.indices)
 *
 * An entry point goes through the dispatcher (so modes and tracers see the call) and returns
 * NULL (all members NULL for several returns) on error, with the error recorded, or when an
 * argument tensor is NULL (no new error: NULL propagates). Ops returning no tensor return
 * their value; ask cfx_error_occurred() whether it failed. */
#ifndef CFX_OPS_H
#define CFX_OPS_H

#include "dispatch/op_api.h"
#include "dispatch/ops_gen.h"

/* The operator handle of a built-in (registering the built-ins on first use); NULL with an
 * error recorded if registration failed or id is not a built-in's. */
CFX_API cfx_op *cfx_builtin_op(cfx_opid id);
/* Registers the built-in operators (idempotent; the dispatcher's init runs it). CFX_OK or the
 * first registration failure. */
CFX_API int cfx_builtin_ops_init(void);

/* Tensor.item(): the single element as a double, through aten::_local_scalar_dense (so modes
 * see it: a fake tensor cannot answer it). NAN with an error recorded on failure (NAN without
 * a new message for a NULL input); cfx_error_occurred() tells a NaN element from an error. */
CFX_API double cfx_item(cfx_tensor *t);

/* torch.tensor(data, dtype=dtype): a CPU tensor of the given sizes holding data (row-major,
 * numel(sizes) values, converted to dtype as c10 converts a double), made outside the
 * dispatcher and then passed through aten::lift_fresh, as torch.tensor does. A mode or tracer
 * therefore sees one lift_fresh call on a tensor it has never seen (make_fx interns it as
 * _tensor_constantN and records lift_fresh_copy). Ownership as for an operator result; NULL
 * with the error recorded on bad sizes or if lift_fresh fails. The macro records the caller's
 * line as the call site. */
CFX_API cfx_tensor *cfx_tensor_literal_at(const cfx_site *site, const double *data, const int64_t *sizes, int ndim,
                                          cfx_dtype dtype);
/* variadic, so that a sizes compound literal needs no extra parentheses:
 * cfx_tensor_literal(v, (int64_t[]){2, 3}, 2, CFX_FLOAT32) */
#define cfx_tensor_literal(...) cfx_tensor_literal_at(CFX_HERE, __VA_ARGS__)

#endif
