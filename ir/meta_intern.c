/* meta_intern.c - the graph's hash-consed meta records.
 *
 * Tracing sets the same few things on every node: a tensor val, its tensor_meta and the call
 * site, and in a typical model they repeat (a [64, 64] chain has one shape, a model a few
 * hundred call sites). So these records are immutable and made once per graph: one dims array
 * per distinct (sizes, strides), one site record per call site, and one meta record per
 * distinct (val, tensor_meta, stack_trace) contents. Equal records are then equal pointers, so
 * a node's meta costs one pointer, and a meta record's key compares dims and sites by
 * pointer. Each kind has an open-addressing table of its records (ir_hcons); the records live
 * in the graph's arena. Computed once with each dims array: the memory format tensor_meta
 * reports for it. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

/* Hashes combine words by xor and multiply; fold brings the product's well-mixed high bits
 * down to the low ones the tables index by. */
static inline uint64_t mix(uint64_t h, uint64_t x) { return (h ^ x) * 0x9E3779B97F4A7C15ull; }

static inline uint32_t fold(uint64_t h) { return (uint32_t)(h ^ (h >> 29) ^ (h >> 47)); }

/* ---- the tables ------------------------------------------------------------------------------ */

typedef bool (*hc_eq_fn)(const void *rec, const void *key);

static bool hc_grow(ir_hcons *h)
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

/* The slot holding a record equal to key, or the empty slot where it belongs (the caller
 * fills it with hc_fill). NULL on OOM. Inline, so that each table's eq is a direct call. */
static inline struct ir_hcons_slot *hc_find(ir_hcons *h, uint32_t hash, hc_eq_fn eq, const void *key)
{
    if ((h->count + 1) * 2 > h->cap && !hc_grow(h))
        return NULL;
    uint32_t mask = h->cap - 1;
    for (uint32_t j = hash & mask;; j = (j + 1) & mask) {
        struct ir_hcons_slot *s = &h->slots[j];
        if (!s->rec || (s->hash == hash && eq(s->rec, key)))
            return s;
    }
}

static void hc_fill(ir_hcons *h, struct ir_hcons_slot *s, uint32_t hash, const void *rec)
{
    s->hash = hash;
    s->rec = rec;
    h->count++;
}

static void hc_free(ir_hcons *h)
{
    free(h->slots);
    h->slots = NULL;
    h->cap = h->count = 0;
}

void ir_meta_free(cfx_graph *g)
{
    hc_free(&g->hc_dims);
    hc_free(&g->hc_site);
    hc_free(&g->hc_meta);
}

/* A new arena record of size bytes for the empty slot s (NULL: hc_find ran out of memory).
 * NULL + error on OOM. */
static void *new_record(cfx_graph *g, const struct ir_hcons_slot *s, size_t size)
{
    void *r = s ? cfx_arena_alloc(&g->arena, size) : NULL;
    if (!r)
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return r;
}

/* ---- dims ------------------------------------------------------------------------------------ */

/* n sizes then n strides in one arena array, with the memory format they are contiguous in. */
typedef struct dims_key {
    int32_t n;
    const int64_t *sizes, *strides;
} dims_key;

typedef struct dims_rec {
    int32_t n;
    int8_t memory_format;
    int64_t d[];
} dims_rec;

static bool dims_eq(const void *rec, const void *key)
{
    const dims_rec *r = rec;
    const dims_key *k = key;
    if (r->n != k->n)
        return false;
    for (int32_t i = 0; i < k->n; i++)
        if (r->d[i] != k->sizes[i] || r->d[k->n + i] != k->strides[i])
            return false;
    return true;
}

const int64_t *ir_intern_dims(cfx_graph *g, const int64_t *sizes, const int64_t *strides, int32_t n, bool *oom)
{
    if (n <= 0)
        return NULL;
    dims_key k = {n, sizes, strides};
    uint64_t h = (uint64_t)n;
    for (int32_t i = 0; i < n; i++)
        h = mix(mix(h, (uint64_t)sizes[i]), (uint64_t)strides[i]);
    struct ir_hcons_slot *s = hc_find(&g->hc_dims, fold(h), dims_eq, &k);
    if (s && s->rec)
        return ((const dims_rec *)s->rec)->d;
    dims_rec *r = new_record(g, s, sizeof *r + 2 * (size_t)n * sizeof(int64_t));
    if (!r) {
        *oom = true;
        return NULL;
    }
    r->n = n;
    memcpy(r->d, sizes, (size_t)n * sizeof(int64_t));
    memcpy(r->d + n, strides, (size_t)n * sizeof(int64_t));
    r->memory_format = (int8_t)cfx_memory_format_of(r->d, r->d + n, n);
    hc_fill(&g->hc_dims, s, fold(h), r);
    return r->d;
}

int8_t ir_dims_memory_format(const int64_t *d)
{
    if (!d)
        return CFX_CONTIGUOUS_FORMAT; /* rank 0 */
    return ((const dims_rec *)(const void *)((const char *)d - offsetof(dims_rec, d)))->memory_format;
}

/* ---- sites ----------------------------------------------------------------------------------- */

