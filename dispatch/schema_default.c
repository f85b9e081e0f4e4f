/* schema_default.c - default values in schemas, read as PyTorch 2.13 reads them.
 *
 * parseDefaultValue and its helpers from function_schema_parser.cpp, with the c10 pieces
 * they call: parseStringLiteral's escapes, c10::Device's string parser, and std::stod /
 * std::stoll, whose only error text is their own name. What is read follows c10::IValue:
 * enum-like names are ints ("long" is 4, "contiguous_format" 0, and for a ScalarType any
 * dtype name: "float32" is 6), a number is a float when
 * the type is float or the text has '.' or 'e' (not 'E'), a complex literal "1.5j" is a
 * CFX_V_TUPLE of two doubles (real, imag) - a default is never a tuple otherwise - and a
 * Device default is a CFX_V_DEVICE for cpu and meta, else the device's printed text as a
 * CFX_V_STRING. List items are not converted: "float[] x=[True]" fails the way
 * IValue::toDouble() fails, with its INTERNAL ASSERT text. A default for a type PyTorch has
 * no rule for (SymBool, Union, Await, PyObject, ...) is its "unexpected type" error. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

/* The longest list a single default is repeated into ("int[N] x=1"). */
enum { MAX_REPEAT = 1 << 20 };

/* ------------------------------------------------------------------ numbers */

/* std::stod / std::stoll: a prefix is enough; no digits is invalid_argument, ERANGE is
 * out_of_range; both say only the function's name. */
double schema_stod(schema_parser *p, const char *s, size_t n)
{
    char *z = schema_slice(p, s, n), *end;
    errno = 0;
    double d = strtod(z, &end);
    if (end == z || errno == ERANGE)
        schema_error_plain(&p->L, "stod");
    return d;
}

long long schema_stoll(schema_parser *p, const char *s, size_t n)
{
    char *z = schema_slice(p, s, n), *end;
    errno = 0;
    long long v = strtoll(z, &end, 10);
    if (end == z || errno == ERANGE)
        schema_error_plain(&p->L, "stoll");
    return v;
}

/* ------------------------------------------------------------------ default values */

/* The type PyTorch parses a default against ("fake" type): these are ints underneath. */
static int fake_kind(int kind)
{
    switch (kind) {
    case CFX_TYPE_SYMINT:
    case CFX_TYPE_SCALAR_TYPE:
    case CFX_TYPE_LAYOUT:
    case CFX_TYPE_MEMORY_FORMAT:
        return CFX_TYPE_INT;
    default:
        return kind;
    }
}

static bool is_complex_value(cfx_value v)
{
    return v.kind == CFX_V_TUPLE && v.len == 2 && v.u.items[0].kind == CFX_V_DOUBLE &&
           v.u.items[1].kind == CFX_V_DOUBLE;
}

/* torch/csrc/jit/frontend/parse_string_literal.h */
static cfx_value parse_string_literal(schema_parser *p, schema_token range)
{
    const char *s = schema_text(&p->L, range);
    size_t n = schema_text_len(range);
    size_t quote_len = n >= 3 && s[1] == s[0] && s[2] == s[0] ? 3 : 1;
    if (n < 2 * quote_len)
        return (cfx_value){CFX_V_STRING, 0, {.s = ""}};
    const char *in = s + quote_len;
    size_t len = n - 2 * quote_len;
    char *out = schema_alloc(p, len + 1);
    if (!out)
        return (cfx_value){CFX_V_STRING, 0, {.s = ""}};
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (in[i] != '\\') {
            out[o++] = in[i++];
            continue;
        }
        char e = i + 1 < len ? in[i + 1] : '\0', c = e;
        size_t skip = 2;
        switch (e) {
        case '\\':
        case '\'':
        case '"':
        case '\n':
            break;
        case 'a': c = '\a'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'v': c = '\v'; break;
        case 't': c = '\t'; break;
        case 'x':
            schema_error_report(&p->L, range.start, range.end, "unsupported hex specifier");
            return cfx_none();
        case 'u':
        case 'U':
            schema_error_report(&p->L, range.start, range.end, "unsupported unicode specifier");
            return cfx_none();
        default: {
            /* \ooo, three octal digits below 256 */
            unsigned v = 0;
            bool ok = i + 3 < len;
            for (size_t k = 1; ok && k <= 3; k++) {
                char d = in[i + k];
                ok = d >= '0' && d <= '7';
                v = v * 8 + (unsigned)(d - '0');
            }
            if (!ok || v >= 256) {
                schema_error_report(&p->L, range.start, range.end, " ill formed octal specifier");
                return cfx_none();
            }
            c = (char)v;
            skip = 4;
        }
        }
        out[o++] = c;
        i += skip;
    }
    out[o] = '\0';
    return (cfx_value){CFX_V_STRING, (uint32_t)o, {.s = out}};
}

