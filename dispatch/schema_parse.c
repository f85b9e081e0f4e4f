/* schema_parse.c - PyTorch's function-schema parser (function_schema_parser.cpp and
 * schema_type_parser.cpp as of 1.13), building a cfx_schema in one arena.
 *
 * The parser follows PyTorch call for call, because the order in which tokens are consumed
 * decides which error a malformed schema reports. Two things differ in form only: types are
 * parsed with an explicit stack instead of recursion ("((((int))))" nests as deep as the
 * user likes), and errors do not unwind by exception: the first error is recorded in the
 * lexer, after which every token reads as SK_FAILED, so the remaining calls fall through
 * without consuming anything and the parse returns.
 *
 * Alias annotations live only where PyTorch keeps them: on the argument (as the alias of
 * the argument's top-level type), with the element alias of a list as `contained`. PyTorch
 * drops the aliases written inside tuples, dicts, futures and rrefs, and so does this.
 *
 * Alias sets are hash sets in PyTorch (std::unordered_set<Symbol>) and print in bucket
 * order. For the small sets schemas use, libstdc++ iterates newest-first, which is what the
 * builtin schemas show ("Tensor(a|b)" prints "Tensor(b|a)"); the sets are stored in that
 * order, so printing just walks them.
 *
 * Default values are read by schema_default.c. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

/* ------------------------------------------------------------------ arena */

enum { ARENA_ALIGN = _Alignof(max_align_t), ARENA_FIRST = 2048 };

static void *arena_alloc(schema_arena *a, size_t n)
{
    n = (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (n == 0)
        n = ARENA_ALIGN;
    schema_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? 2 * c->cap : ARENA_FIRST;
        if (cap < n)
            cap = n;
        if (cap > SIZE_MAX - sizeof(schema_chunk))
            return NULL;
        schema_chunk *nc = malloc(sizeof(schema_chunk) + cap);
        if (!nc)
            return NULL;
        nc->next = c;
        nc->cap = cap;
        nc->used = 0;
        a->head = nc;
        c = nc;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

static void arena_free(schema_arena *a)
{
    schema_chunk *c = a->head;
    while (c) {
        schema_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

/* What a cfx_schema pointer really points to: the schema first, then the arena holding
 * everything it refers to and its source text (for cfx_schema_with_name). The block is its
 * own allocation, so the pointer a registry keeps is the start of a malloc'd block and
 * valgrind sees the whole schema as reachable, not "possibly lost". */
typedef struct schema_block {
    cfx_schema schema;
    schema_arena a;
    const char *source;
} schema_block;

static schema_block *block_of(const cfx_schema *s) { return (schema_block *)s; }

/* ------------------------------------------------------------------ parser helpers */

void *schema_alloc(schema_parser *p, size_t n)
{
    void *q = arena_alloc(p->A, n);
    if (!q)
        schema_error_nomem(&p->L);
    return q;
}

/* Makes room for one more element in an arena array, doubling it when full. */
bool schema_grow(schema_parser *p, void *arrayp, size_t *cap, size_t n, size_t elem)
{
    void **array = arrayp;
    if (n < *cap)
        return true;
    size_t ncap = *cap ? 2 * *cap : 4;
    if (ncap > SIZE_MAX / elem) {
        schema_error_nomem(&p->L);
        return false;
    }
    void *q = schema_alloc(p, ncap * elem);
    if (!q)
        return false;
    if (n)
        memcpy(q, *array, n * elem);
    *array = q;
    *cap = ncap;
    return true;
}

char *schema_slice(schema_parser *p, const char *s, size_t n)
{
    char *q = schema_alloc(p, n + 1);
    if (!q)
        return (char *)"";
    memcpy(q, s, n);
    q[n] = '\0';
    return q;
}

static char *tok_str(schema_parser *p, schema_token t)
{
    return schema_slice(p, schema_text(&p->L, t), schema_text_len(&p->L, t));
}

static cfx_type *new_type(schema_parser *p, int kind)
{
    cfx_type *t = schema_alloc(p, sizeof *t);
    if (!t)
        return &p->dummy_type;
    t->kind = (uint16_t)kind;
    return t;
}

static cfx_type *new_type1(schema_parser *p, int kind, const cfx_type *elem)
{
    cfx_type *t = new_type(p, kind);
    const cfx_type **e = schema_alloc(p, sizeof *e);
    if (e && t != &p->dummy_type) {
        e[0] = elem;
        t->elems = e;
        t->n_elems = 1;
    }
    return t;
}

/* ------------------------------------------------------------------ alias annotations */

static bool set_has(const char **set, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(set[i], name) == 0)
            return true;
    return false;
}

/* Inserts into an alias set, newest first (see the top of the file). */
static void set_add(schema_parser *p, schema_alias *ab, bool after, const char *name)
{
    const char ***set = after ? &ab->info.after : &ab->info.before;
    uint16_t *n = after ? &ab->info.n_after : &ab->info.n_before;
    size_t *cap = after ? &ab->cap_after : &ab->cap_before;
    if (set_has(*set, *n, name))
        return;
    if (*n == UINT16_MAX) {
        schema_error_plain(&p->L, "too many alias sets");
        return;
    }
    if (!schema_grow(p, set, cap, *n, sizeof **set))
        return;
    memmove(*set + 1, *set, *n * sizeof **set);
    (*set)[0] = name;
    (*n)++;
}

static schema_alias *new_alias(schema_parser *p)
{
    schema_alias *ab = schema_alloc(p, sizeof *ab);
    return ab ? ab : &p->dummy_alias;
}

static void parse_alias_sets(schema_parser *p, schema_alias *ab, bool after)
{
    schema_lexer *L = &p->L;
    do {
        const char **set = after ? ab->info.after : ab->info.before;
        uint16_t n = after ? ab->info.n_after : ab->info.n_before;
        if (schema_next_if(L, '*'))
            set_add(p, ab, after, "*");
        else if (!set_has(set, n, "*")) /* after a wildcard, names are not read */
            set_add(p, ab, after, tok_str(p, schema_expect(L, SK_IDENT)));
    } while (schema_next_if(L, '|'));
}

/* SchemaTypeParser::parseAliasAnnotation: "(a|b! -> c)", "!" or nothing (NULL). */
static schema_alias *parse_alias(schema_parser *p)
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
            for (uint16_t i = ab->info.n_before; i-- > 0;)
                set_add(p, ab, true, ab->info.before[i]);
        }
        schema_expect(L, ')');
        return ab;
    }
    if (schema_next_if(L, '!')) {
        schema_alias *ab = new_alias(p);
        char name[32];
        snprintf(name, sizeof name, "$%u", p->next_id++);
        set_add(p, ab, false, schema_slice(p, name, strlen(name)));
        ab->info.is_write = true;
        return ab;
    }
    return NULL;
}

