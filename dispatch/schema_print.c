/* schema_print.c - c10's printing of function schemas, and the schema queries.
 *
 * The text is c10::FunctionSchema's operator<< (aten/src/ATen/core/function_schema.cpp and
 * function_schema.h): the Argument printer, the AliasInfo printer, Type::str() and the
 * IValue printer for default values. Its peculiarities are kept because printed schemas
 * are compared byte for byte with PyTorch 2.13: a sized list's alias sits between the element
 * and the brackets ("Tensor(a)[2]"), an alias with no sets is not printed unless it is a
 * list element's ("Tensor[]()[]"), integer-list defaults whose items are all equal print as
 * one number ("int[2] stride=1"), strings print quoted only for str arguments, and a single
 * return is put in parentheses only when it would start with one. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

/* ------------------------------------------------------------------ numbers */

/* IValue's double printing: an integral value that fits int64_t prints as "<int>." (so
 * -0.0 is "0."), anything else with max_digits10 significant digits. */
void cfx_format_double_schema(double d, cfx_buf *b)
{
    if (isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        int64_t i = (int64_t)d;
        if ((double)i == d) {
            cfx_buf_printf(b, "%lld.", (long long)i);
            return;
        }
    }
    cfx_buf_printf(b, "%.17g", d);
}

/* ------------------------------------------------------------------ types */

/* Type::str() of a leaf type; annotation_str() differs for a few (the Python names). */
static const char *leaf_name(const cfx_type *t, bool annotation)
{
    switch (t->kind) {
    case CFX_TYPE_TENSOR: return "Tensor";
    case CFX_TYPE_INT: return "int";
    case CFX_TYPE_SYMINT: return annotation ? "int" : "SymInt";
    case CFX_TYPE_SYMBOOL: return annotation ? "bool" : "SymBool";
    case CFX_TYPE_FLOAT: return "float";
    case CFX_TYPE_COMPLEX: return "complex";
    case CFX_TYPE_BOOL: return "bool";
    case CFX_TYPE_STR: return "str";
    case CFX_TYPE_SCALAR: return annotation ? "number" : "Scalar";
    case CFX_TYPE_SCALAR_TYPE: return annotation ? "int" : "ScalarType";
    case CFX_TYPE_LAYOUT: return annotation ? "int" : "Layout";
    case CFX_TYPE_MEMORY_FORMAT: return annotation ? "int" : "MemoryFormat";
    case CFX_TYPE_DEVICE: return "Device";
    case CFX_TYPE_GENERATOR: return "Generator";
    case CFX_TYPE_STORAGE: return "Storage";
    case CFX_TYPE_STREAM: return "Stream";
    case CFX_TYPE_QSCHEME: return "QScheme";
    case CFX_TYPE_QUANTIZER: return "Quantizer";
    case CFX_TYPE_CAPSULE: return "Capsule";
    case CFX_TYPE_PYOBJECT: return "PyObject";
    case CFX_TYPE_NONE: return "NoneType";
    case CFX_TYPE_ANY: return "Any";
    case CFX_TYPE_ANY_CLASS: return "AnyClassType";
    case CFX_TYPE_ANY_ENUM: return "AnyEnumType";
    case CFX_TYPE_VAR:
    case CFX_TYPE_CLASS: return t->name ? t->name : "";
    default: return NULL;
    }
}

/* What a compound type prints before, between and after its elements, in each style. */
static const char *open_text(const cfx_type *t, bool annotation)
{
    switch (t->kind) {
    case CFX_TYPE_LIST: return annotation ? "List[" : "";
    case CFX_TYPE_OPTIONAL: return annotation ? "Optional[" : "";
    case CFX_TYPE_TUPLE: return annotation ? (t->n_elems ? "Tuple[" : "Tuple[()") : "(";
    case CFX_TYPE_DICT: return annotation ? "Dict[" : "Dict(";
    case CFX_TYPE_FUTURE: return annotation ? "Future[" : "Future(";
    case CFX_TYPE_AWAIT: return annotation ? "Await[" : "Await(";
    case CFX_TYPE_RREF: return annotation ? "RRef[" : "RRef(";
    case CFX_TYPE_UNION: return annotation ? "Union[" : "Union(";
    default: return "";
    }
}

static const char *close_text(const cfx_type *t, bool annotation)
{
    if (annotation)
        return "]";
    switch (t->kind) {
    case CFX_TYPE_LIST: return "[]";
    case CFX_TYPE_OPTIONAL: return "?";
    default: return ")";
    }
}

static bool is_number_part(const cfx_type *t)
{
    return t->kind == CFX_TYPE_INT || t->kind == CFX_TYPE_FLOAT || t->kind == CFX_TYPE_COMPLEX;
}

