/* schema_union.c - what Optional and Union types become: c10's type relations, as far as
 * schemas need them.
 *
 * In c10 (union_type.cpp, type.cpp) an Optional is a Union with None, and building either
 * one standardizes its members: nested unions and optionals are flattened (Scalar becomes
 * int, float and complex), members that unify are merged (int and Scalar are Scalar,
 * (int, None) and (int, int) are (int, int?)), and the rest is sorted by c10's TypeKind order,
 * then by printed name. A union left with one member is an INTERNAL ASSERT in c10, which is
 * how PyTorch rejects "None?" and "Union(int, int)"; a union of T and None is T?. Schemas
 * print the result ("Union(str, None, int)" prints "Union(int, NoneType, str)"), so cfx
 * builds types the same way, with the same equality, subtyping and unification rules.
 *
 * The relations recurse over the two types compared, as c10's do; a type nested deeper than
 * MAX_DEPTH stops the parse with a cfx message instead of exhausting the stack. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

#define MAX_DEPTH 256

/* c10's TypeKind order (C10_FORALL_TYPES in 2.13), which sorts union members. */
static const uint8_t c10_kind[CFX_TYPE_KIND_COUNT] = {
    [CFX_TYPE_ANY] = 0,        [CFX_TYPE_ANY_ENUM] = 2,       [CFX_TYPE_TENSOR] = 3,
    [CFX_TYPE_STORAGE] = 4,    [CFX_TYPE_TUPLE] = 5,          [CFX_TYPE_LIST] = 6,
    [CFX_TYPE_DICT] = 7,       [CFX_TYPE_SCALAR] = 8,         [CFX_TYPE_FLOAT] = 9,
    [CFX_TYPE_COMPLEX] = 10,   [CFX_TYPE_FUTURE] = 11,        [CFX_TYPE_AWAIT] = 12,
    [CFX_TYPE_RREF] = 13,      [CFX_TYPE_INT] = 14,           [CFX_TYPE_NONE] = 15,
    [CFX_TYPE_STR] = 16,       [CFX_TYPE_GENERATOR] = 17,     [CFX_TYPE_QUANTIZER] = 18,
    [CFX_TYPE_BOOL] = 19,      [CFX_TYPE_OPTIONAL] = 20,      [CFX_TYPE_VAR] = 21,
    [CFX_TYPE_DEVICE] = 22,    [CFX_TYPE_STREAM] = 23,        [CFX_TYPE_CLASS] = 25,
    [CFX_TYPE_PYOBJECT] = 26,  [CFX_TYPE_CAPSULE] = 27,       [CFX_TYPE_QSCHEME] = 29,
    [CFX_TYPE_SCALAR_TYPE] = 30, [CFX_TYPE_LAYOUT] = 31,      [CFX_TYPE_MEMORY_FORMAT] = 32,
    [CFX_TYPE_ANY_CLASS] = 35, [CFX_TYPE_SYMINT] = 36,        [CFX_TYPE_SYMBOOL] = 38,
    [CFX_TYPE_UNION] = 39,
};
_Static_assert(CFX_TYPE_KIND_COUNT == 35, "a new type kind needs its place in c10_kind");

/* The singletons that flattening produces. */
static const cfx_type int_type = {.kind = CFX_TYPE_INT};
static const cfx_type float_type = {.kind = CFX_TYPE_FLOAT};
static const cfx_type complex_type = {.kind = CFX_TYPE_COMPLEX};
static const cfx_type none_type = {.kind = CFX_TYPE_NONE};
static const cfx_type number_type = {.kind = CFX_TYPE_SCALAR};
static const cfx_type *const number_parts[3] = {&int_type, &float_type, &complex_type};

static bool too_deep(schema_parser *p, unsigned depth)
{
    if (depth < MAX_DEPTH)
        return false;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "schema types are nested too deeply to compare (more than %d levels)", MAX_DEPTH);
    schema_error_buf(p, &b);
    return true;
}

/* ------------------------------------------------------------------ relations */

static bool subtype(schema_parser *p, const cfx_type *a, const cfx_type *b, unsigned depth);

/* UnionType::canHoldType; a union's members are flat, so Number is int, float and complex. */
static bool can_hold(schema_parser *p, const cfx_type *u, const cfx_type *t, unsigned depth)
{
    if (t->kind == CFX_TYPE_SCALAR) {
        for (int i = 0; i < 3; i++)
            if (!can_hold(p, u, number_parts[i], depth))
                return false;
        return true;
    }
    for (uint16_t i = 0; i < u->n_elems; i++)
        if (subtype(p, t, u->elems[i], depth + 1))
            return true;
    return false;
}

