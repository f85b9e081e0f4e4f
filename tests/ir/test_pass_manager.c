/* test_pass_manager.c - the pass registry, pipelines and their instrumentation
 * (ir/passes/manager.h): registration by a C user, pipeline errors, verify-each naming the pass
 * that broke the graph, print-after / print-changed dumps, the time-passes table and the
 * progress line. Dumps and reports are written to temporary files and read back. */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

#define NV(n) cfx_node_value(n)
#define VALS(...) ((cfx_value[]){__VA_ARGS__})

/* x -> relu -> cos, plus a dead sin and a duplicate relu: dce and cse both have work. */
static cfx_graph_module *small_module(void)
{
    cfx_dispatcher_init();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    const cfx_op *relu = cfx_op_find("aten::relu"), *cos = cfx_op_find("aten::cos"), *sin = cfx_op_find("aten::sin");
    cfx_node *a = cfx_graph_call_op(g, relu, VALS(NV(x)), 1, NULL, 0);
    cfx_node *b = cfx_graph_call_op(g, relu, VALS(NV(x)), 1, NULL, 0);
    cfx_graph_call_op(g, sin, VALS(NV(x)), 1, NULL, 0);
    cfx_node *c = cfx_graph_call_op(g, cos, VALS(NV(b)), 1, NULL, 0);
    cr_assert(cfx_graph_output(g, cfx_tuple(VALS(NV(a), NV(c)), 2)));
    return cfx_graph_module_new(g, NULL);
}

/* The contents written to f so far, malloc'd. */
static char *slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    return s;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static int calls;
static int counting_pass(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)gm;
    calls += *(int *)ctx;
    *changed = false;
    return CFX_OK;
}

static int failing_pass(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)gm;
    (void)ctx;
    (void)changed;
    return cfx_error_set(CFX_ERR, NULL, "boom");
}

/* Moves the output node first: the graph no longer lints. */
static int breaking_pass(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    cfx_graph *g = cfx_graph_module_graph(gm);
    *changed = true;
    return cfx_node_prepend(cfx_graph_first(g), cfx_graph_output_node(g));
}

