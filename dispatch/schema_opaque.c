/* schema_opaque.c - the opaque type registry (torch._C._register_opaque_type).
 *
 * PyTorch 2.13 lets custom operators take "black box" objects: a type name registered as
 * opaque ("my_module.MyClass") parses as PyObject in every schema parsed afterwards. The
 * registry is process-wide, as PyTorch's is, so it is guarded by a mutex; schemas are parsed
 * at registration time, not per call, and a parse with nothing registered does not lock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/fork_internal.h"
#include "dispatch/schema_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **names;
static size_t n_names, cap_names;
static atomic_size_t registered; /* n_names, readable without the lock */
__attribute__((constructor)) static void lock_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &lock); }

static size_t find(const char *name, size_t n)
{
    for (size_t i = 0; i < n_names; i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
            return i;
    return SIZE_MAX;
}

int cfx_schema_register_opaque_type(const char *name)
{
    if (!name || !*name)
        return -1;
    int rc = 0;
    pthread_mutex_lock(&lock);
    if (find(name, strlen(name)) == SIZE_MAX) {
        if (n_names == cap_names) {
            size_t cap = cap_names ? 2 * cap_names : 8;
            char **grown = cfx_realloc(names, cap * sizeof *grown);
            if (grown) {
                names = grown;
                cap_names = cap;
            }
        }
        char *copy = n_names < cap_names ? cfx_strdup(name) : NULL;
        if (copy) {
            names[n_names++] = copy;
            atomic_store(&registered, n_names);
        } else {
            rc = -1;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void cfx_schema_unregister_opaque_type(const char *name)
{
    if (!name)
        return;
    pthread_mutex_lock(&lock);
    size_t i = find(name, strlen(name));
    if (i != SIZE_MAX) {
        cfx_free(names[i]);
        names[i] = names[--n_names];
        atomic_store(&registered, n_names);
    }
    pthread_mutex_unlock(&lock);
}

bool schema_opaque_lookup(const char *name, size_t n)
{
    if (atomic_load(&registered) == 0)
        return false;
    pthread_mutex_lock(&lock);
    bool found = find(name, n) != SIZE_MAX;
    pthread_mutex_unlock(&lock);
    return found;
}

bool cfx_schema_is_opaque_type(const char *name)
{
    return name && schema_opaque_lookup(name, strlen(name));
}
