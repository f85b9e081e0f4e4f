/* test_passes.c - cse, topo-sort, strip-asserts, and every registered pass over a graph with
 * impure and mutating nodes.
 *
 * The graphs are built from the registered operators (so fake-tensor-prop can run them) plus a
 * test library's `cfxtest::rand_like`, tagged nondeterministic_seeded as aten::rand_like is,
 * and `cfxtest::log`, registered side-effectful: PyTorch's CSEPass would merge two rand_like
 * calls; cfx must not, nor merge or drop anything impure. */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/ops_gen_kernels.h"
#include "tests/test_util.h"

#define NV(n) cfx_node_value(n)
#define VALS(...) ((cfx_value[]){__VA_ARGS__})
#define NVALS(...) ((uint32_t)(sizeof((cfx_value[]){__VA_ARGS__}) / sizeof(cfx_value)))

static cfx_tensor *rand_like_meta(cfx_tensor *self)
{
    return cfx_meta_empty_like(self, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());
}

static void log_meta(cfx_tensor *self) { (void)self; }

static cfx_library *lib;

static void setup(void)
{
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxtest");
    cr_assert(lib);
    cr_assert_eq(cfx_library_def_tagged(lib, "rand_like(Tensor self) -> Tensor",
                                        cfx_tag_bit(CFX_TAG_nondeterministic_seeded)), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL(lib, "rand_like", CFX_KEY_Meta, rand_like_meta), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_def(lib, "log(Tensor self) -> ()"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL(lib, "log", CFX_KEY_Meta, log_meta), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_side_effect_register_name("cfxtest::log"), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "_assert_positive(Tensor self) -> ()"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_side_effect_register_name("cfxtest::_assert_positive"), CFX_OK);
}

static void teardown(void) { cfx_library_free(lib); }

static cfx_node *call(cfx_graph *g, const char *op, const cfx_value *args, uint32_t n)
{
    const cfx_op *o = cfx_op_find(op);
    cr_assert(o, "no operator %s", op);
    cfx_node *node = cfx_graph_call_op(g, o, args, n, NULL, 0);
    cr_assert(node, "%s", cfx_error_message());
    return node;
}
#define CALL(g, op, ...) call((g), (op), VALS(__VA_ARGS__), NVALS(__VA_ARGS__))

static void set_val(cfx_node *n)
{
    int64_t sizes[2] = {2, 3}, strides[2] = {3, 1};
    cfx_meta_val v = {.kind = CFX_MVAL_TENSOR, .dtype = CFX_FLOAT32, .device = cfx_device_make(CFX_DEVICE_CPU),
                      .n = 2, .sizes = sizes, .strides = strides};
    cr_assert_eq(cfx_node_set_val(n, &v), CFX_OK);
}

/* x, y; r1, r2 = rand_like(x) twice; a = relu(x), b = relu(x) (duplicates); log(a) (side
 * effect, unused); add_(y, b) (mutation, unused); c = relu(x) after the mutation; cos(x)
 * unused and pure; output (r1, r2, a, b, c). */
static cfx_graph_module *impure_module(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x"), *y = cfx_graph_placeholder(g, "y");
    set_val(x);
    set_val(y);
    cfx_node *r1 = CALL(g, "cfxtest::rand_like", NV(x));
    cfx_node *r2 = CALL(g, "cfxtest::rand_like", NV(x));
    cfx_node *a = CALL(g, "aten::relu", NV(x));
    cfx_node *b = CALL(g, "aten::relu", NV(x));
    CALL(g, "cfxtest::log", NV(a));
    CALL(g, "aten::add_.Tensor", NV(y), NV(b));
    cfx_node *c = CALL(g, "aten::relu", NV(y));
    CALL(g, "aten::cos", NV(x));
    cfx_value outs[5] = {NV(r1), NV(r2), NV(a), NV(b), NV(c)};
    cr_assert(cfx_graph_output(g, cfx_tuple(outs, 5)));
    return cfx_graph_module_new(g, NULL);
}

static int count_target(const cfx_graph *g, const char *op)
{
    int n = 0;
    for (cfx_node *x = cfx_graph_first(g); x; x = cfx_node_next(x))
        n += cfx_node_operator(x) && !strcmp(cfx_op_name(cfx_node_operator(x)), op);
    return n;
}

TestSuite(passes, .init = setup, .fini = teardown);

typedef void (*pass_check)(const char *pass, cfx_graph_module *gm, bool changed);

/* Each registered pass (the tracer's decompose too, registered as the driver registers it) on a
 * fresh module from build: the two calls of rand_op, the side effect and the mutation all stay,
 * the graph lints; then check, if any, looks at the rest. */
static void each_pass(cfx_graph_module *(*build)(void), const char *rand_op, pass_check check)
{
    if (!cfx_pass_exists("decompose"))
        cr_assert_eq(cfx_pass_register("decompose", "decompose", cfx_pass_decompose, NULL), CFX_OK);
    for (int i = 0; i < cfx_pass_count(); i++) {
        const char *name = cfx_pass_name(i);
        cfx_scope s = cfx_scope_begin();
        cfx_graph_module *gm = build();
        cfx_graph *g = cfx_graph_module_graph(gm);
        bool changed = false;
        cr_assert_eq(cfx_pass_run_named(gm, name, &changed), CFX_OK, "%s: %s", name, cfx_error_message());
        cr_expect_eq(count_target(g, rand_op), 2, "%s merged or dropped %s", name, rand_op);
        cr_expect_eq(count_target(g, "cfxtest::log"), 1, "%s dropped the side effect", name);
        cr_expect_eq(count_target(g, "aten::add_.Tensor"), 1, "%s dropped the mutation", name);
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s: %s", name, cfx_error_message());
        if (check)
            check(name, gm, changed);
        cfx_graph_module_free(gm);
        cfx_scope_end(s);
    }
}

Test(passes, every_registered_pass_keeps_impure_and_mutating_nodes)
{
    each_pass(impure_module, "cfxtest::rand_like", NULL);
}

Test(passes, cse_merges_pure_duplicates_only)
{
    cfx_graph_module *gm = impure_module();
    cfx_graph *g = cfx_graph_module_graph(gm);
    bool changed = false;
    cr_assert_eq(cfx_pass_cse(g, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    /* b merged into a; c (after the mutation) kept though it reads y, not x: relu(y) is new */
    cr_expect_null(cfx_graph_find_node(g, "relu_1"));
    cr_expect(cfx_graph_find_node(g, "relu_2"));
    char *text = cfx_graph_to_string(g);
    cr_expect(strstr(text, "return (rand_like, rand_like_1, relu, relu, relu_2)"), "%s", text);
    free(text);
    cr_assert_eq(cfx_pass_cse(g, &changed), CFX_OK);
    cr_expect_not(changed, "a second run finds nothing");
    cfx_graph_module_free(gm);
}

Test(passes, cse_does_not_merge_across_a_mutation)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = CALL(g, "aten::relu", NV(x));
    CALL(g, "aten::add_.Tensor", NV(x), NV(x));
    cfx_node *b = CALL(g, "aten::relu", NV(x));
    cfx_node *c = CALL(g, "aten::relu", NV(x));
    cfx_graph_output(g, cfx_tuple(VALS(NV(a), NV(b), NV(c)), 3));
    bool changed = false;
    cr_assert_eq(cfx_pass_cse(g, &changed), CFX_OK);
    cr_expect(changed);
    char *text = cfx_graph_to_string(g);
    cr_expect(strstr(text, "return (relu, relu_1, relu_1)"), "%s", text);
    free(text);
    cfx_graph_free(g);
}

Test(passes, cse_keys_on_args_kwargs_and_value_kinds)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_kwarg k2 = {"alpha", cfx_int(2)}, k2d = {"alpha", cfx_double(2.0)};
    const cfx_op *add = cfx_op_find("aten::add.Tensor");
    cfx_node *n[6];
    n[0] = cfx_graph_call_op(g, add, VALS(NV(x), NV(x)), 2, &k2, 1);
    n[1] = cfx_graph_call_op(g, add, VALS(NV(x), NV(x)), 2, &k2, 1);   /* = n[0] */
    n[2] = cfx_graph_call_op(g, add, VALS(NV(x), NV(x)), 2, &k2d, 1);  /* int 2 != 2.0 */
    n[3] = cfx_graph_call_op(g, add, VALS(NV(x), NV(x)), 2, NULL, 0);  /* no kwarg */
    /* nested: stack([relu(x), relu(x)]) twice: the relus merge, then the stacks */
    cfx_node *r1 = CALL(g, "aten::relu", NV(x)), *r2 = CALL(g, "aten::relu", NV(x));
    n[4] = cfx_graph_call_method(g, "cat", VALS(cfx_list(VALS(NV(r1), NV(r2)), 2)), 1, NULL, 0);
    n[5] = cfx_graph_call_method(g, "cat", VALS(cfx_list(VALS(NV(r2), NV(r1)), 2)), 1, NULL, 0);
    cfx_value outs[6];
    for (int i = 0; i < 6; i++)
        outs[i] = NV(n[i]);
    cfx_graph_output(g, cfx_tuple(outs, 6));
    bool changed;
    cr_assert_eq(cfx_pass_cse(g, &changed), CFX_OK, "%s", cfx_error_message());
    char *text = cfx_graph_to_string(g);
    cr_expect(strstr(text, "return (add, add, add_2, add_3, cat, cat)"), "%s", text);
    cr_expect(strstr(text, "args = ([%relu, %relu],)"), "%s", text);
    cr_expect_eq(cfx_graph_num_nodes(g), 7, "%s", text);
    free(text);
    cfx_graph_free(g);
}

Test(passes, topo_sort_is_stable_and_reports_cycles)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = CALL(g, "aten::relu", NV(x));
    cfx_node *b = CALL(g, "aten::cos", NV(a));
    cfx_node *c = CALL(g, "aten::sin", NV(x));
    cfx_graph_output(g, cfx_tuple(VALS(NV(b), NV(c)), 2));
    char *before = cfx_graph_to_string(g);
    bool changed = true;
    cr_assert_eq(cfx_pass_topo_sort(g, &changed), CFX_OK);
    cr_expect_not(changed, "a sorted graph stays as it is");
    /* move b before a: topo-sort puts it right after a, leaving the rest in place */
    cr_assert_eq(cfx_node_prepend(a, b), CFX_OK);
    cr_expect_neq(cfx_graph_lint(g), CFX_OK);
    cfx_error_clear();
    cr_assert_eq(cfx_pass_topo_sort(g, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    char *after = cfx_graph_to_string(g);
    cr_expect_str_eq(after, before);
    free(after);
    free(before);
    /* a cycle: a = relu(b), b = cos(a) */
    cr_assert_eq(cfx_node_set_args(a, VALS(NV(b)), 1), CFX_OK);
    cr_expect_neq(cfx_pass_topo_sort(g, &changed), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "topo-sort: the graph has a cycle: "), "%s", cfx_error_message());
    cr_expect(strstr(cfx_error_message(), "relu -> cos -> relu") || strstr(cfx_error_message(), "cos -> relu -> cos"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_free(g);
}

Test(passes, strip_asserts_removes_assertion_nodes)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *r = CALL(g, "aten::relu", NV(x));
    cr_assert(cfx_graph_call_fn(g, &cfx_fn_torch_assert, VALS(cfx_bool(true), cfx_string("x")), 2, NULL, 0));
    cr_assert(cfx_graph_call_fn(g, &cfx_fn_torch_assert_async, VALS(NV(r)), 1, NULL, 0));
    CALL(g, "cfxtest::_assert_positive", NV(r));
    cfx_graph_output(g, NV(r));
    bool changed = false;
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    cr_expect_not(changed, "assertions are impure: DCE keeps them");
    cr_assert_eq(cfx_pass_strip_asserts(g, &changed), CFX_OK);
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 3);
    cr_assert_eq(cfx_pass_strip_asserts(g, &changed), CFX_OK);
    cr_expect_not(changed);
    cfx_graph_free(g);
}

Test(passes, cse_keeps_registered_nondeterministic_ops)
{
    /* an operator registered nondeterministic_seeded (not tagged) is not merged either */
    cr_assert_eq(cfx_side_effect_register_nondeterministic("aten::exp"), CFX_OK);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = CALL(g, "aten::exp", NV(x)), *b = CALL(g, "aten::exp", NV(x));
    cfx_graph_output(g, cfx_tuple(VALS(NV(a), NV(b)), 2));
    bool changed = true;
    cr_assert_eq(cfx_pass_cse(g, &changed), CFX_OK);
    cr_expect_not(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 4);
    cfx_graph_free(g);
}

/* x; constants c, d; e = mul(c, c) (foldable); two aten::rand_like(c) (nondeterministic_seeded:
 * PyTorch's CSEPass merges them); log(c) (side effect); add_(d, c) (mutates a constant);
 * relu(x); output (e, r1, r2, relu). Every pass keeps the random, impure and mutating nodes
 * although their inputs are all constants; fold folds e alone, its get_attr carrying e's meta
 * and name. */
static cfx_graph_module *constant_impure_module(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *c = cfx_graph_get_attr(g, "c"), *d = cfx_graph_get_attr(g, "d");
    set_val(x);
    set_val(c);
    set_val(d);
    cfx_node *e = CALL(g, "aten::mul.Tensor", NV(c), NV(c));
    set_val(e);
    cr_assert_eq(cfx_node_set_stack_trace(e, &(cfx_site){"model.c", 7, "forward"}), CFX_OK);
    cfx_node *r1 = CALL(g, "aten::rand_like", NV(c));
    cfx_node *r2 = CALL(g, "aten::rand_like", NV(c));
    CALL(g, "cfxtest::log", NV(c));
    CALL(g, "aten::add_.Tensor", NV(d), NV(c));
    cfx_node *s = CALL(g, "aten::relu", NV(x));
    cr_assert(cfx_graph_output(g, cfx_tuple(VALS(NV(e), NV(r1), NV(r2), NV(s)), 4)));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    float v[6] = {1, -2, 3, -4, 5, -6};
    cfx_tensor *tc = cfx_tensor_from_floats(v, (int64_t[]){2, 3}, 2), *td = cfx_tensor_from_floats(v, (int64_t[]){2, 3}, 2);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "c", tc), CFX_OK);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "d", td), CFX_OK);
    return gm;
}

