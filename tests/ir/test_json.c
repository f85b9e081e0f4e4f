/* test_json.c - graphs and graph modules through JSON (ir/json.h).
 *
 * The promise is a lossless, byte-stable round trip: for graphs covering every value kind,
 * every op kind, meta, kwargs, nesting, NaN/Inf, int64 extremes, builtin targets and several
 * outputs, dump -> load -> dump is byte-identical and the loaded graph prints (str and
 * python_code) exactly as the original. tests/data/graph_json_example.json is the complete
 * example of docs/graph-json.md and pins the format's bytes. Every malformed input is an error
 * with a message, never a crash or a leak: each truncation and a few thousand seeded random
 * byte mutations of a valid file are loaded (run `make asan` for the leak half).
 * tools/interop/check_graph_json.py (default python3, PyTorch 2.13) checks the example with
 * Python's strict JSON parser and the embedded aten schemas against torch's own. */
#include <math.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "dispatch/dispatcher.h"
#include "dispatch/library.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "ir/graph_module.h"
#include "ir/json.h"
#include "tests/ir/ir_test_util.h"

static cfx_library *lib;

static void setup(void)
{
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxjt");
    cfx_library_def(lib, "custom(Tensor x, *, int k=1, str mode=\"a\") -> Tensor");
}

static void teardown(void)
{
    cfx_library_free(lib);
    lib = NULL;
}

TestSuite(ir_json, .init = setup, .fini = teardown);

static const cfx_op *OPF(const char *qn)
{
    const cfx_op *op = cfx_op_find(qn);
    cr_assert(op, "operator %s is not registered", qn);
    return op;
}

static cfx_node *call(cfx_graph *g, const char *qn, const cfx_value *args, uint32_t n, const cfx_kwarg *kw,
                      uint32_t nk)
{
    cfx_node *r = cfx_graph_call_op(g, OPF(qn), args, n, kw, nk);
    cr_assert(r, "%s", cfx_error_message());
    return r;
}

#define CALL(g, qn, ...) call((g), (qn), VALS(__VA_ARGS__), NVALS(__VA_ARGS__), NULL, 0)
#define CALLK(g, qn, kw, nk, ...) call((g), (qn), VALS(__VA_ARGS__), NVALS(__VA_ARGS__), (kw), (nk))
static cfx_value S(const char *s) { return cfx_string(s); }
static cfx_value I(int64_t i) { return cfx_int(i); }
static cfx_value D(double d) { return cfx_double(d); }
static cfx_value DEV(int type, int index) { return cfx_device_value((cfx_device){(int8_t)type, (int8_t)index}); }

/* ---- helpers --------------------------------------------------------------------------------- */

static char *dump_graph(const cfx_graph *g)
{
    char *s = NULL;
    int rc = cfx_graph_to_json(g, 0, &s);
    cr_assert_eq(rc, CFX_OK, "dump failed: %s", cfx_error_message());
    cr_assert(s);
    return s;
}

static char *dump_gm(const cfx_graph_module *gm, unsigned flags)
{
    char *s = NULL;
    int rc = cfx_graph_module_to_json(gm, flags, &s);
    cr_assert_eq(rc, CFX_OK, "dump failed: %s", cfx_error_message());
    cr_assert(s);
    return s;
}

/* Loads text (as a non-terminated copy, so overreads show under ASan). */
static cfx_graph *load_graph(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    cfx_graph *g = cfx_graph_from_json(copy, len);
    free(copy);
    return g;
}

static cfx_graph_module *load_gm(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    cfx_graph_module *gm = cfx_graph_module_from_json(copy, len);
    free(copy);
    return gm;
}

static void expect_same_text(const cfx_graph *a, const cfx_graph *b)
{
    char *sa = cfx_graph_to_string(a), *sb = cfx_graph_to_string(b);
    cr_expect_str_eq(sa, sb);
    free(sa);
    free(sb);
    char *ca = cfx_graph_python_code_string(a, "self"), *cb = cfx_graph_python_code_string(b, "self");
    cr_expect_str_eq(ca, cb);
    free(ca);
    free(cb);
}

/* dump -> load -> dump: same bytes, same printed graph. Returns the loaded graph. */
static cfx_graph *roundtrip(const cfx_graph *g)
{
    char *j1 = dump_graph(g);
    cfx_graph *g2 = load_graph(j1, strlen(j1));
    cr_assert(g2, "load failed: %s", cfx_error_message());
    char *j2 = dump_graph(g2);
    cr_expect_str_eq(j1, j2);
    expect_same_text(g, g2);
    free(j1);
    free(j2);
    return g2;
}

/* Expects text to be refused with a message containing want. */
static void expect_load_error(const char *text, const char *want)
{
    cfx_error_clear();
    cfx_graph_module *gm = load_gm(text, strlen(text));
    cr_expect_null(gm, "loaded although it should fail with \"%s\"", want);
    cfx_graph_module_free(gm);
    cr_expect(cfx_error_occurred());
    const char *m = cfx_error_message();
    cr_expect(m && strstr(m, want), "error \"%s\" does not contain \"%s\"", m ? m : "(none)", want);
    cfx_error_clear();
}

/* text with the first occurrence of from replaced by to (malloc'd). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    cr_assert(p, "\"%s\" not in the text", from);
    size_t a = (size_t)(p - text), fl = strlen(from), tl = strlen(to), n = strlen(text);
    char *r = malloc(n - fl + tl + 1);
    memcpy(r, text, a);
    memcpy(r + a, to, tl);
    memcpy(r + a + tl, p + fl, n - a - fl + 1);
    return r;
}

static void expect_replaced_error(const char *text, const char *from, const char *to, const char *want)
{
    char *t = replace(text, from, to);
    expect_load_error(t, want);
    free(t);
}

/* ---- graphs ------------------------------------------------------------------------------------ */

