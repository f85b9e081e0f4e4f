/* value.c - cfx_value equality and printing.
 *
 * A value is printed in one of three dialects, because three PyTorch printers are imitated
 * byte for byte and they disagree on almost everything:
 *
 *   FX      torch.fx's _format_arg (graph printing): str() of everything, so strings are bare
 *           (`it's`), devices are `cpu`, nodes are `%name`.
 *   PYTHON  what Graph.python_code emits: repr() of everything, so strings are quoted with
 *           Python's rules (`"it's"`), devices are `device(type='cpu')`, nodes are bare names;
 *           a tensor is `torch.Tensor(size=[2], dtype=float32)` (2.x's _get_repr), not its repr.
 *   SCHEMA  c10's IValue printing of schema defaults: strings in double quotes with C escapes,
 *           floats as `1.`, and dtypes/memory formats/layouts as their integer codes, because
 *           that is what c10 stores for them.
 *
 * Python prints a float with the shortest digit string that reads back to the same double
 * (David Gay's mode 0). cfx_format_double_python finds it by asking printf for 1, 2, ... 17
 * significant digits and keeping the first string that strtod maps back to the input; at each
 * length it also tries the neighbouring digit string on the far side, because near a power of
 * two the round-trip interval is lopsided and the correctly rounded string can miss it while
 * its neighbour does not. tests/data/value_float_repr.txt holds Python's own answers.
 *
 * Lists nest to any depth, so printing and equality walk them with an explicit stack rather
 * than by recursion. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/operator.h"
#include "dispatch/tensor.h"
#include "dispatch/schema.h"
#include "dispatch/value.h"
#include "dispatch/value_internal.h"

cfx_value cfx_string(const char *s)
{
    if (!s)
        return cfx_none();
    cfx_value v = {CFX_V_STRING, (uint32_t)strlen(s), {.s = s}};
    return v;
}

double cfx_value_to_double(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_INT: return (double)v.u.i;
    case CFX_V_DOUBLE: return v.u.d;
    case CFX_V_BOOL: return v.u.b ? 1.0 : 0.0;
    default: return NAN;
    }
}

static const char *const kind_names[CFX_V_KIND_COUNT] = {
    [CFX_V_NONE] = "none",     [CFX_V_BOOL] = "bool",     [CFX_V_INT] = "int",
    [CFX_V_DOUBLE] = "double", [CFX_V_STRING] = "string", [CFX_V_TENSOR] = "tensor",
    [CFX_V_LIST] = "list",     [CFX_V_TUPLE] = "tuple",   [CFX_V_DTYPE] = "dtype",
    [CFX_V_DEVICE] = "device", [CFX_V_MEMORY_FORMAT] = "memory_format",
    [CFX_V_LAYOUT] = "layout", [CFX_V_OBJECT] = "object", [CFX_V_NODE] = "node",
    [CFX_V_OP] = "op",         [CFX_V_DICT] = "dict",
    [CFX_V_HOP] = "hop",       [CFX_V_TOKEN] = "token",
    [CFX_V_GENERATOR] = "generator",
};
_Static_assert(CFX_V_KIND_COUNT == 19, "kind_names must list every cfx_value_kind");

const char *cfx_value_kind_name(cfx_value_kind k)
{
    return (unsigned)k < CFX_V_KIND_COUNT ? kind_names[k] : "unknown";
}

/* ------------------------------------------------------------------ explicit stacks */

/* One open list/tuple of a walk. Walks start on a small array on the C stack and move to the
 * heap only for deeply nested values. */
typedef struct frame {
    const cfx_value *a, *b; /* items (b: the other side, for equality) */
    uint32_t n, i;
    uint32_t kind;
} frame;

typedef struct walk {
    frame local[16];
    frame *f;
    size_t depth, cap;
} walk;

static void walk_init(walk *w)
{
    w->f = w->local;
    w->depth = 0;
    w->cap = sizeof w->local / sizeof w->local[0];
}

static void walk_free(walk *w)
{
    if (w->f != w->local)
        cfx_free(w->f);
}

static bool walk_push(walk *w, frame fr)
{
    if (w->depth == w->cap) {
        size_t cap = w->cap * 2;
        frame *p = w->f == w->local ? cfx_malloc(cap * sizeof *p) : cfx_realloc(w->f, cap * sizeof *p);
        if (!p)
            return false;
        if (w->f == w->local)
            memcpy(p, w->local, sizeof w->local);
        w->f = p;
        w->cap = cap;
    }
    w->f[w->depth++] = fr;
    return true;
}

