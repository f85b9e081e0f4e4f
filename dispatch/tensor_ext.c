/* tensor_ext.c - the state modes attach to a tensor (tensor_ext.h).
 *
 * The state lives in the tensor header, so under a fake mode, where every operator output gets
 * a mode and a tracer binding, nothing here allocates: the first bindings have slots in the
 * header, and only a tensor bound by more tracers at once grows a heap array.
 *
 * Bindings are a small array searched linearly: a tensor is bound by at most a handful of
 * tracers at once (nested make_fx), so a map would cost more than it saves. Owner ids come
 * from a process-wide atomic counter so that threads tracing concurrently get distinct
 * owners. */
#include <stdatomic.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/tensor_ext.h"
#include "dispatch/tensor_internal.h"


uint64_t cfx_binding_owner_new(void)
{
    static atomic_uint_fast64_t next = 1;
    return (uint64_t)atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

static cfx_tensor_binding *find(const cfx_tensor *t, uint64_t owner)
{
    return t && owner ? cfx_tensor_binding_find(t, owner) : NULL;
}

void *cfx_tensor_binding_get(const cfx_tensor *t, uint64_t owner)
{
    cfx_tensor_binding *b = find(t, owner);
    return b ? b->data : NULL;
}

/* A binding for an owner t does not have yet, in a free slot or a new one. */
static int add(struct cfx_tensor_ext *e, uint64_t owner, void *data, void (*free_fn)(void *))
{
    for (uint32_t i = 0; i < e->n_bindings; i++) {
        if (!e->bindings[i].owner) {
            e->bindings[i] = (cfx_tensor_binding){owner, data, free_fn};
            return CFX_OK;
        }
    }
    if (e->n_bindings == e->cap_bindings) {
        uint32_t cap = 2 * e->cap_bindings;
        bool was_inline = e->bindings == e->inline_bindings;
        cfx_tensor_binding *nb = cfx_realloc(was_inline ? NULL : e->bindings, cap * sizeof *nb);
        if (!nb)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        if (was_inline)
            for (uint32_t i = 0; i < e->n_bindings; i++)
                nb[i] = e->inline_bindings[i];
        e->bindings = nb;
        e->cap_bindings = cap;
    }
    e->bindings[e->n_bindings++] = (cfx_tensor_binding){owner, data, free_fn};
    return CFX_OK;
}

int cfx_tensor_binding_set(cfx_tensor *t, uint64_t owner, void *data, void (*free_fn)(void *))
{
    if (!t || !owner)
        return cfx_error_set(CFX_ERR, NULL, "cfx_tensor_binding_set: NULL tensor or owner 0");
    cfx_tensor_binding *b = find(t, owner);
    if (!b)
        return add(&t->ext, owner, data, free_fn);
    /* Rebinding (an in-place op re-tracked) frees the old record first. */
    if (b->free_fn && b->data != data)
        b->free_fn(b->data);
    b->data = data;
    b->free_fn = free_fn;
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
