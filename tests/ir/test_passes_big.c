/* test_passes_big.c - the pass manager on million-node graphs: a 1M-node chain and a 1M-wide
 * fan-in (one placeholder feeding a million nodes that all feed one node's list argument).
 * dce, cse and topo-sort with real work to do (a reversed chain, a million duplicates merged
 * with the consumer rewritten once); every registered pass in one pipeline on both shapes,
 * then str / python_code / print_tabular and a JSON dump -> load -> dump of each; fold of a
 * million-node constant chain. Nothing may recurse or go quadratic. Timings are logged, not
 * asserted. */
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "dispatch/dispatcher.h"
#include "ir/graph_module.h"
#include "ir/json.h"
#include "ir/passes/manager.h"
#include "ir/print_tabular.h"
#include "tracer/decompose.h"
#include "tests/ir/ir_test_util.h"

enum { BIG = 1000000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* verify: lint the input and after every pass (a sorted input is needed for that) */
static void run(cfx_graph_module *gm, const char *pipeline, bool verify, bool *changed, const char *what)
{
    double t0 = now();
    cfx_pipeline_options o = {.verify_each = verify, .progress_after = -1};
    /* a lint message prints the whole graph: only its start is shown */
    cr_assert_eq(cfx_pipeline_run_text(pipeline, gm, &o, changed), CFX_OK, "%.300s", cfx_error_message());
    cr_log_info("%s: %s %.1f ns/node", what, pipeline, (now() - t0) * 1e9 / BIG);
}

/* The registered operator (a pass that runs kernels needs it; test_op's stand-ins have none). */
static const cfx_op *real_op(const char *qn)
{
    cfx_dispatcher_init();
    const cfx_op *op = cfx_op_find(qn);
    cr_assert(op, "no operator %s", qn);
    return op;
}

/* x -> add -> mul -> relu -> add ... a million calls; op: test_op (stand-ins) or real_op */
static cfx_graph_module *chain(const cfx_op *(*find)(const char *))
{
    const cfx_op *add = find("aten::add.Tensor"), *mul = find("aten::mul.Tensor"), *relu = find("aten::relu");
    cfx_graph *g = cfx_graph_new();
    cfx_node *prev = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < BIG && prev; i++) {
        const cfx_op *op = i % 3 == 0 ? add : i % 3 == 1 ? mul : relu;
        prev = cfx_graph_call_op(g, op, VALS(NV(prev), NV(prev)), op == relu ? 1 : 2, NULL, 0);
    }
    cr_assert(prev);
    cfx_graph_output(g, NV(prev));
    return cfx_graph_module_new(g, NULL);
}

Test(passes_big, million_node_chain, .timeout = 120)
{
    cfx_graph_module *gm = chain(test_op);
    cfx_graph *g = cfx_graph_module_graph(gm);
    bool changed = true;
    run(gm, "dce,cse,topo-sort", true, &changed, "1M chain");
    cr_expect_not(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), BIG + 2);
    /* reversed (each node moved to the front in turn): topo-sort restores the order */
    cfx_node *out = cfx_graph_output_node(g);
    for (cfx_node *n = cfx_node_next(cfx_graph_first(g)), *next; n != out; n = next) {
        next = cfx_node_next(n);
        cr_assert_eq(cfx_node_prepend(cfx_graph_first(g), n), CFX_OK);
    }
    cr_assert(cfx_node_name_is(cfx_node_prev(out), "x"));
    run(gm, "topo-sort,verify,cse,dce", false, &changed, "1M reversed chain");
    cr_expect(changed);
    cr_expect(cfx_node_name_is(cfx_graph_first(g), "x"));
    cr_expect_eq(cfx_graph_num_nodes(g), BIG + 2);
    cfx_graph_module_free(gm);
}

/* op: as chain's */
static cfx_graph_module *fan_in(bool duplicates, const cfx_op *(*op)(const char *))
{
    const cfx_op *relu = op("aten::relu"), *add = op("aten::add.Tensor"), *stack = op("aten::stack");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value *items = malloc(BIG * sizeof *items);
    cr_assert(items);
    for (int i = 0; i < BIG; i++) {
        cfx_node *n = duplicates ? cfx_graph_call_op(g, relu, VALS(NV(x)), 1, NULL, 0)
                                 : cfx_graph_call_op(g, add, VALS(NV(x), cfx_int(i)), 2, NULL, 0);
        cr_assert(n);
        items[i] = NV(n);
    }
    cfx_node *s = cfx_graph_call_op(g, stack, VALS(cfx_list(items, BIG)), 1, NULL, 0);
    free(items);
    cr_assert(s);
    cfx_graph_output(g, NV(s));
    return cfx_graph_module_new(g, NULL);
}

Test(passes_big, million_wide_fan_in, .timeout = 120)
{
    cfx_graph_module *gm = fan_in(false, test_op);
    cfx_graph *g = cfx_graph_module_graph(gm);
    bool changed = true;
    run(gm, "dce,cse,topo-sort", true, &changed, "1M fan-in");
    cr_expect_not(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), BIG + 3);
    cfx_graph_module_free(gm);

    gm = fan_in(true, test_op);
    g = cfx_graph_module_graph(gm);
    run(gm, "dce,cse,topo-sort", true, &changed, "1M duplicates fan-in");
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 4, "x, relu, stack, output");
    cfx_node *x = cfx_graph_first(g), *r = cfx_node_next(x), *s = cfx_node_next(r);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_node_num_users(r), 1);
    cr_expect_eq(cfx_node_num_inputs(s), 1);
    cfx_value list = cfx_node_arg(s, 0);
    cr_assert_eq(list.len, BIG);
    cr_expect_eq(list.u.items[BIG - 1].u.node, r);
    cfx_graph_module_free(gm);
}