/* UnionType::canHoldType(Number), for a union whose members are flat. */
static bool holds_number(const cfx_type *u)
{
    int parts = 0;
    for (uint16_t i = 0; i < u->n_elems; i++)
        parts |= u->elems[i]->kind == CFX_TYPE_INT ? 1 : u->elems[i]->kind == CFX_TYPE_FLOAT ? 2
               : u->elems[i]->kind == CFX_TYPE_COMPLEX ? 4 : 0;
    return parts == 7;
}

typedef struct walk {
    const cfx_type *t;
    uint16_t next;     /* next element to print */
    bool number;       /* a union that holds Scalar: its int/float/complex print as one name */
    bool separated;    /* a union printed a ", " (c10 only tracks it from the second member) */
} walk;

/* Type::str() or annotation_str(), without recursion: element types nest as deep as the
 * schema text did. Unions print as c10's unionStr does, quirks included: int, float and
 * complex together print as one "Scalar" at the end, and the separator before a member is
 * written by position, so "Union(str, Scalar)" prints "Union(, str, Scalar)". */
void schema_type_write(const cfx_type *root, bool annotation, cfx_buf *b)
{
    walk local[16], *stack = local;
    size_t n = 0, cap = 16;
    stack[n++] = (walk){root, 0, false, false};
    while (n > 0) {
        walk *w = &stack[n - 1];
        const cfx_type *t = w->t;
        const char *leaf = leaf_name(t, annotation);
        if (leaf) {
            cfx_buf_puts(b, leaf);
            n--;
            continue;
        }
        if (w->next == 0) {
            cfx_buf_puts(b, open_text(t, annotation));
            w->number = t->kind == CFX_TYPE_UNION && holds_number(t);
        }
        if (w->number)
            while (w->next < t->n_elems && is_number_part(t->elems[w->next]))
                w->next++;
        if (w->next < t->n_elems) {
            if (w->next > 0) {
                cfx_buf_puts(b, ", ");
                w->separated = true;
            }
            const cfx_type *e = t->elems[w->next++];
            if (n == cap) {
                walk *bigger = cfx_malloc(2 * cap * sizeof *bigger);
                if (!bigger) {
                    b->oom = true;
                    break;
                }
                memcpy(bigger, stack, n * sizeof *stack);
                if (stack != local)
                    cfx_free(stack);
                stack = bigger;
                cap *= 2;
            }
            stack[n++] = (walk){e, 0, false, false};
            continue;
        }
        if (w->number) {
            if (w->separated)
                cfx_buf_puts(b, ", ");
            cfx_buf_puts(b, annotation ? "number" : "Scalar");
        }
        cfx_buf_puts(b, close_text(t, annotation));
        n--;
    }
    if (stack != local)
        cfx_free(stack);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Do the before and after sets hold the same names? (Each set has no duplicates.) */
static bool same_sets(const cfx_alias_info *a, cfx_buf *b)
{
    size_t n = a->n_before;
    if (n != a->n_after)
        return false;
    if (a->before == a->after || n == 0)
        return true;
    if (n <= 8) {
        for (size_t i = 0; i < n; i++) {
            bool found = false;
            for (size_t j = 0; j < n && !found; j++)
                found = strcmp(a->before[i], a->after[j]) == 0;
            if (!found)
                return false;
        }
        return true;
    }
    /* large sets: compare sorted copies instead of every pair */
    const char **x = cfx_malloc(2 * n * sizeof *x);
    if (!x) {
        b->oom = true;
        return true;
    }
    memcpy(x, a->before, n * sizeof *x);
    memcpy(x + n, a->after, n * sizeof *x);
    qsort(x, n, sizeof *x, by_name);
    qsort(x + n, n, sizeof *x, by_name);
    bool same = true;
    for (size_t i = 0; i < n && same; i++)
        same = strcmp(x[i], x[n + i]) == 0;
    cfx_free(x);
    return same;
}

static void alias_print(const cfx_alias_info *a, cfx_buf *b)
{
    cfx_buf_putc(b, '(');
    for (uint16_t i = 0; i < a->n_before; i++) {
        if (i > 0)
            cfx_buf_putc(b, '|');
        cfx_buf_puts(b, a->before[i]);
    }
    if (a->is_write)
        cfx_buf_putc(b, '!');
    if (!same_sets(a, b)) {
        cfx_buf_puts(b, " -> ");
        for (uint16_t i = 0; i < a->n_after; i++) {
            if (i > 0)
                cfx_buf_putc(b, '|');
            cfx_buf_puts(b, a->after[i]);
        }
    }
    cfx_buf_putc(b, ')');
}

/* The type part of Argument's operator<<; size_hint -1 means no "[N]" (so the "int[-1]"
 * that PyTorch makes of "int[4294967295]" prints as "int[]"). */
static void print_arg_type(const cfx_type *t, int32_t size_hint, cfx_buf *b)
{
    bool is_opt = t->kind == CFX_TYPE_OPTIONAL;
    const cfx_type *unopt = is_opt ? t->elems[0] : t;
    const cfx_alias_info *alias = t->alias;
    if (unopt->kind == CFX_TYPE_LIST) {
        schema_type_write(unopt->elems[0], false, b);
        if (alias && alias->contained)
            alias_print(alias->contained, b);
        cfx_buf_putc(b, '[');
        if (size_hint != -1)
            cfx_buf_printf(b, "%d", (int)size_hint);
        cfx_buf_putc(b, ']');
    } else {
        schema_type_write(unopt, false, b);
    }
    if (alias && alias->n_before > 0)
        alias_print(alias, b);
    if (is_opt)
        cfx_buf_putc(b, '?');
}

void cfx_type_print(const cfx_type *t, cfx_buf *b)
{
    if (t)
        print_arg_type(t, -1, b);
}

/* ------------------------------------------------------------------ default values */

/* c10::printQuotedString; the octal arithmetic is on a signed char, as in c10, which is
 * what makes a UTF-8 byte print as "\0)+". */
void cfx_schema_print_string(const char *s, size_t n, cfx_buf *b)
{
    cfx_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        signed char c = (signed char)s[i];
        switch (c) {
        case '\\': cfx_buf_puts(b, "\\\\"); break;
        case '\'': cfx_buf_puts(b, "\\'"); break;
        case '"': cfx_buf_puts(b, "\\\""); break;
        case '\a': cfx_buf_puts(b, "\\a"); break;
        case '\b': cfx_buf_puts(b, "\\b"); break;
        case '\f': cfx_buf_puts(b, "\\f"); break;
        case '\n': cfx_buf_puts(b, "\\n"); break;
        case '\r': cfx_buf_puts(b, "\\r"); break;
        case '\t': cfx_buf_puts(b, "\\t"); break;
        case '\v': cfx_buf_puts(b, "\\v"); break;
        default:
            if (c > 0x1f && c < 0x7f) {
                cfx_buf_putc(b, (char)c);
            } else {
                int v = c;
                char oct[5] = "\\000";
                oct[3] = (char)(oct[3] + v % 8);
                v /= 8;
                oct[2] = (char)(oct[2] + v % 8);
                v /= 8;
                oct[1] = (char)(oct[1] + v);
                cfx_buf_putn(b, oct, 4);
            }
        }
    }
    cfx_buf_putc(b, '"');
}

