/* json_write.c - a graph (module) as "cfx.graph" JSON text: the document, node records,
 * schemas and attributes (values and meta are json_write_values.c).
 *
 * The text is produced straight into a cfx_buf, not through a cJSON tree: a million-node graph
 * would otherwise cost tens of millions of small allocations, and cJSON's printer loses
 * information this format must keep (-0.0 prints as 0, NaN as null). The layout is fixed (one
 * node or attribute per line, members in a fixed order, Python's json separators), so writing
 * a graph always gives the same bytes and a loaded graph writes back byte for byte.
 *
 * Whatever the reader would refuse is refused here first, with the node and the place named:
 * tensors and script objects inside values, strings that are not UTF-8 or hold NUL, node
 * references the reader could not resolve, duplicate names, and nesting deeper than the
 * reader's cJSON accepts. File output is flushed every megabyte so memory stays bounded. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/atomic_file.h"
#include "dispatch/schema.h"
#include "dispatch/tensor.h"
#include "ir/internal.h"
#include "ir/json_internal.h"
#include "ir/printbuf.h"

#define FLUSH_BYTES ((size_t)1 << 20)
#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- errors -------------------------------------------------------------------------------- */

int jw_err(jwriter *w, const char *fmt, ...)
{
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, "cannot write graph JSON: ");
    if (w->cur) {
        cfx_buf_puts(&m, "node '");
        cfx_name_print(cfx_node_name(w->cur), &m);
        cfx_buf_puts(&m, "'");
        if (w->what) {
            cfx_buf_printf(&m, ", %s", w->what);
            if (w->key)
                cfx_buf_printf(&m, " '%s'", w->key);
        }
        cfx_buf_puts(&m, ": ");
    }
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    char *s = cfx_buf_take(&m);
    int rc = cfx_error_set_text(CFX_ERR, NULL, s ? s : "cannot write graph JSON");
    cfx_free(s);
    return rc;
}

/* ---- nodes ------------------------------------------------------------------------------------ */

static int put_node(jwriter *w, const cfx_node *n)
{
    cfx_buf *b = w->b;
    w->cur = n;
    w->what = NULL;
    w->key = NULL;
    PB_LIT(b, "{\"name\": ");
    if (jw_name(w, cfx_node_name(n)) != CFX_OK)
        return CFX_ERR;
    PB_LIT(b, ", \"op\": \"");
    cfx_buf_puts(b, cfx_node_op_name(n->op));
    PB_LIT(b, "\", \"target\": ");
    const cfx_target_info *t = ir_target_of(n);
    w->what = "target";
    switch (t->kind) {
    case CFX_TARGET_OP:
        PB_LIT(b, "{\"op\": ");
        if (jw_cstr(w, cfx_op_name((const cfx_op *)t->ptr)) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, '}');
        break;
    case CFX_TARGET_FN:
        PB_LIT(b, "{\"fn\": ");
        if (jw_cstr(w, ((const cfx_builtin_fn *)t->ptr)->qualified_name) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, '}');
        break;
    default:
        if (jw_cstr(w, (const char *)t->ptr) != CFX_OK)
            return CFX_ERR;
        break;
    }
    w->what = "args";
    PB_LIT(b, ", \"args\": [");
    for (uint32_t i = 0; i < n->n_args; i++) {
        if (i)
            PB_LIT(b, ", ");
        if (jw_value(w, &n->args[i], 2, JW_REF_ARGS) != CFX_OK)
            return CFX_ERR;
    }
    w->what = "kwargs";
    PB_LIT(b, "], \"kwargs\": [");
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t i = 0, nk = cfx_node_num_kwargs(n); i < nk; i++) {
        w->key = kw[i].name;
        cfx_buf_puts(b, i ? ", [" : "[");
        if (jw_cstr(w, kw[i].name) != CFX_OK)
            return CFX_ERR;
        PB_LIT(b, ", ");
        if (jw_value(w, &kw[i].value, 3, JW_REF_ARGS) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, ']');
    }
    w->key = NULL;
    cfx_buf_putc(b, ']');
    if (!(w->flags & CFX_JSON_NO_META) && jw_has_meta(n) && jw_meta(w, n) != CFX_OK)
        return CFX_ERR;
    cfx_buf_putc(b, '}');
    w->defined[n->seq >> 6] |= (uint64_t)1 << (n->seq & 63);
    w->cur = NULL;
    w->what = NULL;
    return CFX_OK;
}

