/* tensor_ext.c - the optional per-tensor block modes attach state to (tensor_ext.h).
 *
 * Most tensors never get one, so the block is allocated lazily and tensor.c only pays a NULL
 * check when freeing. Under a fake mode, though, every operator output gets one, so blocks
 * are recycled through a small per-thread free list (as tensor.c recycles headers) and the
 * first two bindings live inside the block: tracing a fake tensor then costs no malloc here.
 * The list is drained by a thread-exit destructor, so LeakSanitizer sees nothing of it.
 *
 * Bindings are a small array searched linearly: a tensor is bound by at most a handful of
 * tracers at once (nested make_fx), so a map would cost more than it saves. Owner ids come
 * from a process-wide atomic counter so that threads tracing concurrently get distinct
 * owners. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/tensor_ext.h"

/* ------------------------------------------------------------------ free list */

#define EXT_FREELIST_CAP 64

typedef struct ext_free_list {
    struct cfx_tensor_ext *head; /* linked through ->bindings */
    int n;
    bool registered; /* the thread-exit destructor is armed */
} ext_free_list;

static _Thread_local ext_free_list efl;
static pthread_key_t efl_key;
static pthread_once_t efl_once = PTHREAD_ONCE_INIT;

static void drain(void *unused)
{
    (void)unused;
    while (efl.head) {
        struct cfx_tensor_ext *e = efl.head;
        efl.head = (struct cfx_tensor_ext *)e->bindings;
        free(e);
    }
    efl.n = 0;
    /* A destructor running after this one (a scope's) may refill the list; it re-arms. */
    efl.registered = false;
}

static void make_key(void) { pthread_key_create(&efl_key, drain); }

static void ext_put(struct cfx_tensor_ext *e)
{
    if (efl.n >= EXT_FREELIST_CAP) {
        free(e);
        return;
    }
    if (!efl.registered) {
        pthread_once(&efl_once, make_key);
        pthread_setspecific(efl_key, &efl);
        efl.registered = true;
    }
    e->bindings = (cfx_tensor_binding *)efl.head;
    efl.head = e;
    efl.n++;
}

static struct cfx_tensor_ext *ext_new(void)
{
    struct cfx_tensor_ext *e = efl.head;
    if (e) {
        efl.head = (struct cfx_tensor_ext *)e->bindings;
        efl.n--;
    } else if (!(e = malloc(sizeof *e))) {
        return NULL;
    }
    e->mode = NULL;
    e->fake_device = (cfx_device){0, 0};
    e->is_fake = false;
    e->n_bindings = 0;
    e->cap_bindings = CFX_TENSOR_EXT_INLINE_BINDINGS;
    e->bindings = e->inline_bindings;
    return e;
}

/* ------------------------------------------------------------------ the block */

struct cfx_tensor_ext *cfx_tensor_ext_get(cfx_tensor *t)
{
    if (!t)
        return NULL;
    if (!t->ext) {
        t->ext = ext_new();
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
    if (ext->bindings != ext->inline_bindings)
        free(ext->bindings);
    if (ext->is_fake)
        cfx_fake_tensor_unref(ext->mode); /* fakes share one counted reference (fake.c) */
    else
        cfx_mode_release(ext->mode);
    ext_put(ext);
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
        uint32_t cap = 2 * e->cap_bindings;
        bool was_inline = e->bindings == e->inline_bindings;
        cfx_tensor_binding *nb = realloc(was_inline ? NULL : e->bindings, cap * sizeof *nb);
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
