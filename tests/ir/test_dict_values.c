/* test_dict_values.c - dict values (cfx_dict, CFX_V_DICT) everywhere a graph value goes:
 * str(graph), python_code and print_tabular against PyTorch 2.13 (tools/interop/gen_dict_values.py
 * builds the same graph by hand), value printing and equality, JSON round trip and the
 * loader's refusals, the interpreter (getitem on a dict, KeyError), the passes (uses,
 * replace_all_uses_with, DCE, CSE, normalize-args) and the emitters (Python, C, DOT). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_golden.h"
#include "tests/test_util.h"

#define VALS(...) ((cfx_value[]){__VA_ARGS__})
#define NV(n) cfx_node_value(n)

static cfx_node *call_op(cfx_graph *g, const char *op, const char *name, const cfx_value *args, uint32_t n,
                         const cfx_kwarg *kw, uint32_t nk)
{
    const cfx_op *o = cfx_op_find(op);
    cr_assert(o, "%s", op);
    cfx_node *r = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(o), args, n, kw, nk, name);
    cr_assert(r, "%s", cfx_error_message());
    return r;
}

/* gen_dict_values.py's build(), node for node. */
static cfx_graph *build(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x"), *y = cfx_graph_placeholder(g, "y");
    cfx_value b[2] = {NV(y), cfx_int(2)}, e[2] = {cfx_double(1.5), cfx_none()};
    cfx_value c[4] = {cfx_string("d"), cfx_string("it's"), cfx_string("e"), cfx_tuple(e, 2)};
    cfx_value d[8] = {cfx_string("a"), NV(x),           cfx_string("b"), cfx_list(b, 2),
                      cfx_string("c"), cfx_dict(c, 2), cfx_string("f"), cfx_dict(NULL, 0)};
    cfx_node *a = cfx_graph_call_fn(g, &cfx_fn_getitem, VALS(cfx_dict(d, 4), cfx_string("a")), 2, NULL, 0);
    cr_assert(a, "%s", cfx_error_message());
    cfx_node *r = call_op(g, "aten::relu", "relu_default", VALS(NV(a)), 1, NULL, 0);
    cfx_value k[4] = {cfx_string("k"), NV(r), cfx_string("z"), NV(y)};
    cfx_node *gi = cfx_graph_call_fn(g, &cfx_fn_getitem, VALS(cfx_dict(k, 2), cfx_string("k")), 2, NULL, 0);
    cfx_kwarg kw = {"other", NV(y)};
    cfx_node *s = call_op(g, "aten::add.Tensor", "add_tensor", VALS(NV(gi)), 1, &kw, 1);
    cr_assert(cfx_graph_output(g, NV(s)));
    return g;
}

static cfx_value run(const cfx_graph *g, cfx_tensor **x)
{
    float xs[3] = {1, -2, 3}, ys[3] = {10, 20, 30};
    int64_t n[1] = {3};
    *x = cfx_tensor_from_floats(xs, n, 1);
    cfx_value args[2] = {cfx_tensor_value(*x), cfx_tensor_value(cfx_tensor_from_floats(ys, n, 1))}, out;
    cr_assert_eq(cfx_interpret(g, args, 2, NULL, &out), CFX_OK, "%s", cfx_error_message());
    return out;
}

static void expect_out(cfx_value out)
{
    char *want = read_golden("tests/data/ir_dict.out.txt");
    cr_assert(want);
    cr_expect_str_eq(want, "[11.0, 20.0, 33.0]\n");
    free(want);
    cr_assert_eq(out.kind, CFX_V_TENSOR);
    double w[3] = {11, 20, 33};
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(cfx_tensor_get_double(out.u.t, i), w[i], 1e-9);
}

