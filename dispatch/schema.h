/* schema.h - PyTorch function schemas: data model, parser and printer.
 *
 * The grammar is PyTorch's (torch/csrc/jit/frontend/function_schema_parser.cpp and
 * schema_type_parser.cpp); printing is c10::FunctionSchema's operator<<, so that
 * print(parse(s)) equals what torch._C.parse_schema(s) prints in PyTorch 2.13 for every
 * registered schema. Parse errors carry PyTorch's text with the "~~~ <--- HERE" marker.
 *
 * A parsed schema is one allocation block owned by the cfx_schema; everything it points to
 * (names, types, defaults) lives inside it and dies with cfx_schema_free. */
#ifndef CFX_SCHEMA_H
#define CFX_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/value.h"

typedef enum cfx_type_kind {
    /* base types */
    CFX_TYPE_TENSOR,
    CFX_TYPE_INT,
    CFX_TYPE_SYMINT,
    CFX_TYPE_SYMBOOL,
    CFX_TYPE_FLOAT,
    CFX_TYPE_COMPLEX,
    CFX_TYPE_BOOL,
    CFX_TYPE_STR,
    CFX_TYPE_SCALAR,       /* "Scalar" (NumberType) */
    CFX_TYPE_SCALAR_TYPE,  /* "ScalarType" (int underneath, keeps its name) */
    CFX_TYPE_LAYOUT,
    CFX_TYPE_MEMORY_FORMAT,
    CFX_TYPE_DEVICE,
    CFX_TYPE_GENERATOR,
    CFX_TYPE_STORAGE,
    CFX_TYPE_STREAM,
    CFX_TYPE_QSCHEME,
    CFX_TYPE_QUANTIZER,
    CFX_TYPE_CONST_QUANTIZER_PTR,
    CFX_TYPE_CAPSULE,
    CFX_TYPE_PYOBJECT,     /* a registered opaque type (cfx_schema_register_opaque_type) */
    CFX_TYPE_NONE,
    CFX_TYPE_ANY,
    CFX_TYPE_ANY_CLASS,
    CFX_TYPE_ANY_ENUM,
    CFX_TYPE_VAR,          /* type variable: name in `name` ("t", "my.T") */
    CFX_TYPE_CLASS,        /* "__torch__.torch.classes.ns.Cls": name in `name` */
    /* compound types */
    CFX_TYPE_LIST,         /* elem[0]; size hint in the argument, not here */
    CFX_TYPE_OPTIONAL,     /* elem[0]: the contained type (a UNION for "Union(int, str)?") */
    CFX_TYPE_TUPLE,        /* elem[0..n_elems) */
    CFX_TYPE_DICT,         /* elem[0] key, elem[1] value */
    CFX_TYPE_FUTURE,       /* elem[0] */
    CFX_TYPE_AWAIT,        /* elem[0] */
    CFX_TYPE_RREF,         /* elem[0] */
    CFX_TYPE_UNION,        /* elem[0..n_elems): flattened, deduplicated, sorted as c10 does */
    CFX_TYPE_KIND_COUNT
} cfx_type_kind;

/* An alias annotation: "(a|b! -> a|*)". Sets are arrays of names; "*" is the wildcard. */
typedef struct cfx_alias_info {
    const char **before;
    const char **after;
    uint16_t n_before, n_after;
    bool is_write;
    const struct cfx_alias_info *contained; /* element alias of a list type ("Tensor(a)[]") */
} cfx_alias_info;

typedef struct cfx_type {
    uint16_t kind;                  /* cfx_type_kind */
    uint16_t n_elems;
    const struct cfx_type **elems;  /* compound element types */
    const char *name;               /* VAR / CLASS */
    const cfx_alias_info *alias;    /* alias annotation attached to this type, or NULL */
    /* Only an argument's (or return's) top-level type carries an alias: PyTorch keeps one
     * AliasInfo per Argument, with a list element's alias as `contained`, and drops aliases
     * written inside tuples, Dicts, Futures, Awaits, RRefs and Unions. Types nested in those
     * are PyTorch's "fake" types: SymInt/ScalarType/Layout/MemoryFormat there are INT.
     * Optional and Union types are built as c10 builds them: "int??" is int?, "Union(int,
     * None)" is int?, "Scalar??" is an optional of Union(float, complex, int). Type nodes may
     * be shared inside one schema; treat them as immutable. */
} cfx_type;

