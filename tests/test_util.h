/* test_util.h - helpers shared by the test suites of every layer (tests run from the repo
 * root, so data paths are relative to it). */
#ifndef CFX_TESTS_TEST_UTIL_H
#define CFX_TESTS_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The element count of an array (not a pointer: -Wsizeof-pointer-div catches that). */
#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* xorshift64, the suites' reproducible random numbers: the next value of *state (seeded
 * non-zero), which it also becomes. */
static inline uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

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

/* A golden file of tests/data (tools/interop/golden.py) without its header line
 * "# golden: PyTorch <version>, <script>\n": the body as a malloc'd string, NULL if the file is
 * missing or has no header (every golden must say what produced it). */
/* Runs cmd through the shell and returns its exit status; *out is all it printed on stdout,
 * malloc'd and NUL-terminated (never NULL), or NULL with status -1 when popen fails. */
static inline int test_run_command(const char *cmd, char **out)
{
    *out = NULL;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t len = 0, cap = 4096;
    char *s = malloc(cap);
    size_t n;
    while (s && (n = fread(s + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *t = realloc(s, cap *= 2);
            if (!t)
                free(s);
            s = t;
        }
    }
    int status = pclose(p);
    if (!s)
        return -1;
    s[len] = '\0';
    *out = s;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline char *read_golden(const char *path)
{
    char *s = read_file(path);
    static const char mark[] = "# golden: ";
    char *nl = s && strncmp(s, mark, sizeof mark - 1) == 0 ? strchr(s, '\n') : NULL;
    if (!nl) {
        free(s);
        return NULL;
    }
    memmove(s, nl + 1, strlen(nl + 1) + 1);
    return s;
}

/* Splits text into lines in place (each '\n' becomes a NUL); returns a malloc'd array of the
 * line starts and stores their count in *n (NULL on allocation failure). */
static inline char **split_lines(char *text, size_t *n)
{
    size_t cap = 64, count = 0;
    char **line = malloc(cap * sizeof *line);
    for (char *p = text; line && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (count == cap) {
            char **grown = realloc(line, (cap *= 2) * sizeof *line);
            if (!grown) {
                free(line);
                return NULL;
            }
            line = grown;
        }
        line[count++] = p;
        if (!nl)
            break;
        p = nl + 1;
    }
    *n = count;
    return line;
}

#endif
