/* schema_default.c - default values in schemas, read as PyTorch 1.13 reads them.
 *
 * parseDefaultValue and its helpers from function_schema_parser.cpp, with the c10 pieces
 * they call: parseStringLiteral's escapes, c10::Device's string parser, and std::stod /
 * std::stoll, whose only error text is their own name. What is read follows c10::IValue:
 * enum-like names are ints ("long" is 4, "contiguous_format" 0), a number is a float when
 * the type is float or the text has '.' or 'e' (not 'E'), a complex literal "1.5j" is a
 * CFX_V_TUPLE of two doubles (real, imag) - a default is never a tuple otherwise - and a
 * Device default is a CFX_V_DEVICE for cpu and meta, else the device's printed text as a
 * CFX_V_STRING. List items are not converted: "float[] x=[True]" fails the way
 * IValue::toDouble() fails, with its INTERNAL ASSERT text. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

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
    case CFX_TYPE_CONST_QUANTIZER_PTR:
        return CFX_TYPE_INT;
    case CFX_TYPE_DIMNAME:
        return CFX_TYPE_STR;
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
    size_t n = schema_text_len(&p->L, range);
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

static const char *const device_names[] = {
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
    "fpga", "ort", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "privateuseone",
};

static void device_error(schema_parser *p, const char *fmt, const cfx_value *str, const char *idx)
{
    cfx_buf b;
    cfx_buf_init(&b);
    if (idx)
        cfx_buf_printf(&b, fmt, idx, (int)str->len, str->u.s);
    else
        cfx_buf_printf(&b, fmt, (int)str->len, str->u.s);
    char *msg = cfx_buf_take(&b);
    if (msg)
        schema_error_plain(&p->L, msg);
    else
        schema_error_nomem(&p->L);
    free(msg);
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
                     "fpga, ort, xla, lazy, vulkan, mps, meta, hpu, privateuseone device type at "
                     "start of device string: %.*s",
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

static cfx_value parse_single_constant(schema_parser *p, int kind)
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
        schema_token at = schema_cur(L); /* PyTorch points past the name */
        schema_error_report(L, at.start, at.end, "invalid numeric default value");
        return cfx_none();
    }
    default: {
        bool neg = schema_next_if(L, '-');
        schema_token num = schema_expect(L, SK_NUMBER);
        if (schema_failed(L))
            return cfx_none();
        size_t n = schema_text_len(L, num) + (neg ? 1 : 0);
        char *text = schema_alloc(p, n + 1);
        if (!text)
            return cfx_none();
        snprintf(text, n + 1, "%s%.*s", neg ? "-" : "", (int)schema_text_len(L, num), schema_text(L, num));
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
    const char *assert_text = NULL;
    for (size_t i = 0; i < n && !assert_text; i++) {
        cfx_value v = items[i];
        switch (kind) {
        case CFX_TYPE_COMPLEX:
            if (!is_complex_value(v)) {
                cfx_buf b;
                cfx_buf_init(&b);
                cfx_buf_printf(&b, "isComplexDouble() INTERNAL ASSERT FAILED at "
                                   "\"./aten/src/ATen/core/ivalue_inl.h\":146, please report a bug to "
                                   "PyTorch. Expected ComplexDouble but got %s", tag_name(v));
                char *msg = cfx_buf_take(&b);
                if (msg)
                    schema_error_plain(&p->L, msg);
                else
                    schema_error_nomem(&p->L);
                free(msg);
                return cfx_none();
            }
            break;
        case CFX_TYPE_FLOAT:
            if (v.kind != CFX_V_DOUBLE)
                assert_text = "isDouble() INTERNAL ASSERT FAILED at \"./aten/src/ATen/core/ivalue.h\":523, "
                              "please report a bug to PyTorch. ";
            break;
        case CFX_TYPE_INT:
            if (v.kind != CFX_V_INT)
                assert_text = "isInt() INTERNAL ASSERT FAILED at \"./aten/src/ATen/core/ivalue.h\":602, "
                              "please report a bug to PyTorch. ";
            break;
        case CFX_TYPE_BOOL:
            if (v.kind != CFX_V_BOOL)
                assert_text = "isBool() INTERNAL ASSERT FAILED at \"./aten/src/ATen/core/ivalue.h\":621, "
                              "please report a bug to PyTorch. ";
            break;
        default:
            break;
        }
    }
    if (assert_text) {
        schema_error_plain(&p->L, assert_text);
        return cfx_none();
    }
    if (kind != CFX_TYPE_COMPLEX && kind != CFX_TYPE_FLOAT && kind != CFX_TYPE_INT && kind != CFX_TYPE_BOOL) {
        schema_error_report(&p->L, range.start, range.end, "lists are only supported for float, int and complex types");
        return cfx_none();
    }
    return cfx_list(items, (uint32_t)n);
}

static cfx_value parse_constant_list(schema_parser *p, int kind)
{
    schema_lexer *L = &p->L;
    schema_token open = schema_expect(L, '[');
    cfx_value *items = NULL;
    size_t n = 0, cap = 0;
    if (schema_cur(L).kind != ']') {
        do {
            cfx_value v = parse_single_constant(p, kind);
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
        return parse_single_constant(p, kind);
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
        int elem = fake_kind(type->elems[0]->kind);
        if (schema_cur(L).kind == SK_IDENT) {
            schema_expect(L, SK_NONE); /* fails: a list default cannot be a name */
            return cfx_none();
        }
        if (has_hint && schema_cur(L).kind != '[') {
            /* "int[2] k=3" is [3, 3] */
            cfx_value v = parse_single_constant(p, elem);
            if (schema_failed(L))
                return cfx_none();
            if (n_hint < 0) {
                schema_error_plain(L, "cannot create std::vector larger than max_size()");
                return cfx_none();
            }
            cfx_value *items = n_hint ? schema_alloc(p, (size_t)n_hint * sizeof *items) : NULL;
            if (n_hint && !items)
                return cfx_none();
            for (int32_t i = 0; i < n_hint; i++)
                items[i] = v;
            return convert_to_list(p, elem, range, items, (size_t)n_hint);
        }
        return parse_constant_list(p, elem);
    }
    default:
        schema_error_report(L, range.start, range.end, "unexpected type, file a bug report");
        return cfx_none();
    }
}