/* A list's alias: the container's own annotation, holding the element's alias. */
static schema_alias *list_alias(schema_parser *p, schema_alias *elem)
{
    schema_alias *container = parse_alias(p);
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

/* ------------------------------------------------------------------ types */

static const struct {
    const char *name;
    int kind;
} base_types[] = {
    {"Generator", CFX_TYPE_GENERATOR},     {"Dimname", CFX_TYPE_DIMNAME},
    {"ScalarType", CFX_TYPE_SCALAR_TYPE},  {"Layout", CFX_TYPE_LAYOUT},
    {"MemoryFormat", CFX_TYPE_MEMORY_FORMAT}, {"Storage", CFX_TYPE_STORAGE},
    {"QScheme", CFX_TYPE_QSCHEME},         {"Quantizer", CFX_TYPE_QUANTIZER},
    {"ConstQuantizerPtr", CFX_TYPE_CONST_QUANTIZER_PTR},
    {"Device", CFX_TYPE_DEVICE},           {"Stream", CFX_TYPE_STREAM},
    {"Scalar", CFX_TYPE_SCALAR},           {"str", CFX_TYPE_STR},
    {"float", CFX_TYPE_FLOAT},             {"complex", CFX_TYPE_COMPLEX},
    {"int", CFX_TYPE_INT},                 {"SymInt", CFX_TYPE_SYMINT},
    {"bool", CFX_TYPE_BOOL},               {"None", CFX_TYPE_NONE},
    {"NoneType", CFX_TYPE_NONE},           {"Capsule", CFX_TYPE_CAPSULE},
    {"Any", CFX_TYPE_ANY},                 {"AnyClassType", CFX_TYPE_ANY_CLASS},
    {"AnyEnumType", CFX_TYPE_ANY_ENUM},
};

static cfx_type *parse_base_type(schema_parser *p)
{
    schema_lexer *L = &p->L;
    schema_token tok = schema_cur(L);
    if (!schema_next_if(L, SK_NONE) && !schema_next_if(L, SK_NONE_TYPE))
        schema_expect(L, SK_IDENT);
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++)
        if (schema_tok_is(L, tok, base_types[i].name))
            return new_type(p, base_types[i].kind);
    if (schema_text_len(L, tok) > 0 && islower((unsigned char)schema_text(L, tok)[0])) {
        cfx_type *t = new_type(p, CFX_TYPE_VAR);
        t->name = tok_str(p, tok);
        return t;
    }
    schema_error_report(L, tok.start, tok.end, "unknown type specifier");
    return new_type(p, CFX_TYPE_ANY);
}