/* c10's operator== (Type::equals). Type variables are all equal to each other, as in c10; a
 * union of int, float and complex equals Scalar. */
static bool equal(schema_parser *p, const cfx_type *a, const cfx_type *b, unsigned depth)
{
    if (a == b)
        return true;
    if (too_deep(p, depth))
        return false;
    if ((a->kind == CFX_TYPE_SCALAR && b->kind == CFX_TYPE_UNION) ||
        (a->kind == CFX_TYPE_UNION && b->kind == CFX_TYPE_SCALAR)) {
        const cfx_type *u = a->kind == CFX_TYPE_UNION ? a : b;
        return u->n_elems == 3 && can_hold(p, u, &number_type, depth);
    }
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case CFX_TYPE_CLASS:
        return strcmp(a->name ? a->name : "", b->name ? b->name : "") == 0;
    case CFX_TYPE_LIST:
    case CFX_TYPE_OPTIONAL:
    case CFX_TYPE_FUTURE:
    case CFX_TYPE_AWAIT:
    case CFX_TYPE_RREF:
    case CFX_TYPE_TUPLE:
    case CFX_TYPE_DICT:
        if (a->n_elems != b->n_elems)
            return false;
        for (uint16_t i = 0; i < a->n_elems; i++)
            if (!equal(p, a->elems[i], b->elems[i], depth + 1))
                return false;
        return true;
    case CFX_TYPE_UNION:
        if (a->n_elems != b->n_elems)
            return false;
        for (uint16_t i = 0; i < a->n_elems; i++) {
            bool found = false;
            for (uint16_t j = 0; j < b->n_elems && !found; j++)
                found = equal(p, a->elems[i], b->elems[j], depth + 1);
            if (!found)
                return false;
        }
        return true;
    default:
        return true; /* base kinds, type variables */
    }
}

/* Type::isSubtypeOfExt, the rule every type falls back to. */
static bool base_subtype(schema_parser *p, const cfx_type *a, const cfx_type *b, unsigned depth)
{
    if (b->kind == CFX_TYPE_ANY || equal(p, a, b, depth))
        return true;
    if (b->kind == CFX_TYPE_OPTIONAL)
        return subtype(p, a, b->elems[0], depth + 1);
    if (b->kind == CFX_TYPE_UNION)
        for (uint16_t i = 0; i < b->n_elems; i++)
            if (subtype(p, a, b->elems[i], depth + 1))
                return true;
    return false;
}

/* a <: b, with the overrides of each c10 type. */
static bool subtype(schema_parser *p, const cfx_type *a, const cfx_type *b, unsigned depth)
{
    if (too_deep(p, depth))
        return false;
    switch (a->kind) {
    case CFX_TYPE_NONE:
        return b->kind == CFX_TYPE_OPTIONAL || base_subtype(p, a, b, depth);
    case CFX_TYPE_INT:
    case CFX_TYPE_FLOAT:
    case CFX_TYPE_COMPLEX:
        return b->kind == CFX_TYPE_SCALAR || base_subtype(p, a, b, depth);
    case CFX_TYPE_SCALAR:
        if (b->kind == CFX_TYPE_UNION)
            return can_hold(p, b, &number_type, depth);
        return base_subtype(p, a, b, depth);
    case CFX_TYPE_UNION: {
        /* every member must fit one of b's (an optional or Scalar b counts as its parts) */
        const cfx_type *const *rhs = &b;
        const cfx_type *opt[4] = {&none_type};
        size_t n_rhs = 1;
        if (b->kind == CFX_TYPE_UNION) {
            rhs = b->elems;
            n_rhs = b->n_elems;
        } else if (b->kind == CFX_TYPE_OPTIONAL) {
            if (b->elems[0]->kind == CFX_TYPE_SCALAR) {
                memcpy(opt + 1, number_parts, sizeof number_parts);
                n_rhs = 4;
            } else {
                opt[1] = b->elems[0];
                n_rhs = 2;
            }
            rhs = opt;
        } else if (b->kind == CFX_TYPE_SCALAR) {
            rhs = number_parts;
            n_rhs = 3;
        }
        for (uint16_t i = 0; i < a->n_elems; i++) {
            bool fits = false;
            for (size_t j = 0; j < n_rhs && !fits; j++)
                fits = subtype(p, a->elems[i], rhs[j], depth + 1);
            if (!fits)
                return false;
        }
        return true;
    }
    case CFX_TYPE_OPTIONAL:
        if (b->kind == CFX_TYPE_OPTIONAL)
            return subtype(p, a->elems[0], b->elems[0], depth + 1);
        if (b->kind == CFX_TYPE_UNION)
            return can_hold(p, b, &none_type, depth) && can_hold(p, b, a->elems[0], depth);
        return base_subtype(p, a, b, depth);
    case CFX_TYPE_TUPLE:
        if (base_subtype(p, a, b, depth))
            return true;
        if (b->kind != CFX_TYPE_TUPLE || a->n_elems != b->n_elems)
            return false;
        for (uint16_t i = 0; i < a->n_elems; i++)
            if (!subtype(p, a->elems[i], b->elems[i], depth + 1))
                return false;
        return true;
    case CFX_TYPE_FUTURE:
    case CFX_TYPE_AWAIT:
        if (base_subtype(p, a, b, depth))
            return true;
        return b->kind == a->kind && subtype(p, a->elems[0], b->elems[0], depth + 1);
    case CFX_TYPE_CLASS:
        return b->kind == CFX_TYPE_ANY_CLASS || base_subtype(p, a, b, depth);
    default:
        return base_subtype(p, a, b, depth);
    }
}

