/* scope_internal.h - the thread's autorelease pool, for tensor.c's inline push; not public.
 *
 * Every tensor made inside a scope goes through cfx_autorelease, once per operator call while
 * tracing, so tensor.c pushes onto the pool inline and calls cfx_autorelease (scope.c) only
 * when there is no scope open or the pool is full. */
#ifndef CFX_SCOPE_INTERNAL_H
#define CFX_SCOPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/scope.h"

typedef struct cfx_scope_pool {
    cfx_tensor **items;
    size_t n, cap;
    size_t *marks; /* marks[k]: pool length when scope k began */
    size_t depth;
    size_t mcap;   /* 0 until the thread's first scope arms it (scope.c) */
} cfx_scope_pool;

/* The static library (built as non-PIC or PIE code) is linked into executables, where the
 * pool's offset from the thread pointer is a link-time constant: local-exec makes every access
 * one %fs-relative operand. (The default for an extern thread-local, initial-exec, also loads
 * the offset from the GOT, and the linker's rewrite of that load into an lea leaves UBSan's
 * null check testing stale flags.) The shared library keeps the default, as it must. */
#if defined(__PIC__) && !defined(__PIE__)
#define CFX_SCOPE_TLS_MODEL
#else
#define CFX_SCOPE_TLS_MODEL __attribute__((tls_model("local-exec")))
#endif
extern _Thread_local cfx_scope_pool cfx_scope_tls CFX_SCOPE_TLS_MODEL;

/* cfx_autorelease(t) for a non-NULL t. */
static inline cfx_tensor *cfx_autorelease_nonnull(cfx_tensor *t)
{
    cfx_scope_pool *p = &cfx_scope_tls;
    size_t n = p->n;
    if (p->depth == 0 || n == p->cap)
        return cfx_autorelease(t);
    p->items[n] = t;
    p->n = n + 1;
    return t;
}

#endif