/* "__torch__.torch.classes.ns.Cls". PyTorch also requires the class to be registered; cfx
 * has no class registry, so any such name is accepted. */
static cfx_type *parse_class_type(schema_parser *p)
{
    schema_lexer *L = &p->L;
    schema_next(L);
    schema_token parts[2];
    static const char *const expected[2] = {"torch", "classes"};
    for (int i = 0; i < 2; i++) {
        schema_expect(L, '.');
        parts[i] = schema_expect(L, SK_IDENT);
        if (!schema_failed(L) && !schema_tok_is(L, parts[i], expected[i])) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "Expected classes namespace but got ");
            cfx_buf_putn(&b, schema_text(L, parts[i]), schema_text_len(L, parts[i]));
            char *msg = cfx_buf_take(&b);
            if (msg)
                schema_error_report(L, parts[i].start, parts[i].end, msg);
            else
                schema_error_nomem(L);
            free(msg);
        }
    }
    schema_expect(L, '.');
    schema_token ns = schema_expect(L, SK_IDENT);
    schema_expect(L, '.');
    schema_token cls = schema_expect(L, SK_IDENT);
    cfx_type *t = new_type(p, CFX_TYPE_CLASS);
    size_t n = strlen("__torch__.torch.classes.") + schema_text_len(L, ns) + 1 + schema_text_len(L, cls);
    char *name = schema_alloc(p, n + 1);
    if (name) {
        snprintf(name, n + 1, "__torch__.torch.classes.%.*s.%.*s", (int)schema_text_len(L, ns),
                 schema_text(L, ns), (int)schema_text_len(L, cls), schema_text(L, cls));
        t->name = name;
    }
    return t;
}

/* OptionalType::create. T?? is T?, except that c10 flattens "Scalar??" into a union it
 * prints as "Union(Scalar)?"; the inner Scalar then carries that name. None? fails in
 * c10's union unification. */
static cfx_type *make_optional(schema_parser *p, cfx_type *t)
{
    if (t->kind == CFX_TYPE_OPTIONAL) {
        cfx_type *inner = t->n_elems == 1 ? (cfx_type *)t->elems[0] : NULL;
        if (inner && inner->kind == CFX_TYPE_SCALAR)
            inner->name = "Union(Scalar)";
        return t;
    }
    if (t->kind == CFX_TYPE_NONE)
        schema_error_plain(&p->L,
                           "false INTERNAL ASSERT FAILED at \"./aten/src/ATen/core/union_type.cpp\":212, "
                           "please report a bug to PyTorch. After type unification was performed, the "
                           "Union with the original types {NoneType NoneType, } has the single type "
                           "NoneType. Use the common supertype instead of creating a Uniontype");
    return new_type1(p, CFX_TYPE_OPTIONAL, t);
}

/* The suffixes "[]" (with the list's alias) and "?", any number of times. */
static cfx_type *parse_suffixes(schema_parser *p, cfx_type *value, schema_alias **alias)
{
    schema_lexer *L = &p->L;
    for (;;) {
        if (schema_cur(L).kind == '[' && schema_lookahead(L).kind == ']') {
            schema_next(L);
            schema_next(L);
            value = new_type1(p, CFX_TYPE_LIST, value);
            *alias = list_alias(p, *alias);
        } else if (schema_next_if(L, '?')) {
            value = make_optional(p, value);
        } else {
            return value;
        }
    }
}