/* Graphs whose names were set by hand may hold a name twice; the reader would refuse it. */
static int check_unique_names(jwriter *w)
{
    uint32_t cap = 64;
    while (cap < w->g->len * 2 + 2)
        cap *= 2;
    const cfx_node **set = cfx_calloc(cap, sizeof *set);
    if (!set)
        return jw_err(w, "out of memory");
    int rc = CFX_OK;
    for (const cfx_node *n = cfx_graph_first(w->g); n && rc == CFX_OK; n = cfx_node_next(n)) {
        uint64_t h = ((uint64_t)(uintptr_t)n->name_base ^ (uint64_t)(uint32_t)n->name_suffix) *
                     0x9E3779B97F4A7C15ull;
        uint32_t j = (uint32_t)(h >> 32) & (cap - 1);
        for (; set[j]; j = (j + 1) & (cap - 1))
            if (set[j]->name_base == n->name_base && set[j]->name_suffix == n->name_suffix) {
                w->cur = n;
                rc = jw_err(w, "the name is used by two nodes");
                break;
            }
        set[j] = n;
    }
    cfx_free(set);
    return rc;
}

/* ---- schemas -------------------------------------------------------------------------------- */

/* The operators a graph uses, distinct by name, in first-use order: node targets and operator
 * values in args and kwargs (with_effects' op), each node's target before its values. */
typedef struct op_set {
    const cfx_op **ops, **set;
    uint32_t n, cap, hcap;
} op_set;

static uint32_t op_hash(const cfx_op *op, uint32_t hcap)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = cfx_op_name(op); *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (uint32_t)h & (hcap - 1);
}

/* false on OOM */
static bool op_set_add(op_set *o, const cfx_op *op)
{
    if (!op || !cfx_op_schema(op))
        return true;
    uint32_t j = op_hash(op, o->hcap);
    for (; o->set[j]; j = (j + 1) & (o->hcap - 1))
        if (o->set[j] == op || strcmp(cfx_op_name(o->set[j]), cfx_op_name(op)) == 0)
            return true;
    o->set[j] = op;
    if (o->n == o->cap) {
        uint32_t cap = o->cap ? o->cap * 2 : 16;
        const cfx_op **ops = cfx_realloc(o->ops, cap * sizeof *ops);
        if (!ops)
            return false;
        o->ops = ops;
        o->cap = cap;
    }
    o->ops[o->n++] = op;
    if (o->n * 2 > o->hcap) {
        /* rebuild at twice the size from the ordered list */
        cfx_free(o->set);
        o->hcap *= 2;
        if (!(o->set = cfx_calloc(o->hcap, sizeof *o->set)))
            return false;
        for (uint32_t i = 0; i < o->n; i++) {
            uint32_t k = op_hash(o->ops[i], o->hcap);
            while (o->set[k])
                k = (k + 1) & (o->hcap - 1);
            o->set[k] = o->ops[i];
        }
    }
    return true;
}

/* The operator values among vals[0..n) (stride apart), nested containers included down to
 * 64 levels: one nested deeper is still written, without its schema (the reader then resolves
 * it by name alone, as a file without "schemas" is read). */
static bool op_set_add_values(op_set *o, const cfx_value *vals, uint32_t n, size_t stride)
{
    const cfx_value *stack_items[64];
    uint32_t stack_n[64], stack_i[64], sp = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cfx_value *v = (const cfx_value *)(const void *)((const char *)vals + i * stride);
        for (;;) {
            if (v->kind == CFX_V_OP && !op_set_add(o, v->u.op))
                return false;
            if (cfx_value_is_container(*v) && v->len && sp < 64) {
                stack_items[sp] = v->u.items, stack_n[sp] = v->len, stack_i[sp] = 0, sp++;
            }
            while (sp && stack_i[sp - 1] == stack_n[sp - 1])
                sp--;
            if (!sp)
                break;
            v = &stack_items[sp - 1][stack_i[sp - 1]++];
        }
    }
    return true;
}

