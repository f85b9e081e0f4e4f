/* test_decompose.c - the decomposition pass (tracer/decompose.h).
 *
 * No built-in operator has a CompositeImplicitAutograd kernel, so the tests register their
 * own: cfxdec::sqp(x) = x * x + x, cfxdec::two(x) = (neg(x), relu(x)), cfxdec::outer(x) =
 * sqp(x) - x (a composite calling a composite). The expected graphs are what make_fx records
 * for the same calls: the composite kernel runs in the dispatcher, its calls are recorded. */
#include <criterion/criterion.h>

#include "cfx.h"
#include "tests/test_util.h"

static cfx_tensor *sqp_kernel(cfx_tensor *x) { return cfx_add(cfx_mul(x, x), x); }
static cfx_tensor2 two_kernel(cfx_tensor *x) { return (cfx_tensor2){cfx_neg(x), cfx_relu(x)}; }
static cfx_tensor *outer_kernel(cfx_tensor *x)
{
    cfx_value st[1] = {cfx_tensor_value(x)};
    if (cfx_op_call(cfx_op_find("cfxdec::sqp"), st, 1, 1) != CFX_OK)
        return NULL;
    return cfx_sub(st[0].u.t, x);
}

static cfx_library *lib;

static void setup(void)
{
    cfx_error_clear();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxdec");
    cr_assert(lib, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_def(lib, "sqp(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "two(Tensor x) -> (Tensor, Tensor)"), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "outer(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "sqp", CFX_KEY_CompositeImplicitAutograd, sqp_kernel), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "two", CFX_KEY_CompositeImplicitAutograd, two_kernel), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "outer", CFX_KEY_CompositeImplicitAutograd, outer_kernel), CFX_OK);
}

static void teardown(void) { cfx_library_free(lib); }

TestSuite(decompose, .init = setup, .fini = teardown);

static cfx_tensor *vec(int64_t n, float base)
{
    cfx_tensor *t = cfx_tensor_new(&n, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    float *d = cfx_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        d[i] = base + (float)i - 1.5f;
    return t;
}

static cfx_node *call(cfx_graph *g, const char *op, cfx_value a)
{
    return cfx_graph_call_op(g, cfx_op_find(op), &a, 1, NULL, 0);
}

/* A graph with meta: x -> sqp -> two -> (getitem 0) + (getitem 1) -> output, vals by
 * FakeTensorProp on a real input. */
static cfx_graph_module *build(cfx_tensor *x)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g, "x_1");
    cfx_node *s = call(g, "cfxdec::sqp", cfx_node_value(p));
    cfx_node *t = call(g, "cfxdec::two", cfx_node_value(s));
    cfx_value a0[2] = {cfx_node_value(t), cfx_int(0)}, a1[2] = {cfx_node_value(t), cfx_int(1)};
    cfx_node *g0 = cfx_graph_call_fn(g, &cfx_fn_getitem, a0, 2, NULL, 0);
    cfx_node *g1 = cfx_graph_call_fn(g, &cfx_fn_getitem, a1, 2, NULL, 0);
    cfx_value args[2] = {cfx_node_value(g0), cfx_node_value(g1)};
    cfx_node *add = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"), args, 2, NULL, 0);
    cfx_graph_output(g, cfx_node_value(add));
    cfx_graph_module *gm = cfx_graph_module_new(g, "f");
    cfx_value in = cfx_tensor_value(x);
    cr_assert_eq(cfx_fake_tensor_prop(g, gm, &in, 1), CFX_OK, "%s", cfx_error_message());
    return gm;
}

