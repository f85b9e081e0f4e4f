/* test_api_boundary.c - libcfx.so exports its public API and nothing else.
 *
 * The public headers are cfx.h and what it includes, transitively (the generated ops_gen.h
 * among them); the installed set is the same closure (scripts/public-headers.sh). Here:
 *  - every symbol libcfx.so exports is a cfx_ name declared with CFX_API in a public header,
 *    and every such declaration is exported (nm -D);
 *  - no thread-local variable is exported (readelf);
 *  - no public header includes an internal one;
 *  - a program using only the public headers (tests/data/api_user/main.c) compiles against a
 *    copy of them, links with libcfx.so and runs. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test_util.h"

#define MAX_HEADERS 64
#define MAX_NAMES 2048

typedef struct names {
    char *v[MAX_NAMES];
    int n;
} names;

static void names_add(names *s, const char *p, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (strlen(s->v[i]) == len && strncmp(s->v[i], p, len) == 0)
            return;
    cr_assert_lt(s->n, MAX_NAMES);
    s->v[s->n++] = strndup(p, len);
}

static bool names_has(const names *s, const char *p)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], p) == 0)
            return true;
    return false;
}

static void names_free(names *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

/* The build directory the tests were built in (CFX_BIN's). */
static void build_dir(char *out, size_t n)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", bin);
    snprintf(out, n, "%s", dirname(tmp));
}