static int collect_ops(jwriter *w, const cfx_op ***out, uint32_t *n_out)
{
    op_set o = {NULL, cfx_calloc(64, sizeof(const cfx_op *)), 0, 0, 64};
    bool ok = o.set != NULL;
    for (const cfx_node *nd = cfx_graph_first(w->g); nd && ok; nd = cfx_node_next(nd)) {
        uint32_t nk = cfx_node_num_kwargs(nd);
        ok = op_set_add(&o, cfx_node_operator(nd)) && op_set_add_values(&o, nd->args, nd->n_args, sizeof(cfx_value)) &&
             (!nk || op_set_add_values(&o, &cfx_node_kwargs(nd)->value, nk, sizeof(cfx_kwarg)));
    }
    cfx_free(o.set);
    if (!ok) {
        cfx_free(o.ops);
        return jw_err(w, "out of memory");
    }
    *out = o.ops;
    *n_out = o.n;
    return CFX_OK;
}

static int put_schemas(jwriter *w)
{
    const cfx_op **ops = NULL;
    uint32_t n = 0;
    if (collect_ops(w, &ops, &n) != CFX_OK)
        return CFX_ERR;
    cfx_buf *b = w->b;
    int rc = CFX_OK;
    PB_LIT(b, "  \"schemas\": {");
    for (uint32_t i = 0; i < n && rc == CFX_OK; i++) {
        char *s = cfx_schema_to_string(cfx_op_schema(ops[i]));
        if (!s) {
            rc = jw_err(w, "out of memory");
            break;
        }
        cfx_buf_puts(b, i ? ",\n    " : "\n    ");
        rc = jw_cstr(w, cfx_op_name(ops[i]));
        PB_LIT(b, ": ");
        if (rc == CFX_OK)
            rc = jw_cstr(w, s);
        cfx_free(s);
    }
    if (n)
        PB_LIT(b, "\n  },\n");
    else
        PB_LIT(b, "},\n");
    cfx_free(ops);
    return rc;
}

/* ---- attributes ------------------------------------------------------------------------------ */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_base64(cfx_buf *b, const unsigned char *s, size_t n)
{
    char out[256]; /* 192 input bytes at a time */
    cfx_buf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (; i + 3 <= n && k + 4 <= sizeof out; i += 3) {
            uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
            out[k++] = b64[v >> 18], out[k++] = b64[(v >> 12) & 63], out[k++] = b64[(v >> 6) & 63], out[k++] = b64[v & 63];
        }
        if (n - i == 1 && k + 4 <= sizeof out) {
            uint32_t v = (uint32_t)s[i] << 16;
            out[k++] = b64[v >> 18], out[k++] = b64[(v >> 12) & 63], out[k++] = '=', out[k++] = '=';
            i = n;
        } else if (n - i == 2 && k + 4 <= sizeof out) {
            uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
            out[k++] = b64[v >> 18], out[k++] = b64[(v >> 12) & 63], out[k++] = b64[(v >> 6) & 63], out[k++] = '=';
            i = n;
        }
        cfx_buf_putn(b, out, k);
    }
    cfx_buf_putc(b, '"');
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* The elements in row-major logical order, each little-endian. */
static int put_tensor_data(jwriter *w, const cfx_tensor *t)
{
    int64_t numel = cfx_tensor_numel(t);
    size_t item = cfx_dtype_size((cfx_dtype)t->dtype);
    const unsigned char *base = cfx_tensor_data(t);
    if (numel == 0 || !base) {
        PB_LIT(w->b, "\"\"");
        return CFX_OK;
    }
    size_t nbytes = (size_t)numel * item;
    bool le = host_is_little_endian();
    if (cfx_tensor_is_contiguous(t) && le) {
        put_base64(w->b, base, nbytes);
        return CFX_OK;
    }
    unsigned char *tmp = cfx_malloc(nbytes);
    if (!tmp)
        return jw_err(w, "out of memory");
    int64_t idx[CFX_MAX_DIMS] = {0};
    int64_t off = 0;
    for (int64_t k = 0; k < numel; k++) {
        const unsigned char *src = base + (size_t)off * item;
        unsigned char *dst = tmp + (size_t)k * item;
        for (size_t j = 0; j < item; j++)
            dst[j] = src[le ? j : item - 1 - j];
        for (int d = t->ndim - 1; d >= 0; d--) {
            off += t->strides[d];
            if (++idx[d] < t->sizes[d])
                break;
            off -= t->strides[d] * t->sizes[d];
            idx[d] = 0;
        }
    }
    put_base64(w->b, tmp, nbytes);
    cfx_free(tmp);
    return CFX_OK;
}