/* Every value kind, every op kind, kwargs, nesting, meta, builtins, several outputs. */
static cfx_graph *g_all(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder_default(g, "y", D(0.5));
    cfx_node *w = cfx_graph_get_attr(g, "fc.weight");
    cfx_kwarg k1[] = {KW("alpha", I(2))};
    cfx_node *add = CALLK(g, "aten::add.Tensor", k1, 1, NV(x), NV(w));
    cfx_node *lit = CALL(g, "aten::add.Tensor", NV(add),
                         LIST(TUPLE(I(1), I(2)), LIST(I(3), LIST(D(4.5), I(-6)))), cfx_none(), cfx_bool(true),
                         cfx_bool(false), cfx_list(NULL, 0), cfx_tuple(NULL, 0), TUPLE(I(7)),
                         TUPLE(cfx_tuple(NULL, 0)), LIST(cfx_list(NULL, 0)));
    cfx_node *strs = CALL(g, "aten::add.Tensor", NV(lit), S("it's"), S("say \"hi\""), S("back\\slash"),
                          S("new\nline\ttab\r\b\f\x01\x1f"), S("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
                          S(""), S("/ </script>"));
    cfx_node *nums = CALL(g, "aten::add.Tensor", NV(strs), D(0.1), D(1e-05), D(1e20), D(1e16), D(-0.0), D(0.0),
                          D(INFINITY), D(-INFINITY), D(NAN), D(3.0), D(0.1 + 0.2), D(5e-324), D(1.7976931348623157e308),
                          D(-2.5e-300), I(INT64_MAX), I(INT64_MIN), I(9007199254740992LL), I(9007199254740993LL),
                          I(-9007199254740992LL), I(-9007199254740993LL), I(0), I(-1));
    cfx_node *types = CALL(g, "aten::add.Tensor", NV(nums),
                           LIST(cfx_dtype_value(CFX_FLOAT32), cfx_dtype_value(CFX_INT64), cfx_dtype_value(CFX_BOOL),
                                cfx_dtype_value(CFX_FLOAT64), cfx_dtype_value(CFX_INT32), cfx_dtype_value((cfx_dtype)15)),
                           DEV(CFX_DEVICE_CPU, -1), DEV(CFX_DEVICE_CPU, 0), DEV(CFX_DEVICE_META, -1), DEV(CFX_DEVICE_META, 3),
                           cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT), cfx_memory_format_value(CFX_PRESERVE_FORMAT),
                           cfx_memory_format_value(CFX_CHANNELS_LAST), cfx_memory_format_value(CFX_CHANNELS_LAST_3D),
                           cfx_layout_value(CFX_LAYOUT_STRIDED), cfx_layout_value(2), cfx_layout_value(-3),
                           cfx_memory_format_value((cfx_memory_format)9), cfx_layout_value(INT64_MAX));
    cfx_kwarg k2[] = {KW("k", I(3)), KW("mode", S("b")), KW("extra", TUPLE(NV(x), LIST(NV(y), cfx_none())))};
    cfx_node *cu = CALLK(g, "cfxjt::custom", k2, 3, NV(types));
    cfx_node *ln = CALL(g, "aten::native_layer_norm", NV(cu), LIST(I(3)), cfx_none(), cfx_none(), D(1e-05));
    cfx_node *g0 = FN(g, &cfx_fn_getitem, NV(ln), I(0));
    cfx_node *g1 = FN(g, &cfx_fn_getitem, NV(ln), I(1));
    FN(g, &cfx_fn_torch_assert, cfx_bool(true), S("msg"));
    cfx_node *attr = FN(g, &cfx_fn_getattr, NV(g0), S("shape"));
    cfx_kwarg k3[] = {KW("dim", I(-1)), KW("keepdim", cfx_bool(true))};
    cfx_node *m = cfx_graph_call_method(g, "sum", VALS(NV(g1)), 1, k3, 2);
    cfx_node *mod = cfx_graph_call_module(g, "layers.0", VALS(NV(m), NV(attr)), 2, NULL, 0);
    cfx_graph_output(g, TUPLE(NV(g0), LIST(NV(mod), NV(m)), NV(x), cfx_none()));

    /* meta */
    int64_t sz[2] = {2, 3}, st[2] = {3, 1}, big[1] = {INT64_MAX};
    cfx_meta_val tv = {.kind = CFX_MVAL_TENSOR, .dtype = CFX_FLOAT32, .device = {CFX_DEVICE_CPU, -1},
                       .n = 2, .sizes = sz, .strides = st, .storage_offset = 0};
    cr_assert_eq(cfx_node_set_val(x, &tv), CFX_OK);
    cfx_meta_val items[7] = {
        tv,
        {.kind = CFX_MVAL_TENSOR, .dtype = CFX_INT64, .device = {CFX_DEVICE_META, -1}, .n = 1, .sizes = big,
         .strides = big, .storage_offset = 5},
        {.kind = CFX_MVAL_INT, .u.i = INT64_MIN},
        {.kind = CFX_MVAL_DOUBLE, .u.d = NAN},
        {.kind = CFX_MVAL_BOOL, .u.b = true},
        {.kind = CFX_MVAL_NONE},
        {.kind = CFX_MVAL_OBJECT, .u.class_name = "__torch__.torch.classes.cfx.Foo"},
    };
    cfx_meta_val inner = {.kind = CFX_MVAL_TUPLE, .n = 7, .u.items = items};
    cfx_meta_val outer = {.kind = CFX_MVAL_TUPLE, .n = 1, .u.items = &inner};
    cr_assert_eq(cfx_node_set_val(ln, &outer), CFX_OK);
    cfx_meta_val none = {.kind = CFX_MVAL_NONE};
    cr_assert_eq(cfx_node_set_val(mod, &none), CFX_OK);
    cfx_meta_val dbl = {.kind = CFX_MVAL_DOUBLE, .u.d = -0.0};
    cr_assert_eq(cfx_node_set_val(m, &dbl), CFX_OK);
    cfx_meta_val obj = {.kind = CFX_MVAL_OBJECT};
    cr_assert_eq(cfx_node_set_val(attr, &obj), CFX_OK);
    cfx_tensor_meta tm = {.ndim = 2, .dtype = CFX_FLOAT32, .memory_format = CFX_CONTIGUOUS_FORMAT,
                          .requires_grad = true, .shape = sz, .stride = st};
    cr_assert_eq(cfx_node_set_tensor_meta(add, &tm), CFX_OK);
    int64_t st2[2] = {1, 2};
    cfx_tensor_meta tm2 = {.ndim = 2, .dtype = CFX_INT64, .memory_format = -1, .shape = sz, .stride = st2};
    cr_assert_eq(cfx_node_set_tensor_meta(g0, &tm2), CFX_OK);
    cfx_tensor_meta tm0 = {.ndim = 0, .dtype = -7, .memory_format = 5}; /* codes without names */
    cr_assert_eq(cfx_node_set_tensor_meta(g1, &tm0), CFX_OK);
    cr_assert_eq(cfx_node_set_stack_trace(add, &(cfx_site){"models/m\xc3\xa9.c", 42, "forward"}), CFX_OK);
    cr_assert_eq(cfx_node_set_stack_trace(lit, &(cfx_site){"a.c", 0, NULL}), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(add, "nn_module_stack", LIST(TUPLE(S("fc"), S("torch.nn.Linear")))), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(add, "0", D(NAN)), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(x, "later", NV(mod)), CFX_OK);  /* a node defined later */
    cr_assert_eq(cfx_node_meta_set(x, "self", NV(x)), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(x, "after", LIST(NV(g0), I(1))), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(m, "from", NV(x)), CFX_OK);
    return g;
}

