/* hash.h - the two hash functions cfx's tables use: FNV-1a for strings and a murmur3-style
 * finaliser for pointers (whose low bits are alignment zeros and must be mixed up). */
#ifndef CFX_HASH_H
#define CFX_HASH_H

#include <stdint.h>

static inline uint64_t cfx_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static inline uint64_t cfx_hash_ptr(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

#endif
