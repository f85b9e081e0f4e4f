/* fork_internal.h - making the library's process-wide locks safe across fork().
 *
 * A child forked while another thread holds one of cfx's locks would inherit it locked forever
 * (the owner does not exist in the child). Every file with a process-wide lock hands it over
 * here from a constructor; one pthread_atfork handler then takes all of them before fork, in
 * rank order (outer locks first, so the handler cannot deadlock against a thread that nests
 * them), releases them in the parent and re-initialises them in the child. */
#ifndef CFX_FORK_INTERNAL_H
#define CFX_FORK_INTERNAL_H

#include <pthread.h>

/* Lock ranks: a lock of lower rank may be held while a higher one is taken, never the reverse. */
enum {
    CFX_FORK_RANK_OP_TABLES = 0, /* dispatch/ops.c: serialises table registration */
    CFX_FORK_RANK_REGISTRY = 1,  /* dispatch/dispatcher.c: the operator registry */
    CFX_FORK_RANK_LEAF = 2,      /* locks under which no other cfx lock is taken */
};

/* A plain (non-recursive, default-attribute) mutex. Call from a constructor. */
void cfx_fork_guard_mutex(int rank, pthread_mutex_t *m);
/* A lock with its own prepare (take), parent (release) and child (re-initialise) functions. */
void cfx_fork_guard_fn(int rank, void (*prepare)(void), void (*parent)(void), void (*child)(void));

#endif
