/* tensor_ext.c - the optional per-tensor block modes attach state to (tensor_ext.h).
 *
 * Most tensors never get one, so the block is allocated lazily and tensor.c only pays a NULL
 * check when freeing. Bindings are a small array searched linearly: a tensor is bound by at
 * most a handful of tracers at once (nested make_fx), so a map would cost more than it saves.
 * Owner ids come from a process-wide atomic counter so that threads tracing concurrently get
 * distinct owners. */
#include <stdatomic.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/tensor_ext.h"

struct cfx_tensor_ext *cfx_tensor_ext_get(cfx_tensor *t)
{
    if (!t)
        return NULL;
    if (!t->ext) {
        t->ext = calloc(1, sizeof *t->ext);
        if (!t->ext)
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    return t->ext;
}

void cfx_tensor_ext_free(struct cfx_tensor_ext *ext)
{
    if (!ext)
        return;
    for (uint32_t i = 0; i < ext->n_bindings; i++)
        if (ext->bindings[i].owner && ext->bindings[i].free_fn)
            ext->bindings[i].free_fn(ext->bindings[i].data);
    free(ext->bindings);
    cfx_mode_release(ext->mode);
    free(ext);
}

uint64_t cfx_binding_owner_new(void)
{
    static atomic_uint_fast64_t next = 1;
    return (uint64_t)atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

static cfx_tensor_binding *find(const cfx_tensor *t, uint64_t owner)
{
    if (!t || !t->ext || !owner)
        return NULL;
    for (uint32_t i = 0; i < t->ext->n_bindings; i++)
        if (t->ext->bindings[i].owner == owner)
            return &t->ext->bindings[i];
    return NULL;
}

void *cfx_tensor_binding_get(const cfx_tensor *t, uint64_t owner)
{
    cfx_tensor_binding *b = find(t, owner);
    return b ? b->data : NULL;
}

int cfx_tensor_binding_set(cfx_tensor *t, uint64_t owner, void *data, void (*free_fn)(void *))
{
    if (!t || !owner)
        return cfx_error_set(CFX_ERR, NULL, "cfx_tensor_binding_set: NULL tensor or owner 0");
    cfx_tensor_binding *b = find(t, owner);
    if (b) {
        /* Rebinding (an in-place op re-tracked) frees the old record first. */
        if (b->free_fn && b->data != data)
            b->free_fn(b->data);
        b->data = data;
        b->free_fn = free_fn;
        return CFX_OK;
    }
    struct cfx_tensor_ext *e = cfx_tensor_ext_get(t);
    if (!e)
        return CFX_ERR_NOMEM;
    for (uint32_t i = 0; i < e->n_bindings; i++) {
        if (!e->bindings[i].owner) {
            e->bindings[i] = (cfx_tensor_binding){owner, data, free_fn};
            return CFX_OK;
        }
    }
    if (e->n_bindings == e->cap_bindings) {
        uint32_t cap = e->cap_bindings ? 2 * e->cap_bindings : 2;
        cfx_tensor_binding *nb = realloc(e->bindings, cap * sizeof *nb);
        if (!nb)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        e->bindings = nb;
        e->cap_bindings = cap;
    }
    e->bindings[e->n_bindings++] = (cfx_tensor_binding){owner, data, free_fn};
    return CFX_OK;
}

void cfx_tensor_binding_clear(cfx_tensor *t, uint64_t owner)
{
    cfx_tensor_binding *b = find(t, owner);
    if (!b)
        return;
    void *data = b->data;
    void (*free_fn)(void *) = b->free_fn;
    *b = (cfx_tensor_binding){0, NULL, NULL};
    if (free_fn)
        free_fn(data);
}
