/* test_setitem.c - Python's `x[...] = v` (cfx_setitem) traced, dumped and run, against PyTorch.
 *
 * Each program is the C twin of one in tools/interop/gen_setitem.py: the slice, int, Ellipsis,
 * None and tensor-index paths of THPVariable_setitem, with tensor values and numbers (a number
 * becomes a lifted constant of x's dtype). make_fx in real and fake mode must print 2.13's
 * graph and code (slice/select/unsqueeze views, then copy_, fill_.Tensor, view + expand +
 * copy_, or index_put_); the graph must survive a JSON round trip and the interpreter must
 * compute PyTorch's values from it. Also: eager values, errors, and fill / copy directly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(setitem, .init = setup);

/* a failed assignment fails the program: its error stays recorded for make_fx */
#define SET(...)                                                                                   \
    do {                                                                                           \
        if (cfx_setitem(__VA_ARGS__) != CFX_OK)                                                    \
            return NULL;                                                                           \
    } while (0)

static cfx_tensor *slice_fill(cfx_tensor *x)
{
    x = cfx_clone(x);
    SET(x, cfx_num(0), CFX_ALL, CFX_SLICE(1, 3));
    return x;
}
static cfx_tensor *int_copy(cfx_tensor *x, cfx_tensor *v)
{
    x = cfx_clone(x);
    SET(x, v, CFX_I(0));
    return x;
}
static cfx_tensor *ellipsis_int(cfx_tensor *x, cfx_tensor *t)
{
    x = cfx_clone(x);
    SET(x, t, CFX_ELLIPSIS, CFX_I(1));
    return x;
}
static cfx_tensor *none_int(cfx_tensor *x)
{
    x = cfx_clone(x);
    SET(x, cfx_num(2.5), CFX_NEWAXIS, CFX_I(1));
    return x;
}
static cfx_tensor *expand(cfx_tensor *x, cfx_tensor *v)
{
    x = cfx_clone(x);
    SET(x, v, CFX_SLICE(1, 2), CFX_NEWAXIS);
    return x;
}
static cfx_tensor *whole(cfx_tensor *x, cfx_tensor *s)
{
    x = cfx_clone(x);
    SET(x, cfx_num(1), CFX_ALL);
    SET(x, s, CFX_ELLIPSIS);
    SET(x, s, CFX_I(1));
    return x;
}
static cfx_tensor *single_slice(cfx_tensor *x, cfx_tensor *v)
{
    x = cfx_clone(x);
    SET(x, v, CFX_SLICE(1, 3));
    SET(x, cfx_num(-1.5), CFX_STEP(2));
    return x;
}
static cfx_tensor *none_only(cfx_tensor *x, cfx_tensor *v)
{
    x = cfx_clone(x);
    SET(x, v, CFX_NEWAXIS);
    return x;
}
static cfx_tensor *int_dtype(cfx_tensor *xi)
{
    xi = cfx_clone(xi);
    SET(xi, cfx_num(2.5), CFX_I(0));
    SET(xi, cfx_num(9), CFX_ALL, CFX_I(-1));
    return xi;
}
static cfx_tensor *tensor_index(cfx_tensor *x, cfx_tensor *v, cfx_tensor *i)
{
    x = cfx_clone(x);
    SET(x, v, CFX_IDX(i));
    SET(x, cfx_num(4.0), CFX_FROM(1), CFX_IDX(i));
    return x;
}

typedef struct program {
    const char *name;
    cfx_fnptr fn;
    const char *signature;
    const char *inputs; /* one letter per argument: x, X (= xi), v, t, s, i */
} program;

static const program programs[] = {
    {"slice_fill", (cfx_fnptr)slice_fill, "(Tensor x) -> Tensor", "x"},
    {"int_copy", (cfx_fnptr)int_copy, "(Tensor x, Tensor v) -> Tensor", "xv"},
    {"ellipsis_int", (cfx_fnptr)ellipsis_int, "(Tensor x, Tensor t) -> Tensor", "xt"},
    {"none_int", (cfx_fnptr)none_int, "(Tensor x) -> Tensor", "x"},
    {"expand", (cfx_fnptr)expand, "(Tensor x, Tensor v) -> Tensor", "xv"},
    {"whole", (cfx_fnptr)whole, "(Tensor x, Tensor s) -> Tensor", "xs"},
    {"single_slice", (cfx_fnptr)single_slice, "(Tensor x, Tensor v) -> Tensor", "xv"},
    {"none_only", (cfx_fnptr)none_only, "(Tensor x, Tensor v) -> Tensor", "xv"},
    {"int_dtype", (cfx_fnptr)int_dtype, "(Tensor xi) -> Tensor", "X"},
    {"tensor_index", (cfx_fnptr)tensor_index, "(Tensor x, Tensor v, Tensor i) -> Tensor", "xvi"},
};