/* A site record is keyed by where the caller's strings are (CFX_HERE's __FILE__ and __func__
 * are the same pointers on every call from one line) and by what they say: its own copies,
 * interned in the name space, outlive the caller's and are compared with them on every hit,
 * since a caller may write other text into the same buffer. The record the graph hands out is
 * `site`, the copies. */
typedef struct site_rec {
    cfx_site site;
    const char *key_file, *key_func; /* the caller's pointers */
} site_rec;

static bool same_text(const char *copy, const char *s) { return copy == s || (copy && s && strcmp(copy, s) == 0); }

static bool site_eq(const void *rec, const void *key)
{
    const site_rec *r = rec;
    const cfx_site *k = key;
    return r->key_file == k->file && r->key_func == k->func && r->site.line == k->line &&
           same_text(r->site.file, k->file ? k->file : "") && same_text(r->site.func, k->func);
}

const cfx_site *ir_intern_site(cfx_graph *g, const cfx_site *site)
{
    uint32_t h = fold(mix(mix((uint64_t)(uintptr_t)site->file, (uint64_t)(uintptr_t)site->func), (uint64_t)site->line));
    struct ir_hcons_slot *s = hc_find(&g->hc_site, h, site_eq, site);
    if (s && s->rec)
        return &((const site_rec *)s->rec)->site;
    site_rec *r = new_record(g, s, sizeof *r);
    if (!r)
        return NULL;
    cfx_names *ns = g->names;
    *r = (site_rec){
        {cfx_names_intern(ns, site->file ? site->file : "", site->file ? strlen(site->file) : 0), site->line,
         site->func ? cfx_names_intern(ns, site->func, strlen(site->func)) : NULL},
        site->file,
        site->func,
    };
    if (!r->site.file || (site->func && !r->site.func)) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    hc_fill(&g->hc_site, s, h, r);
    return &r->site;
}

/* ---- meta records ---------------------------------------------------------------------------- */

/* A shared record holds its val and tensor_meta itself (cfx_meta's slots point into it), so a
 * traced result costs one lookup here once its dims and site are known. It is keyed by what
 * its slots say: val and tensor_meta by their fields, their dims being interned (equal dims,
 * equal pointers), and the site by its record. */
typedef struct meta_rec {
    cfx_meta m;
    cfx_meta_val val;
    cfx_tensor_meta tm;
} meta_rec;

static uint64_t val_hash(const cfx_meta_val *v)
{
    if (!v)
        return 0;
    return mix(mix((uint64_t)(uint8_t)v->dtype | (uint64_t)(uint8_t)v->device.type << 8 |
                       (uint64_t)(uint8_t)v->device.index << 16 | (uint64_t)(uint32_t)v->n << 32,
                   (uint64_t)(uintptr_t)v->sizes),
               (uint64_t)v->storage_offset);
}

static uint64_t tm_hash(const cfx_tensor_meta *t)
{
    if (!t)
        return 0;
    return mix((uint64_t)(uint8_t)t->dtype | (uint64_t)(uint8_t)t->memory_format << 8 |
                   (uint64_t)t->requires_grad << 16 | (uint64_t)t->is_quantized << 17 | (uint64_t)(uint32_t)t->ndim << 32,
               (uint64_t)(uintptr_t)t->shape);
}

static bool val_same(const cfx_meta_val *a, const cfx_meta_val *b)
{
    if (!a || !b)
        return a == b;
    return a->dtype == b->dtype && a->device.type == b->device.type && a->device.index == b->device.index &&
           a->n == b->n && a->sizes == b->sizes && a->storage_offset == b->storage_offset;
}

static bool tm_same(const cfx_tensor_meta *a, const cfx_tensor_meta *b)
{
    if (!a || !b)
        return a == b;
    return a->ndim == b->ndim && a->dtype == b->dtype && a->memory_format == b->memory_format &&
           a->requires_grad == b->requires_grad && a->is_quantized == b->is_quantized && a->shape == b->shape;
}

static bool meta_eq(const void *rec, const void *key)
{
    const cfx_meta *a = rec, *b = key;
    return a->stack_trace == b->stack_trace && val_same(a->val, b->val) && tm_same(a->tensor_meta, b->tensor_meta);
}

cfx_meta *ir_intern_meta(cfx_graph *g, const cfx_meta *k)
{
    uint32_t h = fold(mix(mix(val_hash(k->val), tm_hash(k->tensor_meta)), (uint64_t)(uintptr_t)k->stack_trace));
    struct ir_hcons_slot *s = hc_find(&g->hc_meta, h, meta_eq, k);
    if (s && s->rec)
        return (cfx_meta *)s->rec;
    meta_rec *r = new_record(g, s, sizeof *r);
    if (!r)
        return NULL;
    r->m = (cfx_meta){NULL, NULL, k->stack_trace, NULL, 0, CFX_META_SHARED};
    if (k->val) {
        r->val = *k->val;
        memset(&r->val.u, 0, sizeof r->val.u); /* unused by a tensor val */
        r->m.val = &r->val;
    }
    if (k->tensor_meta) {
        r->tm = *k->tensor_meta;
        r->m.tensor_meta = &r->tm;
    }
    hc_fill(&g->hc_meta, s, h, r);
    return &r->m;
}
