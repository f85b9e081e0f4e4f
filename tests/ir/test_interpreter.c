/* test_interpreter.c - running graphs node by node (ir/interpreter.h).
 *
 * The oracle for results is eager execution: every built-in model is traced (real and fake
 * mode), its graph run by the interpreter on fresh example inputs, and the results (and the
 * inputs an in-place op wrote to) compared element by element with the same C model called
 * directly. Error texts follow torch.fx.Interpreter ("... While executing %node ...") and
 * torch.ops' argument binding; every failing run must leave no tensor behind
 * (cfx_tensor_live_count is the witness, and the suite also runs under ASan). */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "tools/models/models.h"
#include "tests/test_util.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static void expect_same(cfx_value got, cfx_value want, const char *what)
{
    cr_assert_eq(got.kind, want.kind, "%s: kind %u vs %u", what, got.kind, want.kind);
    switch (got.kind) {
    case CFX_V_TENSOR: {
        cfx_tensor *a = got.u.t, *b = want.u.t;
        cr_assert(a && b, "%s: NULL tensor", what);
        cr_assert_eq(a->dtype, b->dtype, "%s: dtype", what);
        cr_assert_eq(a->ndim, b->ndim, "%s: ndim", what);
        for (int d = 0; d < a->ndim; d++)
            cr_assert_eq(a->sizes[d], b->sizes[d], "%s: size %d", what, d);
        int64_t n = cfx_tensor_numel(a);
        for (int64_t i = 0; i < n; i++) {
            double x = cfx_tensor_get_double(a, i), y = cfx_tensor_get_double(b, i);
            cr_assert(x == y, "%s: element %lld: %g vs %g", what, (long long)i, x, y);
        }
        break;
    }
    case CFX_V_LIST:
    case CFX_V_TUPLE:
        cr_assert_eq(got.len, want.len, "%s: length", what);
        for (uint32_t i = 0; i < got.len; i++)
            expect_same(got.u.items[i], want.u.items[i], what);
        break;
    default:
        cr_assert(cfx_value_equal(got, want), "%s: values differ", what);
    }
}

enum { MAX_RESULTS = 16 };
_Static_assert((int)MAX_RESULTS >= (int)CFX_MODEL_MAX_ARGS, "the eager stack holds the arguments too");

/* Calls fn (signature as make_fx takes it) directly; the result as one value (a tuple when it
 * returns several, its items in items[MAX_RESULTS]). Tensors land in the current scope. */
static cfx_value eager(cfx_fnptr fn, const char *signature, cfx_module *module, const cfx_value *args, int n,
                       cfx_value *items)
{
    char text[256];
    snprintf(text, sizeof text, "f%s", signature);
    cfx_schema *s = cfx_schema_parse(text, NULL);
    cr_assert(s, "%s", text);
    int nr = s->n_returns;
    cr_assert_leq(nr, MAX_RESULTS);
    cfx_adapter *a = module ? cfx_adapter_new_lead(s, fn) : cfx_adapter_new(s, fn);
    cr_assert(a);
    cfx_value stack[MAX_RESULTS]; /* >= CFX_MODEL_MAX_ARGS */
    memcpy(stack, args, (size_t)n * sizeof *stack);
    int rc = module ? cfx_adapter_call_lead(a, module, stack) : cfx_adapter_call_boxed(a, NULL, cfx_keyset_empty(), stack);
    cr_assert_eq(rc, CFX_OK, "%s", cfx_error_message());
    cfx_adapter_free(a);
    cfx_schema_free(s);
    if (nr == 1)
        return stack[0];
    memcpy(items, stack, (size_t)nr * sizeof *items);
    return cfx_tuple(items, (uint32_t)nr);
}

/* Traces m, runs the graph on fresh inputs and compares with m called directly. */
static void check_model(const cfx_model *m, cfx_tracing_mode mode)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *tmod = NULL, *emod = NULL, *imod = NULL;
    cfx_value targs[CFX_MODEL_MAX_ARGS], eargs[CFX_MODEL_MAX_ARGS], iargs[CFX_MODEL_MAX_ARGS];
    int n = m->setup(&tmod, targs);
    cr_assert_geq(n, 0);
    cr_assert_eq(m->setup(&emod, eargs), n);
    cr_assert_eq(m->setup(&imod, iargs), n);
    cfx_make_fx_options opts = {mode, tmod, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, targs, n, &opts);
    cr_assert(gm, "tracing %s: %s", m->name, cfx_error_message());

    cfx_value items[MAX_RESULTS];
    cfx_value want = eager(m->forward, m->signature, emod, eargs, n, items);

    int64_t live = cfx_tensor_live_count();
    cfx_scope rs = cfx_scope_begin();
    cfx_value got;
    cr_assert_eq(cfx_graph_module_run(gm, iargs, n, &got), CFX_OK, "%s: %s", m->name, cfx_error_message());
    expect_same(got, want, m->name);
    for (int i = 0; i < n; i++) /* what in-place ops wrote to the inputs */
        expect_same(iargs[i], eargs[i], "inputs after the run");
    cfx_scope_end(rs);
    cr_expect_eq(cfx_tensor_live_count(), live, "%s: the run left tensors behind", m->name);

    cfx_graph_module_free(gm);
    cfx_module_free(tmod);
    cfx_module_free(emod);
    cfx_module_free(imod);
    cfx_scope_end(s);
}