static int put_attr(jwriter *w, const char *name, const cfx_tensor *t)
{
    cfx_buf *b = w->b;
    w->cur = NULL;
    if (!t)
        return jw_err(w, "attribute '%s' has no tensor", name);
    if (!cfx_dtype_torch_name((cfx_dtype)t->dtype))
        return jw_err(w, "attribute '%s' has an invalid dtype code %d", name, (int)t->dtype);
    PB_LIT(b, "{\"name\": ");
    if (jw_cstr(w, name) != CFX_OK)
        return CFX_ERR;
    PB_LIT(b, ", ");
    if (jw_tensor_fields(w, t->dtype, t->device, t->sizes, t->strides, t->ndim, t->storage_offset) != CFX_OK)
        return CFX_ERR;
    if (!(w->flags & CFX_JSON_NO_DATA) && !w->weights && t->device.type == CFX_DEVICE_CPU && cfx_tensor_data(t)) {
        PB_LIT(b, ", \"data\": ");
        if (put_tensor_data(w, t) != CFX_OK)
            return CFX_ERR;
    }
    cfx_buf_putc(b, '}');
    return CFX_OK;
}

/* ---- the document ----------------------------------------------------------------------------- */

static int flush(jwriter *w, bool force)
{
    if (!w->sink || w->b->oom || (!force && w->b->len < FLUSH_BYTES))
        return CFX_OK;
    if (w->b->len && fwrite(w->b->data, 1, w->b->len, w->sink) != w->b->len) {
        w->cur = NULL;
        return jw_err(w, "writing '%s' failed: %s", w->path, strerror(errno));
    }
    w->b->len = 0;
    return CFX_OK;
}

static int write_doc(const cfx_graph *g, const cfx_graph_module *gm, unsigned flags, cfx_buf *b,
                     FILE *sink, const char *path, const char *weights)
{
    if (!g || !b)
        return CFX_ERR;
    jwriter w = {.g = g, .b = b, .flags = flags, .sink = sink, .path = path, .weights = weights};
    w.defined = cfx_calloc(((size_t)g->n_created + 63) / 64 + 1, sizeof *w.defined);
    if (!w.defined)
        return jw_err(&w, "out of memory");
    int rc = g->names_unchecked ? check_unique_names(&w) : CFX_OK;
    if (rc != CFX_OK)
        goto out;
    if (gm && cfx_graph_module_n_object_attrs(gm) > 0) {
        /* torch.export pickles a script object through its class (def_pickle); cfx classes
         * have no serialized form, and __obj_flatten__ state cannot rebuild a real object. A
         * generator is a live stream shared with the program that traced it: a saved copy of
         * its state would draw the same numbers twice */
        bool gen = cfx_graph_module_opaque_attr(gm, 0).kind == CFX_V_GENERATOR;
        rc = jw_err(&w, "attribute '%s' is a %s, which this format cannot hold (only tensor attributes are saved)",
                    cfx_graph_module_object_attr_name(gm, 0), gen ? "torch.Generator" : "script object");
        goto out;
    }
    PB_LIT(b, "{\n  \"format\": \"" CFX_GRAPH_JSON_FORMAT "\",\n  \"version\": {\"major\": "
           STR(CFX_GRAPH_JSON_MAJOR) ", \"minor\": " STR(CFX_GRAPH_JSON_MINOR) "},\n  \"name\": ");
    if (!gm)
        PB_LIT(b, "null");
    else if ((rc = jw_cstr(&w, cfx_graph_module_name(gm))) != CFX_OK)
        goto out;
    PB_LIT(b, ",\n");
    if ((rc = put_schemas(&w)) != CFX_OK)
        goto out;
    PB_LIT(b, "  \"nodes\": [");
    bool any = false;
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        cfx_buf_puts(b, any ? ",\n    " : "\n    ");
        any = true;
        if ((rc = put_node(&w, n)) != CFX_OK || (rc = flush(&w, false)) != CFX_OK)
            goto out;
    }
    if (any)
        PB_LIT(b, "\n  ],\n");
    else
        PB_LIT(b, "],\n");
    if (weights) {
        w.cur = NULL;
        PB_LIT(b, "  \"weights\": ");
        if ((rc = jw_cstr(&w, weights)) != CFX_OK)
            goto out;
        PB_LIT(b, ",\n");
    }
    PB_LIT(b, "  \"attributes\": [");
    int na = gm ? cfx_graph_module_n_attrs(gm) : 0;
    for (int i = 0; i < na; i++) {
        cfx_buf_puts(b, i ? ",\n    " : "\n    ");
        if ((rc = put_attr(&w, cfx_graph_module_attr_name(gm, i), cfx_graph_module_attr(gm, i))) != CFX_OK ||
            (rc = flush(&w, false)) != CFX_OK)
            goto out;
    }
    if (na)
        PB_LIT(b, "\n  ]\n}\n");
    else
        PB_LIT(b, "]\n}\n");
    if (b->oom) {
        w.cur = NULL;
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        goto out;
    }
    rc = flush(&w, true);