static const char *const device_type_names[] = {"cpu", "meta"};

/* IValue's operator<< for the values a schema default can hold. */
static void print_ivalue(cfx_value v, cfx_buf *b)
{
    switch (v.kind) {
    case CFX_V_NONE: cfx_buf_puts(b, "None"); break;
    case CFX_V_BOOL: cfx_buf_puts(b, v.u.b ? "True" : "False"); break;
    case CFX_V_INT: cfx_buf_printf(b, "%lld", (long long)v.u.i); break;
    case CFX_V_DOUBLE: cfx_format_double_schema(v.u.d, b); break;
    case CFX_V_STRING: cfx_buf_putn(b, v.u.s, v.len); break;
    case CFX_V_DEVICE: {
        int t = v.u.device.type;
        cfx_buf_puts(b, t >= 0 && t < 2 ? device_type_names[t] : "?");
        if (v.u.device.index != -1)
            cfx_buf_printf(b, ":%d", (int)v.u.device.index);
        break;
    }
    case CFX_V_LIST:
        cfx_buf_putc(b, '[');
        for (uint32_t i = 0; i < v.len; i++) {
            if (i > 0)
                cfx_buf_puts(b, ", ");
            cfx_value item = v.u.items[i];
            if (item.kind == CFX_V_LIST) /* never produced by the parser */
                cfx_buf_puts(b, "[...]");
            else
                print_ivalue(item, b);
        }
        cfx_buf_putc(b, ']');
        break;
    case CFX_V_TUPLE:
        /* a complex number (see schema_default.c): real, sign, |imag|, "j" */
        if (v.len == 2 && v.u.items[0].kind == CFX_V_DOUBLE && v.u.items[1].kind == CFX_V_DOUBLE) {
            double im = v.u.items[1].u.d;
            cfx_format_double_schema(v.u.items[0].u.d, b);
            cfx_buf_putc(b, im >= 0 ? '+' : '-');
            cfx_format_double_schema(fabs(im), b);
            cfx_buf_putc(b, 'j');
        }
        break;
    default:
        break;
    }
}