Test(interpreter, every_builtin_model_matches_eager_execution)
{
    cr_assert_geq(cfx_model_count(), 3);
    for (int i = 0; i < cfx_model_count(); i++) {
        check_model(cfx_model_at(i), CFX_TRACE_REAL);
        check_model(cfx_model_at(i), CFX_TRACE_FAKE);
    }
}

/* ---- several returns, getitem, kwargs, tuple outputs ----------------------------------------- */

static cfx_tensor2 multi_model(cfx_tensor *x)
{
    cfx_max_dim_result m = cfx_max_dim(x, 1, true);
    int64_t norm[1] = {4};
    cfx_native_layer_norm_result ln = cfx_native_layer_norm(x, ((cfx_int_list){norm, 1}), NULL, NULL, 1e-5);
    int64_t dims[1] = {0};
    cfx_tensor *s = cfx_sum(ln.out, ((cfx_int_list){dims, 1}), false, cfx_dtype_value(CFX_FLOAT64));
    return (cfx_tensor2){cfx_add(m.values, cfx_relu(ln.rstd)), s};
}

Test(interpreter, getitem_kwargs_and_tuple_outputs)
{
    cfx_scope s = cfx_scope_begin();
    int64_t shape[2] = {3, 4};
    cfx_value a = cfx_tensor_value(cfx_model_example_tensor(shape, 2, 3));
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)multi_model, "(Tensor x) -> (Tensor, Tensor)", &a, 1, NULL);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph *g = cfx_graph_module_graph(gm);
    cr_assert(cfx_graph_find_node(g, "getitem_2"), "make_fx's getitem nodes");
    const cfx_node *sum = cfx_graph_find_node(g, "sum_1");
    cr_assert(sum && cfx_node_num_kwargs(sum) == 1, "sum's dtype is a kwarg");

    cfx_value items[MAX_RESULTS];
    cfx_value want = eager((cfx_fnptr)multi_model, "(Tensor x) -> (Tensor, Tensor)", NULL, &a, 1, items);
    cfx_value got;
    cr_assert_eq(cfx_graph_module_run(gm, &a, 1, &got), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(got.kind, CFX_V_TUPLE);
    expect_same(got, want, "multi");
    cr_expect_eq(got.u.items[1].u.t->dtype, CFX_FLOAT64);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

/* A hand-built graph: a kwarg given out of order, a default filled between, a literal output. */
Test(interpreter, binds_kwargs_by_schema)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_kwarg alpha = {"alpha", cfx_int(3)};
    cfx_value xy[2] = {cfx_node_value(x), cfx_node_value(x)};
    cfx_node *add = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"), xy, 2, &alpha, 1);
    /* sum(x, dim=[1]) with keepdim skipped: its default fills the gap before dtype */
    int64_t one = 1;
    cfx_value dim_items[1] = {cfx_int(one)};
    cfx_value dim = cfx_list(dim_items, 1);
    cfx_kwarg kws[2] = {{"dtype", cfx_dtype_value(CFX_FLOAT64)}, {"dim", dim}};
    cfx_node *sum = cfx_graph_call_op(g, cfx_op_find("aten::sum.dim_IntList"), (cfx_value[]){cfx_node_value(add)}, 1,
                                      kws, 2);
    cfx_value outs[3] = {cfx_node_value(sum), cfx_int(7), cfx_node_value(add)};
    cfx_graph_output(g, cfx_tuple(outs, 3));
    int64_t shape[2] = {2, 3};
    cfx_tensor *t = cfx_model_example_tensor(shape, 2, 1);
    cfx_value in = cfx_tensor_value(t), got;
    cr_assert_eq(cfx_interpret(g, &in, 1, NULL, &got), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(got.kind, CFX_V_TUPLE);
    cr_assert_eq(got.len, 3);
    expect_same(got.u.items[1], cfx_int(7), "literal");
    cfx_tensor *want_add = cfx_add(t, t, cfx_int(3));
    expect_same(got.u.items[2], cfx_tensor_value(want_add), "add alpha=3");
    cfx_tensor *want_sum = cfx_sum(want_add, ((cfx_int_list){&one, 1}), false, cfx_dtype_value(CFX_FLOAT64));
    expect_same(got.u.items[0], cfx_tensor_value(want_sum), "sum");
    cfx_graph_free(g);
    cfx_scope_end(s);
}

/* ---- freeing after the last use ------------------------------------------------------------ */

typedef struct peak {
    int64_t base, max;
} peak;

static int watch(cfx_node *n, cfx_value v, void *ctx)
{
    (void)n;
    (void)v;
    peak *p = ctx;
    int64_t live = cfx_tensor_live_count() - p->base;
    if (live > p->max)
        p->max = live;
    return CFX_OK;
}

Test(interpreter, values_die_after_their_last_use)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_op *relu = cfx_op_find("aten::relu"), *add = cfx_op_find("aten::add.Tensor"), *cos = cfx_op_find("aten::cos");
    cfx_node *y = x;
    for (int i = 0; i < 500; i++) {
        cfx_node *r = cfx_graph_call_op(g, relu, (cfx_value[]){cfx_node_value(y)}, 1, NULL, 0);
        cfx_graph_call_op(g, cos, (cfx_value[]){cfx_node_value(r)}, 1, NULL, 0); /* unused */
        y = cfx_graph_call_op(g, add, (cfx_value[]){cfx_node_value(r), cfx_node_value(x)}, 2, NULL, 0);
    }
    cfx_graph_output(g, cfx_node_value(y));
    int64_t shape[1] = {8};
    cfx_value in = cfx_tensor_value(cfx_model_example_tensor(shape, 1, 0)), got;
    peak p = {cfx_tensor_live_count(), 0};
    cfx_interp_options o = {.on_node = watch, .on_node_ctx = &p};
    cr_assert_eq(cfx_interpret(g, &in, 1, &o, &got), CFX_OK, "%s", cfx_error_message());
    /* x, the value just made and the one or two still waiting for their user */
    cr_expect_leq(p.max, 4, "%lld tensors alive at once in a 1500-node chain", (long long)p.max);
    cr_expect_eq(cfx_tensor_live_count() - p.base, 1, "only the result is left (in the caller's scope)");
    cfx_graph_free(g);
    cfx_scope_end(s);
}

