/* meta_intern.c - the graph's shared meta records.
 *
 * Tracing sets the same few things on every node: a tensor val, its tensor_meta and the call
 * site, and in a typical model they repeat (a [64, 64] chain has one shape, a model a few
 * hundred call sites). So a node's meta is usually an immutable record made once per graph for
 * each distinct contents, holding copies of its val, tensor_meta (with their sizes and
 * strides, stored once when both describe the same ones, as a traced result's do) and site.
 * The records are kept in one open-addressing table and found by what they say, in one
 * lookup: the site by where the caller's strings are and by what they say (CFX_HERE's
 * __FILE__ and __func__ are the same pointers on every call from one line; the strings are
 * compared with the record's copies on every lookup, since a caller may write other text into
 * the same buffer), val and tensor_meta by their fields and their dims by value. A
 * tensor_meta whose memory format is what its dims say (one taken from a tensor) is keyed
 * without it; the record computes it once. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

/* Hashes combine words by xor and multiply; fold brings the product's well-mixed high bits
 * down to the low ones the table indexes by. */
static inline uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x9E3779B97F4A7C15ull; }

static inline uint32_t fold(uint64_t h) { return (uint32_t)(h ^ (h >> 29) ^ (h >> 47)); }

typedef struct meta_rec {
    cfx_meta m;                      /* slots point at the copies below */
    cfx_site site;                   /* the site's copy, strings interned */
    const char *key_file, *key_func; /* the site pointers the record was found by */
    uint64_t val_word, tm_word;      /* what key_words says of the slots */
    cfx_meta_val val;
    cfx_tensor_meta tm;
    int64_t d[];                     /* val's sizes and strides, then tm's unless they are val's */
} meta_rec;

/* The small fields of a key's val and tensor_meta, one word each (0: no such slot). */
enum { TM_DERIVED_FORMAT = 1 << 1, TM_SHARED_DIMS = 1 << 2, TM_REQUIRES_GRAD = 1 << 3, TM_QUANTIZED = 1 << 4 };

static uint64_t val_word(const cfx_meta_val *v)
{
    return v ? 1 | (uint64_t)(uint8_t)v->dtype << 8 | (uint64_t)(uint8_t)v->device.type << 16 |
                   (uint64_t)(uint8_t)v->device.index << 24 | (uint64_t)(uint32_t)v->n << 32
             : 0;
}

static uint64_t tm_word(const ir_meta_key *k)
{
    const cfx_tensor_meta *t = k->tm;
    if (!t)
        return 0;
    const cfx_meta_val *v = k->val;
    bool shared = v && v->n == t->ndim && v->sizes == t->shape && v->strides == t->stride;
    return 1 | (k->tm_derived_format ? TM_DERIVED_FORMAT : (uint64_t)(uint8_t)t->memory_format << 16) |
           (shared ? TM_SHARED_DIMS : 0) | (t->requires_grad ? TM_REQUIRES_GRAD : 0) |
           (t->is_quantized ? TM_QUANTIZED : 0) | (uint64_t)(uint8_t)t->dtype << 8 | (uint64_t)(uint32_t)t->ndim << 32;
}

static bool dims_equal(const int64_t *a, const int64_t *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static bool same_text(const char *copy, const char *s) { return copy == s || (copy && s && strcmp(copy, s) == 0); }

/* A lookup's key with its words computed once. */
typedef struct lookup {
    const ir_meta_key *k;
    uint64_t val_word, tm_word;
} lookup;

static bool meta_eq(const meta_rec *r, const lookup *l)
{
    const ir_meta_key *k = l->k;
    const cfx_site *s = k->site;
    if (r->val_word != l->val_word || r->tm_word != l->tm_word || (r->m.stack_trace != NULL) != (s != NULL))
        return false;
    if (s && (r->key_file != s->file || r->key_func != s->func || r->site.line != s->line ||
              !same_text(r->site.file, s->file ? s->file : "") || !same_text(r->site.func, s->func)))
        return false;
    const cfx_meta_val *v = k->val;
    if (v && (r->val.storage_offset != v->storage_offset || !dims_equal(r->val.sizes, v->sizes, v->n) ||
              !dims_equal(r->val.strides, v->strides, v->n)))
        return false;
    const cfx_tensor_meta *t = k->tm;
    return !t || (l->tm_word & TM_SHARED_DIMS) ||
           (dims_equal(r->tm.shape, t->shape, t->ndim) && dims_equal(r->tm.stride, t->stride, t->ndim));
}

static uint64_t hash_dims(uint64_t h, const int64_t *sizes, const int64_t *strides, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        h = mix(mix(h, (uint64_t)sizes[i]), (uint64_t)strides[i]);
    return h;
}

static uint32_t hash_key(const lookup *l)
{
    const ir_meta_key *k = l->k;
    uint64_t h = mix(l->val_word, l->tm_word);
    if (k->site)
        h = mix(mix(mix(h, (uint64_t)(uintptr_t)k->site->file), (uint64_t)(uintptr_t)k->site->func),
                (uint64_t)k->site->line);
    if (k->val)
        h = hash_dims(mix(h, (uint64_t)k->val->storage_offset), k->val->sizes, k->val->strides, k->val->n);
    if (k->tm && !(l->tm_word & TM_SHARED_DIMS))
        h = hash_dims(h, k->tm->shape, k->tm->stride, k->tm->ndim);
    return fold(h);
}

static bool grow(ir_hcons *h)
{
    uint32_t cap = h->cap ? h->cap * 2 : 64;
    struct ir_hcons_slot *t = calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t i = 0; i < h->cap; i++)
        if (h->slots[i].rec) {
            uint32_t j = h->slots[i].hash & (cap - 1);
            while (t[j].rec)
                j = (j + 1) & (cap - 1);
            t[j] = h->slots[i];
        }
    free(h->slots);
    h->slots = t;
    h->cap = cap;
    return true;
}

