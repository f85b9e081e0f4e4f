/* schema_type_parse.c - the types of a schema: PyTorch's SchemaTypeParser (2.13's
 * parseFakeAndRealType, parseBaseType and parseAliasAnnotation).
 *
 * Types are parsed with an explicit stack instead of recursion, so "((((int))))" nests as
 * deep as the user likes; tokens are still consumed in PyTorch's order, because that order
 * decides which error a malformed schema reports. The tree holds the "real" type at the top
 * and "fake" types inside tuples, Dicts, Futures, Awaits, RRefs and Unions (there SymInt,
 * ScalarType, Layout and MemoryFormat are int), which is what c10 prints.
 *
 * Alias annotations live only where PyTorch keeps them: on the argument's top-level type,
 * with the element alias of a list as `contained`. PyTorch drops the aliases written inside
 * the compound types above, and so does this. Alias sets are hash sets in PyTorch
 * (std::unordered_set<Symbol>) and print in bucket order; for the small sets schemas use,
 * libstdc++ iterates newest-first ("Tensor(a|b)" prints "Tensor(b|a)"), so the sets are
 * stored in that order and printing just walks them. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

/* ------------------------------------------------------------------ nodes */

cfx_type *schema_new_type(schema_parser *p, int kind)
{
    cfx_type *t = schema_alloc(p, sizeof *t);
    if (!t)
        return &p->dummy_type;
    t->kind = (uint16_t)kind;
    return t;
}

cfx_type *schema_new_type1(schema_parser *p, int kind, const cfx_type *elem)
{
    cfx_type *t = schema_new_type(p, kind);
    const cfx_type **e = schema_alloc(p, sizeof *e);
    if (e && t != &p->dummy_type) {
        e[0] = elem;
        t->elems = e;
        t->n_elems = 1;
    }
    return t;
}

static char *tok_str(schema_parser *p, schema_token t)
{
    return schema_slice(p, schema_text(&p->L, t), schema_text_len(t));
}

/* ------------------------------------------------------------------ alias annotations */

static schema_alias *new_alias(schema_parser *p)
{
    schema_alias *ab = schema_alloc(p, sizeof *ab);
    return ab ? ab : &p->dummy_alias;
}

typedef struct name_ref {
    const char *name;
    size_t order;
} name_ref;