/* ---- builtins ------------------------------------------------------------------------------- */

static cfx_value run_fn(const cfx_builtin_fn *fn, cfx_value a, cfx_value b, int n)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *pa = cfx_graph_placeholder(g, "a"), *pb = cfx_graph_placeholder(g, "b");
    cfx_value args[2] = {cfx_node_value(pa), cfx_node_value(pb)};
    cfx_node *r = cfx_graph_call_fn(g, fn, args, (uint32_t)n, NULL, 0);
    cfx_graph_output(g, cfx_node_value(r));
    cfx_value in[2] = {a, b}, out;
    int rc = cfx_interpret(g, in, 2, NULL, &out);
    cfx_graph_free(g);
    return rc == CFX_OK ? out : (cfx_value){CFX_V_KIND_COUNT};
}

Test(interpreter, builtin_arithmetic_is_pythons)
{
    cfx_scope s = cfx_scope_begin();
    expect_same(run_fn(&cfx_fn_floordiv, cfx_int(-7), cfx_int(2), 2), cfx_int(-4), "-7 // 2");
    expect_same(run_fn(&cfx_fn_mod, cfx_int(-7), cfx_int(2), 2), cfx_int(1), "-7 % 2");
    expect_same(run_fn(&cfx_fn_mod, cfx_int(7), cfx_int(-2), 2), cfx_int(-1), "7 % -2");
    expect_same(run_fn(&cfx_fn_truediv, cfx_int(7), cfx_int(2), 2), cfx_double(3.5), "7 / 2");
    expect_same(run_fn(&cfx_fn_floordiv, cfx_double(-7.5), cfx_int(2), 2), cfx_double(-4.0), "-7.5 // 2");
    expect_same(run_fn(&cfx_fn_mod, cfx_double(-7.5), cfx_int(2), 2), cfx_double(0.5), "-7.5 % 2");
    expect_same(run_fn(&cfx_fn_pow, cfx_int(3), cfx_int(4), 2), cfx_int(81), "3 ** 4");
    expect_same(run_fn(&cfx_fn_pow, cfx_int(2), cfx_int(-1), 2), cfx_double(0.5), "2 ** -1");
    expect_same(run_fn(&cfx_fn_add, cfx_bool(true), cfx_bool(true), 2), cfx_int(2), "True + True");
    expect_same(run_fn(&cfx_fn_mul, cfx_int(3), cfx_double(0.5), 2), cfx_double(1.5), "3 * 0.5");
    expect_same(run_fn(&cfx_fn_lt, cfx_int(3), cfx_double(3.5), 2), cfx_bool(true), "3 < 3.5");
    expect_same(run_fn(&cfx_fn_neg, cfx_int(3), cfx_none(), 1), cfx_int(-3), "-3");
    cfx_value items[2] = {cfx_int(10), cfx_int(20)};
    expect_same(run_fn(&cfx_fn_getitem, cfx_tuple(items, 2), cfx_int(-1), 2), cfx_int(20), "(10, 20)[-1]");

    static const struct {
        const cfx_builtin_fn *fn;
        cfx_value a, b;
        const char *msg;
    } errs[] = {
        {&cfx_fn_floordiv, {CFX_V_INT, 0, {.i = 1}}, {CFX_V_INT, 0, {.i = 0}}, "integer division or modulo by zero"},
        {&cfx_fn_truediv, {CFX_V_DOUBLE, 0, {.d = 1}}, {CFX_V_INT, 0, {.i = 0}}, "float division by zero"},
        {&cfx_fn_mul, {CFX_V_INT, 0, {.i = INT64_MAX}}, {CFX_V_INT, 0, {.i = 2}},
         "integer overflow in '*' (cfx's ints are 64-bit)"},
        {&cfx_fn_lt, {CFX_V_STRING, 1, {.s = "a"}}, {CFX_V_INT, 0, {.i = 1}},
         "'<' not supported between instances of 'str' and 'int'"},
        {&cfx_fn_getitem, {CFX_V_INT, 0, {.i = 3}}, {CFX_V_INT, 0, {.i = 0}}, "'int' object is not subscriptable"},
        {&cfx_fn_setitem, {CFX_V_INT, 0, {.i = 3}}, {CFX_V_INT, 0, {.i = 0}}, "cfx's interpreter cannot call operator.setitem"},
    };
    for (int i = 0; i < COUNT_OF(errs); i++) {
        cr_expect_eq(run_fn(errs[i].fn, errs[i].a, errs[i].b, 2).kind, CFX_V_KIND_COUNT);
        const char *m = cfx_error_message();
        cr_expect(m && strncmp(m, errs[i].msg, strlen(errs[i].msg)) == 0 && strstr(m, "\n\nWhile executing %"),
                  "%d: %s", i, m);
        cfx_error_clear();
    }
    cfx_value one[1] = {cfx_int(1)};
    cr_expect_eq(run_fn(&cfx_fn_getitem, cfx_list(one, 1), cfx_int(1), 2).kind, CFX_V_KIND_COUNT);
    cr_expect(strncmp(cfx_error_message(), "list index out of range\n", 24) == 0, "%s", cfx_error_message());
    cfx_error_clear();
    cfx_scope_end(s);
}

