/* test_dce.c - eliminate_dead_code and the purity oracle (ir/passes/dce.h, ir/side_effects.h).
 *
 * The graphs are PyTorch 2.13's own results (tests/data/ir_dce_*.txt, mutable schemas included);
 * the registry and the is_impure_node override are checked against 2.13's source. */
#include <criterion/criterion.h>

#include "ir/passes/dce.h"
#include "tests/ir/ir_test_util.h"

static void collect_removed(const cfx_node *n, void *ctx)
{
    cfx_buf *b = ctx;
    if (b->len)
        cfx_buf_puts(b, ", ");
    cfx_node_print_name(n, b);
}

Test(ir_dce, golden)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::add.Tensor", NV(x), NV(x));
    cfx_node *b = OP(g, "aten::mul.Tensor", NV(a), NV(a));
    OP(g, "aten::relu", NV(b));
    FN(g, &cfx_fn_torch_assert, cfx_bool(true), cfx_string("msg"));
    FN(g, &cfx_fn_getitem, NV(x), cfx_int(0));
    cfx_node *cos = OP(g, "aten::cos", NV(x));
    cfx_graph_output(g, NV(cos));
    char *s = cfx_graph_to_string(g), *want = ir_golden("ir_dce_before.graph.txt");
    cr_expect_str_eq(s, want);
    free(s);
    free(want);

    cfx_buf removed;
    cfx_buf_init(&removed);
    cfx_dce_options opts = {.on_removed = collect_removed, .on_removed_ctx = &removed};
    bool changed = false;
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, &opts, &changed), CFX_OK);
    cr_expect(changed);
    cr_expect_str_eq(removed.data, "getitem, relu, mul, add"); /* reverse order, one pass */
    cfx_buf_free(&removed);
    s = cfx_graph_to_string(g);
    want = ir_golden("ir_dce_after.graph.txt");
    cr_expect_str_eq(s, want);
    free(s);
    free(want);
    s = cfx_graph_python_code_string(g, "self");
    want = ir_golden("ir_dce_after.code.txt");
    cr_expect_str_eq(s, want);
    free(s);
    free(want);
    /* a second run changes nothing */
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    cr_expect(!changed);
    cfx_graph_free(g);
}

/* An unused in-place op and an unused out= op stay (their schemas write an argument); an unused
 * pure op goes: torch.fx 2.13's result (tests/data/ir_dce_mutable.graph.txt). */