/* The public header closure, as scripts/public-headers.sh prints it (include names). */
static void public_headers(names *h)
{
    char dir[512], cmd[700];
    build_dir(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "sh scripts/public-headers.sh %s", dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char line[512];
    while (fgets(line, sizeof line, p))
        names_add(h, line, strcspn(line, "\n"));
    cr_assert_eq(pclose(p), 0, "scripts/public-headers.sh failed");
    cr_assert_gt(h->n, 10);
    cr_assert(names_has(h, "cfx.h") && names_has(h, "dispatch/ops_gen.h"));
}

static char *header_text(const char *name)
{
    char dir[512], path[700];
    build_dir(dir, sizeof dir);
    char *s = read_file(name);
    if (!s) {
        snprintf(path, sizeof path, "%s/gen/%s", dir, name);
        s = read_file(path);
    }
    cr_assert(s, "cannot read %s", name);
    return s;
}

/* The names declared with CFX_API in s: the identifier before the first '(' of a function
 * declaration, or the last identifier of a data declaration. */
static void declared_names(const char *s, names *out)
{
    for (const char *p = strstr(s, "CFX_API "); p; p = strstr(p + 1, "CFX_API ")) {
        if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        if (p - s >= 8 && strncmp(p - 8, "#define ", 8) == 0)
            continue; /* export.h's definition */
        const char *end = p + strcspn(p, ";(");
        if (*end == ';' || strncmp(p, "CFX_API extern", 14) == 0) {
            const char *q = p + strcspn(p, ";[");
            while (q > p && !(isalnum((unsigned char)q[-1]) || q[-1] == '_'))
                q--;
            const char *b = q;
            while (b > p && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
                b--;
            names_add(out, b, (size_t)(q - b));
            continue;
        }
        const char *q = end;
        while (q > p && q[-1] == ' ')
            q--;
        const char *b = q;
        while (b > p && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
            b--;
        names_add(out, b, (size_t)(q - b));
    }
}

static void exported_names(names *out, bool tls_only)
{
    char dir[512], cmd[800];
    build_dir(dir, sizeof dir);
    if (tls_only)
        snprintf(cmd, sizeof cmd, "readelf --dyn-syms -W %s/libcfx.so | awk '$4 == \"TLS\" && $7 != \"UND\" {print $8}'", dir);
    else
        snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/libcfx.so | awk '{print $3}'", dir);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char line[512];
    while (fgets(line, sizeof line, p))
        /* ASan's instrumentation adds its own symbols (__odr_asan.<global>); they are not ours. */
        if (line[0] != '\n' && strncmp(line, "__odr_asan", 10) != 0 && strncmp(line, "__asan", 6) != 0)
            names_add(out, line, strcspn(line, "\n"));
    cr_assert_eq(pclose(p), 0, "%s failed", cmd);
}

Test(api_boundary, exports_are_the_public_declarations)
{
    names headers = {0}, declared = {0}, exported = {0};
    public_headers(&headers);
    for (int i = 0; i < headers.n; i++) {
        char *s = header_text(headers.v[i]);
        declared_names(s, &declared);
        free(s);
    }
    exported_names(&exported, false);
    cr_assert_gt(exported.n, 100, "libcfx.so exports almost nothing");
    for (int i = 0; i < exported.n; i++) {
        cr_expect(strncmp(exported.v[i], "cfx_", 4) == 0, "libcfx.so exports %s, not a cfx_ name", exported.v[i]);
        cr_expect(names_has(&declared, exported.v[i]),
                  "libcfx.so exports %s, which no public header declares with CFX_API", exported.v[i]);
    }
    for (int i = 0; i < declared.n; i++)
        cr_expect(names_has(&exported, declared.v[i]),
                  "%s is declared CFX_API in a public header but libcfx.so does not export it", declared.v[i]);
    names_free(&headers);
    names_free(&declared);
    names_free(&exported);
}

Test(api_boundary, no_thread_local_is_exported)
{
    names tls = {0};
    exported_names(&tls, true);
    for (int i = 0; i < tls.n; i++)
        cr_expect_fail("libcfx.so exports the thread-local %s", tls.v[i]);
    names_free(&tls);
}

Test(api_boundary, public_headers_include_no_internal_header)
{
    names headers = {0};
    public_headers(&headers);
    for (int i = 0; i < headers.n; i++) {
        cr_expect(!strstr(headers.v[i], "internal"), "%s is internal but a public header includes it", headers.v[i]);
        char *s = header_text(headers.v[i]);
        cr_expect(!strstr(s, "#include <cjson/") && !strstr(s, "#include <ffi.h>"),
                  "%s includes a dependency's header: users would need its -dev package", headers.v[i]);
        free(s);
    }
    names_free(&headers);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(api_boundary, a_program_on_the_public_headers_runs_with_the_shared_library)
{
    const char *cc = getenv("CFX_CC"), *cflags = getenv("CFX_USER_CFLAGS"), *libs = getenv("CFX_USER_LIBS");
    cr_assert(cc && cflags && libs, "CFX_CC / CFX_USER_CFLAGS / CFX_USER_LIBS are not set (make test sets them)");
    char dir[512], tmp[] = "/tmp/cfx-api-XXXXXX";
    build_dir(dir, sizeof dir);
    cr_assert(mkdtemp(tmp));
    names headers = {0};
    public_headers(&headers);
    for (int i = 0; i < headers.n; i++) {
        char from[700], to[700];
        snprintf(from, sizeof from, "%s", headers.v[i]);
        if (access(from, R_OK) != 0)
            snprintf(from, sizeof from, "%s/gen/%s", dir, headers.v[i]);
        snprintf(to, sizeof to, "%s/include/%s", tmp, headers.v[i]);
        copy_file(from, to);
    }
    names_free(&headers);
    char abs[1024], cwd[512], cmd[4096];
    cr_assert(getcwd(cwd, sizeof cwd));
    snprintf(abs, sizeof abs, "%s%s%s", dir[0] == '/' ? "" : cwd, dir[0] == '/' ? "" : "/", dir);
    snprintf(cmd, sizeof cmd,
             "%s %s -std=c11 -Wall -Wextra -Werror -I%s/include tests/data/api_user/main.c -o %s/user "
             "-L%s -Wl,-rpath,%s -lcfx %s 2> %s/cc.log",
             cc, cflags, tmp, tmp, abs, abs, libs, tmp);
    int rc = system(cmd);
    char log[700];
    snprintf(log, sizeof log, "%s/cc.log", tmp);
    char *cc_log = read_file(log);
    cr_assert_eq(rc, 0, "the API user does not build against the public headers:\n%s\n%s", cmd, cc_log ? cc_log : "");
    free(cc_log);
    snprintf(cmd, sizeof cmd, "%s/user > %s/out.txt 2>&1", tmp, tmp);
    rc = system(cmd);
    snprintf(log, sizeof log, "%s/out.txt", tmp);
    char *out = read_file(log);
    cr_assert(out);
    cr_expect_eq(rc, 0, "the API user failed:\n%s", out);
    cr_expect(strstr(out, "torch.ops.aten.relu.default"), "unexpected graph:\n%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    cr_expect_eq(system(cmd), 0);
}
