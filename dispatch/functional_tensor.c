/* functional_tensor.c - the functional tensor and its storage (FunctionalTensorWrapper.cpp and
 * FunctionalStorageImpl.cpp of PyTorch 2.13).
 *
 * A wrapper is an ordinary cfx_tensor header (no data: a meta storage) that mirrors its
 * value's sizes, strides, offset, dtype and user-visible device, and carries the value's keys
 * plus Functionalize minus the Python keys (the wrapper is not a tensor subclass; its fake
 * value is). Its state (value, shared storage, views, generation) is a tensor binding under a
 * process-wide owner id, so it dies with the wrapper and needs no field in the tensor header.
 *
 * The storage is shared by a base and all views taken from it: it holds the base's current
 * value, a generation counter and the queue of updates (a mutated view's new value plus the
 * views it was taken through). Updates are applied lazily, when some alias is synced, exactly
 * in PyTorch's order, because the ops that apply them are what a tracer below records: for one
 * update, the forward views of all but the last level are recomputed from the base, then the
 * inverses are applied from the innermost level out. commit_update does not mark the mutated
 * wrapper up to date (2.13 dropped that optimisation), so the sync right after an in-place op
 * on a view regenerates the view from the new base, which is the `view_2 = view(view_1, [-1])`
 * node of 2.13's graphs. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/functional_internal.h"
#include "dispatch/tensor_ext.h"

typedef struct fupdate {
    cfx_tensor *new_val; /* retained */
    cfx_fview **views;   /* retained each */
    int n_views;
} fupdate;

typedef struct fstorage {
    int refcount;
    cfx_tensor *base; /* retained */
    uint64_t generation;
    fupdate *updates;
    int n_updates, cap_updates;
} fstorage;

typedef struct fwrapper {
    cfx_tensor *value; /* retained */
    fstorage *storage;
    uint64_t generation;
    cfx_fview **views; /* retained each */
    int n_views;
} fwrapper;

static uint64_t owner_id(void)
{
    static atomic_uint_fast64_t id;
    return cfx_lazy_binding_owner(&id);
}

static fwrapper *state_of(const cfx_tensor *t)
{
    if (!t || !cfx_keyset_has(t->keys, CFX_KEY_Functionalize))
        return NULL;
    return cfx_tensor_binding_get(t, owner_id());
}

static void release_views(cfx_fview **views, int n)
{
    for (int i = 0; i < n; i++)
        cfx_fview_release(views[i]);
    cfx_free(views);
}

static void storage_release(fstorage *s)
{
    if (!s || --s->refcount > 0)
        return;
    for (int i = 0; i < s->n_updates; i++) {
        cfx_tensor_release(s->updates[i].new_val);
        release_views(s->updates[i].views, s->updates[i].n_views);
    }
    cfx_free(s->updates);
    cfx_tensor_release(s->base);
    cfx_free(s);
}

static void free_state(void *p)
{
    fwrapper *w = p;
    cfx_tensor_release(w->value);
    storage_release(w->storage);
    release_views(w->views, w->n_views);
    cfx_free(w);
}

void cfx_functional_skip_begin(cfx_key_guard *g)
{
    cfx_exclude_keys_begin(g, cfx_keyset_of(CFX_KEY_Functionalize));
}

/* The wrapper header: value's metadata, no data, Functionalize | value's keys - python keys. */
static cfx_tensor *new_header(cfx_tensor *value, fwrapper *w)
{
    cfx_tensor *t = cfx_tensor_new_strided(value->sizes, value->strides, value->ndim, cfx_tensor_dtype(value),
                                           cfx_device_make(CFX_DEVICE_META));
    if (!t)
        return NULL;
    t->storage_offset = value->storage_offset;
    t->device = cfx_tensor_fake_device(value);
    cfx_keyset python = cfx_keyset_or(cfx_keyset_of(CFX_KEY_Python), cfx_keyset_of(CFX_KEY_PythonTLSSnapshot));
    t->keys = cfx_keyset_add(cfx_keyset_minus(value->keys, python), CFX_KEY_Functionalize);
    if (cfx_tensor_binding_set(t, owner_id(), w, free_state) != CFX_OK) {
        free_state(w);
        return NULL; /* t stays in the scope (or leaks its one reference without one) */
    }
    return t;
}

