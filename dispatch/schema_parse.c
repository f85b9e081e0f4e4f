/* schema_parse.c - PyTorch's function-schema parser (2.13's function_schema_parser.cpp),
 * building a cfx_schema in one arena: the operator name, the argument and return lists, the
 * checks FunctionSchema makes on them, and the public parse/copy/free entry points.
 *
 * The parser follows PyTorch call for call, because the order in which tokens are consumed
 * decides which error a malformed schema reports. Errors do not unwind by exception: the
 * first error is recorded in the lexer, after which every token reads as SK_FAILED, so the
 * remaining calls fall through without consuming anything and the parse returns.
 *
 * Types and alias annotations are read by schema_type_parse.c, default values by
 * schema_default.c. */
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
        schema_chunk *nc = cfx_malloc(sizeof(schema_chunk) + cap);
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
        cfx_free(c);
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
    unsigned flags;             /* CFX_SCHEMA_* it was parsed with */
    schema_opaque_uses opaque;  /* where opaque type names were (in the arena) */
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

void schema_error_buf(schema_parser *p, cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    if (msg)
        schema_error_plain(&p->L, msg);
    else
        schema_error_nomem(&p->L);
    cfx_free(msg);
}

/* ------------------------------------------------------------------ arguments, schema */

static cfx_argument parse_argument(schema_parser *p, bool is_return, bool kwarg_only)
{
    schema_lexer *L = &p->L;
    cfx_argument a = {.name = "", .size_hint = -1, .default_value = {CFX_V_NONE, 0, {.i = 0}}};
    schema_alias *alias;
    cfx_type *type = schema_parse_type(p, &alias);
    bool has_hint = false;
    if (schema_next_if(L, '[')) {
        /* a size hint only exists here, at the argument level */
        type = schema_new_type1(p, CFX_TYPE_LIST, type);
        schema_token num = schema_expect(L, SK_NUMBER);
        if (!schema_failed(L))
            a.size_hint = (int32_t)schema_stoll(p, schema_text(L, num), schema_text_len(num));
        has_hint = true;
        schema_expect(L, ']');
        alias = schema_list_alias(p, alias);
        if (schema_next_if(L, '?'))
            type = schema_make_optional(p, type);
    }
    if (alias && !schema_failed(L)) {
        /* the alias belongs to this argument; its type node may be shared */
        cfx_type *own = schema_alloc(p, sizeof *own);
        if (own) {
            *own = *type;
            own->alias = &alias->info;
            type = own;
        }
    }
    a.type = type;
    if (is_return) {
        if (schema_cur(L).kind == SK_IDENT) {
            schema_token t = schema_next(L);
            a.name = schema_slice(p, schema_text(L, t), schema_text_len(t));
        }
    } else {
        schema_token t = schema_expect(L, SK_IDENT);
        a.name = schema_slice(p, schema_text(L, t), schema_text_len(t));
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

/* FunctionSchema::checkSchema: a positional argument without a default may not follow one
 * with a default (lists excepted, for old serialized schemas). */
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
            cfx_buf_printf(&b, "!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED at "
                               "\"/__w/pytorch/pytorch/aten/src/ATen/core/function_schema.h\":342, please "
                               "report a bug to PyTorch. Non-default positional argument follows default "
                               "argument. Parameter %s in ", a->name);
            cfx_schema_print(s, &b);
            schema_error_buf(p, &b);
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
    if (schema_next_if(L, '.')) {
        schema_token t = schema_expect(L, SK_IDENT);
        s->overload = schema_slice(p, schema_text(L, t), schema_text_len(t));
    }
    if (schema_failed(L))
        return;
    if (strcmp(s->overload, "default") == 0 || strncmp(s->overload, "__", 2) == 0) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "%s is not a legal overload name for aten operators", s->overload);
        schema_error_buf(p, &b);
        return;
    }
    size_t name_len = schema_text_len(ns) + (has_ns ? 2 + schema_text_len(op) : 0);
    char *name = schema_alloc(p, name_len + 1);
    if (!name)
        return;
    if (has_ns)
        snprintf(name, name_len + 1, "%.*s::%.*s", (int)schema_text_len(ns), schema_text(L, ns),
                 (int)schema_text_len(op), schema_text(L, op));
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

/* Parses text; `replay` (from a parsed schema) stands in for the opaque type registry. */
static cfx_schema *parse(const char *text, unsigned flags, const schema_opaque_uses *replay, char **err)
{
    if (err)
        *err = NULL;
    if (!text) {
        if (err)
            *err = cfx_strdup("schema text is NULL");
        return NULL;
    }
    schema_arena a = {NULL};
    schema_block *blk = cfx_calloc(1, sizeof *blk);
    size_t len = strlen(text);
    char *source = blk ? arena_alloc(&a, len + 1) : NULL;
    if (!source) {
        cfx_free(blk);
        arena_free(&a);
        if (err)
            *err = cfx_strdup("std::bad_alloc");
        return NULL;
    }
    memcpy(source, text, len + 1);
    blk->source = source;
    blk->flags = flags;

    /* parseSchemaOrName: aten and prim schemas may always use type variables */
    bool typevars = !(flags & CFX_SCHEMA_NO_TYPEVARS) || strncmp(text, "aten::", 6) == 0 ||
                    strncmp(text, "prim::", 6) == 0;
    schema_parser p = {.A = &a, .allow_typevars = typevars, .replay = replay};
    schema_lexer_init(&p.L, source, len);
    parse_declaration(&p, &blk->schema);
    cfx_free(p.frames);
    if (schema_failed(&p.L)) {
        if (err)
            *err = schema_lexer_take_error(&p.L);
        schema_lexer_free(&p.L);
        arena_free(&a);
        cfx_free(blk);
        return NULL;
    }
    schema_lexer_free(&p.L);
    blk->a = a;
    blk->opaque = p.opaque;
    derive(&blk->schema);
    return &blk->schema;
}

cfx_schema *cfx_schema_parse(const char *text, char **err) { return parse(text, 0, NULL, err); }

cfx_schema *cfx_schema_parse_ex(const char *text, unsigned flags, char **err)
{
    return parse(text, flags, NULL, err);
}

void cfx_schema_free(cfx_schema *s)
{
    if (!s)
        return;
    schema_block *blk = block_of(s);
    arena_free(&blk->a);
    cfx_free(blk);
}

/* Parsing is deterministic, so re-parsing the source gives an identical tree (fresh "$N"
 * sets included) without a second walker over every structure; the names that were opaque
 * types stay opaque even if the registry changed since. */
cfx_schema *cfx_schema_with_name(const cfx_schema *s, const char *name)
{
    if (!s || !name)
        return NULL;
    const schema_block *orig = block_of(s);
    cfx_schema *c = parse(orig->source, orig->flags, &orig->opaque, NULL);
    if (!c)
        return NULL;
    size_t n = strlen(name);
    char *copy = arena_alloc(&block_of(c)->a, n + 1);
    if (!copy) {
        cfx_schema_free(c);
        return NULL;
    }
    memcpy(copy, name, n + 1);
    c->name = copy;
    return c;
}
