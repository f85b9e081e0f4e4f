/* value_golden.h - reading the tab-separated golden files of tools/interop/gen_value_goldens.py.
 *
 * Each line is one case; fields are separated by tabs; "\n", "\t" and "\\" inside a field are
 * escaped. golden_open() loads a whole file without its golden header (read_golden: a file
 * without one is refused), golden_next() yields the fields of one line. */
#ifndef CFX_TESTS_VALUE_GOLDEN_H
#define CFX_TESTS_VALUE_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/test_util.h"

#define GOLDEN_MAX_FIELDS 8

typedef struct golden {
    char *text; /* whole file, split in place */
    char *cur;
    char *field[GOLDEN_MAX_FIELDS];
    int nfields;
} golden;

static inline bool golden_open(golden *g, const char *path)
{
    memset(g, 0, sizeof *g);
    g->text = read_golden(path);
    g->cur = g->text;
    return g->text != NULL;
}

static inline void golden_close(golden *g) { free(g->text); }

/* Undoes the escaping of one field in place. */
static inline void golden_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r == '\\' && r[1]) {
            r++;
            *w++ = *r == 'n' ? '\n' : *r == 't' ? '\t' : *r;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static inline bool golden_next(golden *g)
{
    if (!g->cur || !*g->cur)
        return false;
    char *line = g->cur;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        g->cur = nl + 1;
    } else {
        g->cur = line + strlen(line);
    }
    g->nfields = 0;
    char *p = line;
    for (;;) {
        char *tab = strchr(p, '\t');
        if (tab)
            *tab = '\0';
        if (g->nfields < GOLDEN_MAX_FIELDS)
            g->field[g->nfields++] = p;
        if (!tab)
            break;
        p = tab + 1;
    }
    for (int i = 0; i < g->nfields; i++)
        golden_unescape(g->field[i]);
    return true;
}

/* "2,3" -> {2, 3}; "-" -> no dims. Returns the count. */
static inline int golden_dims(const char *s, int64_t *out, int cap)
{
    if (strcmp(s, "-") == 0)
        return 0;
    int n = 0;
    while (*s && n < cap) {
        char *end;
        out[n++] = strtoll(s, &end, 10);
        if (*end != ',')
            break;
        s = end + 1;
    }
    return n;
}

/* Hex string -> bytes (NUL-terminated); "-" is the empty string. Returns the length. */
static inline size_t golden_hex(const char *s, char *out)
{
    size_t n = 0;
    if (strcmp(s, "-") != 0)
        for (; s[0] && s[1]; s += 2) {
            char h[3] = {s[0], s[1], 0};
            out[n++] = (char)strtol(h, NULL, 16);
        }
    out[n] = '\0';
    return n;
}

#endif
