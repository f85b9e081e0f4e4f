/* decompose.h - operators with a CompositeImplicitAutograd kernel replaced by what they
 * decompose into (make_fx's default behaviour, applied to a graph after the fact).
 *
 * make_fx never records a CompositeImplicitAutograd operator: its kernel runs in the
 * dispatcher before the proxy mode sees the call, and the calls it makes are recorded. A graph
 * built by hand, loaded from JSON, or traced before a decomposition was registered can still
 * hold such a node. For each one (in graph order) this pass re-traces the call exactly as
 * make_fx would: the node's inputs become fake tensors made from their meta["val"] (numbers
 * from a number val), the node is run through the interpreter with a fake mode and a proxy
 * mode entered, and the recorded sub-graph is spliced in before the node:
 *   - its placeholders are the node's input nodes;
 *   - its calls are copied with their meta (val, tensor_meta as the proxy mode set it) and, when
 *     the original node had one, its stack_trace; names come from the graph's name space as
 *     usual (a second `mul` is `mul_1`);
 *   - tensor constants the decomposition made become get_attr nodes of new module attributes
 *     named `_tensor_constant<i>` (make_fx's get_fresh_qualname: the first free i);
 *   - the node's uses go to the sub-graph's result; for an operator with several returns, each
 *     operator.getitem user is replaced by the element it selected. The node is erased.
 * Operators decomposing into other composite ones decompose all the way, as in make_fx.
 *
 * Left alone: operators listed in keep (by qualified name "aten::foo.overload", the default
 * overload also as "aten::foo.default", or by packet "aten::foo" for every overload), impure nodes (side effects, `(a!)` schemas) and operators
 * tagged nondeterministic_seeded (a pass must not change which random calls a graph makes),
 * and a multi-return node with a user that is not a getitem of a constant index.
 *
 * Errors (the graph is unchanged up to the failing node, which stays): an input without a
 * usable meta["val"] ("decompose: cannot re-trace %node: input %x has no meta['val'] (run
 * FakeTensorProp first)"), or the decomposition failing on its fake inputs (its own error).
 *
 * It lives in tracer/, not ir/passes/, because re-tracing is make_fx's job: it uses the
 * proxy mode, which a pass in ir/ cannot reach (ir/ sits below the tracer). */
#ifndef CFX_TRACER_DECOMPOSE_H
#define CFX_TRACER_DECOMPOSE_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/graph_module.h"

typedef struct cfx_decompose_options {
    const char *const *keep; /* operators not to decompose (may be NULL when n_keep is 0) */
    int n_keep;
} cfx_decompose_options;

/* ctx: a cfx_decompose_options, or NULL (decompose every composite operator). CFX_OK (and
 * *changed: some node was decomposed) or an error status with the error recorded. */
CFX_API int cfx_pass_decompose(cfx_graph_module *gm, void *ctx, bool *changed);
/* CFX_OK if every keep-list name names a registered operator (as the pass matches names);
 * otherwise the error, naming the first that does not: a typo would decompose what was meant
 * to be kept. */
CFX_API int cfx_decompose_options_check(const cfx_decompose_options *o);

#endif
