/* test_print.c - str(graph), python_code and print_tabular against PyTorch goldens.
 *
 * Each builder mirrors a g_<case> function of tools/interop/gen_fx.py; the golden files
 * tests/data/ir_<case>.graph.txt / .code.txt are torch.fx 2.13's str(graph) and
 * python_code("self").src of the same graph, byte for byte; .tabular.txt is its
 * print_tabular() (tools/interop/gen_tabular.py). */
#include <math.h>

#include <criterion/criterion.h>

#include "ir/meta.h"
#include "ir/print_tabular.h"
#include "tests/ir/ir_test_util.h"

static cfx_value S(const char *s) { return cfx_string(s); }
static cfx_value I(int64_t i) { return cfx_int(i); }
static cfx_value D(double d) { return cfx_double(d); }
static cfx_value DEV(int type, int index) { return cfx_device_value((cfx_device){(int8_t)type, (int8_t)index}); }
#define EMPTY_LIST cfx_list(NULL, 0)
#define EMPTY_TUPLE cfx_tuple(NULL, 0)

static cfx_graph *g_basic(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x_1");
    cfx_node *y = cfx_graph_placeholder(g, "y_1");
    cfx_node *add = OP(g, "aten::add.Tensor", NV(x), NV(y));
    cfx_node *s = OP(g, "aten::sum.dim_IntList", NV(add), LIST(I(1)));
    cfx_node *mul = OP(g, "aten::mul.Tensor", NV(s), I(2));
    cfx_node *relu = OP(g, "aten::relu", NV(s));
    cfx_graph_output(g, TUPLE(NV(mul), NV(relu)));
    return g;
}

static cfx_graph *g_kwargs(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_kwarg k1[] = {KW("alpha", I(2))};
    cfx_node *add = OPK(g, "aten::add.Tensor", k1, 1, NV(x), NV(x));
    cfx_kwarg k2[] = {KW("rounding_mode", S("floor"))};
    cfx_node *div = OPK(g, "aten::div.Tensor_mode", k2, 1, NV(add), NV(x));
    cfx_kwarg k3[] = {KW("dtype", cfx_dtype_value(CFX_FLOAT32)), KW("layout", cfx_layout_value(CFX_LAYOUT_STRIDED)),
                      KW("device", DEV(CFX_DEVICE_CPU, -1)), KW("pin_memory", cfx_bool(false))};
    cfx_node *nz = OPK(g, "aten::new_zeros", k3, 4, NV(div), LIST(I(2), I(3)));
    cfx_kwarg k4[] = {KW("dtype", cfx_dtype_value(CFX_FLOAT64))};
    cfx_node *full = OPK(g, "aten::full", k4, 1, LIST(I(2)), D(1e-05));
    cfx_graph_output(g, LIST(NV(div), NV(nz), NV(full)));
    return g;
}

static cfx_graph *g_layer_norm(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *ln = OP(g, "aten::native_layer_norm", NV(x), LIST(I(3)), cfx_none(), cfx_none(), D(1e-05));
    cfx_node *g0 = FN(g, &cfx_fn_getitem, NV(ln), I(0));
    FN(g, &cfx_fn_getitem, NV(ln), I(1));
    FN(g, &cfx_fn_getitem, NV(ln), I(2));
    cfx_graph_output(g, NV(g0));
    return g;
}