/* gen_setitem.py's inputs */
static cfx_tensor *input(char c)
{
    float f[20];
    int64_t l[20];
    const int64_t xs[2] = {4, 5}, five[1] = {5}, four[1] = {4}, two[1] = {2};
    switch (c) {
    case 'x':
        for (int k = 0; k < 20; k++)
            f[k] = (float)k * 0.5f - 3;
        return cfx_autorelease(cfx_tensor_from_floats(f, xs, 2));
    case 'X':
        for (int k = 0; k < 20; k++)
            l[k] = k;
        return cfx_autorelease(cfx_tensor_from_int64s(l, xs, 2));
    case 'v':
        for (int k = 0; k < 5; k++)
            f[k] = (float)k + 10;
        return cfx_autorelease(cfx_tensor_from_floats(f, five, 1));
    case 't':
        for (int k = 0; k < 4; k++)
            f[k] = -(float)(k + 1);
        return cfx_autorelease(cfx_tensor_from_floats(f, four, 1));
    case 's': f[0] = 7.0f; return cfx_autorelease(cfx_tensor_from_floats(f, NULL, 0));
    case 'i':
        l[0] = 3;
        l[1] = 0;
        return cfx_autorelease(cfx_tensor_from_int64s(l, two, 1));
    }
    return NULL;
}

static int make_inputs(const program *p, cfx_value *args)
{
    int n = (int)strlen(p->inputs);
    for (int k = 0; k < n; k++)
        args[k] = cfx_tensor_value(input(p->inputs[k]));
    return n;
}

static char *data(const char *name, const char *suffix)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/setitem_%s.%s.txt", name, suffix);
    char *s = read_golden(path);
    cr_assert(s, "missing %s (run tools/interop/gen_setitem.py)", path);
    return s;
}

static void check_values(const char *name, const cfx_tensor *t)
{
    char *want = data(name, "values");
    cr_assert(!strncmp(want, "out ", 4), "%s: bad values golden", name);
    char *p = want + 4;
    for (int64_t e = 0; e < cfx_tensor_numel(t); e++) {
        double w = strtod(p, &p), got = cfx_tensor_get_double(t, e);
        cr_expect(fabs(got - w) <= 1e-6 * (1 + fabs(w)), "%s[%lld]: got %.9g want %.9g", name, (long long)e, got, w);
    }
    free(want);
}

static void check_program(const program *pg)
{
    char *want_graph = data(pg->name, "graph"), *want_code = data(pg->name, "code");
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_scope s = cfx_scope_begin();
        cfx_value args[3];
        int n = make_inputs(pg, args);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(pg->fn, pg->signature, args, n, &o);
        cr_assert(gm, "%s: %s", pg->name, cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        char *graph = cfx_graph_to_string(g), *code = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(graph, want_graph, "%s graph (mode %d)", pg->name, mode);
        cr_expect_str_eq(code, want_code, "%s code (mode %d):\n%s", pg->name, mode, code);
        char *json = NULL;
        cr_assert_eq(cfx_graph_module_to_json(gm, 0, &json), CFX_OK, "%s", cfx_error_message());
        cfx_graph_module *back = cfx_graph_module_from_json(json, strlen(json));
        cr_assert(back, "%s: %s", pg->name, cfx_error_message());
        char *graph2 = cfx_graph_to_string(cfx_graph_module_graph(back));
        cr_expect_str_eq(graph2, want_graph, "%s graph after JSON", pg->name);
        cfx_value fresh[3], out;
        make_inputs(pg, fresh);
        cr_assert_eq(cfx_graph_module_run(back, fresh, n, &out), CFX_OK, "%s run: %s", pg->name, cfx_error_message());
        check_values(pg->name, out.u.t);
        free(graph);
        free(code);
        free(graph2);
        free(json);
        cfx_graph_module_free(back);
        cfx_graph_module_free(gm);
        cfx_scope_end(s);
    }
    cr_expect_eq(cfx_tensor_live_count(), live0, "%s: tensors leaked", pg->name);
    free(want_graph);
    free(want_code);
}