/* ---- every pass, and the dumps, on both shapes ------------------------------------------------ */

static void set_tensor_val(cfx_node *n)
{
    int64_t sizes[1] = {2}, strides[1] = {1};
    cfx_meta_val v = {.kind = CFX_MVAL_TENSOR, .dtype = CFX_FLOAT32, .device = cfx_device_make(CFX_DEVICE_CPU),
                      .n = 1, .sizes = sizes, .strides = strides};
    cr_assert_eq(cfx_node_set_val(n, &v), CFX_OK);
}

/* Every registered pass in one pipeline (decompose registered as the driver does), then the
 * text forms and a JSON dump -> load -> dump: nothing of it may recurse or go quadratic. */
static void every_pass_and_dump(cfx_graph_module *gm, const char *what, bool tabular_fits)
{
    if (!cfx_pass_exists("decompose"))
        cr_assert_eq(cfx_pass_register("decompose", "decompose", cfx_pass_decompose, NULL), CFX_OK);
    cfx_graph *g = cfx_graph_module_graph(gm);
    set_tensor_val(cfx_graph_first(g));
    int64_t before = cfx_graph_num_nodes(g);
    cfx_buf pl;
    cfx_buf_init(&pl);
    for (int i = 0; i < cfx_pass_count(); i++)
        cfx_buf_printf(&pl, i ? ",%s" : "%s", cfx_pass_name(i));
    bool changed = true;
    run(gm, pl.data, false, &changed, what);
    cfx_buf_free(&pl);
    cr_expect_not(changed, "%s: nothing to change", what);
    cr_expect_eq(cfx_graph_num_nodes(g), before);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%.300s", cfx_error_message());

    double t0 = now();
    char *s = cfx_graph_to_string(g), *code = cfx_graph_python_code_string(g, "self");
    cfx_buf tab;
    cfx_buf_init(&tab);
    cr_assert(s && code, "%s", cfx_error_message());
    if (tabular_fits) {
        cr_assert_eq(cfx_graph_print_tabular(g, &tab), CFX_OK, "%s", cfx_error_message());
    } else {
        /* every row padded to the stack's million-argument cell: terabytes, refused up front */
        cr_expect_eq(cfx_graph_print_tabular(g, &tab), CFX_ERR);
        cr_expect_eq(tab.len, 0u);
        cr_expect(strstr(cfx_error_message(), "print_tabular: the table would take about 1000005 rows of "),
                  "%s", cfx_error_message());
        cfx_error_clear();
    }
    double t1 = now();
    char *j1 = NULL, *j2 = NULL;
    cr_assert_eq(cfx_graph_module_to_json(gm, 0, &j1), CFX_OK, "%s", cfx_error_message());
    cfx_graph_module *gm2 = cfx_graph_module_from_json(j1, strlen(j1));
    cr_assert(gm2, "%.300s", cfx_error_message());
    cr_assert_eq(cfx_graph_module_to_json(gm2, 0, &j2), CFX_OK, "%s", cfx_error_message());
    double t2 = now();
    cr_expect(strcmp(j1, j2) == 0, "%s: the second JSON dump differs", what);
    char *s2 = cfx_graph_to_string(cfx_graph_module_graph(gm2));
    cr_expect(s2 && strcmp(s, s2) == 0, "%s: the loaded graph prints differently", what);
    cr_log_info("%s: str+code+tabular %.1f ns/node, dump+load+dump %.1f ns/node", what, (t1 - t0) * 1e9 / BIG,
                (t2 - t1) * 1e9 / BIG);
    free(s);
    free(s2);
    free(code);
    free(j1);
    free(j2);
    cfx_buf_free(&tab);
    cfx_graph_module_free(gm2);
}

Test(passes_big, every_pass_and_dump_on_a_million_node_chain_and_fan_in, .timeout = 600)
{
    cfx_graph_module *gm = chain(real_op);
    every_pass_and_dump(gm, "1M chain", true);
    cfx_graph_module_free(gm);

    gm = fan_in(false, real_op);
    every_pass_and_dump(gm, "1M fan-in", false);
    cfx_graph_module_free(gm);
}

/* fold's real work at scale: a million-node chain of constants becomes one _frozen_param0. */
Test(passes_big, fold_folds_a_million_node_constant_chain, .timeout = 300)
{
    const cfx_op *neg = real_op("aten::neg");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *n = cfx_graph_get_attr(g, "w");
    for (int i = 0; i < BIG && n; i++)
        n = cfx_graph_call_op(g, neg, VALS(NV(n)), 1, NULL, 0);
    cr_assert(n);
    cfx_node *sum = cfx_graph_call_op(g, real_op("aten::add.Tensor"), VALS(NV(x), NV(n)), 2, NULL, 0);
    cfx_graph_output(g, NV(sum));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    int64_t one = 1;
    cfx_tensor *w = cfx_tensor_new(&one, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    ((float *)cfx_tensor_data(w))[0] = 3;
    cr_assert_eq(cfx_graph_module_set_attr(gm, "w", w), CFX_OK);
    cfx_tensor_release(w);
    bool changed = false;
    run(gm, "fold", false, &changed, "1M constant chain");
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 4, "x, _frozen_param0, add, output");
    cfx_tensor *r = cfx_graph_module_get_attr(gm, "_frozen_param0");
    cr_assert(r);
    cr_expect_eq(((float *)cfx_tensor_data(r))[0], 3.0f, "an even number of negations");
    cfx_graph_module_free(gm);
}