/* ---- errors --------------------------------------------------------------------------------- */

/* Runs g on args and expects failure with exactly `want`; nothing may be left alive. */
static void expect_error(const cfx_graph *g, const cfx_graph_module *gm, const cfx_value *args, int n,
                         const char *want)
{
    int64_t live = cfx_tensor_live_count();
    cfx_scope s = cfx_scope_begin();
    cfx_interp_options o = {.module = gm};
    cfx_value out = cfx_int(1);
    int rc = cfx_interpret(g, args, n, &o, &out);
    cfx_scope_end(s);
    cr_expect_lt(rc, 0);
    cr_expect_eq(out.kind, CFX_V_NONE);
    cr_expect_str_eq(cfx_error_message() ? cfx_error_message() : "(none)", want);
    cr_expect_eq(cfx_tensor_live_count(), live, "a failed run left tensors behind");
    cfx_error_clear();
}

Test(interpreter, errors_name_the_node)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x"), *y = cfx_graph_placeholder(g, "y");
    cfx_node *r = cfx_graph_call_op(g, cfx_op_find("aten::relu"), (cfx_value[]){cfx_node_value(x)}, 1, NULL, 0);
    cfx_node *add = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"),
                                      (cfx_value[]){cfx_node_value(r), cfx_node_value(y)}, 2, NULL, 0);
    cfx_graph_output(g, cfx_node_value(add));
    int64_t s23[2] = {2, 3}, s5[1] = {5};
    cfx_value args[3] = {cfx_tensor_value(cfx_model_example_tensor(s23, 2, 0)),
                         cfx_tensor_value(cfx_model_example_tensor(s5, 1, 0)), cfx_int(0)};
    expect_error(g, NULL, args, 2,
                 "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1\n\n"
                 "While executing %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = "
                 "(%relu, %y), kwargs = {})\nOriginal traceback:\nNone");
    expect_error(g, NULL, args, 1,
                 "Expected positional argument for parameter y, but one was not passed in!\n\n"
                 "While executing %y : [num_users=1] = placeholder[target=y]\nOriginal traceback:\nNone");
    expect_error(g, NULL, args, 3, "the graph takes 2 positional arguments but 3 were given");

    /* binding errors */
    cfx_kwarg bad = {"alph", cfx_int(1)};
    cr_assert_eq(cfx_node_set_kwargs(add, &bad, 1), CFX_OK);
    args[1] = args[0];
    expect_error(g, NULL, args, 2,
                 "Unknown keyword argument 'alph' for operator 'aten::add'. Schema: aten::add.Tensor(Tensor self, "
                 "Tensor other, *, Scalar alpha=1) -> Tensor\n\nWhile executing %add : [num_users=1] = "
                 "call_function[target=torch.ops.aten.add.Tensor](args = (%relu, %y), kwargs = {alph: 1})\n"
                 "Original traceback:\nNone");
    cfx_kwarg twice = {"self", cfx_node_value(x)};
    cr_assert_eq(cfx_node_set_kwargs(add, &twice, 1), CFX_OK);
    expect_error(g, NULL, args, 2,
                 "Argument 'self' specified both as positional and keyword argument. Schema: aten::add.Tensor(Tensor "
                 "self, Tensor other, *, Scalar alpha=1) -> Tensor\n\nWhile executing %add : [num_users=1] = "
                 "call_function[target=torch.ops.aten.add.Tensor](args = (%relu, %y), kwargs = {self: %x})\n"
                 "Original traceback:\nNone");
    cr_assert_eq(cfx_node_set_args_kwargs(add, (cfx_value[]){cfx_node_value(r)}, 1, NULL, 0), CFX_OK);
    expect_error(g, NULL, args, 2,
                 "aten::add() is missing value for argument 'other'. Declaration: aten::add.Tensor(Tensor self, "
                 "Tensor other, *, Scalar alpha=1) -> Tensor\n\nWhile executing %add : [num_users=1] = "
                 "call_function[target=torch.ops.aten.add.Tensor](args = (%relu,), kwargs = {})\n"
                 "Original traceback:\nNone");
    cr_assert_eq(cfx_node_set_args(add, (cfx_value[]){cfx_node_value(r), cfx_string("two")}, 2), CFX_OK);
    expect_error(g, NULL, args, 2,
                 "aten::add() Expected a value of type 'Tensor' for argument 'other' but instead found type 'str'.\n"
                 "Position: 1\nValue: 'two'\nDeclaration: aten::add.Tensor(Tensor self, Tensor other, *, Scalar "
                 "alpha=1) -> Tensor\nCast error details: Unable to cast two to Tensor\n\nWhile executing %add : "
                 "[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%relu, two), kwargs = "
                 "{})\nOriginal traceback:\nNone");

    /* out of order: relu moved after its user */
    cr_assert_eq(cfx_node_set_args(add, (cfx_value[]){cfx_node_value(r), cfx_node_value(y)}, 2), CFX_OK);
    cr_assert_eq(cfx_node_append(add, r), CFX_OK);
    expect_error(g, NULL, args, 2,
                 "relu is used by add before it has a value (the graph is not in topological order, or the node is "
                 "not in it)\n\nWhile executing %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor]"
                 "(args = (%relu, %y), kwargs = {})\nOriginal traceback:\nNone");
    cfx_graph_free(g);

    /* get_attr, call_method */
    g = cfx_graph_new();
    cfx_node *w = cfx_graph_get_attr(g, "fc1.weight");
    cfx_graph_output(g, cfx_node_value(w));
    cfx_graph_module *gm = cfx_graph_module_new(cfx_graph_new(), NULL);
    expect_error(g, gm, NULL, 0,
                 "Node referenced nonexistent target fc1\n\nWhile executing %fc1_weight : [num_users=1] = "
                 "get_attr[target=fc1.weight]\nOriginal traceback:\nNone");
    cfx_graph_module_set_attr(gm, "fc1.bias", args[0].u.t);
    expect_error(g, gm, NULL, 0,
                 "Node referenced nonexistent target fc1.weight\n\nWhile executing %fc1_weight : [num_users=1] = "
                 "get_attr[target=fc1.weight]\nOriginal traceback:\nNone");
    cfx_graph_module_free(gm);
    cfx_graph_free(g);
    g = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cfx_node *m = cfx_graph_call_method(g, "relu", (cfx_value[]){cfx_node_value(x)}, 1, NULL, 0);
    cfx_graph_output(g, cfx_node_value(m));
    expect_error(g, NULL, args, 1,
                 "cfx's interpreter cannot run call_method nodes (cfx graphs have no Python objects)\n\n"
                 "While executing %relu : [num_users=1] = call_method[target=relu](args = (%x,), kwargs = {})\n"
                 "Original traceback:\nNone");

    /* API misuse */
    cfx_value out;
    cr_expect_lt(cfx_interpret(NULL, NULL, 0, NULL, &out), 0);
    cfx_error_clear();
    cfx_error_set(CFX_ERR, NULL, "pending");
    cr_expect_lt(cfx_interpret(g, args, 1, NULL, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "pending", "a pending error is kept");
    cfx_error_clear();
    cfx_graph_free(g);
    cfx_scope_end(s);
    /* no scope to own the results */
    g = cfx_graph_new();
    cfx_graph_output(g, cfx_int(1));
    cr_expect_lt(cfx_interpret(g, NULL, 0, NULL, &out), 0);
    cr_expect(strstr(cfx_error_message(), "no scope is open"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_free(g);
}

static cfx_tensor *failing_model(cfx_tensor *x, cfx_tensor *y) { return cfx_mm(cfx_relu(x), y); }

Test(interpreter, error_carries_the_model_call_site)
{
    cfx_scope s = cfx_scope_begin();
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2}, s22[2] = {2, 2};
    cfx_value args[2] = {cfx_tensor_value(cfx_model_example_tensor(s23, 2, 0)),
                         cfx_tensor_value(cfx_model_example_tensor(s32, 2, 0))};
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, true};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)failing_model, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
    cr_assert(gm, "%s", cfx_error_message());
    args[1] = cfx_tensor_value(cfx_model_example_tensor(s22, 2, 0));
    cfx_value out;
    cr_assert_lt(cfx_graph_module_run(gm, args, 2, &out), 0);
    const char *msg = cfx_error_message();
    cr_expect(strstr(msg, "\n\nWhile executing %mm : [num_users=1] = call_function[target=torch.ops.aten.mm.default]"
                          "(args = (%relu, %y_1), kwargs = {})\nOriginal traceback:\n  File \"tests/ir/test_interpreter.c\", line "),
              "%s", msg);
    cr_expect(strstr(msg, ", in failing_model"), "%s", msg);
    cfx_site site = cfx_error_site();
    cr_expect(site.file && strstr(site.file, "test_interpreter.c") && site.func && !strcmp(site.func, "failing_model"));
    cfx_error_clear();
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

