/* value.h - cfx_value, the one boxed value type.
 *
 * A cfx_value is what PyTorch calls an IValue: it travels on boxed dispatcher stacks, as a
 * graph node's args/kwargs, and through JSON. It is a 16-byte tagged union and does NOT own
 * what it points to: strings, list items, tensors and nodes are owned by whoever built the
 * value (a wrapper's stack frame, a graph arena, a schema). Lists and tuples are distinct
 * kinds so that a round trip never turns one into the other.
 *
 * Scalars travel as values too: a schema `Scalar` is a cfx_value of kind INT, DOUBLE or BOOL,
 * and any optional non-tensor argument (`int?`, `ScalarType?`, ...) is a cfx_value that may be
 * NONE. */
#ifndef CFX_VALUE_H
#define CFX_VALUE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dispatch/export.h"
#include "dispatch/dtype.h"
#include "dispatch/alloc.h"

typedef struct cfx_tensor cfx_tensor;
typedef struct cfx_object cfx_object; /* script (torchbind) object; defined by hop/ */
typedef struct cfx_generator cfx_generator; /* torch.Generator; dispatch/generator.h */
struct cfx_node;                      /* graph node; defined by ir/ */

typedef enum cfx_value_kind {
    CFX_V_NONE = 0,
    CFX_V_BOOL,
    CFX_V_INT,
    CFX_V_DOUBLE,
    CFX_V_STRING,
    CFX_V_TENSOR,
    CFX_V_LIST,
    CFX_V_TUPLE,
    CFX_V_DTYPE,
    CFX_V_DEVICE,
    CFX_V_MEMORY_FORMAT,
    CFX_V_LAYOUT,
    CFX_V_OBJECT,
    CFX_V_NODE,
    CFX_V_OP, /* an operator overload as a value (with_effects' op argument) */
    CFX_V_DICT, /* str keys -> values (FX's dict arguments): see cfx_dict */
    CFX_V_HOP, /* a higher-order operator as a value (with_effects' op argument): u.s its name */
    CFX_V_TOKEN, /* an effect token (dispatch/effects.h): u.t the token's tensor, float32 [0] */
    CFX_V_GENERATOR, /* a random number generator (dispatch/generator.h): u.gen, never NULL */
    CFX_V_KIND_COUNT
} cfx_value_kind;

typedef struct cfx_value {
    uint32_t kind; /* cfx_value_kind */
    uint32_t len;  /* LIST/TUPLE: item count; DICT: 2 x entries; STRING: byte length */
    union {
        bool b;
        int64_t i;
        double d;
        const char *s;                /* NUL-terminated, len bytes */
        cfx_tensor *t;                /* may be NULL only inside an optional/None context */
        const struct cfx_value *items; /* LIST/TUPLE; DICT: key, value, key, value, ... */
        cfx_dtype dtype;
        cfx_device device;
        int64_t memory_format;        /* cfx_memory_format */
        int64_t layout;
        cfx_object *obj;
        struct cfx_node *node;
        const struct cfx_op *op;
        cfx_generator *gen;
    } u;
} cfx_value;

_Static_assert(sizeof(cfx_value) == 16, "cfx_value must stay 16 bytes");

/* Constructors (no allocation). */
static inline cfx_value cfx_none(void) { cfx_value v = {CFX_V_NONE, 0, {.i = 0}}; return v; }
static inline cfx_value cfx_bool(bool b) { cfx_value v = {CFX_V_BOOL, 0, {.b = b}}; return v; }
static inline cfx_value cfx_int(int64_t i) { cfx_value v = {CFX_V_INT, 0, {.i = i}}; return v; }
static inline cfx_value cfx_double(double d) { cfx_value v = {CFX_V_DOUBLE, 0, {.d = d}}; return v; }
CFX_API cfx_value cfx_string(const char *s); /* len = strlen(s) */
static inline cfx_value cfx_tensor_value(cfx_tensor *t) { cfx_value v = {CFX_V_TENSOR, 0, {.t = t}}; return v; }
static inline cfx_value cfx_list(const cfx_value *items, uint32_t n) { cfx_value v = {CFX_V_LIST, n, {.items = items}}; return v; }
static inline cfx_value cfx_tuple(const cfx_value *items, uint32_t n) { cfx_value v = {CFX_V_TUPLE, n, {.items = items}}; return v; }
static inline cfx_value cfx_dtype_value(cfx_dtype t) { cfx_value v = {CFX_V_DTYPE, 0, {.dtype = t}}; return v; }
static inline cfx_value cfx_device_value(cfx_device d) { cfx_value v = {CFX_V_DEVICE, 0, {.device = d}}; return v; }
static inline cfx_value cfx_memory_format_value(cfx_memory_format m) { cfx_value v = {CFX_V_MEMORY_FORMAT, 0, {.memory_format = m}}; return v; }
static inline cfx_value cfx_layout_value(int64_t l) { cfx_value v = {CFX_V_LAYOUT, 0, {.layout = l}}; return v; }
static inline cfx_value cfx_object_value(cfx_object *o) { cfx_value v = {CFX_V_OBJECT, 0, {.obj = o}}; return v; }
static inline cfx_value cfx_node_value(struct cfx_node *n) { cfx_value v = {CFX_V_NODE, 0, {.node = n}}; return v; }
/* A dict of n entries: kv holds 2n values, each entry a key (a STRING value) then its value,
 * in insertion order (a Python dict's). len is 2n, so code that walks nested containers
 * item by item sees a dict's keys and values like a tuple's items. */
