/* test_big.c - million-node graphs: nothing recurses, nothing goes quadratic.
 *
 * A 1M-node chain is built, printed (str and python_code), dead-code eliminated in one pass
 * and freed; a value nested a million lists deep is copied, printed and walked. Timings are
 * logged (cr_log_info) but not asserted, so sanitizer builds do not flake; the bounds asserted
 * are on sizes and results. */
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "ir/passes/dce.h"
#include "tests/ir/ir_test_util.h"

enum { CHAIN = 1000000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static cfx_graph *build_chain(int n, cfx_node **x_out, cfx_node **last_out)
{
    const cfx_op *add = test_op("aten::add.Tensor"), *mul = test_op("aten::mul.Tensor"), *relu = test_op("aten::relu");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *prev = x;
    for (int i = 0; i < n; i++) {
        cfx_value args[2] = {NV(prev), NV(prev)};
        const cfx_op *op = i % 3 == 0 ? add : i % 3 == 1 ? mul : relu;
        prev = cfx_graph_call_op(g, op, args, op == relu ? 1 : 2, NULL, 0);
        if (!prev)
            break;
    }
    *x_out = x;
    *last_out = prev;
    return g;
}

Test(ir_big, million_node_chain, .timeout = 60)
{
    double t0 = now();
    cfx_node *x, *last;
    cfx_graph *g = build_chain(CHAIN, &x, &last);
    double t1 = now();
    cr_assert(last);
    cr_expect_eq(cfx_graph_num_nodes(g), CHAIN + 1);
    cr_expect(cfx_node_name_is(last, "add_333333"));
    cfx_graph_output(g, NV(last));

    cfx_buf b;
    cfx_buf_init(&b);
    cfx_graph_print(g, &b);
    double t2 = now();
    cr_assert(!b.oom);
    cr_expect(strstr(b.data + b.len - 200, "return add_333333"));
    size_t str_len = b.len;
    cfx_buf_free(&b);
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_python_code(g, "self", &b), CFX_OK);
    double t3 = now();
    cr_expect(strstr(b.data, "    add = torch.ops.aten.add.Tensor(x, x);  x = None\n"));
    cfx_buf_free(&b);

    /* make the whole chain dead: the output returns x; one DCE pass removes 1M nodes */
    cr_assert_eq(cfx_node_set_args(cfx_graph_output_node(g), VALS(NV(x)), 1), CFX_OK);
    bool changed = false;
    double t4 = now();
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    double t5 = now();
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 2);
    cr_expect_eq(cfx_node_num_users(x), 1);
    size_t arena = cfx_graph_arena_bytes(g);
    cfx_graph_free(g);
    double t6 = now();
    cr_log_info("1M chain: build %.1f ns/node, str %.1f ns/node (%zu bytes), python_code %.1f ns/node, "
                "dce %.1f ns/node, free %.1f ms, arena %.1f MB",
                (t1 - t0) * 1e9 / CHAIN, (t2 - t1) * 1e9 / CHAIN, str_len, (t3 - t2) * 1e9 / CHAIN,
                (t5 - t4) * 1e9 / CHAIN, (t6 - t5) * 1e3, arena / 1048576.0);
    cr_expect_lt(arena, (size_t)CHAIN * 256, "arena should stay near 200 bytes per node");
}

Test(ir_big, million_deep_nesting, .timeout = 60)
{
    /* [[[[...[x]...]]]] a million lists deep, as one argument */
    enum { DEPTH = 1000000 };
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value *chain = malloc(DEPTH * sizeof *chain);
    cr_assert(chain);
    cfx_value inner = NV(x);
    chain[DEPTH - 1] = cfx_list(&inner, 1);
    for (int i = DEPTH - 2; i >= 0; i--)
        chain[i] = cfx_list(&chain[i + 1], 1);
    cfx_node *n = OP(g, "aten::stack", chain[0]);
    free(chain); /* the graph has its own copy */
    cr_assert(n);
    cr_expect_eq(cfx_node_num_inputs(n), 1);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cfx_node *out = cfx_graph_output(g, NV(n));
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_graph_print(g, &b);
    cr_assert(!b.oom);
    cr_expect(strstr(b.data, "[[[[%x]]]]"));
    cfx_buf_free(&b);
    char *code = cfx_graph_python_code_string(g, "self");
    cr_assert(code);
    cr_expect(strstr(code, "[[[[x]]]]]"));
    free(code);
    /* rewriting and erasing walk the same depth */
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cr_expect_eq(cfx_node_replace_all_uses_with(x, y, NULL, NULL, NULL), 1);
    cr_expect_eq(cfx_node_num_users(y), 1);
    cr_assert_eq(cfx_graph_erase_node(g, out), CFX_OK);
    cr_assert_eq(cfx_graph_erase_node(g, n), CFX_OK);
    cr_expect_eq(cfx_node_num_users(y), 0);
    cfx_graph_free(g);
}