Test(setitem, slice_fill) { check_program(&programs[0]); }
Test(setitem, int_copy) { check_program(&programs[1]); }
Test(setitem, ellipsis_int) { check_program(&programs[2]); }
Test(setitem, none_int) { check_program(&programs[3]); }
Test(setitem, expand) { check_program(&programs[4]); }
Test(setitem, whole) { check_program(&programs[5]); }
Test(setitem, single_slice) { check_program(&programs[6]); }
Test(setitem, none_only) { check_program(&programs[7]); }
Test(setitem, int_dtype) { check_program(&programs[8]); }
Test(setitem, tensor_index) { check_program(&programs[9]); }

/* Eager: every program computes PyTorch's values without a tracer. */
Test(setitem, eager_values)
{
    for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
        const program *pg = &programs[k];
        cfx_scope s = cfx_scope_begin();
        cfx_value a[3] = {cfx_none(), cfx_none(), cfx_none()};
        make_inputs(pg, a);
        cfx_tensor *r = NULL;
        switch (strlen(pg->inputs)) {
        case 1: r = ((cfx_tensor * (*)(cfx_tensor *)) pg->fn)(a[0].u.t); break;
        case 2: r = ((cfx_tensor * (*)(cfx_tensor *, cfx_tensor *)) pg->fn)(a[0].u.t, a[1].u.t); break;
        default: r = ((cfx_tensor * (*)(cfx_tensor *, cfx_tensor *, cfx_tensor *)) pg->fn)(a[0].u.t, a[1].u.t, a[2].u.t);
        }
        cr_assert(r, "%s: %s", pg->name, cfx_error_message());
        check_values(pg->name, r);
        cfx_scope_end(s);
    }
}

/* Python's errors, an error status, nothing written. */
Test(setitem, errors)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = input('x'), *v = input('v'), *t = input('t');
    cr_expect_eq(cfx_setitem(x, v, CFX_I(4)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "index 4 is out of bounds for dimension 0 with size 4");
    cfx_error_clear();
    cr_expect_eq(cfx_setitem(x, v, CFX_I(0), CFX_I(0), CFX_I(0)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "too many indices for tensor of dimension 2");
    cfx_error_clear();
    cr_expect_eq(cfx_setitem(x, v, CFX_STEP(-1)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "step must be greater than zero");
    cfx_error_clear();
    cr_expect_neq(cfx_setitem(x, t, CFX_I(0)), CFX_OK); /* [4] into [5] */
    cr_expect(strstr(cfx_error_message(), "The expanded size of the tensor (5) must match the existing size (4)"), "%s",
              cfx_error_message());
    cfx_error_clear();
    cr_expect_neq(cfx_setitem(x, NULL, CFX_I(0)), CFX_OK);
    cr_expect_eq(cfx_tensor_get_double(x, 0), -3.0);
    cfx_scope_end(s);
}

/* fill / fill_ / copy directly: values, dtype casts, layouts as PyTorch's (copy keeps self's
 * strides and storage offset; fill's result is empty_like's) */
Test(setitem, fill_and_copy)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = input('x');
    cfx_tensor *sl = cfx_getitem(x, CFX_SLICE(1, 3), CFX_STEP(2)); /* [2, 3], strides (5, 2), offset 5 */
    cfx_tensor *c = cfx_copy(sl, cfx_num(1.5));
    cr_assert(c, "%s", cfx_error_message());
    cr_expect(c->strides[0] == 5 && c->strides[1] == 2 && c->storage_offset == 5);
    cr_expect_eq(cfx_tensor_get_double(c, 4), 1.5);
    cr_expect_eq(cfx_tensor_get_double(x, 5), -0.5); /* x untouched */
    cfx_tensor *f = cfx_fill_Scalar(cfx_transpose(x, 0, 1), cfx_int(2));
    cr_expect(f->strides[0] == 1 && f->strides[1] == 5);
    cr_expect_eq(cfx_tensor_get_double(f, 7), 2.0);
    cfx_tensor *xi = input('X');
    cr_assert(cfx_fill__Scalar(xi, cfx_double(2.7)));
    cr_expect_eq(cfx_tensor_get_double(xi, 19), 2.0);
    cr_assert(cfx_fill_Tensor(xi, input('s')));
    cr_expect(!cfx_fill__Tensor(x, input('v')));
    cr_expect_str_eq(cfx_error_message(), "fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.");
    cfx_error_clear();
    cr_expect(!cfx_copy(x, input('t')));
    cr_expect_str_eq(cfx_error_message(), "The size of tensor a (5) must match the size of tensor b (4) at non-singleton dimension 1");
    cfx_scope_end(s);
}
