/* tensor_internal.h - what tensor.c needs from tensor_ext.c, and what it offers the rest of
 * the library beyond the public API.
 *
 * tensor.c empties a header's mode state when it makes a tensor and drops it when the tensor
 * dies (a recycled header then starts empty); it never copies it into views or new tensors. */
#ifndef CFX_TENSOR_INTERNAL_H
#define CFX_TENSOR_INTERNAL_H

#include "dispatch/mode_internal.h"
#include "dispatch/tensor_ext.h"

/* Empties the state of a new header (no mode, no bindings). */
static inline void cfx_tensor_ext_init(struct cfx_tensor_ext *ext)
{
    ext->mode = NULL;
    ext->is_fake = false;
    ext->fake_meta = NULL;
    ext->n_bindings = 0;
    ext->bindings = ext->inline_bindings;
    ext->cap_bindings = CFX_TENSOR_EXT_INLINE_BINDINGS;
}
/* owner's binding slot in t (owner != 0), or NULL: cfx_tensor_binding_get's search, inline
 * for the proxy mode, which looks up the node of every tensor argument of every traced call
 * (tensor_ext.c's functions wrap it). */
static inline cfx_tensor_binding *cfx_tensor_binding_find(const cfx_tensor *t, uint64_t owner)
{
    const struct cfx_tensor_ext *e = &t->ext;
    for (uint32_t i = 0; i < e->n_bindings; i++)
        if (e->bindings[i].owner == owner)
            return &e->bindings[i];
    return NULL;
}

/* Runs the binding free_fns, frees a grown binding array and releases the mode reference,
 * leaving the state empty. Called by tensor.c when the tensor dies (inline: under a fake
 * mode every operator output dies through it). */
static inline void cfx_tensor_ext_drop(struct cfx_tensor_ext *ext)
{
    for (uint32_t i = 0; i < ext->n_bindings; i++)
        if (ext->bindings[i].free_fn && ext->bindings[i].owner)
            ext->bindings[i].free_fn(ext->bindings[i].data);
    if (ext->bindings != ext->inline_bindings)
        cfx_free(ext->bindings);
    cfx_mode *mode = ext->mode;
    cfx_tensor_ext_init(ext);
    /* last: the mode may die and free tensors */
    cfx_mode_unref(mode);
}

/* Frees a tensor whose last reference is gone (tensor.c). */
void cfx_tensor_free_unreferenced(cfx_tensor *t);
/* cfx_tensor_release (NULL-safe), inline for the scopes, whose end releases every tensor made
 * in them (most of which live on, held by the caller); the exported function wraps it. */
static inline void cfx_tensor_unref(cfx_tensor *t)
{
    if (t && --t->refcount == 0)
        cfx_tensor_free_unreferenced(t);
}

/* Gives t new sizes and strides in place (same header, same storage and offset): the
 * in-place view ops (squeeze_, unsqueeze_). false + error only when out of memory. */
bool cfx_tensor_set_geometry(cfx_tensor *t, const int64_t *sizes, const int64_t *strides, int ndim);

/* A new tensor with its own storage of nbytes, the sizes and strides copied from a record
 * of a tensor this library made before with the same dtype and device (the fake cache's
 * entries): they were checked when that tensor was made, and nbytes is its storage size, so
 * nothing is checked again. Autoreleased; NULL + error only when out of memory. */
cfx_tensor *cfx_tensor_new_recorded(const int64_t *sizes, const int64_t *strides, int ndim, cfx_dtype dtype,
                                    cfx_device device, uint64_t nbytes);

#endif