Test(dict_values, print_code_and_tabular_are_fxs)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = build();
    expect_graph_goldens(g, "ir_dict.graph.txt", "ir_dict.tabular.txt");
    char *t = cfx_graph_python_code_string(g, "self");
    expect_golden("ir_dict.code.txt", t);
    free(t);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s", cfx_error_message());
    cfx_tensor *x;
    expect_out(run(g, &x));
    cfx_graph_free(g);
    cfx_scope_end(s);
}

Test(dict_values, value_printing_and_equality)
{
    cfx_value in[2] = {cfx_int(1), cfx_string("s")};
    cfx_value kv[4] = {cfx_string("a"), cfx_list(in, 2), cfx_string("b"), cfx_dict(NULL, 0)};
    cfx_value d = cfx_dict(kv, 2);
    cr_expect_eq(d.len, 4, "len counts keys and values");
    char *s = cfx_value_to_string(d, CFX_STYLE_PYTHON);
    cr_expect_str_eq(s, "{'a': [1, 's'], 'b': {}}");
    free(s);
    s = cfx_value_to_string(d, CFX_STYLE_FX);
    cr_expect_str_eq(s, "{a: [1, s], b: {}}");
    free(s);
    cr_expect_str_eq(cfx_value_kind_name(CFX_V_DICT), "dict");
    cfx_value kv2[4] = {cfx_string("a"), cfx_list(in, 2), cfx_string("b"), cfx_dict(NULL, 0)};
    cr_expect(cfx_value_equal(d, cfx_dict(kv2, 2)));
    kv2[2] = cfx_string("c");
    cr_expect_not(cfx_value_equal(d, cfx_dict(kv2, 2)), "keys differ");
    cr_expect_not(cfx_value_equal(d, cfx_tuple(kv, 4)), "a dict is no tuple");
    cr_expect_eq(cfx_dict_get(d, "a")->kind, CFX_V_LIST);
    cr_expect_null(cfx_dict_get(d, "zz"));
    cr_expect_null(cfx_dict_get(cfx_int(3), "a"));
}

Test(dict_values, json_round_trip_and_refusals)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = build();
    char *j1, *j2;
    cr_assert_eq(cfx_graph_to_json(g, 0, &j1), CFX_OK, "%s", cfx_error_message());
    cr_expect(strstr(j1, "{\"dict\": [\"a\", {\"node\": \"x\"}, \"b\", [{\"node\": \"y\"}, 2], \"c\", {\"dict\": "
                         "[\"d\", \"it's\", \"e\", {\"tuple\": [{\"float\": 1.5}, null]}]}, \"f\", {\"dict\": []}]}"),
              "%s", j1);
    cfx_graph *g2 = cfx_graph_from_json(j1, strlen(j1));
    cr_assert(g2, "%s", cfx_error_message());
    cr_assert_eq(cfx_graph_to_json(g2, 0, &j2), CFX_OK);
    cr_expect_str_eq(j2, j1);
    char *t = cfx_graph_python_code_string(g2, "self");
    expect_golden("ir_dict.code.txt", t);
    free(t);
    cfx_tensor *x;
    expect_out(run(g2, &x));
    cr_expect_eq(cfx_node_num_users(cfx_graph_find_node(g2, "y")), 3, "uses inside dicts are rebuilt");
    /* the loader's refusals: pairs, string keys, each key once */
    static const struct {
        const char *value, *message;
    } bad[] = {
        {"{\"dict\": [\"a\"]}", "{\"dict\": ...} needs key, value pairs (got 1 items)"},
        {"{\"dict\": [1, 2]}", "a dict key must be a string"},
        {"{\"dict\": [\"a\", 1, \"b\", 2, \"a\", 3]}", "dict key 'a' appears twice"},
        {"{\"dict\": 1}", "{\"dict\": ...} needs an array"},
    };
    const char *at = strstr(j1, "[{\"dict\": [\"a\", {\"node\": \"x\"}");
    cr_assert(at);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* the first getitem's dict argument replaced by the bad value */
        const char *end = strstr(at, ", \"a\"], \"kwargs\"");
        cr_assert(end, "%s", at);
        size_t pre = (size_t)(at - j1) + 1;
        char *doc = malloc(strlen(j1) + 64);
        memcpy(doc, j1, pre);
        sprintf(doc + pre, "%s%s", bad[i].value, end);
        cr_expect_null(cfx_graph_from_json(doc, strlen(doc)), "%s accepted", bad[i].value);
        cr_expect(strstr(cfx_error_message(), bad[i].message), "%s: %s", bad[i].value, cfx_error_message());
        cfx_error_clear();
        free(doc);
    }
    free(j1);
    free(j2);
    cfx_graph_free(g);
    cfx_graph_free(g2);
    cfx_scope_end(s);
}