/* ---- round trips --------------------------------------------------------------------------------- */

Test(ir_json, every_kind_round_trips)
{
    cfx_graph *g = g_all();
    cfx_graph *g2 = roundtrip(g);
    /* spot checks on the loaded values */
    cfx_node *nums = cfx_graph_find_node(g2, "add_3");
    cr_assert(nums);
    const cfx_value *a = cfx_node_args(nums);
    cr_expect(signbit(a[5].u.d) && a[5].u.d == 0);
    cr_expect(!signbit(a[6].u.d));
    cr_expect(isinf(a[7].u.d) && a[7].u.d > 0);
    cr_expect(isnan(a[9].u.d));
    cr_expect_eq(a[15].kind, CFX_V_INT);
    cr_expect_eq(a[15].u.i, INT64_MAX);
    cr_expect_eq(a[16].u.i, INT64_MIN);
    cr_expect_eq(a[18].u.i, 9007199254740993LL);
    cr_expect_eq(a[20].u.i, -9007199254740993LL);
    cr_expect_eq(a[10].kind, CFX_V_DOUBLE);
    cfx_node *lit = cfx_graph_find_node(g2, "add_1");
    cr_expect_eq(cfx_node_args(lit)[1].kind, CFX_V_LIST);
    cr_expect_eq(cfx_node_args(lit)[1].u.items[0].kind, CFX_V_TUPLE);
    cr_expect_eq(cfx_node_args(lit)[5].kind, CFX_V_LIST);
    cr_expect_eq(cfx_node_args(lit)[6].kind, CFX_V_TUPLE);
    cr_expect_eq(cfx_node_args(lit)[7].kind, CFX_V_TUPLE);
    cfx_node *cu = cfx_graph_find_node(g2, "custom");
    cr_assert(cu);
    cr_expect_eq(cfx_node_num_kwargs(cu), 3);
    cr_expect_str_eq(cfx_node_kwargs(cu)[0].name, "k");
    cr_expect_str_eq(cfx_node_kwargs(cu)[1].name, "mode");
    cr_expect_str_eq(cfx_node_kwargs(cu)[2].name, "extra");
    cr_expect_eq(cfx_node_operator(cu), cfx_op_find("cfxjt::custom"));
    cfx_node *gi = cfx_graph_find_node(g2, "getitem");
    cr_expect_eq(cfx_target_info_fn(cfx_node_target_info(gi)), &cfx_fn_getitem);
    /* users are rebuilt from the args */
    cfx_node *x = cfx_graph_find_node(g2, "x");
    cr_expect_eq(cfx_node_num_users(x), cfx_node_num_users(cfx_graph_find_node(g, "x")));
    /* meta: a reference to a later node is resolved, entry order kept */
    cr_expect_eq(cfx_node_meta_count(x), 3);
    cr_expect_str_eq(cfx_node_meta_key(x, 0), "later");
    cr_expect_eq(cfx_node_meta_value(x, 0)->u.node, cfx_graph_find_node(g2, "layers_0"));
    cr_expect_eq(cfx_node_meta_value(x, 1)->u.node, x);
    const cfx_meta_val *v = cfx_node_val(cfx_graph_find_node(g2, "native_layer_norm"));
    cr_assert(v && v->kind == CFX_MVAL_TUPLE && v->n == 1 && v->u.items[0].n == 7);
    cr_expect_eq(v->u.items[0].u.items[1].sizes[0], INT64_MAX);
    cr_expect_eq(v->u.items[0].u.items[1].storage_offset, 5);
    cr_expect_str_eq(v->u.items[0].u.items[6].u.class_name, "__torch__.torch.classes.cfx.Foo");
    cr_expect(isnan(v->u.items[0].u.items[3].u.d));
    const cfx_site *site = cfx_node_stack_trace(cfx_graph_find_node(g2, "add"));
    cr_assert(site);
    cr_expect_eq(site->line, 42);
    cr_expect_str_eq(site->func, "forward");
    cr_expect_null(cfx_node_stack_trace(lit)->func);
    cr_expect_eq(cfx_node_tensor_meta(cfx_graph_find_node(g2, "getitem"))->memory_format, -1);
    cr_expect_eq(cfx_node_val(cfx_graph_find_node(g2, "layers_0"))->kind, CFX_MVAL_NONE);
    cr_expect_null(cfx_node_val(cfx_graph_find_node(g2, "y")));
    cfx_graph_free(g);
    cfx_graph_free(g2);
}

Test(ir_json, empty_and_minimal_graphs)
{
    cfx_graph *g = cfx_graph_new();
    cfx_graph *g2 = roundtrip(g);
    cr_expect_eq(cfx_graph_num_nodes(g2), 0);
    cfx_graph_free(g2);
    cfx_graph_output(g, cfx_none());
    g2 = roundtrip(g);
    cr_expect_eq(cfx_graph_num_nodes(g2), 1);
    cfx_graph_free(g2);
    cfx_graph_free(g);
    /* whitespace is free and member order does not matter */
    const char *t = " {\"nodes\":[ ] ,\"version\":{\"minor\":0,\"major\":1},\"format\":\"cfx.graph\"}\n\n";
    g = load_graph(t, strlen(t));
    cr_assert(g, "%s", cfx_error_message());
    cr_expect_eq(cfx_graph_num_nodes(g), 0);
    cfx_graph_free(g);
}

Test(ir_json, names_survive_including_erasures_and_insertion_order)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = CALL(g, "aten::add.Tensor", NV(x), NV(x));
    cfx_node *b = CALL(g, "aten::add.Tensor", NV(a), NV(x));
    cfx_node *c = CALL(g, "aten::add.Tensor", NV(b), NV(x));
    cfx_node *s = CALL(g, "aten::sum.dim_IntList", NV(c), LIST(I(1)));
    cfx_node_replace_all_uses_with(b, a, NULL, NULL, NULL);
    cr_assert_eq(cfx_graph_erase_node(g, b), CFX_OK);
    cfx_insert_point p = cfx_graph_inserting_before(g, a);
    cfx_node *early = CALL(g, "aten::relu", NV(x));
    cfx_graph_set_insert_point(g, p);
    cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(OPF("aten::mul.Tensor")), VALS(NV(early), NV(s)), 2,
                          NULL, 0, "add_7");
    cfx_graph_output(g, NV(s));
    cfx_graph *g2 = roundtrip(g);
    cr_expect(cfx_graph_find_node(g2, "add_2"));
    cr_expect_null(cfx_graph_find_node(g2, "add_1"));
    cr_expect(cfx_graph_find_node(g2, "sum_1"));
    cr_expect(cfx_graph_find_node(g2, "add_7"));
    cfx_graph_free(g2);
    cfx_graph_free(g);
}

