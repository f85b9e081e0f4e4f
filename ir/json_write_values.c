/* json_write_values.c - the value encoding of "cfx.graph" JSON: scalars, strings, nested
 * lists and tuples, node references, and node meta (val, tensor_meta, stack_trace, entries).
 *
 * Every value a node can hold is written here, or refused with the reason (see json.h). Ints
 * are bare JSON numbers only while every JSON reader holds them exactly (|v| < 2^53), floats
 * always tagged so that 1 and 1.0 stay apart, NaN and the infinities as PyTorch's serializer
 * spells them. Nesting is walked with an explicit stack and counted against the reader's
 * cJSON nesting limit, so the writer never produces a record the reader cannot parse. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/tensor.h"
#include "ir/internal.h"
#include "ir/json_internal.h"
#include "ir/printbuf.h"

#define MAX_EXACT_INT 9007199254740991LL /* 2^53 - 1: beyond it a JSON number may round */

static int too_deep(jwriter *w)
{
    return jw_err(w, "value nested deeper than the format's limit of %d JSON containers per record",
                  CFX_GRAPH_JSON_MAX_DEPTH);
}

/* ---- scalars ------------------------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s (n bytes available), 0 if ill-formed. */
size_t jw_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) {
        len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* A JSON string. False (nothing written) if s is not UTF-8 or holds NUL: cJSON would cut the
 * string at a \u0000 and the reader could not tell. */
bool jw_str(cfx_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t mark = b->len;
    cfx_buf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        /* a run of characters written as they are */
        size_t run = i;
        while (run < n && ((u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\') || u[run] >= 0x80)) {
            if (u[run] < 0x80) {
                run++;
                continue;
            }
            size_t k = jw_utf8_seq(u + run, n - run);
            if (!k)
                goto refuse;
            run += k;
        }
        cfx_buf_putn(b, s + i, run - i);
        if ((i = run) == n)
            break;
        /* then one escape */
        unsigned c = u[i++];
        if (c == 0)
            goto refuse;
        char e[6] = {'\\', 0};
        size_t len = 2;
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        default:
            e[1] = 'u', e[2] = '0', e[3] = '0', e[4] = hex[c >> 4], e[5] = hex[c & 15];
            len = 6;
            break;
        }
        cfx_buf_putn(b, e, len);
    }
    cfx_buf_putc(b, '"');
    return true;
refuse:
    if (!b->oom) { /* take back what was written */
        b->len = mark;
        b->data[mark] = '\0';
    }
    return false;
}

int jw_cstr(jwriter *w, const char *s)
{
    if (!jw_str(w->b, s, strlen(s)))
        return jw_err(w, "string \"%s\" is not valid UTF-8", s);
    return CFX_OK;
}

int jw_name(jwriter *w, cfx_name nm)
{
    char small[128];
    size_t n = cfx_name_length(nm);
    char *s = n < sizeof small ? small : cfx_malloc(n);
    if (!s)
        return jw_err(w, "out of memory");
    cfx_name_write(nm, s);
    bool ok = jw_str(w->b, s, n);
    if (s != small)
        cfx_free(s);
    return ok ? CFX_OK : jw_err(w, "a node name is not valid UTF-8");
}

/* An int: a bare JSON number when every JSON reader holds it exactly, else a decimal string. */
void jw_int(cfx_buf *b, int64_t v)
{
    if (v >= -MAX_EXACT_INT && v <= MAX_EXACT_INT) {
        pb_i64(b, v);
    } else {
        PB_LIT(b, "{\"int\": \"");
        pb_i64(b, v);
        PB_LIT(b, "\"}");
    }
}

static bool int_is_tagged(int64_t v) { return v < -MAX_EXACT_INT || v > MAX_EXACT_INT; }

static void put_float(cfx_buf *b, double d)
{
    PB_LIT(b, "{\"float\": ");
    if (isnan(d))
        PB_LIT(b, "\"NaN\"");
    else if (isinf(d) && d > 0)
        PB_LIT(b, "\"Infinity\"");
    else if (isinf(d))
        PB_LIT(b, "\"-Infinity\"");
    else
        cfx_format_double_python(d, b); /* shortest round-trip digits, a valid JSON number */
    cfx_buf_putc(b, '}');
}

static void put_dims(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_putc(b, '[');
    for (int i = 0; i < n; i++) {
        if (i)
            PB_LIT(b, ", ");
        jw_int(b, d[i]);
    }
    cfx_buf_putc(b, ']');
}

static bool dims_tagged(const int64_t *d, int n)
{
    for (int i = 0; i < n; i++)
        if (int_is_tagged(d[i]))
            return true;
    return false;
}

static void put_dtype(cfx_buf *b, int code)
{
    const char *s = cfx_dtype_torch_name((cfx_dtype)code);
    if (s)
        jw_str(b, s, strlen(s));
    else
        pb_i64(b, code);
}

static int put_device(jwriter *w, cfx_device d)
{
    if (!cfx_device_type_name((cfx_device_type)d.type) || d.index < -1)
        return jw_err(w, "invalid device (type %d, index %d)", (int)d.type, (int)d.index);
    char tmp[32];
    cfx_device_format(d, tmp, sizeof tmp);
    jw_str(w->b, tmp, strlen(tmp));
    return CFX_OK;
}

/* ---- values -------------------------------------------------------------------------------- */

static void put_bool(cfx_buf *b, bool v)
{
    if (v)
        PB_LIT(b, "true");
    else
        PB_LIT(b, "false");
}

static bool node_defined(const jwriter *w, const cfx_node *n)
{
    return (w->defined[n->seq >> 6] >> (n->seq & 63)) & 1;
}

static int put_leaf(jwriter *w, const cfx_value *v, int depth, int ref_mode)
{
    cfx_buf *b = w->b;
    bool tagged = v->kind >= CFX_V_DOUBLE && v->kind != CFX_V_STRING;
    if (v->kind == CFX_V_INT)
        tagged = int_is_tagged(v->u.i);
    if (tagged && depth + 1 > CFX_GRAPH_JSON_MAX_DEPTH)
        return too_deep(w);
    switch (v->kind) {
    case CFX_V_NONE:
        PB_LIT(b, "null");
        break;
    case CFX_V_BOOL:
        put_bool(b, v->u.b);
        break;
    case CFX_V_INT:
        jw_int(b, v->u.i);
        break;
    case CFX_V_DOUBLE:
        put_float(b, v->u.d);
        break;
    case CFX_V_STRING:
        if (!v->u.s)
            return jw_err(w, "a string value without data");
        if (!jw_str(b, v->u.s, v->len))
            return jw_err(w, "a string value is not valid UTF-8 or contains a NUL byte");
        break;
    case CFX_V_DTYPE:
        PB_LIT(b, "{\"dtype\": ");
        put_dtype(b, (int)v->u.dtype);
        cfx_buf_putc(b, '}');
        break;
    case CFX_V_DEVICE:
        PB_LIT(b, "{\"device\": ");
        if (put_device(w, v->u.device) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, '}');
        break;
    case CFX_V_MEMORY_FORMAT: {
        const char *s = cfx_memory_format_torch_name((cfx_memory_format)v->u.memory_format);
        PB_LIT(b, "{\"memory_format\": ");
        if (s)
            jw_str(b, s, strlen(s));
        else
            jw_int(b, v->u.memory_format);
        cfx_buf_putc(b, '}');
        break;
    }
    case CFX_V_LAYOUT:
        PB_LIT(b, "{\"layout\": ");
        if (v->u.layout == CFX_LAYOUT_STRIDED)
            PB_LIT(b, "\"torch.strided\"");
        else
            jw_int(b, v->u.layout);
        cfx_buf_putc(b, '}');
        break;
    case CFX_V_NODE: {
        const cfx_node *r = v->u.node;
        if (!r)
            return jw_err(w, "a node reference is NULL");
        if (cfx_node_graph(r) != w->g || cfx_node_is_erased(r) || r->op == CFX_NODE_ROOT)
            return jw_err(w, "refers to a node that is not in this graph (erased, or of another graph)");
        if (ref_mode == JW_REF_ARGS && !node_defined(w, r)) {
            cfx_buf m;
            cfx_buf_init(&m);
            cfx_name_print(cfx_node_name(r), &m);
            int rc = jw_err(w, "argument '%s' is used before it is defined (nodes must be in "
                            "topological order)", m.data ? m.data : "?");
            cfx_buf_free(&m);
            return rc;
        }
        PB_LIT(b, "{\"node\": ");
        if (jw_name(w, cfx_node_name(r)) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, '}');
        break;
    }
    case CFX_V_TENSOR:
        return jw_err(w, "a tensor value cannot be serialized (make it a module attribute read by "
                      "a get_attr node)");
    case CFX_V_TOKEN:
        return jw_err(w, "an effect token value cannot be serialized (a token is a graph input or a "
                      "with_effects result, never a constant)");
    case CFX_V_OBJECT:
        return jw_err(w, "a script object value cannot be serialized (make it a module attribute "
                      "read by a get_attr node)");
    case CFX_V_GENERATOR:
        return jw_err(w, "a torch.Generator value cannot be serialized (a generator is a live random "
                      "stream, not data)");
    case CFX_V_OP: /* by its registry name, as a call_function target: {"op": "aten::_print"} */
        if (!v->u.op)
            return jw_err(w, "an operator value without an operator");
        PB_LIT(b, "{\"op\": ");
        if (jw_cstr(w, cfx_op_name(v->u.op)) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, '}');
        break;
    case CFX_V_HOP: /* by its qualified name, as a HOP target: {"hop": "torch.ops.higher_order.NAME"} */
    {
        char q[sizeof JW_HOP_PREFIX + 128];
        if (!v->u.s || !v->len || v->len >= 128)
            return jw_err(w, "a higher-order operator value without a valid name");
        memcpy(q, JW_HOP_PREFIX, sizeof JW_HOP_PREFIX - 1);
        memcpy(q + sizeof JW_HOP_PREFIX - 1, v->u.s, v->len);
        PB_LIT(b, "{\"hop\": ");
        if (!jw_str(b, q, sizeof JW_HOP_PREFIX - 1 + v->len))
            return jw_err(w, "a higher-order operator's name is not valid UTF-8 or contains a NUL byte");
        cfx_buf_putc(b, '}');
        break;
    }
    default:
        return jw_err(w, "invalid value kind %u", (unsigned)v->kind);
    }
    return CFX_OK;
}

static bool push(jwriter *w, uint32_t *sp, const void *items, uint32_t n, bool tuple)
{
    if (*sp == w->stack_cap) {
        uint32_t cap = w->stack_cap ? w->stack_cap * 2 : 32;
        jw_frame *s = cfx_realloc(w->stack, cap * sizeof *s);
        if (!s)
            return false;
        w->stack = s;
        w->stack_cap = cap;
    }
    w->stack[(*sp)++] = (jw_frame){items, n, 0, tuple};
    return true;
}

/* The next item of the innermost open container, after its ", "; containers that are done
 * are closed ("]" or "]}" for a tuple) and leave depth. NULL when none is left open. */
static const void *next_item(jwriter *w, uint32_t *sp, int *depth, size_t size)
{
    cfx_buf *b = w->b;
    while (*sp) {
        jw_frame *f = &w->stack[*sp - 1];
        if (f->i < f->n) {
            if (f->i)
                PB_LIT(b, ", ");
            return (const char *)f->items + (size_t)f->i++ * size;
        }
        if (f->tuple)
            PB_LIT(b, "]}");
        else
            cfx_buf_putc(b, ']');
        *depth -= f->tuple ? 2 : 1;
        (*sp)--;
    }
    return NULL;
}

/* A value with `depth` containers already open around it. Lists are arrays, tuples
 * {"tuple": [...]}, dicts {"dict": [key, value, ...]}; nesting is walked with w->stack. */
int jw_value(jwriter *w, const cfx_value *root, int depth, int ref_mode)
{
    cfx_buf *b = w->b;
    uint32_t sp = 0;
    const cfx_value *v = root;
    while (v) {
        if (cfx_value_is_container(*v)) {
            /* a tuple {"tuple": [...]}, a dict {"dict": [key, value, ...]}: both close "]}" */
            bool tuple = v->kind != CFX_V_LIST;
            depth += tuple ? 2 : 1;
            if (depth > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            if (v->kind == CFX_V_DICT)
                PB_LIT(b, "{\"dict\": [");
            else if (tuple)
                PB_LIT(b, "{\"tuple\": [");
            else
                cfx_buf_putc(b, '[');
            if (v->len && !v->u.items)
                return jw_err(w, "a list without items");
            if (!push(w, &sp, v->u.items, v->len, tuple))
                return jw_err(w, "out of memory");
        } else if (put_leaf(w, v, depth, ref_mode) != CFX_OK) {
            return CFX_ERR;
        }
        v = next_item(w, &sp, &depth, sizeof *v);
    }
    return CFX_OK;
}

/* ---- meta ------------------------------------------------------------------------------------ */

int jw_tensor_fields(jwriter *w, int dtype, cfx_device device, const int64_t *sizes,
                     const int64_t *strides, int ndim, int64_t offset)
{
    cfx_buf *b = w->b;
    PB_LIT(b, "\"dtype\": ");
    put_dtype(b, dtype);
    PB_LIT(b, ", \"device\": ");
    if (put_device(w, device) != CFX_OK)
        return CFX_ERR;
    PB_LIT(b, ", \"shape\": ");
    put_dims(b, sizes, ndim);
    PB_LIT(b, ", \"stride\": ");
    put_dims(b, strides, ndim);
    PB_LIT(b, ", \"storage_offset\": ");
    jw_int(b, offset);
    return CFX_OK;
}

/* meta['val']: null, int, {"float"}, bool, {"tuple": [...]}, [...] (a list), {"tensor": {...}},
 * {"token": {...}}, {"script_object": class}. */
static int put_meta_val(jwriter *w, const cfx_meta_val *root, int depth)
{
    cfx_buf *b = w->b;
    uint32_t sp = 0;
    const cfx_meta_val *v = root;
    while (v) {
        switch (v->kind) {
        case CFX_MVAL_NONE:
            PB_LIT(b, "null");
            break;
        case CFX_MVAL_INT:
            if (int_is_tagged(v->u.i) && depth + 1 > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            jw_int(b, v->u.i);
            break;
        case CFX_MVAL_DOUBLE:
            if (depth + 1 > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            put_float(b, v->u.d);
            break;
        case CFX_MVAL_BOOL:
            put_bool(b, v->u.b);
            break;
        case CFX_MVAL_OBJECT:
            if (depth + 1 > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            PB_LIT(b, "{\"script_object\": ");
            if (!v->u.class_name)
                PB_LIT(b, "null");
            else if (jw_cstr(w, v->u.class_name) != CFX_OK)
                return CFX_ERR;
            cfx_buf_putc(b, '}');
            break;
        case CFX_MVAL_TENSOR:
        case CFX_MVAL_TOKEN: { /* a token: {"token": {...}}, its tensor's fields */
            if (v->n < 0 || v->n > CFX_MAX_DIMS || (v->n && (!v->sizes || !v->strides)))
                return jw_err(w, "a tensor val of rank %d without shape", (int)v->n);
            int extra = dims_tagged(v->sizes, v->n) || dims_tagged(v->strides, v->n) ? 4 : 3;
            if (depth + extra > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            if (v->kind == CFX_MVAL_TOKEN)
                PB_LIT(b, "{\"token\": {");
            else
                PB_LIT(b, "{\"tensor\": {");
            if (jw_tensor_fields(w, v->dtype, v->device, v->sizes, v->strides, v->n,
                v->storage_offset) != CFX_OK)
                return CFX_ERR;
            PB_LIT(b, "}}");
            break;
        }
        case CFX_MVAL_TUPLE:
            depth += 2;
            if (depth > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            if (v->n < 0 || (v->n && !v->u.items))
                return jw_err(w, "a tuple val without items");
            PB_LIT(b, "{\"tuple\": [");
            if (!push(w, &sp, v->u.items, (uint32_t)v->n, true))
                return jw_err(w, "out of memory");
            break;
        case CFX_MVAL_LIST: /* a bare array, as lists are among values */
            depth += 1;
            if (depth > CFX_GRAPH_JSON_MAX_DEPTH)
                return too_deep(w);
            if (v->n < 0 || (v->n && !v->u.items))
                return jw_err(w, "a list val without items");
            cfx_buf_putc(b, '[');
            if (!push(w, &sp, v->u.items, (uint32_t)v->n, false))
                return jw_err(w, "out of memory");
            break;
        default:
            return jw_err(w, "invalid val kind %d", (int)v->kind);
        }
        v = next_item(w, &sp, &depth, sizeof *v);
    }
    return CFX_OK;
}

static int put_tensor_meta(jwriter *w, const cfx_tensor_meta *tm)
{
    cfx_buf *b = w->b;
    if (tm->ndim < 0 || tm->ndim > CFX_MAX_DIMS || (tm->ndim && (!tm->shape || !tm->stride)))
        return jw_err(w, "tensor_meta of rank %d without shape", (int)tm->ndim);
    PB_LIT(b, "{\"shape\": ");
    put_dims(b, tm->shape, tm->ndim);
    PB_LIT(b, ", \"dtype\": ");
    put_dtype(b, tm->dtype);
    PB_LIT(b, ", \"requires_grad\": ");
    put_bool(b, tm->requires_grad);
    PB_LIT(b, ", \"stride\": ");
    put_dims(b, tm->stride, tm->ndim);
    PB_LIT(b, ", \"memory_format\": ");
    const char *mf = tm->memory_format < 0 ? NULL
                     : cfx_memory_format_torch_name((cfx_memory_format)tm->memory_format);
    if (tm->memory_format < 0)
        PB_LIT(b, "null");
    else if (mf)
        jw_str(b, mf, strlen(mf));
    else
        pb_i64(b, tm->memory_format);
    PB_LIT(b, ", \"is_quantized\": ");
    if (tm->is_quantized)
        PB_LIT(b, "true}");
    else
        PB_LIT(b, "false}");
    return CFX_OK;
}

bool jw_has_meta(const cfx_node *n)
{
    return cfx_node_val(n) || cfx_node_tensor_meta(n) || cfx_node_stack_trace(n) || cfx_node_meta_count(n);
}

int jw_meta(jwriter *w, const cfx_node *n)
{
    cfx_buf *b = w->b;
    w->what = "meta";
    const char *sep = "";
    PB_LIT(b, ", \"meta\": {");
    const cfx_meta_val *val = cfx_node_val(n);
    if (val) {
        w->key = "val";
        PB_LIT(b, "\"val\": ");
        if (put_meta_val(w, val, 2) != CFX_OK)
            return CFX_ERR;
        sep = ", ";
    }
    const cfx_tensor_meta *tm = cfx_node_tensor_meta(n);
    if (tm) {
        w->key = "tensor_meta";
        cfx_buf_puts(b, sep);
        PB_LIT(b, "\"tensor_meta\": ");
        if (put_tensor_meta(w, tm) != CFX_OK)
            return CFX_ERR;
        sep = ", ";
    }
    const cfx_site *st = cfx_node_stack_trace(n);
    if (st) {
        w->key = "stack_trace";
        cfx_buf_puts(b, sep);
        PB_LIT(b, "\"stack_trace\": {\"file\": ");
        if (jw_cstr(w, st->file ? st->file : "") != CFX_OK)
            return CFX_ERR;
        PB_LIT(b, ", \"line\": ");
        pb_i64(b, st->line);
        PB_LIT(b, ", \"func\": ");
        if (!st->func)
            PB_LIT(b, "null");
        else if (jw_cstr(w, st->func) != CFX_OK)
            return CFX_ERR;
        cfx_buf_putc(b, '}');
        sep = ", ";
    }
    uint32_t ne = cfx_node_meta_count(n);
    if (ne) {
        cfx_buf_puts(b, sep);
        PB_LIT(b, "\"entries\": [");
        for (uint32_t i = 0; i < ne; i++) {
            const char *k = cfx_node_meta_key(n, i);
            w->key = k;
            cfx_buf_puts(b, i ? ", [" : "[");
            if (jw_cstr(w, k) != CFX_OK)
                return CFX_ERR;
            PB_LIT(b, ", ");
            if (jw_value(w, cfx_node_meta_value(n, i), 4, JW_REF_META) != CFX_OK)
                return CFX_ERR;
            cfx_buf_putc(b, ']');
        }
        cfx_buf_putc(b, ']');
    }
    cfx_buf_putc(b, '}');
    w->key = NULL;
    return CFX_OK;
}