/* fold folds e alone, into a get_attr with e's name and meta; the other passes keep it */
static void check_constants(const char *name, cfx_graph_module *gm, bool changed)
{
    cfx_graph *g = cfx_graph_module_graph(gm);
    cr_expect_eq(count_target(g, "aten::relu"), 1, "%s", name);
    if (!strcmp(name, "fold")) {
        cr_expect(changed);
        cr_expect_eq(count_target(g, "aten::mul.Tensor"), 0, "e is folded");
        cfx_node *k = cfx_graph_find_node(g, "mul"); /* the get_attr takes the folded node's name */
        cr_assert(k, "no node mul");
        cr_expect_eq(cfx_node_opcode(k), CFX_NODE_GET_ATTR);
        cr_expect(cfx_node_val(k) && cfx_node_val(k)->kind == CFX_MVAL_TENSOR, "fold dropped e's val");
        const cfx_site *st = cfx_node_stack_trace(k);
        cr_expect(st && st->line == 7, "fold dropped e's stack_trace");
        cfx_tensor *t = cfx_graph_module_get_attr(gm, "_frozen_param0");
        cr_assert(t);
        cr_expect_float_eq(((float *)cfx_tensor_data(t))[1], 4.0f, 0, "(-2)^2");
    } else {
        cr_expect_eq(count_target(g, "aten::mul.Tensor"), 1, "%s", name);
    }
}

Test(passes, every_registered_pass_keeps_impure_nodes_on_constants)
{
    each_pass(constant_impure_module, "aten::rand_like", check_constants);
}