/* ------------------------------------------------------------------ equality */

static bool scalar_equal(const cfx_value *a, const cfx_value *b)
{
    switch (a->kind) {
    case CFX_V_NONE: return true;
    case CFX_V_BOOL: return a->u.b == b->u.b;
    case CFX_V_INT: return a->u.i == b->u.i;
    case CFX_V_DOUBLE:
        if (isnan(a->u.d) || isnan(b->u.d))
            return isnan(a->u.d) && isnan(b->u.d);
        return memcmp(&a->u.d, &b->u.d, sizeof(double)) == 0;
    case CFX_V_STRING: return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
    case CFX_V_TENSOR:
    case CFX_V_TOKEN: return a->u.t == b->u.t;
    case CFX_V_DTYPE: return a->u.dtype == b->u.dtype;
    case CFX_V_DEVICE: return cfx_device_eq(a->u.device, b->u.device);
    case CFX_V_MEMORY_FORMAT: return a->u.memory_format == b->u.memory_format;
    case CFX_V_LAYOUT: return a->u.layout == b->u.layout;
    case CFX_V_OBJECT: return a->u.obj == b->u.obj;
    case CFX_V_GENERATOR: return a->u.gen == b->u.gen;
    case CFX_V_NODE: return a->u.node == b->u.node;
    case CFX_V_OP: return a->u.op == b->u.op;
    case CFX_V_HOP: return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
    default: return false;
    }
}

bool cfx_value_equal(cfx_value a, cfx_value b)
{
    /* Most comparisons are of two scalars (a default argument): no walk to set up. */
    if (a.kind != b.kind)
        return false;
    if (!cfx_value_is_container(a))
        return scalar_equal(&a, &b);
    walk w;
    walk_init(&w);
    const cfx_value *x = &a, *y = &b;
    bool eq = true;
    for (;;) {
        if (x) {
            if (x->kind != y->kind) {
                eq = false;
                break;
            }
            if (cfx_value_is_container(*x)) { /* a dict's keys compare as strings, in order */
                if (x->len != y->len) {
                    eq = false;
                    break;
                }
                if (x->len && x->u.items != y->u.items &&
                    !walk_push(&w, (frame){x->u.items, y->u.items, x->len, 0, x->kind})) {
                    eq = false; /* out of memory: cannot prove equality */
                    break;
                }
            } else if (!scalar_equal(x, y)) {
                eq = false;
                break;
            }
            x = y = NULL;
        }
        if (w.depth == 0)
            break;
        frame *f = &w.f[w.depth - 1];
        if (f->i < f->n) {
            x = &f->a[f->i];
            y = &f->b[f->i];
            f->i++;
        } else {
            w.depth--;
        }
    }
    walk_free(&w);
    return eq;
}

/* ------------------------------------------------------------------ Python float repr */

/* Parses printf's "%.*e" output "d.ddde[+-]xx" into its digits and decimal exponent. */
static int split_sci(const char *s, char *digits, int *exp10)
{
    int n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            digits[n++] = *s;
    digits[n] = '\0';
    *exp10 = *s == 'e' ? atoi(s + 1) : 0;
    return n;
}

/* The digit string one unit in the last place above (dir > 0) or below (dir < 0). */
static void step_digits(char *digits, int n, int *exp10, int dir)
{
    int i = n - 1;
    if (dir > 0) {
        while (i >= 0 && digits[i] == '9')
            digits[i--] = '0';
        if (i >= 0) {
            digits[i]++;
        } else { /* 999 -> 1000: one more power of ten, same length */
            digits[0] = '1';
            (*exp10)++;
        }
    } else {
        while (i >= 0 && digits[i] == '0')
            digits[i--] = '9';
        digits[i]--; /* i >= 0: the leading digit is never 0 */
        if (digits[0] == '0') { /* 1000 -> 0999: drop the zero, one power of ten less */
            memmove(digits, digits + 1, (size_t)n - 1);
            digits[n - 1] = '9';
            (*exp10)--;
        }
    }
}

static bool reads_back(const char *digits, int n, int exp10, double x)
{
    char s[40];
    snprintf(s, sizeof s, "%c.%.*se%d", digits[0], n - 1, digits + 1, exp10);
    return strtod(s, NULL) == x;
}

