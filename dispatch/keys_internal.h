/* keys_internal.h - the key-set queries on every dispatch, inline for the library's own use.
 *
 * keys.h exports each of these as a function (cfx_keyset_table_index, cfx_local_keys_get,
 * ...); the dispatch path calls the inline implementations here instead, which the exported
 * functions wrap: one implementation, no call per query. Not installed: the table and the
 * thread-local below are hidden symbols, not part of the ABI. */
#ifndef CFX_KEYS_INTERNAL_H
#define CFX_KEYS_INTERNAL_H

#include "dispatch/keys.h"

/* c10's offsetsAndMasks plus the first runtime key of each functionality, indexed by
 * functionality index, 0 past the last one (keys.c): each query is two count-leading-zeros and
 * one lookup here. */
typedef struct cfx_keys_functionality_info {
    uint16_t offset; /* table slot of the functionality (of its CPU instance if per-backend) */
    uint16_t mask;   /* backend bits that select the instance: all of them, or 0 */
    uint16_t base;   /* the key itself, or StartOf<F>Backends when per-backend */
    uint16_t unused; /* 8-byte entries: one scaled load per lookup */
} cfx_keys_functionality_info;
extern const cfx_keys_functionality_info cfx_keys_infos[64];

/* 0-based index of the highest set bit of a non-zero x. `clz ^ 63` rather than `63 - clz`:
 * the same for 0..63, and compilers turn it into one bsr/lzcnt-free instruction. */
static inline uint64_t cfx_keys_top_bit(uint64_t x) { return (uint64_t)__builtin_clzll(x) ^ 63; }

/* 1-based index of the highest set bit, 0 for none (c10's indexOfHighestBit); x < 2^63. */
static inline int cfx_keys_high_bit(uint64_t x) { return (int)cfx_keys_top_bit((x << 1) | 1); }

static inline cfx_backend cfx_keys_highest_backend(cfx_keyset s)
{
    return (cfx_backend)cfx_keys_high_bit(s.repr & ((1u << CFX_NUM_BACKENDS) - 1));
}

/* cfx_keyset_table_index */
static inline int cfx_keys_table_index(cfx_keyset s)
{
    /* offset + high_bit((s & mask) >> 1) at high_bit(s >> 16), with the shifts folded away:
     * ((s >> 16) << 1) | 1 == (s >> 15) | 1, and the 0-based top bit of (s & mask) | 1 is the
     * 1-based top bit of (s & mask) >> 1 (0 when no backend bit above CPU's is set). */
    const cfx_keys_functionality_info *fi = &cfx_keys_infos[cfx_keys_top_bit((s.repr >> (CFX_NUM_BACKENDS - 1)) | 1)];
    return (int)(fi->offset + cfx_keys_top_bit((s.repr & fi->mask) | 1));
}

/* This thread's sets (local_keys.c). A constant initializer gives every thread the defaults
 * from the TLS image, with no per-thread constructor; reads and writes are plain copies. */
extern _Thread_local cfx_local_keys cfx_local_keys_tls;

/* cfx_local_keys_get / cfx_local_keys_set */
static inline cfx_local_keys cfx_keys_local(void) { return cfx_local_keys_tls; }
static inline void cfx_keys_set_local(cfx_local_keys k) { cfx_local_keys_tls = k; }

#endif