Test(ir_json, nesting_up_to_the_limit)
{
    enum { N = 998 }; /* node record + args array + 998 lists = 1000 containers */
    cfx_value *lv = malloc((N + 1) * sizeof *lv);
    lv[N] = I(7);
    for (int i = N - 1; i >= 0; i--)
        lv[i] = cfx_list(&lv[i + 1], 1);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cr_assert(call(g, "aten::add.Tensor", VALS(NV(x), lv[0]), 2, NULL, 0));
    cfx_graph *g2 = roundtrip(g);
    cfx_graph_free(g2);
    /* one more level: refused by the writer, not written unreadable */
    cfx_value deeper = cfx_list(&lv[0], 1);
    cr_assert(call(g, "aten::add.Tensor", VALS(NV(x), deeper), 2, NULL, 0));
    char *s = NULL;
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &s), CFX_OK);
    cr_expect_null(s);
    cr_expect(strstr(cfx_error_message(), "nested deeper than the format's limit of 1000"), "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_graph_free(g);
    /* tuples count twice */
    for (int i = 0; i < N / 2; i++)
        lv[i] = cfx_tuple(&lv[i + 1], 1);
    lv[N / 2] = I(1);
    g = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cr_assert(call(g, "aten::add.Tensor", VALS(NV(x), lv[0]), 2, NULL, 0));
    g2 = roundtrip(g);
    cfx_graph_free(g2);
    cfx_graph_free(g);
    free(lv);

    /* a hand-made file nested 1500 deep fails cleanly */
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [\n"
                     "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [");
    for (int i = 0; i < 1500; i++)
        cfx_buf_putc(&b, '[');
    for (int i = 0; i < 1500; i++)
        cfx_buf_putc(&b, ']');
    cfx_buf_puts(&b, "], \"kwargs\": []}]}");
    expect_load_error(b.data, "line 2, column");
    cfx_error_clear();
    cfx_graph_free(load_graph(b.data, b.len));
    cr_expect(strstr(cfx_error_message(), "nested deeper than"), "%s", cfx_error_message());
    cfx_buf_free(&b);
}

/* ---- graph modules ------------------------------------------------------------------------------- */

static cfx_graph_module *gm_example(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *w = cfx_graph_get_attr(g, "fc.weight");
    cfx_node *b = cfx_graph_get_attr(g, "fc.bias");
    cfx_node *t = CALL(g, "aten::t", NV(w));
    cfx_node *mm = CALL(g, "aten::mm", NV(x), NV(t));
    cfx_kwarg k[] = {KW("alpha", I(1))};
    cfx_node *add = CALLK(g, "aten::add.Tensor", k, 1, NV(mm), NV(b));
    cfx_node *relu = CALL(g, "aten::relu", NV(add));
    cfx_node *mx = CALL(g, "aten::max.dim", NV(relu), I(1));
    cfx_node *vals = FN(g, &cfx_fn_getitem, NV(mx), I(0));
    cfx_node *idx = FN(g, &cfx_fn_getitem, NV(mx), I(1));
    cfx_graph_output(g, TUPLE(NV(vals), NV(idx), D(NAN), I(INT64_MAX)));
    int64_t xs[2] = {2, 3}, xst[2] = {3, 1};
    cfx_meta_val xv = {.kind = CFX_MVAL_TENSOR, .dtype = CFX_FLOAT32, .device = {CFX_DEVICE_CPU, -1},
                       .n = 2, .sizes = xs, .strides = xst};
    cfx_node_set_val(x, &xv);
    cfx_node_set_stack_trace(relu, &(cfx_site){"model.c", 12, "forward"});
    cfx_node_meta_set(relu, "nn_module_stack", LIST(TUPLE(S("fc"), S("Linear"))));

    cfx_graph_module *gm = cfx_graph_module_new(g, "Net");
    cfx_scope s = cfx_scope_begin();
    float wd[6] = {1.5f, -2.0f, 0.25f, NAN, INFINITY, -0.0f};
    cfx_tensor *wt = cfx_tensor_from_floats(wd, (int64_t[]){2, 3}, 2);
    cfx_graph_module_set_attr(gm, "fc.weight", wt);
    float bd[2] = {0.5f, -1.0f};
    cfx_graph_module_set_attr(gm, "fc.bias", cfx_tensor_from_floats(bd, (int64_t[]){2}, 1));
    cfx_scope_end(s);
    return gm;
}

static void expect_same_tensor(const cfx_tensor *a, const cfx_tensor *b)
{
    cr_assert_eq(a->ndim, b->ndim);
    cr_expect_eq(a->dtype, b->dtype);
    cr_expect(cfx_device_eq(a->device, b->device));
    cr_expect_eq(a->storage_offset, b->storage_offset);
    for (int i = 0; i < a->ndim; i++) {
        cr_expect_eq(a->sizes[i], b->sizes[i]);
        cr_expect_eq(a->strides[i], b->strides[i]);
    }
    if (a->device.type != CFX_DEVICE_CPU)
        return;
    for (int64_t i = 0; i < cfx_tensor_numel(a); i++) {
        double x = cfx_tensor_get_double(a, i), y = cfx_tensor_get_double(b, i);
        cr_expect((isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)), "element %lld: %g vs %g",
                  (long long)i, x, y);
    }
}

