/* fake_meta.c - a fake tensor's metadata as one interned record of its fake mode.
 *
 * The dispatch cache (fake_cache.c) keys a call by every fake argument's metadata: dtype,
 * rank, fake device, storage offset, sizes and strides. Reading, hashing and comparing those
 * arrays on every call costs more than the rest of the lookup, and a traced model passes the
 * same few shapes again and again. So each distinct metadata is stored once per mode, in a
 * hash-consed record, and a fake tensor points at its record (tensor.h's ext.fake_meta): it
 * is computed the first time the tensor is keyed, or given for free when the tensor is made
 * from a cache entry, whose output is a record too. A key then holds one word per tensor,
 * and equal words mean equal metadata.
 *
 * A record stays valid for its tensor as long as the metadata does: a tensor's ext state is
 * emptied when it is made or dies, cfx_fake_mark clears the pointer (the mode or device may
 * change), and cfx_tensor_set_geometry (the in-place views) drops it. Records live as long as
 * their mode, which every fake pointing at one keeps alive. Each carries a process-wide id
 * that is never reused, so that a layer above can tell two records apart even across modes. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/fake_internal.h"

/* A mode keeps at most this many records (as many as cache entries): a tensor whose metadata
 * is new after that is not keyed, and its calls bypass the cache. */
enum { MAX_RECORDS = 1 << 16 };

static uint64_t hash_of(const cfx_tensor *t)
{
    uint64_t h = (uint64_t)(uint8_t)t->dtype | (uint64_t)(uint8_t)t->ndim << 8 |
                 (uint64_t)(uint8_t)t->ext.fake_device.type << 16 | (uint64_t)(uint8_t)t->ext.fake_device.index << 24;
    h = (h ^ (uint64_t)t->storage_offset) * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < t->ndim; i++)
        h = (h ^ (uint64_t)t->sizes[i] ^ (uint64_t)t->strides[i] << 17) * 0x9E3779B97F4A7C15ull;
    return h ^ h >> 32;
}

static bool describes(const cfx_fake_meta *r, uint64_t hash, const cfx_tensor *t)
{
    if (r->hash != hash || r->dtype != t->dtype || r->ndim != t->ndim || r->storage_offset != t->storage_offset ||
        !cfx_device_eq(r->device, t->ext.fake_device))
        return false;
    for (int i = 0; i < t->ndim; i++)
        if (r->sizes[i] != t->sizes[i] || r->strides[i] != t->strides[i])
            return false;
    return true;
}

static bool grow(cfx_fake_mode *m)
{
    uint32_t cap = m->metas_cap ? 2 * m->metas_cap : 64;
    cfx_fake_meta **t = cfx_calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t i = 0; i < m->metas_cap; i++)
        if (m->metas[i]) {
            uint32_t j = (uint32_t)m->metas[i]->hash & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = m->metas[i];
        }
    cfx_free(m->metas);
    m->metas = t;
    m->metas_cap = cap;
    return true;
}

static cfx_fake_meta *add(cfx_fake_mode *m, uint64_t hash, const cfx_tensor *t)
{
    static atomic_uint_fast64_t next_id = 1;
    if (m->metas_count >= MAX_RECORDS || ((m->metas_count + 1) * 2 > m->metas_cap && !grow(m)))
        return NULL;
    cfx_fake_meta *r = cfx_malloc(sizeof *r + 2 * (size_t)t->ndim * sizeof(int64_t));
    if (!r)
        return NULL;
    r->id = (uint64_t)atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
    r->hash = hash;
    r->dtype = t->dtype;
    r->ndim = t->ndim;
    r->device = t->ext.fake_device;
    r->storage_offset = t->storage_offset;
    r->sizes = r->dims;
    r->strides = r->dims + t->ndim;
    memcpy(r->dims, t->sizes, (size_t)t->ndim * sizeof *t->sizes);
    memcpy(r->dims + t->ndim, t->strides, (size_t)t->ndim * sizeof *t->strides);
    uint32_t mask = m->metas_cap - 1, j = (uint32_t)hash & mask;
    while (m->metas[j])
        j = (j + 1) & mask;
    m->metas[j] = r;
    m->metas_count++;
    return r;
}

const cfx_fake_meta *cfx_fake_meta_intern(cfx_fake_mode *m, cfx_tensor *t)
{
    uint64_t hash = hash_of(t);
    const cfx_fake_meta *r = NULL;
    if (m->metas_cap) {
        uint32_t mask = m->metas_cap - 1;
        for (uint32_t j = (uint32_t)hash & mask; m->metas[j]; j = (j + 1) & mask)
            if (describes(m->metas[j], hash, t)) {
                r = m->metas[j];
                break;
            }
    }
    if (!r)
        r = add(m, hash, t);
    t->ext.fake_meta = r;
    return r;
}

void cfx_fake_meta_free(cfx_fake_mode *m)
{
    for (uint32_t i = 0; i < m->metas_cap; i++)
        cfx_free(m->metas[i]);
    cfx_free(m->metas);
    m->metas = NULL;
    m->metas_cap = m->metas_count = 0;
}