static bool push_frame(schema_parser *p, int kind)
{
    if (p->n_frames == p->cap_frames) {
        size_t cap = p->cap_frames ? 2 * p->cap_frames : 8;
        schema_frame *f = realloc(p->frames, cap * sizeof *f);
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

/* Types nested in a tuple, Dict, Future or RRef are PyTorch's "fake" types, in which
 * SymInt, ScalarType, Layout and MemoryFormat are plain ints ("(ScalarType, Layout[])"
 * prints "(int, int[])"). Only the list/optional wrappers around the element's base need
 * looking at: a nested compound type was converted when its own elements were added. */
static void make_fake(cfx_type *t)
{
    while ((t->kind == CFX_TYPE_LIST || t->kind == CFX_TYPE_OPTIONAL) && t->n_elems == 1)
        t = (cfx_type *)t->elems[0];
    if (t->kind == CFX_TYPE_SYMINT || t->kind == CFX_TYPE_SCALAR_TYPE || t->kind == CFX_TYPE_LAYOUT ||
        t->kind == CFX_TYPE_MEMORY_FORMAT)
        t->kind = CFX_TYPE_INT;
}

/* DictType::create accepts these key types only. */
static void check_dict_key(schema_parser *p, const cfx_type *key)
{
    switch (key->kind) {
    case CFX_TYPE_ANY:
    case CFX_TYPE_INT:
    case CFX_TYPE_CONST_QUANTIZER_PTR:
    case CFX_TYPE_BOOL:
    case CFX_TYPE_FLOAT:
    case CFX_TYPE_COMPLEX:
    case CFX_TYPE_STR:
    case CFX_TYPE_DIMNAME:
    case CFX_TYPE_TENSOR:
    case CFX_TYPE_DEVICE:
        return;
    default: {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Cannot create dict for key type '");
        cfx_type_print(key, &b); /* a nested type has no alias: this is Type::str() */
        cfx_buf_puts(&b, "', only int, float, complex, Tensor, device and string keys are supported");
        char *msg = cfx_buf_take(&b);
        if (msg)
            schema_error_plain(&p->L, msg);
        else
            schema_error_nomem(&p->L);
        free(msg);
    }
    }
}

/* Closes the innermost tuple/Future/RRef/Dict: its ")" (and a Dict's alias). */
static cfx_type *close_frame(schema_parser *p, schema_alias **alias)
{
    schema_frame f = p->frames[--p->n_frames];
    schema_expect(&p->L, ')');
    *alias = f.kind == CFX_TYPE_DICT ? parse_alias(p) : NULL;
    if (f.kind == CFX_TYPE_DICT && f.n == 2 && !schema_failed(&p->L))
        check_dict_key(p, f.elems[0]);
    cfx_type *t = new_type(p, f.kind);
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
            return new_type(p, CFX_TYPE_ANY);
        if (schema_cur(L).kind != ')')
            return NULL;
        return close_frame(p, alias); /* "()" */
    }
    if (t.kind == SK_IDENT) {
        static const struct {
            const char *name;
            int kind;
        } opens[] = {{"Future", CFX_TYPE_FUTURE}, {"RRef", CFX_TYPE_RREF}, {"Dict", CFX_TYPE_DICT}};
        for (size_t i = 0; i < 3; i++)
            if (schema_tok_is(L, t, opens[i].name)) {
                schema_next(L);
                schema_expect(L, '(');
                if (!push_frame(p, opens[i].kind))
                    return new_type(p, CFX_TYPE_ANY);
                return NULL;
            }
        if (schema_tok_is(L, t, "Tensor")) {
            schema_next(L);
            cfx_type *v = new_type(p, CFX_TYPE_TENSOR);
            *alias = parse_alias(p);
            return v;
        }
        if (schema_tok_is(L, t, "__torch__"))
            return parse_class_type(p);
    }
    cfx_type *v = parse_base_type(p);
    *alias = parse_alias(p);
    return v;
}

/* SchemaTypeParser::parseType. Returns the type and, in *alias_out, the alias annotation that
 * belongs to it at the top level (element aliases of compound types are dropped). */
static cfx_type *parse_type(schema_parser *p, schema_alias **alias_out)
{
    schema_lexer *L = &p->L;
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
            if (schema_grow(p, &f->elems, &f->cap, f->n, sizeof *f->elems)) {
                if (f->n == UINT16_MAX)
                    schema_error_plain(L, "too many contained types");
                else
                    f->elems[f->n++] = value;
                make_fake(value);
            }
            if (f->kind == CFX_TYPE_TUPLE && schema_next_if(L, ','))
                break;
            if (f->kind == CFX_TYPE_DICT && f->n == 1) {
                schema_expect(L, ',');
                break;
            }
            value = close_frame(p, &alias);
        }
    }
}

/* ------------------------------------------------------------------ arguments, schema */