Test(ir_json, module_with_attributes_round_trips)
{
    cfx_graph_module *gm = gm_example();
    cfx_scope s = cfx_scope_begin();
    /* non-contiguous, offset, other dtypes, meta, empty */
    double dd[12];
    for (int i = 0; i < 12; i++)
        dd[i] = i * 1.25 - 3;
    cfx_tensor *base = cfx_tensor_from_doubles(dd, (int64_t[]){3, 4}, 2);
    cfx_graph_module_set_attr(gm, "view_t", cfx_tensor_new_view(base, (int64_t[]){4, 2}, (int64_t[]){1, 4}, 2, 1));
    cfx_graph_module_set_attr(gm, "expanded", cfx_tensor_new_view(base, (int64_t[]){3, 2}, (int64_t[]){0, 1}, 2, 5));
    int64_t id[3] = {INT64_MIN, -1, INT64_MAX};
    cfx_graph_module_set_attr(gm, "ints", cfx_tensor_from_int64s(id, (int64_t[]){3}, 1));
    cfx_tensor *bt = cfx_tensor_new((int64_t[]){5}, 1, CFX_BOOL, cfx_device_make(CFX_DEVICE_CPU));
    ((unsigned char *)cfx_tensor_data(bt))[1] = 1;
    ((unsigned char *)cfx_tensor_data(bt))[4] = 1;
    cfx_graph_module_set_attr(gm, "mask", bt);
    cfx_tensor *it = cfx_tensor_new((int64_t[]){2, 2}, 2, CFX_INT32, cfx_device_make(CFX_DEVICE_CPU));
    ((int32_t *)cfx_tensor_data(it))[3] = -7;
    cfx_graph_module_set_attr(gm, "i32", it);
    cfx_graph_module_set_attr(gm, "scalar", cfx_tensor_scalar_double(2.5, CFX_FLOAT64));
    cfx_graph_module_set_attr(gm, "meta_w", cfx_tensor_new_strided((int64_t[]){4, 5}, (int64_t[]){1, 4}, 2,
                                                                   CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META)));
    cfx_graph_module_set_attr(gm, "empty", cfx_tensor_new((int64_t[]){0, 3}, 2, CFX_FLOAT32,
                                                          cfx_device_make(CFX_DEVICE_CPU)));
    cfx_scope_end(s);

    char *j1 = dump_gm(gm, 0);
    cfx_graph_module *gm2 = load_gm(j1, strlen(j1));
    cr_assert(gm2, "%s", cfx_error_message());
    char *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j1, j2);
    cr_expect_str_eq(cfx_graph_module_name(gm2), "Net");
    expect_same_text(cfx_graph_module_graph(gm), cfx_graph_module_graph(gm2));
    cr_assert_eq(cfx_graph_module_n_attrs(gm2), cfx_graph_module_n_attrs(gm));
    for (int i = 0; i < cfx_graph_module_n_attrs(gm); i++) {
        cr_expect_str_eq(cfx_graph_module_attr_name(gm, i), cfx_graph_module_attr_name(gm2, i));
        expect_same_tensor(cfx_graph_module_attr(gm, i), cfx_graph_module_attr(gm2, i));
    }
    /* without data: metadata only, CPU tensors come back zero-filled */
    char *j3 = dump_gm(gm, CFX_JSON_NO_DATA);
    cr_expect_null(strstr(j3, "\"data\""));
    cfx_graph_module *gm3 = load_gm(j3, strlen(j3));
    cr_assert(gm3, "%s", cfx_error_message());
    cfx_tensor *w3 = cfx_graph_module_get_attr(gm3, "fc.weight");
    cr_assert(w3);
    cr_expect_eq(cfx_tensor_get_double(w3, 0), 0.0);
    expect_same_text(cfx_graph_module_graph(gm), cfx_graph_module_graph(gm3));
    /* the graph-only loader skips attributes */
    cfx_graph *g4 = load_graph(j1, strlen(j1));
    cr_assert(g4, "%s", cfx_error_message());
    expect_same_text(cfx_graph_module_graph(gm), g4);
    /* without meta */
    char *j5 = dump_gm(gm, CFX_JSON_NO_META);
    cr_expect_null(strstr(j5, "\"meta\": {"));
    cr_expect(strstr(j1, "\"meta\": {"));
    cfx_graph_free(g4);
    free(j1);
    free(j2);
    free(j3);
    free(j5);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
    cfx_graph_module_free(gm3);
}

Test(ir_json, files)
{
    cfx_graph_module *gm = gm_example();
    char path[] = "/tmp/cfx_test_json_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cfx_graph_module_to_json_file(gm, path, 0), CFX_OK, "%s", cfx_error_message());
    char *text = read_file(path), *j = dump_gm(gm, 0);
    cr_expect_str_eq(text, j);
    cfx_graph_module *gm2 = cfx_graph_module_from_json_file(path);
    cr_assert(gm2, "%s", cfx_error_message());
    cfx_graph *g2 = cfx_graph_from_json_file(path);
    cr_assert(g2, "%s", cfx_error_message());
    cr_assert_eq(cfx_graph_to_json_file(g2, path, 0), CFX_OK);
    cfx_graph *g3 = cfx_graph_from_json_file(path);
    cr_assert(g3);
    expect_same_text(g2, g3);
    remove(path);
    cfx_error_clear();
    cr_expect_null(cfx_graph_module_from_json_file(path));
    cr_expect(strstr(cfx_error_message(), "cannot open"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_neq(cfx_graph_module_to_json_file(gm, "/nonexistent-dir/x.json", 0), CFX_OK);
    cfx_error_clear();
    free(text);
    free(j);
    cfx_graph_free(g2);
    cfx_graph_free(g3);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
}

/* tests/data/graph_json_example.json without its "golden" member (tools/interop/golden.py puts
 * it first, on a line of its own): the document cfx writes. */
static char *example_golden(void)
{
    char *s = read_file("tests/data/graph_json_example.json");
    cr_assert(s, "tests/data/graph_json_example.json is missing");
    static const char mark[] = "{\n  \"golden\": \"PyTorch ";
    cr_assert(strncmp(s, mark, sizeof mark - 1) == 0, "graph_json_example.json has no golden member");
    char *line = s + 2, *end = strchr(line, '\n');
    memmove(line, end + 1, strlen(end + 1) + 1);
    return s;
}

/* The documented example: its bytes are the format. tools/interop/gen_fx.py writes it from
 * PyTorch 2.13's graph of the same program (names, targets, schemas, tensor bytes), laid out by
 * docs/graph-json.md's rules, so cfx's writer must match an independent one byte for byte. */
Test(ir_json, documented_example_is_stable)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    char *golden = example_golden();
    cr_expect_str_eq(j, golden);
    cfx_graph_module *gm2 = load_gm(golden, strlen(golden));
    cr_assert(gm2, "%s", cfx_error_message());
    char *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j2, golden);
    /* the documentation quotes it verbatim */
    char *doc = read_file("docs/graph-json.md");
    cr_assert(doc);
    cr_expect(strstr(doc, golden), "docs/graph-json.md does not contain the example verbatim");
    free(doc);
    free(j);
    free(j2);
    free(golden);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
}

/* Python's strict JSON parser reads it; embedded aten schemas are torch's own. Run with the
 * default python3, which has PyTorch 2.13 (the oracle of every golden): no torch is a failure. */
