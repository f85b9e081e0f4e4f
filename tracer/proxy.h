/* proxy.h - the proxy mode: records every operator call into a graph (ProxyTorchDispatchMode).
 *
 * A proxy mode sits in the PROXY slot of the thread's mode stack while make_fx runs the
 * model. For each operator call it receives, it does what PyTorch 1.13's proxy_call does:
 *  - maps the boxed arguments to node arguments (a tensor becomes the node it is bound to;
 *    an unbound tensor becomes a get_attr node created right there: the module's qualified
 *    name for a parameter, else an interned `_tensor_constantN`), and splits them into args
 *    and kwargs by the rule of the C++ -> Python hand-over (parseIValuesToPyArgsKwargs):
 *    kwarg-only arguments go to kwargs unless equal to their default, positional arguments
 *    are cut after the last one that differs from its default (equality as IValue's ==,
 *    which compares the kind too: alpha=1.0 is not the default alpha=1);
 *  - turns aten::lift_fresh into aten::lift_fresh_copy;
 *  - creates the call_function node (named after the overload packet: add, sum_1, add_) with
 *    the C call site as its stack_trace;
 *  - re-dispatches below itself (the fake mode, or the kernels) and binds the results to the
 *    node: a tensor to the node itself, each element of a tuple or list result to its own
 *    operator.getitem node (created for every element, used or not). An in-place op returns
 *    its mutated argument, which is thereby re-bound to the in-place node;
 *  - stores meta: fake results get `val` and `tensor_meta`, real ones `tensor_meta` only, a
 *    single scalar result `val`.
 * Bindings live on the tensors (tensor_ext.h) under the mode's own owner id, so two proxy
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

/* A proxy mode recording into gm's graph (gm must outlive it); parameters of module (may be
 * NULL) become get_attr nodes with their names. fake: results are fake tensors (meta gets
 * `val`). The mode is reference counted through its cfx_mode base; release with
 * cfx_mode_release(cfx_proxy_mode_base(pm)). */
cfx_proxy_mode *cfx_proxy_mode_new(cfx_graph_module *gm, const cfx_module *module, bool fake);
cfx_mode *cfx_proxy_mode_base(cfx_proxy_mode *pm);
/* The proxy mode a cfx_mode is, or NULL if it is another kind of mode. */
cfx_proxy_mode *cfx_proxy_mode_from_base(cfx_mode *m);
cfx_graph *cfx_proxy_mode_graph(const cfx_proxy_mode *pm);
uint64_t cfx_proxy_mode_owner(const cfx_proxy_mode *pm);

/* Tracer.create_arg for a tensor: its bound node, else a new get_attr node (parameter or
 * interned constant, registered on the graph module). NULL + error on failure. */
cfx_node *cfx_proxy_node_of(cfx_proxy_mode *pm, cfx_tensor *t);
/* track_tensor + set_meta: binds t to n and stores n's meta from t. */
int cfx_proxy_track(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n);
/* track_tensor_tree for an op's returns outs[0..n_outs) produced by node n. */
int cfx_proxy_track_outputs(cfx_proxy_mode *pm, cfx_node *n, const cfx_value *outs, int n_outs);
/* Removes this mode's binding from t (make_fx does it for tensors that outlive the trace). */
void cfx_proxy_untrack(cfx_proxy_mode *pm, cfx_tensor *t);

#endif
