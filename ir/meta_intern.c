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
 * the same buffer), val and tensor_meta by their fields and their dims by value (or, for the
 * val of a fake tensor the fake mode has interned, by its record's id: dispatch/fake_meta.c
 * hash-conses a fake's dims once, and a record made from the same id has the same dims). A
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
    uint64_t word[3];                /* what key_words says of the slots */
    uint64_t val_id;                 /* the key's val_id when it made the record, or 0 */
    const char *key_file, *key_func; /* the site pointers the record was found by */
    cfx_site site;                   /* the site's copy, strings interned */
    cfx_meta_val val;
    cfx_tensor_meta tm;
    int64_t d[];                     /* val's sizes and strides, then tm's unless they are val's */
} meta_rec;

/* The small fields of a key in three words, read as they lie in memory: val's and
 * tensor_meta's first eight bytes hold all of theirs (kind, dtype, device, rank; rank, dtype,
 * memory format, requires_grad, is_quantized) without padding. word[0] is val's (0 without a
 * val: a val's kind is never 0), word[1] tensor_meta's (0 without), its memory format's byte
 * cleared when the format is derived from the dims; word[2] has the flags below and the site's
 * line. */
_Static_assert(offsetof(cfx_meta_val, device) == 2 && sizeof(cfx_device) == 2 && offsetof(cfx_meta_val, n) == 4 &&
                   offsetof(cfx_meta_val, sizes) >= 8,
               "a val's small fields are its first eight bytes");
_Static_assert(offsetof(cfx_tensor_meta, is_quantized) + sizeof(bool) == 8 && offsetof(cfx_tensor_meta, shape) >= 8,
               "a tensor_meta's small fields are its first eight bytes");
enum { KEY_TM = 1, KEY_DERIVED_FORMAT = 2, KEY_SITE = 4, KEY_SHARED_DIMS = 8 };

static inline uint64_t head_word(const void *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The bits of memory_format in a tensor_meta's head word. */
static inline uint64_t format_bits(void)
{
    unsigned char b[8] = {0};
    b[offsetof(cfx_tensor_meta, memory_format)] = 0xff;
    return head_word(b);
}

static inline void key_words(const ir_meta_key *k, uint64_t w[3])
{
    const cfx_meta_val *v = k->val;
    const cfx_tensor_meta *t = k->tm;
    w[0] = v ? head_word(v) : 0;
    w[1] = 0;
    w[2] = k->site ? KEY_SITE | (uint64_t)(uint32_t)k->site->line << 32 : 0;
    if (t) {
        w[1] = head_word(t);
        w[2] |= KEY_TM;
        if (k->tm_derived_format) {
            w[1] &= ~format_bits();
            w[2] |= KEY_DERIVED_FORMAT;
        }
        if (v && v->n == t->ndim && v->sizes == t->shape && v->strides == t->stride)
            w[2] |= KEY_SHARED_DIMS;
    }
}

static inline bool dims_equal(const int64_t *a, const int64_t *sizes, const int64_t *strides, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (a[i] != sizes[i] || a[n + i] != strides[i])
            return false;
    return true;
}

/* A lookup: the key and its words, computed once. */
typedef struct lookup {
    const ir_meta_key *k;
    uint64_t word[3];
} lookup;

/* Whether record r says what the lookup's key says. The words and the site's pointers go first
 * (one compare each); the site's strings are compared last, by content, since a caller may
 * have written other text at the same pointers. */
static bool meta_eq(const meta_rec *r, const lookup *l)
{
    const ir_meta_key *k = l->k;
    if (r->word[0] != l->word[0] || r->word[1] != l->word[1] || r->word[2] != l->word[2])
        return false;
    const cfx_meta_val *v = k->val;
    bool same_tensor_meta = k->val_id && k->val_id == r->val_id; /* the dims are equal */
    if (v && !same_tensor_meta &&
        (r->val.storage_offset != v->storage_offset || !dims_equal(r->val.sizes, v->sizes, v->strides, v->n)))
        return false;
    const cfx_tensor_meta *t = k->tm;
    if (t && !(l->word[2] & KEY_SHARED_DIMS) && !dims_equal(r->tm.shape, t->shape, t->stride, t->ndim))
        return false;
    const cfx_site *s = k->site;
    if (!s)
        return true; /* KEY_SITE agreed: neither has a site */
    if (r->key_file != s->file || r->key_func != s->func)
        return false;
    /* the copies are never NULL but func's may be (then so is key_func, the same pointer) */
    return strcmp(r->site.file, s->file ? s->file : "") == 0 && (!s->func || strcmp(r->site.func, s->func) == 0);
}

/* The hash of the words, the site's file pointer (which stands for its contents) and the
 * sizes; what else meta_eq compares (function, storage offset, strides) nearly always follows
 * from these, and a key that differs only there takes a probe more. */
static inline uint32_t hash_key(const lookup *l)
{
    const ir_meta_key *k = l->k;
    uint64_t h = mix(mix(l->word[0], l->word[1]), l->word[2] ^ (k->site ? (uint64_t)(uintptr_t)k->site->file : 0));
    if (k->val)
        for (int32_t i = 0; i < k->val->n; i++)
            h = mix(h, (uint64_t)k->val->sizes[i]);
    if (k->tm && !(l->word[2] & KEY_SHARED_DIMS))
        for (int32_t i = 0; i < k->tm->ndim; i++)
            h = mix(h, (uint64_t)k->tm->shape[i]);
    return fold(h);
}

static bool grow(ir_hcons *h)
{
    uint32_t cap = h->cap ? h->cap * 2 : 64;
    struct ir_hcons_slot *t = cfx_calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t i = 0; i < h->cap; i++)
        if (h->slots[i].rec) {
            uint32_t j = h->slots[i].hash & (cap - 1);
            while (t[j].rec)
                j = (j + 1) & (cap - 1);
            t[j] = h->slots[i];
        }
    cfx_free(h->slots);
    h->slots = t;
    h->cap = cap;
    return true;
}

