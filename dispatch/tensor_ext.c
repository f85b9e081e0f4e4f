/* tensor_ext.c - the state modes attach to a tensor (tensor_ext.h).
 *
 * The state lives in the tensor header, so under a fake mode, where every operator output gets
 * a mode and a tracer binding, nothing here allocates: the first two bindings have slots in
 * the header, and only a tensor bound by more tracers at once grows a heap array.
 *
 * Bindings are a small array searched linearly: a tensor is bound by at most a handful of
 * tracers at once (nested make_fx), so a map would cost more than it saves. Owner ids come
 * from a process-wide atomic counter so that threads tracing concurrently get distinct
 * owners. */
#include <stdatomic.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/tensor_ext.h"

struct cfx_tensor_ext *cfx_tensor_ext_get(cfx_tensor *t) { return t ? &t->ext : NULL; }

/* The external definition of tensor_ext.h's inline drop. */
extern inline void cfx_tensor_ext_drop(struct cfx_tensor_ext *ext);

void cfx_tensor_ext_drop_bindings(struct cfx_tensor_ext *ext)
{
    for (uint32_t i = 0; i < ext->n_bindings; i++)
        if (ext->bindings[i].free_fn && ext->bindings[i].owner)
            ext->bindings[i].free_fn(ext->bindings[i].data);
    if (ext->n_bindings && ext->bindings != ext->inline_bindings) {
        free(ext->bindings);
        ext->bindings = ext->inline_bindings; /* as a tensor with no bindings has (tensor_ext.h) */
        ext->cap_bindings = CFX_TENSOR_EXT_INLINE_BINDINGS;
    }
    ext->n_bindings = 0;
}

void cfx_tensor_ext_drop_mode(struct cfx_tensor_ext *ext)
{
    cfx_mode *mode = ext->mode;
    if (!mode)
        return;
    ext->mode = NULL;
    if (ext->is_fake) {
        ext->is_fake = false;
        cfx_fake_tensor_unref_inline(mode); /* fakes share one counted reference (fake.c) */
    } else {
        cfx_mode_release(mode);
    }
}

uint64_t cfx_binding_owner_new(void)
{
    static atomic_uint_fast64_t next = 1;
    return (uint64_t)atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
}

static cfx_tensor_binding *find(const cfx_tensor *t, uint64_t owner)
{
    if (!t || !owner)
        return NULL;
    const struct cfx_tensor_ext *e = &t->ext;
    for (uint32_t i = 0; i < e->n_bindings; i++)
        if (e->bindings[i].owner == owner)
            return &e->bindings[i];
    return NULL;
}

/* The external definition of tensor_ext.h's inline lookup. */
extern inline void *cfx_tensor_binding_get(const cfx_tensor *t, uint64_t owner);

void *cfx_tensor_binding_search(const cfx_tensor *t, uint64_t owner)
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
        cfx_tensor_binding *nb = realloc(was_inline ? NULL : e->bindings, cap * sizeof *nb);
        if (!nb)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        if (was_inline) {
            for (uint32_t i = 0; i < e->n_bindings; i++)
                nb[i] = e->inline_bindings[i];
            /* slot 0 now lives in nb: the inline one must match no owner (tensor_ext.h) */
            e->inline_bindings[0] = (cfx_tensor_binding){0, NULL, NULL};
        }
        e->bindings = nb;
        e->cap_bindings = cap;
    }
    e->bindings[e->n_bindings++] = (cfx_tensor_binding){owner, data, free_fn};
    return CFX_OK;
}

/* The external definition of tensor_ext.h's inline binding_set. */
extern inline int cfx_tensor_binding_set(cfx_tensor *t, uint64_t owner, void *data, void (*free_fn)(void *));

/* cfx_tensor_binding_set but for its inline case: bad arguments, or a tensor that has
 * bindings already. */
int cfx_tensor_binding_set_more(cfx_tensor *t, uint64_t owner, void *data, void (*free_fn)(void *))
{
    if (!t || !owner)
        return cfx_error_set(CFX_ERR, NULL, "cfx_tensor_binding_set: NULL tensor or owner 0");
    struct cfx_tensor_ext *e = &t->ext;
    if (!e->n_bindings)
        return cfx_tensor_binding_set(t, owner, data, free_fn);
    cfx_tensor_binding *b = find(t, owner);
    if (!b)
        return add(e, owner, data, free_fn);
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