static inline cfx_value cfx_dict(const cfx_value *kv, uint32_t n) { cfx_value v = {CFX_V_DICT, 2 * n, {.items = kv}}; return v; }
static inline cfx_value cfx_op_value(const struct cfx_op *o) { cfx_value v = {CFX_V_OP, 0, {.op = o}}; return v; }
/* An effect token: its own kind, so that graphs, passes and the interpreter tell it from data,
 * carried by a tensor as 2.13's token is (`torch.tensor([])`), so that tracers and
 * functionalization track it by that tensor as they track any. */
static inline cfx_value cfx_token_value(cfx_tensor *t) { cfx_value v = {CFX_V_TOKEN, 0, {.t = t}}; return v; }
/* A Generator argument (`Generator? generator`): a torch.Generator passed to a random op. Like
 * every value it does not own the generator; a graph module that interns one as `_opaque_obj0`
 * holds a reference (cfx_generator_retain). */
static inline cfx_value cfx_generator_value(cfx_generator *g) { cfx_value v = {CFX_V_GENERATOR, 0, {.gen = g}}; return v; }
/* The tensor of a TENSOR or TOKEN value (NULL for any other kind): what code that maps, tracks
 * or retains tensors through values follows, keeping the value's kind. */
static inline cfx_tensor *cfx_value_tensor_or_token(cfx_value v)
{
    return v.kind == CFX_V_TENSOR || v.kind == CFX_V_TOKEN ? v.u.t : NULL;
}

static inline bool cfx_value_is_none(cfx_value v) { return v.kind == CFX_V_NONE; }
/* LIST, TUPLE or DICT: a value whose items (u.items[0..len)) are values. */
static inline bool cfx_value_is_container(cfx_value v) { return v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE || v.kind == CFX_V_DICT; }
/* The value of key in a dict, or NULL (not a dict, or no such key). */
CFX_API const cfx_value *cfx_dict_get(cfx_value dict, const char *key);
/* INT, DOUBLE or BOOL: what a schema `Scalar` accepts. */
static inline bool cfx_value_is_number(cfx_value v) { return v.kind == CFX_V_INT || v.kind == CFX_V_DOUBLE || v.kind == CFX_V_BOOL; }
/* Numeric value of a number as double (bool -> 0/1). */
CFX_API double cfx_value_to_double(cfx_value v);

CFX_API const char *cfx_value_kind_name(cfx_value_kind k); /* "int", "list", ... */

/* Deep structural equality. Tensors compare by identity, nodes by identity, doubles by bit
 * pattern except that +0.0 == -0.0 is false and NaN == NaN is true (so that a value equals
 * its own JSON round trip). A list never equals a tuple; int 1 never equals double 1.0; dicts
 * are equal when their entries are, in the same order (a graph's dict keeps its order). */
CFX_API bool cfx_value_equal(cfx_value a, cfx_value b);

/* Printing styles. */
typedef enum cfx_value_style {
    CFX_STYLE_FX,     /* as torch.fx format_node prints args: strings unquoted, %node */
    CFX_STYLE_PYTHON, /* as python_code emits values: repr() of strings, bare node names */
    CFX_STYLE_SCHEMA, /* as FunctionSchema prints defaults: 1., "str", [1, 2], True */
} cfx_value_style;

/* Appends the printed value to a growable buffer. */
typedef struct cfx_buf {
    char *data;
    size_t len, cap;
    bool oom; /* set once an allocation failed; further appends are ignored */
} cfx_buf;

CFX_API void cfx_buf_init(cfx_buf *b);
CFX_API void cfx_buf_free(cfx_buf *b);
CFX_API void cfx_buf_putc(cfx_buf *b, char c);
CFX_API void cfx_buf_puts(cfx_buf *b, const char *s);
CFX_API void cfx_buf_putn(cfx_buf *b, const char *s, size_t n);
CFX_API void cfx_buf_printf(cfx_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
CFX_API void cfx_buf_vprintf(cfx_buf *b, const char *fmt, va_list ap);
/* Returns the NUL-terminated string (never NULL unless oom); ownership moves to the caller. */
CFX_API char *cfx_buf_take(cfx_buf *b);

/* Python's repr() of a float: shortest round-trip digits, "1.0", "inf", "nan", "1e-05". */
CFX_API void cfx_format_double_python(double d, cfx_buf *b);
/* c10's schema float printing: "1.", "0.5", "1.0000000000000001e-05" (%.17g-ish, see schema.c). */
CFX_API void cfx_format_double_schema(double d, cfx_buf *b);

CFX_API void cfx_value_print(cfx_value v, cfx_value_style style, cfx_buf *b);
/* Convenience: malloc'd string of cfx_value_print. */
CFX_API char *cfx_value_to_string(cfx_value v, cfx_value_style style);

#endif
