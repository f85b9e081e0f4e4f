/* test_normalize_args.c - argument normalization (ir/passes/normalize_args.h).
 *
 * The graph holds these calls written every which way (kwargs for positionals, defaults given);
 * after the pass it must print as PyTorch 2.13 prints make_fx's trace of
 *     a = aten.add.Tensor(x, other=y, alpha=1); b = aten.add.Tensor(a, x, alpha=2)
 *     c = aten.sum.dim_IntList(b, [1], keepdim=False); d = aten.sum.dim_IntList(b, dim=[0], keepdim=True)
 *     e = aten.add.Tensor(c, d, alpha=1.0)
 * (the expected text below is that output, copied verbatim). */
#include <criterion/criterion.h>

#include "cfx.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(ir_normalize_args, .init = setup);

#define N(n) cfx_node_value(n)

static cfx_node *call(cfx_graph *g, const char *op, const cfx_value *a, uint32_t na, const cfx_kwarg *kw, uint32_t nk)
{
    return cfx_graph_call_op(g, cfx_op_find(op), a, na, kw, nk);
}

static const char *want =
    "graph():\n"
    "    %x_1 : [num_users=2] = placeholder[target=x_1]\n"
    "    %y_1 : [num_users=1] = placeholder[target=y_1]\n"
    "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x_1, %y_1), kwargs = {})\n"
    "    %add_1 : [num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%add, %x_1), kwargs = {alpha: 2})\n"
    "    %sum_1 : [num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%add_1, [1]), kwargs = {})\n"
    "    %sum_2 : [num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%add_1, [0], True), kwargs = {})\n"
    "    %add_2 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%sum_1, %sum_2), kwargs = {alpha: 1.0})\n"
    "    return add_2";

Test(ir_normalize_args, matches_make_fx)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x_1"), *y = cfx_graph_placeholder(g, "y_1");
    cfx_kwarg k1[] = {{"other", N(y)}, {"alpha", cfx_int(1)}};
    cfx_node *a = call(g, "aten::add.Tensor", (cfx_value[]){N(x)}, 1, k1, 2);
    cfx_kwarg k2[] = {{"alpha", cfx_int(2)}};
    cfx_node *b = call(g, "aten::add.Tensor", (cfx_value[]){N(a), N(x)}, 2, k2, 1);
    cfx_value one = cfx_int(1), zero = cfx_int(0);
    cfx_kwarg k3[] = {{"keepdim", cfx_bool(false)}};
    cfx_node *c = call(g, "aten::sum.dim_IntList", (cfx_value[]){N(b), cfx_list(&one, 1)}, 2, k3, 1);
    cfx_kwarg k4[] = {{"keepdim", cfx_bool(true)}, {"dim", cfx_list(&zero, 1)}};
    cfx_node *d = call(g, "aten::sum.dim_IntList", (cfx_value[]){N(b)}, 1, k4, 2);
    cfx_kwarg k5[] = {{"alpha", cfx_double(1.0)}};
    cfx_node *e = call(g, "aten::add.Tensor", (cfx_value[]){N(c), N(d)}, 2, k5, 1);
    cfx_graph_output(g, N(e));
    cr_assert_eq(cfx_node_set_val(x, &(cfx_meta_val){.kind = CFX_MVAL_INT, .u.i = 7}), CFX_OK);
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    bool changed = false;
    cr_assert_eq(cfx_pass_normalize_args(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    char *s = cfx_graph_to_string(g);
    cr_expect_str_eq(s, want);
    free(s);
    cr_expect(cfx_node_val(x) && cfx_node_val(x)->u.i == 7, "meta kept");
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* canonical already: no change */
    cr_assert_eq(cfx_pass_normalize_args(gm, NULL, &changed), CFX_OK);
    cr_expect(!changed);
    cfx_graph_module_free(gm);
}

/* Calls that do not bind are left as they are; mutating nodes are normalized but kept. */
Test(ir_normalize_args, unbindable_calls_untouched)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_kwarg bad[] = {{"beta", cfx_int(1)}};
    cfx_node *a = call(g, "aten::add.Tensor", (cfx_value[]){N(x), N(x)}, 2, bad, 1);
    cfx_node *b = call(g, "aten::add.Tensor", (cfx_value[]){N(a)}, 1, NULL, 0); /* missing other */
    cfx_kwarg k[] = {{"alpha", cfx_int(1)}};
    cfx_node *m = call(g, "aten::add_.Tensor", (cfx_value[]){N(b), N(x)}, 2, k, 1);
    cfx_graph_output(g, N(m));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    bool changed = false;
    cr_assert_eq(cfx_pass_normalize_args(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect_eq(cfx_node_num_kwargs(a), 1);
    cr_expect_eq(cfx_node_num_args(b), 1);
    cr_expect_eq(cfx_node_num_kwargs(m), 0);
    cr_expect(!cfx_node_is_erased(m));
    cfx_graph_module_free(gm);
}

Test(ir_normalize_args, errors_and_long_chain)
{
    bool changed = true;
    cr_expect_eq(cfx_pass_normalize_args(NULL, NULL, &changed), CFX_ERR);
    cr_expect(!changed);
    cr_expect_str_eq(cfx_error_message(), "normalize_args: no graph module given");
    cfx_error_clear();
    cfx_graph *g = cfx_graph_new();
    cfx_node *n = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    for (int i = 0; i < 100000; i++) {
        cfx_kwarg k[] = {{"other", N(y)}, {"alpha", cfx_int(1)}};
        n = call(g, "aten::add.Tensor", (cfx_value[]){N(n)}, 1, k, 2);
    }
    cfx_graph_output(g, N(n));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    cr_assert_eq(cfx_pass_normalize_args(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect_eq(cfx_node_num_args(n), 2);
    cr_expect_eq(cfx_node_num_kwargs(n), 0);
    cfx_graph_module_free(gm);
}
