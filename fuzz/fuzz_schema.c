/* fuzz_schema.c - libFuzzer target: the schema parser, parse -> print -> parse fixed point.
 *
 * Any input either fails with an error text, or parses; its printed form must parse again
 * and print identically. Exception, as in PyTorch: a string default with bytes >= 0x80 prints
 * through c10's printQuotedString, which escapes a signed char into a malformed octal
 * escape ("\00/" for 0xFF); cfx prints what PyTorch prints, so those need not reparse. Same for
 * an aliased optional in a list (`Tensor(a)?[]` prints `Tensor?(a)[]`, as PyTorch prints it). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

/* True if an alias annotation (or a list element's) holds a parser-made "$N" set. */
static bool fresh_set(const cfx_alias_info *a)
{
    for (; a; a = a->contained)
        for (unsigned i = 0; i < a->n_before; i++)
            if (a->before[i][0] == '$')
                return true;
    return false;
}

/* True if a string default belongs to a type other than str or Device (`int[2]? x="ab"`,
 * `st? m="a"` (Stream)): c10 keeps the literal and prints it unquoted (`x=ab`), which does not
 * parse again; PyTorch 2.13 does the same (seeds fixed_list_string_default, stream_string_default). */
static bool unquoted_string_default(const cfx_schema *s)
{
    for (unsigned i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        if (!a->has_default || a->default_value.kind != CFX_V_STRING)
            continue;
        const cfx_type *t = a->type;
        if (t->kind == CFX_TYPE_OPTIONAL && a->size_hint < 0)
            t = t->elems[0];
        if (a->size_hint >= 0 || (t->kind != CFX_TYPE_STR && t->kind != CFX_TYPE_DEVICE))
            return true;
    }
    return false;
}

/* A string holding a carriage return: c10's printQuotedString prints it as `\r`, an escape its
 * own lexer refuses ("ill formed octal specifier"); PyTorch 2.13 does the same (seed
 * string_default_cr). */
static bool is_cr_string(cfx_value v)
{
    return v.kind == CFX_V_STRING && memchr(v.u.s, '\r', v.len) != NULL;
}

/* A complex number (a tuple of two doubles, see schema_default.c): c10 prints `0j` as `0.+0.j`,
 * which its own lexer refuses ("expected ) but found '+'"); PyTorch 2.13 does the same (test
 * schema/unparsable_prints_like_pytorch). */
static bool is_complex(cfx_value v)
{
    return v.kind == CFX_V_TUPLE && v.len == 2 && v.u.items[0].kind == CFX_V_DOUBLE &&
           v.u.items[1].kind == CFX_V_DOUBLE;
}

static bool holds(cfx_value v, bool (*pred)(cfx_value))
{
    if (pred(v))
        return true;
    if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE)
        for (uint32_t i = 0; i < v.len; i++)
            if (holds(v.u.items[i], pred))
                return true;
    return false;
}

static bool default_holds(const cfx_schema *s, bool (*pred)(cfx_value))
{
    for (unsigned i = 0; i < s->n_args; i++)
        if (s->args[i].has_default && holds(s->args[i].default_value, pred))
            return true;
    return false;
}

static bool has_fresh_set(const cfx_schema *s)
{
    for (unsigned i = 0; i < s->n_args; i++)
        if (fresh_set(s->args[i].type->alias))
            return true;
    for (unsigned i = 0; i < s->n_returns; i++)
        if (fresh_set(s->returns[i].type->alias))
            return true;
    return false;
}

/* The printed form of text parsed again, or NULL if it does not parse. */
static char *reprint(const char *text)
{
    cfx_schema *s = cfx_schema_parse(text, NULL);
    char *p = s ? cfx_schema_to_string(s) : NULL;
    cfx_schema_free(s);
    return p;
}

/* The dispatcher's one-time setup (registering the built-in operators: seconds under ASan and
 * coverage) is done before the first input, so -timeout=1 times inputs, not the setup. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    cfx_dispatcher_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool exempt = false;
    for (size_t i = 0; i < size; i++)
        exempt |= data[i] >= 0x80;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *err = NULL;
    cfx_schema *s = cfx_schema_parse(text, &err);
    free(text);
    if (!s) {
        free(err);
        return 0;
    }
    exempt |= has_fresh_set(s) || unquoted_string_default(s) || default_holds(s, is_cr_string) ||
              default_holds(s, is_complex);
    char *p1 = cfx_schema_to_string(s);
    /* an aliased optional in a list, `Tensor(a)?[]`, prints as `Tensor?(a)[]`, which does not
     * parse: PyTorch 2.13's str(parse_schema(...)) prints the same (seed optional_alias_list) */
    exempt |= p1 && strstr(p1, "?(") != NULL;
    /* a fixed list size beyond int wraps as c10's parser stores it (`T[000...445766447492118756]`
     * prints `T[-477218588]`, refused again): PyTorch 2.13 prints the same (seed list_size_wraps) */
    exempt |= p1 && strstr(p1, "[-") != NULL;
    /* a list of lists of aliased tensors, `Tensor(a!)[][2]`, prints as `Tensor[](!)[2]`, which
     * does not parse: PyTorch 2.13 prints the same (seed nested_list_alias) */
    exempt |= p1 && strstr(p1, "[](") != NULL;
    /* a union of another type with an optional Scalar, `Union(e, Scalar?)?`, prints an empty
     * first member, `Union(, e, Scalar)?`, which does not parse: PyTorch 2.13 prints the same
     * (test schema/unparsable_prints_like_pytorch) */
    exempt |= p1 && strstr(p1, "Union(,") != NULL;
    /* an alias set holding the wildcard and a name, `n(r|*!)`, prints the wildcard first,
     * `n(*|r!)`, which does not parse: PyTorch 2.13 prints the same (test
     * schema/unparsable_prints_like_pytorch) */
    exempt |= p1 && strstr(p1, "(*|") != NULL;
    cfx_schema *s2 = p1 ? cfx_schema_parse(p1, &err) : NULL;
    if (p1 && !s2 && !exempt) {
        fprintf(stderr, "printed schema does not parse: %s\n%s\n", err ? err : "?", p1);
        abort();
    }
    char *p2 = s2 ? cfx_schema_to_string(s2) : NULL;
    if (p1 && p2 && !exempt && strcmp(p1, p2) != 0) {
        /* Two prints settle one round later, as PyTorch 2.13's do: `Scalar??` prints as
         * `Union(Scalar)?`, which reads back as `Scalar?` (seed union_scalar_optional): the
         * third print must be the second; an alias set of several names prints in c10's
         * unordered_set order, which flips on each round (`Tensor(r|a!)` -> `Tensor(a|r!)` ->
         * `Tensor(r|a!)`, test schema/alias_set_order_flips_like_pytorch): the third print must
         * be the first. */
        char *p3 = reprint(p2);
        bool settles = p3 && ((strstr(p1, "Union(") && !strcmp(p2, p3)) || (strchr(p1, '|') && !strcmp(p1, p3)));
        if (!settles) {
            fprintf(stderr, "not a fixed point:\n%s\n%s\n%s\n", p1, p2, p3 ? p3 : "");
            abort();
        }
        free(p3);
    }
    free(err);
    free(p1);
    free(p2);
    cfx_schema_free(s);
    cfx_schema_free(s2);
    return 0;
}