/* Shortest digits (no trailing zeros) and exponent of |x| > 0, finite. */
static int shortest_digits(double x, char *digits, int *exp10)
{
    char tmp[40], alt[20];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
        int n = split_sci(tmp, digits, exp10);
        double back = strtod(tmp, NULL);
        if (back != x) {
            int e = *exp10;
            memcpy(alt, digits, (size_t)n + 1);
            step_digits(alt, n, &e, back < x ? 1 : -1);
            if (!reads_back(alt, n, e, x))
                continue;
            memcpy(digits, alt, (size_t)n + 1);
            *exp10 = e;
        }
        while (n > 1 && digits[n - 1] == '0')
            digits[--n] = '\0';
        return n;
    }
    /* 17 digits always round-trip; not reached */
    snprintf(tmp, sizeof tmp, "%.16e", x);
    int n = split_sci(tmp, digits, exp10);
    while (n > 1 && digits[n - 1] == '0')
        digits[--n] = '\0';
    return n;
}

void cfx_format_double_python(double d, cfx_buf *b)
{
    if (isnan(d)) {
        cfx_buf_puts(b, "nan");
        return;
    }
    if (isinf(d)) {
        cfx_buf_puts(b, d > 0 ? "inf" : "-inf");
        return;
    }
    if (signbit(d))
        cfx_buf_putc(b, '-');
    if (d == 0) {
        cfx_buf_puts(b, "0.0");
        return;
    }
    char digits[24];
    int exp10;
    int n = shortest_digits(fabs(d), digits, &exp10);
    if (exp10 < -4 || exp10 >= 16) { /* Python's repr switches to 1e-05 / 1e+16 here */
        cfx_buf_putc(b, digits[0]);
        if (n > 1) {
            cfx_buf_putc(b, '.');
            cfx_buf_putn(b, digits + 1, (size_t)n - 1);
        }
        cfx_buf_printf(b, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        cfx_buf_puts(b, "0.");
        for (int i = 0; i < -exp10 - 1; i++)
            cfx_buf_putc(b, '0');
        cfx_buf_putn(b, digits, (size_t)n);
    } else {
        int ints = exp10 + 1;
        for (int i = 0; i < ints; i++)
            cfx_buf_putc(b, i < n ? digits[i] : '0');
        cfx_buf_putc(b, '.');
        if (n > ints)
            cfx_buf_putn(b, digits + ints, (size_t)(n - ints));
        else
            cfx_buf_putc(b, '0');
    }
}

/* ------------------------------------------------------------------ strings */

/* Code points Python's str.isprintable() rejects among the assigned ones (Unicode 14, as in
 * the oracle's Python 3.11): Cc, Cf, Zs (except space), Zl, Zp, Cs, Co. Unassigned code points
 * (Cn) are printed as they are, where Python would escape them. */
static const uint32_t nonprintable[][2] = {
    {0x80, 0xa0},       {0xad, 0xad},       {0x600, 0x605},     {0x61c, 0x61c},
    {0x6dd, 0x6dd},     {0x70f, 0x70f},     {0x890, 0x891},     {0x8e2, 0x8e2},
    {0x1680, 0x1680},   {0x180e, 0x180e},   {0x2000, 0x200f},   {0x2028, 0x202f},
    {0x205f, 0x2064},   {0x2066, 0x206f},   {0x3000, 0x3000},   {0xd800, 0xf8ff},
    {0xfeff, 0xfeff},   {0xfff9, 0xfffb},   {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
    {0x13430, 0x13438}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0001, 0xe0001},
    {0xe0020, 0xe007f}, {0xf0000, 0xffffd}, {0x100000, 0x10fffd},
};

static bool is_printable(uint32_t cp)
{
    if (cp < 0x80)
        return cp >= 0x20 && cp < 0x7f;
    size_t lo = 0, hi = sizeof nonprintable / sizeof nonprintable[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < nonprintable[mid][0])
            hi = mid;
        else if (cp > nonprintable[mid][1])
            lo = mid + 1;
        else
            return false;
    }
    return true;
}