/* c10::DeviceType names in parse order (2.13); the error message lists them all. */
static const char *const device_names[] = {
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
    "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
};

static void device_error(schema_parser *p, const char *fmt, const cfx_value *str, const char *idx)
{
    cfx_buf b;
    cfx_buf_init(&b);
    if (idx)
        cfx_buf_printf(&b, fmt, idx, (int)str->len, str->u.s);
    else
        cfx_buf_printf(&b, fmt, (int)str->len, str->u.s);
    schema_error_buf(p, &b);
}

/* c10::Device(const std::string&): ([a-zA-Z_]+)(?::([1-9]\d*|0))?, index as DeviceIndex
 * (int8_t, so "cuda:300" is cuda:44). */
static cfx_value parse_device(schema_parser *p, cfx_value str)
{
    const char *s = str.u.s;
    size_t n = str.len;
    if (n == 0) {
        schema_error_plain(&p->L, "Device string must not be empty");
        return cfx_none();
    }
    enum { START, INDEX_START, INDEX_REST, ERROR } state = START;
    size_t name_len = 0, idx_start = 0, idx_len = 0;
    for (size_t i = 0; state != ERROR && i < n; i++) {
        char ch = s[i];
        switch (state) {
        case START:
            if (ch == ':')
                state = INDEX_START;
            else if (isalpha((unsigned char)ch) || ch == '_')
                name_len++;
            else
                state = ERROR;
            break;
        case INDEX_START:
            if (isdigit((unsigned char)ch)) {
                idx_start = i;
                idx_len = 1;
                state = INDEX_REST;
            } else {
                state = ERROR;
            }
            break;
        case INDEX_REST:
            if (s[idx_start] == '0' || !isdigit((unsigned char)ch))
                state = ERROR;
            else
                idx_len++;
            break;
        case ERROR:
            break;
        }
    }
    if (name_len == 0 || state == ERROR || (state == INDEX_START && idx_len == 0)) {
        device_error(p, "Invalid device string: '%.*s'", &str, NULL);
        return cfx_none();
    }
    int index = -1;
    if (idx_len > 0) {
        char digits[32];
        long v = LONG_MAX;
        if (idx_len < sizeof digits) {
            memcpy(digits, s + idx_start, idx_len);
            digits[idx_len] = '\0';
            errno = 0;
            v = strtol(digits, NULL, 10);
            if (errno == ERANGE)
                v = LONG_MAX;
        }
        if (v > INT_MAX) {
            char *d = schema_slice(p, s + idx_start, idx_len);
            device_error(p, "Could not parse device index '%s' in device string '%.*s'", &str, d);
            return cfx_none();
        }
        index = (int8_t)v;
    }
    size_t type = 0;
    while (type < sizeof device_names / sizeof device_names[0] &&
           !(strlen(device_names[type]) == name_len && memcmp(device_names[type], s, name_len) == 0))
        type++;
    if (type == sizeof device_names / sizeof device_names[0]) {
        cfx_value name = {CFX_V_STRING, (uint32_t)name_len, {.s = s}}; /* the message names the type only */
        device_error(p,
                     "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, "
                     "fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type "
                     "at start of device string: %.*s",
                     &name, NULL);
        return cfx_none();
    }
    if (type == 0 || strcmp(device_names[type], "meta") == 0) {
        cfx_device d = {(int8_t)(type == 0 ? CFX_DEVICE_CPU : CFX_DEVICE_META), (int8_t)index};
        return (cfx_value){CFX_V_DEVICE, 0, {.device = d}};
    }
    char text[48];
    if (index == -1)
        snprintf(text, sizeof text, "%s", device_names[type]);
    else
        snprintf(text, sizeof text, "%s:%d", device_names[type], index);
    return (cfx_value){CFX_V_STRING, (uint32_t)strlen(text), {.s = schema_slice(p, text, strlen(text))}};
}

