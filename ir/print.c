/* print.c - str(graph), format_node and FX's argument spellings.
 *
 * Three spellings of a value exist in FX's text: format_node's _format_arg (nodes as `%x`,
 * strings bare, containers rebuilt by FX), Python str() (the output line `return {args[0]}`:
 * str at the top, repr inside containers), and repr() (python_code). One iterative printer
 * serves all three; the style decides each leaf by its depth. Node names are rendered from
 * (base, suffix) straight into the buffer. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"
#include "ir/printbuf.h"

/* ---- Python string repr ---------------------------------------------------------------------- */

static const char hexd[] = "0123456789abcdef";

static void put_hex_escape(cfx_buf *b, char kind, unsigned v, int digits)
{
    char tmp[10];
    int n = 0;
    tmp[n++] = '\\';
    tmp[n++] = kind;
    for (int i = digits - 1; i >= 0; i--)
        tmp[n++] = hexd[(v >> (4 * i)) & 15];
    cfx_buf_putn(b, tmp, (size_t)n);
}

/* Decodes one UTF-8 sequence at s (n bytes left); returns its length, 0 if malformed. */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    if (s[0] < 0xC2 || s[0] > 0xF4)
        return 0;
    size_t len = s[0] < 0xE0 ? 2 : s[0] < 0xF0 ? 3 : 4;
    if (len > n)
        return 0;
    unsigned v = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    *cp = v;
    return len;
}

void cfx_ir_print_py_string(const char *s, size_t len, cfx_buf *b)
{
    bool squote = memchr(s, '\'', len) != NULL, dquote = memchr(s, '"', len) != NULL;
    char q = squote && !dquote ? '"' : '\'';
    cfx_buf_putc(b, q);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            if (c == (unsigned char)q || c == '\\') {
                char e[2] = {'\\', (char)c};
                cfx_buf_putn(b, e, 2);
            } else if (c == '\t') {
                PB_LIT(b, "\\t");
            } else if (c == '\n') {
                PB_LIT(b, "\\n");
            } else if (c == '\r') {
                PB_LIT(b, "\\r");
            } else if (c < 0x20 || c == 0x7F) {
                put_hex_escape(b, 'x', c, 2);
            } else {
                cfx_buf_putc(b, (char)c);
            }
            continue;
        }
        unsigned cp;
        size_t n = utf8_decode(p + i, len - i, &cp);
        if (!n) { /* not text Python could hold: show the byte */
            put_hex_escape(b, 'x', c, 2);
            i++;
            continue;
        }
        /* str.isprintable() is false for C1 controls, NBSP, soft hyphen, line separators */
        if (cp <= 0xA0 || cp == 0xAD)
            put_hex_escape(b, 'x', cp, 2);
        else if (cp == 0x2028 || cp == 0x2029)
            put_hex_escape(b, 'u', cp, 4);
        else
            cfx_buf_putn(b, s + i, n);
        i += n;
    }
    cfx_buf_putc(b, q);
}

/* ---- values ---------------------------------------------------------------------------------- */

static void put_device(cfx_buf *b, cfx_device d, bool repr)
{
    const char *type = cfx_device_type_name((cfx_device_type)d.type);
    if (!type)
        type = "?";
    if (repr) {
        PB_LIT(b, "device(type='");
        cfx_buf_putn(b, type, strlen(type));
        if (d.index >= 0) {
            PB_LIT(b, "', index=");
            pb_i64(b, d.index);
            cfx_buf_putc(b, ')');
        } else {
            PB_LIT(b, "')");
        }
    } else {
        cfx_buf_putn(b, type, strlen(type));
        if (d.index >= 0) {
            cfx_buf_putc(b, ':');
            pb_i64(b, d.index);
        }
    }
}

