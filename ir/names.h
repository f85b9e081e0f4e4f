/* names.h - FX's name space: unique, legal Python identifiers for nodes.
 *
 * This is torch.fx's `_Namespace.create_name` as of PyTorch 2.13 (torch/fx/graph.py):
 * a candidate is sanitized (runs of characters outside [0-9a-zA-Z_] become one `_`, empty
 * becomes `_unnamed`, a leading digit gets a `_` prefix), split into a base and an optional
 * numeric suffix (`^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$`), and numbered from a per-base
 * counter (the last number given to that base), skipping Python keywords, builtins and FX's
 * custom globals (inf, nan, NoneType, torch, device, fx_pytree, pytree). So "sum" -> "sum_1"
 * and add, add, add_1, add_5, add -> add, add_1, add_2, add_5, add_6.
 *
 * A name is never formatted on the hot path: it is stored as an interned base and a suffix
 * ("add", 3) and rendered when printed. Which names are taken is kept per base as a bitset of
 * suffixes, so naming the millionth `add` costs the same as naming the first. A name space
 * also interns the graph's other strings (targets, kwarg names), and is used twice, as in
 * FX: once per graph for node names, once per python_code() call for locals and globals. */
#ifndef CFX_IR_NAMES_H
#define CFX_IR_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/arena.h"

typedef struct cfx_names cfx_names;

#define CFX_NAME_NO_SUFFIX (-1)
/* Suffixes above this are kept inside the base string ("x_1234567890" has no suffix). */
#define CFX_NAME_MAX_SUFFIX 999999999

/* A rendered name is base, or base + "_" + suffix. base is interned in its name space. */
typedef struct cfx_name {
    const char *base;
    int32_t suffix;
} cfx_name;

/* A candidate after sanitizing and splitting, ready for repeated cfx_names_create_prepared
 * calls (the tracer prepares each operator's candidate once). */
typedef struct cfx_name_candidate {
    const char *whole; /* interned sanitized candidate */
    const char *base;  /* interned regex base */
    int64_t num;       /* regex suffix, -1 if none */
    cfx_name key;      /* the candidate as a name */
    uint8_t illegal;   /* bit per cfx_name_obj: whole is illegal for that obj (FX's
                          _illegal_names check, computed once) */
} cfx_name_candidate;

/* arena: where interned strings live; NULL = a private arena freed with the name space. */
CFX_API cfx_names *cfx_names_new(cfx_arena *arena);
CFX_API void cfx_names_free(cfx_names *ns);

/* Interned copy of s[0..len) (NUL-terminated); equal strings give equal pointers. NULL on OOM. */
CFX_API const char *cfx_names_intern(cfx_names *ns, const char *s, size_t len);
/* An already interned string, or NULL (never inserts). */
CFX_API const char *cfx_names_find(const cfx_names *ns, const char *s, size_t len);
/* Length of an interned string, O(1). */
CFX_API uint32_t cfx_istr_len(const char *interned);

/* What the name is for: FX's `obj` argument of create_name, which decides whether a reserved
 * word may be used as is. */
typedef enum cfx_name_obj {
    CFX_NAME_FOR_NONE = 0, /* obj=None: graph node names */
    CFX_NAME_FOR_OBJECT,   /* some other object: python_code locals */
    CFX_NAME_FOR_BUILTIN,  /* the builtin / custom global the candidate names (`getattr`) */
} cfx_name_obj;

/* Sanitize + split + intern. CFX_OK or CFX_ERR_NOMEM. */
CFX_API int cfx_names_prepare(cfx_names *ns, const char *candidate, size_t len, cfx_name_candidate *out);
/* create_name(candidate, obj): a fresh unique name, recorded as used. */
CFX_API int cfx_names_create_prepared(cfx_names *ns, const cfx_name_candidate *c, cfx_name_obj obj,
                                      cfx_name *out);
CFX_API int cfx_names_create(cfx_names *ns, const char *candidate, cfx_name_obj obj, cfx_name *out);
CFX_API bool cfx_names_is_used(const cfx_names *ns, cfx_name name);
/* The name spelled s[0..len), interned, without recording it as used. */
CFX_API int cfx_names_key(cfx_names *ns, const char *s, size_t len, cfx_name *out);
/* Looks up the name spelled s (any spelling; canonicalized). */
CFX_API bool cfx_names_is_used_str(const cfx_names *ns, const char *s);

/* Whether a name (suffix-less) is one of the reserved words below; O(1). */
CFX_API bool cfx_name_key_is_reserved(cfx_name n);
/* Python keyword, builtin, or FX custom global (FX's _illegal_names keys). */
CFX_API bool cfx_name_is_reserved(const char *s);

/* FX's Graph._target_to_str for a string / __name__: strip surrounding `__` of a magic name,
 * then snake_case ("camelCase" -> "camel_case"). Appends to b. */
CFX_API void cfx_names_target_to_str(const char *s, cfx_buf *b);

/* Rendering. */
static inline bool cfx_name_equal(cfx_name a, cfx_name b) { return a.base == b.base && a.suffix == b.suffix; }
CFX_API size_t cfx_name_length(cfx_name n);
/* Writes the name (no NUL) to dst, which must hold cfx_name_length(n) bytes; returns the end. */
CFX_API char *cfx_name_write(cfx_name n, char *dst);
CFX_API void cfx_name_print(cfx_name n, cfx_buf *b);
/* malloc'd string. */
CFX_API char *cfx_name_to_string(cfx_name n);

/* Decimal digits of v into dst (no NUL; at most 20 bytes); returns the count. */
static inline size_t cfx_fmt_u64(uint64_t v, char *dst)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        dst[i] = tmp[n - 1 - i];
    return n;
}
static inline size_t cfx_fmt_i64(int64_t v, char *dst)
{
    if (v < 0) {
        dst[0] = '-';
        return 1 + cfx_fmt_u64((uint64_t)0 - (uint64_t)v, dst + 1);
    }
    return cfx_fmt_u64((uint64_t)v, dst);
}

#endif