/* c10::getStringToDtypeMap: each ScalarType's names (getDtypeNames) and its number. */
static const struct {
    const char *name;
    int8_t value;
} dtype_names[] = {
    {"uint8", 0},       {"int8", 1},           {"int16", 2},           {"short", 2},
    {"int", 3},         {"int32", 3},          {"int64", 4},           {"long", 4},
    {"float16", 5},     {"half", 5},           {"float", 6},           {"float32", 6},
    {"double", 7},      {"float64", 7},        {"chalf", 8},           {"complex32", 8},
    {"cfloat", 9},      {"complex64", 9},      {"cdouble", 10},        {"complex128", 10},
    {"bool", 11},       {"qint8", 12},         {"quint8", 13},         {"qint32", 14},
    {"bfloat16", 15},   {"quint4x2", 16},      {"quint2x4", 17},       {"bits1x8", 18},
    {"bits2x4", 19},    {"bits4x2", 20},       {"bits8", 21},          {"bits16", 22},
    {"float8_e5m2", 23}, {"float8_e4m3fn", 24}, {"float8_e5m2fnuz", 25}, {"float8_e4m3fnuz", 26},
    {"uint16", 27},     {"uint32", 28},        {"uint64", 29},         {"bit", 30},
    {"uint1", 30},      {"uint2", 31},         {"uint3", 32},          {"uint4", 33},
    {"uint5", 34},      {"uint6", 35},         {"uint7", 36},          {"int1", 37},
    {"int2", 38},       {"int3", 39},          {"int4", 40},           {"int5", 41},
    {"int6", 42},       {"int7", 43},          {"float8_e8m0fnu", 44}, {"float4_e2m1fn_x2", 45},
};

/* isPossiblyOptionalScalarType */
static bool is_scalar_type(const cfx_type *real)
{
    if (real && real->kind == CFX_TYPE_OPTIONAL)
        real = real->elems[0];
    return real && real->kind == CFX_TYPE_SCALAR_TYPE;
}

/* parseSingleConstant: `kind` is the fake type's kind, `real` the real type (which decides
 * whether dtype names are allowed). */
static cfx_value parse_single_constant(schema_parser *p, int kind, const cfx_type *real)
{
    schema_lexer *L = &p->L;
    schema_token t = schema_cur(L);
    switch (t.kind) {
    case SK_TRUE:
        schema_next(L);
        return cfx_bool(true);
    case SK_FALSE:
        schema_next(L);
        return cfx_bool(false);
    case SK_NONE:
        schema_next(L);
        return cfx_none();
    case SK_STRINGLITERAL:
        schema_next(L);
        return parse_string_literal(p, t);
    case SK_IDENT: {
        static const struct {
            const char *name;
            int64_t value;
        } names[] = {
            {"float", 6}, {"complex", 9}, {"long", 4}, {"strided", 0}, {"Mean", 1}, {"contiguous_format", 0},
        };
        schema_next(L);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (schema_tok_is(L, t, names[i].name))
                return cfx_int(names[i].value);
        for (size_t i = 0; is_scalar_type(real) && i < sizeof dtype_names / sizeof dtype_names[0]; i++)
            if (schema_tok_is(L, t, dtype_names[i].name))
                return cfx_int(dtype_names[i].value);
        schema_token at = schema_cur(L); /* PyTorch points past the name */
        schema_error_report(L, at.start, at.end, "invalid numeric default value");
        return cfx_none();
    }
    default: {
        bool neg = schema_next_if(L, '-');
        schema_token num = schema_expect(L, SK_NUMBER);
        if (schema_failed(L))
            return cfx_none();
        size_t n = schema_text_len(num) + (neg ? 1 : 0);
        char *text = schema_alloc(p, n + 1);
        if (!text)
            return cfx_none();
        snprintf(text, n + 1, "%s%.*s", neg ? "-" : "", (int)schema_text_len(num), schema_text(L, num));
        if (kind == CFX_TYPE_COMPLEX || memchr(text, 'j', n)) {
            cfx_value *parts = schema_alloc(p, 2 * sizeof *parts);
            if (!parts)
                return cfx_none();
            parts[0] = cfx_double(0.0);
            parts[1] = cfx_double(schema_stod(p, text, n - 1));
            return cfx_tuple(parts, 2);
        }
        if (kind == CFX_TYPE_FLOAT || memchr(text, '.', n) || memchr(text, 'e', n))
            return cfx_double(schema_stod(p, text, n));
        return cfx_int(schema_stoll(p, text, n));
    }
    }
}