static const cfx_type *optional_of(schema_parser *p, const cfx_type *t, unsigned depth);

/* unifyTypes(t1, t2) without a union fallback: the common supertype, or NULL. */
static const cfx_type *unify(schema_parser *p, const cfx_type *t1, const cfx_type *t2, unsigned depth)
{
    if (too_deep(p, depth))
        return NULL;
    if (subtype(p, t1, t2, depth + 1))
        return t2;
    if (subtype(p, t2, t1, depth + 1))
        return t1;
    bool none1 = subtype(p, t1, &none_type, depth + 1), none2 = subtype(p, t2, &none_type, depth + 1);
    if (none1 && !none2)
        return optional_of(p, t2, depth + 1);
    if (none2 && !none1)
        return optional_of(p, t1, depth + 1);
    if (t1->kind == CFX_TYPE_OPTIONAL || t2->kind == CFX_TYPE_OPTIONAL) {
        const cfx_type *opt = t1->kind == CFX_TYPE_OPTIONAL ? t1 : t2, *other = opt == t1 ? t2 : t1;
        const cfx_type *elem = unify(p, opt->elems[0], other, depth + 1);
        return elem ? optional_of(p, elem, depth + 1) : NULL;
    }
    if (t1->kind == CFX_TYPE_TUPLE && t2->kind == CFX_TYPE_TUPLE) {
        if (t1->n_elems != t2->n_elems)
            return NULL;
        const cfx_type **elems = schema_alloc(p, (t1->n_elems ? t1->n_elems : 1) * sizeof *elems);
        if (!elems)
            return NULL;
        for (uint16_t i = 0; i < t1->n_elems; i++)
            if (!(elems[i] = unify(p, t1->elems[i], t2->elems[i], depth + 1)))
                return NULL;
        cfx_type *t = schema_new_type(p, CFX_TYPE_TUPLE);
        if (t != &p->dummy_type) {
            t->elems = elems;
            t->n_elems = t1->n_elems;
        }
        return t;
    }
    if (t1->kind == CFX_TYPE_FUTURE && t2->kind == CFX_TYPE_FUTURE) {
        const cfx_type *elem = unify(p, t1->elems[0], t2->elems[0], depth + 1);
        return elem ? schema_new_type1(p, CFX_TYPE_FUTURE, elem) : NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------ standardizing */

typedef struct type_vec {
    const cfx_type **v;
    size_t n, cap;
} type_vec;

static bool push(schema_parser *p, type_vec *out, const cfx_type *t)
{
    if (out->n == UINT16_MAX) {
        schema_error_plain(&p->L, "too many types in a union");
        return false;
    }
    if (!schema_grow(p, &out->v, &out->cap, out->n, sizeof *out->v))
        return false;
    out->v[out->n++] = t;
    return true;
}

/* flattenUnion. A union's or optional's members are flat already, so this stays shallow. */
static void flatten(schema_parser *p, const cfx_type *t, type_vec *out, unsigned depth)
{
    if (too_deep(p, depth))
        return;
    switch (t->kind) {
    case CFX_TYPE_UNION:
        for (uint16_t i = 0; i < t->n_elems; i++)
            flatten(p, t->elems[i], out, depth + 1);
        break;
    case CFX_TYPE_OPTIONAL:
        flatten(p, t->elems[0], out, depth + 1);
        push(p, out, &none_type);
        break;
    case CFX_TYPE_SCALAR:
        for (int i = 0; i < 3; i++)
            push(p, out, number_parts[i]);
        break;
    default:
        push(p, out, t);
    }
}

/* filterDuplicateSubtypes, step for step: from the right, each member is unified with the
 * ones before it; a match replaces the earlier one and the member is dropped. None is never
 * unified with anything but None (that would nest optionals). */
static void merge_duplicates(schema_parser *p, type_vec *types, unsigned depth)
{
    if (types->n == 0)
        return;
    const cfx_type **v = types->v;
    size_t end = types->n - 1;
    for (size_t i = types->n - 1; i > 0 && !schema_failed(&p->L); --i) {
        for (size_t j = i - 1 < end ? i - 1 : end;; --j) {
            bool none_i = subtype(p, v[i], &none_type, depth), none_j = subtype(p, v[j], &none_type, depth);
            const cfx_type *u = none_i == none_j ? unify(p, v[i], v[j], depth) : NULL;
            if (u) {
                v[j] = u;
                v[i] = v[end];
                --end;
                break;
            }
            if (j == 0)
                break;
        }
    }
    types->n = end + 1;
}

typedef struct sort_key {
    const cfx_type *t;
    char *str;
    size_t order;
} sort_key;

static int by_kind_then_str(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    int kx = c10_kind[x->t->kind], ky = c10_kind[y->t->kind];
    if (kx != ky)
        return kx < ky ? -1 : 1;
    int c = strcmp(x->str, y->str);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* sortUnion: by c10 kind, then by Type::str(). */
static void sort_members(schema_parser *p, type_vec *types)
{
    size_t n = types->n;
    sort_key *keys = cfx_calloc(n ? n : 1, sizeof *keys);
    bool ok = keys != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        cfx_buf b;
        cfx_buf_init(&b);
        schema_type_write(types->v[i], false, &b);
        keys[i] = (sort_key){types->v[i], cfx_buf_take(&b), i};
        ok = keys[i].str != NULL;
    }
    if (ok) {
        qsort(keys, n, sizeof *keys, by_kind_then_str);
        for (size_t i = 0; i < n; i++)
            types->v[i] = keys[i].t;
    } else {
        schema_error_nomem(&p->L);
    }
    for (size_t i = 0; keys && i < n; i++)
        cfx_free(keys[i].str);
    cfx_free(keys);
}

/* c10's repr_str(), as the INTERNAL ASSERT below prints it. */
static void write_repr(const cfx_type *t, cfx_buf *b)
{
    schema_type_write(t, true, b);
    if (t->kind == CFX_TYPE_CLASS)
        cfx_buf_puts(b, " (of Python compilation unit at: 0)");
}

/* The UnionType constructor: standardize, and refuse a union of one type. */
static bool standardize(schema_parser *p, const cfx_type *const *ref, size_t n, type_vec *out, unsigned depth)
{
    for (size_t i = 0; i < n; i++)
        flatten(p, ref[i], out, depth + 1);
    merge_duplicates(p, out, depth + 1);
    if (schema_failed(&p->L))
        return false;
    sort_members(p, out);
    if (out->n != 1)
        return !schema_failed(&p->L);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "false INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/core/union_type.cpp\":210, "
                     "please report a bug to PyTorch. After type unification was performed, the Union with the "
                     "original types {");
    for (size_t i = 0; i < n; i++) {
        write_repr(ref[i], &b);
        if (i > 0)
            cfx_buf_putc(&b, ',');
        cfx_buf_putc(&b, ' ');
    }
    cfx_buf_puts(&b, "} has the single type ");
    write_repr(out->v[0], &b);
    cfx_buf_puts(&b, ". Use the common supertype instead of creating a Uniontype");
    schema_error_buf(p, &b);
    return false;
}

static cfx_type *make_node(schema_parser *p, int kind, const cfx_type **elems, size_t n)
{
    cfx_type *t = schema_new_type(p, kind);
    if (t != &p->dummy_type) {
        t->elems = elems;
        t->n_elems = (uint16_t)n;
    }
    return t;
}

/* UnionType::create: a union that is T and None is T?, and int, float, complex and None
 * is Scalar?. */
static const cfx_type *union_of(schema_parser *p, const cfx_type *const *ref, size_t n, unsigned depth)
{
    type_vec v = {0};
    if (too_deep(p, depth) || !standardize(p, ref, n, &v, depth))
        return &p->dummy_type;
    int none_at = -1, numbers = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.v[i]->kind == CFX_TYPE_NONE)
            none_at = (int)i;
        numbers |= v.v[i]->kind == CFX_TYPE_INT ? 1 : v.v[i]->kind == CFX_TYPE_FLOAT ? 2
                 : v.v[i]->kind == CFX_TYPE_COMPLEX ? 4 : 0;
    }
    if (none_at >= 0 && v.n == 4 && numbers == 7)
        return optional_of(p, &number_type, depth + 1);
    if (none_at >= 0 && v.n == 2)
        return optional_of(p, v.v[1 - none_at], depth + 1);
    return make_node(p, CFX_TYPE_UNION, v.v, v.n);
}