Test(ir_dce, mutable_schema_is_impure)
{
    const cfx_op *add_ = test_op_schema("aten::add_.Tensor",
                                        "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
    const cfx_op *out = test_op_schema("aten::add.out",
                                       "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
    cr_assert(add_->schema && add_->schema->is_mutable);
    cr_assert(out->schema && out->schema->is_mutable);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *z = cfx_graph_placeholder(g, "z");
    cfx_node *m = cfx_graph_call_op(g, add_, VALS(NV(x), cfx_int(1)), 2, NULL, 0);
    cfx_kwarg kw[] = {KW("out", NV(z))};
    cfx_node *o = cfx_graph_call_op(g, out, VALS(NV(x), NV(x)), 2, kw, 1);
    OP(g, "aten::mul.Tensor", NV(x), cfx_int(2));
    cfx_graph_output(g, NV(OP(g, "aten::cos", NV(z))));
    cr_expect(cfx_node_is_impure(m));
    cr_expect(cfx_node_is_impure(o));
    bool changed;
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    cr_expect(changed);
    char *s = cfx_graph_to_string(g), *want = ir_golden("ir_dce_mutable.graph.txt");
    cr_expect_str_eq(s, want);
    free(s);
    free(want);
    cfx_graph_free(g);

    /* an operator cfx knows by name only, without a schema, is pure */
    g = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cfx_node *nameonly = OP(g, "aten::mul_.Tensor", NV(x), cfx_int(2));
    cfx_graph_output(g, NV(x));
    cr_expect(!cfx_node_is_impure(nameonly));
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    cr_expect(cfx_node_is_erased(nameonly));
    cfx_graph_free(g);
    test_ops_free();
}

/* The registry starts as 2.13's _side_effectful_functions: every operator overload and function
 * of it (tests/data/ir_side_effects.tsv) is registered. */
Test(ir_dce, registry_is_torch_213)
{
    char *text = ir_golden("ir_side_effects.tsv");
    int checked = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *key = strchr(line, '\t');
        cr_assert(key);
        *key++ = '\0';
        if (strcmp(line, "op") == 0) {
            cr_expect(cfx_side_effect_is_registered(cfx_target_op(test_op(key))), "%s", key);
            checked++;
        } else if (strcmp(line, "fn") == 0) {
            const char *dot = strrchr(key, '.');
            cfx_builtin_fn fn = {key, dot ? dot + 1 : key, false};
            cr_expect(cfx_side_effect_is_registered(cfx_target_fn(&fn)), "%s", key);
            checked++;
        }
    }
    free(text);
    cr_expect_geq(checked, 20);
}

Test(ir_dce, registry)
{
    static const cfx_builtin_fn my_print = {"builtins.print", "print", true};
    static const cfx_builtin_fn my_pure = {"mylib.pure_fn", "pure_fn", false};
    cr_expect(cfx_side_effect_is_registered(cfx_target_fn(&cfx_fn_torch_assert)));
    cr_expect(cfx_side_effect_is_registered(cfx_target_fn(&my_print)));
    cr_expect(!cfx_side_effect_is_registered(cfx_target_fn(&my_pure)));
    cr_expect(cfx_side_effect_is_registered(cfx_target_op(test_op("aten::_assert_async.msg"))));
    cr_expect(cfx_side_effect_is_registered(cfx_target_op(test_op("aten::_assert_scalar"))));
    cr_expect(cfx_side_effect_is_registered(cfx_target_fn(&cfx_fn_setitem)));
    cr_expect(!cfx_side_effect_is_registered(cfx_target_op(test_op("aten::relu"))));
    cr_expect_str_eq(cfx_side_effect_key(cfx_target_op(test_op("aten::relu"))), "aten::relu");
    cr_expect_null(cfx_side_effect_key(cfx_target_str("x")));
    /* descriptors by name, for graph readers */
    cr_expect_eq(cfx_builtin_fn_find("operator.getitem"), &cfx_fn_getitem);
    cr_expect_null(cfx_builtin_fn_find("mylib.pure_fn"));
    cr_assert_eq(cfx_builtin_fn_register(&my_pure), CFX_OK);
    cr_assert_eq(cfx_builtin_fn_register(&my_pure), CFX_OK);
    cr_expect_eq(cfx_builtin_fn_find("mylib.pure_fn"), &my_pure);

    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *r = OP(g, "aten::relu", NV(x));
    cfx_node *later = OP(g, "myns::log", NV(x));
    cfx_node *pf = FN(g, &my_pure, NV(x));
    cfx_node *rnd = OP(g, "aten::rand_like", NV(x));
    cfx_node *pr = FN(g, &my_print, NV(x));
    cfx_graph_output(g, NV(x));
    cr_expect(!cfx_node_is_impure(r));
    /* registration after the graph cached its answer still counts (has_side_effect) */
    cr_assert_eq(cfx_side_effect_register(cfx_target_op(test_op("aten::relu.default"))), CFX_OK);
    cr_expect(cfx_node_is_impure(r));
    cr_assert_eq(cfx_side_effect_register_name("myns::log"), CFX_OK);
    cr_expect(cfx_node_is_impure(later));
    cr_assert_eq(cfx_side_effect_register_nondeterministic("aten::rand_like"), CFX_OK);
    cr_expect(cfx_node_is_impure(rnd));
    cr_expect(!cfx_node_is_impure_ex(rnd, false));
    cr_expect(cfx_node_is_impure(pr));
    cr_expect(cfx_node_is_impure(x));
    cr_expect(cfx_node_is_impure(cfx_graph_output_node(g)));
    bool changed;
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    cr_expect(changed);
    cr_expect(cfx_node_is_erased(pf));
    cr_expect(!cfx_node_is_erased(r));
    cr_expect(!cfx_node_is_erased(later));
    cr_expect(!cfx_node_is_erased(rnd));
    cr_expect(!cfx_node_is_erased(pr));
    cfx_graph_free(g);
}

static bool keep_named_keep(const cfx_node *n, void *ctx)
{
    (*(int *)ctx)++;
    return cfx_node_opcode(n) == CFX_NODE_OUTPUT || cfx_node_name_is(n, "keep");
}

Test(ir_dce, override_callback)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *unused = cfx_graph_placeholder(g, "unused");
    cfx_node *k = OPN(g, "aten::relu", "keep", NV(x));
    cfx_node *a = FN(g, &cfx_fn_torch_assert, cfx_bool(true), cfx_string("m")); /* impure by default */
    cfx_graph_output(g, NV(x));
    int calls = 0;
    cfx_dce_options opts = {.is_impure = keep_named_keep, .is_impure_ctx = &calls};
    bool changed;
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, &opts, &changed), CFX_OK);
    cr_expect(changed);
    cr_expect_eq(calls, 5); /* asked about every node, as FX asks is_impure_node */
    cr_expect(!cfx_node_is_erased(k));
    cr_expect(cfx_node_is_erased(a));      /* the oracle said pure */
    cr_expect(cfx_node_is_erased(unused)); /* even a placeholder, if the oracle says so */
    cr_expect(!cfx_node_is_erased(x));     /* used */
    cfx_graph_free(g);
}

