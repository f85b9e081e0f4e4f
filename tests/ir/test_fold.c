/* test_fold.c - constant folding (ir/passes/fold.h): Inductor's constant_fold rules on graphs
 * built by hand with real operators, meta from FakeTensorProp. */
#include <criterion/criterion.h>

#include "cfx.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(ir_fold, .init = setup);

static cfx_tensor *mat(int64_t r, int64_t c, float base)
{
    int64_t sz[2] = {r, c};
    cfx_tensor *t = cfx_tensor_new(sz, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    float *d = cfx_tensor_data(t);
    for (int64_t i = 0; i < r * c; i++)
        d[i] = base + (float)i;
    return t;
}

static cfx_node *op1(cfx_graph *g, const char *op, cfx_node *a)
{
    cfx_value v = cfx_node_value(a);
    return cfx_graph_call_op(g, cfx_op_find(op), &v, 1, NULL, 0);
}

static cfx_node *op2(cfx_graph *g, const char *op, cfx_node *a, cfx_node *b)
{
    cfx_value v[2] = {cfx_node_value(a), cfx_node_value(b)};
    return cfx_graph_call_op(g, cfx_op_find(op), v, 2, NULL, 0);
}

static void prop(cfx_graph_module *gm, cfx_tensor *x)
{
    cfx_value in = cfx_tensor_value(x);
    cr_assert_eq(cfx_fake_tensor_prop(cfx_graph_module_graph(gm), gm, &in, x ? 1 : 0), CFX_OK, "%s",
                 cfx_error_message());
}

static cfx_tensor *run(cfx_graph_module *gm, cfx_tensor *x)
{
    cfx_value in = cfx_tensor_value(x), out;
    cr_assert_eq(cfx_graph_module_run(gm, &in, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_TENSOR);
    return cfx_tensor_retain(out.u.t);
}

static void expect_same(cfx_tensor *a, cfx_tensor *b)
{
    cr_assert_eq(cfx_tensor_numel(a), cfx_tensor_numel(b));
    const float *p = cfx_tensor_data(a), *q = cfx_tensor_data(b);
    for (int64_t i = 0; i < cfx_tensor_numel(a); i++)
        cr_expect_float_eq(p[i], q[i], 1e-5);
}

/* mm(x, t(w) * t(w)): the constant sub-graph w -> t -> mul becomes one attribute. */
Test(ir_fold, folds_the_last_constant)
{
    cfx_tensor *w = mat(2, 2, 1), *x = mat(2, 2, -1);
    cfx_graph *g = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g, "x_1");
    cfx_node *c = cfx_graph_get_attr(g, "w");
    cfx_node *t = op1(g, "aten::t", c);
    cfx_node *m = op2(g, "aten::mul.Tensor", t, t);
    cfx_graph_output(g, cfx_node_value(op2(g, "aten::mm", p, m)));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "w", w), CFX_OK);
    prop(gm, x);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *before = run(gm, x);
    bool changed = false;
    cr_assert_eq(cfx_pass_fold(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    char *str = cfx_graph_to_string(g);
    cr_expect_str_eq(str, "graph():\n"
                          "    %x_1 : [num_users=1] = placeholder[target=x_1]\n"
                          "    %mul : [num_users=1] = get_attr[target=_frozen_param0]\n"
                          "    %mm : [num_users=1] = call_function[target=torch.ops.aten.mm.default](args = (%x_1, %mul), kwargs = {})\n"
                          "    return mm");
    free(str);
    cfx_node *k = cfx_graph_find_node(g, "mul");
    cr_assert(k);
    cr_expect(cfx_node_val(k) && cfx_node_val(k)->kind == CFX_MVAL_TENSOR, "meta val kept");
    cr_expect(cfx_node_tensor_meta(k) && cfx_node_tensor_meta(k)->ndim == 2, "tensor_meta kept");
    cr_expect(cfx_graph_module_get_attr(gm, "_frozen_param0"));
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_tensor *after = run(gm, x);
    expect_same(before, after);
    cfx_tensor_release(before);
    cfx_tensor_release(after);
    /* a second run finds nothing */
    cr_assert_eq(cfx_pass_fold(gm, NULL, &changed), CFX_OK);
    cr_expect(!changed);
    cfx_scope_end(s);
    cfx_graph_module_free(gm);
    cfx_tensor_release(w);
    cfx_tensor_release(x);
}

/* neg(w) before add_(w, x) folds; neg(w) after it reads the mutated w and must not; the
 * mutating node survives; a size limit below the result's numel folds nothing. */
Test(ir_fold, mutation_ends_folding_and_size_limit)
{
    cfx_tensor *w = mat(2, 2, 1), *x = mat(2, 2, -1);
    cfx_graph *g = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g, "x_1");
    cfx_node *c = cfx_graph_get_attr(g, "w");
    cfx_node *n1 = op1(g, "aten::neg", c);
    cfx_node *mut = op2(g, "aten::add_.Tensor", c, p);
    cfx_node *n2 = op1(g, "aten::neg", c);
    cfx_graph_output(g, cfx_node_value(op2(g, "aten::add.Tensor", op2(g, "aten::add.Tensor", n1, n2), p)));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "w", w), CFX_OK);
    prop(gm, x);
    bool changed = true;
    cfx_fold_options small = {.max_numel = 3};
    cr_assert_eq(cfx_pass_fold(gm, &small, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(!changed);
    cr_assert_eq(cfx_pass_fold(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    char *str = cfx_graph_to_string(g);
    cr_expect_str_eq(str, "graph():\n"
                          "    %x_1 : [num_users=2] = placeholder[target=x_1]\n"
                          "    %w : [num_users=2] = get_attr[target=w]\n"
                          "    %neg : [num_users=1] = get_attr[target=_frozen_param0]\n"
                          "    %add_ : [num_users=0] = call_function[target=torch.ops.aten.add_.Tensor](args = (%w, %x_1), kwargs = {})\n"
                          "    %neg_1 : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%w,), kwargs = {})\n"
                          "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%neg, %neg_1), kwargs = {})\n"
                          "    %add_1 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%add, %x_1), kwargs = {})\n"
                          "    return add_1");
    free(str);
    cr_expect(!cfx_node_is_erased(mut));
    cfx_graph_module_free(gm);
    cfx_tensor_release(w);
    cfx_tensor_release(x);
}

static cfx_tensor *noise_cpu(cfx_tensor *x) { return cfx_neg(x); }

Test(ir_fold, nondeterministic_and_impure_survive)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxfold");
    cr_assert(lib);
    cr_assert_eq(cfx_library_def_tagged(lib, "noise(Tensor x) -> Tensor", cfx_tag_bit(CFX_TAG_nondeterministic_seeded)),
                 CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_def(lib, "check(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "noise", CFX_KEY_CPU, noise_cpu), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "check", CFX_KEY_CPU, noise_cpu), CFX_OK);
    cr_assert_eq(cfx_side_effect_register_name("cfxfold::check"), CFX_OK);
    cfx_tensor *w = mat(2, 2, 1), *x = mat(2, 2, 0);
    cfx_graph *g = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g, "x_1");
    cfx_node *c = cfx_graph_get_attr(g, "w");
    cfx_node *nz = op1(g, "cfxfold::noise", c);
    cfx_node *ck = op1(g, "cfxfold::check", c);
    cfx_graph_output(g, cfx_node_value(op2(g, "aten::add.Tensor", op2(g, "aten::add.Tensor", nz, ck), p)));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "w", w), CFX_OK);
    bool changed = true;
    cr_assert_eq(cfx_pass_fold(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(!changed);
    cr_expect(!cfx_node_is_erased(nz) && !cfx_node_is_erased(ck));
    cfx_graph_module_free(gm);
    cfx_tensor_release(w);
    cfx_tensor_release(x);
    cfx_library_free(lib);
}

Test(ir_fold, errors)
{
    bool changed = true;
    cr_expect_eq(cfx_pass_fold(NULL, NULL, &changed), CFX_ERR);
    cr_expect(!changed);
    cr_expect_str_eq(cfx_error_message(), "fold: no graph module given");
    /* a pending error is kept */
    cfx_graph_module *gm = cfx_graph_module_new(cfx_graph_new(), NULL);
    cr_expect_eq(cfx_pass_fold(gm, NULL, NULL), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "fold: no graph module given");
    cfx_error_clear();
    cr_expect_eq(cfx_pass_fold(gm, NULL, NULL), CFX_OK);
    cfx_graph_module_free(gm);
}

/* 100k constant negs in a chain: evaluated and swept without recursion. */
Test(ir_fold, long_chain)
{
    int64_t one = 1;
    cfx_tensor *w = cfx_tensor_new(&one, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    ((float *)cfx_tensor_data(w))[0] = 3;
    cfx_graph *g = cfx_graph_new();
    cfx_node *n = cfx_graph_get_attr(g, "w");
    for (int i = 0; i < 100000; i++)
        n = op1(g, "aten::neg", n);
    cfx_graph_output(g, cfx_node_value(n));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "w", w), CFX_OK);
    bool changed;
    cr_assert_eq(cfx_pass_fold(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 2);
    cfx_tensor *r = cfx_graph_module_get_attr(gm, "_frozen_param0");
    cr_assert(r);
    cr_expect_float_eq(((float *)cfx_tensor_data(r))[0], 3.0f, 0);
    cfx_graph_module_free(gm);
    cfx_tensor_release(w);
}