/* placeholder defaults and *args */
Test(interpreter, placeholder_defaults)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *a = cfx_graph_placeholder(g, "a");
    cfx_node *b = cfx_graph_placeholder_default(g, "b", cfx_int(5));
    cfx_node *sum = cfx_graph_call_fn(g, &cfx_fn_add, (cfx_value[]){cfx_node_value(a), cfx_node_value(b)}, 2, NULL, 0);
    cfx_graph_output(g, cfx_node_value(sum));
    cfx_value out, in[2] = {cfx_int(1), cfx_int(2)};
    cr_assert_eq(cfx_interpret(g, in, 1, NULL, &out), CFX_OK, "%s", cfx_error_message());
    expect_same(out, cfx_int(6), "default used");
    cr_assert_eq(cfx_interpret(g, in, 2, NULL, &out), CFX_OK);
    expect_same(out, cfx_int(3), "default overridden");
    cfx_graph_free(g);

    g = cfx_graph_new();
    cfx_node *rest = cfx_graph_placeholder(g, "*args");
    cfx_graph_output(g, cfx_node_value(rest));
    cr_assert_eq(cfx_interpret(g, in, 2, NULL, &out), CFX_OK);
    cr_assert_eq(out.kind, CFX_V_LIST);
    expect_same(out, cfx_list(in, 2), "*args");
    cfx_graph_free(g);
    cfx_scope_end(s);
}