/* Decodes one UTF-8 sequence; returns its length, or 0 if s[0] does not start a valid one. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/* repr(str). Bytes that are not valid UTF-8 (a Python str cannot hold them) print as \xNN. */
static void put_python_string(const char *str, size_t n, cfx_buf *b)
{
    const unsigned char *s = (const unsigned char *)str;
    bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    cfx_buf_putc(b, q);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = utf8_decode(s + i, n - i, &cp);
        if (len == 0) {
            cfx_buf_printf(b, "\\x%02x", s[i]);
            i++;
            continue;
        }
        if (cp == (uint32_t)q || cp == '\\') {
            cfx_buf_putc(b, '\\');
            cfx_buf_putc(b, (char)cp);
        } else if (cp == '\t') {
            cfx_buf_puts(b, "\\t");
        } else if (cp == '\n') {
            cfx_buf_puts(b, "\\n");
        } else if (cp == '\r') {
            cfx_buf_puts(b, "\\r");
        } else if (is_printable(cp)) {
            cfx_buf_putn(b, str + i, len);
        } else if (cp <= 0xff) {
            cfx_buf_printf(b, "\\x%02x", (unsigned)cp);
        } else if (cp <= 0xffff) {
            cfx_buf_printf(b, "\\u%04x", (unsigned)cp);
        } else {
            cfx_buf_printf(b, "\\U%08x", (unsigned)cp);
        }
        i += len;
    }
    cfx_buf_putc(b, q);
}

/* ------------------------------------------------------------------ printing */

static cfx_node_name_fn node_printer;

void cfx_value_set_node_printer(cfx_node_name_fn fn) { node_printer = fn; }

static void put_node(const struct cfx_node *n, cfx_buf *b)
{
    if (node_printer)
        node_printer(n, b);
    else
        cfx_buf_puts(b, "<node>");
}

static void put_device(cfx_device d, cfx_value_style style, cfx_buf *b)
{
    const char *type = cfx_device_type_name((cfx_device_type)d.type);
    if (!type)
        type = "unknown";
    if (style != CFX_STYLE_PYTHON) {
        char buf[32];
        cfx_buf_puts(b, cfx_device_format(d, buf, sizeof buf));
    } else if (d.index >= 0) {
        cfx_buf_printf(b, "device(type='%s', index=%d)", type, d.index);
    } else {
        cfx_buf_printf(b, "device(type='%s')", type);
    }
}

/* python_code's _get_repr of a tensor (2.x): its size and dtype, never its data, so the code
 * stays short and the same whatever the values ("torch.Tensor(size=[2, 3], dtype=float32)"). */
static void put_python_tensor(const cfx_tensor *t, cfx_buf *b)
{
    cfx_buf_puts(b, "torch.Tensor(size=[");
    for (int i = 0; i < t->ndim; i++)
        cfx_buf_printf(b, i ? ", %" PRId64 : "%" PRId64, t->sizes[i]);
    const char *dt = cfx_dtype_name((cfx_dtype)t->dtype);
    cfx_buf_printf(b, "], dtype=%s)", dt ? dt : "unknown");
}

