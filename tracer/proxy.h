/* proxy.h - the proxy mode: records every operator call into a graph (ProxyTorchDispatchMode).
 *
 * A proxy mode sits in the PROXY slot of the thread's mode stack while make_fx runs the
 * model. For each operator call it receives, it does what PyTorch 2.13's proxy_call does:
 *  - maps the boxed arguments to node arguments (a tensor becomes the node it is bound to;
 *    an unbound tensor becomes a get_attr node created right there: `_param_constantN` for a
 *    tensor of the model's cfx_module, `_tensor_constantN` for any other), and splits them
 *    into args and kwargs by the rule of the C++ -> Python hand-over
 *    (parseIValuesToPyArgsKwargs): kwarg-only arguments go to kwargs unless equal to their
 *    default, positional arguments are cut after the last one that differs from its default
 *    (equality as IValue's ==, which compares the kind too: alpha=1.0 is not alpha=1);
 *  - turns aten::lift_fresh into aten::lift_fresh_copy, and propagates the constants of
 *    one-element literals (item() of a literal is its value, recorded as a number);
 *  - refuses a data-dependent operator on real tensors with proxy_call's text;
 *  - creates the call_function node (named after the overload packet: add, sum_1, add_);
 *  - re-dispatches below itself (the fake mode, or the kernels) and binds the results to the
 *    node: a tensor to the node itself, each element of a tuple or list result to its own
 *    operator.getitem node (created for every element, used or not). An in-place op returns
 *    its mutated argument, which is thereby re-bound to the in-place node;
 *  - stores meta as set_meta does: `val` (a fake-tensor description: a real tensor's has
 *    storage offset 0) and `tensor_meta` for tensors, a tuple or list val for container
 *    results, nothing for int / float / bool results, val only on get_attr nodes; and, when
 *    recording stack traces, the C call site as `stack_trace` on every node it creates.
 * Bindings live on the tensors (tensor_ext.h) under the mode's own owner ids, so two proxy
 * modes (two threads tracing, or nested traces) never see each other's nodes.
 *
 * The functions below are also what other layers use to trace through the proxy mode by
 * hand (higher-order operators: a HOP's proxy implementation maps its operands with
 * cfx_proxy_node_of and binds its outputs with cfx_proxy_track_outputs). */
#ifndef CFX_TRACER_PROXY_H
#define CFX_TRACER_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/mode.h"
#include "dispatch/tensor.h"
#include "ir/graph_module.h"
#include "tracer/module.h"

typedef struct cfx_proxy_mode cfx_proxy_mode;

/* A proxy mode recording into gm's graph (gm must outlive it); the tensors of module (may be
 * NULL) are its parameters (interned as `_param_constantN`). The mode is reference counted
 * through its cfx_mode base; release with cfx_mode_release(cfx_proxy_mode_base(pm)). */
cfx_proxy_mode *cfx_proxy_mode_new(cfx_graph_module *gm, const cfx_module *module);
/* PythonKeyTracer.record_stack_traces: meta["stack_trace"] on the nodes the mode creates
 * (off by default, as in make_fx). */
void cfx_proxy_mode_set_record_stack_traces(cfx_proxy_mode *pm, bool on);
/* `with proxy_mode:` a proxy mode already set (an outer trace) is stashed until the exit. */
int cfx_proxy_mode_enter(cfx_proxy_mode *pm);
int cfx_proxy_mode_exit(cfx_proxy_mode *pm);
cfx_mode *cfx_proxy_mode_base(cfx_proxy_mode *pm);
/* The proxy mode a cfx_mode is, or NULL if it is another kind of mode. */
cfx_proxy_mode *cfx_proxy_mode_from_base(cfx_mode *m);
cfx_graph *cfx_proxy_mode_graph(const cfx_proxy_mode *pm);
cfx_graph_module *cfx_proxy_mode_graph_module(const cfx_proxy_mode *pm);
uint64_t cfx_proxy_mode_owner(const cfx_proxy_mode *pm);

/* Tracer.create_arg for a tensor: its bound node, else a new get_attr node (an interned
 * parameter or constant, registered on the graph module). NULL + error on failure. */
cfx_node *cfx_proxy_node_of(cfx_proxy_mode *pm, cfx_tensor *t);
/* track_tensor + set_meta: binds t to n (no constant) and stores n's meta from t. */
int cfx_proxy_track(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n);
/* The same for the tensor of an effect token (CFX_V_TOKEN): n's val is a token val. */
int cfx_proxy_track_token(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n);
/* track_tensor_tree for an op's returns outs[0..n_outs) produced by node n. */
int cfx_proxy_track_outputs(cfx_proxy_mode *pm, cfx_node *n, const cfx_value *outs, int n_outs);
/* Tracer.create_arg for an opaque value that is no graph input (a script object, a generator:
 * tracer/proxy_opaque.c): a get_attr node for this use of the graph-module attribute holding
 * it, named `<base>N` (get_fresh_qualname) the first time. NULL + error on failure. */
cfx_node *cfx_proxy_opaque_attr_node(cfx_proxy_mode *pm, cfx_value v, const char *base);
/* Removes this mode's bindings (node, constant) from t (make_fx does it for tensors that
 * outlive the trace). */
void cfx_proxy_untrack(cfx_proxy_mode *pm, cfx_tensor *t);

#endif