static bool module_impure(const cfx_graph *g, const char *path, void *ctx)
{
    (void)g;
    (void)ctx;
    return strcmp(path, "logger") == 0;
}

Test(ir_dce, call_module_hook)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *lg = cfx_graph_call_module(g, "logger", VALS(NV(x)), 1, NULL, 0);
    cfx_node *lin = cfx_graph_call_module(g, "linear", VALS(NV(x)), 1, NULL, 0);
    cfx_node *meth = cfx_graph_call_method(g, "relu", VALS(NV(x)), 1, NULL, 0);
    cfx_node *attr = cfx_graph_get_attr(g, "weight");
    cfx_graph_output(g, NV(x));
    cr_expect(!cfx_node_is_impure(lg)); /* no owner: modules are pure */
    cfx_graph_set_module_impure_fn(g, module_impure, NULL);
    cr_expect(cfx_node_is_impure(lg));
    cr_expect(!cfx_node_is_impure(lin));
    cr_expect(!cfx_node_is_impure(meth));
    cr_expect(!cfx_node_is_impure(attr));
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, NULL), CFX_OK);
    cr_expect(!cfx_node_is_erased(lg));
    cr_expect(cfx_node_is_erased(lin));
    cr_expect(cfx_node_is_erased(meth));
    cr_expect(cfx_node_is_erased(attr));
    cfx_graph_free(g);
}

Test(ir_dce, lint_failure_stops_dce)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    cfx_node *dead = OP(g, "aten::sin", NV(x));
    cfx_graph_output(g, NV(b));
    cr_assert_eq(cfx_node_prepend(a, b), CFX_OK);
    cfx_error_clear();
    bool changed = true;
    cr_expect_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_ERR);
    cr_expect(!changed);
    cr_expect(!cfx_node_is_erased(dead));
    cr_expect(strncmp(cfx_error_message(), "Argument 'relu' of Node 'cos'", 29) == 0);
    cfx_error_clear();
    cfx_graph_free(g);
}

/* The walk goes over a snapshot of the nodes: one erased under it by a callback is skipped,
 * not erased twice, and the rest of the dead chain still goes. */
static void erase_other(const cfx_node *n, void *ctx)
{
    cfx_node **victim = ctx;
    if (*victim && cfx_node_name_is(n, "cos")) {
        cr_expect_eq(cfx_graph_erase_node(cfx_node_graph(n), *victim), CFX_OK);
        *victim = NULL;
    }
}

static void count_warning(const char *message, void *ctx)
{
    (void)message;
    (*(int *)ctx)++;
}

Test(ir_dce, callback_erases_ahead)
{
    int warnings = 0;
    cfx_set_warning_handler(count_warning, &warnings);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *lone = OP(g, "aten::neg", NV(x));
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    cfx_graph_output(g, NV(x));
    cfx_node *victim = lone;
    cfx_dce_options opts = {.on_removed = erase_other, .on_removed_ctx = &victim};
    bool changed = false;
    cfx_error_clear();
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, &opts, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect(changed);
    cr_expect_null(victim);
    cr_expect(cfx_node_is_erased(lone) && cfx_node_is_erased(a) && cfx_node_is_erased(b));
    cr_expect_eq(cfx_graph_num_nodes(g), 2);
    cr_expect_eq(warnings, 0, "no double erase");
    cfx_set_warning_handler(NULL, NULL);
    cfx_graph_free(g);
}
