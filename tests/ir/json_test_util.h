/* json_test_util.h - what the JSON tests share (test_json.c, test_json_errors.c): a suite
 * setup registering a custom operator, node builders, dump/load helpers that load from a
 * non-terminated copy (so overreads show under ASan), expected-error checks, and the two
 * example graphs: g_all (every value kind, op kind and meta slot) and gm_example (a small
 * module with attributes). */
#ifndef CFX_TESTS_IR_JSON_TEST_UTIL_H
#define CFX_TESTS_IR_JSON_TEST_UTIL_H

#include <math.h>

#include <criterion/criterion.h>

#include "dispatch/dispatcher.h"
#include "dispatch/library.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "ir/graph_module.h"
#include "ir/json.h"
#include "tests/ir/ir_test_util.h"

/* The test library registering cfxjt::custom and cfxjt::values, for the suites' init and fini. */
static cfx_library *lib;

static inline void setup(void)
{
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxjt");
    cfx_library_def(lib, "custom(Tensor x, *, int k=1, str mode=\"a\", Any? extra=None) -> Tensor");
    /* a call taking any values: g_all carries every kind of value as its arguments (the loader
     * binds a call to its schema, and a vararg one takes whatever it is given) */
    cfx_library_def(lib, "values(Tensor x, ...) -> Tensor");
}

static inline void teardown(void)
{
    cfx_library_free(lib);
    lib = NULL;
}


static inline const cfx_op *OPF(const char *qn)
{
    const cfx_op *op = cfx_op_find(qn);
    cr_assert(op, "operator %s is not registered", qn);
    return op;
}

static inline cfx_node *call(cfx_graph *g, const char *qn, const cfx_value *args, uint32_t n, const cfx_kwarg *kw,
                      uint32_t nk)
{
    cfx_node *r = cfx_graph_call_op(g, OPF(qn), args, n, kw, nk);
    cr_assert(r, "%s", cfx_error_message());
    return r;
}

#define CALL(g, qn, ...) call((g), (qn), VALS(__VA_ARGS__), NVALS(__VA_ARGS__), NULL, 0)
#define CALLK(g, qn, kw, nk, ...) call((g), (qn), VALS(__VA_ARGS__), NVALS(__VA_ARGS__), (kw), (nk))
static inline cfx_value S(const char *s) { return cfx_string(s); }
static inline cfx_value I(int64_t i) { return cfx_int(i); }
static inline cfx_value D(double d) { return cfx_double(d); }
static inline cfx_value DEV(int type, int index) { return cfx_device_value((cfx_device){(int8_t)type, (int8_t)index}); }

/* ---- helpers --------------------------------------------------------------------------------- */

static inline char *dump_graph(const cfx_graph *g)
{
    char *s = NULL;
    int rc = cfx_graph_to_json(g, 0, &s);
    cr_assert_eq(rc, CFX_OK, "dump failed: %s", cfx_error_message());
    cr_assert(s);
    return s;
}

static inline char *dump_gm(const cfx_graph_module *gm, unsigned flags)
{
    char *s = NULL;
    int rc = cfx_graph_module_to_json(gm, flags, &s);
    cr_assert_eq(rc, CFX_OK, "dump failed: %s", cfx_error_message());
    cr_assert(s);
    return s;
}

/* Loads text (as a non-terminated copy, so overreads show under ASan). */
static inline cfx_graph *load_graph(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    cfx_graph *g = cfx_graph_from_json(copy, len);
    free(copy);
    return g;
}

static inline cfx_graph_module *load_gm(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    cfx_graph_module *gm = cfx_graph_module_from_json(copy, len);
    free(copy);
    return gm;
}

static inline void expect_same_text(const cfx_graph *a, const cfx_graph *b)
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
static inline cfx_graph *roundtrip(const cfx_graph *g)
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
static inline void expect_load_error(const char *text, const char *want)
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
static inline char *replace(const char *text, const char *from, const char *to)
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

static inline void expect_replaced_error(const char *text, const char *from, const char *to, const char *want)
{
    char *t = replace(text, from, to);
    expect_load_error(t, want);
    free(t);
}

/* ---- graphs ------------------------------------------------------------------------------------ */

/* Every value kind, every op kind, kwargs, nesting, meta, builtins, several outputs. */
static inline cfx_graph *g_all(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder_default(g, "y", D(0.5));
    cfx_node *w = cfx_graph_get_attr(g, "fc.weight");
    cfx_kwarg k1[] = {KW("alpha", I(2))};
    cfx_node *add = CALLK(g, "aten::add.Tensor", k1, 1, NV(x), NV(w));
    cfx_node *lit = CALL(g, "cfxjt::values", NV(add),
                         LIST(TUPLE(I(1), I(2)), LIST(I(3), LIST(D(4.5), I(-6)))), cfx_none(), cfx_bool(true),
                         cfx_bool(false), cfx_list(NULL, 0), cfx_tuple(NULL, 0), TUPLE(I(7)),
                         TUPLE(cfx_tuple(NULL, 0)), LIST(cfx_list(NULL, 0)));
    cfx_node *strs = CALL(g, "cfxjt::values", NV(lit), S("it's"), S("say \"hi\""), S("back\\slash"),
                          S("new\nline\ttab\r\b\f\x01\x1f"), S("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
                          S(""), S("/ </script>"));
    cfx_node *nums = CALL(g, "cfxjt::values", NV(strs), D(0.1), D(1e-05), D(1e20), D(1e16), D(-0.0), D(0.0),
                          D(INFINITY), D(-INFINITY), D(NAN), D(3.0), D(0.1 + 0.2), D(5e-324), D(1.7976931348623157e308),
                          D(-2.5e-300), I(INT64_MAX), I(INT64_MIN), I(9007199254740992LL), I(9007199254740993LL),
                          I(-9007199254740992LL), I(-9007199254740993LL), I(0), I(-1));
    cfx_node *types = CALL(g, "cfxjt::values", NV(nums),
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

static inline cfx_graph_module *gm_example(void)
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

#endif
