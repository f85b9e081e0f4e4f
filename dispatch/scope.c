/* scope.c - per-thread autorelease pools for tensors.
 *
 * Each thread has one growable array of tensor pointers (the pool) and a stack of marks, one
 * per open scope: marks[k] is the pool length when scope k began. A cfx_scope records k, its
 * depth, so ending it releases pool[marks[k]..] newest first and pops every scope from k up;
 * that is how ending an outer scope also ends the ones inside it.
 *
 * Ownership: putting a tensor in the pool transfers one reference to the pool. The creator
 * gets a borrowed pointer that is valid until the scope ends; code that wants the tensor to
 * outlive the scope calls cfx_tensor_retain and later cfx_tensor_release. With no scope open
 * cfx_autorelease does nothing and the creator owns the reference.
 *
 * A tensor's release may itself autorelease (a fake tensor's extension freeing through the
 * dispatcher, say); the release loop re-reads the pool length after every free, so such
 * tensors are released by the same scope end. Scopes still open when a thread exits are ended
 * then.
 *
 * A memory block (cfx_scope_alloc) sits in the pool as its pointer with the low bit set:
 * tensors are at least 8-byte aligned, so the bit tells the two apart. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/scope_internal.h"

typedef cfx_scope_pool pool;

_Thread_local pool cfx_scope_tls;
_Thread_local bool cfx_scope_registered;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static bool is_block(const cfx_tensor *t) { return (uintptr_t)t & 1; }

/* Releases pool[marks[depth]..] newest first and pops the scopes from depth up. A tensor that
 * dies may autorelease others (a binding's free_fn, say) into the pool, so the pool length is
 * read again after every release and those are released by the same end; the base is read
 * before any release (a scope begun inside one reuses its slot). */
static void end_to(pool *p, size_t depth)
{
    size_t base = p->marks[depth];
    p->depth = depth;
    while (p->n > base) {
        cfx_tensor *t = p->items[--p->n];
        if (is_block(t))
            cfx_free((void *)((uintptr_t)t - 1));
        else
            cfx_tensor_unref(t);
    }
}

static void thread_exit(void *unused)
{
    (void)unused;
    if (cfx_scope_tls.depth > 0)
        end_to(&cfx_scope_tls, 0);
    cfx_free(cfx_scope_tls.items);
    cfx_free(cfx_scope_tls.marks);
    cfx_scope_tls = (pool){0};
    cfx_scope_registered = false;
}

static void make_key(void) { pthread_key_create(&pool_key, thread_exit); }

bool cfx_scope_make_room(void)
{
    pool *p = &cfx_scope_tls;
    if (!cfx_scope_registered) {
        pthread_once(&pool_once, make_key);
        pthread_setspecific(pool_key, p);
        cfx_scope_registered = true;
    }
    if (p->depth == p->mcap) {
        size_t cap = p->mcap ? p->mcap * 2 : 16;
        size_t *m = cfx_realloc(p->marks, cap * sizeof *m);
        if (!m) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory opening a scope");
            return false;
        }
        p->marks = m;
        p->mcap = cap;
    }
    return true;
}

cfx_scope cfx_scope_begin(void) { return cfx_scope_open(); }

void cfx_scope_end(cfx_scope s)
{
    pool *p = &cfx_scope_tls;
    if (s.mark >= p->depth) /* already ended by an outer scope, or never opened */
        return;
    end_to(p, s.mark);
}

cfx_tensor *cfx_autorelease(cfx_tensor *t)
{
    pool *p = &cfx_scope_tls;
    if (!t || p->depth == 0)
        return t;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        cfx_tensor **items = cfx_realloc(p->items, cap * sizeof *items);
        if (!items) {
            /* The tensor stays alive (leaked) rather than freed under its user. */
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory autoreleasing a tensor");
            return t;
        }
        p->items = items;
        p->cap = cap;
    }
    p->items[p->n++] = t;
    return t;
}

void *cfx_scope_alloc(size_t n)
{
    void *b = cfx_malloc(n ? n : 1);
    if (!b) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (cfx_scope_tls.depth == 0)
        return b;
    cfx_autorelease((cfx_tensor *)((uintptr_t)b + 1)); /* on OOM the block stays (leaked), like a tensor */
    return b;
}

int cfx_scope_depth(void) { return (int)cfx_scope_tls.depth; }