static void put_leaf(const cfx_value *v, cfx_arg_style style, bool top, const ir_name_printer *np,
                     cfx_buf *b)
{
    bool repr = style == CFX_ARG_REPR || (style == CFX_ARG_STR && !top);
    switch (v->kind) {
    case CFX_V_NONE:
        PB_LIT(b, "None");
        break;
    case CFX_V_BOOL:
        if (v->u.b)
            PB_LIT(b, "True");
        else
            PB_LIT(b, "False");
        break;
    case CFX_V_INT:
        pb_i64(b, v->u.i);
        break;
    case CFX_V_DOUBLE:
        cfx_format_double_python(v->u.d, b);
        break;
    case CFX_V_STRING:
        if (!v->u.s)
            PB_LIT(b, "None");
        else if (repr)
            cfx_ir_print_py_string(v->u.s, v->len, b);
        else
            cfx_buf_putn(b, v->u.s, v->len);
        break;
    case CFX_V_NODE:
        if (style == CFX_ARG_FX)
            cfx_buf_putc(b, '%');
        if (np && np->fn)
            np->fn(v->u.node, b, np->ctx);
        else
            cfx_name_print(cfx_node_name(v->u.node), b);
        break;
    case CFX_V_DTYPE: {
        const char *s = cfx_dtype_torch_name(v->u.dtype);
        cfx_buf_putn(b, s ? s : "?", s ? strlen(s) : 1);
        break;
    }
    case CFX_V_DEVICE:
        put_device(b, v->u.device, repr);
        break;
    case CFX_V_MEMORY_FORMAT: {
        const char *s = cfx_memory_format_torch_name((cfx_memory_format)v->u.memory_format);
        cfx_buf_putn(b, s ? s : "?", s ? strlen(s) : 1);
        break;
    }
    case CFX_V_LAYOUT:
        if (v->u.layout == CFX_LAYOUT_STRIDED)
            PB_LIT(b, "torch.strided");
        else
            cfx_value_print(*v, CFX_STYLE_FX, b);
        break;
    case CFX_V_TENSOR:
        if (style == CFX_ARG_REPR && v->u.t) {
            /* FX's _get_repr: torch.Tensor(size=[2, 3], dtype=float32) */
            const cfx_tensor *t = v->u.t;
            PB_LIT(b, "torch.Tensor(size=[");
            for (int i = 0; i < t->ndim; i++) {
                if (i)
                    PB_LIT(b, ", ");
                pb_i64(b, t->sizes[i]);
            }
            PB_LIT(b, "], dtype=");
            const char *dn = cfx_dtype_name((cfx_dtype)t->dtype);
            cfx_buf_putn(b, dn ? dn : "?", dn ? strlen(dn) : 1);
            cfx_buf_putc(b, ')');
        } else if (v->u.t) {
            cfx_tensor_print(v->u.t, b);
        } else {
            PB_LIT(b, "None");
        }
        break;
    default:
        cfx_value_print(*v, style == CFX_ARG_REPR ? CFX_STYLE_PYTHON : CFX_STYLE_FX, b);
        break;
    }
}

typedef struct pframe {
    const cfx_value *items;
    uint32_t n, i;
    uint32_t kind; /* CFX_V_LIST, CFX_V_TUPLE or CFX_V_DICT */
} pframe;

static void open_container(uint32_t kind, cfx_buf *b)
{
    cfx_buf_putc(b, kind == CFX_V_TUPLE ? '(' : kind == CFX_V_DICT ? '{' : '[');
}

/* items[0..n) as a container of the given kind; nested containers are walked with an explicit
 * stack. A dict's items alternate key and value: FX prints the key with str() in graphs
 * ({in_ptr0: %x_1}), repr() in code and in str(dict) ({'in_ptr0': x_1}). */
static void print_container(const cfx_value *vals, uint32_t n, uint32_t kind, cfx_arg_style style,
                            const ir_name_printer *np, cfx_buf *b)
{
    pframe inline_frames[16];
    pframe *st = inline_frames;
    uint32_t len = 0, cap = 16;
    st[len++] = (pframe){vals, n, 0, kind};
    open_container(kind, b);
    while (len) {
        pframe *f = &st[len - 1];
        if (f->i == f->n) {
            if (f->kind == CFX_V_TUPLE) {
                if (f->n == 1)
                    PB_LIT(b, ",)");
                else
                    cfx_buf_putc(b, ')');
            } else {
                cfx_buf_putc(b, f->kind == CFX_V_DICT ? '}' : ']');
            }
            len--;
            continue;
        }
        if (f->kind == CFX_V_DICT && f->i % 2)
            PB_LIT(b, ": ");
        else if (f->i)
            PB_LIT(b, ", ");
        const cfx_value *v = &f->items[f->i++];
        if (cfx_value_is_container(*v)) {
            open_container(v->kind, b);
            if (len == cap) {
                pframe *ns = cfx_malloc(2 * cap * sizeof *ns);
                if (!ns) {
                    b->oom = true;
                    break;
                }
                memcpy(ns, st, len * sizeof *ns);
                if (st != inline_frames)
                    cfx_free(st);
                st = ns;
                cap *= 2;
            }
            st[len++] = (pframe){v->u.items, v->len, 0, v->kind};
        } else {
            put_leaf(v, style, false, np, b);
        }
    }
    if (st != inline_frames)
        cfx_free(st);
}