static void print_default(const cfx_argument *a, cfx_buf *b)
{
    const cfx_type *t = a->type;
    const cfx_type *unopt = t->kind == CFX_TYPE_OPTIONAL ? t->elems[0] : t;
    cfx_value v = a->default_value;
    if ((t->kind == CFX_TYPE_STR || unopt->kind == CFX_TYPE_STR) && v.kind == CFX_V_STRING) {
        cfx_schema_print_string(v.u.s, v.len, b);
        return;
    }
    /* "int[2] stride=1" rather than [1, 1], as native_functions.yaml writes it (only for
     * int: "SymInt[2] x=1" prints [1, 1]) */
    int elem = t->kind == CFX_TYPE_LIST ? t->elems[0]->kind : -1;
    if (elem == CFX_TYPE_INT && v.kind == CFX_V_LIST && v.len > 1) {
        bool same = true;
        for (uint32_t i = 1; i < v.len && same; i++)
            same = v.u.items[i].u.i == v.u.items[0].u.i;
        if (same) {
            print_ivalue(v.u.items[0], b);
            return;
        }
    }
    print_ivalue(v, b);
}

static void print_argument(const cfx_argument *a, cfx_buf *b)
{
    print_arg_type(a->type, a->size_hint, b);
    if (a->name && a->name[0]) {
        cfx_buf_putc(b, ' ');
        cfx_buf_puts(b, a->name);
    }
    if (a->has_default) {
        cfx_buf_putc(b, '=');
        print_default(a, b);
    }
}

/* ------------------------------------------------------------------ schemas */

void cfx_schema_print_name(const cfx_schema *s, cfx_buf *b)
{
    cfx_buf_puts(b, s->name);
    if (s->overload && s->overload[0]) {
        cfx_buf_putc(b, '.');
        cfx_buf_puts(b, s->overload);
    }
}

void cfx_schema_print(const cfx_schema *s, cfx_buf *b)
{
    cfx_schema_print_name(s, b);
    cfx_buf_putc(b, '(');
    bool seen_kwarg_only = false;
    for (uint16_t i = 0; i < s->n_args; i++) {
        if (i > 0)
            cfx_buf_puts(b, ", ");
        if (s->args[i].kwarg_only && !seen_kwarg_only) {
            cfx_buf_puts(b, "*, ");
            seen_kwarg_only = true;
        }
        print_argument(&s->args[i], b);
    }
    if (s->is_vararg) {
        if (s->n_args > 0)
            cfx_buf_puts(b, ", ");
        cfx_buf_puts(b, "...");
    }
    cfx_buf_puts(b, ") -> ");

    /* one return goes bare unless it starts with "(" (a tuple type), which the parser
     * would read as a return list */
    if (s->n_returns == 1 && !s->is_varret) {
        cfx_buf r;
        cfx_buf_init(&r);
        print_argument(&s->returns[0], &r);
        if (r.oom)
            b->oom = true;
        bool paren = r.len > 0 && r.data[0] == '(';
        if (paren)
            cfx_buf_putc(b, '(');
        cfx_buf_putn(b, r.data, r.len);
        if (paren)
            cfx_buf_putc(b, ')');
        cfx_buf_free(&r);
        return;
    }
    bool need_paren = !(s->n_returns == 0 && s->is_varret);
    if (need_paren)
        cfx_buf_putc(b, '(');
    for (uint16_t i = 0; i < s->n_returns; i++) {
        if (i > 0)
            cfx_buf_puts(b, ", ");
        print_argument(&s->returns[i], b);
    }
    if (s->is_varret) {
        if (s->n_returns > 0)
            cfx_buf_puts(b, ", ");
        cfx_buf_puts(b, "...");
    }
    if (need_paren)
        cfx_buf_putc(b, ')');
}

char *cfx_schema_to_string(const cfx_schema *s)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_schema_print(s, &b);
    return cfx_buf_take(&b);
}

/* ------------------------------------------------------------------ queries */

bool cfx_argument_is_write(const cfx_argument *a)
{
    return a && a->type && a->type->alias && a->type->alias->is_write;
}

int cfx_schema_find_arg(const cfx_schema *s, const char *name)
{
    if (!s || !name)
        return -1;
    for (uint16_t i = 0; i < s->n_args; i++)
        if (strcmp(s->args[i].name, name) == 0)
            return i;
    return -1;
}
