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
    exempt |= has_fresh_set(s);
    char *p1 = cfx_schema_to_string(s);
    /* an aliased optional in a list, `Tensor(a)?[]`, prints as `Tensor?(a)[]`, which does not
     * parse: PyTorch 2.13's str(parse_schema(...)) prints the same (seed optional_alias_list) */
    exempt |= p1 && strstr(p1, "?(") != NULL;
    /* a fixed list size beyond int wraps as c10's parser stores it (`T[000...445766447492118756]`
     * prints `T[-477218588]`, refused again): PyTorch 2.13 prints the same (seed list_size_wraps) */
    exempt |= p1 && strstr(p1, "[-") != NULL;
    cfx_schema *s2 = p1 ? cfx_schema_parse(p1, &err) : NULL;
    if (p1 && !s2 && !exempt) {
        fprintf(stderr, "printed schema does not parse: %s\n%s\n", err ? err : "?", p1);
        abort();
    }
    char *p2 = s2 ? cfx_schema_to_string(s2) : NULL;
    if (p1 && p2 && !exempt && strcmp(p1, p2) != 0) {
        fprintf(stderr, "not a fixed point:\n%s\n%s\n", p1, p2);
        abort();
    }
    free(err);
    free(p1);
    free(p2);
    cfx_schema_free(s);
    cfx_schema_free(s2);
    return 0;
}