/* OptionalType::create: the members of T and None, standardized; the optional's element is
 * the one member besides None, or Scalar, or a union of the members besides None. */
static const cfx_type *optional_of(schema_parser *p, const cfx_type *t, unsigned depth)
{
    if (too_deep(p, depth))
        return &p->dummy_type;
    switch (t->kind) {
    case CFX_TYPE_NONE:
    case CFX_TYPE_OPTIONAL:
    case CFX_TYPE_UNION:
    case CFX_TYPE_SCALAR:
        break;
    default: /* nothing to flatten or merge: T? is T and None */
        return schema_new_type1(p, CFX_TYPE_OPTIONAL, t);
    }
    const cfx_type *ref[2] = {t, &none_type};
    type_vec v = {0};
    if (!standardize(p, ref, 2, &v, depth))
        return &p->dummy_type;
    const cfx_type *elem;
    if (v.n == 2) {
        elem = v.v[0]->kind != CFX_TYPE_NONE ? v.v[0] : v.v[1];
    } else if (t->kind == CFX_TYPE_SCALAR ||
               (t->kind == CFX_TYPE_UNION && t->n_elems == 3 && can_hold(p, t, &number_type, depth))) {
        elem = &number_type;
    } else {
        /* c10 subtracts None, makes a union of the rest, then a union of that */
        type_vec rest = {0};
        for (size_t i = 0; i < v.n; i++)
            if (!subtype(p, v.v[i], &none_type, depth + 1))
                push(p, &rest, v.v[i]);
        const cfx_type *without_none = rest.n == 1 ? rest.v[0] : union_of(p, rest.v, rest.n, depth + 1);
        elem = union_of(p, &without_none, 1, depth + 1);
    }
    return schema_new_type1(p, CFX_TYPE_OPTIONAL, elem);
}