static int by_name_then_order(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* The set of the names as read (duplicates dropped, the first one counting), newest first.
 * Sorting finds the duplicates, so a schema with thousands of sets is not quadratic. */
static void store_set(schema_parser *p, schema_alias *ab, bool after, const char **names, size_t n)
{
    if (n > UINT16_MAX) {
        schema_error_plain(&p->L, "too many alias sets in one annotation");
        return;
    }
    name_ref *refs = cfx_malloc((n ? n : 1) * sizeof *refs);
    const char **set = schema_alloc(p, (n ? n : 1) * sizeof *set);
    if (!refs || !set) {
        cfx_free(refs);
        schema_error_nomem(&p->L);
        return;
    }
    for (size_t i = 0; i < n; i++)
        refs[i] = (name_ref){names[i], i};
    qsort(refs, n, sizeof *refs, by_name_then_order);
    for (size_t i = 1; i < n; i++)
        if (strcmp(refs[i].name, refs[i - 1].name) == 0)
            names[refs[i].order] = NULL;
    cfx_free(refs);
    uint16_t k = 0;
    for (size_t i = n; i-- > 0;)
        if (names[i])
            set[k++] = names[i];
    if (after) {
        ab->info.after = set;
        ab->info.n_after = k;
    } else {
        ab->info.before = set;
        ab->info.n_before = k;
    }
}

/* "a|b|*": after a wildcard, names are not read (but "*" still is). */
static void parse_alias_sets(schema_parser *p, schema_alias *ab, bool after)
{
    schema_lexer *L = &p->L;
    const char **names = NULL;
    size_t n = 0, cap = 0;
    bool wildcard = false;
    do {
        const char *name = NULL;
        if (schema_next_if(L, '*')) {
            name = "*";
            wildcard = true;
        } else if (!wildcard) {
            name = tok_str(p, schema_expect(L, SK_IDENT));
        }
        if (name && schema_grow(p, &names, &cap, n, sizeof *names))
            names[n++] = name;
    } while (schema_next_if(L, '|'));
    if (!schema_failed(L))
        store_set(p, ab, after, names, n);
}

schema_alias *schema_parse_alias(schema_parser *p)
{
    schema_lexer *L = &p->L;
    if (schema_next_if(L, '(')) {
        schema_alias *ab = new_alias(p);
        parse_alias_sets(p, ab, false);
        if (schema_next_if(L, '!'))
            ab->info.is_write = true;
        if (schema_next_if(L, SK_ARROW)) {
            parse_alias_sets(p, ab, true);
        } else {
            /* no arrow: the after set is the before set */
            ab->info.after = ab->info.before;
            ab->info.n_after = ab->info.n_before;
        }
        schema_expect(L, ')');
        return ab;
    }
    if (schema_next_if(L, '!')) {
        schema_alias *ab = new_alias(p);
        char name[32];
        snprintf(name, sizeof name, "$%u", p->next_id++);
        const char **set = schema_alloc(p, sizeof *set);
        if (set && ab != &p->dummy_alias) {
            set[0] = schema_slice(p, name, strlen(name));
            ab->info.before = set;
            ab->info.n_before = 1;
        }
        ab->info.is_write = true;
        return ab;
    }
    return NULL;
}

schema_alias *schema_list_alias(schema_parser *p, schema_alias *elem)
{
    schema_alias *container = schema_parse_alias(p);
    if (elem) {
        if (!container) {
            container = new_alias(p);
            container->info.is_write = elem->info.is_write;
        }
        if (!container->info.contained)
            container->info.contained = &elem->info;
    }
    return container;
}

/* ------------------------------------------------------------------ base types */

/* parseBaseType's type map (2.13). DeviceIndex and ConstQuantizerPtr are IntType in c10. */
static const struct {
    const char *name;
    int kind;
} base_types[] = {
    {"Generator", CFX_TYPE_GENERATOR},   {"ScalarType", CFX_TYPE_SCALAR_TYPE},
    {"Layout", CFX_TYPE_LAYOUT},         {"MemoryFormat", CFX_TYPE_MEMORY_FORMAT},
    {"Storage", CFX_TYPE_STORAGE},       {"QScheme", CFX_TYPE_QSCHEME},
    {"Quantizer", CFX_TYPE_QUANTIZER},   {"ConstQuantizerPtr", CFX_TYPE_INT},
    {"Device", CFX_TYPE_DEVICE},         {"DeviceIndex", CFX_TYPE_INT},
    {"Stream", CFX_TYPE_STREAM},         {"Scalar", CFX_TYPE_SCALAR},
    {"str", CFX_TYPE_STR},               {"float", CFX_TYPE_FLOAT},
    {"complex", CFX_TYPE_COMPLEX},       {"int", CFX_TYPE_INT},
    {"SymInt", CFX_TYPE_SYMINT},         {"SymBool", CFX_TYPE_SYMBOOL},
    {"bool", CFX_TYPE_BOOL},             {"None", CFX_TYPE_NONE},
    {"NoneType", CFX_TYPE_NONE},         {"Capsule", CFX_TYPE_CAPSULE},
    {"Any", CFX_TYPE_ANY},               {"AnyClassType", CFX_TYPE_ANY_CLASS},
    {"AnyEnumType", CFX_TYPE_ANY_ENUM},
};

/* Is the name at source offset `at` an opaque type? A first parse asks the registry, a
 * re-parse replays the first one's answers; both remember where they said yes. */
static bool is_opaque(schema_parser *p, size_t at, const char *name, size_t n)
{
    bool yes = false;
    if (p->replay) {
        for (size_t i = 0; i < p->replay->n && !yes; i++)
            yes = p->replay->at[i] == at;
    } else {
        yes = schema_opaque_lookup(name, n);
    }
    schema_opaque_uses *u = &p->opaque;
    if (yes && schema_grow(p, &u->at, &u->cap, u->n, sizeof *u->at))
        u->at[u->n++] = at;
    return yes;
}

static cfx_type *parse_base_type(schema_parser *p)
{
    schema_lexer *L = &p->L;
    schema_token tok = schema_cur(L);
    if (!schema_next_if(L, SK_NONE) && !schema_next_if(L, SK_NONE_TYPE))
        schema_expect(L, SK_IDENT);
    /* a qualified name ("my.module.Cls", spaces allowed around the dots) names an opaque
     * type or a type variable; a '.' not followed by an identifier is left for the caller */
    cfx_buf name;
    cfx_buf_init(&name);
    cfx_buf_putn(&name, schema_text(L, tok), schema_text_len(tok));
    while (schema_cur(L).kind == '.' && schema_lookahead(L).kind == SK_IDENT) {
        schema_next(L);
        schema_token part = schema_next(L);
        cfx_buf_putc(&name, '.');
        cfx_buf_putn(&name, schema_text(L, part), schema_text_len(part));
    }
    if (name.oom)
        schema_error_nomem(L);
    if (schema_failed(L)) {
        cfx_buf_free(&name);
        return schema_new_type(p, CFX_TYPE_ANY);
    }
    const char *text = name.data ? name.data : "";
    cfx_type *t = NULL;
    if (is_opaque(p, tok.start, text, name.len))
        t = schema_new_type(p, CFX_TYPE_PYOBJECT);
    for (size_t i = 0; !t && i < sizeof base_types / sizeof base_types[0]; i++)
        if (strcmp(text, base_types[i].name) == 0)
            t = schema_new_type(p, base_types[i].kind);
    if (!t && p->allow_typevars && islower((unsigned char)text[0])) {
        t = schema_new_type(p, CFX_TYPE_VAR);
        t->name = schema_slice(p, text, name.len);
    }
    if (!t) {
        const char *msg =
            strcmp(text, "double") == 0
                ? "Use `float` instead of `double` in an operator's schema string. `float` in schema "
                  "corresponds to the double type in C++"
            : strcmp(text, "int64_t") == 0
                ? "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. `SymInt` "
                  "corresponds to c10::SymInt in C++ while `int` in schema corresponds to the int64_t "
                  "type in C++."
                : "unknown type specifier. Common valid schema types include Tensor, SymInt, int, float, "
                  "bool, Scalar; for a full list, please see "
                  "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func ";
        schema_error_report(L, tok.start, tok.end, msg);
        t = schema_new_type(p, CFX_TYPE_ANY);
    }
    cfx_buf_free(&name);
    return t;
}

/* "__torch__.torch.classes.ns.Cls". PyTorch also requires the class to be registered; cfx
 * has no class registry at this layer, so any such name is accepted. */
static cfx_type *parse_class_type(schema_parser *p)
{
    schema_lexer *L = &p->L;
    schema_next(L);
    static const char *const expected[2] = {"torch", "classes"};
    for (int i = 0; i < 2; i++) {
        schema_expect(L, '.');
        schema_token part = schema_expect(L, SK_IDENT);
        if (!schema_failed(L) && !schema_tok_is(L, part, expected[i])) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "Expected classes namespace but got ");
            cfx_buf_putn(&b, schema_text(L, part), schema_text_len(part));
            char *msg = cfx_buf_take(&b);
            if (msg)
                schema_error_report(L, part.start, part.end, msg);
            else
                schema_error_nomem(L);
            cfx_free(msg);
        }
    }
    schema_expect(L, '.');
    schema_token ns = schema_expect(L, SK_IDENT);
    schema_expect(L, '.');
    schema_token cls = schema_expect(L, SK_IDENT);
    cfx_type *t = schema_new_type(p, CFX_TYPE_CLASS);
    size_t n = strlen("__torch__.torch.classes.") + schema_text_len(ns) + 1 + schema_text_len(cls);
    char *name = schema_alloc(p, n + 1);
    if (name) {
        snprintf(name, n + 1, "__torch__.torch.classes.%.*s.%.*s", (int)schema_text_len(ns),
                 schema_text(L, ns), (int)schema_text_len(cls), schema_text(L, cls));
        t->name = name;
    }
    return t;
}

