/* test_passes_big.c - dce, cse and topo-sort through the pass manager on million-node graphs:
 * a 1M-node chain and a 1M-wide fan-in (one placeholder feeding a million nodes that all feed
 * one node's list argument). Nothing may recurse or go quadratic; with a million duplicates
 * cse merges them all and rewrites the consumer once. Timings are logged, not asserted. */
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "ir/graph_module.h"
#include "ir/passes/manager.h"
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

Test(passes_big, million_node_chain, .timeout = 120)
{
    const cfx_op *add = test_op("aten::add.Tensor"), *mul = test_op("aten::mul.Tensor"), *relu = test_op("aten::relu");
    cfx_graph *g = cfx_graph_new();
    cfx_node *prev = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < BIG && prev; i++) {
        const cfx_op *op = i % 3 == 0 ? add : i % 3 == 1 ? mul : relu;
        prev = cfx_graph_call_op(g, op, VALS(NV(prev), NV(prev)), op == relu ? 1 : 2, NULL, 0);
    }
    cr_assert(prev);
    cfx_graph_output(g, NV(prev));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
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

static cfx_graph_module *fan_in(bool duplicates)
{
    const cfx_op *relu = test_op("aten::relu"), *add = test_op("aten::add.Tensor"), *stack = test_op("aten::stack");
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
    cfx_graph_module *gm = fan_in(false);
    cfx_graph *g = cfx_graph_module_graph(gm);
    bool changed = true;
    run(gm, "dce,cse,topo-sort", true, &changed, "1M fan-in");
    cr_expect_not(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), BIG + 3);
    cfx_graph_module_free(gm);

    gm = fan_in(true);
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