Test(ir_json, python_reads_the_example)
{
    /* the documented example, and the every-kind graph */
    cfx_graph *g = g_all();
    char path[] = "/tmp/cfx_test_json_all_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cfx_graph_to_json_file(g, path, 0), CFX_OK, "%s", cfx_error_message());
    cfx_graph_free(g);
    const char *files[] = {"tests/data/graph_json_example.json", path};
    for (int i = 0; i < 2; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "python3 tools/interop/check_graph_json.py %s > %s.out 2>&1", files[i], path);
        int rc = system(cmd);
        snprintf(cmd, sizeof cmd, "%s.out", path);
        char *out = read_file(cmd);
        remove(cmd);
        cr_expect_neq(WEXITSTATUS(rc), 77, "python3 cannot import torch (PyTorch 2.13 is the oracle): %s",
                      out ? out : "");
        cr_expect_eq(WEXITSTATUS(rc), 0, "check_graph_json.py %s failed:\n%s", files[i], out ? out : "");
        cr_expect(out && strstr(out, "ok: "), "%s", out ? out : "");
        free(out);
    }
    remove(path);
}

/* ---- versions ------------------------------------------------------------------------------------- */

Test(ir_json, versions)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    expect_replaced_error(j, "{\"major\": 1, \"minor\": 0}", "{\"major\": 2, \"minor\": 0}",
                          "the file has format version 2.0, newer than this reader's 1.0; a newer major "
                          "version cannot be read");
    expect_replaced_error(j, "{\"major\": 1, \"minor\": 0}", "{\"major\": 0, \"minor\": 9}",
                          "format version 0.9 is not supported");
    expect_replaced_error(j, "{\"major\": 1, \"minor\": 0}", "{\"major\": 1}", "\"version\" must be");
    expect_replaced_error(j, "\"cfx.graph\"", "\"torch.export\"", "not a cfx graph document: \"format\" is "
                          "\"torch.export\", expected \"cfx.graph\"");
    /* the version is checked before anything after it is parsed */
    char *t = replace(j, "{\"major\": 1, \"minor\": 0}", "{\"major\": 3, \"minor\": 1}");
    char *t2 = replace(t, "\"nodes\": [", "\"nodes\": [[[ garbage");
    expect_load_error(t2, "newer than this reader's");
    free(t);
    free(t2);
    /* a newer minor: unknown members are ignored, known ones read */
    t = replace(j, "{\"major\": 1, \"minor\": 0}", "{\"major\": 1, \"minor\": 7, \"patch\": 1}");
    t2 = replace(t, "\"op\": \"placeholder\"", "\"op\": \"placeholder\", \"future\": {\"x\": [1]}");
    char *t3 = replace(t2, "\"nodes\": [", "\"extra\": 5, \"nodes\": [");
    cfx_error_clear();
    cfx_graph_module *gm2 = load_gm(t3, strlen(t3));
    cr_assert(gm2, "%s", cfx_error_message());
    char *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j, j2);
    free(j2);
    cfx_graph_module_free(gm2);
    /* the same additions in a file of this minor are errors */
    expect_replaced_error(j, "\"op\": \"placeholder\"", "\"op\": \"placeholder\", \"future\": 1",
                          "node 'x': node: unknown member \"future\"");
    expect_replaced_error(j, "\"nodes\": [", "\"extra\": 5, \"nodes\": [", "unknown member \"extra\"");
    free(t);
    free(t2);
    free(t3);
    free(j);
    cfx_graph_module_free(gm);
}

/* ---- errors ------------------------------------------------------------------------------------------ */

Test(ir_json, load_errors)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    expect_load_error("", "expected a JSON object");
    expect_load_error("[]", "expected a JSON object");
    expect_load_error("{}", "no \"format\" member");
    expect_load_error("{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}}", "no \"nodes\" member");
    expect_load_error("{\"format\": \"cfx.graph\", \"format\": \"cfx.graph\"}", "member \"format\" appears twice");
    expect_replaced_error(j, "\n}\n", "\n} x", "line 29, column 3: unexpected data after the document");
    expect_replaced_error(j, "\"x\", \"op\"", "\"x\" \"op\"", "line 13, column 18: malformed JSON in a node record");
    /* targets */
    expect_replaced_error(j, "\"aten::relu\"}", "\"aten::relux\"}",
                          "node 'relu', target: unknown operator 'aten::relux': nothing registered defines it; "
                          "register its library (namespace 'aten') before loading the graph");
    expect_replaced_error(j, "{\"fn\": \"operator.getitem\"}", "{\"fn\": \"operator.getitemz\"}",
                          "unknown builtin function 'operator.getitemz'");
    expect_replaced_error(j, "{\"op\": \"aten::t\"}", "\"aten::t\"", "a call_function target must be {\"op\"");
    expect_replaced_error(j, "\"target\": \"x\"", "\"target\": {\"op\": \"aten::t\"}",
                          "a placeholder node's target must be a string");
    expect_replaced_error(j, "\"aten::t(Tensor(a) self) -> Tensor(a)\"", "\"aten::t(Tensor self) -> Tensor\"",
                          "operator 'aten::t' is registered with schema 'aten::t(Tensor(a) self) -> Tensor(a)' "
                          "but the file was written against 'aten::t(Tensor self) -> Tensor'");
    expect_replaced_error(j, "\"op\": \"call_function\"", "\"op\": \"call_fn\"", "\"op\" must be one of");
    /* references and names */
    expect_replaced_error(j, "[{\"node\": \"x\"}, {\"node\": \"t\"}]", "[{\"node\": \"x\"}, {\"node\": \"relu\"}]",
                          "line 17: node 'mm', args: argument 'relu' is used before it has been defined (no earlier node has that name)");
    expect_replaced_error(j, "[{\"node\": \"x\"}, {\"node\": \"t\"}]", "[{\"node\": \"mm\"}, {\"node\": \"t\"}]",
                          "argument 'mm' is used before it has been defined");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"t\"", "node 't': Node redefined name t!");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"m.m\"", "node 'm.m': the graph's name space does not keep this name (it becomes 'm_m')");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"sum\"", "does not keep this name (it becomes 'sum_1')");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"\"", "needs a non-empty \"name\"");
    free(j);
    cfx_graph_module_free(gm);
}

static const char *doc_head = "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [\n"
                              "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": []},\n"
                              "{\"name\": \"y\", \"op\": \"call_function\", \"target\": {\"op\": \"aten::relu\"}, ";

/* A one-node body after doc_head (args/kwargs/meta members), expected to fail with want. */
static void expect_body_error(const char *body, const char *want)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s%s}]}", doc_head, body);
    expect_load_error(b.data, want);
    cfx_buf_free(&b);
}

static void expect_body_ok(const char *body)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s%s}]}", doc_head, body);
    cfx_error_clear();
    cfx_graph *g = load_graph(b.data, b.len);
    cr_expect(g, "%s: %s", body, cfx_error_message());
    cfx_graph_free(g);
    cfx_buf_free(&b);
}

