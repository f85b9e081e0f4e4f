/* golden_blocks.h - reading "@@@ NAME KIND" blocks of a golden text file (the format of
 * tests/data/functionalize.txt and effects.txt): the text up to the next block line. */
#ifndef CFX_TESTS_GOLDEN_BLOCKS_H
#define CFX_TESTS_GOLDEN_BLOCKS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_util.h"

/* The block (malloc'd), or NULL if the file or the block is missing. */
static inline char *golden_block(const char *path, const char *name, const char *kind)
{
    char *all = read_golden(path);
    if (!all)
        return NULL;
    char head[160];
    snprintf(head, sizeof head, "@@@ %s %s\n", name, kind);
    char *p = !strncmp(all, head, strlen(head)) ? all : NULL;
    if (!p) {
        char nhead[162];
        snprintf(nhead, sizeof nhead, "\n%s", head);
        if ((p = strstr(all, nhead)))
            p++;
    }
    char *out = NULL;
    if (p) {
        p += strlen(head);
        char *end = strstr(p, "\n@@@ ");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (!end && n && p[n - 1] == '\n')
            n--;
        out = strndup(p, n);
    }
    free(all);
    return out;
}

#endif