static const char *tag_name(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_NONE: return "None";
    case CFX_V_BOOL: return "Bool";
    case CFX_V_INT: return "Int";
    case CFX_V_DOUBLE: return "Double";
    case CFX_V_STRING: return "String";
    default: return is_complex_value(v) ? "ComplexDouble" : "Tuple";
    }
}

/* convertToList: every element must already be of the element kind (IValue::toInt() etc.
 * assert, they do not convert). */
static cfx_value convert_to_list(schema_parser *p, int kind, schema_token range, cfx_value *items, size_t n)
{
    const char *expected = NULL;
    for (size_t i = 0; i < n && !expected; i++) {
        cfx_value v = items[i];
        switch (kind) {
        case CFX_TYPE_COMPLEX:
            if (!is_complex_value(v)) {
                cfx_buf b;
                cfx_buf_init(&b);
                cfx_buf_printf(&b, "isComplexDouble() INTERNAL ASSERT FAILED at "
                                   "\"/__w/pytorch/pytorch/aten/src/ATen/core/ivalue_inl.h\":159, please report "
                                   "a bug to PyTorch. Expected ComplexDouble but got %s", tag_name(v));
                schema_error_buf(p, &b);
                return cfx_none();
            }
            break;
        case CFX_TYPE_FLOAT:
            if (v.kind != CFX_V_DOUBLE)
                expected = "544, please report a bug to PyTorch. expected double";
            break;
        case CFX_TYPE_INT:
            if (v.kind != CFX_V_INT)
                expected = "663, please report a bug to PyTorch. expected int";
            break;
        case CFX_TYPE_BOOL:
            if (v.kind != CFX_V_BOOL)
                expected = "710, please report a bug to PyTorch. expected bool";
            break;
        default:
            break;
        }
    }
    if (expected) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "0 INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/core/ivalue.h\":%s",
                       expected);
        schema_error_buf(p, &b);
        return cfx_none();
    }
    if (kind != CFX_TYPE_COMPLEX && kind != CFX_TYPE_FLOAT && kind != CFX_TYPE_INT && kind != CFX_TYPE_BOOL) {
        schema_error_report(&p->L, range.start, range.end, "lists are only supported for float, int and complex types");
        return cfx_none();
    }
    return cfx_list(items, (uint32_t)n);
}

static cfx_value parse_constant_list(schema_parser *p, int kind, const cfx_type *real)
{
    schema_lexer *L = &p->L;
    schema_token open = schema_expect(L, '[');
    cfx_value *items = NULL;
    size_t n = 0, cap = 0;
    if (schema_cur(L).kind != ']') {
        do {
            cfx_value v = parse_single_constant(p, kind, real);
            if (n == UINT32_MAX) {
                schema_error_plain(L, "std::bad_alloc");
                break;
            }
            if (schema_grow(p, &items, &cap, n, sizeof *items))
                items[n++] = v;
        } while (schema_next_if(L, ','));
    }
    schema_expect(L, ']');
    if (schema_failed(L))
        return cfx_none();
    return convert_to_list(p, kind, open, items, n);
}

