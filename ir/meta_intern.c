/* meta_intern.c - the graph's hash-consed meta records.
 *
 * Tracing sets the same few things on every node: a tensor val, its tensor_meta and the call
 * site, and in a typical model they repeat (a [64, 64] chain has one shape, a model a few
 * hundred call sites). So these are immutable records made once per graph: one tensor record
 * per distinct tensor description (dtype, device, sizes, strides, storage offset), which is
 * the val of the nodes it describes and computes their tensor_meta's memory format once; one
 * site record per call site; and one meta record per distinct (val, tensor_meta, stack_trace).
 * A meta record's key is made of records, so it compares and hashes by pointer: a traced result
 * costs three lookups (site, tensor, meta) and a million such nodes share a few records. Each
 * kind has an open-addressing table of its records (ir_hcons); the records live in the
 * graph's arena. */
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
    hc_free(&g->hc_tensor);
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

/* ---- tensors --------------------------------------------------------------------------------- */

/* One record per distinct tensor description (ir_tensor_rec): dtype, device, sizes, strides,
 * storage offset. It is the val of every node whose result it describes, and the source of
 * their tensor_meta (whose memory format it computes once). */

static bool tensor_eq(const void *rec, const void *key)
{
    const cfx_meta_val *a = &((const ir_tensor_rec *)rec)->val, *b = key;
    if (a->dtype != b->dtype || a->device.type != b->device.type || a->device.index != b->device.index ||
        a->n != b->n || a->storage_offset != b->storage_offset)
        return false;
    for (int32_t i = 0; i < b->n; i++)
        if (a->sizes[i] != b->sizes[i] || a->strides[i] != b->strides[i])
            return false;
    return true;
}

const cfx_meta_val *ir_intern_tensor(cfx_graph *g, const cfx_meta_val *v)
{
    uint64_t h = mix((uint64_t)(uint8_t)v->dtype | (uint64_t)(uint8_t)v->device.type << 8 |
                         (uint64_t)(uint8_t)v->device.index << 16 | (uint64_t)(uint32_t)v->n << 32,
                     (uint64_t)v->storage_offset);
    for (int32_t i = 0; i < v->n; i++)
        h = mix(mix(h, (uint64_t)v->sizes[i]), (uint64_t)v->strides[i]);
    struct ir_hcons_slot *s = hc_find(&g->hc_tensor, fold(h), tensor_eq, v);
    if (s && s->rec)
        return &((const ir_tensor_rec *)s->rec)->val;
    ir_tensor_rec *r = new_record(g, s, sizeof *r + 2 * (size_t)v->n * sizeof(int64_t));
    if (!r)
        return NULL;
    r->val = *v;
    r->val.kind = CFX_MVAL_TENSOR;
    memset(&r->val.u, 0, sizeof r->val.u);
    if (v->n) {
        memcpy(r->d, v->sizes, (size_t)v->n * sizeof(int64_t));
        memcpy(r->d + v->n, v->strides, (size_t)v->n * sizeof(int64_t));
    }
    r->val.sizes = r->d;
    r->val.strides = r->d + v->n;
    r->memory_format = (int8_t)cfx_memory_format_of(r->d, r->d + v->n, v->n);
    hc_fill(&g->hc_tensor, s, fold(h), r);
    return &r->val;
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

/* A shared record (ir_meta_rec) holds its tensor_meta itself (built from its tensor record on
 * creation) and its key, whose parts are records or packed flags, so a lookup compares four
 * words. */
static bool meta_eq(const void *rec, const void *key)
{
    const ir_meta_key *a = &((const ir_meta_rec *)rec)->key, *b = key;
    return a->site == b->site && a->val == b->val && a->tm_src == b->tm_src && a->tm_flags == b->tm_flags;
}

void ir_tensor_meta_from(cfx_tensor_meta *tm, const cfx_meta_val *src, uint32_t flags)
{
    *tm = (cfx_tensor_meta){
        .ndim = src->n,
        .dtype = src->dtype,
        .memory_format = (int8_t)(flags >> IR_TM_FORMAT_SHIFT),
        .requires_grad = (flags & IR_TM_REQUIRES_GRAD) != 0,
        .is_quantized = (flags & IR_TM_QUANTIZED) != 0,
        .shape = src->sizes,
        .stride = src->strides,
    };
}

cfx_meta *ir_intern_meta(cfx_graph *g, const ir_meta_key *k)
{
    uint32_t h = fold(mix(mix(mix((uint64_t)(uintptr_t)k->site, (uint64_t)(uintptr_t)k->val),
                              (uint64_t)(uintptr_t)k->tm_src),
                          k->tm_flags));
    struct ir_hcons_slot *s = hc_find(&g->hc_meta, h, meta_eq, k);
    if (s && s->rec)
        return (cfx_meta *)s->rec;
    ir_meta_rec *r = new_record(g, s, sizeof *r);
    if (!r)
        return NULL;
    r->m = (cfx_meta){k->val, NULL, k->site, NULL, 0, CFX_META_SHARED};
    if (k->tm_src) {
        ir_tensor_meta_from(&r->tm, k->tm_src, k->tm_flags);
        r->m.tensor_meta = &r->tm;
    }
    r->key = *k;
    hc_fill(&g->hc_meta, s, h, r);
    return &r->m;
}
