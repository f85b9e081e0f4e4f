/* test_uses.c - def-use links: users lists and input lists (ir/uses.c, through ir/node.h).
 *
 * The def-use scenario replays tests/data/ir_users.txt, recorded from torch.fx 2.13: after
 * every args/kwargs change (set_args, set_kwargs, replace_all_uses_with, update_arg,
 * insert_arg) the users lists and input lists must be in FX's exact order. Then the shapes
 * that stress the links: a producer with 300k users and a node with 300k inputs, removal in
 * any order, duplicate references, and uses across graphs. */
#include <criterion/criterion.h>

#include "tests/ir/ir_test_util.h"

static bool not_sub(cfx_node *user, void *ctx)
{
    (void)ctx;
    return !cfx_node_name_is(user, "sub");
}

static void show_list(cfx_buf *b, const char *tag, cfx_node **nodes, int64_t n)
{
    cfx_buf_printf(b, "%s ", tag);
    for (int64_t i = 0; i < n; i++) {
        if (i)
            cfx_buf_puts(b, ", ");
        cfx_node_print_name(nodes[i], b);
    }
    cfx_buf_putc(b, '\n');
}

Test(ir_uses, users_scenario_golden)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node *a = OP(g, "aten::add.Tensor", NV(x), NV(y));
    cfx_node *b = OP(g, "aten::mul.Tensor", NV(x), NV(x));
    cfx_kwarg kw[] = {KW("alpha", NV(a))};
    cfx_node *c = OPK(g, "aten::sub.Tensor", kw, 1, NV(y), NV(x));
    cfx_graph_output(g, TUPLE(NV(a), NV(b), NV(c)));
    cfx_buf out;
    cfx_buf_init(&out);
    show_node(&out, "built", x);
    show_node(&out, "built", y);
    show_node(&out, "built", a);
    show_node(&out, "built", b);
    show_node(&out, "built", c);
    cr_assert_eq(cfx_node_set_args(a, VALS(NV(y), NV(b)), 2), CFX_OK);
    show_node(&out, "set_args", x);
    show_node(&out, "set_args", y);
    show_node(&out, "set_args", a);
    show_node(&out, "set_args", b);
    cr_assert_eq(cfx_node_set_kwargs(c, NULL, 0), CFX_OK);
    show_node(&out, "set_kwargs", a);
    show_node(&out, "set_kwargs", c);
    cfx_node **changed;
    int64_t k = cfx_node_replace_all_uses_with(x, y, not_sub, NULL, &changed);
    show_list(&out, "rauw", changed, k);
    free(changed);
    show_node(&out, "rauw", x);
    show_node(&out, "rauw", y);
    show_node(&out, "rauw", b);
    show_node(&out, "rauw", c);
    k = cfx_node_replace_all_uses_with(y, x, NULL, NULL, &changed);
    show_list(&out, "rauw2", changed, k);
    free(changed);
    show_node(&out, "rauw2", x);
    show_node(&out, "rauw2", y);
    cr_assert_eq(cfx_node_update_arg(c, 0, LIST(NV(b), TUPLE(NV(a), NV(b)))), CFX_OK);
    show_node(&out, "update_arg", a);
    show_node(&out, "update_arg", b);
    show_node(&out, "update_arg", c);
    cfx_error_clear();
    cr_assert_eq(cfx_graph_erase_node(g, x), CFX_ERR);
    cfx_buf_printf(&out, "erase_refused %s\n", cfx_error_message());
    cfx_error_clear();
    cfx_buf_puts(&out, "graph\n");
    cfx_graph_print(g, &out);
    cfx_buf_putc(&out, '\n');
    cr_assert_eq(cfx_node_insert_arg(c, 0, NV(y)), CFX_OK);
    show_node(&out, "insert_arg", y);
    show_node(&out, "insert_arg", c);
    cr_assert_eq(cfx_node_insert_arg(c, 3, NV(a)), CFX_OK);
    show_node(&out, "insert_arg2", a);
    show_node(&out, "insert_arg2", c);
    cr_expect_eq(cfx_graph_lint(g), CFX_ERR);
    cfx_buf_printf(&out, "lint %s\n", cfx_error_message());
    cfx_error_clear();
    char *want = ir_golden("ir_users.txt");
    cr_expect_str_eq(out.data, want);
    free(want);
    cfx_buf_free(&out);
    cfx_graph_free(g);
}

Test(ir_uses, large_fan_out_and_fan_in)
{
    /* one placeholder used by 300k nodes, then one node using all of them, then rewiring */
    enum { N = 300000 };
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value *vals = malloc(N * sizeof *vals);
    for (int i = 0; i < N; i++)
        vals[i] = NV(OP(g, "aten::relu", NV(x)));
    cr_expect_eq(cfx_node_num_users(x), N);
    cfx_node *cat = OP(g, "aten::cat", cfx_list(vals, N));
    cr_expect_eq(cfx_node_num_inputs(cat), N);
    cfx_node *y = cfx_graph_placeholder(g, "y");
    int64_t k = cfx_node_replace_all_uses_with(x, y, NULL, NULL, NULL);
    cr_expect_eq(k, N);
    cr_expect_eq(cfx_node_num_users(x), 0);
    cr_expect_eq(cfx_node_num_users(y), N);
    /* duplicates in a big list are one input each */
    for (int i = 0; i < N; i++)
        vals[i] = vals[i % 1000];
    cr_assert_eq(cfx_node_set_args(cat, VALS(cfx_list(vals, N)), 1), CFX_OK);
    cr_expect_eq(cfx_node_num_inputs(cat), 1000);
    cfx_node *first = cfx_node_input(cat, 0);
    cfx_user_iter it;
    cr_expect_eq(cfx_node_first_user(first, &it), cat);
    free(vals);
    cfx_graph_free(g);
}

