/* fork.c - one pthread_atfork handler for every process-wide lock of the library.
 *
 * POSIX lets a multi-threaded process fork, but only the forking thread exists in the child:
 * a lock another thread held at that moment stays locked there for ever, and cfx_op_find in
 * the child would hang. The handler below takes every registered lock before fork (outer locks
 * first, see the ranks in fork_internal.h), releases them in the parent, and re-initialises
 * them in the child (unlocking is not enough: glibc refuses to unlock a recursive mutex whose
 * recorded owner is the parent's thread id). Registrations come from constructors, before any
 * thread exists, so the table itself needs no lock. */
#include <stdbool.h>
#include <stddef.h>

#include "dispatch/fork_internal.h"

#define MAX_GUARDS 32

typedef struct guard {
    int rank;
    pthread_mutex_t *mutex;
    void (*prepare)(void), (*parent)(void), (*child)(void);
} guard;

static guard guards[MAX_GUARDS];
static int n_guards;
static bool installed;

static void prepare_all(void)
{
    for (int i = 0; i < n_guards; i++) {
        if (guards[i].mutex)
            pthread_mutex_lock(guards[i].mutex);
        else
            guards[i].prepare();
    }
}

static void parent_all(void)
{
    for (int i = n_guards - 1; i >= 0; i--) {
        if (guards[i].mutex)
            pthread_mutex_unlock(guards[i].mutex);
        else
            guards[i].parent();
    }
}

static void child_all(void)
{
    for (int i = n_guards - 1; i >= 0; i--) {
        if (guards[i].mutex)
            pthread_mutex_init(guards[i].mutex, NULL);
        else
            guards[i].child();
    }
}

/* Inserted in rank order (stable), so prepare_all takes outer locks first. */
static void add(guard g)
{
    if (n_guards == MAX_GUARDS)
        return; /* a fixed, known set of locks: raise MAX_GUARDS when adding one */
    int i = n_guards++;
    for (; i > 0 && guards[i - 1].rank > g.rank; i--)
        guards[i] = guards[i - 1];
    guards[i] = g;
    if (!installed)
        installed = pthread_atfork(prepare_all, parent_all, child_all) == 0;
}

void cfx_fork_guard_mutex(int rank, pthread_mutex_t *m) { add((guard){rank, m, NULL, NULL, NULL}); }

void cfx_fork_guard_fn(int rank, void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    add((guard){rank, NULL, prepare, parent, child});
}