static cfx_graph *g_literals(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OPN(g, "aten::cat", "cat", LIST(NV(x), NV(x)), I(0));
    cfx_node *b = OPN(g, "aten::add.Tensor", "lit", NV(a), LIST(TUPLE(I(1), I(2)), LIST(I(3), LIST(D(4.5), I(-6)))),
                      cfx_none(), cfx_bool(true), cfx_bool(false), EMPTY_LIST, EMPTY_TUPLE, TUPLE(I(7)),
                      TUPLE(EMPTY_TUPLE), LIST(EMPTY_LIST));
    cfx_node *c = OPN(g, "aten::add.Tensor", "strs", NV(b), S("it's"), S("say \"hi\""), S("both ' and \""),
                      S("back\\slash"), S("new\nline\ttab"), S("h\xc3\xa9llo"), S(""));
    cfx_node *d = OPN(g, "aten::add.Tensor", "nums", NV(c), D(0.1), D(1e-05), D(1e20), D(1e16), D(1e-4),
                      D(123456789.0), D(-0.0), D(INFINITY), D(-INFINITY), D(NAN), D(3.0), D(0.1 + 0.2),
                      I(-9223372036854775807LL), I(0));
    cfx_node *e = OPN(g, "aten::add.Tensor", "types", NV(d),
                      LIST(cfx_dtype_value(CFX_FLOAT32), cfx_dtype_value(CFX_INT64), cfx_dtype_value(CFX_BOOL),
                           cfx_dtype_value(CFX_FLOAT64), cfx_dtype_value(CFX_INT32)),
                      DEV(CFX_DEVICE_CPU, -1), DEV(CFX_DEVICE_CPU, 0), DEV(CFX_DEVICE_META, -1),
                      cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT), cfx_memory_format_value(CFX_CHANNELS_LAST),
                      cfx_memory_format_value(CFX_PRESERVE_FORMAT), cfx_layout_value(CFX_LAYOUT_STRIDED));
    cfx_graph_output(g, TUPLE(NV(e), LIST(DEV(CFX_DEVICE_CPU, -1), S("s"), D(1.5), cfx_none(), TUPLE(NV(x)))));
    return g;
}

static cfx_graph *g_modules(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *c0 = cfx_graph_get_attr(g, "_tensor_constant0");
    cfx_node *lf = OP(g, "aten::lift_fresh_copy", NV(c0));
    cfx_node *w = cfx_graph_get_attr(g, "layers.0.weight");
    cfx_node *m = cfx_graph_call_module(g, "layer1.conv", VALS(NV(x)), 1, NULL, 0);
    cfx_kwarg kf[] = {KW("flag", cfx_bool(true))};
    cfx_node *s = cfx_graph_call_module(g, "seq.0", VALS(NV(m), NV(w)), 2, kf, 1);
    cfx_node *r = cfx_graph_call_method(g, "relu", VALS(NV(s)), 1, NULL, 0);
    cfx_kwarg ks[] = {KW("size", LIST(I(2), I(3)))};
    cfx_node *v = cfx_graph_call_method(g, "view", VALS(NV(r), I(-1)), 2, ks, 1);
    cfx_node *a = cfx_graph_call_method(g, "__add__", VALS(NV(v), NV(lf)), 2, NULL, 0);
    cfx_node *cc = cfx_graph_call_method(g, "camelCaseMethod", VALS(NV(a)), 1, NULL, 0);
    cfx_graph_output(g, NV(cc));
    return g;
}

static cfx_graph *g_operators(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *ss = OPN(g, "aten::sym_size.int", "sym_size", NV(x), I(0));
    cfx_node *ss1 = OPN(g, "aten::sym_size.int", "sym_size", NV(x), I(1));
    cfx_node *mul = FN(g, &cfx_fn_mul, NV(ss), NV(ss1));
    cfx_node *fd = FN(g, &cfx_fn_floordiv, NV(mul), I(2));
    cfx_node *neg = FN(g, &cfx_fn_neg, NV(fd));
    cfx_node *lt = FN(g, &cfx_fn_lt, NV(neg), I(3));
    cfx_node *gi = FN(g, &cfx_fn_getitem, NV(x), TUPLE(I(0), I(1)));
    FN(g, &cfx_fn_torch_assert, NV(lt), S("msg 'quoted'"));
    cfx_node *ga = FN(g, &cfx_fn_getattr, NV(x), S("shape"));
    cfx_node *view = OP(g, "aten::view", NV(gi), LIST(NV(mul), I(-1)));
    cfx_graph_output(g, TUPLE(NV(view), NV(ga)));
    return g;
}