/* The users list keeps no tail pointer (the head's prev is the tail): removing heads,
 * tails and middles in any order and appending afterwards must keep insertion order. */
static void expect_users(const cfx_node *p, cfx_node **want, uint32_t n)
{
    cr_assert_eq(cfx_node_num_users(p), n);
    uint32_t i = 0;
    cfx_user_iter it;
    for (cfx_node *u = cfx_node_first_user(p, &it); u; u = cfx_node_next_user(&it), i++) {
        cr_assert_lt(i, n);
        cr_expect_eq(u, want[i], "user %u", i);
    }
    cr_expect_eq(i, n);
}

Test(ir_uses, users_list_order_under_removal)
{
    enum { N = 40 };
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node *live[N + 8];
    uint32_t n = 0;
    for (int i = 0; i < N; i++)
        live[n++] = OP(g, "aten::relu", NV(x));
    uint32_t seed = 7;
    for (int step = 0; step < N / 2; step++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t k = step % 3 == 0 ? 0 : step % 3 == 1 ? n - 1 : (seed >> 8) % n; /* head, tail, any */
        cr_assert_eq(cfx_graph_erase_node(g, live[k]), CFX_OK);
        memmove(&live[k], &live[k + 1], (n - k - 1) * sizeof *live);
        n--;
        expect_users(x, live, n);
    }
    for (int i = 0; i < 4; i++) {
        live[n++] = OP(g, "aten::cos", NV(x));
        expect_users(x, live, n);
    }
    /* insert_arg moves the user's use records: x's list must still be in order */
    cfx_node *mid = live[n / 2];
    cr_assert_eq(cfx_node_insert_arg(mid, 0, NV(y)), CFX_OK);
    expect_users(x, live, n);
    cr_assert_eq(cfx_node_num_users(y), 1);
    cfx_node *last = live[n - 1];
    cr_assert_eq(cfx_node_insert_arg(last, 0, NV(y)), CFX_OK); /* moves x's tail record */
    expect_users(x, live, n);
    live[n++] = OP(g, "aten::sin", NV(x));
    expect_users(x, live, n);
    cfx_node *ylist[2] = {mid, last};
    expect_users(y, ylist, 2);
    /* remove everything from the head: an emptied list accepts appends again */
    for (uint32_t i = 0; i < n; i++)
        cr_assert_eq(cfx_graph_erase_node(g, live[i]), CFX_OK);
    expect_users(x, live, 0);
    live[0] = OP(g, "aten::neg", NV(x));
    live[1] = OP(g, "aten::neg", NV(x));
    expect_users(x, live, 2);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
}

/* Inputs are the distinct node references in first-seen order; users in the order of use. */
Test(ir_uses, inputs_distinct_in_order)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node *a = OP(g, "aten::foo", NV(y), cfx_int(1), NV(x), NV(y), NV(x), cfx_none(), NV(y));
    cr_assert(a);
    cr_expect_eq(cfx_node_num_args(a), 7);
    cr_expect_eq(cfx_node_num_inputs(a), 2);
    cr_expect_eq(cfx_node_input(a, 0), y);
    cr_expect_eq(cfx_node_input(a, 1), x);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_node_num_users(y), 1);
    cr_expect_eq(cfx_node_arg(a, 1).u.i, 1);
    cfx_node *b = OP(g, "aten::foo", NV(x), NV(y));
    cfx_user_iter it;
    cr_expect_eq(cfx_node_first_user(x, &it), a);
    cr_expect_eq(cfx_node_next_user(&it), b);
    cr_expect_null(cfx_node_next_user(&it));
    /* the args are the node's own copy */
    cfx_value args[2] = {NV(x), NV(y)};
    cfx_node *c = cfx_graph_call_op(g, test_op("aten::foo"), args, 2, NULL, 0);
    args[0] = cfx_int(7);
    cr_expect_eq(cfx_node_arg(c, 0).u.node, x);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* erasing a node drops its uses */
    cr_assert_eq(cfx_graph_erase_node(g, c), CFX_OK);
    cr_assert_eq(cfx_graph_erase_node(g, b), CFX_OK);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
}

/* A node reference into another graph is a use across graphs, undone when either graph goes. */
Test(ir_uses, uses_across_graphs)
{
    cfx_graph *g1 = cfx_graph_new(), *g2 = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g1, "p");
    cfx_node *q = cfx_graph_placeholder(g2, "q");
    cfx_node *a = OP(g2, "aten::add.Tensor", NV(q), NV(p));
    cr_assert(a);
    cr_expect_eq(cfx_node_num_inputs(a), 2);
    cr_expect_eq(cfx_node_input(a, 0), q);
    cr_expect_eq(cfx_node_input(a, 1), p);
    cfx_user_iter it;
    cr_expect_eq(cfx_node_first_user(p, &it), a);
    cr_expect_eq(cfx_node_num_users(p), 1);
    cr_expect_eq(cfx_node_num_users(q), 1);
    cfx_graph_free(g2); /* takes its use out of p's users */
    cr_expect_eq(cfx_node_num_users(p), 0);
    cfx_graph_free(g1);
}