static float run1(cfx_graph_module *gm, cfx_tensor *x, int64_t i)
{
    cfx_scope s = cfx_scope_begin();
    cfx_value in = cfx_tensor_value(x), out;
    cr_assert_eq(cfx_graph_module_run(gm, &in, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_TENSOR);
    float v = ((float *)cfx_tensor_data(out.u.t))[i];
    cfx_scope_end(s);
    return v;
}

Test(decompose, splices_the_decomposition)
{
    cfx_tensor *x = vec(4, 0);
    cfx_graph_module *gm = build(x);
    cfx_graph *g = cfx_graph_module_graph(gm);
    float before[4];
    for (int i = 0; i < 4; i++)
        before[i] = run1(gm, x, i);
    bool changed = false;
    cr_assert_eq(cfx_pass_decompose(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    char *s = cfx_graph_to_string(g);
    /* FX's names: the graph already has an `add`, so the spliced one is `add_1` */
    cr_expect_str_eq(s, "graph():\n"
                        "    %x_1 : [num_users=2] = placeholder[target=x_1]\n"
                        "    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x_1, %x_1), kwargs = {})\n"
                        "    %add_1 : [num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul, %x_1), kwargs = {})\n"
                        "    %neg : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%add_1,), kwargs = {})\n"
                        "    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%add_1,), kwargs = {})\n"
                        "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%neg, %relu), kwargs = {})\n"
                        "    return add");
    free(s);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* meta: every spliced node has a tensor val and tensor_meta */
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
            continue;
        cr_expect(cfx_node_val(n) && cfx_node_val(n)->kind == CFX_MVAL_TENSOR);
        cr_expect(cfx_node_tensor_meta(n) && cfx_node_tensor_meta(n)->ndim == 1);
    }
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(run1(gm, x, i), before[i], 1e-6);
    /* nothing composite is left */
    cr_assert_eq(cfx_pass_decompose(gm, NULL, &changed), CFX_OK);
    cr_expect(!changed);
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
}

Test(decompose, keep_list_and_nested)
{
    cfx_tensor *x = vec(3, 1);
    cfx_graph *g = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g, "x_1");
    cfx_node *o = call(g, "cfxdec::outer", cfx_node_value(p));
    cfx_node *s = call(g, "cfxdec::sqp", cfx_node_value(o));
    cfx_graph_output(g, cfx_node_value(s));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    cfx_value in = cfx_tensor_value(x);
    cr_assert_eq(cfx_fake_tensor_prop(g, gm, &in, 1), CFX_OK, "%s", cfx_error_message());
    const char *keep[] = {"cfxdec::sqp"};
    cfx_decompose_options opt = {keep, 1};
    bool changed;
    cr_assert_eq(cfx_pass_decompose(gm, &opt, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    char *str = cfx_graph_to_string(g);
    /* outer decomposes all the way (its inner sqp included, as make_fx would record it); the
     * kept sqp node stays */
    cr_expect_str_eq(str, "graph():\n"
                          "    %x_1 : [num_users=3] = placeholder[target=x_1]\n"
                          "    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x_1, %x_1), kwargs = {})\n"
                          "    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul, %x_1), kwargs = {})\n"
                          "    %sub : [num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add, %x_1), kwargs = {})\n"
                          "    %sqp : [num_users=1] = call_function[target=torch.ops.cfxdec.sqp.default](args = (%sub,), kwargs = {})\n"
                          "    return sqp");
    free(str);
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
}

/* Impure, mutating and nondeterministic composite nodes survive; a missing val is an error
 * naming the nodes; a 100k chain of non-composite nodes with one composite in it works. */
static cfx_tensor *sqp_(cfx_tensor *x) { return x; }

Test(decompose, survivors_errors_and_long_chain)
{
    cr_assert_eq(cfx_library_def(lib, "sqp_(Tensor(a!) x) -> Tensor(a!)"), CFX_OK);
    cr_assert_eq(cfx_library_def_tagged(lib, "rnd(Tensor x) -> Tensor", cfx_tag_bit(CFX_TAG_nondeterministic_seeded)),
                 CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "sqp_", CFX_KEY_CompositeImplicitAutograd, sqp_), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "rnd", CFX_KEY_CompositeImplicitAutograd, sqp_kernel), CFX_OK);
    cfx_tensor *x = vec(2, 0);
    cfx_graph *g = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g, "x_1");
    cfx_node *m = call(g, "cfxdec::sqp_", cfx_node_value(p));
    cfx_node *r = call(g, "cfxdec::rnd", cfx_node_value(m));
    cfx_graph_output(g, cfx_node_value(r));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    bool changed = true;
    cr_assert_eq(cfx_pass_decompose(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(!changed);
    cr_expect(!cfx_node_is_erased(m) && !cfx_node_is_erased(r));
    cfx_graph_module_free(gm);

    /* no val on the input */
    g = cfx_graph_new();
    p = cfx_graph_placeholder(g, "x_1");
    cfx_graph_output(g, cfx_node_value(call(g, "cfxdec::sqp", cfx_node_value(p))));
    gm = cfx_graph_module_new(g, NULL);
    cr_expect_eq(cfx_pass_decompose(gm, NULL, &changed), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(),
                     "decompose: cannot re-trace %sqp: input %x_1 has no meta['val'] (run FakeTensorProp first)");
    cfx_error_clear();
    cfx_graph_module_free(gm);
    cr_expect_eq(cfx_pass_decompose(NULL, NULL, &changed), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "decompose: no graph module given");
    cfx_error_clear();

    g = cfx_graph_new();
    cfx_node *n = cfx_graph_placeholder(g, "x_1");
    for (int i = 0; i < 100000; i++)
        n = call(g, i == 50000 ? "cfxdec::sqp" : "aten::neg", cfx_node_value(n));
    cfx_graph_output(g, cfx_node_value(n));
    gm = cfx_graph_module_new(g, NULL);
    cfx_value in = cfx_tensor_value(x);
    cr_assert_eq(cfx_fake_tensor_prop(g, gm, &in, 1), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_pass_decompose(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 100003);
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
}
