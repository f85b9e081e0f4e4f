/* test_lint.c - Graph.lint messages against torch.fx (tests/data/ir_lint_*.txt). */
#include <criterion/criterion.h>

#include "tests/ir/ir_test_util.h"

static void expect_lint(cfx_graph *g, const char *golden)
{
    char name[64];
    snprintf(name, sizeof name, "ir_lint_%s.txt", golden);
    char *want = ir_golden(name);
    cfx_error_clear();
    cr_expect_eq(cfx_graph_lint(g), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), want);
    cfx_error_clear();
    free(want);
}

Test(ir_lint, clean_graph)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_graph_output(g, LIST(NV(a), NV(x)));
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cr_expect(!cfx_error_occurred());
    cfx_graph_free(g);
}

Test(ir_lint, used_before_defined)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    cfx_graph_output(g, NV(b));
    cr_assert_eq(cfx_node_prepend(a, b), CFX_OK);
    expect_lint(g, "before_defined");
    cfx_graph_free(g);
}

Test(ir_lint, argument_from_other_graph)
{
    cfx_graph *g2 = cfx_graph_new();
    cfx_node *z = cfx_graph_placeholder(g2, "z");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::add.Tensor", NV(x), NV(z));
    cfx_graph_output(g, NV(a));
    cr_expect_eq(cfx_node_num_users(z), 1);
    expect_lint(g, "other_graph");
    cfx_graph_free(g); /* takes its use out of z's users */
    cr_expect_eq(cfx_node_num_users(z), 0);
    cfx_graph_free(g2);
}

Test(ir_lint, redefined_name)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    cfx_graph_output(g, NV(b));
    cr_assert_eq(cfx_node_set_name_unchecked(b, "relu"), CFX_OK);
    expect_lint(g, "redefined");
    cfx_graph_free(g);
}

/* A node's graph is its node-table block's: only a corrupt block head can name another. */
Test(ir_lint, node_of_another_graph)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    /* fill the rest of the first block with erased nodes: relu is the first of the second */
    for (int i = 1; i < 128; i++)
        cr_assert_eq(cfx_graph_erase_node(g, OP(g, "aten::neg", NV(x))), CFX_OK);
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_graph_output(g, NV(a));
    cr_assert_eq(a->seq, 128);
    cfx_graph *other = cfx_graph_new();
    cfx_node_block_head *h = (cfx_node_block_head *)(void *)(a + CFX_NODE_BLOCK); /* after the block */
    cr_assert_eq(h->graph, g);
    h->graph = other; /* only corruption can do this; lint is there to catch it */
    expect_lint(g, "foreign_node");
    h->graph = g;
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(other);
    cfx_graph_free(g);
}

Test(ir_lint, unknown_opcode)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    a->op = 42;
    cfx_error_clear();
    cr_expect_eq(cfx_graph_lint(g), CFX_ERR);
    /* FX prints the op string; an opcode cfx does not know is only a number */
    cr_expect_str_eq(cfx_error_message(), "Node relu had unknown opcode 42!");
    cfx_error_clear();
    a->op = CFX_NODE_CALL_FUNCTION;
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
}

Test(ir_lint, erased_argument)
{
    /* a node whose producer was erased behind its back (args rewritten to it afterwards) */
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(x));
    cr_assert_eq(cfx_graph_erase_node(g, a), CFX_OK);
    cr_assert_eq(cfx_node_set_args(b, VALS(NV(a)), 1), CFX_OK);
    cfx_error_clear();
    cr_expect_eq(cfx_graph_lint(g), CFX_ERR);
    cr_expect(strncmp(cfx_error_message(), "Argument 'relu' of Node 'cos' was used before it has been defined!", 66) == 0);
    cfx_error_clear();
    cfx_graph_free(g);
}