Test(pass_manager, a_c_user_registers_a_pass)
{
    int before = cfx_pass_count();
    int step = 3;
    cr_assert_eq(cfx_pass_register("count-me", "counts its runs", counting_pass, &step), CFX_OK);
    cr_expect_eq(cfx_pass_count(), before + 1);
    cr_expect_str_eq(cfx_pass_name(before), "count-me");
    cr_expect_str_eq(cfx_pass_description(before), "counts its runs");
    cr_expect(cfx_pass_exists("count-me"));
    cr_expect_null(cfx_pass_name(before + 1));

    cr_expect_eq(cfx_pass_register("count-me", "again", counting_pass, NULL), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "a pass named 'count-me' is already registered"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_eq(cfx_pass_register("dce", "shadow", counting_pass, NULL), CFX_ERR, "built-in names are taken");
    cfx_error_clear();
    cr_expect_eq(cfx_pass_register("bad name", "", counting_pass, NULL), CFX_ERR);
    cfx_error_clear();
    cr_expect_eq(cfx_pass_register("nofn", "", NULL, NULL), CFX_ERR);
    cfx_error_clear();

    cfx_graph_module *gm = small_module();
    bool changed = true;
    cr_assert_eq(cfx_pipeline_run_text("count-me, dce ,count-me", gm, NULL, &changed), CFX_OK, "%s",
                 cfx_error_message());
    cr_expect_eq(calls, 6);
    cr_expect(changed, "dce removed sin");
    cfx_graph_module_free(gm);
}

Test(pass_manager, builtin_passes_are_registered)
{
    const char *want[] = {"dce", "cse", "topo-sort", "verify", "strip-asserts", "fake-tensor-prop"};
    for (int i = 0; i < COUNT_OF(want); i++)
        cr_expect(cfx_pass_exists(want[i]), "%s", want[i]);
}

Test(pass_manager, pipeline_errors)
{
    cr_expect_null(cfx_pipeline_parse("dce,nope,cse"));
    cr_expect(strstr(cfx_error_message(), "unknown pass 'nope' in pipeline 'dce,nope,cse' (known passes: dce, cse, "
                                          "topo-sort, verify, strip-asserts, fold, normalize-args, fake-tensor-prop"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_null(cfx_pipeline_parse("dce,,cse"));
    cr_expect(strstr(cfx_error_message(), "empty pass name in pipeline 'dce,,cse'"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_null(cfx_pipeline_parse("  "));
    cr_expect_str_eq(cfx_error_message(), "empty pass pipeline");
    cfx_error_clear();
    cfx_pipeline *p = cfx_pipeline_parse("dce,cse,dce");
    cr_assert(p);
    cr_expect_eq(cfx_pipeline_length(p), 3);
    cfx_pipeline_free(p);

    cfx_graph_module *gm = small_module();
    cfx_pipeline_options o = {.print_after = "cse,bogus"};
    cr_expect_neq(cfx_pipeline_run_text("dce", gm, &o, NULL), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "unknown pass 'bogus' in print-after"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_assert_eq(cfx_pass_register("fails", "always fails", failing_pass, NULL), CFX_OK);
    cr_expect_eq(cfx_pipeline_run_text("dce,fails,cse", gm, NULL, NULL), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "pass 'fails' failed: boom");
    cfx_error_clear();
    cr_expect_neq(cfx_pass_run_named(gm, "nope", NULL), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "unknown pass 'nope' (known passes: dce,"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);
}

Test(pass_manager, verify_each_names_the_pass_that_broke_the_graph)
{
    cr_assert_eq(cfx_pass_register("breaker", "moves the output first", breaking_pass, NULL), CFX_OK);
    cfx_graph_module *gm = small_module();
    cfx_pipeline_options o = {.verify_each = true};
    cr_expect_eq(cfx_pipeline_run_text("dce,breaker,cse", gm, &o, NULL), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "pass 'breaker' produced an invalid graph: "), "%s", cfx_error_message());
    cr_expect(strstr(cfx_error_message(), "was used before it has been defined"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);

    /* without verify-each the broken graph goes through breaker; verify, as a pass, catches it */
    gm = small_module();
    cr_expect_eq(cfx_pipeline_run_text("breaker", gm, NULL, NULL), CFX_OK);
    cr_expect_eq(cfx_pipeline_run_text("verify", gm, NULL, NULL), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "pass 'verify' failed: "), "%s", cfx_error_message());
    cfx_error_clear();
    /* and the input is checked first */
    cr_expect_eq(cfx_pipeline_run_text("dce", gm, &o, NULL), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "the input graph is invalid: "), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);
}

Test(pass_manager, print_after_and_print_changed)
{
    FILE *f = tmpfile();
    cr_assert(f);
    cfx_graph_module *gm = small_module();
    cfx_pipeline_options o = {.print_after_all = true, .dump = f};
    cr_assert_eq(cfx_pipeline_run_text("dce,cse,topo-sort", gm, &o, NULL), CFX_OK, "%s", cfx_error_message());
    char *out = slurp(f);
    cr_expect_eq(count(out, "graph():"), 3, "%s", out);
    cr_expect(strstr(out, "# *** IR Dump After dce ***\ngraph():\n    %x : [num_users=2] = placeholder[target=x]\n"),
              "%s", out);
    cr_expect(strstr(out, "# *** IR Dump After cse ***\n"), "%s", out);
    const char *last = strstr(out, "# *** IR Dump After topo-sort ***\n");
    cr_assert(last, "%s", out);
    char *now = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect(strstr(last, now), "the dump is str(graph)");
    free(now);
    free(out);
    cfx_graph_module_free(gm);
    fclose(f);

    f = tmpfile();
    gm = small_module();
    o = (cfx_pipeline_options){.print_after = "cse", .dump = f};
    cr_assert_eq(cfx_pipeline_run_text("dce,cse,topo-sort", gm, &o, NULL), CFX_OK);
    out = slurp(f);
    cr_expect_eq(count(out, "graph():"), 1, "%s", out);
    cr_expect(!strncmp(out, "# *** IR Dump After cse ***\n", 28), "%s", out);
    free(out);
    cfx_graph_module_free(gm);
    fclose(f);

    f = tmpfile();
    gm = small_module();
    o = (cfx_pipeline_options){.print_changed = true, .dump = f};
    cr_assert_eq(cfx_pipeline_run_text("dce,topo-sort,cse", gm, &o, NULL), CFX_OK);
    out = slurp(f);
    cr_expect(!strncmp(out, "# *** IR Dump At Start ***\ngraph():\n", 36), "%s", out);
    cr_expect(strstr(out, "# *** IR Dump After dce ***\ngraph():\n"), "%s", out);
    cr_expect(strstr(out, "# *** IR Dump After topo-sort omitted because no change ***\n# *** IR Dump After cse ***\n"),
              "%s", out);
    cr_expect_eq(count(out, "graph():"), 3, "%s", out);
    free(out);
    cfx_graph_module_free(gm);
    fclose(f);
}

Test(pass_manager, time_passes_table)
{
    FILE *f = tmpfile();
    cr_assert(f);
    cfx_graph_module *gm = small_module();
    cfx_pipeline_options o = {.time_passes = true, .verify_each = true, .report = f};
    cr_assert_eq(cfx_pipeline_run_text("dce,cse,dce", gm, &o, NULL), CFX_OK);
    char *out = slurp(f);
    size_t n_lines;
    char **line = split_lines(out, &n_lines);
    cr_assert(line);
    cr_assert_eq(n_lines, 11, "%zu lines", n_lines); /* a blank line closes the report, as in LLVM */
    cr_expect_str_eq(line[10], "");
    cr_expect_str_eq(line[0], "===-------------------------------------------------------------------------===");
    cr_expect_str_eq(line[1], "                      ... Pass execution timing report ...");
    cr_expect_str_eq(line[2], line[0]);
    cr_expect(!strncmp(line[3], "  Total Execution Time: ", 24) && strstr(line[3], " seconds (") &&
              strstr(line[3], " wall clock)"), "%s", line[3]);
    cr_expect_str_eq(line[4], "");
    cr_expect_str_eq(line[5], "   ---Wall Time---  --- Name ---");
    /* one row per distinct pass (dce twice is one row), sorted by time, then the total */
    int seen_dce = 0, seen_cse = 0, seen_verify = 0;
    for (int i = 6; i < 9; i++) {
        double secs, pct;
        char name[64];
        cr_expect_eq(sscanf(line[i], " %lf (%lf%%) %63s", &secs, &pct, name), 3, "%s", line[i]);
        seen_dce += !strcmp(name, "dce");
        seen_cse += !strcmp(name, "cse");
        seen_verify += !strcmp(name, "(verify-each)");
        cr_expect_eq(line[i][10], '(', "%s", line[i]);
    }
    cr_expect(seen_dce == 1 && seen_cse == 1 && seen_verify == 1);
    cr_expect(strstr(line[9], "(100.0%)  Total"), "%s", line[9]);
    free(line);
    free(out);
    cfx_graph_module_free(gm);
    fclose(f);
}

Test(pass_manager, progress_line_once_the_pipeline_runs_long)
{
    FILE *f = tmpfile();
    cr_assert(f);
    cfx_graph_module *gm = small_module();
    cfx_pipeline_options o = {.report = f, .progress_after = 1e-9};
    cr_assert_eq(cfx_pipeline_run_text("dce,cse", gm, &o, NULL), CFX_OK);
    char *out = slurp(f);
    cr_expect(strstr(out, "cfx: running pass 2/2 'cse' on 5 nodes ("), "%s", out);
    cr_expect(strstr(out, "cfx: pipeline finished in "), "%s", out);
    free(out);
    fclose(f);
    /* the default threshold is a second: a quick pipeline says nothing */
    f = tmpfile();
    o = (cfx_pipeline_options){.report = f};
    cr_assert_eq(cfx_pipeline_run_text("dce,cse", gm, &o, NULL), CFX_OK);
    out = slurp(f);
    cr_expect_str_eq(out, "");
    free(out);
    fclose(f);
    cfx_graph_module_free(gm);
}