/* A placeholder after other nodes still counts against the arguments (the check walks the
 * whole graph once the leading placeholders are too few), and a list argument longer than any
 * before it is bound after the scratch array grows: two cats, of two then of five inputs, the
 * second also holding the first's result (a value used twice by one node dies once). */
Test(interpreter, late_placeholders_and_growing_lists)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_op *relu = cfx_op_find("aten::relu"), *cat = cfx_op_find("aten::cat");
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *r = cfx_graph_call_op(g, relu, (cfx_value[]){cfx_node_value(x)}, 1, NULL, 0);
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_value two[2] = {cfx_node_value(r), cfx_node_value(y)};
    cfx_node *c2 = cfx_graph_call_op(g, cat, (cfx_value[]){cfx_list(two, 2)}, 1, NULL, 0);
    cfx_value five[5] = {cfx_node_value(c2), cfx_node_value(x), cfx_node_value(c2), cfx_node_value(y),
                         cfx_node_value(r)};
    cfx_node *c5 = cfx_graph_call_op(g, cat, (cfx_value[]){cfx_list(five, 5)}, 1, NULL, 0);
    cfx_graph_output(g, cfx_node_value(c5));
    int64_t shape[1] = {3};
    cfx_value args[3] = {cfx_tensor_value(cfx_model_example_tensor(shape, 1, 0)),
                         cfx_tensor_value(cfx_model_example_tensor(shape, 1, 1)), cfx_int(0)};
    expect_error(g, NULL, args, 3, "the graph takes 2 positional arguments but 3 were given");
    long long live = cfx_tensor_live_count();
    cfx_value got;
    cr_assert_eq(cfx_interpret(g, args, 2, NULL, &got), CFX_OK, "%s", cfx_error_message());
    cfx_tensor *xr = cfx_relu(args[0].u.t), *c = cfx_cat(CFX_TENSORS(xr, args[1].u.t), 0);
    cfx_tensor *want = cfx_cat(CFX_TENSORS(c, args[0].u.t, c, args[1].u.t, xr), 0);
    expect_same(got, cfx_tensor_value(want), "cat of five");
    cr_expect_eq(cfx_tensor_live_count() - live, 4, "the result and the eager ones are left, nothing of the run");
    cfx_graph_free(g);
    cfx_scope_end(s);
}

/* A node may take a node of another graph as an argument (a foreign use). Its seq can name a
 * slot of this run that holds another node's value (here b's, seq 0 like a's, kept alive by
 * the output): the run must see that the argument is not in the graph instead of reading that
 * slot. */
