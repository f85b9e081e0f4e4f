/* meta.c - node.meta: typed slots, free-form entries, copies.
 *
 * A node without meta pays one NULL pointer. Values are copied into the graph's arena
 * (shapes, tuple items, strings), so meta never points at a tensor that may die; a tuple `val`
 * may nest, so its copy walks an explicit work list, like argument values.
 *
 * A node's meta record is usually shared: an immutable record of the graph's (meta_intern.c)
 * holding its val, tensor_meta and stack_trace, one per distinct contents, so that a million
 * traced nodes with a few distinct results hold a few records. Setting a slot moves the node to the shared record that has the slot
 * changed. A node gets a private, writable record only when it gets a free-form entry or a val
 * that is not a tensor (which would make a shared record per node); from then on its slots are
 * set in place. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/fake_internal.h"
#include "ir/internal.h"

#define SHARED CFX_META_SHARED

/* A meta record n may write into: its own, or a fresh private copy of its typed slots. */
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

/* An arena copy of n sizes then n strides (one array). NULL on OOM. */
static int64_t *copy_dims(cfx_graph *g, const int64_t *sizes, const int64_t *strides, int32_t n)
{
    int64_t *d = cfx_arena_alloc(&g->arena, 2 * (size_t)n * sizeof *d);
    if (d)
        ir_put_dims(d, sizes, strides, n);
    return d;
}

/* A change of typed slots: each non-NULL part replaces the node's. The parts may be the
 * caller's (copied where they are kept). */
typedef ir_meta_key slot_change;

cfx_meta *ir_meta_set_private(cfx_graph *g, cfx_meta *m, const ir_meta_key *c)
{
    if (c->val) {
        cfx_meta_val *v = cfx_arena_alloc(&g->arena, sizeof *v);
        int64_t *d = v ? copy_dims(g, c->val->sizes, c->val->strides, c->val->n) : NULL;
        if (!d)
            goto oom;
        *v = *c->val;
        v->sizes = d;
        v->strides = d + v->n;
        m->val = v;
    }
    if (c->tm) {
        cfx_tensor_meta *t = cfx_arena_alloc(&g->arena, sizeof *t);
        int64_t *d = t ? copy_dims(g, c->tm->shape, c->tm->stride, c->tm->ndim) : NULL;
        if (!d)
            goto oom;
        *t = *c->tm;
        t->shape = d;
        t->stride = d + t->ndim;
        if (c->tm_derived_format)
            t->memory_format = (int8_t)cfx_memory_format_of(d, d + t->ndim, t->ndim);
        m->tensor_meta = t;
    }
    if (c->site) {
        cfx_site *s = cfx_arena_alloc(&g->arena, sizeof *s);
        const char *file = c->site->file ? c->site->file : "", *func = c->site->func;
        if (!s || !(s->file = cfx_names_intern(g->names, file, strlen(file))) ||
            (func && !(func = cfx_names_intern(g->names, func, strlen(func)))))
            goto oom;
        s->line = c->site->line;
        s->func = func;
        m->stack_trace = s;
    }
    return m;
oom:
    cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return NULL;
}

/* Gives n (of g) the slots c changes, its free-form entries untouched (ir_meta_change: in place
 * in a private record, else by moving n to the shared record that has them). */
static int change_slots(cfx_graph *g, cfx_node *n, const slot_change *c)
{
    if (c->site)
        ir_graph_changed(g); /* a compiled run keeps each node's site for its errors */
    cfx_meta *r = ir_meta_change(g, n->meta, c);
    if (!r)
        return CFX_ERR_NOMEM;
    n->meta = r;
    return CFX_OK;
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
        case CFX_MVAL_TOKEN:
            if (v->n < 0 || v->n > CFX_MAX_DIMS) {
                rc = cfx_error_set(CFX_ERR, NULL, "val: bad tensor rank %d", (int)v->n);
                goto out;
            }
            {
                const int64_t *d = copy_dims(g, v->sizes, v->strides, v->n);
                if (!d)
                    goto oom;
                v->sizes = d;
                v->strides = d + v->n;
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
                    cfx_meta_val **w = cfx_realloc(work, nc * sizeof *w);
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
    cfx_free(work);
    return rc;
oom:
    cfx_free(work);
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
        slot_change c = {.val = v};
        return change_slots(g, n, &c);
    }
    cfx_meta_val *c = cfx_arena_alloc(&g->arena, sizeof *c);
    if (!c)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *c = *v;
    int rc = fix_val(g, c);
    if (rc != CFX_OK)
        return rc;
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
    slot_change c = {.tm = tm};
    return change_slots(cfx_node_graph(n), n, &c);
}

