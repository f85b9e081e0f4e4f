/* alloc.h - the one allocator hook of the library (as Lua's lua_Alloc).
 *
 * Every block cfx allocates, frees or resizes goes through one function pair (fn, ud) that an
 * embedding program may replace: to count or cap memory, to use its own heap, or (the tests)
 * to fail the N-th allocation and check that every failure ends in an error, not a crash.
 * The library's cJSON parser is pointed at the same hook (cJSON_InitHooks) while one is set.
 *
 * Not covered, because they are not heap blocks the library can hand to a hook: the pages a
 * graph arena maps directly (chunks of 64 KiB and more, only with the default allocator: with
 * a hook installed every arena chunk comes from the hook), libffi's executable closures
 * (ffi_closure_alloc maps memory that must be executable), and what libc and the system
 * libraries allocate for themselves (stdio buffers, thread stacks, dlopen, OpenBLAS). */
#ifndef CFX_DISPATCH_ALLOC_H
#define CFX_DISPATCH_ALLOC_H

#include <stddef.h>

#include "dispatch/export.h"

/* ptr == NULL: allocate nsize bytes (nsize > 0); nsize == 0: free ptr (not NULL), return
 * NULL; otherwise resize ptr to nsize bytes, keeping it unchanged when NULL is returned.
 * Returns NULL on failure; cfx then fails the call that needed memory with CFX_ERR_NOMEM
 * and "out of memory". ud is the pointer given to cfx_set_allocator. */
typedef void *(*cfx_alloc_fn)(void *ud, void *ptr, size_t nsize);

/* Installs fn (NULL: the default, libc's malloc/realloc/free) for the whole process.
 * When: before the first other cfx call, or at any point with an fn that can free and resize
 * the blocks the current one gave (a wrapper around it, e.g. one that counts, caps or injects
 * failures and forwards to libc): blocks live in caches and registries for the whole process,
 * so an incompatible allocator cannot be swapped in later. Thread-safety: fn and ud are read
 * atomically, but the swap is not synchronised with allocations in flight: set it while no
 * other thread is inside cfx. fn itself is called from any thread that uses cfx and must be
 * thread-safe. Strings and arrays the API returns for the caller to free ("malloc'd" in the
 * headers) come from fn: free them with cfx_free (libc's free is right only for the
 * default allocator or a wrapper of it). */
CFX_API void cfx_set_allocator(cfx_alloc_fn fn, void *ud);
/* The installed function (the default one when none was set; never NULL) and its ud. */
CFX_API cfx_alloc_fn cfx_get_allocator(void **ud);

/* The library's allocation calls, through the hook: malloc, calloc, realloc, free as in C
 * (a 0-byte request gets a distinct 1-byte block; calloc checks n * size for overflow). */
CFX_API void *cfx_malloc(size_t size);
CFX_API void *cfx_calloc(size_t n, size_t size);
CFX_API void *cfx_realloc(void *ptr, size_t size);
CFX_API void cfx_free(void *ptr);
/* strdup through the hook that passes NULL through. */
CFX_API char *cfx_strdup(const char *s);
/* strndup through the hook: at most n bytes of s, NUL-terminated. */
CFX_API char *cfx_strndup(const char *s, size_t n);

#endif
