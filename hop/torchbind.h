/* torchbind.h - call_torchbind: method calls on script objects as one graph node
 * (torch/_higher_order_ops/torchbind.py, PyTorch 2.13).
 *
 * With torchbind tracing enabled (enable_torchbind_tracing(), thread-local here), a method
 * call made through cfx_object_call_method becomes `call_torchbind(obj, "method", *args)`:
 *  - CompositeExplicitAutograd: calls the C method of a real object (class.h);
 *  - the proxy mode: records one call_function node `call_torchbind` whose first argument is
 *    the node the object is bound to (its placeholder when it is a make_fx input; an object
 *    that is no input, a module attribute or a global, becomes the graph module attribute
 *    `_torchbind_obj0` read by one get_attr node per use, as 2.13's Tracer.create_arg), computes
 *    the result below itself, binds tensors to the node (meta val / tensor_meta) and stores a
 *    None / int / float / bool result as the node's meta val (anything else is PyTorch's
 *    "Currently, only these constant dtypes are supported ..." error); a real object logs
 *    PyTorch's warning "Tracing torchbind method Cls.method with real ScriptObject. ...";
 *  - the fake mode: runs the method and converts real tensor results to fake ones;
 *  - Autograd: autograd_not_implemented(call_torchbind, deferred_error=True);
 *  - Functionalize: handle_effects (call_torchbind is ORDERED): with effect tokens each call
 *    becomes with_effects(token, call_torchbind, obj, "method", *args), tokens chained.
 * call_torchbind is side-effectful (has_side_effect): dce never removes it and cse never
 * merges two of them, whether or not their results are used.
 *
 * cfx_hop_init() creates the HOPs and the built-in class (idempotent, thread-safe); every
 * function here calls it, and so should a program that loads a graph calling call_torchbind
 * before using anything else from hop/. */
#ifndef CFX_HOP_TORCHBIND_H
#define CFX_HOP_TORCHBIND_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "hop/class.h"
#include "hop/hop.h"

CFX_API void cfx_hop_init(void);

/* torch.ops.higher_order.call_torchbind. */
CFX_API cfx_hop *cfx_call_torchbind_hop(void);
/* call_torchbind(obj, method, *args): args[0..n) are the method's arguments. */
CFX_API int cfx_call_torchbind(cfx_object *obj, const char *method, const cfx_value *args, int n, cfx_value *out);

/* enable_torchbind_tracing(): on for this thread until set back; returns the previous state. */
CFX_API bool cfx_torchbind_tracing_set(bool enabled);
CFX_API bool cfx_torchbind_tracing_enabled(void);

/* obj.method(*args): call_torchbind when torchbind tracing is enabled or obj is fake, else the
 * C method directly (cfx_script_object_call). */
CFX_API int cfx_object_call_method(cfx_object *obj, const char *method, const cfx_value *args, int n,
                                   cfx_value *out);

/* The built-in stateful class `_TorchScriptTesting::_TensorQueue` (PyTorch's test class):
 * a FIFO of tensors built from an init tensor that pop/top return when the queue is empty.
 * Methods: push(Tensor x) -> (), pop() -> Tensor, top() -> Tensor, size() -> int,
 * is_empty() -> bool, float_size() -> float; __obj_flatten__ gives (("queue", [tensors]),). */
CFX_API cfx_class *cfx_tensor_queue_class(void);
CFX_API cfx_object *cfx_tensor_queue_new(cfx_tensor *init);

#endif