out:
    cfx_free(w.defined);
    cfx_free(w.stack);
    return rc;
}

int cfx_graph_write_json(const cfx_graph *g, unsigned flags, cfx_buf *b)
{
    return write_doc(g, NULL, flags, b, NULL, NULL, NULL);
}

int cfx_graph_module_write_json(const cfx_graph_module *gm, unsigned flags, cfx_buf *b)
{
    if (!gm)
        return CFX_ERR;
    return write_doc(cfx_graph_module_graph(gm), gm, flags, b, NULL, NULL, NULL);
}

static int to_string(const cfx_graph *g, const cfx_graph_module *gm, unsigned flags, char **out)
{
    if (!out)
        return CFX_ERR;
    *out = NULL;
    cfx_buf b;
    cfx_buf_init(&b);
    int rc = write_doc(g, gm, flags, &b, NULL, NULL, NULL);
    if (rc == CFX_OK) {
        *out = cfx_buf_take(&b);
        if (!*out)
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_buf_free(&b);
    return rc;
}

int cfx_graph_to_json(const cfx_graph *g, unsigned flags, char **out)
{
    return to_string(g, NULL, flags, out);
}

int cfx_graph_module_to_json(const cfx_graph_module *gm, unsigned flags, char **out)
{
    if (!gm) {
        if (out)
            *out = NULL;
        return CFX_ERR;
    }
    return to_string(cfx_graph_module_graph(gm), gm, flags, out);
}

int jw_to_file(const cfx_graph *g, const cfx_graph_module *gm, const char *path, unsigned flags, const char *weights)
{
    if (!g)
        return cfx_error_set(CFX_ERR, NULL, "cannot write graph JSON: no graph");
    cfx_atomic_file *af = cfx_atomic_file_open(path, "graph JSON");
    if (!af)
        return cfx_error_status();
    cfx_buf b;
    cfx_buf_init(&b);
    int rc = write_doc(g, gm, flags, &b, cfx_atomic_file_stream(af), path, weights);
    cfx_buf_free(&b);
    if (rc == CFX_OK)
        return cfx_atomic_file_commit(af);
    cfx_atomic_file_abort(af);
    return rc;
}

int cfx_graph_to_json_file(const cfx_graph *g, const char *path, unsigned flags)
{
    return jw_to_file(g, NULL, path, flags, NULL);
}

int cfx_graph_module_to_json_file(const cfx_graph_module *gm, const char *path, unsigned flags)
{
    if (!gm)
        return cfx_error_set(CFX_ERR, NULL, "cannot write graph JSON: no graph module");
    return jw_to_file(cfx_graph_module_graph(gm), gm, path, flags, NULL);
}