Test(interpreter, a_node_of_another_graph_has_no_value_here)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *ga = cfx_graph_new(), *gb = cfx_graph_new();
    cfx_node *a = cfx_graph_placeholder(ga, "a");
    cfx_graph_output(ga, cfx_node_value(a));
    cfx_node *b = cfx_graph_placeholder(gb, "b");
    cr_assert_eq(a->seq, b->seq);
    cfx_node *r = cfx_graph_call_op(gb, cfx_op_find("aten::relu"), (cfx_value[]){cfx_node_value(a)}, 1, NULL, 0);
    cr_assert(r, "%s", cfx_error_message());
    cfx_value outs[2] = {cfx_node_value(r), cfx_node_value(b)}; /* b's value stays to the end */
    cfx_graph_output(gb, cfx_tuple(outs, 2));
    int64_t n = 2;
    cfx_value arg = cfx_tensor_value(cfx_model_example_tensor(&n, 1, 0)), out;
    int64_t live = cfx_tensor_live_count();
    cr_expect_lt(cfx_interpret(gb, &arg, 1, NULL, &out), 0);
    const char *msg = cfx_error_message() ? cfx_error_message() : "(none)";
    cr_expect(strstr(msg, "a is used by relu before it has a value (the graph is not in topological order, or the "
                          "node is not in it)") == msg,
              "%s", msg);
    cr_expect_eq(cfx_tensor_live_count(), live, "a failed run left tensors behind");
    cfx_error_clear();
    cfx_graph_free(gb);
    cfx_graph_free(ga);
    cfx_scope_end(s);
}

/* A node's slot stays without a value until the node has one: an output that names itself (a
 * hand-made cycle) is an input used before it has a value, not a None. */
Test(interpreter, a_node_reading_its_own_value_has_none_yet)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *out = cfx_graph_output(g, cfx_node_value(x));
    cr_assert_eq(cfx_node_set_args(out, (cfx_value[]){cfx_node_value(out)}, 1), CFX_OK, "%s", cfx_error_message());
    cfx_value arg = cfx_int(1), got;
    cr_expect_lt(cfx_interpret(g, &arg, 1, NULL, &got), 0);
    const char *msg = cfx_error_message() ? cfx_error_message() : "(none)";
    cr_expect(strstr(msg, "output is used by output before it has a value") == msg, "%s", msg);
    cfx_error_clear();
    cfx_graph_free(g);
    cfx_scope_end(s);
}

/* ---- an interpreter made once, run many times ------------------------------------------------ */