static cfx_graph *g_outputs_list(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_graph_placeholder(g, "lst");
    cfx_node *cos = OP(g, "aten::cos", NV(x));
    cfx_kwarg k[] = {KW("dtype", cfx_dtype_value(CFX_FLOAT32)), KW("layout", cfx_layout_value(CFX_LAYOUT_STRIDED)),
                     KW("device", DEV(CFX_DEVICE_CPU, -1)), KW("pin_memory", cfx_bool(false))};
    cfx_node *nz = OPK(g, "aten::new_zeros", k, 4, NV(x), LIST(I(4)));
    cfx_graph_output(g, LIST(NV(cos), I(1), NV(nz), I(7)));
    return g;
}

static cfx_graph *g_output_single(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_graph_output(g, NV(OP(g, "aten::t", NV(x))));
    return g;
}

static cfx_graph *g_output_none(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    OP(g, "aten::add_.Tensor", NV(x), I(1));
    cfx_graph_output(g, cfx_none());
    return g;
}

static cfx_graph *g_placeholders(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *a = cfx_graph_placeholder(g, "*args");
    cfx_node *c = cfx_graph_placeholder(g, "camelCase");
    cfx_node *m = cfx_graph_placeholder(g, "__magic__");
    cfx_node *d = cfx_graph_placeholder_default(g, "x", D(1.5));
    cfx_node *e = cfx_graph_placeholder_default(g, "y", cfx_none());
    cfx_node *s = cfx_graph_placeholder_default(g, "z", S("str"));
    cfx_node *t = cfx_graph_placeholder_default(g, "w", TUPLE(I(1), LIST(I(2))));
    cfx_node *k = cfx_graph_placeholder(g, "**kwargs");
    cfx_graph_output(g, TUPLE(NV(a), NV(c), NV(m), NV(d), NV(e), NV(s), NV(t), NV(k)));
    return g;
}

static cfx_graph *g_empty(void) { return cfx_graph_new(); }

static cfx_graph *g_names(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *prev = cfx_graph_placeholder(g, "x");
    const char *cands[] = {"if", "print", "torch", "sum", "sum", "add", "add_1", "add_5", "add",
                           "1abc", "foo.bar", "x_0", "x_0", "x__3", "Tensor"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++)
        prev = OPN(g, "aten::relu", cands[i], NV(prev));
    cfx_graph_output(g, NV(prev));
    return g;
}

static cfx_graph *g_inserting(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::add.Tensor", NV(x), NV(x));
    cfx_insert_point saved = cfx_graph_inserting_after(g, x);
    cfx_node *b = OP(g, "aten::mul.Tensor", NV(x), NV(x));
    cfx_node *c = OP(g, "aten::sub.Tensor", NV(x), NV(x));
    cfx_graph_set_insert_point(g, saved);
    saved = cfx_graph_inserting_before(g, NULL);
    cfx_graph_placeholder(g, "first");
    cfx_graph_placeholder(g, "second");
    cfx_graph_set_insert_point(g, saved);
    saved = cfx_graph_inserting_before(g, a);
    cfx_node *d = OP(g, "aten::cos", NV(b));
    cfx_graph_set_insert_point(g, saved);
    cfx_graph_output(g, TUPLE(NV(a), NV(b), NV(c), NV(d)));
    return g;
}

static cfx_graph *g_view_inplace(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x_1");
    cfx_node *v = OP(g, "aten::view", NV(x), LIST(I(-1)));
    cfx_node *a = OP(g, "aten::add_.Tensor", NV(v), I(1));
    cfx_node *t = OP(g, "aten::t", NV(x));
    cfx_node *c = cfx_graph_get_attr(g, "_tensor_constant0");
    cfx_node *lf = OP(g, "aten::lift_fresh_copy", NV(c));
    cfx_node *mul = OP(g, "aten::mul.Tensor", NV(a), NV(lf));
    cfx_graph_output(g, TUPLE(NV(t), NV(mul)));
    return g;
}

