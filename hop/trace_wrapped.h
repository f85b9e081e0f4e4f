/* trace_wrapped.h - trace_wrapped(*args, fn) and its meta assertions
 * (torch/_dynamo/_trace_wrapped_higher_order_op.py, PyTorch 2.13).
 *
 * trace_wrapped(*args, fn=fn) is fn(*args), except that make_fx does not trace into fn: the
 * proxy rule records one opaque call_function node named `trace_wrapped` whose target is a
 * fresh function (printed `torch._dynamo._trace_wrapped_higher_order_op.self_invoke`) that
 * re-invokes the HOP with fn bound, and returns empty_like of the grad argument (args[1] when
 * args[0] is None, as for module backward hooks). fn must return a tensor with the grad's
 * metadata; since nothing runs fn during the trace, cfx records right after the node an
 * `_assert_meta(trace_wrapped, size, stride, dtype)` check (side-effectful), so whoever runs or
 * inlines the call verifies that contract: the interpreter raises "size mismatch", "stride
 * mismatch" or "dtype mismatch". (2.13's docstring promises this assert; its code does not
 * insert it. Pass `strip-asserts` removes it.) The other rules: fake mode "This op should never
 * be invoked here"; no mode: fn(*args) ("Mode should never be enabled for CPU/CUDA key" if a
 * mode is set); Autograd: autograd_not_implemented(deferred_error=True); functionalize:
 * unwrap, redispatch, wrap.
 *
 * Pass `inline-trace-wrapped` replaces each opaque node by fn's body traced with make_fx on
 * tensors of the node's meta, keeping the assertions (which then check the inlined result);
 * `inline-trace-wrapped-drop-asserts` also removes them. fn must be a plain C callable
 * (cfx_callable_new, wrapped by cfx_callable_object) for inlining. */
#ifndef CFX_HOP_TRACE_WRAPPED_H
#define CFX_HOP_TRACE_WRAPPED_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "hop/hop.h"
#include "hop/object.h"
#include "ir/graph_module.h"

CFX_API cfx_hop *cfx_trace_wrapped_hop(void);
/* trace_wrapped(*args, fn=fn) (under no_grad): args[0..n) are fn's arguments. */
CFX_API int cfx_trace_wrapped(const cfx_value *args, int n, cfx_object *fn, cfx_value *out);
/* _assert_meta(grad, size, stride, dtype): the graph target. */
CFX_API extern const cfx_builtin_fn cfx_fn_assert_meta;
/* The fn a trace_wrapped node's target re-invokes, or NULL for another node. */
CFX_API cfx_object *cfx_trace_wrapped_node_fn(const struct cfx_node *n);
/* The inlining pass: keep_asserts false also erases the _assert_meta checks. */
CFX_API int cfx_inline_trace_wrapped(cfx_graph_module *gm, bool keep_asserts, bool *changed);

#endif
