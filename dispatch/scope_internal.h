/* scope_internal.h - the thread's scope pool (scope.c), visible to the library so that a caller
 * that opens a scope around every call (the interpreter: one per node) opens and ends it
 * inline, and can take its result out of the scope instead of retaining it and having the
 * scope release it (Objective-C's objc_retainAutoreleasedReturnValue). */
#ifndef CFX_SCOPE_INTERNAL_H
#define CFX_SCOPE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/scope.h"
#include "dispatch/tensor_internal.h"

typedef struct cfx_scope_pool {
    cfx_tensor **items; /* tensors, and memory blocks as their pointer with the low bit set */
    size_t n, cap;
    size_t *marks; /* marks[k]: pool length when scope k began */
    size_t depth;
    size_t mcap;
} cfx_scope_pool;

extern _Thread_local cfx_scope_pool cfx_scope_tls;
extern _Thread_local bool cfx_scope_registered; /* the thread-exit destructor is armed */

/* Arms the thread's pool (its exit destructor) and makes room for another mark; false (error
 * recorded) when out of memory. */
bool cfx_scope_make_room(void);

/* cfx_scope_begin, inline: the exported function wraps it. Without a mark the scope cannot
 * exist, so running out of memory hands back one that ends nothing. */
static inline cfx_scope cfx_scope_open(void)
{
    cfx_scope_pool *p = &cfx_scope_tls;
    if ((!cfx_scope_registered || p->depth == p->mcap) && !cfx_scope_make_room())
        return (cfx_scope){(size_t)-1};
    p->marks[p->depth] = p->n;
    return (cfx_scope){p->depth++};
}

/* Ends s, the innermost scope, handing the caller one reference to t, a tensor made in it.
 * When t is all the scope holds (an operator's call that made its result and nothing else),
 * the scope's reference becomes the caller's and nothing is retained or released; otherwise
 * t is retained and the scope ended. */
static inline cfx_tensor *cfx_scope_end_keep(cfx_scope s, cfx_tensor *t)
{
    cfx_scope_pool *p = &cfx_scope_tls;
    if (s.mark + 1 == p->depth && p->n == p->marks[s.mark] + 1 && p->items[p->n - 1] == t) {
        p->n--;
        p->depth--;
        return t;
    }
    cfx_tensor_retain(t);
    cfx_scope_end(s);
    return t;
}

#endif