cfx_value schema_parse_default(schema_parser *p, const cfx_type *type, int32_t n_hint, bool has_hint)
{
    schema_lexer *L = &p->L;
    schema_token range = schema_cur(L);
    int kind = fake_kind(type->kind);
    switch (kind) {
    case CFX_TYPE_TENSOR:
    case CFX_TYPE_GENERATOR:
    case CFX_TYPE_QUANTIZER:
        schema_expect(L, SK_NONE);
        return cfx_none();
    case CFX_TYPE_STR:
    case CFX_TYPE_OPTIONAL:
    case CFX_TYPE_SCALAR:
    case CFX_TYPE_INT:
    case CFX_TYPE_BOOL:
    case CFX_TYPE_FLOAT:
    case CFX_TYPE_COMPLEX:
        return parse_single_constant(p, kind, type);
    case CFX_TYPE_DEVICE: {
        schema_token s = schema_expect(L, SK_STRINGLITERAL);
        if (schema_failed(L))
            return cfx_none();
        cfx_value text = parse_string_literal(p, s);
        if (schema_failed(L))
            return cfx_none();
        return parse_device(p, text);
    }
    case CFX_TYPE_LIST: {
        const cfx_type *real_elem = type->elems[0];
        int elem = fake_kind(real_elem->kind);
        if (schema_cur(L).kind == SK_IDENT) {
            schema_expect(L, SK_NONE); /* fails: a list default cannot be a name */
            return cfx_none();
        }
        if (has_hint && schema_cur(L).kind != '[') {
            /* "int[2] k=3" is [3, 3] */
            cfx_value v = parse_single_constant(p, elem, real_elem);
            if (schema_failed(L))
                return cfx_none();
            if (n_hint < 0) {
                schema_error_plain(L, "cannot create std::vector larger than max_size()");
                return cfx_none();
            }
            if (n_hint > MAX_REPEAT) {
                /* PyTorch would build the list (gigabytes for "int[2000000000] x=1") */
                cfx_buf b;
                cfx_buf_init(&b);
                cfx_buf_printf(&b, "default value repeated %d times: cfx allows at most %d", (int)n_hint,
                               MAX_REPEAT);
                schema_error_buf(p, &b);
                return cfx_none();
            }
            cfx_value *items = n_hint ? schema_alloc(p, (size_t)n_hint * sizeof *items) : NULL;
            if (n_hint && !items)
                return cfx_none();
            for (int32_t i = 0; i < n_hint; i++)
                items[i] = v;
            return convert_to_list(p, elem, range, items, (size_t)n_hint);
        }
        return parse_constant_list(p, elem, real_elem);
    }
    default:
        schema_error_report(L, range.start, range.end, "unexpected type, file a bug report");
        return cfx_none();
    }
}


/* ------------------------------------------------------------------ equality with a default */

/* The integer an IValue holds for an int or an int-like enum, or false. */
static bool int_code(const cfx_value *v, int64_t *out)
{
    switch (v->kind) {
    case CFX_V_INT: *out = v->u.i; return true;
    case CFX_V_DTYPE: *out = (int64_t)v->u.dtype; return true;
    case CFX_V_LAYOUT: *out = v->u.layout; return true;
    case CFX_V_MEMORY_FORMAT: *out = v->u.memory_format; return true;
    default: return false;
    }
}

static bool is_none(const cfx_value *v) { return v->kind == CFX_V_NONE || (v->kind == CFX_V_TENSOR && !v->u.t); }

/* IValue equality of a non-list value with a default. */
static bool scalar_equal(const cfx_value *d, const cfx_value *v)
{
    int64_t a = 0, b = 0; /* set by int_code; zeroed for GCC -O1 -fsanitize=thread (maybe-uninitialized) */
    switch (d->kind) {
    case CFX_V_NONE: return is_none(v);
    case CFX_V_BOOL: return v->kind == CFX_V_BOOL && v->u.b == d->u.b;
    case CFX_V_DOUBLE: return v->kind == CFX_V_DOUBLE && v->u.d == d->u.d;
    case CFX_V_STRING: return v->kind == CFX_V_STRING && v->len == d->len && memcmp(v->u.s, d->u.s, d->len) == 0;
    case CFX_V_DEVICE: return v->kind == CFX_V_DEVICE && cfx_device_eq(v->u.device, d->u.device);
    default:
        return int_code(d, &a) && int_code(v, &b) && a == b;
    }
}

bool cfx_argument_is_default(const cfx_argument *a, cfx_value v)
{
    if (!a->has_default)
        return false;
    const cfx_value *d = &a->default_value;
    if (d->kind != CFX_V_LIST && d->kind != CFX_V_TUPLE)
        return scalar_equal(d, &v);
    /* default lists are flat ([], [1, 1], [0.5]) */
    if (v.kind != d->kind || v.len != d->len)
        return false;
    for (uint32_t i = 0; i < d->len; i++)
        if (d->u.items[i].kind == CFX_V_LIST || d->u.items[i].kind == CFX_V_TUPLE ||
            !scalar_equal(&d->u.items[i], &v.u.items[i]))
            return false;
    return true;
}