cfx_tensor *cfx_functional_wrap(cfx_tensor *value)
{
    if (!value) {
        cfx_error_set(CFX_ERR, NULL, "to_functional_tensor: NULL tensor");
        return NULL;
    }
    if (state_of(value)) {
        cfx_error_set(CFX_ERR, NULL, "to_functional_tensor: the tensor is already functional");
        return NULL;
    }
    fwrapper *w = cfx_calloc(1, sizeof *w);
    fstorage *s = cfx_calloc(1, sizeof *s);
    if (!w || !s) {
        cfx_free(w);
        cfx_free(s);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    s->refcount = 1;
    s->base = cfx_tensor_retain(value);
    w->value = cfx_tensor_retain(value);
    w->storage = s;
    return new_header(value, w);
}

cfx_tensor *cfx_functional_wrap_view(cfx_tensor *view_value, cfx_tensor *base, cfx_fview *v)
{
    fwrapper *b = state_of(base);
    fwrapper *w = cfx_calloc(1, sizeof *w);
    cfx_fview **views = cfx_malloc((size_t)(b->n_views + 1) * sizeof *views);
    if (!w || !views) {
        cfx_free(w);
        cfx_free(views);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    for (int i = 0; i < b->n_views; i++) {
        views[i] = b->views[i];
        views[i]->refcount++;
    }
    v->refcount++;
    views[b->n_views] = v;
    w->views = views;
    w->n_views = b->n_views + 1;
    w->value = cfx_tensor_retain(view_value);
    w->storage = b->storage;
    w->storage->refcount++;
    /* generation_ starts at 0 in 2.13's view constructor (not the base's): a view taken after
     * its storage saw an update is regenerated from the base on first use (clone_mm's t_1) */
    w->generation = 0;
    return new_header(view_value, w);
}

bool cfx_tensor_is_functional(const cfx_tensor *t) { return state_of(t) != NULL; }

cfx_tensor *cfx_functional_value(const cfx_tensor *t)
{
    fwrapper *w = state_of(t);
    return w ? w->value : (cfx_tensor *)t;
}

bool cfx_functional_has_data_mutation(const cfx_tensor *t)
{
    fwrapper *w = state_of(t);
    return w && w->storage->generation > 0;
}

/* FunctionalTensorWrapper::replace_: the new value, and the wrapper's metadata from it. */
static int replace_value(cfx_tensor *t, fwrapper *w, cfx_tensor *v)
{
    if (v->ndim != t->ndim || v->dtype != t->dtype)
        return cfx_error_set(CFX_ERR, NULL,
                             "functionalization: an update changed the tensor's %s, which cfx does not support",
                             v->ndim != t->ndim ? "number of dimensions" : "dtype");
    cfx_tensor_retain(v);
    cfx_tensor_release(w->value);
    w->value = v;
    memcpy(t->sizes, v->sizes, (size_t)v->ndim * sizeof *t->sizes);
    memcpy(t->strides, v->strides, (size_t)v->ndim * sizeof *t->strides);
    t->storage_offset = v->storage_offset;
    return CFX_OK;
}

/* FunctionalStorageImpl::apply_update for one update (see the comment at the top). */
static cfx_tensor *apply_update(const fupdate *u, cfx_tensor *base)
{
    if (u->n_views == 0)
        return u->new_val;
    cfx_tensor *small[8];
    cfx_tensor **levels = u->n_views <= 8 ? small : cfx_malloc((size_t)u->n_views * sizeof *levels);
    if (!levels) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    levels[0] = base;
    cfx_tensor *t = u->new_val;
    for (int i = 0; i + 1 < u->n_views && t; i++)
        if (!(levels[i + 1] = cfx_fview_forward(u->views[i], levels[i])))
            t = NULL;
    for (int i = u->n_views - 1; i >= 0 && t; i--)
        t = cfx_fview_inverse(u->views[i], levels[i], t);
    if (levels != small)
        cfx_free(levels);
    return t;
}

static int apply_updates(fstorage *s)
{
    cfx_key_guard g;
    cfx_functional_skip_begin(&g);
    int rc = CFX_OK;
    int i = 0;
    for (; i < s->n_updates && rc == CFX_OK; i++) {
        cfx_tensor *nb = apply_update(&s->updates[i], s->base);
        if (!nb) {
            rc = CFX_ERR;
            break;
        }
        cfx_tensor_retain(nb);
        cfx_tensor_release(s->base);
        s->base = nb;
    }
    /* applied updates leave the queue, also when a later one failed */
    for (int j = 0; j < i; j++) {
        cfx_tensor_release(s->updates[j].new_val);
        release_views(s->updates[j].views, s->updates[j].n_views);
    }
    memmove(s->updates, s->updates + i, (size_t)(s->n_updates - i) * sizeof *s->updates);
    s->n_updates -= i;
    cfx_key_guard_end(&g);
    return rc;
}

int cfx_functional_sync(cfx_tensor *t)
{
    fwrapper *w = state_of(t);
    if (!w || w->generation == w->storage->generation)
        return CFX_OK;
    if (apply_updates(w->storage) != CFX_OK)
        return CFX_ERR;
    /* regenerate_from_base */
    cfx_key_guard g;
    cfx_functional_skip_begin(&g);
    cfx_tensor *v = w->storage->base;
    for (int i = 0; i < w->n_views && v; i++)
        v = cfx_fview_forward(w->views[i], v);
    int rc = v ? replace_value(t, w, v) : CFX_ERR;
    cfx_key_guard_end(&g);
    if (rc == CFX_OK)
        w->generation = w->storage->generation;
    return rc;
}

/* FunctionalStorageImpl::add_update. */
static int add_update(fstorage *s, cfx_tensor *v, cfx_fview **views, int n_views)
{
    if (s->n_updates == s->cap_updates) {
        int cap = s->cap_updates ? 2 * s->cap_updates : 4;
        fupdate *u = cfx_realloc(s->updates, (size_t)cap * sizeof *u);
        if (!u)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        s->updates = u;
        s->cap_updates = cap;
    }
    cfx_fview **copy = n_views ? cfx_malloc((size_t)n_views * sizeof *copy) : NULL;
    if (n_views && !copy)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (int i = 0; i < n_views; i++) {
        copy[i] = views[i];
        copy[i]->refcount++;
    }
    s->updates[s->n_updates++] = (fupdate){cfx_tensor_retain(v), copy, n_views};
    s->generation++;
    return CFX_OK;
}

int cfx_functional_mutate(cfx_tensor *wrapper, cfx_tensor *new_value)
{
    fwrapper *w = state_of(wrapper);
    if (!w)
        return cfx_error_set(CFX_ERR, NULL, "functionalization: mutating a tensor that is not functional");
    int rc = replace_value(wrapper, w, new_value);
    if (rc == CFX_OK)
        rc = add_update(w->storage, w->value, w->views, w->n_views);
    if (rc == CFX_OK)
        rc = cfx_functional_sync(wrapper);
    return rc;
}