/* TensorMetadata of t (its memory format is left for the record to derive). */
static cfx_tensor_meta tensor_meta_of(const cfx_tensor *t, bool requires_grad)
{
    cfx_tensor_meta tm = {
        .ndim = t->ndim,
        .dtype = t->dtype,
        .requires_grad = requires_grad,
        .is_quantized = false,
        .shape = t->sizes,
        .stride = t->strides,
    };
    return tm;
}

int cfx_node_set_tensor_meta_from_tensor(cfx_node *n, const cfx_tensor *t, bool requires_grad)
{
    if (!n || !t)
        return CFX_ERR;
    if (t->ndim < 0 || t->ndim > CFX_MAX_DIMS)
        return cfx_error_set(CFX_ERR, NULL, "tensor_meta: bad rank %d", (int)t->ndim);
    cfx_tensor_meta tm = tensor_meta_of(t, requires_grad);
    slot_change c = {.tm = &tm, .tm_derived_format = true};
    return change_slots(cfx_node_graph(n), n, &c);
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

int cfx_node_set_stack_trace(cfx_node *n, const cfx_site *site)
{
    if (!n || !site)
        return CFX_ERR;
    slot_change c = {.site = site};
    return change_slots(cfx_node_graph(n), n, &c);
}

/* ---- set_meta of a traced result ----------------------------------------------------------- */

int cfx_node_set_result_meta(cfx_node *n, const cfx_site *site, const cfx_tensor *t,
                             const cfx_device *val_device, bool requires_grad)
{
    if (!n || !t)
        return CFX_ERR;
    if (t->ndim < 0 || t->ndim > CFX_MAX_DIMS)
        return cfx_error_set(CFX_ERR, NULL, val_device ? "val: bad tensor rank %d" : "tensor_meta: bad rank %d",
                             (int)t->ndim);
    /* one change of all three slots: on error nothing is set */
    cfx_meta_val v = {
        .kind = CFX_MVAL_TENSOR,
        .dtype = t->dtype,
        .device = val_device ? *val_device : t->device,
        .n = t->ndim,
        .sizes = t->sizes,
        .strides = t->strides,
        .storage_offset = t->storage_offset,
    };
    cfx_tensor_meta tm = tensor_meta_of(t, requires_grad);
    slot_change c = {.site = site, .val = val_device ? &v : NULL, .tm = &tm, .tm_derived_format = true,
                     .val_id = val_device ? cfx_fake_meta_id(t) : 0};
    return change_slots(cfx_node_graph(n), n, &c);
}

/* ---- free-form entries ------------------------------------------------------------------------ */

int cfx_node_meta_set(cfx_node *n, const char *key, cfx_value v)
{
    if (!n || !key)
        return CFX_ERR;
    cfx_graph *g = cfx_node_graph(n);
    int rc = ir_fixup_values(g, &v, 1, NULL, NULL, NULL);
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

int cfx_node_meta_copy(cfx_node *dst, const cfx_node *src)
{
    if (!dst || !src)
        return CFX_ERR;
    const cfx_meta *m = src->meta; /* read first: dst may be src */
    if (m == dst->meta && (!m || m->cap_entries == SHARED))
        return CFX_OK;
    ir_graph_changed(cfx_node_graph(dst)); /* dst's site may change */
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
