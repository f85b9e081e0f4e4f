/* arena.c - chunked bump allocation for graphs.
 *
 * Chunks start at 16 KiB and double up to 4 MiB, so a tiny graph stays tiny and a huge one
 * needs few mallocs. An allocation bigger than a quarter of the next chunk gets a chunk of
 * exactly its size, linked behind the current one so the current chunk's free tail is not
 * wasted.
 *
 * Building a graph touches fresh memory at ~120 bytes a node, and on a virtual machine the
 * kernel takes 0.5-2 us to fault in each 4 KiB page: as much time as building the nodes on
 * it. On Linux, chunks of 64 KiB and more are therefore mapped directly and populated a window
 * at a time ahead of the bump pointer, with one MADV_POPULATE_WRITE call instead of a fault
 * per page: `end` is where the populated part ends, `limit` where the chunk ends, and an
 * allocation that crosses `end` populates the next window. Where madvise is refused (kernels
 * before 5.14) the pages fault in on first touch. Populated but unused memory stays within a
 * window (a 64th of the arena, 32 KiB to 1 MiB), so a barely used big chunk does not count
 * fully in the process's RSS. (Huge pages were tried: with the common defrag=madvise setting
 * the first touch stalls on compaction and is five times slower; measured again on a 6.18
 * kernel with gigabytes of free 4 MiB blocks, a million-node trace spent 0.00-0.14 s in the
 * kernel against a steady 0.03-0.06 s without them. A window capped at 128 or 256 KiB, so
 * that freshly zeroed pages are still in L2 when the graph writes them, was no faster than
 * 1 MiB either.) */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE, madvise */
#endif
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "dispatch/alloc.h"
#include "dispatch/alloc_internal.h"
#include "ir/arena.h"

#if defined(__linux__) && defined(MAP_POPULATE) && !defined(NO_POPULATE)
#define ARENA_MMAP 1
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#else
#define ARENA_MMAP 0
#endif

struct cfx_arena_chunk {
    cfx_arena_chunk *next;
    size_t size;
    bool mapped; /* mmap'd here (default allocator only), else from the allocator hook */
    _Alignas(16) char data[];
};

enum { FIRST_CHUNK = 16 * 1024, MAX_CHUNK = 4 * 1024 * 1024, BIG_CHUNK = 64 * 1024, PAGE = 4096 };

#if ARENA_MMAP
/* Cleared (once, for the process) when the kernel refuses MADV_POPULATE_WRITE. */
static int populate_ok = 1;

static bool can_populate(void) { return __atomic_load_n(&populate_ok, __ATOMIC_RELAXED); }

/* Populates [from, to) (page aligned); false if the kernel refuses, remembered. */
static bool populate(char *from, char *to)
{
    if (madvise(from, (size_t)(to - from), MADV_POPULATE_WRITE) == 0)
        return true;
    __atomic_store_n(&populate_ok, 0, __ATOMIC_RELAXED);
    return false;
}
#endif

/* A chunk of size data bytes. whole: it is used at once (a dedicated chunk), so a mapped one
 * is populated in full. */
static cfx_arena_chunk *new_chunk(size_t size, bool whole)
{
    size_t bytes = sizeof(cfx_arena_chunk) + size;
#if ARENA_MMAP
    if (bytes >= BIG_CHUNK && cfx_allocator_is_default()) { /* a hook sees every chunk */
        int flags = MAP_PRIVATE | MAP_ANONYMOUS | (whole ? MAP_POPULATE : 0);
        cfx_arena_chunk *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        p->mapped = true;
        return p;
    }
#else
    (void)whole;
#endif
    return cfx_calloc(1, bytes); /* zero-filled, as mapped pages are: see arena.h */
}

static void free_chunk(cfx_arena_chunk *c)
{
#if ARENA_MMAP
    if (c->mapped) {
        munmap(c, sizeof *c + c->size);
        return;
    }
#endif
    cfx_free(c);
}

/* Where an empty arena's bump pointer rests: cur == end, so cfx_arena_alloc needs no NULL
 * test to send the first allocation to the slow path (and a 0-byte one gets a valid pointer). */
static _Alignas(16) char empty_arena[16];

void cfx_arena_init(cfx_arena *a)
{
    memset(a, 0, sizeof *a);
    a->cur = a->end = a->limit = empty_arena;
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

/* Moves a->end a window past need (at most to a->limit), populating the pages on the way. */
static void extend_end(cfx_arena *a, char *need)
{
#if ARENA_MMAP
    size_t window = a->total / 64;
    window = window < 32 * 1024 ? 32 * 1024 : window > 1024 * 1024 ? 1024 * 1024 : window;
    window &= ~(size_t)(PAGE - 1);
    uintptr_t to = ((uintptr_t)need + window + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    char *end = to < (uintptr_t)a->limit ? (char *)to : a->limit;
    /* a->end is page aligned except at the start of the chunk (after the header) */
    char *from = (char *)(((uintptr_t)a->end + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
    if (from < end && !populate(from, end))
        end = a->limit; /* the rest faults in on first touch */
    a->end = end;
#else
    (void)need;
    a->end = a->limit;
#endif
}

void *cfx_arena_alloc_slow(cfx_arena *a, size_t size)
{
    if (a->next_size == 0)
        a->next_size = FIRST_CHUNK;
    /* room left in the current chunk, only not populated yet */
    size = cfx_arena_round(size);
    if (a->end < a->limit && size <= (size_t)(a->limit - a->cur)) {
        char *p = a->cur;
        extend_end(a, p + size);
        a->cur = p + size;
        return p;
    }
    if (size > a->next_size / 4) {
        /* a dedicated chunk, kept behind the current one */
        cfx_arena_chunk *c = new_chunk(size, true);
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
    bool big = a->next_size >= BIG_CHUNK;
    size_t csize = big ? a->next_size - sizeof(cfx_arena_chunk) : a->next_size;
    cfx_arena_chunk *c = new_chunk(csize, false);
    if (!c)
        return NULL;
    c->size = csize;
    c->next = a->chunks;
    a->chunks = c;
    a->total += sizeof *c + c->size;
    a->cur = c->data + size;
    a->limit = c->data + c->size;
    a->end = a->limit;
#if ARENA_MMAP
    if (big && c->mapped && can_populate()) {
        a->end = c->data; /* the header's page is touched already */
        extend_end(a, a->cur);
    }
#endif
    if (a->next_size < MAX_CHUNK)
        a->next_size *= 2;
    return c->data;
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
