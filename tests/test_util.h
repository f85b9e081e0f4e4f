/* test_util.h - helpers shared by the test suites of every layer (tests run from the repo
 * root, so data paths are relative to it). */
#ifndef CFX_TESTS_TEST_UTIL_H
#define CFX_TESTS_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file as a malloc'd NUL-terminated string (NULL if missing or unreadable). */
static inline char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

#endif
