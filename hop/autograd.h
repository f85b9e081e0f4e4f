/* autograd.h - the little autograd state HOPs need: requires_grad, grad mode, and
 * autograd_not_implemented (torch/_higher_order_ops/utils.py).
 *
 * cfx has no autograd engine. What a HOP's Autograd rule needs from one is: whether grad mode
 * is on (thread-local, default on, as torch.is_grad_enabled()), whether a tensor requires grad,
 * and a way to make an output that fails only if a backward pass ever reaches it (PyTorch's
 * DelayedError node). requires_grad and the delayed error are kept per tensor as a binding
 * (tensor_ext.h) owned by this layer, so they cost nothing on tensors that never have them;
 * like PyTorch's autograd metadata they are not inherited by views or results of other ops.
 *
 * cfx_hop_autograd_not_implemented(hop, deferred_error) registers, at the Autograd key, the
 * kernel autograd_not_implemented(op, deferred_error) returns: it runs the HOP below autograd;
 * then, if grad mode is on and a tensor argument requires grad, either fails with "Autograd
 * not implemented for NAME" (deferred_error false) or marks every tensor output (floating ones
 * get requires_grad; an output that is an argument is first aliased, as DelayedError's output is
 * a new tensor) so that cfx_backward on it reports that message. */
#ifndef CFX_HOP_AUTOGRAD_H
#define CFX_HOP_AUTOGRAD_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/keys.h"
#include "dispatch/tensor.h"
#include "hop/hop.h"

/* torch.is_grad_enabled() / torch.set_grad_enabled(b) for this thread; returns the old mode. */
CFX_API bool cfx_grad_mode_enabled(void);
CFX_API bool cfx_grad_mode_set(bool enabled);

/* t.requires_grad / t.requires_grad_(b). Only floating dtypes may require grad ("only Tensors
 * of floating point and complex dtype can require gradients"). */
CFX_API bool cfx_tensor_requires_grad(const cfx_tensor *t);
CFX_API int cfx_tensor_set_requires_grad(cfx_tensor *t, bool requires_grad);

/* The message a backward through t would raise (a delayed error), or NULL. */
CFX_API const char *cfx_tensor_delayed_error(const cfx_tensor *t);
/* t.backward() as far as cfx can tell: the delayed error if t carries one, PyTorch's "element
 * 0 of tensors does not require grad and does not have a grad_fn" if it does not require grad,
 * else an error saying cfx has no autograd engine. Always a non-OK status. */
CFX_API int cfx_backward(cfx_tensor *t);

/* The autograd keys (c10's autograd_dispatch_keyset): exclude them to run below autograd. */
CFX_API cfx_keyset cfx_autograd_keyset(void);

/* py_impl(DispatchKey.Autograd)(autograd_not_implemented(hop, deferred_error)). */
CFX_API int cfx_hop_autograd_not_implemented(cfx_hop *hop, bool deferred_error);

#endif