static cfx_argument parse_argument(schema_parser *p, bool is_return, bool kwarg_only)
{
    schema_lexer *L = &p->L;
    cfx_argument a = {.name = "", .size_hint = -1, .default_value = {CFX_V_NONE, 0, {.i = 0}}};
    schema_alias *alias;
    cfx_type *type = parse_type(p, &alias);
    bool has_hint = false;
    if (schema_next_if(L, '[')) {
        /* a size hint only exists here, at the argument level */
        type = new_type1(p, CFX_TYPE_LIST, type);
        schema_token num = schema_expect(L, SK_NUMBER);
        if (!schema_failed(L))
            a.size_hint = (int32_t)schema_stoll(p, schema_text(L, num), schema_text_len(L, num));
        has_hint = true;
        schema_expect(L, ']');
        alias = list_alias(p, alias);
        if (schema_next_if(L, '?'))
            type = make_optional(p, type);
    }
    if (alias && !schema_failed(L))
        type->alias = &alias->info;
    a.type = type;
    if (is_return) {
        if (schema_cur(L).kind == SK_IDENT)
            a.name = tok_str(p, schema_next(L));
    } else {
        a.name = tok_str(p, schema_expect(L, SK_IDENT));
        if (schema_next_if(L, '=')) {
            a.default_value = schema_parse_default(p, type, a.size_hint, has_hint);
            a.has_default = true;
        }
        a.kwarg_only = kwarg_only;
    }
    return a;
}

typedef struct arg_list {
    cfx_argument *items;
    size_t n, cap;
} arg_list;

static void add_arg(schema_parser *p, arg_list *l, cfx_argument a)
{
    if (l->n == UINT16_MAX) {
        schema_error_plain(&p->L, "too many arguments in a schema");
        return;
    }
    if (schema_grow(p, &l->items, &l->cap, l->n, sizeof *l->items))
        l->items[l->n++] = a;
}

/* parseList('(', ',', ')') over arguments or returns. */
static void parse_arg_list(schema_parser *p, arg_list *l, bool is_return, bool *dots)
{
    schema_lexer *L = &p->L;
    bool kwarg_only = false;
    schema_expect(L, '(');
    if (schema_cur(L).kind != ')') {
        do {
            if (*dots) {
                schema_token t = schema_cur(L);
                schema_error_report(L, t.start, t.end,
                                    is_return ? "... must be the last element of the return list"
                                              : "... must be the last element of the argument list");
                return;
            }
            if (!is_return && schema_next_if(L, '*'))
                kwarg_only = true;
            else if (schema_next_if(L, SK_DOTS))
                *dots = true;
            else
                add_arg(p, l, parse_argument(p, is_return, kwarg_only));
        } while (schema_next_if(L, ','));
    }
    schema_expect(L, ')');
}

static bool is_tensor(const cfx_type *t) { return t->kind == CFX_TYPE_TENSOR; }

bool cfx_type_is_tensor_like(const cfx_type *t)
{
    if (!t)
        return false;
    if (is_tensor(t))
        return true;
    if (t->kind == CFX_TYPE_OPTIONAL)
        return is_tensor(t->elems[0]);
    if (t->kind == CFX_TYPE_LIST) {
        const cfx_type *e = t->elems[0];
        return is_tensor(e) || (e->kind == CFX_TYPE_OPTIONAL && is_tensor(e->elems[0]));
    }
    return false;
}

/* FunctionSchema::checkSchema. (1.13 crashes while formatting this message; the text is
 * what its TORCH_INTERNAL_ASSERT means to say.) */
static void check_schema(schema_parser *p, const cfx_schema *s)
{
    bool seen_default = false;
    for (uint16_t i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        if (a->has_default) {
            seen_default = true;
        } else if (a->type->kind != CFX_TYPE_LIST && seen_default && !a->kwarg_only) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_printf(&b, "Non-default positional argument follows default argument. Parameter %s in ", a->name);
            cfx_schema_print(s, &b);
            char *msg = cfx_buf_take(&b);
            if (msg)
                schema_error_plain(&p->L, msg);
            else
                schema_error_nomem(&p->L);
            free(msg);
            return;
        }
    }
}