/* ------------------------------------------------------------------ compound types */

static bool push_frame(schema_parser *p, int kind)
{
    if (p->n_frames == p->cap_frames) {
        size_t cap = p->cap_frames ? 2 * p->cap_frames : 8;
        schema_frame *f = cfx_realloc(p->frames, cap * sizeof *f);
        if (!f) {
            schema_error_nomem(&p->L);
            return false;
        }
        p->frames = f;
        p->cap_frames = cap;
    }
    p->frames[p->n_frames++] = (schema_frame){kind, NULL, 0, 0};
    return true;
}

/* DictType::create accepts these key types only (c10 kinds: the fake int covers SymInt). */
static void check_dict_key(schema_parser *p, const cfx_type *key)
{
    switch (key->kind) {
    case CFX_TYPE_ANY:
    case CFX_TYPE_INT:
    case CFX_TYPE_BOOL:
    case CFX_TYPE_FLOAT:
    case CFX_TYPE_COMPLEX:
    case CFX_TYPE_STR:
    case CFX_TYPE_TENSOR:
    case CFX_TYPE_DEVICE:
        return;
    default: {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Cannot create dict for key type '");
        schema_type_write(key, false, &b);
        cfx_buf_puts(&b, "', only int, float, complex, Tensor, device and string keys are supported");
        schema_error_buf(p, &b);
    }
    }
}

/* Closes the innermost compound type after its last element: its ")", a Dict's or Union's
 * alias annotation, then the type itself (which may fail: a bad Dict key, a Union that is
 * one type). */
