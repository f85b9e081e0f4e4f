/* arena.h - a chunked bump allocator.
 *
 * A graph allocates everything it owns (nodes, argument arrays, use records, names, meta) from
 * one arena and releases it all at once when the graph is freed, so building a million-node
 * graph costs a few hundred mallocs, not millions. Nothing is freed individually: erased
 * nodes and replaced argument arrays stay until the arena dies (QBE's tombstones). Chunks grow
 * geometrically up to a cap; a request larger than the cap gets a chunk of its own. */
#ifndef CFX_IR_ARENA_H
#define CFX_IR_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/export.h"

typedef struct cfx_arena_chunk cfx_arena_chunk;

typedef struct cfx_arena {
    char *cur, *end;        /* free space in the current chunk, as far as it is populated */
    char *limit;            /* the current chunk's end (end < limit: not populated yet) */
    cfx_arena_chunk *chunks; /* newest first */
    size_t next_size;       /* size of the next regular chunk */
    size_t total;           /* bytes obtained from malloc, for statistics */
} cfx_arena;

CFX_API void cfx_arena_init(cfx_arena *a);
CFX_API void cfx_arena_free(cfx_arena *a);
/* Slow path of cfx_arena_alloc (size rounded already): a new chunk. NULL on allocation
 * failure (no error set). */
CFX_API void *cfx_arena_alloc_slow(cfx_arena *a, size_t size);

/* size bytes aligned to 16 (cfx_value arrays are naturally aligned; sizes are rounded up to
 * 16 so the bump pointer stays aligned and needs no alignment step),
 * zero-filled: chunks come from calloc or fresh anonymous mappings and nothing is handed out
 * twice, so the graph stores no zeros in fresh records.
 * NULL on allocation failure. */
static inline size_t cfx_arena_round(size_t size) { return (size + 15) & ~(size_t)15; }
static inline void *cfx_arena_alloc(cfx_arena *a, size_t size)
{
    size = cfx_arena_round(size);
    uintptr_t p = (uintptr_t)a->cur, q = p + size;
    if (q <= (uintptr_t)a->end) { /* an empty arena's cur == end (arena.c) */
        a->cur = (char *)q;
        return (void *)p;
    }
    return cfx_arena_alloc_slow(a, size);
}

/* A NUL-terminated copy of s[0..len). */
CFX_API char *cfx_arena_strndup(cfx_arena *a, const char *s, size_t len);

#endif