Test(dict_values, interpreter_key_error)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value kv[2] = {cfx_string("a"), NV(x)};
    cfx_node *gi = cfx_graph_call_fn(g, &cfx_fn_getitem, VALS(cfx_dict(kv, 1), cfx_string("b")), 2, NULL, 0);
    cfx_graph_output(g, NV(gi));
    cfx_value in = cfx_int(4), out;
    cr_expect_lt(cfx_interpret(g, &in, 1, NULL, &out), 0);
    cr_expect(strstr(cfx_error_message(), "KeyError: 'b'"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_assert_eq(cfx_node_update_arg(gi, 1, cfx_string("a")), CFX_OK);
    cr_assert_eq(cfx_interpret(g, &in, 1, NULL, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(out.kind, CFX_V_INT);
    cr_expect_eq(out.u.i, 4);
    cfx_graph_free(g);
    cfx_scope_end(s);
}

Test(dict_values, passes_see_references_inside_dicts)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = build();
    cfx_node *x = cfx_graph_find_node(g, "x"), *y = cfx_graph_find_node(g, "y");
    cfx_node *gi = cfx_graph_find_node(g, "getitem");
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_node_first_user(x, &(cfx_user_iter){0}), gi);
    cr_expect_eq(cfx_node_num_inputs(gi), 2, "x and y, from inside the dict");
    /* replace_all_uses_with rewrites the reference inside the dict */
    cr_expect_eq(cfx_node_replace_all_uses_with(x, y, NULL, NULL, NULL), 1);
    cr_expect_eq(cfx_node_num_users(x), 0);
    cr_expect_eq(cfx_dict_get(cfx_node_arg(gi, 0), "a")->u.node, y);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s", cfx_error_message());
    /* DCE: the nodes referenced only from dicts stay alive, a dead dict user goes */
    cfx_value kv[2] = {cfx_string("q"), NV(gi)};
    cfx_graph_inserting_before(g, cfx_graph_output_node(g));
    cfx_node *dead = cfx_graph_call_fn(g, &cfx_fn_getitem, VALS(cfx_dict(kv, 1), cfx_string("q")), 2, NULL, 0);
    cr_assert(dead);
    /* CSE: the same dict twice is one node, a dict with other contents is not */
    cfx_value k2[4] = {cfx_string("k"), NV(cfx_graph_find_node(g, "relu_default")), cfx_string("z"), NV(y)};
    cfx_node *dup = cfx_graph_call_fn(g, &cfx_fn_getitem, VALS(cfx_dict(k2, 2), cfx_string("k")), 2, NULL, 0);
    k2[3] = NV(x);
    cfx_node *other = cfx_graph_call_fn(g, &cfx_fn_getitem, VALS(cfx_dict(k2, 2), cfx_string("k")), 2, NULL, 0);
    cr_assert(dup && other);
    cfx_node *sum = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"), VALS(NV(dup), NV(other)), 2, NULL, 0);
    cr_assert(sum, "%s", cfx_error_message());
    cr_assert_eq(cfx_node_update_arg(cfx_graph_output_node(g), 0, NV(sum)), CFX_OK, "%s", cfx_error_message());
    bool changed;
    cr_assert_eq(cfx_pass_cse(g, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect_eq(cfx_node_arg(sum, 0).u.node, cfx_graph_find_node(g, "getitem_1"), "the duplicate merged");
    cr_expect_eq(cfx_node_arg(sum, 1).u.node, other, "another dict kept");
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect(cfx_node_is_erased(dead));
    cr_expect_not(cfx_node_is_erased(gi));
    /* normalize-args leaves builtin calls (and their dicts) alone */
    char *before = cfx_graph_to_string(g);
    cfx_graph_module *gm = cfx_graph_module_new(g, "M");
    cr_assert_eq(cfx_pass_normalize_args(gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    char *after = cfx_graph_to_string(g);
    cr_expect(strstr(after, "args = ({a: %y, b: [%y, 2], c: {d: it's, e: (1.5, None)}, f: {}}, a)"), "%s", after);
    cr_expect(strstr(before, "{k: %relu_default, z: %x}"), "%s", before);
    free(before);
    free(after);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

/* The emitters: Python (a module PyTorch runs), C (cfx_dict literals; compiled for syntax) and
 * DOT (an edge for every reference inside a dict). */
Test(dict_values, codegen)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = build();
    cfx_graph_module *gm = cfx_graph_module_new(g, "M");
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_module_to_python(gm, NULL, &b), CFX_OK, "%s", cfx_error_message());
    char *py = cfx_buf_take(&b);
    cr_expect(strstr(py, "getitem = {'a': x, 'b': [y, 2], 'c': {'d': \"it's\", 'e': (1.5, None)}, 'f': {}}['a']"),
              "%s", py);
    free(py);
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_dot(g, "M", &b), CFX_OK, "%s", cfx_error_message());
    char *dot = cfx_buf_take(&b);
    cr_expect(strstr(dot, "\"x\" -> \"getitem\""), "%s", dot);
    cr_expect(strstr(dot, "\"y\" -> \"getitem\""), "%s", dot);
    free(dot);
    /* C: a dict literal as an argument value */
    cfx_graph *h = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(h, "x");
    cfx_value kv[4] = {cfx_string("in_ptr0"), NV(x), cfx_string("n"), cfx_int(5)};
    cfx_hop *hop = cfx_triton_kernel_wrapper_mutation_hop();
    cr_assert(hop);
    cfx_value grid = cfx_tuple(VALS(cfx_int(1), cfx_int(1), cfx_int(1)), 3);
    cfx_kwarg kw[5] = {{"kernel_idx", cfx_int(0)},
                       {"constant_args_idx", cfx_int(0)},
                       {"grid", cfx_list(&grid, 1)},
                       {"tma_descriptor_metadata", cfx_dict(NULL, 0)},
                       {"kwargs", cfx_dict(kv, 2)}};
    cr_assert(cfx_graph_create_node(h, CFX_NODE_CALL_FUNCTION, cfx_target_fn(cfx_hop_target(hop)), NULL, 0, kw, 5,
                                    "triton_kernel_wrapper_mutation_proxy"));
    cfx_graph_output(h, NV(x));
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_c(h, "forward", &b), CFX_OK, "%s", cfx_error_message());
    char *c = cfx_buf_take(&b);
    cr_expect(strstr(c, "cfx_dict((const cfx_value[]){cfx_string(\"kernel_idx\"), cfx_int(INT64_C(0)), "), "%s", c);
    cr_expect(strstr(c, "cfx_string(\"tma_descriptor_metadata\"), cfx_dict(NULL, 0), cfx_string(\"kwargs\"), "
                        "cfx_dict((const cfx_value[]){cfx_string(\"in_ptr0\"), "),
              "%s", c);
    cr_expect(strstr(c, "cfx_hop_call(cfx_hop_find(\"triton_kernel_wrapper_mutation\"), hop_args, 1, &"), "%s", c);
    expect_c_compiles(c); /* it is C */
    free(c);
    cfx_graph_free(h);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}