cfx_type *schema_make_optional(schema_parser *p, const cfx_type *t)
{
    return (cfx_type *)optional_of(p, t, 0);
}

cfx_type *schema_make_union(schema_parser *p, const cfx_type *const *types, size_t n)
{
    return (cfx_type *)union_of(p, types, n, 0);
}

const cfx_type *schema_fake_type(schema_parser *p, const cfx_type *t)
{
    const cfx_type *base = t;
    size_t chain = 0;
    while ((base->kind == CFX_TYPE_LIST || base->kind == CFX_TYPE_OPTIONAL) && base->n_elems == 1) {
        base = base->elems[0];
        chain++;
    }
    switch (base->kind) {
    case CFX_TYPE_SYMINT:
    case CFX_TYPE_SCALAR_TYPE:
    case CFX_TYPE_LAYOUT:
    case CFX_TYPE_MEMORY_FORMAT:
        break;
    default:
        return t;
    }
    /* rebuild the wrappers around int; the original nodes may be shared */
    const cfx_type **wrappers = cfx_malloc((chain ? chain : 1) * sizeof *wrappers);
    if (!wrappers) {
        schema_error_nomem(&p->L);
        return t;
    }
    const cfx_type *w = t;
    for (size_t i = 0; i < chain; i++, w = w->elems[0])
        wrappers[i] = w;
    const cfx_type *fake = &int_type;
    for (size_t i = chain; i-- > 0;)
        fake = schema_new_type1(p, wrappers[i]->kind, fake);
    cfx_free(wrappers);
    return fake;
}