static int edit_graph(cfx_node *n, cfx_value v, void *ctx)
{
    (void)v;
    (void)ctx;
    if (cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
        return CFX_OK;
    cfx_node *x = cfx_graph_first(cfx_node_graph(n));
    return cfx_node_set_args(n, (cfx_value[]){cfx_node_value(x)}, 1);
}

static cfx_interpreter *running; /* the interpreter whose on_node is run_again */

static int run_again(cfx_node *n, cfx_value v, void *ctx)
{
    (void)n;
    (void)v;
    (void)ctx;
    cfx_value arg = cfx_none(), out;
    return cfx_interpreter_run(running, &arg, 1, &out);
}

/* A prepared interpreter gives each run the results of a fresh one, sees the graph changed
 * between runs (it compiles it again), and refuses a change or a run of its own from inside
 * its on_node callback; a failed run leaves nothing behind and the next one works. */
Test(interpreter, prepared_runs_follow_the_graph)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *r = cfx_graph_call_op(g, cfx_op_find("aten::relu"), (cfx_value[]){cfx_node_value(x)}, 1, NULL, 0);
    cfx_node *add = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"),
                                      (cfx_value[]){cfx_node_value(r), cfx_node_value(x)}, 2, NULL, 0);
    cfx_node *out_node = cfx_graph_output(g, cfx_node_value(add));
    int64_t shape[1] = {4};
    cfx_tensor *a = cfx_model_example_tensor(shape, 1, 0), *b = cfx_model_example_tensor(shape, 1, 1);
    cfx_interpreter *ip = cfx_interpreter_new(g, NULL);
    cr_assert(ip, "%s", cfx_error_message());
    int64_t live = cfx_tensor_live_count();
    for (int i = 0; i < 3; i++) {
        cfx_tensor *in = i % 2 ? b : a;
        cfx_value arg = cfx_tensor_value(in), got;
        cr_assert_eq(cfx_interpreter_run(ip, &arg, 1, &got), CFX_OK, "%s", cfx_error_message());
        expect_same(got, cfx_tensor_value(cfx_add(cfx_relu(in), in)), "run again");
    }
    /* the output becomes relu's value: compiled again before the next run */
    cr_assert_eq(cfx_node_set_args(out_node, (cfx_value[]){cfx_node_value(r)}, 1), CFX_OK);
    cfx_value arg = cfx_tensor_value(a), got;
    cr_assert_eq(cfx_interpreter_run(ip, &arg, 1, &got), CFX_OK, "%s", cfx_error_message());
    expect_same(got, cfx_tensor_value(cfx_relu(a)), "after the edit");
    /* a binding error compiles into the node's step: the run fails there, every time */
    cfx_kwarg bad = {"alph", cfx_int(1)};
    cr_assert_eq(cfx_node_set_kwargs(add, &bad, 1), CFX_OK);
    cr_assert_eq(cfx_node_set_args(out_node, (cfx_value[]){cfx_node_value(add)}, 1), CFX_OK);
    for (int i = 0; i < 2; i++) {
        int64_t before = cfx_tensor_live_count();
        cr_expect_lt(cfx_interpreter_run(ip, &arg, 1, &got), 0);
        cr_expect(strstr(cfx_error_message(), "Unknown keyword argument 'alph'") == cfx_error_message(), "%s",
                  cfx_error_message());
        cr_expect(strstr(cfx_error_message(), "\n\nWhile executing %add : "), "%s", cfx_error_message());
        cr_expect_eq(cfx_tensor_live_count(), before, "a failed run left tensors behind");
        cfx_error_clear();
    }
    cr_assert_eq(cfx_node_set_kwargs(add, NULL, 0), CFX_OK);
    cfx_interpreter_free(ip);

    /* on_node may not change the graph, nor run the interpreter again */
    cfx_interp_options o = {.on_node = edit_graph};
    ip = cfx_interpreter_new(g, &o);
    cr_assert(ip);
    cr_expect_lt(cfx_interpreter_run(ip, &arg, 1, &got), 0);
    cr_expect(strstr(cfx_error_message(), "the graph was changed while it ran (by the on_node callback)\n\nWhile "
                                          "executing %relu"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_interpreter_free(ip);
    cr_assert_eq(cfx_node_set_args(r, (cfx_value[]){cfx_node_value(x)}, 1), CFX_OK);
    running = ip = cfx_interpreter_new(g, &(cfx_interp_options){.on_node = run_again});
    cr_assert(ip);
    cr_expect_lt(cfx_interpreter_run(ip, &arg, 1, &got), 0);
    cr_expect(strstr(cfx_error_message(), "cfx_interpreter_run: the interpreter is already running\n\nWhile "
                                          "executing %x"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_interpreter_free(ip);
    /* in the scope: four runs' results and their six eager relu and add results */
    cr_expect_eq(cfx_tensor_live_count(), live + 11, "%lld left: the results (11) and nothing of the runs",
                 (long long)(cfx_tensor_live_count() - live));

    /* misuse */
    cr_expect_null(cfx_interpreter_new(NULL, NULL));
    cfx_error_clear();
    ip = cfx_interpreter_new(g, NULL);
    cr_expect_lt(cfx_interpreter_run(ip, &arg, -1, &got), 0);
    cfx_error_clear();
    cr_expect_lt(cfx_interpreter_run(NULL, &arg, 1, &got), 0);
    cfx_error_clear();
    cfx_interpreter_free(ip);
    cfx_interpreter_free(NULL);
    cfx_graph_free(g);
    cfx_scope_end(s);
}

/* An allocator that fails every allocation while armed (frees and shrinks still work). */
static bool fail_allocs;
static void *failing(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return fail_allocs ? NULL : realloc(ptr, nsize);
}

/* A recompile that runs out of memory fails its run with the message and leaves no program
 * behind: the next run compiles again (not an empty program that "succeeds" with None). */
Test(interpreter, a_failed_recompile_is_retried)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *r = cfx_graph_call_op(g, cfx_op_find("aten::relu"), (cfx_value[]){cfx_node_value(x)}, 1, NULL, 0);
    cfx_node *out_node = cfx_graph_output(g, cfx_node_value(r));
    int64_t shape[1] = {4};
    cfx_tensor *a = cfx_model_example_tensor(shape, 1, 0);
    cfx_interpreter *ip = cfx_interpreter_new(g, NULL);
    cr_assert(ip, "%s", cfx_error_message());
    cr_assert_eq(cfx_node_set_args(out_node, (cfx_value[]){cfx_node_value(x)}, 1), CFX_OK);
    cfx_value arg = cfx_tensor_value(a), got;
    cfx_set_allocator(failing, NULL);
    fail_allocs = true;
    int rc = cfx_interpreter_run(ip, &arg, 1, &got);
    fail_allocs = false;
    cfx_set_allocator(NULL, NULL);
    cr_expect_eq(rc, CFX_ERR_NOMEM);
    cr_expect_str_eq(cfx_error_message(), "out of memory");
    cr_expect_eq(got.kind, CFX_V_NONE);
    cfx_error_clear();
    cr_assert_eq(cfx_interpreter_run(ip, &arg, 1, &got), CFX_OK, "%s", cfx_error_message());
    cr_expect(got.kind == CFX_V_TENSOR && got.u.t == a, "the output is the input, as the edit made it");
    cfx_interpreter_free(ip);
    cfx_graph_free(g);
    cfx_scope_end(s);
}
