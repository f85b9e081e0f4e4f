/* meta.c - node.meta, stored out of line.
 *
 * A node without meta pays one NULL pointer. Values are copied into the graph's arena
 * (shapes, tuple items, strings), so meta never points at a tensor that may die. A tuple `val` may nest, so its copy walks an explicit
 * work list, like argument values.
 *
 * Tracing sets the same few things on every node: a tensor val, its tensor_meta and the call
 * site, and in a typical model they repeat (a [64, 64] chain has one shape). So the records
 * are immutable and hash-consed per graph: one dims array per distinct (sizes, strides), one
 * val record and one tensor_meta record per distinct metadata, one site record per distinct
 * (file, line, function), and one meta record per distinct (val, tensor_meta, stack_trace)
 * triple, so such a node's meta costs nothing but its pointer, and setting a slot is a hash
 * lookup instead of copies. A node gets a private, writable meta record only when it gets a
 * free-form entry or a val that is not a tensor. Sites are found first through a small cache keyed by the
 * caller's cfx_site pointer (checked against the cached strings, so a reused pointer with
 * other contents is still right), which skips hashing the strings on the hot path. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"
#include "ir/rodata.h"

#define SHARED CFX_META_SHARED

static inline uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}

static inline uint32_t fold(uint64_t h) { return (uint32_t)(h ^ (h >> 32)); }

static cfx_meta *intern_meta(cfx_graph *g, const cfx_meta *k);

/* A meta record n may write entries into. */
static cfx_meta *private_meta(cfx_node *n)
{
    cfx_meta *m = n->meta;
    if (m && m->cap_entries != SHARED)
        return m;
    cfx_meta *p = cfx_arena_alloc(&cfx_node_graph(n)->arena, sizeof *p);
    if (!p) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (m) {
        p->val = m->val;
        p->tensor_meta = m->tensor_meta;
        p->stack_trace = m->stack_trace;
    }
    n->meta = p;
    return p;
}

enum { PUT_VAL, PUT_TM, PUT_SITE };

/* Sets one typed slot: in place in a private record, else by moving to the shared record
 * with that slot changed. */
static int meta_put(cfx_node *n, int which, const void *p)
{
    cfx_meta *m = n->meta;
    cfx_graph *g = cfx_node_graph(n);
    /* tracing sets the same slots the same way node after node */
    uint32_t step = (fold(mix((uint64_t)(uintptr_t)m, (uint64_t)(uintptr_t)p)) + (uint32_t)which) & 63;
    if (g->meta_step[step].p == p && g->meta_step[step].from == m && p) {
        n->meta = g->meta_step[step].to;
        return CFX_OK;
    }
    cfx_meta k = {0};
    cfx_meta *dst = m && m->cap_entries != SHARED ? m : &k;
    if (m && dst == &k) {
        k.val = m->val;
        k.tensor_meta = m->tensor_meta;
        k.stack_trace = m->stack_trace;
    }
    if (which == PUT_VAL)
        dst->val = p;
    else if (which == PUT_TM)
        dst->tensor_meta = p;
    else
        dst->stack_trace = p;
    if (dst == &k) {
        cfx_meta *r = intern_meta(g, &k);
        if (!r)
            return CFX_ERR_NOMEM;
        g->meta_step[step].from = m;
        g->meta_step[step].p = p;
        g->meta_step[step].to = r;
        n->meta = r;
    }
    return CFX_OK;
}

/* ---- hash-consing ---------------------------------------------------------------------------- */

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
 * fills it and counts it). NULL on OOM. */
static struct ir_hcons_slot *hc_find(ir_hcons *h, uint32_t hash, hc_eq_fn eq, const void *key)
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

static void hc_free(ir_hcons *h)
{
    free(h->slots);
    h->slots = NULL;
    h->cap = h->count = 0;
}

/* Never a caller's site: marks a result cache slot the inline check must not take. */
static const cfx_site not_fast;

void ir_meta_init(cfx_graph *g)
{
    /* an empty slot's parts are 0, which a result without val and with dtype and rank 0
     * would match; its site is not_fast, which no caller's is */
    for (size_t i = 0; i < sizeof g->rmeta / sizeof *g->rmeta; i++)
        g->rmeta[i].fast = &not_fast;
}

void ir_meta_free(cfx_graph *g)
{
    hc_free(&g->hc_dims);
    hc_free(&g->hc_val);
    hc_free(&g->hc_tm);
    hc_free(&g->hc_site);
    hc_free(&g->hc_meta);
}

/* Dims: n sizes then n strides, in one arena array, with the memory format they are
 * contiguous in (tensor_meta's, computed once per distinct dims). */
