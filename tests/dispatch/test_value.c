/* test_value.c - dtypes, devices, cfx_value equality and the three printing styles.
 *
 * Expected texts come from PyTorch 2.13 / Python 3.11 via tools/interop/gen_value_goldens.py:
 * repr(float) for 2620 doubles (every power of two among them), torch.promote_types for all 25 pairs, repr(str) for 31 strings,
 * FX format_node and python_code text for 44 values, c10 schema defaults for 23 values. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"
#include "dispatch/value_internal.h"
#include "tests/dispatch/value_golden.h"

static char *fmt_py_double(double d)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_format_double_python(d, &b);
    return cfx_buf_take(&b);
}

/* ------------------------------------------------------------------ dtypes and devices */

Test(value, dtype_names_sizes_parse)
{
    static const struct {
        cfx_dtype t;
        const char *name, *torch;
        size_t size;
        bool fl;
    } cases[] = {
        {CFX_INT32, "int32", "torch.int32", 4, false},
        {CFX_INT64, "int64", "torch.int64", 8, false},
        {CFX_FLOAT32, "float32", "torch.float32", 4, true},
        {CFX_FLOAT64, "float64", "torch.float64", 8, true},
        {CFX_BOOL, "bool", "torch.bool", 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert(cfx_dtype_valid(cases[i].t));
        cr_assert_str_eq(cfx_dtype_name(cases[i].t), cases[i].name);
        cr_assert_str_eq(cfx_dtype_torch_name(cases[i].t), cases[i].torch);
        cr_assert_eq(cfx_dtype_size(cases[i].t), cases[i].size);
        cr_assert_eq(cfx_dtype_is_floating(cases[i].t), cases[i].fl);
        cfx_dtype p;
        cr_assert(cfx_dtype_parse(cases[i].name, &p));
        cr_assert_eq(p, cases[i].t);
        p = (cfx_dtype)0;
        cr_assert(cfx_dtype_parse(cases[i].torch, &p));
        cr_assert_eq(p, cases[i].t);
    }
    cfx_dtype p;
    cr_assert(cfx_dtype_parse("float", &p) && p == CFX_FLOAT32);
    cr_assert(cfx_dtype_parse("torch.double", &p) && p == CFX_FLOAT64);
    cr_assert(cfx_dtype_parse("long", &p) && p == CFX_INT64);
    cr_assert(cfx_dtype_parse("int", &p) && p == CFX_INT32);
    cr_assert_not(cfx_dtype_parse("float16", &p));
    cr_assert_not(cfx_dtype_parse("torch.", &p));
    cr_assert_not(cfx_dtype_parse(NULL, &p));
    cr_assert_not(cfx_dtype_valid(5));
    cr_assert_not(cfx_dtype_valid(-1));
    cr_assert_not(cfx_dtype_valid(100));
    cr_assert_null(cfx_dtype_name((cfx_dtype)5));
    cr_assert_eq(CFX_FLOAT32, 6); /* ScalarType codes */
    cr_assert_eq(CFX_BOOL, 11);
}

Test(value, promote_types_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_promote.txt"), "missing golden");
    int n = 0;
    while (golden_next(&g)) {
        cfx_dtype a = (cfx_dtype)atoi(g.field[0]), b = (cfx_dtype)atoi(g.field[1]);
        cfx_dtype want = (cfx_dtype)atoi(g.field[2]);
        cr_expect_eq(cfx_dtype_promote(a, b), want, "promote(%d, %d)", a, b);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(n, 64);
}

Test(value, devices)
{
    char buf[32];
    cr_assert_str_eq(cfx_device_format(cfx_device_make(CFX_DEVICE_CPU), buf, sizeof buf), "cpu");
    cr_assert_str_eq(cfx_device_format(cfx_device_make(CFX_DEVICE_META), buf, sizeof buf), "meta");
    cr_assert_str_eq(cfx_device_format((cfx_device){CFX_DEVICE_CPU, 0}, buf, sizeof buf), "cpu:0");
    cr_assert_str_eq(cfx_device_type_name(CFX_DEVICE_META), "meta");
    cfx_device d;
    cr_assert(cfx_device_parse("cpu", &d) && d.type == CFX_DEVICE_CPU && d.index == -1);
    cr_assert(cfx_device_parse("meta", &d) && d.type == CFX_DEVICE_META && d.index == -1);
    cr_assert(cfx_device_parse("cpu:0", &d) && d.type == CFX_DEVICE_CPU && d.index == 0);
    cr_assert(cfx_device_parse("cpu:12", &d) && d.index == 12);
    cr_assert_not(cfx_device_parse("cuda", &d));
    cr_assert_not(cfx_device_parse("cpu:", &d));
    cr_assert_not(cfx_device_parse("cpu:-1", &d));
    cr_assert_not(cfx_device_parse("cpu:01", &d));
    cr_assert_not(cfx_device_parse("cpu:1x", &d));
    cr_assert_not(cfx_device_parse("cpux", &d));
    cr_assert(cfx_device_eq(cfx_device_make(CFX_DEVICE_CPU), cfx_device_make(CFX_DEVICE_CPU)));
    cr_assert_not(cfx_device_eq(cfx_device_make(CFX_DEVICE_CPU), (cfx_device){CFX_DEVICE_CPU, 0}));
}

Test(value, memory_format_names)
{
    cr_assert_str_eq(cfx_memory_format_torch_name(CFX_CONTIGUOUS_FORMAT), "torch.contiguous_format");
    cr_assert_str_eq(cfx_memory_format_torch_name(CFX_PRESERVE_FORMAT), "torch.preserve_format");
    cr_assert_str_eq(cfx_memory_format_torch_name(CFX_CHANNELS_LAST), "torch.channels_last");
    cr_assert_str_eq(cfx_memory_format_torch_name(CFX_CHANNELS_LAST_3D), "torch.channels_last_3d");
    cr_assert_null(cfx_memory_format_torch_name((cfx_memory_format)9));
}

/* ------------------------------------------------------------------ basic values */

Test(value, basics)
{
    cfx_value s = cfx_string("hello");
    cr_assert_eq(s.kind, CFX_V_STRING);
    cr_assert_eq(s.len, 5);
    cr_assert_eq(cfx_string(NULL).kind, CFX_V_NONE);
    cr_assert_eq(cfx_value_to_double(cfx_int(-3)), -3.0);
    cr_assert_eq(cfx_value_to_double(cfx_double(2.5)), 2.5);
    cr_assert_eq(cfx_value_to_double(cfx_bool(true)), 1.0);
    cr_assert(isnan(cfx_value_to_double(cfx_none())));
    cr_assert_str_eq(cfx_value_kind_name(CFX_V_INT), "int");
    cr_assert_str_eq(cfx_value_kind_name(CFX_V_LIST), "list");
    cr_assert_str_eq(cfx_value_kind_name(CFX_V_MEMORY_FORMAT), "memory_format");
    cr_assert_str_eq(cfx_value_kind_name((cfx_value_kind)99), "unknown");
    for (int k = 0; k < CFX_V_KIND_COUNT; k++)
        cr_assert_not_null(cfx_value_kind_name((cfx_value_kind)k));
}

Test(value, equality)
{
    cr_assert(cfx_value_equal(cfx_none(), cfx_none()));
    cr_assert(cfx_value_equal(cfx_int(1), cfx_int(1)));
    cr_assert_not(cfx_value_equal(cfx_int(1), cfx_double(1.0)));
    cr_assert_not(cfx_value_equal(cfx_int(1), cfx_bool(true)));
    cr_assert(cfx_value_equal(cfx_double(NAN), cfx_double(-NAN)));
    cr_assert_not(cfx_value_equal(cfx_double(0.0), cfx_double(-0.0)));
    cr_assert(cfx_value_equal(cfx_double(0.1), cfx_double(0.1)));
    cr_assert_not(cfx_value_equal(cfx_double(NAN), cfx_double(1.0)));
    char a[] = "abc", b[] = "abc";
    cr_assert(cfx_value_equal(cfx_string(a), cfx_string(b)));
    cr_assert_not(cfx_value_equal(cfx_string("abc"), cfx_string("abd")));
    cr_assert_not(cfx_value_equal(cfx_string("ab"), cfx_string("abc")));
    cfx_value l1[] = {cfx_int(1), cfx_int(2)}, l2[] = {cfx_int(1), cfx_int(2)}, l3[] = {cfx_int(1), cfx_int(3)};
    cr_assert(cfx_value_equal(cfx_list(l1, 2), cfx_list(l2, 2)));
    cr_assert_not(cfx_value_equal(cfx_list(l1, 2), cfx_tuple(l2, 2)));
    cr_assert_not(cfx_value_equal(cfx_list(l1, 2), cfx_list(l3, 2)));
    cr_assert_not(cfx_value_equal(cfx_list(l1, 2), cfx_list(l1, 1)));
    cr_assert(cfx_value_equal(cfx_list(NULL, 0), cfx_list(l1, 0)));
    cfx_value n1[] = {cfx_list(l1, 2), cfx_tuple(l1, 1)}, n2[] = {cfx_list(l2, 2), cfx_tuple(l2, 1)};
    cfx_value n3[] = {cfx_list(l2, 2), cfx_list(l2, 1)};
    cr_assert(cfx_value_equal(cfx_list(n1, 2), cfx_list(n2, 2)));
    cr_assert_not(cfx_value_equal(cfx_list(n1, 2), cfx_list(n3, 2)));
    cr_assert(cfx_value_equal(cfx_dtype_value(CFX_INT64), cfx_dtype_value(CFX_INT64)));
    cr_assert_not(cfx_value_equal(cfx_dtype_value(CFX_INT64), cfx_dtype_value(CFX_INT32)));
    cr_assert_not(cfx_value_equal(cfx_device_value(cfx_device_make(CFX_DEVICE_CPU)),
                                  cfx_device_value((cfx_device){CFX_DEVICE_CPU, 0})));
    cr_assert_not(cfx_value_equal(cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT),
                                  cfx_memory_format_value(CFX_CHANNELS_LAST)));
    int x, y;
    cr_assert(cfx_value_equal(cfx_node_value((struct cfx_node *)&x), cfx_node_value((struct cfx_node *)&x)));
    cr_assert_not(cfx_value_equal(cfx_node_value((struct cfx_node *)&x), cfx_node_value((struct cfx_node *)&y)));
    cr_assert_not(cfx_value_equal(cfx_tensor_value((cfx_tensor *)&x), cfx_tensor_value((cfx_tensor *)&y)));
}

/* 100000 nested lists: printing and equality must not recurse. */
Test(value, deep_nesting)
{
    enum { DEPTH = 100000 };
    cfx_value *a = malloc(DEPTH * sizeof *a), *b = malloc(DEPTH * sizeof *b);
    a[0] = cfx_int(7);
    b[0] = cfx_int(7);
    for (int i = 1; i < DEPTH; i++) {
        a[i] = cfx_list(&a[i - 1], 1);
        b[i] = cfx_list(&b[i - 1], 1);
    }
    cr_assert(cfx_value_equal(a[DEPTH - 1], b[DEPTH - 1]));
    b[0] = cfx_int(8);
    cr_assert_not(cfx_value_equal(a[DEPTH - 1], b[DEPTH - 1]));
    char *s = cfx_value_to_string(a[DEPTH - 1], CFX_STYLE_FX);
    cr_assert_eq(strlen(s), 2 * (DEPTH - 1) + 1);
    cr_assert_eq(s[DEPTH - 1], '7');
    cr_assert_eq(s[0], '[');
    cr_assert_eq(s[2 * (DEPTH - 1)], ']');
    free(s);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------ repr(float) */

Test(value, python_float_repr_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_float_repr.txt"), "missing golden");
    int n = 0, bad = 0;
    while (golden_next(&g)) {
        double d = strtod(g.field[0], NULL);
        char *s = fmt_py_double(d);
        if (strcmp(s, g.field[1]) != 0 && bad++ < 10)
            cr_expect_str_eq(s, g.field[1], "repr of %s", g.field[0]);
        free(s);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(bad, 0, "%d of %d floats differ", bad, n);
    cr_assert_geq(n, 2600);
}

Test(value, python_float_repr_cases)
{
    static const struct {
        double d;
        const char *s;
    } cases[] = {
        {1.0, "1.0"}, {-0.0, "-0.0"}, {1e-05, "1e-05"}, {1e16, "1e+16"}, {1e22, "1e+22"},
        {0.0001, "0.0001"}, {123.0, "123.0"}, {1.5e300, "1.5e+300"}, {5e-324, "5e-324"},
        {9999999999999998.0, "9999999999999998.0"}, {0.1 + 0.2, "0.30000000000000004"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = fmt_py_double(cases[i].d);
        cr_expect_str_eq(s, cases[i].s);
        free(s);
    }
    char *s = fmt_py_double(-INFINITY);
    cr_expect_str_eq(s, "-inf");
    free(s);
    s = fmt_py_double(-NAN);
    cr_expect_str_eq(s, "nan");
    free(s);
}

/* ------------------------------------------------------------------ strings */

Test(value, python_string_repr_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_strings.txt"), "missing golden");
    int n = 0;
    char raw[256];
    while (golden_next(&g)) {
        size_t len = golden_hex(g.field[0], raw);
        /* explicit length: one case holds a NUL byte */
        cfx_value v = {CFX_V_STRING, (uint32_t)len, {.s = raw}};
        char *py = cfx_value_to_string(v, CFX_STYLE_PYTHON);
        char *fx = cfx_value_to_string(v, CFX_STYLE_FX);
        cr_expect_str_eq(py, g.field[1], "repr of hex %s", g.field[0]);
        cr_expect(memcmp(fx, raw, len + 1) == 0, "FX style of hex %s is the raw text", g.field[0]);
        free(py);
        free(fx);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(n, 31);
}

Test(value, python_string_invalid_utf8)
{
    char *s = cfx_value_to_string(cfx_string("a\xff" "b\xc3"), CFX_STYLE_PYTHON);
    cr_assert_str_eq(s, "'a\\xffb\\xc3'");
    free(s);
}

/* ------------------------------------------------------------------ FX / python_code */

static cfx_value i12[] = {{CFX_V_INT, 0, {.i = 1}}, {CFX_V_INT, 0, {.i = 2}}};
static cfx_value i3[] = {{CFX_V_INT, 0, {.i = 3}}};
static cfx_value nested[2];
static cfx_value strs[2];
static cfx_value mixed[5];

static bool print_case(const char *name, cfx_value *out, cfx_tensor **tensor)
{
    nested[0] = cfx_list(i12, 2);
    nested[1] = cfx_tuple(i3, 1);
    strs[0] = cfx_string("a");
    strs[1] = cfx_string("b");
    mixed[0] = cfx_int(1);
    mixed[1] = cfx_double(2.5);
    mixed[2] = cfx_bool(true);
    mixed[3] = cfx_none();
    mixed[4] = cfx_string("x");
    const struct {
        const char *name;
        cfx_value v;
    } table[] = {
        {"none", cfx_none()}, {"true", cfx_bool(true)}, {"false", cfx_bool(false)},
        {"int0", cfx_int(0)}, {"int_neg", cfx_int(-5)}, {"int_max", cfx_int(INT64_MAX)},
        {"int_min", cfx_int(INT64_MIN)}, {"dbl_one", cfx_double(1.0)},
        {"dbl_small", cfx_double(1e-05)}, {"dbl_inf", cfx_double(INFINITY)},
        {"dbl_ninf", cfx_double(-INFINITY)}, {"dbl_nan", cfx_double(NAN)},
        {"dbl_negzero", cfx_double(-0.0)}, {"dbl_tenth", cfx_double(0.1)},
        {"dbl_1e16", cfx_double(1e16)}, {"dbl_1_5", cfx_double(1.5)},
        {"list_empty", cfx_list(NULL, 0)}, {"list_ints", cfx_list(i12, 2)},
        {"tuple1", cfx_tuple(i12, 1)}, {"tuple2", cfx_tuple(i12, 2)},
        {"tuple_empty", cfx_tuple(NULL, 0)}, {"nested", cfx_list(nested, 2)},
        {"dt_f32", cfx_dtype_value(CFX_FLOAT32)}, {"dt_f64", cfx_dtype_value(CFX_FLOAT64)},
        {"dt_i32", cfx_dtype_value(CFX_INT32)}, {"dt_i64", cfx_dtype_value(CFX_INT64)},
        {"dt_bool", cfx_dtype_value(CFX_BOOL)},
        {"dev_cpu", cfx_device_value(cfx_device_make(CFX_DEVICE_CPU))},
        {"dev_meta", cfx_device_value(cfx_device_make(CFX_DEVICE_META))},
        {"dev_cpu0", cfx_device_value((cfx_device){CFX_DEVICE_CPU, 0})},
        {"mf_contig", cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT)},
        {"mf_preserve", cfx_memory_format_value(CFX_PRESERVE_FORMAT)},
        {"mf_cl", cfx_memory_format_value(CFX_CHANNELS_LAST)},
        {"mf_cl3d", cfx_memory_format_value(CFX_CHANNELS_LAST_3D)},
        {"layout", cfx_layout_value(CFX_LAYOUT_STRIDED)},
        {"str_abc", cfx_string("abc")}, {"str_quote", cfx_string("it's")},
        {"str_dquote", cfx_string("a\"b")}, {"str_both", cfx_string("it's \"x\"")},
        {"str_esc", cfx_string("x\n\ty\\z\x01\xc3\xa9")}, {"str_empty", cfx_string("")},
        {"list_strs", cfx_list(strs, 2)}, {"mixed", cfx_list(mixed, 5)},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0) {
            *out = table[i].v;
            return true;
        }
    if (strcmp(name, "tensor") == 0) {
        float data[] = {1.0f, 2.5f};
        int64_t sizes[] = {2};
        *tensor = cfx_tensor_from_floats(data, sizes, 1);
        *out = cfx_tensor_value(*tensor);
        return true;
    }
    return false;
}

Test(value, fx_and_python_print_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_print.txt"), "missing golden");
    int n = 0;
    while (golden_next(&g)) {
        cfx_value v;
        cfx_tensor *t = NULL;
        cr_assert(print_case(g.field[0], &v, &t), "no C value for case %s", g.field[0]);
        char *fx = cfx_value_to_string(v, CFX_STYLE_FX);
        char *py = cfx_value_to_string(v, CFX_STYLE_PYTHON);
        cr_expect_str_eq(fx, g.field[1], "FX style of %s", g.field[0]);
        cr_expect_str_eq(py, g.field[2], "python style of %s", g.field[0]);
        free(fx);
        free(py);
        cfx_tensor_release(t);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(n, 44);
}

/* cfx_format_double_schema lives in schema.c; the schema golden skips floats for that reason
 * (the schema tests cover them). */
Test(value, schema_print_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_schema.txt"), "missing golden");
    int n = 0;
    char raw[256];
    while (golden_next(&g)) {
        cfx_value v;
        cfx_tensor *t = NULL;
        if (strncmp(g.field[0], "str:", 4) == 0) {
            golden_hex(g.field[0] + 4, raw);
            v = cfx_string(raw);
        } else if (strcmp(g.field[0], "int_neg") == 0) {
            v = cfx_int(-3);
        } else if (strcmp(g.field[0], "int_big") == 0) {
            v = cfx_int(INT64_MAX);
        } else {
            cr_assert(print_case(g.field[0], &v, &t), "no C value for case %s", g.field[0]);
        }
        char *s = cfx_value_to_string(v, CFX_STYLE_SCHEMA);
        cr_expect_str_eq(s, g.field[1], "schema style of %s", g.field[0]);
        free(s);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(n, 23);
}

Test(value, schema_style_tuples)
{
    char *s = cfx_value_to_string(cfx_tuple(i12, 1), CFX_STYLE_SCHEMA);
    cr_assert_str_eq(s, "(1,)");
    free(s);
    s = cfx_value_to_string(cfx_tuple(i12, 2), CFX_STYLE_SCHEMA);
    cr_assert_str_eq(s, "(1, 2)");
    free(s);
}

/* ------------------------------------------------------------------ nodes */

static void fake_node_name(const struct cfx_node *n, cfx_buf *b) { cfx_buf_puts(b, (const char *)n); }

Test(value, node_printer_hook)
{
    char *s = cfx_value_to_string(cfx_node_value((struct cfx_node *)"x"), CFX_STYLE_FX);
    cr_assert_str_eq(s, "%<node>");
    free(s);
    cfx_value_set_node_printer(fake_node_name);
    static char name[] = "add_1";
    cfx_value items[] = {cfx_node_value((struct cfx_node *)name), cfx_int(2)};
    s = cfx_value_to_string(cfx_list(items, 2), CFX_STYLE_FX);
    cr_assert_str_eq(s, "[%add_1, 2]");
    free(s);
    s = cfx_value_to_string(cfx_tuple(items, 2), CFX_STYLE_PYTHON);
    cr_assert_str_eq(s, "(add_1, 2)");
    free(s);
    cfx_value_set_node_printer(NULL);
}

Test(value, print_appends)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "x=");
    cfx_value_print(cfx_double(2.0), CFX_STYLE_FX, &b);
    cfx_buf_puts(&b, ", y=");
    cfx_value_print(cfx_string("s"), CFX_STYLE_PYTHON, &b);
    char *s = cfx_buf_take(&b);
    cr_assert_str_eq(s, "x=2.0, y='s'");
    free(s);
}