typedef struct cfx_argument {
    const char *name;       /* may be "" for unnamed returns */
    const cfx_type *type;
    int32_t size_hint;      /* N of "int[N]", else -1 */
    bool kwarg_only;
    bool has_default;
    cfx_value default_value; /* lists/strings point into the schema block */
    /* Defaults hold what c10's IValue holds: enum-like names ("long", "contiguous_format")
     * are INT; a complex literal is a TUPLE of two DOUBLEs (real, imag); a Device default is
     * a DEVICE for cpu/meta, else its printed text as a STRING ("cuda:1"). */
} cfx_argument;

typedef struct cfx_schema {
    const char *name;        /* "aten::add" (namespace may be absent: "foo") */
    const char *overload;    /* "Tensor", or "" */
    cfx_argument *args;
    cfx_argument *returns;
    uint16_t n_args, n_returns;
    bool is_vararg;          /* "..." in the arguments */
    bool is_varret;          /* "..." as the returns */
    /* Derived at parse time, used on the dispatch path: */
    uint64_t tensor_arg_mask; /* bit i: argument i is Tensor, Tensor?, Tensor[] or Tensor?[] */
    bool is_mutable;          /* some argument has a written alias ("Tensor(a!)") */
} cfx_schema;

/* Parses a full schema ("ns::name.overload(args) -> rets") as torch._C.parse_schema does.
 * On error returns NULL and, if err is non-NULL, stores a malloc'd message in PyTorch's
 * format:
 *   "<message>:\n<schema text>\n<spaces>~~~ <--- HERE\n"
 * (cfx_error is NOT set: the caller decides whether a parse error is a user error). */
CFX_API cfx_schema *cfx_schema_parse(const char *text, char **err);

/* Parse options. NO_TYPEVARS is how operator definitions parse (torch::schema, which
 * torch.library's define uses): a lowercase name that is no type is an error instead of a
 * type variable, except in schemas whose text starts with "aten::" or "prim::". */
enum { CFX_SCHEMA_NO_TYPEVARS = 1u << 0 };
CFX_API cfx_schema *cfx_schema_parse_ex(const char *text, unsigned flags, char **err);
CFX_API void cfx_schema_free(cfx_schema *s);
/* Whether v equals a's schema default as c10's IValue == sees it (what the Python binding
 * uses to leave an argument out): the int 1 is not 1.0 or True, an enum-like default (dtype,
 * layout, memory format) equals its int code, a NULL tensor is None. false without a default. */
CFX_API bool cfx_argument_is_default(const cfx_argument *a, cfx_value v);
/* A deep copy with a new name (used when a library fills in its namespace). `name` replaces
 * the operator name ("myns::op"); the overload name is kept. */
CFX_API cfx_schema *cfx_schema_with_name(const cfx_schema *s, const char *name);

/* Opaque types (torch._C._register_opaque_type): a registered name, dotted or not ("my.Obj"),
 * parses as the type PyTorch prints "PyObject". The registry is process-wide and
 * thread-safe; registering a name twice is harmless. Returns 0, or -1 if out of memory or
 * the name is NULL or empty. cfx starts with no names registered (PyTorch's own, such as
 * "enum.Enum", are Python classes). */
CFX_API int cfx_schema_register_opaque_type(const char *name);
CFX_API void cfx_schema_unregister_opaque_type(const char *name);
CFX_API bool cfx_schema_is_opaque_type(const char *name);

/* c10's operator<< text. */
CFX_API void cfx_schema_print(const cfx_schema *s, cfx_buf *b);
CFX_API char *cfx_schema_to_string(const cfx_schema *s); /* malloc'd */
/* Just a type, as c10 prints it inside a schema ("Tensor(a!)", "int[]?", "Tensor?[]"). */
CFX_API void cfx_type_print(const cfx_type *t, cfx_buf *b);
/* A string as c10 quotes it in schemas (printQuotedString): "a\\"b", octal escapes. */
CFX_API void cfx_schema_print_string(const char *s, size_t n, cfx_buf *b);
/* "aten::add.Tensor" */
CFX_API void cfx_schema_print_name(const cfx_schema *s, cfx_buf *b);

/* Queries. */
CFX_API bool cfx_type_is_tensor_like(const cfx_type *t); /* Tensor, Tensor?, Tensor[], Tensor?[] */
/* True if an argument is written by the op (alias set with "!"). */
CFX_API bool cfx_argument_is_write(const cfx_argument *a);
/* Index of the argument with this name, or -1. */
CFX_API int cfx_schema_find_arg(const cfx_schema *s, const char *name);

#endif