void ir_print_values(const cfx_value *vals, uint32_t n, bool as_tuple, cfx_arg_style style,
                     const ir_name_printer *np, cfx_buf *b)
{
    print_container(vals, n, as_tuple ? CFX_V_TUPLE : CFX_V_LIST, style, np, b);
}

void ir_print_value(const cfx_value *v, cfx_arg_style style, const ir_name_printer *np, cfx_buf *b)
{
    if (cfx_value_is_container(*v))
        print_container(v->u.items, v->len, v->kind, style, np, b);
    else
        put_leaf(v, style, true, np, b);
}

void ir_print_nested_value(const cfx_value *v, cfx_arg_style style, const ir_name_printer *np, cfx_buf *b)
{
    if (cfx_value_is_container(*v))
        print_container(v->u.items, v->len, v->kind, style, np, b);
    else
        put_leaf(v, style, false, np, b);
}

void cfx_ir_print_value(cfx_value v, cfx_arg_style style, cfx_buf *b) { ir_print_value(&v, style, NULL, b); }

/* ---- format_node ----------------------------------------------------------------------------- */

void cfx_node_print_target(const cfx_node *n, cfx_buf *b) { pb_istr(b, ir_target_of(n)->printed); }

static inline void ir_put_target(cfx_buf *b, const cfx_target_info *t) { pb_istr(b, t->printed); }

static void put_users(cfx_buf *b, const cfx_node *n)
{
    PB_LIT(b, " : [num_users=");
    pb_u64(b, n->n_users);
    PB_LIT(b, "] = ");
}

void cfx_node_format(const cfx_node *n, cfx_buf *b)
{
    switch (n->op) {
    case CFX_NODE_PLACEHOLDER:
        cfx_buf_putc(b, '%');
        cfx_name_print(cfx_node_name(n), b);
        put_users(b, n);
        PB_LIT(b, "placeholder[target=");
        ir_put_target(b, ir_target_of(n));
        cfx_buf_putc(b, ']');
        if (n->n_args) {
            PB_LIT(b, "(default=");
            ir_print_value(&n->args[0], CFX_ARG_STR, NULL, b);
            cfx_buf_putc(b, ')');
        }
        return;
    case CFX_NODE_GET_ATTR:
        cfx_buf_putc(b, '%');
        cfx_name_print(cfx_node_name(n), b);
        put_users(b, n);
        PB_LIT(b, "get_attr[target=");
        ir_put_target(b, ir_target_of(n));
        cfx_buf_putc(b, ']');
        return;
    case CFX_NODE_OUTPUT:
        PB_LIT(b, "return ");
        if (n->n_args)
            ir_print_value(&n->args[0], CFX_ARG_STR, NULL, b);
        else
            PB_LIT(b, "None");
        return;
    default: {
        const char *op = cfx_node_op_name(n->op);
        cfx_buf_putc(b, '%');
        cfx_name_print(cfx_node_name(n), b);
        put_users(b, n);
        if (op)
            cfx_buf_putn(b, op, strlen(op));
        else
            pb_i64(b, n->op);
        PB_LIT(b, "[target=");
        ir_put_target(b, ir_target_of(n));
        PB_LIT(b, "](args = ");
        ir_print_values(n->args, n->n_args, true, CFX_ARG_FX, NULL, b);
        PB_LIT(b, ", kwargs = {");
        const cfx_kwarg *kw = cfx_node_kwargs(n);
        for (uint32_t i = 0, nk = cfx_node_num_kwargs(n); i < nk; i++) {
            if (i)
                PB_LIT(b, ", ");
            pb_istr(b, kw[i].name);
            PB_LIT(b, ": ");
            ir_print_value(&kw[i].value, CFX_ARG_FX, NULL, b);
        }
        PB_LIT(b, "})");
        return;
    }
    }
}

void cfx_graph_print(const cfx_graph *g, cfx_buf *b)
{
    PB_LIT(b, "graph():");
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        PB_LIT(b, "\n    ");
        cfx_node_format(n, b);
    }
}

char *cfx_graph_to_string(const cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_graph_print(g, &b);
    return cfx_buf_take(&b);
}
