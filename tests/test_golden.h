/* test_golden.h - comparing a graph's texts with golden files (tests/data/NAME, written by a
 * tools/interop/gen_*.py script): one helper per text, shared by the suites that check
 * str(graph), python_code and print_tabular of the same graph. */
#ifndef CFX_TESTS_TEST_GOLDEN_H
#define CFX_TESTS_TEST_GOLDEN_H

#include <criterion/criterion.h>
#include <unistd.h>

#include "cfx.h"
#include "tests/json_round_trip.h"
#include "tests/test_util.h"

/* The python_code of fn (one Tensor in, one out) traced by make_fx on x in mode: what a test
 * compares with the code 2.13's make_fx prints. malloc'd. */
static inline char *traced_code(cfx_fnptr fn, cfx_tensor *x, cfx_tracing_mode mode)
{
    cfx_value arg = cfx_tensor_value(x);
    cfx_make_fx_options o = {mode};
    cfx_graph_module *gm = cfx_make_fx(fn, "(Tensor x) -> Tensor", &arg, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    char *code = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
    cfx_graph_module_free(gm);
    return code;
}

/* got must equal tests/data/NAME (its header line skipped). */
static inline void expect_golden(const char *name, const char *got)
{
    char path[160];
    snprintf(path, sizeof path, "tests/data/%s", name);
    char *want = read_golden(path);
    cr_assert(want, "missing %s (run its tools/interop/gen_*.py)", path);
    cr_expect_str_eq(got, want, "%s:\n%s\nwant:\n%s", name, got, want);
    free(want);
}

/* str(graph) and graph.print_tabular() against their goldens (NULL: not checked). */
static inline void expect_graph_goldens(const cfx_graph *g, const char *graph_txt, const char *tabular_txt)
{
    if (graph_txt) {
        char *text = cfx_graph_to_string(g);
        expect_golden(graph_txt, text);
        free(text);
        expect_graph_json_round_trip(g, graph_txt);
    }
    if (tabular_txt) {
        cfx_buf b;
        cfx_buf_init(&b);
        cr_assert_eq(cfx_graph_print_tabular(g, &b), CFX_OK, "%s", cfx_error_message());
        char *text = cfx_buf_take(&b);
        expect_golden(tabular_txt, text);
        free(text);
    }
}

/* Generated C (codegen/c.c) compiles, -Wall -Wextra -Werror, against the source tree's
 * headers (syntax and types only: running it needs an installed library, test_c.c's job). */
static inline void expect_c_compiles(const char *c)
{
    char dir[] = "/tmp/cfx-cgen-XXXXXX", path[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/g.c", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(c, f);
    fclose(f);
    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "${CFX_CC:-cc} -std=c11 -Wall -Wextra -Werror -fsyntax-only -I. -Ibuild/gen %s 2>&1",
             path);
    int st = test_run_command(cmd, &out);
    cr_expect_eq(st, 0, "status %d: %s\n%s\n%s", st, cmd, out ? out : "", c);
    free(out);
    unlink(path);
    rmdir(dir);
}

#endif
