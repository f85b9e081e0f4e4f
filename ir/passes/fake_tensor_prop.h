/* fake_tensor_prop.h - refresh every node's meta by running the graph on fake tensors
 * (torch.fx.passes.fake_tensor_prop.FakeTensorProp, with make_fx's tensor_meta).
 *
 * After a pass rewrote a graph, or after a graph was loaded from JSON, node meta may be stale
 * or missing. This pass runs the graph through the interpreter (ir/interpreter.h) with a fake
 * mode (dispatch/fake.h) entered, so every operator runs its Meta kernel on shapes only, and
 * writes what each node produced:
 *   - meta["val"] as FakeTensorProp writes it: the fake tensor's metadata for a tensor, the
 *     number for an int / float / bool, a tuple or list of those for a container (an
 *     operator with several returns, a Tensor[] return); nothing when the value is None. As in
 *     FakeTensorProp, every node gets one, the get_attr and output nodes included (the output
 *     node's val is the returned structure, which make_fx itself does not record);
 *   - meta["tensor_meta"] as make_fx's set_meta writes it: on placeholder and call_function
 *     nodes whose value is a tensor (requires_grad kept from the node's previous tensor_meta,
 *     False when it had none).
 * Other meta (stack_trace, free-form entries) is left as it is, and so is a slot the node's
 * new value gives nothing for.
 *
 * Inputs: real or fake tensors and scalars, as FakeTensorProp.propagate takes them (tensors
 * are converted with from_tensor: their data is never read). A fake input's fake mode is the
 * one used; otherwise a fresh one, which accepts the graph module's real attributes. Without
 * inputs, cfx_fake_tensor_prop_from_meta makes them from the placeholders' own vals (a graph
 * loaded from JSON carries them). Failures (an operator's meta kernel rejecting new shapes,
 * say) are reported as the interpreter reports them, naming the node; nodes before it have
 * been refreshed, the rest keep their old meta. */
#ifndef CFX_IR_PASSES_FAKE_TENSOR_PROP_H
#define CFX_IR_PASSES_FAKE_TENSOR_PROP_H

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/graph.h"
#include "ir/graph_module.h"

/* FakeTensorProp(gm).propagate(*args): g's meta refreshed; module supplies get_attr's
 * tensors (NULL: none). CFX_OK or a negative status with the error recorded. */
CFX_API int cfx_fake_tensor_prop(cfx_graph *g, const cfx_graph_module *module, const cfx_value *args, int n_args);

/* The same with inputs made from the placeholders' meta["val"] (a fake tensor with the val's
 * shape, strides, dtype and device; the number of a scalar val). A placeholder without a val,
 * or with a container val, is an error naming it. */
CFX_API int cfx_fake_tensor_prop_from_meta(cfx_graph *g, const cfx_graph_module *module);

/* A fake tensor with the size, stride, dtype and device a tensor val records:
 * empty_strided(size, stride, dtype=, device=) under the fake mode the caller has entered;
 * for a token val, that tensor marked a token, as a CFX_V_TOKEN value. *out belongs to the
 * current scope. */
CFX_API int cfx_fake_tensor_of_val(const cfx_meta_val *v, cfx_value *out);

#endif
