/* tensor_ext.h - per-tensor state that modes attach to a cfx_tensor (tensor.h's `ext`).
 *
 * PyTorch keeps such state on the tensor's Python object: a FakeTensor's fake_mode and
 * fake_device, and for every active proxy tracer a weak-keyed slot mapping the tensor to its
 * graph proxy. cfx keeps it in one optional block hanging off the tensor, allocated the first
 * time something is attached and freed with the tensor:
 *
 *  - mode / fake_device: the mode the tensor belongs to (a strong reference) and the device
 *    users see. A tensor with a mode carries the Python and PythonTLSSnapshot keys, so with no
 *    mode active the Python fallback enters that mode for the call, as FakeTensor's
 *    __torch_dispatch__ does. Fake tensors use this (fake.h).
 *  - bindings: (owner id, data) pairs, one per owner. A tracer takes a fresh owner id from
 *    cfx_binding_owner_new() and binds each tensor it tracks to its node. Owner ids are never
 *    reused, so a binding left behind by a finished tracer can never be mistaken for one of a
 *    later tracer at the same address; free_fn (if any) runs when the binding is replaced,
 *    cleared, or the tensor dies, and must not touch the (possibly gone) owner.
 *
 * tensor.c must call cfx_tensor_ext_free(t->ext) when it frees a tensor, and must not copy
 * `ext` into views or new tensors: the block belongs to exactly one tensor. */
#ifndef CFX_TENSOR_EXT_H
#define CFX_TENSOR_EXT_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/mode.h"
#include "dispatch/tensor.h"

typedef struct cfx_tensor_binding {
    uint64_t owner;             /* 0 = unused */
    void *data;
    void (*free_fn)(void *data); /* may be NULL */
} cfx_tensor_binding;

/* Bindings held in the block itself: one tracer (and one nested one) never allocate. */
#define CFX_TENSOR_EXT_INLINE_BINDINGS 2

struct cfx_tensor_ext {
    cfx_mode *mode;         /* strong reference, or NULL */
    cfx_device fake_device; /* meaningful when mode is set */
    bool is_fake;           /* mode is a fake mode and the tensor is one of its fakes */
    uint32_t n_bindings, cap_bindings;
    cfx_tensor_binding *bindings; /* points at inline_bindings until more are needed */
    cfx_tensor_binding inline_bindings[CFX_TENSOR_EXT_INLINE_BINDINGS];
};

/* t's extension block, created (empty) on first use. NULL + error on allocation failure. */
struct cfx_tensor_ext *cfx_tensor_ext_get(cfx_tensor *t);
/* Frees the block: runs binding free_fns and releases the mode reference. NULL-safe. Called
 * by tensor.c when the tensor is freed. */
void cfx_tensor_ext_free(struct cfx_tensor_ext *ext);

/* The mode a tensor belongs to, or NULL. */
static inline cfx_mode *cfx_tensor_mode(const cfx_tensor *t)
{
    return t && t->ext ? t->ext->mode : NULL;
}

/* A fresh owner id for bindings (process-wide, never 0, never reused). */
uint64_t cfx_binding_owner_new(void);
/* The data bound to t by owner, or NULL. */
void *cfx_tensor_binding_get(const cfx_tensor *t, uint64_t owner);
/* Binds data to t for owner, replacing (and freeing) an earlier binding of the same owner. */
int cfx_tensor_binding_set(cfx_tensor *t, uint64_t owner, void *data, void (*free_fn)(void *));
/* Removes owner's binding from t (runs its free_fn); no-op if none. */
void cfx_tensor_binding_clear(cfx_tensor *t, uint64_t owner);

#endif
