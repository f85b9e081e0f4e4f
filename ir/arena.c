/* arena.c - chunked bump allocation for graphs.
 *
 * Chunks start at 16 KiB and double up to 4 MiB, so a tiny graph stays tiny and a huge one
 * needs few mallocs. An allocation bigger than a quarter of the next chunk gets a chunk of
 * exactly its size, linked behind the current one so the current chunk's free tail is not
 * wasted.
 *
 * Building a big graph touches fresh memory at ~200 bytes a node, and taking one page fault
 * per 4 KiB costs more than the building itself. On Linux, chunks of 1 MiB and more are
 * therefore mapped with MAP_POPULATE: the kernel fills the whole chunk in one call. (Huge
 * pages were tried: with the common defrag=madvise setting the first touch stalls on
 * compaction and is five times slower.) */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE */
#endif
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ir/arena.h"

struct cfx_arena_chunk {
    cfx_arena_chunk *next;
    size_t size;
    _Alignas(16) char data[];
};

enum { FIRST_CHUNK = 16 * 1024, MAX_CHUNK = 4 * 1024 * 1024, BIG_CHUNK = 1024 * 1024 };

static cfx_arena_chunk *new_chunk(size_t size)
{
    size_t bytes = sizeof(cfx_arena_chunk) + size;
#if defined(__linux__) && defined(MAP_POPULATE) && !defined(NO_POPULATE)
    if (bytes >= BIG_CHUNK) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
#endif
    return malloc(bytes);
}

static void free_chunk(cfx_arena_chunk *c)
{
#if defined(__linux__) && defined(MAP_POPULATE) && !defined(NO_POPULATE)
    if (sizeof *c + c->size >= BIG_CHUNK) {
        munmap(c, sizeof *c + c->size);
        return;
    }
#endif
    free(c);
}

void cfx_arena_init(cfx_arena *a)
{
    memset(a, 0, sizeof *a);
    a->next_size = FIRST_CHUNK;
}

void cfx_arena_free(cfx_arena *a)
{
    cfx_arena_chunk *c = a->chunks;
    while (c) {
        cfx_arena_chunk *next = c->next;
        free_chunk(c);
        c = next;
    }
    cfx_arena_init(a);
}

void *cfx_arena_alloc_slow(cfx_arena *a, size_t size)
{
    if (a->next_size == 0)
        a->next_size = FIRST_CHUNK;
    if (size > a->next_size / 4) {
        /* a dedicated chunk, kept behind the current one */
        cfx_arena_chunk *c = new_chunk(size);
        if (!c)
            return NULL;
        c->size = size;
        a->total += sizeof *c + size;
        if (a->chunks) {
            c->next = a->chunks->next;
            a->chunks->next = c;
        } else {
            c->next = NULL;
            a->chunks = c;
        }
        return c->data;
    }
    /* the header is counted inside a big chunk, so its mapping is a whole number of pages */
    size_t csize = a->next_size >= BIG_CHUNK ? a->next_size - sizeof(cfx_arena_chunk) : a->next_size;
    cfx_arena_chunk *c = new_chunk(csize);
    if (!c)
        return NULL;
    c->size = csize;
    c->next = a->chunks;
    a->chunks = c;
    a->total += sizeof *c + c->size;
    a->cur = c->data + size;
    a->end = c->data + c->size;
    if (a->next_size < MAX_CHUNK)
        a->next_size *= 2;
    return c->data;
}

void *cfx_arena_zalloc(cfx_arena *a, size_t size)
{
    void *p = cfx_arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

char *cfx_arena_strndup(cfx_arena *a, const char *s, size_t len)
{
    char *p = cfx_arena_alloc(a, len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}