void ir_meta_free(cfx_graph *g)
{
    free(g->hc_meta.slots);
    g->hc_meta = (ir_hcons){0};
}

/* A new record for the lookup's key, copying what it says; NULL on OOM. */
static meta_rec *make_record(cfx_graph *g, const lookup *l)
{
    const ir_meta_key *k = l->k;
    const cfx_meta_val *v = k->val;
    const cfx_tensor_meta *t = k->tm;
    bool shared = l->tm_word & TM_SHARED_DIMS;
    size_t nd = (v ? 2 * (size_t)v->n : 0) + (t && !shared ? 2 * (size_t)t->ndim : 0);
    meta_rec *r = cfx_arena_alloc(&g->arena, sizeof *r + nd * sizeof(int64_t));
    if (!r)
        return NULL;
    r->m = (cfx_meta){NULL, NULL, NULL, NULL, 0, CFX_META_SHARED};
    r->val_word = l->val_word;
    r->tm_word = l->tm_word;
    if (k->site) {
        const cfx_site *s = k->site;
        cfx_names *ns = g->names;
        r->site = (cfx_site){cfx_names_intern(ns, s->file ? s->file : "", s->file ? strlen(s->file) : 0), s->line,
                             s->func ? cfx_names_intern(ns, s->func, strlen(s->func)) : NULL};
        if (!r->site.file || (s->func && !r->site.func))
            return NULL;
        r->key_file = s->file;
        r->key_func = s->func;
        r->m.stack_trace = &r->site;
    }
    int64_t *d = r->d;
    if (v) {
        r->val = *v;
        memset(&r->val.u, 0, sizeof r->val.u); /* unused by a tensor val */
        ir_put_dims(d, v->sizes, v->strides, v->n);
        r->val.sizes = d;
        r->val.strides = d + v->n;
        d += 2 * v->n;
        r->m.val = &r->val;
    }
    if (t) {
        r->tm = *t;
        if (shared) {
            r->tm.shape = r->val.sizes;
            r->tm.stride = r->val.strides;
        } else {
            ir_put_dims(d, t->shape, t->stride, t->ndim);
            r->tm.shape = d;
            r->tm.stride = d + t->ndim;
        }
        if (k->tm_derived_format)
            r->tm.memory_format = (int8_t)cfx_memory_format_of(r->tm.shape, r->tm.stride, t->ndim);
        r->m.tensor_meta = &r->tm;
    }
    return r;
}

cfx_meta *ir_intern_meta(cfx_graph *g, const ir_meta_key *k)
{
    lookup l = {k, val_word(k->val), tm_word(k)};
    uint32_t hash = hash_key(&l);
    ir_hcons *h = &g->hc_meta;
    if ((h->count + 1) * 2 > h->cap && !grow(h)) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    uint32_t mask = h->cap - 1, j = hash & mask;
    for (; h->slots[j].rec; j = (j + 1) & mask)
        if (h->slots[j].hash == hash && meta_eq(h->slots[j].rec, &l))
            return &((meta_rec *)h->slots[j].rec)->m;
    meta_rec *r = make_record(g, &l);
    if (!r) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    h->slots[j] = (struct ir_hcons_slot){hash, r};
    h->count++;
    return &r->m;
}

ir_meta_key ir_meta_key_of(const cfx_meta *shared)
{
    if (!shared)
        return (ir_meta_key){0};
    const meta_rec *r = (const meta_rec *)(const void *)shared;
    return (ir_meta_key){shared->stack_trace, shared->val, shared->tensor_meta, (r->tm_word & TM_DERIVED_FORMAT) != 0};
}