static const cfx_builtin_fn fn_math_sqrt = {"math.sqrt", "sqrt", false};
static const cfx_builtin_fn fn_truth = {"operator.truth", "truth", false};
static const cfx_builtin_fn fn_len = {"builtins.len", "len", false};

static cfx_graph *g_globals(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OPN(g, "aten::relu", "math_sqrt", NV(x));
    cfx_node *b = FN(g, &fn_math_sqrt, NV(a));
    cfx_node *c = FN(g, &fn_truth, NV(b));
    cfx_node *d = FN(g, &fn_len, NV(c));
    cfx_node *e = FN(g, &fn_math_sqrt, NV(d));
    cfx_graph_output(g, TUPLE(NV(d), NV(e)));
    return g;
}

static cfx_graph *g_named_none(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *n = OPN(g, "aten::relu", "None", NV(x));
    cfx_graph_output(g, NV(n));
    return g;
}

static cfx_graph *g_placeholders_only(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_graph_placeholder(g, "x");
    cfx_graph_placeholder(g, "self");
    return g;
}

static cfx_graph *g_self_first(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_graph_placeholder(g, "self");
    cfx_graph_placeholder(g, "x");
    return g;
}

static cfx_graph *g_renamed(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    cfx_graph_output(g, NV(b));
    cr_assert_eq(cfx_node_set_name_unchecked(b, "relu"), CFX_OK);
    return g;
}

static cfx_graph *g_no_output(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    OP(g, "aten::cos", NV(a));
    return g;
}

static const struct {
    const char *name;
    cfx_graph *(*build)(void);
    bool lints; /* renamed breaks lint's unique-name rule on purpose */
} cases[] = {
    {"basic", g_basic, true},
    {"kwargs", g_kwargs, true},
    {"layer_norm", g_layer_norm, true},
    {"literals", g_literals, true},
    {"modules", g_modules, true},
    {"operators", g_operators, true},
    {"outputs_list", g_outputs_list, true},
    {"output_single", g_output_single, true},
    {"output_none", g_output_none, true},
    {"placeholders", g_placeholders, true},
    {"empty", g_empty, true},
    {"names", g_names, true},
    {"inserting", g_inserting, true},
    {"view_inplace", g_view_inplace, true},
    {"globals", g_globals, true},
    {"named_none", g_named_none, true},
    {"placeholders_only", g_placeholders_only, true},
    {"self_first", g_self_first, true},
    {"renamed", g_renamed, false},
    {"no_output", g_no_output, true},
};

static void expect_golden(const char *name, const char *got)
{
    char *want = ir_golden(name);
    cr_expect_str_eq(got, want, "%s differs:\n--- got\n%s\n--- want\n%s", name, got, want);
    free(want);
}

Test(ir_print, goldens)
{
    cr_assert_eq(sizeof cases / sizeof *cases, 20);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfx_error_clear();
        cfx_graph *g = cases[i].build();
        cr_assert(g);
        cr_assert(!cfx_error_occurred(), "%s: %s", cases[i].name, cfx_error_message());
        char path[128];
        char *s = cfx_graph_to_string(g);
        snprintf(path, sizeof path, "ir_%s.graph.txt", cases[i].name);
        expect_golden(path, s);
        free(s);
        s = cfx_graph_python_code_string(g, "self");
        cr_assert(s, "%s: python_code failed: %s", cases[i].name, cfx_error_message());
        snprintf(path, sizeof path, "ir_%s.code.txt", cases[i].name);
        expect_golden(path, s);
        free(s);
        cfx_buf b; /* Graph.print_tabular() (tools/interop/gen_tabular.py) */
        cfx_buf_init(&b);
        cr_assert_eq(cfx_graph_print_tabular(g, &b), CFX_OK, "%s", cases[i].name);
        s = cfx_buf_take(&b);
        snprintf(path, sizeof path, "ir_%s.tabular.txt", cases[i].name);
        expect_golden(path, s);
        free(s);
        cr_expect_eq(cfx_graph_lint(g) == CFX_OK, cases[i].lints, "%s", cases[i].name);
        cfx_error_clear();
        cfx_graph_free(g);
    }
}

