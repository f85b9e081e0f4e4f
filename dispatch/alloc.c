/* alloc.c - the allocator hook (alloc.h): every library allocation calls the installed
 * function, or libc directly when none is installed (the common case costs one load and a
 * predictable branch). The calls are kept out of tail position so that a hook sees the
 * library's call site two frames up (the failure-injection test counts allocation sites). */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dispatch/alloc.h"
#include "dispatch/alloc_internal.h"

static void *default_alloc(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return ptr ? realloc(ptr, nsize) : malloc(nsize);
}

static _Atomic(cfx_alloc_fn) alloc_fn;  /* NULL: default_alloc */
static _Atomic(void *) alloc_ud;

/* Keeps the hook's call out of tail position (see the file comment). */
#define NOT_TAIL() __asm__ volatile("" ::: "memory")

static inline void *call(void *ptr, size_t nsize)
{
    cfx_alloc_fn fn = atomic_load_explicit(&alloc_fn, memory_order_acquire);
    if (!fn)
        return nsize ? (ptr ? realloc(ptr, nsize) : malloc(nsize)) : (free(ptr), NULL);
    return fn(atomic_load_explicit(&alloc_ud, memory_order_relaxed), ptr, nsize);
}

bool cfx_allocator_is_default(void) { return !atomic_load_explicit(&alloc_fn, memory_order_relaxed); }

static void *cjson_malloc(size_t n) { return cfx_malloc(n); }
static void cjson_free(void *p) { cfx_free(p); }

void cfx_set_allocator(cfx_alloc_fn fn, void *ud)
{
    if (fn == default_alloc)
        fn = NULL;
    atomic_store_explicit(&alloc_ud, ud, memory_order_relaxed);
    atomic_store_explicit(&alloc_fn, fn, memory_order_release);
    /* cJSON's hooks are process-wide too: its parser allocates through ours while one is set */
    cJSON_Hooks h = {cjson_malloc, cjson_free};
    cJSON_InitHooks(fn ? &h : NULL);
}

cfx_alloc_fn cfx_get_allocator(void **ud)
{
    cfx_alloc_fn fn = atomic_load_explicit(&alloc_fn, memory_order_acquire);
    if (ud)
        *ud = fn ? atomic_load_explicit(&alloc_ud, memory_order_relaxed) : NULL;
    return fn ? fn : default_alloc;
}

void *cfx_malloc(size_t size)
{
    void *p = call(NULL, size ? size : 1);
    NOT_TAIL();
    return p;
}

void *cfx_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    if (bytes == 0)
        bytes = 1;
    void *p = call(NULL, bytes);
    NOT_TAIL();
    if (p)
        memset(p, 0, bytes);
    return p;
}

void *cfx_realloc(void *ptr, size_t size)
{
    void *p = call(ptr, size ? size : 1);
    NOT_TAIL();
    return p;
}

void cfx_free(void *ptr)
{
    if (ptr)
        call(ptr, 0);
    NOT_TAIL();
}

char *cfx_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *p = call(NULL, len + 1);
    NOT_TAIL();
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *cfx_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t len = strlen(s);
    char *p = call(NULL, len + 1);
    NOT_TAIL();
    if (p)
        memcpy(p, s, len + 1);
    return p;
}