Test(ir_json, value_errors)
{
    expect_body_ok("\"args\": [{\"node\": \"x\"}], \"kwargs\": []");
    expect_body_ok("\"args\": [{\"int\": \"5\"}, {\"int\": \"-9223372036854775808\"}, 1e3, -0], \"kwargs\": []");
    expect_body_error("\"args\": [1.5], \"kwargs\": []", "node 'y', args: value: expected an integer");
    expect_body_error("\"args\": [9007199254740993], \"kwargs\": []", "expected an integer");
    expect_body_error("\"args\": [{\"int\": \"9223372036854775808\"}], \"kwargs\": []", "decimal string within int64");
    expect_body_error("\"args\": [{\"int\": \"01\"}], \"kwargs\": []", "decimal string within int64");
    expect_body_error("\"args\": [{\"int\": 5}], \"kwargs\": []", "decimal string within int64");
    expect_body_error("\"args\": [{\"float\": \"nan\"}], \"kwargs\": []", "is not NaN, Infinity or -Infinity");
    expect_body_error("\"args\": [{\"float\": null}], \"kwargs\": []", "needs a number");
    expect_body_error("\"args\": [{\"floats\": 1}], \"kwargs\": []", "unknown value tag \"floats\"");
    expect_body_error("\"args\": [{\"float\": 1, \"int\": 1}], \"kwargs\": []", "exactly one member");
    expect_body_error("\"args\": [{}], \"kwargs\": []", "exactly one member");
    expect_body_error("\"args\": [{\"tuple\": 1}], \"kwargs\": []", "needs an array");
    expect_body_error("\"args\": [{\"dtype\": \"float32\"}], \"kwargs\": []", "unknown dtype \"float32\"");
    expect_body_error("\"args\": [{\"dtype\": 1e10}], \"kwargs\": []", "out of range");
    expect_body_error("\"args\": [{\"device\": \"cuda\"}], \"kwargs\": []", "expected a device");
    expect_body_error("\"args\": [{\"device\": \"cpu:00\"}], \"kwargs\": []", "expected a device");
    expect_body_error("\"args\": [{\"memory_format\": \"torch.channels_first\"}], \"kwargs\": []", "unknown memory format");
    expect_body_error("\"args\": [{\"layout\": \"torch.sparse\"}], \"kwargs\": []", "needs \"torch.strided\"");
    expect_body_error("\"args\": [{\"node\": 3}], \"kwargs\": []", "needs a node name");
    expect_body_error("\"args\": [{\"node\": \"y\"}], \"kwargs\": []", "argument 'y' is used before it has been defined");
    expect_body_error("\"args\": [], \"kwargs\": {\"a\": 1}", "\"kwargs\" must be an array of [name, value] pairs");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\"]]", "pairs");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\", 1, 2]]", "pairs");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\", 1], [\"a\", 2]]", "node 'y', kwargs 'a': keyword given twice");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\", {\"x\": 1}]]", "node 'y', kwargs 'a': unknown value tag \"x\"");
    expect_body_error("\"kwargs\": []", "\"args\" must be an array");
    expect_body_error("\"args\": [], \"kwargs\": [], \"args\": []", "member \"args\" appears twice");
    /* meta */
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": []", "node 'y', meta: expected an object");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"vall\": 1}", "unknown member \"vall\"");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"val\": \"x\"}", "meta 'val': val: expected null");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"val\": {\"tensor\": {\"dtype\": \"torch.float32\"}}}",
                      "a tensor needs dtype, device, shape, stride and storage_offset");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"val\": {\"tensor\": {\"dtype\": \"torch.float32\", "
                      "\"device\": \"cpu\", \"shape\": [2], \"stride\": [], \"storage_offset\": 0}}}",
                      "shape has 1 dimensions but stride has 0");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"tensor_meta\": {\"shape\": []}}", "needs shape, dtype");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"stack_trace\": {\"file\": 1, \"line\": 2, \"func\": null}}",
                      "needs file (string)");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"stack_trace\": {\"file\": \"a\", \"line\": 1e10, "
                      "\"func\": null}}", "out of range");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": [[\"k\", {\"node\": \"zz\"}]]}",
                      "node 'y', meta 'k': refers to node 'zz', which is not in the graph");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": [[\"k\", 1], [\"k\", 2]]}",
                      "key \"k\" appears twice");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": {\"k\": 1}}", "[key, value] pairs");
}

Test(ir_json, attribute_errors)
{
    const char *head = "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [], \"attributes\": [\n";
    struct {
        const char *rec, *want;
    } cases[] = {
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPw==\"}", NULL},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [2], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPw==\"}", "line 2: attribute 'w': \"data\" is not the base64 of 8 bytes"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAP=w=\"}", "is not the base64"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPx==\"}", "is not the base64"},
        {"{\"name\": \"w\", \"dtype\": \"torch.bool\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"Ag==\"}", "a bool element is neither 0 nor 1"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"meta\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPw==\"}", "\"data\" given for a tensor not on the CPU"},
        {"{\"name\": \"w\", \"dtype\": 15, \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], \"storage_offset\": 0}",
         "dtype code 15 is not one cfx has tensors of"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [-1], \"stride\": [1], "
         "\"storage_offset\": 0}", "negative size"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [-1], "
         "\"storage_offset\": 0}", "negative size or stride"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0},\n{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], "
         "\"stride\": [1], \"storage_offset\": 0}", "line 3: attribute 'w': the attribute appears twice"},
        {"{\"dtype\": \"torch.float32\"}", "needs a non-empty \"name\""},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\"}", "a tensor needs dtype, device"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"grad\": null}", "unknown member \"grad\""},
        {"[1]", "an attribute record must be an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "%s%s]}", head, cases[i].rec);
        if (cases[i].want) {
            expect_load_error(b.data, cases[i].want);
        } else {
            cfx_graph_module *gm = load_gm(b.data, b.len);
            cr_assert(gm, "%s", cfx_error_message());
            cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm, "w"), 0), 1.0);
            cfx_graph_module_free(gm);
        }
        cfx_buf_free(&b);
    }
}