void ir_meta_free(cfx_graph *g)
{
    cfx_free(g->hc_meta.slots);
    g->hc_meta = (ir_hcons){0};
}

/* A new record for the lookup's key, copying what it says, entered into the table; NULL + error
 * on OOM. Only the first lookup of each distinct key comes here. */
static meta_rec *add_record(cfx_graph *g, const lookup *l, uint32_t hash)
{
    ir_hcons *h = &g->hc_meta;
    if ((h->count + 1) * 2 > h->cap && !grow(h))
        goto oom;
    const ir_meta_key *k = l->k;
    const cfx_meta_val *v = k->val;
    const cfx_tensor_meta *t = k->tm;
    bool shared = l->word[2] & KEY_SHARED_DIMS;
    size_t nd = (v ? 2 * (size_t)v->n : 0) + (t && !shared ? 2 * (size_t)t->ndim : 0);
    meta_rec *r = cfx_arena_alloc(&g->arena, sizeof *r + nd * sizeof(int64_t));
    if (!r)
        goto oom;
    r->m = (cfx_meta){NULL, NULL, NULL, NULL, 0, CFX_META_SHARED};
    memcpy(r->word, l->word, sizeof r->word);
    r->val_id = k->val ? k->val_id : 0;
    if (k->site) {
        const cfx_site *s = k->site;
        cfx_names *ns = g->names;
        r->site = (cfx_site){cfx_names_intern(ns, s->file ? s->file : "", s->file ? strlen(s->file) : 0), s->line,
                             s->func ? cfx_names_intern(ns, s->func, strlen(s->func)) : NULL};
        if (!r->site.file || (s->func && !r->site.func))
            goto oom;
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
    uint32_t mask = h->cap - 1, j = hash & mask;
    while (h->slots[j].rec)
        j = (j + 1) & mask;
    h->slots[j] = (struct ir_hcons_slot){hash, r};
    h->count++;
    return r;
oom:
    cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return NULL;
}

/* Record r, found for key k, becomes the last one found. It takes k's val_id (its dims are
 * k's: they were just compared), so that the next key with that id is matched by the id: a
 * record first made without one (a placeholder's, before its fake had a record) or by
 * another fake mode's tensor. */
static cfx_meta *found(ir_hcons *h, meta_rec *r, const ir_meta_key *k)
{
    if (k->val && k->val_id)
        r->val_id = k->val_id;
    h->last = r;
    return &r->m;
}

cfx_meta *ir_meta_change(cfx_graph *g, cfx_meta *m, const ir_meta_key *c)
{
    if (m && m->cap_entries != CFX_META_SHARED)
        return ir_meta_set_private(g, m, c);
    /* the key: the change, where it leaves a slot as it is, with the slot of m's record (a
     * node's first meta, the tracer's case, is the change itself) */
    ir_meta_key merged;
    const ir_meta_key *k = c;
    if (m) {
        const meta_rec *old = (const meta_rec *)(const void *)m;
        merged = *c;
        if (!c->site)
            merged.site = m->stack_trace;
        if (!c->val) {
            merged.val = m->val;
            merged.val_id = old->val_id;
        }
        if (!c->tm) {
            merged.tm = m->tensor_meta;
            merged.tm_derived_format = (old->word[2] & KEY_DERIVED_FORMAT) != 0;
        }
        k = &merged;
    }
    lookup l = {k, {0, 0, 0}};
    key_words(k, l.word);
    ir_hcons *h = &g->hc_meta;
    /* a traced model sets the same meta on node after node: the last record first */
    if (h->last && meta_eq(h->last, &l))
        return found(h, (meta_rec *)h->last, k);
    uint32_t hash = hash_key(&l);
    if (h->cap) {
        uint32_t mask = h->cap - 1;
        for (uint32_t j = hash & mask; h->slots[j].rec; j = (j + 1) & mask)
            if (h->slots[j].hash == hash && meta_eq(h->slots[j].rec, &l))
                return found(h, (meta_rec *)h->slots[j].rec, k);
    }
    meta_rec *r = add_record(g, &l, hash);
    h->last = r;
    return r ? &r->m : NULL;
}