static void put_scalar(const cfx_value *v, cfx_value_style style, cfx_buf *b)
{
    switch (v->kind) {
    case CFX_V_NONE: cfx_buf_puts(b, "None"); break;
    case CFX_V_BOOL: cfx_buf_puts(b, v->u.b ? "True" : "False"); break;
    case CFX_V_INT: cfx_buf_printf(b, "%" PRId64, v->u.i); break;
    case CFX_V_DOUBLE:
        if (style == CFX_STYLE_SCHEMA)
            cfx_format_double_schema(v->u.d, b);
        else
            cfx_format_double_python(v->u.d, b);
        break;
    case CFX_V_STRING:
        if (style == CFX_STYLE_FX)
            cfx_buf_putn(b, v->u.s, v->len);
        else if (style == CFX_STYLE_PYTHON)
            put_python_string(v->u.s, v->len, b);
        else
            cfx_schema_print_string(v->u.s, v->len, b);
        break;
    case CFX_V_TENSOR:
    case CFX_V_TOKEN: /* a token prints as the tensor it is in 2.13, tensor([]) */
        if (!v->u.t)
            cfx_buf_puts(b, "None");
        else if (style == CFX_STYLE_PYTHON)
            put_python_tensor(v->u.t, b);
        else
            cfx_tensor_print(v->u.t, b);
        break;
    case CFX_V_DTYPE: {
        const char *name = cfx_dtype_torch_name(v->u.dtype);
        if (style == CFX_STYLE_SCHEMA || !name) /* c10 holds a ScalarType as its int code */
            cfx_buf_printf(b, "%d", (int)v->u.dtype);
        else
            cfx_buf_puts(b, name);
        break;
    }
    case CFX_V_DEVICE: put_device(v->u.device, style, b); break;
    case CFX_V_MEMORY_FORMAT: {
        const char *name = cfx_memory_format_torch_name((cfx_memory_format)v->u.memory_format);
        if (style == CFX_STYLE_SCHEMA || !name)
            cfx_buf_printf(b, "%" PRId64, v->u.memory_format);
        else
            cfx_buf_puts(b, name);
        break;
    }
    case CFX_V_LAYOUT:
        if (style == CFX_STYLE_SCHEMA || v->u.layout != CFX_LAYOUT_STRIDED)
            cfx_buf_printf(b, "%" PRId64, v->u.layout);
        else
            cfx_buf_puts(b, "torch.strided");
        break;
    case CFX_V_OBJECT:
        /* str() of a ScriptObject carries its address; keep output deterministic instead */
        cfx_buf_puts(b, "<torch.ScriptObject>");
        break;
    case CFX_V_GENERATOR:
        /* repr(torch.Generator()) is "<torch._C.Generator object at 0x...>": no address here */
        cfx_buf_puts(b, "<torch._C.Generator object>");
        break;
    case CFX_V_NODE:
        if (style == CFX_STYLE_FX)
            cfx_buf_putc(b, '%');
        put_node(v->u.node, b);
        break;
    case CFX_V_OP: {
        /* str(OpOverload) is "aten._print.default"; python_code emits the global's path */
        const cfx_schema *sc = v->u.op ? cfx_op_schema(v->u.op) : NULL;
        if (!sc) {
            cfx_buf_puts(b, "None");
            break;
        }
        const char *colons = strstr(sc->name, "::");
        if (style == CFX_STYLE_PYTHON)
            cfx_buf_puts(b, "torch.ops.");
        if (colons) {
            cfx_buf_putn(b, sc->name, (size_t)(colons - sc->name));
            cfx_buf_putc(b, '.');
        }
        cfx_buf_printf(b, "%s.%s", colons ? colons + 2 : sc->name, sc->overload[0] ? sc->overload : "default");
        break;
    }
    case CFX_V_HOP:
        /* str(HigherOrderOperator) is its name; python_code emits torch.ops.higher_order.NAME */
        if (style == CFX_STYLE_PYTHON)
            cfx_buf_puts(b, "torch.ops.higher_order.");
        cfx_buf_putn(b, v->u.s, v->len);
        break;
    default: cfx_buf_printf(b, "<invalid value kind %u>", (unsigned)v->kind); break;
    }
}

void cfx_value_print(cfx_value v, cfx_value_style style, cfx_buf *b)
{
    walk w;
    walk_init(&w);
    const cfx_value *cur = &v;
    for (;;) {
        if (cur) {
            if (cfx_value_is_container(*cur)) {
                cfx_buf_putc(b, cur->kind == CFX_V_LIST ? '[' : cur->kind == CFX_V_DICT ? '{' : '(');
                if (!walk_push(&w, (frame){cur->u.items, NULL, cur->len, 0, cur->kind})) {
                    b->oom = true;
                    break;
                }
            } else {
                put_scalar(cur, style, b);
            }
            cur = NULL;
        }
        if (w.depth == 0 || b->oom)
            break;
        frame *f = &w.f[w.depth - 1];
        if (f->i < f->n) {
            /* a dict item is a key (even index) or its value: {k: v, k2: v2} */
            if (f->kind == CFX_V_DICT && f->i % 2)
                cfx_buf_puts(b, ": ");
            else if (f->i > 0)
                cfx_buf_puts(b, ", ");
            cur = &f->a[f->i++];
        } else {
            if (f->kind == CFX_V_LIST)
                cfx_buf_putc(b, ']');
            else if (f->kind == CFX_V_DICT)
                cfx_buf_putc(b, '}');
            else
                cfx_buf_puts(b, f->n == 1 ? ",)" : ")");
            w.depth--;
        }
    }
    walk_free(&w);
}

const cfx_value *cfx_dict_get(cfx_value dict, const char *key)
{
    if (dict.kind != CFX_V_DICT || !key)
        return NULL;
    size_t n = strlen(key);
    for (uint32_t i = 0; i + 1 < dict.len; i += 2)
        if (dict.u.items[i].kind == CFX_V_STRING && dict.u.items[i].len == n && !memcmp(dict.u.items[i].u.s, key, n))
            return &dict.u.items[i + 1];
    return NULL;
}

char *cfx_value_to_string(cfx_value v, cfx_value_style style)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_value_print(v, style, &b);
    return cfx_buf_take(&b);
}