static void parse_declaration(schema_parser *p, cfx_schema *s)
{
    schema_lexer *L = &p->L;
    /* the operator name: ident [ "::" ident ] [ "." ident ] */
    schema_token ns = schema_expect(L, SK_IDENT), op = ns;
    bool has_ns = false;
    if (schema_next_if(L, ':')) {
        schema_expect(L, ':');
        op = schema_expect(L, SK_IDENT);
        has_ns = true;
    }
    s->overload = "";
    if (schema_next_if(L, '.'))
        s->overload = tok_str(p, schema_expect(L, SK_IDENT));
    if (schema_failed(L))
        return;
    if (strcmp(s->overload, "default") == 0 || strncmp(s->overload, "__", 2) == 0) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "%s is not a legal overload name for aten operators", s->overload);
        char *msg = cfx_buf_take(&b);
        if (msg)
            schema_error_plain(L, msg);
        else
            schema_error_nomem(L);
        free(msg);
        return;
    }
    size_t name_len = schema_text_len(L, ns) + (has_ns ? 2 + schema_text_len(L, op) : 0);
    char *name = schema_alloc(p, name_len + 1);
    if (!name)
        return;
    if (has_ns)
        snprintf(name, name_len + 1, "%.*s::%.*s", (int)schema_text_len(L, ns), schema_text(L, ns),
                 (int)schema_text_len(L, op), schema_text(L, op));
    else
        memcpy(name, schema_text(L, ns), name_len);
    s->name = name;

    bool name_only = schema_cur(L).kind != '(';
    if (!name_only) {
        arg_list args = {0}, rets = {0};
        bool vararg = false, varret = false;
        parse_arg_list(p, &args, false, &vararg);
        if (vararg)
            for (size_t i = 0; i < args.n; i++)
                if (args.items[i].has_default) {
                    schema_token t = schema_cur(L);
                    schema_error_report(L, t.start, t.end, "schemas with vararg (...) can't have default value args");
                    break;
                }
        schema_expect(L, SK_ARROW);
        if (schema_next_if(L, SK_DOTS))
            varret = true;
        else if (schema_cur(L).kind == '(')
            parse_arg_list(p, &rets, true, &varret);
        else
            add_arg(p, &rets, parse_argument(p, true, false));
        if (schema_failed(L))
            return;
        s->args = args.items;
        s->n_args = (uint16_t)args.n;
        s->returns = rets.items;
        s->n_returns = (uint16_t)rets.n;
        s->is_vararg = vararg;
        s->is_varret = varret;
        check_schema(p, s);
    }
    schema_next_if(L, SK_NEWLINE);
    schema_expect(L, SK_EOF);
    if (name_only)
        schema_error_plain(L, "Tried to parse a function schema but only the operator name was given");
}

static void derive(cfx_schema *s)
{
    for (uint16_t i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        if (i < 64 && cfx_type_is_tensor_like(a->type))
            s->tensor_arg_mask |= UINT64_C(1) << i;
        if (cfx_argument_is_write(a))
            s->is_mutable = true;
    }
}

cfx_schema *cfx_schema_parse(const char *text, char **err)
{
    if (err)
        *err = NULL;
    if (!text) {
        if (err)
            *err = strdup("schema text is NULL");
        return NULL;
    }
    schema_arena a = {NULL};
    schema_block *blk = calloc(1, sizeof *blk);
    size_t len = strlen(text);
    char *source = blk ? arena_alloc(&a, len + 1) : NULL;
    if (!source) {
        free(blk);
        arena_free(&a);
        if (err)
            *err = strdup("std::bad_alloc");
        return NULL;
    }
    memcpy(source, text, len + 1);
    blk->source = source;

    schema_parser p = {.A = &a};
    schema_lexer_init(&p.L, source, len);
    parse_declaration(&p, &blk->schema);
    free(p.frames);
    if (schema_failed(&p.L)) {
        if (err)
            *err = schema_lexer_take_error(&p.L);
        schema_lexer_free(&p.L);
        arena_free(&a);
        free(blk);
        return NULL;
    }
    schema_lexer_free(&p.L);
    blk->a = a;
    derive(&blk->schema);
    return &blk->schema;
}

void cfx_schema_free(cfx_schema *s)
{
    if (!s)
        return;
    schema_block *blk = block_of(s);
    arena_free(&blk->a);
    free(blk);
}

/* Parsing is deterministic, so re-parsing the source gives an identical tree (fresh "$N"
 * sets included) without a second walker over every structure. */
cfx_schema *cfx_schema_with_name(const cfx_schema *s, const char *name)
{
    if (!s || !name)
        return NULL;
    cfx_schema *c = cfx_schema_parse(block_of(s)->source, NULL);
    if (!c)
        return NULL;
    schema_block *blk = block_of(c);
    size_t n = strlen(name);
    char *copy = arena_alloc(&blk->a, n + 1);
    if (!copy) {
        cfx_schema_free(c);
        return NULL;
    }
    memcpy(copy, name, n + 1);
    c->name = copy;
    return c;
}
