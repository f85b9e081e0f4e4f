/* tensor_ext.h - per-tensor state that modes attach to a cfx_tensor (tensor.h's `ext`).
 *
 * PyTorch keeps such state on the tensor's Python object: a FakeTensor's fake_mode and
 * fake_device, and for every active proxy tracer a weak-keyed slot mapping the tensor to its
 * graph proxy. cfx keeps it in the tensor header itself (struct cfx_tensor_ext, tensor.h),
 * empty (no mode, no bindings) for a plain tensor, released with the tensor:
 *
 *  - mode / fake_device: the mode the tensor belongs to (a strong reference) and the device
 *    users see. A tensor with a mode carries the Python and PythonTLSSnapshot keys, so with no
 *    mode active the Python fallback enters that mode for the call, as FakeTensor's
 *    __torch_dispatch__ does. Fake tensors use this (fake.h).
 *  - bindings: (owner id, data) pairs, one per owner. A tracer takes a fresh owner id from
 *    cfx_binding_owner_new() and binds each tensor it tracks to its node. Owner ids are never
 *    reused, so a binding left behind by a finished tracer can never be mistaken for one of a
 *    later tracer at the same address; free_fn (if any) runs when the binding is replaced,
 *    cleared, or the tensor dies, and must not touch the (possibly gone) owner. The first
 *    CFX_TENSOR_EXT_INLINE_BINDINGS live in the header; more go to a heap array.
 *
 * The state belongs to exactly one tensor: it is never copied into views or new tensors, and
 * dies with its tensor (tensor_internal.h). */
#ifndef CFX_TENSOR_EXT_H
#define CFX_TENSOR_EXT_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/error.h"
#include "dispatch/mode.h"
#include "dispatch/tensor.h"

/* The mode a tensor belongs to, or NULL. */
static inline cfx_mode *cfx_tensor_mode(const cfx_tensor *t)
{
    return t ? t->ext.mode : NULL;
}

/* A fresh owner id for bindings (process-wide, never 0, never reused). */
CFX_API uint64_t cfx_binding_owner_new(void);
/* The data bound to t by owner, or NULL. */
CFX_API void *cfx_tensor_binding_get(const cfx_tensor *t, uint64_t owner);
/* Binds data to t for owner, replacing (and freeing) an earlier binding of the same owner. */
CFX_API int cfx_tensor_binding_set(cfx_tensor *t, uint64_t owner, void *data, void (*free_fn)(void *));
/* Removes owner's binding from t (runs its free_fn); no-op if none. */
CFX_API void cfx_tensor_binding_clear(cfx_tensor *t, uint64_t owner);

#endif
