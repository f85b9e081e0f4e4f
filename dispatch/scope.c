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
 * dispatcher, say); the release loop re-reads the pool length each step, so such tensors
 * are released by the same scope end. Scopes still open when a thread exits are ended then. */
#include <pthread.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"

typedef struct pool {
    cfx_tensor **items;
    size_t n, cap;
    size_t *marks; /* marks[k]: pool length when scope k began */
    size_t depth, mcap;
    bool registered;
} pool;

static _Thread_local pool tls;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void end_to(pool *p, size_t depth)
{
    size_t base = p->marks[depth];
    p->depth = depth;
    while (p->n > base)
        cfx_tensor_release(p->items[--p->n]);
}

static void thread_exit(void *unused)
{
    (void)unused;
    if (tls.depth > 0)
        end_to(&tls, 0);
    free(tls.items);
    free(tls.marks);
    tls = (pool){0};
}

static void make_key(void) { pthread_key_create(&pool_key, thread_exit); }

/* cfx_scope_begin on a thread not yet armed or with no room for a mark; out of line like
 * autorelease_grow. */
static __attribute__((noinline)) cfx_scope scope_begin_slow(void)
{
    pool *p = &tls;
    if (!p->registered) {
        pthread_once(&pool_once, make_key);
        pthread_setspecific(pool_key, p);
        p->registered = true;
    }
    if (p->depth == p->mcap) {
        size_t cap = p->mcap ? p->mcap * 2 : 16;
        size_t *m = realloc(p->marks, cap * sizeof *m);
        if (!m) {
            /* Without a mark the scope cannot exist; hand back one that ends nothing. */
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory opening a scope");
            return (cfx_scope){(size_t)-1};
        }
        p->marks = m;
        p->mcap = cap;
    }
    p->marks[p->depth] = p->n;
    return (cfx_scope){p->depth++};
}

cfx_scope cfx_scope_begin(void)
{
    pool *p = &tls;
    if (!p->registered || p->depth == p->mcap)
        return scope_begin_slow();
    p->marks[p->depth] = p->n;
    return (cfx_scope){p->depth++};
}

void cfx_scope_end(cfx_scope s)
{
    pool *p = &tls;
    if (s.mark >= p->depth) /* already ended by an outer scope, or never opened */
        return;
    end_to(p, s.mark);
}

/* cfx_autorelease into a full pool. Out of line: every tensor made comes through
 * cfx_autorelease, which this keeps free of a call frame. */
static __attribute__((noinline)) cfx_tensor *autorelease_grow(cfx_tensor *t)
{
    pool *p = &tls;
    size_t cap = p->cap ? p->cap * 2 : 64;
    cfx_tensor **items = realloc(p->items, cap * sizeof *items);
    if (!items) {
        /* The tensor stays alive (leaked) rather than freed under its user. */
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory autoreleasing a tensor");
        return t;
    }
    p->items = items;
    p->cap = cap;
    p->items[p->n++] = t;
    return t;
}

cfx_tensor *cfx_autorelease(cfx_tensor *t)
{
    pool *p = &tls;
    if (!t || p->depth == 0)
        return t;
    if (p->n == p->cap)
        return autorelease_grow(t);
    p->items[p->n++] = t;
    return t;
}

int cfx_scope_depth(void) { return (int)tls.depth; }