static cfx_type *close_frame(schema_parser *p, schema_alias **alias)
{
    schema_frame f = p->frames[--p->n_frames];
    schema_expect(&p->L, ')');
    bool own_alias = f.kind == CFX_TYPE_DICT || f.kind == CFX_TYPE_UNION;
    *alias = own_alias ? schema_parse_alias(p) : NULL;
    if (schema_failed(&p->L))
        return schema_new_type(p, CFX_TYPE_ANY);
    if (f.kind == CFX_TYPE_UNION)
        return schema_make_union(p, f.elems, f.n);
    if (f.kind == CFX_TYPE_DICT && f.n == 2)
        check_dict_key(p, f.elems[0]);
    cfx_type *t = schema_new_type(p, f.kind);
    if (t != &p->dummy_type) {
        t->elems = f.elems;
        t->n_elems = (uint16_t)f.n;
    }
    return t;
}

/* The start of a type. Returns NULL when it opened a compound type whose first element
 * comes next. */
static cfx_type *parse_primary(schema_parser *p, schema_alias **alias)
{
    schema_lexer *L = &p->L;
    schema_token t = schema_cur(L);
    *alias = NULL;
    if (t.kind == '(') {
        schema_next(L);
        if (!push_frame(p, CFX_TYPE_TUPLE))
            return schema_new_type(p, CFX_TYPE_ANY);
        if (schema_cur(L).kind != ')')
            return NULL;
        return close_frame(p, alias); /* "()" */
    }
    if (t.kind == SK_IDENT) {
        static const struct {
            const char *name;
            int kind;
        } opens[] = {{"Future", CFX_TYPE_FUTURE}, {"Await", CFX_TYPE_AWAIT}, {"RRef", CFX_TYPE_RREF},
                     {"Dict", CFX_TYPE_DICT},     {"Union", CFX_TYPE_UNION}};
        for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++)
            if (schema_tok_is(L, t, opens[i].name)) {
                schema_next(L);
                schema_expect(L, '(');
                if (!push_frame(p, opens[i].kind))
                    return schema_new_type(p, CFX_TYPE_ANY);
                return NULL;
            }
        if (schema_tok_is(L, t, "Tensor")) {
            schema_next(L);
            cfx_type *v = schema_new_type(p, CFX_TYPE_TENSOR);
            *alias = schema_parse_alias(p);
            return v;
        }
        if (schema_tok_is(L, t, "__torch__"))
            return parse_class_type(p);
    }
    cfx_type *v = parse_base_type(p);
    *alias = schema_parse_alias(p);
    return v;
}

/* The suffixes "[]" (with the list's alias) and "?", any number of times. */
static cfx_type *parse_suffixes(schema_parser *p, cfx_type *value, schema_alias **alias)
{
    schema_lexer *L = &p->L;
    for (;;) {
        if (schema_cur(L).kind == '[' && schema_lookahead(L).kind == ']') {
            schema_next(L);
            schema_next(L);
            value = schema_new_type1(p, CFX_TYPE_LIST, value);
            *alias = schema_list_alias(p, *alias);
        } else if (schema_next_if(L, '?')) {
            value = schema_make_optional(p, value);
        } else {
            return value;
        }
    }
}

/* Does the element just added end its frame? Otherwise the separator is consumed. */
static bool frame_ends(schema_parser *p, const schema_frame *f)
{
    schema_lexer *L = &p->L;
    if (schema_failed(L))
        return true;
    switch (f->kind) {
    case CFX_TYPE_TUPLE:
        return !schema_next_if(L, ',');
    case CFX_TYPE_DICT:
        if (f->n != 1)
            return true;
        schema_expect(L, ',');
        return schema_failed(L);
    case CFX_TYPE_UNION:
        if (schema_cur(L).kind == ')')
            return true;
        schema_expect(L, ',');
        return schema_failed(L);
    default: /* Future, Await, RRef: one element */
        return true;
    }
}

cfx_type *schema_parse_type(schema_parser *p, schema_alias **alias_out)
{
    size_t base = p->n_frames;
    for (;;) {
        schema_alias *alias;
        cfx_type *value = parse_primary(p, &alias);
        if (!value)
            continue;
        for (;;) {
            value = parse_suffixes(p, value, &alias);
            if (p->n_frames == base) {
                *alias_out = alias;
                return value;
            }
            schema_frame *f = &p->frames[p->n_frames - 1];
            if (f->n == UINT16_MAX)
                schema_error_plain(&p->L, "too many contained types");
            else if (schema_grow(p, &f->elems, &f->cap, f->n, sizeof *f->elems))
                f->elems[f->n++] = schema_fake_type(p, value);
            if (!frame_ends(p, f))
                break;
            value = close_frame(p, &alias);
        }
    }
}