typedef struct dims_key {
    int32_t n;
    const int64_t *sizes, *strides;
} dims_key;

typedef struct dims_rec {
    int32_t n;
    int8_t memory_format;
    int64_t d[];
} dims_rec;

static inline const dims_rec *dims_rec_of(const int64_t *d)
{
    return (const dims_rec *)(const void *)((const char *)d - offsetof(dims_rec, d));
}

/* Ranks are tiny: a loop beats two memcmp calls. */
static inline bool dims_match(const dims_rec *r, int32_t n, const int64_t *sizes, const int64_t *strides)
{
    if (r->n != n)
        return false;
    for (int32_t i = 0; i < n; i++)
        if (r->d[i] != sizes[i] || r->d[n + i] != strides[i])
            return false;
    return true;
}

static bool dims_eq(const void *rec, const void *key)
{
    const dims_key *k = key;
    return dims_match(rec, k->n, k->sizes, k->strides);
}

/* The graph's copy of (sizes, strides); NULL for n == 0 (and on OOM, error set). */
static const int64_t *intern_dims(cfx_graph *g, const int64_t *sizes, const int64_t *strides, int32_t n,
                                  bool *oom)
{
    if (n <= 0)
        return NULL;
    if (g->last_dims && dims_match(g->last_dims, n, sizes, strides))
        return ((const dims_rec *)g->last_dims)->d;
    dims_key k = {n, sizes, strides};
    uint64_t h = (uint64_t)n;
    for (int32_t i = 0; i < n; i++)
        h = mix(mix(h, (uint64_t)sizes[i]), (uint64_t)strides[i]);
    struct ir_hcons_slot *s = hc_find(&g->hc_dims, fold(h), dims_eq, &k);
    if (s && s->rec) {
        g->last_dims = s->rec;
        return ((const dims_rec *)s->rec)->d;
    }
    dims_rec *r = s ? cfx_arena_alloc(&g->arena, sizeof *r + 2 * (size_t)n * sizeof(int64_t)) : NULL;
    if (!r) {
        *oom = true;
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    r->n = n;
    memcpy(r->d, sizes, (size_t)n * sizeof(int64_t));
    memcpy(r->d + n, strides, (size_t)n * sizeof(int64_t));
    r->memory_format = (int8_t)cfx_memory_format_of(r->d, r->d + n, n);
    s->hash = fold(h);
    s->rec = r;
    g->hc_dims.count++;
    g->last_dims = r;
    return r->d;
}

/* tensor_meta's memory_format for dims interned by intern_dims (d NULL: rank 0). */
static inline int8_t dims_memory_format(const int64_t *d)
{
    return d ? dims_rec_of(d)->memory_format : (int8_t)CFX_CONTIGUOUS_FORMAT;
}

static bool val_eq(const void *rec, const void *key)
{
    const cfx_meta_val *a = rec, *b = key;
    return a->dtype == b->dtype && a->device.type == b->device.type && a->device.index == b->device.index &&
           a->n == b->n && a->sizes == b->sizes && a->storage_offset == b->storage_offset;
}

/* The graph's record for a tensor val whose dims are already interned. */
static const cfx_meta_val *intern_tensor_val(cfx_graph *g, const cfx_meta_val *k)
{
    if (g->last_val && val_eq(g->last_val, k))
        return g->last_val;
    uint64_t h = mix(mix(mix((uint64_t)(uint8_t)k->dtype, (uint64_t)(uint8_t)k->device.type << 8 |
                                                              (uint8_t)k->device.index),
                         (uint64_t)(uintptr_t)k->sizes ^ (uint64_t)k->n),
                     (uint64_t)k->storage_offset);
    struct ir_hcons_slot *s = hc_find(&g->hc_val, fold(h), val_eq, k);
    if (s && s->rec)
        return g->last_val = s->rec;
    cfx_meta_val *r = s ? cfx_arena_alloc(&g->arena, sizeof *r) : NULL;
    if (!r) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    *r = *k;
    memset(&r->u, 0, sizeof r->u);
    s->hash = fold(h);
    s->rec = r;
    g->hc_val.count++;
    return g->last_val = r;
}

static bool tm_eq(const void *rec, const void *key)
{
    const cfx_tensor_meta *a = rec, *b = key;
    return a->ndim == b->ndim && a->dtype == b->dtype && a->memory_format == b->memory_format &&
           a->requires_grad == b->requires_grad && a->is_quantized == b->is_quantized && a->shape == b->shape;
}

static const cfx_tensor_meta *intern_tensor_meta(cfx_graph *g, const cfx_tensor_meta *k)
{
    if (g->last_tm && tm_eq(g->last_tm, k))
        return g->last_tm;
    uint64_t h = mix(mix((uint64_t)(uint8_t)k->dtype | (uint64_t)(uint8_t)k->memory_format << 8 |
                             (uint64_t)k->requires_grad << 16 | (uint64_t)k->is_quantized << 17,
                         (uint64_t)k->ndim),
                     (uint64_t)(uintptr_t)k->shape);
    struct ir_hcons_slot *s = hc_find(&g->hc_tm, fold(h), tm_eq, k);
    if (s && s->rec)
        return g->last_tm = s->rec;
    cfx_tensor_meta *r = s ? cfx_arena_alloc(&g->arena, sizeof *r) : NULL;
    if (!r) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    *r = *k;
    s->hash = fold(h);
    s->rec = r;
    g->hc_tm.count++;
    return g->last_tm = r;
}

static bool meta_eq(const void *rec, const void *key)
{
    const cfx_meta *a = rec, *b = key;
    return a->val == b->val && a->tensor_meta == b->tensor_meta && a->stack_trace == b->stack_trace;
}

static cfx_meta *intern_meta(cfx_graph *g, const cfx_meta *k)
{
    uint32_t h = fold(mix(mix((uint64_t)(uintptr_t)k->val, (uint64_t)(uintptr_t)k->tensor_meta),
                          (uint64_t)(uintptr_t)k->stack_trace));
    struct ir_hcons_slot *s = hc_find(&g->hc_meta, h, meta_eq, k);
    if (s && s->rec)
        return (cfx_meta *)s->rec;
    cfx_meta *r = s ? cfx_arena_alloc(&g->arena, sizeof *r) : NULL;
    if (!r) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    *r = *k;
    r->entries = NULL;
    r->n_entries = 0;
    r->cap_entries = SHARED;
    s->hash = h;
    s->rec = r;
    g->hc_meta.count++;
    return r;
}

static bool site_eq(const void *rec, const void *key)
{
    const cfx_site *a = rec, *b = key;
    return a->file == b->file && a->line == b->line && a->func == b->func;
}

/* ---- memory format ------------------------------------------------------------------------- */

static bool contiguous_in_order(const int64_t *sizes, const int64_t *strides, const int *order, int nd)
{
    int64_t expected = 1;
    for (int k = 0; k < nd; k++) {
        int d = order[k];
        if (sizes[d] != 1) {
            if (strides[d] != expected)
                return false;
            expected *= sizes[d];
        }
    }
    return true;
}

int cfx_memory_format_of(const int64_t *sizes, const int64_t *strides, int ndim)
{
    /* compute_contiguous: numel 0 is contiguous; else strides match row-major, size-1 skipped */
    bool empty = false;
    for (int d = 0; d < ndim; d++)
        empty |= sizes[d] == 0;
    if (empty)
        return CFX_CONTIGUOUS_FORMAT;
    int row_major[CFX_MAX_DIMS];
    for (int d = 0; d < ndim && d < CFX_MAX_DIMS; d++)
        row_major[d] = ndim - 1 - d;
    if (ndim <= CFX_MAX_DIMS && contiguous_in_order(sizes, strides, row_major, ndim))
        return CFX_CONTIGUOUS_FORMAT;
    static const int cl2d[4] = {1, 3, 2, 0}, cl3d[5] = {1, 4, 3, 2, 0};
    if (ndim == 4 && contiguous_in_order(sizes, strides, cl2d, 4))
        return CFX_CHANNELS_LAST;
    if (ndim == 5 && contiguous_in_order(sizes, strides, cl3d, 5))
        return CFX_CHANNELS_LAST_3D;
    return -1;
}

/* ---- val ----------------------------------------------------------------------------------- */

/* Copies the shapes, strings and items a val points to into the arena (iterative). */
static int fix_val(cfx_graph *g, cfx_meta_val *root)
{
    cfx_meta_val **work = NULL;
    size_t len = 0, cap = 0;
    cfx_meta_val *v = root;
    int rc = CFX_OK;
    for (;;) {
        switch (v->kind) {
        case CFX_MVAL_TENSOR:
            if (v->n < 0 || v->n > CFX_MAX_DIMS) {
                rc = cfx_error_set(CFX_ERR, NULL, "val: bad tensor rank %d", (int)v->n);
                goto out;
            }
            {
                bool oom = false;
                const int64_t *d = intern_dims(g, v->sizes, v->strides, v->n, &oom);
                if (oom) {
                    free(work);
                    return CFX_ERR_NOMEM;
                }
                v->sizes = d;
                v->strides = d ? d + v->n : NULL;
            }
            break;
        case CFX_MVAL_OBJECT:
            if (v->u.class_name) {
                v->u.class_name = cfx_names_intern(g->names, v->u.class_name, strlen(v->u.class_name));
                if (!v->u.class_name)
                    goto oom;
            }
            break;
        case CFX_MVAL_TUPLE:
        case CFX_MVAL_LIST:
            if (v->n > 0) {
                cfx_meta_val *items = cfx_arena_alloc(&g->arena, (size_t)v->n * sizeof *items);
                if (!items)
                    goto oom;
                memcpy(items, v->u.items, (size_t)v->n * sizeof *items);
                v->u.items = items;
                if (len + (size_t)v->n > cap) {
                    size_t nc = cap ? cap * 2 : 16;
                    while (nc < len + (size_t)v->n)
                        nc *= 2;
                    cfx_meta_val **w = realloc(work, nc * sizeof *w);
                    if (!w)
                        goto oom;
                    work = w;
                    cap = nc;
                }
                for (int32_t i = 0; i < v->n; i++)
                    work[len++] = &items[i];
            }
            break;
        default:
            break;
        }
        if (!len)
            break;
        v = work[--len];
    }
out:
    free(work);
    return rc;
oom:
    free(work);
    return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
}

int cfx_node_set_val(cfx_node *n, const cfx_meta_val *v)
{
    if (!n || !v)
        return CFX_ERR;
    cfx_graph *g = cfx_node_graph(n);
    if (v->kind == CFX_MVAL_TENSOR) {
        if (v->n < 0 || v->n > CFX_MAX_DIMS)
            return cfx_error_set(CFX_ERR, NULL, "val: bad tensor rank %d", (int)v->n);
        bool oom = false;
        cfx_meta_val k = *v;
        const int64_t *d = intern_dims(g, v->sizes, v->strides, v->n, &oom);
        if (oom)
            return CFX_ERR_NOMEM;
        k.sizes = d;
        k.strides = d ? d + v->n : NULL;
        const cfx_meta_val *r = intern_tensor_val(g, &k);
        if (!r)
            return CFX_ERR_NOMEM;
        return meta_put(n, PUT_VAL, r);
    }
    cfx_meta_val *c = cfx_arena_alloc(&g->arena, sizeof *c);
    if (!c)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *c = *v;
    int rc = fix_val(g, c);
    if (rc != CFX_OK)
        return rc;
    /* a val of its own would make a shared record per node: keep it in a private one */
    cfx_meta *m = private_meta(n);
    if (!m)
        return CFX_ERR_NOMEM;
    m->val = c;
    return CFX_OK;
}

int cfx_node_set_val_tensor(cfx_node *n, const cfx_tensor *t)
{
    if (!n || !t)
        return CFX_ERR;
    cfx_meta_val v = {
        .kind = CFX_MVAL_TENSOR,
        .dtype = t->dtype,
        .device = t->device,
        .n = t->ndim,
        .sizes = t->sizes,
        .strides = t->strides,
        .storage_offset = t->storage_offset,
    };
    return cfx_node_set_val(n, &v);
}


/* ---- tensor_meta ---------------------------------------------------------------------------- */

int cfx_node_set_tensor_meta(cfx_node *n, const cfx_tensor_meta *tm)
{
    if (!n || !tm)
        return CFX_ERR;
    if (tm->ndim < 0 || tm->ndim > CFX_MAX_DIMS)
        return cfx_error_set(CFX_ERR, NULL, "tensor_meta: bad rank %d", (int)tm->ndim);
    bool oom = false;
    cfx_tensor_meta k = *tm;
    cfx_graph *g = cfx_node_graph(n);
    const int64_t *d = intern_dims(g, tm->shape, tm->stride, tm->ndim, &oom);
    if (oom)
        return CFX_ERR_NOMEM;
    k.shape = d;
    k.stride = d ? d + tm->ndim : NULL;
    const cfx_tensor_meta *r = intern_tensor_meta(g, &k);
    if (!r)
        return CFX_ERR_NOMEM;
    return meta_put(n, PUT_TM, r);
}

/* The graph's tensor_meta record for t, whose dims are d (interned by intern_dims: their
 * memory format is computed once per distinct dims, not per node). */
static const cfx_tensor_meta *tensor_meta_of(cfx_graph *g, const cfx_tensor *t, const int64_t *d,
                                             bool requires_grad)
{
    cfx_tensor_meta k = {
        .ndim = t->ndim,
        .dtype = t->dtype,
        .memory_format = dims_memory_format(d),
        .requires_grad = requires_grad,
        .is_quantized = false,
        .shape = d,
        .stride = d ? d + t->ndim : NULL,
    };
    return intern_tensor_meta(g, &k);
}

int cfx_node_set_tensor_meta_from_tensor(cfx_node *n, const cfx_tensor *t, bool requires_grad)
{
    if (!n || !t)
        return CFX_ERR;
    if (t->ndim < 0 || t->ndim > CFX_MAX_DIMS)
        return cfx_error_set(CFX_ERR, NULL, "tensor_meta: bad rank %d", (int)t->ndim);
    bool oom = false;
    cfx_graph *g = cfx_node_graph(n);
    const int64_t *d = intern_dims(g, t->sizes, t->strides, t->ndim, &oom);
    if (oom)
        return CFX_ERR_NOMEM;
    const cfx_tensor_meta *r = tensor_meta_of(g, t, d, requires_grad);
    if (!r)
        return CFX_ERR_NOMEM;
    return meta_put(n, PUT_TM, r);
}


static void put_dims(cfx_buf *b, const int64_t *d, int n, bool tuple)
{
    char tmp[24];
    cfx_buf_putc(b, tuple ? '(' : '[');
    for (int i = 0; i < n; i++) {
        if (i)
            cfx_buf_puts(b, ", ");
        cfx_buf_putn(b, tmp, cfx_fmt_i64(d[i], tmp));
    }
    if (tuple && n == 1)
        cfx_buf_putc(b, ',');
    cfx_buf_putc(b, tuple ? ')' : ']');
}

void cfx_tensor_meta_print(const cfx_tensor_meta *tm, cfx_buf *b)
{
    cfx_buf_puts(b, "TensorMetadata(shape=torch.Size(");
    put_dims(b, tm->shape, tm->ndim, false);
    cfx_buf_puts(b, "), dtype=");
    const char *dt = cfx_dtype_torch_name((cfx_dtype)tm->dtype);
    cfx_buf_puts(b, dt ? dt : "?");
    cfx_buf_puts(b, tm->requires_grad ? ", requires_grad=True, stride=" : ", requires_grad=False, stride=");
    put_dims(b, tm->stride, tm->ndim, true);
    cfx_buf_puts(b, ", memory_format=");
    if (tm->memory_format < 0)
        cfx_buf_puts(b, "None");
    else
        cfx_buf_puts(b, cfx_memory_format_torch_name((cfx_memory_format)tm->memory_format));
    cfx_buf_puts(b, tm->is_quantized ? ", is_quantized=True, qparams={})" : ", is_quantized=False, qparams={})");
}

/* ---- stack_trace ---------------------------------------------------------------------------- */

static IR_ALWAYS_INLINE bool same_str(const char *interned, const char *s) { return interned == s || (interned && s && strcmp(interned, s) == 0); }

/* A site's slot in the caches: bits 3..6 of its address. Sites are 8-aligned structs of 24
 * bytes, mostly CFX_HERE compound literals close together in a frame or in rodata: 16 in a
 * row land in 16 different slots (a multiplicative hash only spreads them at random). */
static inline uint32_t site_slot(const cfx_site *site)
{
    return (uint32_t)((uintptr_t)site >> 3) & 15;
}

/* Whether the caller's site (the one m was filled from: same pointer) still says what m's
 * record says: its strings compared by address when they are literals, else by content (the
 * caller may rewrite a buffer in place). */
static IR_NOINLINE bool site_strings_same(const cfx_site *rec, const cfx_site *site)
{
    return same_str(rec->file, site->file ? site->file : "") && same_str(rec->func, site->func);
}

static IR_ALWAYS_INLINE bool site_memo_same(const ir_site_memo *m, const cfx_site *site)
{
    if (m->line != site->line)
        return false;
    if (m->fixed && m->file == site->file && m->func == site->func)
        return true;
    return site_strings_same(m->rec, site);
}

static void site_memo_set(ir_site_memo *m, const cfx_site *site, const cfx_site *rec)
{
    /* the same string addresses as before: already known */
    bool fixed = m->rec && m->fixed && m->file == site->file && m->func == site->func;
    if (!fixed)
        fixed = (!site->file || ir_str_is_readonly(site->file)) && (!site->func || ir_str_is_readonly(site->func));
    *m = (ir_site_memo){site, site->file, site->func, site->line, fixed, rec};
}

/* The graph's record for site, through the pointer-keyed cache. */
static const cfx_site *intern_site(cfx_graph *g, const cfx_site *site)
{
    ir_site_memo *m = &g->site_cache[site_slot(site)];
    if (m->rec && m->src == site && site_memo_same(m, site))
        return m->rec;
    cfx_names *ns = g->names;
    cfx_site k = {
        cfx_names_intern(ns, site->file ? site->file : "", site->file ? strlen(site->file) : 0),
        site->line,
        site->func ? cfx_names_intern(ns, site->func, strlen(site->func)) : NULL,
    };
    if (!k.file || (site->func && !k.func)) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    uint32_t h = fold(mix(mix((uint64_t)(uintptr_t)k.file, (uint64_t)(uintptr_t)k.func), (uint64_t)k.line));
    struct ir_hcons_slot *s = hc_find(&g->hc_site, h, site_eq, &k);
    const cfx_site *r = s ? s->rec : NULL;
    if (s && !r) {
        cfx_site *nr = cfx_arena_alloc(&g->arena, sizeof *nr);
        if (nr) {
            *nr = k;
            s->hash = h;
            s->rec = nr;
            g->hc_site.count++;
        }
        r = nr;
    }
    if (!r) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    site_memo_set(m, site, r);
    return r;
}

int cfx_node_set_stack_trace(cfx_node *n, const cfx_site *site)
{
    if (!n || !site)
        return CFX_ERR;
    const cfx_site *r = intern_site(cfx_node_graph(n), site);
    if (!r)
        return CFX_ERR_NOMEM;
    return meta_put(n, PUT_SITE, r);
}


/* ---- set_meta of a traced result ----------------------------------------------------------- */

/* The scalar part of a result's key, as a result cache slot keeps it (struct ir_rmeta): dtype
 * and rank in one load, requires_grad, and whether val is set and on which device. An empty
 * slot never matches: its fast site is not_fast and its meta NULL. */
_Static_assert(offsetof(cfx_tensor, ndim) == offsetof(cfx_tensor, dtype) + 1, "dtype and ndim are adjacent");
_Static_assert(sizeof(cfx_device) == 2, "a device is two bytes");
static IR_ALWAYS_INLINE uint16_t rmeta_dn(const cfx_tensor *t)
{
    uint16_t dn;
    memcpy(&dn, &t->dtype, 2);
    return dn;
}
static IR_ALWAYS_INLINE uint32_t rmeta_dev(const cfx_device *val_device)
{
    uint16_t d;
    if (!val_device)
        return 0;
    memcpy(&d, val_device, 2);
    return 0x10000u | d;
}
static IR_ALWAYS_INLINE bool rmeta_same_key(const struct ir_rmeta *c, const cfx_tensor *t,
                                            const cfx_device *val_device, bool requires_grad)
{
    return c->dn == rmeta_dn(t) && c->rg == requires_grad && c->dev == rmeta_dev(val_device);
}

static IR_ALWAYS_INLINE uint64_t dims_diff(const int64_t *a, const int64_t *b, int32_t n)
{
    uint64_t diff = 0;
    for (int32_t i = 0; i < n; i++)
        diff |= (uint64_t)(a[i] ^ b[i]);
    return diff;
}

/* Whether interned dims d (NULL for rank 0) are t's, t's rank known to be theirs (the key
 * holds it). */
static IR_ALWAYS_INLINE bool dims_same(const int64_t *d, const cfx_tensor *t)
{
    return (dims_diff(d, t->sizes, t->ndim) | dims_diff(d + t->ndim, t->strides, t->ndim)) == 0;
}


/* The meta record a fresh node gets from (site, t): interned step by step, then remembered in
 * the site's cache slot. NULL on OOM (error set). */
static cfx_meta *result_meta_rec(cfx_graph *g, const cfx_site *site, const cfx_tensor *t,
                                 const cfx_device *val_device, bool requires_grad)
{
    const cfx_site *sr = NULL;
    if (site && !(sr = intern_site(g, site)))
        return NULL;
    bool oom = false;
    const int64_t *d = intern_dims(g, t->sizes, t->strides, t->ndim, &oom);
    if (oom)
        return NULL;
    const cfx_meta_val *vr = NULL;
    if (val_device) {
        cfx_meta_val v = {
            .kind = CFX_MVAL_TENSOR,
            .dtype = t->dtype,
            .device = *val_device,
            .n = t->ndim,
            .sizes = d,
            .strides = d ? d + t->ndim : NULL,
            .storage_offset = t->storage_offset,
        };
        if (!(vr = intern_tensor_val(g, &v)))
            return NULL;
    }
    const cfx_tensor_meta *tr = tensor_meta_of(g, t, d, requires_grad);
    if (!tr)
        return NULL;
    cfx_meta k = {vr, tr, sr, NULL, 0, 0};
    cfx_meta *rec = intern_meta(g, &k);
    if (!rec)
        return NULL;
    /* a site's slot is the same in both caches: intern_site just filled its memo */
    struct ir_rmeta *c = &g->rmeta[site_slot(site)];
    *c = (struct ir_rmeta){
        .dn = rmeta_dn(t),
        .rg = requires_grad,
        .dev = rmeta_dev(val_device),
        .storage_offset = t->storage_offset,
        .dims = d,
        .meta = rec,
        .site = site ? g->site_cache[site_slot(site)] : (ir_site_memo){0},
    };
    c->fast = !site || c->site.fixed ? site : &not_fast;
    return rec;
}

/* The last result at site's slot, if it is the one (site, t) would make. */
static IR_ALWAYS_INLINE cfx_meta *rmeta_hit(const cfx_graph *g, const cfx_site *site, const cfx_tensor *t,
                                            const cfx_device *val_device, bool requires_grad)
{
    const struct ir_rmeta *c = &g->rmeta[site_slot(site)];
    if (c->site.src != site || !rmeta_same_key(c, t, val_device, requires_grad) || c->storage_offset != t->storage_offset || !dims_same(c->dims, t))
        return NULL;
    return !site || site_memo_same(&c->site, site) ? c->meta : NULL;
}

/* cfx_node_set_result_meta in full. */
static IR_NOINLINE int set_result_meta(cfx_node *n, const cfx_site *site, const cfx_tensor *t,
                                       const cfx_device *val_device, bool requires_grad)
{
    if (!n || !t)
        return CFX_ERR;
    if (t->ndim < 0 || t->ndim > CFX_MAX_DIMS)
        return cfx_error_set(CFX_ERR, NULL, val_device ? "val: bad tensor rank %d" : "tensor_meta: bad rank %d",
                             (int)t->ndim);
    cfx_graph *g = cfx_node_graph(n);
    cfx_meta *rec = rmeta_hit(g, site, t, val_device, requires_grad);
    if (!rec && !(rec = result_meta_rec(g, site, t, val_device, requires_grad)))
        return CFX_ERR_NOMEM;
    cfx_meta *m = n->meta;
    if (!m || m == rec) {
        n->meta = rec;
        return CFX_OK;
    }
    /* meta already set: only the slots given change, as with the one-slot setters */
    cfx_meta k = {m->val, m->tensor_meta, m->stack_trace, NULL, 0, 0};
    cfx_meta *dst = m->cap_entries != SHARED ? m : &k;
    if (val_device)
        dst->val = rec->val;
    dst->tensor_meta = rec->tensor_meta;
    if (site)
        dst->stack_trace = rec->stack_trace;
    if (dst == &k) {
        cfx_meta *r = intern_meta(g, &k);
        if (!r)
            return CFX_ERR_NOMEM;
        n->meta = r;
    }
    return CFX_OK;
}

/* cfx_node_set_result_meta for a slot whose site and key the caller's match: the site is
 * c->fast and the key says the rest (the inline check needs fewer live registers so; noipa,
 * or GCC passes the slot's fields loaded, which keeps them live through the check). */
static IR_NOINLINE IR_NOIPA int set_result_meta_at(cfx_node *n, const cfx_tensor *t, const struct ir_rmeta *c)
{
    cfx_device dev;
    uint16_t bits = (uint16_t)c->dev;
    memcpy(&dev, &bits, sizeof dev);
    return set_result_meta(n, c->fast, t, c->dev ? &dev : NULL, c->rg);
}

int cfx_node_set_result_meta(cfx_node *n, const cfx_site *site, const cfx_tensor *t,
                             const cfx_device *val_device, bool requires_grad)
{
    /* The tracer's case, without a call: a fresh node whose result matches the last one at
     * its call site in everything the record was made from, the site's strings being
     * literals (compared by address). The rest, content compares included, is the full
     * path. */
    if (IR_LIKELY(n && t && !n->meta)) {
        const struct ir_rmeta *c = &cfx_node_graph(n)->rmeta[site_slot(site)];
#if defined(__GNUC__)
        __asm__("" : "+r"(c)); /* computed once: GCC would rebuild it from the slot index */
#endif
        if (c->fast == site && rmeta_same_key(c, t, val_device, requires_grad)) {
            if (c->storage_offset != t->storage_offset ||
                (site && (c->site.line != site->line || c->site.file != site->file || c->site.func != site->func)))
                goto miss;
            /* dims: ranks up to 4 straight-line (a loop's registers would make this function
             * save and restore callee-saved ones); higher ranks go to the full path */
            const int64_t *dm = c->dims, *sz = t->sizes, *st = t->strides;
            switch (t->ndim) {
            case 0: break;
            case 1: if ((uint64_t)(dm[0] ^ sz[0]) | (uint64_t)(dm[1] ^ st[0])) goto miss; break;
            case 2: if (dims_diff(dm, sz, 2) | dims_diff(dm + 2, st, 2)) goto miss; break;
            case 3: if (dims_diff(dm, sz, 3) | dims_diff(dm + 3, st, 3)) goto miss; break;
            case 4: if (dims_diff(dm, sz, 4) | dims_diff(dm + 4, st, 4)) goto miss; break;
            default: goto miss;
            }
            n->meta = c->meta;
            return CFX_OK;
        miss:
            return set_result_meta_at(n, t, c);
        }
    }
    return set_result_meta(n, site, t, val_device, requires_grad);
}

/* ---- free-form entries ------------------------------------------------------------------------ */

int cfx_node_meta_set(cfx_node *n, const char *key, cfx_value v)
{
    if (!n || !key)
        return CFX_ERR;
    cfx_graph *g = cfx_node_graph(n);
    int rc = ir_fixup_values(g, &v, 1, NULL, NULL);
    if (rc != CFX_OK)
        return rc;
    cfx_meta *m = private_meta(n);
    if (!m)
        return CFX_ERR_NOMEM;
    for (uint32_t i = 0; i < m->n_entries; i++)
        if (strcmp(m->entries[i].key, key) == 0) {
            m->entries[i].value = v;
            return CFX_OK;
        }
    if (m->n_entries == m->cap_entries) {
        uint32_t cap = m->cap_entries ? m->cap_entries * 2 : 4;
        cfx_meta_entry *e = cfx_arena_alloc(&g->arena, cap * sizeof *e);
        if (!e)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        if (m->n_entries)
            memcpy(e, m->entries, m->n_entries * sizeof *e);
        m->entries = e;
        m->cap_entries = cap;
    }
    const char *k = cfx_names_intern(g->names, key, strlen(key));
    if (!k)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    m->entries[m->n_entries++] = (cfx_meta_entry){k, v};
    return CFX_OK;
}

const cfx_value *cfx_node_meta_get(const cfx_node *n, const char *key)
{
    if (!n->meta)
        return NULL;
    for (uint32_t i = 0; i < n->meta->n_entries; i++)
        if (strcmp(n->meta->entries[i].key, key) == 0)
            return &n->meta->entries[i].value;
    return NULL;
}

bool cfx_node_meta_remove(cfx_node *n, const char *key)
{
    cfx_meta *m = n->meta;
    if (!m)
        return false;
    for (uint32_t i = 0; i < m->n_entries; i++)
        if (strcmp(m->entries[i].key, key) == 0) {
            memmove(&m->entries[i], &m->entries[i + 1], (m->n_entries - i - 1) * sizeof *m->entries);
            m->n_entries--;
            return true;
        }
    return false;
}

const char *cfx_node_meta_key(const cfx_node *n, uint32_t i) { return n->meta->entries[i].key; }
const cfx_value *cfx_node_meta_value(const cfx_node *n, uint32_t i) { return &n->meta->entries[i].value; }

static IR_NOINLINE int meta_copy(cfx_node *dst, const cfx_node *src);

int cfx_node_meta_copy(cfx_node *dst, const cfx_node *src)
{
    /* the tracer's case: an immutable record shared within the graph */
    const cfx_meta *m = dst && src ? src->meta : NULL;
    if (m && m->cap_entries == SHARED && cfx_node_graph(dst) == cfx_node_graph(src)) {
        dst->meta = (cfx_meta *)m;
        return CFX_OK;
    }
    return meta_copy(dst, src);
}

static int meta_copy(cfx_node *dst, const cfx_node *src)
{
    if (!dst || !src)
        return CFX_ERR;
    const cfx_meta *m = src->meta; /* read first: dst may be src */
    if (m == dst->meta && (!m || m->cap_entries == SHARED))
        return CFX_OK;
    dst->meta = NULL;
    if (!m)
        return CFX_OK;
    if (m->cap_entries == SHARED && cfx_node_graph(dst) == cfx_node_graph(src)) {
        dst->meta = (cfx_meta *)m; /* immutable: share it */
        return CFX_OK;
    }
    /* the setters pick shared or private records for dst as they would for a new node */
    int rc = CFX_OK;
    if (m->val)
        rc = cfx_node_set_val(dst, m->val);
    if (rc == CFX_OK && m->tensor_meta)
        rc = cfx_node_set_tensor_meta(dst, m->tensor_meta);
    if (rc == CFX_OK && m->stack_trace)
        rc = cfx_node_set_stack_trace(dst, m->stack_trace);
    for (uint32_t i = 0; rc == CFX_OK && i < m->n_entries; i++)
        rc = cfx_node_meta_set(dst, m->entries[i].key, m->entries[i].value);
    return rc;
}