Test(ir_print, format_node_and_values)
{
    cfx_graph *g = g_basic();
    cfx_node *sum = cfx_graph_find_node(g, "sum_1");
    cr_assert(sum);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_node_format(sum, &b);
    cr_expect_str_eq(b.data, "%sum_1 : [num_users=2] = call_function[target=torch.ops.aten.sum.dim_IntList]"
                             "(args = (%add, [1]), kwargs = {})");
    b.len = 0;
    cfx_node_print_target(sum, &b);
    cr_expect_str_eq(b.data, "torch.ops.aten.sum.dim_IntList");
    /* the value printer hook prints nodes by name */
    char *s = cfx_value_to_string(NV(sum), CFX_STYLE_PYTHON);
    cr_expect_str_eq(s, "sum_1");
    free(s);
    b.len = 0;
    cfx_ir_print_value(TUPLE(NV(sum)), CFX_ARG_FX, &b);
    cr_expect_str_eq(b.data, "(%sum_1,)");
    b.len = 0;
    cfx_ir_print_value(LIST(S("a'b"), DEV(CFX_DEVICE_CPU, 1)), CFX_ARG_STR, &b);
    cr_expect_str_eq(b.data, "[\"a'b\", device(type='cpu', index=1)]");
    b.len = 0;
    cfx_ir_print_value(S("a'b"), CFX_ARG_STR, &b);
    cr_expect_str_eq(b.data, "a'b");
    b.len = 0;
    cfx_ir_print_py_string("\x01\x7f\xc2\xa0\xe2\x80\xa8z", 8, &b);
    cr_expect_str_eq(b.data, "'\\x01\\x7f\\xa0\\u2028z'");
    cfx_buf_free(&b);
    cfx_graph_free(g);
}

Test(ir_print, tensor_meta_golden)
{
    char *text = ir_golden("ir_tensor_meta.tsv");
    int rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *f[5], *p = line;
        for (int i = 0; i < 5; i++) {
            f[i] = p;
            p = strchr(p, '\t');
            if (i < 4) {
                cr_assert(p);
                *p++ = '\0';
            }
        }
        int64_t sizes[8], strides[8];
        int nd = 0, ns = 0;
        for (char *q = f[0]; *q; q++) {
            sizes[nd++] = strtoll(q, &q, 10);
            if (!*q)
                break;
        }
        for (char *q = f[1]; *q; q++) {
            strides[ns++] = strtoll(q, &q, 10);
            if (!*q)
                break;
        }
        cr_assert_eq(nd, ns);
        cfx_dtype dt;
        cr_assert(cfx_dtype_parse(f[2], &dt));
        cfx_tensor_meta tm = {
            .ndim = nd,
            .dtype = (int8_t)dt,
            .memory_format = (int8_t)cfx_memory_format_of(sizes, strides, nd),
            .requires_grad = f[3][0] == '1',
            .shape = sizes,
            .stride = strides,
        };
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_tensor_meta_print(&tm, &b);
        cr_expect_str_eq(b.data, f[4]);
        cfx_buf_free(&b);
        rows++;
    }
    free(text);
    cr_expect_eq(rows, 36);
}

Test(ir_print, print_speed_chain)
{
    /* the print path must not go quadratic or explode: 200k nodes, sane size */
    cfx_graph *g = cfx_graph_new();
    cfx_node *prev = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < 200000; i++)
        prev = OP(g, i % 3 == 0 ? "aten::add.Tensor" : i % 3 == 1 ? "aten::mul.Tensor" : "aten::relu", NV(prev),
                  NV(prev));
    cfx_graph_output(g, NV(prev));
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_graph_print(g, &b);
    cr_expect(!b.oom);
    cr_expect(strstr(b.data, "%add_66666 : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor]"
                             "(args = (%relu_66665, %relu_66665), kwargs = {})"));
    cfx_buf_free(&b);
    cfx_graph_free(g);
}
