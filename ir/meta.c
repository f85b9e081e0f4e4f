/* meta.c - node.meta, stored out of line.
 *
 * A node without meta pays one NULL pointer. The first set allocates the meta record in the
 * graph's arena; values are copied there too (shapes, tuple items, strings), so meta never
 * points at a tensor that may die. A tuple `val` may nest, so its copy walks an explicit
 * work list, like argument values. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

typedef struct meta_entry {
    const char *key; /* interned */
    cfx_value value;
} meta_entry;

struct cfx_meta {
    const cfx_meta_val *val;
    const cfx_tensor_meta *tensor_meta;
    cfx_site stack_trace; /* file == NULL: unset */
    meta_entry *entries;
    uint32_t n_entries, cap_entries;
};

static cfx_meta *meta_of(cfx_node *n)
{
    if (!n->meta) {
        n->meta = cfx_arena_zalloc(&n->graph->arena, sizeof *n->meta);
        if (!n->meta)
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    return n->meta;
}

static int64_t *copy_dims(cfx_graph *g, const int64_t *d, int32_t n)
{
    if (n <= 0)
        return NULL;
    int64_t *r = cfx_arena_alloc(&g->arena, (size_t)n * sizeof *r);
    if (r)
        memcpy(r, d, (size_t)n * sizeof *r);
    return r;
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
            v->sizes = copy_dims(g, v->sizes, v->n);
            v->strides = copy_dims(g, v->strides, v->n);
            if (v->n && (!v->sizes || !v->strides))
                goto oom;
            break;
        case CFX_MVAL_OBJECT:
            if (v->u.class_name) {
                v->u.class_name = cfx_names_intern(g->names, v->u.class_name, strlen(v->u.class_name));
                if (!v->u.class_name)
                    goto oom;
            }
            break;
        case CFX_MVAL_TUPLE:
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
    cfx_meta *m = meta_of(n);
    if (!m)
        return CFX_ERR_NOMEM;
    cfx_meta_val *c = cfx_arena_alloc(&n->graph->arena, sizeof *c);
    if (!c)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *c = *v;
    int rc = fix_val(n->graph, c);
    if (rc == CFX_OK)
        m->val = c;
    return rc;
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

const cfx_meta_val *cfx_node_val(const cfx_node *n) { return n->meta ? n->meta->val : NULL; }

/* ---- tensor_meta ---------------------------------------------------------------------------- */

int cfx_node_set_tensor_meta(cfx_node *n, const cfx_tensor_meta *tm)
{
    if (!n || !tm)
        return CFX_ERR;
    if (tm->ndim < 0 || tm->ndim > CFX_MAX_DIMS)
        return cfx_error_set(CFX_ERR, NULL, "tensor_meta: bad rank %d", (int)tm->ndim);
    cfx_meta *m = meta_of(n);
    if (!m)
        return CFX_ERR_NOMEM;
    cfx_tensor_meta *c = cfx_arena_alloc(&n->graph->arena, sizeof *c);
    if (!c)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *c = *tm;
    c->shape = copy_dims(n->graph, tm->shape, tm->ndim);
    c->stride = copy_dims(n->graph, tm->stride, tm->ndim);
    if (tm->ndim && (!c->shape || !c->stride))
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    m->tensor_meta = c;
    return CFX_OK;
}

int cfx_node_set_tensor_meta_from_tensor(cfx_node *n, const cfx_tensor *t, bool requires_grad)
{
    if (!n || !t)
        return CFX_ERR;
    cfx_tensor_meta tm = {
        .ndim = t->ndim,
        .dtype = t->dtype,
        .memory_format = (int8_t)cfx_memory_format_of(t->sizes, t->strides, t->ndim),
        .requires_grad = requires_grad,
        .is_quantized = false,
        .shape = t->sizes,
        .stride = t->strides,
    };
    return cfx_node_set_tensor_meta(n, &tm);
}

const cfx_tensor_meta *cfx_node_tensor_meta(const cfx_node *n) { return n->meta ? n->meta->tensor_meta : NULL; }

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
    cfx_meta *m = meta_of(n);
    if (!m)
        return CFX_ERR_NOMEM;
    cfx_names *ns = n->graph->names;
    const char *file = cfx_names_intern(ns, site->file ? site->file : "", site->file ? strlen(site->file) : 0);
    const char *func = site->func ? cfx_names_intern(ns, site->func, strlen(site->func)) : NULL;
    if (!file || (site->func && !func))
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    m->stack_trace = (cfx_site){file, site->line, func};
    return CFX_OK;
}

const cfx_site *cfx_node_stack_trace(const cfx_node *n)
{
    return n->meta && n->meta->stack_trace.file ? &n->meta->stack_trace : NULL;
}

/* ---- free-form entries ------------------------------------------------------------------------ */

int cfx_node_meta_set(cfx_node *n, const char *key, cfx_value v)
{
    if (!n || !key)
        return CFX_ERR;
    cfx_graph *g = n->graph;
    int rc = ir_fixup_values(g, &v, 1, NULL, NULL);
    if (rc != CFX_OK)
        return rc;
    cfx_meta *m = meta_of(n);
    if (!m)
        return CFX_ERR_NOMEM;
    for (uint32_t i = 0; i < m->n_entries; i++)
        if (strcmp(m->entries[i].key, key) == 0) {
            m->entries[i].value = v;
            return CFX_OK;
        }
    if (m->n_entries == m->cap_entries) {
        uint32_t cap = m->cap_entries ? m->cap_entries * 2 : 4;
        meta_entry *e = cfx_arena_alloc(&g->arena, cap * sizeof *e);
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
    m->entries[m->n_entries++] = (meta_entry){k, v};
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

uint32_t cfx_node_meta_count(const cfx_node *n) { return n->meta ? n->meta->n_entries : 0; }
const char *cfx_node_meta_key(const cfx_node *n, uint32_t i) { return n->meta->entries[i].key; }
const cfx_value *cfx_node_meta_value(const cfx_node *n, uint32_t i) { return &n->meta->entries[i].value; }

int cfx_node_meta_copy(cfx_node *dst, const cfx_node *src)
{
    if (!dst || !src)
        return CFX_ERR;
    dst->meta = NULL;
    const cfx_meta *m = src->meta;
    if (!m)
        return CFX_OK;
    if (!meta_of(dst))
        return CFX_ERR_NOMEM;
    int rc = CFX_OK;
    if (m->val)
        rc = cfx_node_set_val(dst, m->val);
    if (rc == CFX_OK && m->tensor_meta)
        rc = cfx_node_set_tensor_meta(dst, m->tensor_meta);
    if (rc == CFX_OK && m->stack_trace.file)
        rc = cfx_node_set_stack_trace(dst, &m->stack_trace);
    for (uint32_t i = 0; rc == CFX_OK && i < m->n_entries; i++)
        rc = cfx_node_meta_set(dst, m->entries[i].key, m->entries[i].value);
    return rc;
}