Test(ir_json, write_errors)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *t = cfx_tensor_scalar_double(1, CFX_FLOAT32);
    call(g, "aten::add.Tensor", VALS(NV(x), cfx_tensor_value(t)), 2, NULL, 0);
    char *out = (char *)1;
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
    cr_expect_null(out);
    cr_expect_str_eq(cfx_error_message(), "cannot write graph JSON: node 'add', args: a tensor value cannot be "
                     "serialized (make it a module attribute read by a get_attr node)");
    cfx_graph_free(g);
    cfx_scope_end(s);

    struct {
        cfx_value v;
        const char *want;
    } cases[] = {
        {S("bad \xff utf8"), "node 'add', kwargs 'k': a string value is not valid UTF-8"},
        {S("\xc0\x80"), "not valid UTF-8"},                        /* overlong NUL */
        {S("\xed\xa0\x80"), "not valid UTF-8"},                    /* surrogate */
        {(cfx_value){CFX_V_STRING, 3, {.s = "a\0b"}}, "contains a NUL byte"},
        {cfx_object_value(NULL), "a script object value cannot be serialized"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        g = cfx_graph_new();
        x = cfx_graph_placeholder(g, "x");
        cfx_kwarg k[] = {KW("k", cases[i].v)};
        call(g, "aten::add.Tensor", VALS(NV(x)), 1, k, 1);
        cfx_error_clear();
        out = NULL;
        cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
        cr_expect(strstr(cfx_error_message(), cases[i].want), "%s", cfx_error_message());
        cfx_graph_free(g);
    }
    /* a meta reference to a node of another graph */
    g = cfx_graph_new();
    cfx_graph *other = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cfx_node_meta_set(x, "k", NV(cfx_graph_placeholder(other, "z")));
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "node 'x', meta 'k': refers to a node that is not in this graph"), "%s",
              cfx_error_message());
    cfx_graph_free(g);
    cfx_graph_free(other);
    /* names set by hand that clash */
    g = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node_set_name_unchecked(y, "x");
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "the name is used by two nodes"), "%s", cfx_error_message());
    cfx_graph_free(g);
    cfx_error_clear();
}

Test(ir_json, unknown_library_after_unload)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    CALL(g, "cfxjt::custom", NV(x));
    char *j = dump_graph(g);
    cfx_graph_free(g);
    cfx_library_free(lib);
    lib = NULL;
    expect_load_error(j, "unknown operator 'cfxjt::custom': nothing registered defines it; register its library "
                         "(namespace 'cfxjt') before loading the graph (schema in the file: "
                         "cfxjt::custom(Tensor x, *, int k=1, str mode=\"a\") -> Tensor)");
    free(j);
}

/* ---- fuzzing ------------------------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { return test_rand(&rng_state); }

/* If text loads, it must dump to a document that loads and dumps to itself. */
static int fuzz_one(const char *text, size_t len)
{
    cfx_error_clear();
    cfx_graph_module *gm = load_gm(text, len);
    if (!gm) {
        cr_assert(cfx_error_occurred(), "refused without an error message");
        cr_assert(cfx_error_message() && cfx_error_message()[0]);
        cfx_error_clear();
        return 0;
    }
    char *a = NULL;
    int rc = cfx_graph_module_to_json(gm, 0, &a);
    if (rc == CFX_OK) {
        cfx_graph_module *gm2 = load_gm(a, strlen(a));
        cr_assert(gm2, "a re-dump does not load: %s", cfx_error_message());
        char *b = dump_gm(gm2, 0);
        cr_assert_str_eq(a, b);
        free(b);
        cfx_graph_module_free(gm2);
    }
    free(a);
    cfx_graph_module_free(gm);
    cfx_error_clear();
    return 1;
}

Test(ir_json, fuzz_truncations, .timeout = 120)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    size_t len = strlen(j);
    int ok = 0;
    for (size_t n = 0; n < len; n++)
        ok += fuzz_one(j, n);
    /* only the final newline may go */
    cr_expect_eq(ok, 1);
    cr_log_info("%zu truncations loaded, %d accepted", len, ok);
    free(j);
    cfx_graph_module_free(gm);
}

Test(ir_json, fuzz_mutations, .timeout = 240)
{
    cfx_graph *g = g_all();
    cfx_graph_module *gm = cfx_graph_module_new(g, "All");
    cfx_scope s = cfx_scope_begin();
    float wd[6] = {1, 2, 3, 4, 5, 6};
    cfx_graph_module_set_attr(gm, "fc.weight", cfx_tensor_from_floats(wd, (int64_t[]){2, 3}, 2));
    cfx_scope_end(s);
    char *j = dump_gm(gm, 0);
    size_t len = strlen(j);
    char *buf = malloc(len);
    static const char alphabet[] = "{}[]\",:0123456789-+.eE \\nulltruefalse\x01\xff";
    int accepted = 0, iters = 3000;
    for (int it = 0; it < iters; it++) {
        memcpy(buf, j, len);
        int k = 1 + (int)(rng() % 3);
        for (int m = 0; m < k; m++) {
            size_t at = rng() % len;
            buf[at] = rng() % 2 ? alphabet[rng() % (sizeof alphabet - 1)] : (char)(rng() & 0xff);
        }
        accepted += fuzz_one(buf, len);
    }
    cr_log_info("%d of %d mutations still loaded", accepted, iters);
    free(buf);
    free(j);
    cfx_graph_module_free(gm);
}

/* ---- size ------------------------------------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

Test(ir_json, chain_of_100k_nodes, .timeout = 120)
{
    enum { N = 100000 };
    const cfx_op *add = OPF("aten::add.Tensor"), *mul = OPF("aten::mul.Tensor"), *relu = OPF("aten::relu");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *prev = x;
    for (int i = 0; i < N; i++) {
        const cfx_op *op = i % 3 == 0 ? add : i % 3 == 1 ? mul : relu;
        prev = cfx_graph_call_op(g, op, VALS(NV(prev), NV(x)), op == relu ? 1 : 2, NULL, 0);
        cr_assert(prev);
    }
    cfx_graph_output(g, NV(prev));
    double t0 = now();
    char *j1 = dump_graph(g);
    double t1 = now();
    cfx_graph *g2 = load_graph(j1, strlen(j1));
    double t2 = now();
    cr_assert(g2, "%s", cfx_error_message());
    cr_expect_eq(cfx_graph_num_nodes(g2), N + 2);
    cr_expect(cfx_node_name_is(cfx_node_prev(cfx_graph_last(g2)), "add_33333"));
    char *j2 = dump_graph(g2);
    cr_expect(strcmp(j1, j2) == 0);
    char *s1 = cfx_graph_to_string(g), *s2 = cfx_graph_to_string(g2);
    cr_expect(strcmp(s1, s2) == 0);
    cr_log_info("100k chain: dump %.0f ns/node, load %.0f ns/node, %zu bytes", (t1 - t0) * 1e9 / N,
                (t2 - t1) * 1e9 / N, strlen(j1));
    free(s1);
    free(s2);
    free(j1);
    free(j2);
    cfx_graph_free(g);
    cfx_graph_free(g2);
}
