/* test_tracer_custom.c - tracing operators of our own: the args/kwargs rule in general.
 *
 * The built-in ops exercise few schema shapes, so this file defines three operators in a
 * namespace of its own, exactly as tools/interop/make_fx_goldens.py defines them with
 * torch.library in 2.13: `scale` with positional defaults of several kinds and a kwarg-only
 * tail (str, int[], ScalarType?), `count` returning an int and `split2` returning a Tensor[].
 * The model calls them boxed, with the values the Python twin passes, and the graph must be
 * 2.13's: trailing positional defaults cut, kwarg-only defaults dropped, float 3.0 kept, a
 * getitem per list element (the list result's val a list), the int result burnt into the
 * output and given no val. */
#include <criterion/criterion.h>

#include "dispatch/library.h"
#include "ir/json.h"
#include "tests/tracer/tracer_programs.h"
#include "tests/json_round_trip.h"
#include "tests/test_util.h"

static cfx_library *lib;

static int scale_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    cfx_tensor *r = cfx_op_clone(NULL, stack[0].u.t, cfx_none());
    if (!r)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(r);
    return CFX_OK;
}

static int count_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    stack[0] = cfx_int(cfx_tensor_numel(stack[0].u.t));
    return CFX_OK;
}

/* a boxed list result must outlive the call: the kernel owns its items */
static _Thread_local cfx_value split_items[2];

static int split2_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    for (int i = 0; i < 2; i++) {
        cfx_tensor *r = cfx_op_clone(NULL, stack[0].u.t, cfx_none());
        if (!r)
            return CFX_ERR;
        split_items[i] = cfx_tensor_value(r);
    }
    stack[0] = cfx_list(split_items, 2);
    return CFX_OK;
}

/* twice(x) = add(x, x), a CompositeImplicitAutograd kernel: a decomposition */
static int twice_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    cfx_tensor *r = cfx_add(stack[0].u.t, stack[0].u.t);
    if (!r)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(r);
    return CFX_OK;
}

static void setup(void)
{
    cfx_error_clear();
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxtest");
    cr_assert(lib, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_def(lib, "scale(Tensor x, int a=1, float b=2., *, str mode=\"sum\", int[] dims=[], "
                                      "ScalarType? dtype=None) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_def(lib, "count(Tensor x) -> int"), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "split2(Tensor x) -> Tensor[]"), CFX_OK);
    cfx_dispatch_key cea = CFX_KEY_CompositeExplicitAutograd;
    cr_assert_eq(CFX_IMPL_BOXED(lib, "scale", cea, scale_kernel, NULL), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "count", cea, count_kernel, NULL), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "split2", cea, split2_kernel, NULL), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "twice(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "twice", CFX_KEY_CompositeImplicitAutograd, twice_kernel, NULL), CFX_OK);
}

static void teardown(void) { cfx_library_free(lib); }

TestSuite(tracer_custom, .init = setup, .fini = teardown);

/* Calls op with the first n arguments given (the rest default), as torch.ops does. */
static cfx_value call(const char *name, const cfx_value *args, int n)
{
    cfx_op *op = cfx_op_find(name);
    cfx_value stack[8];
    memcpy(stack, args, (size_t)n * sizeof *stack);
    if (!op || cfx_op_call(op, stack, n, COUNT_OF(stack)) != CFX_OK)
        return cfx_none();
    return stack[0];
}

#define CALL(name, ...) \
    call(name, (const cfx_value[]){__VA_ARGS__}, (int)(sizeof((cfx_value[]){__VA_ARGS__}) / sizeof(cfx_value)))
#define T(v) cfx_tensor_value((v).u.t)

typedef struct custom_ret {
    cfx_tensor *t;
    int64_t n;
} custom_ret;

static custom_ret prog_custom(cfx_tensor *x)
{
    cfx_value dims0[1] = {cfx_int(0)};
    cfx_value a = CALL("cfxtest::scale", cfx_tensor_value(x));
    cfx_value b = CALL("cfxtest::scale", T(a), cfx_int(1), cfx_double(3.0));
    cfx_value c = CALL("cfxtest::scale", T(b), cfx_int(2));
    cfx_value d = CALL("cfxtest::scale", T(c), cfx_int(1), cfx_double(2.0), cfx_string("mean"));
    cfx_value e = CALL("cfxtest::scale", T(d), cfx_int(1), cfx_double(2.0), cfx_string("sum"), cfx_list(dims0, 1));
    cfx_value f = CALL("cfxtest::scale", T(e), cfx_int(1), cfx_double(2.0), cfx_string("sum"), cfx_list(NULL, 0),
                       cfx_dtype_value(CFX_FLOAT64));
    cfx_value g = CALL("cfxtest::scale", T(f), cfx_int(5), cfx_double(2.0), cfx_string("sum"), cfx_list(NULL, 0),
                       cfx_none());
    cfx_value n = CALL("cfxtest::count", T(g));
    cfx_value s = CALL("cfxtest::split2", T(g));
    if (s.kind != CFX_V_LIST || n.kind != CFX_V_INT)
        return (custom_ret){NULL, 0};
    return (custom_ret){s.u.items[1].u.t, n.u.i};
}

/* The golden meta without the key cfx does not record: make_fx puts "eager_input_vals" (an
 * Inductor layout hint, the argument nodes' own vals) on every call of an operator outside
 * aten / prims; see tracer/make_fx.c. */
static char *without_eager_input_vals(const char *golden_text)
{
    cfx_buf b;
    cfx_buf_init(&b);
    static const char key[] = "eager_input_vals";
    for (const char *p = golden_text; *p;) {
        const char *at = strstr(p, key);
        if (!at) {
            cfx_buf_puts(&b, p);
            break;
        }
        cfx_buf_putn(&b, p, (size_t)(at - p));
        p = at + sizeof key - 1;
        if (*p == ',') /* "eager_input_vals,tensor_meta,val" */
            p++;
        else if (*p == '|' && at[-1] == '|') /* "|eager_input_vals|": no other key */
            cfx_buf_putc(&b, '-');
    }
    return cfx_buf_take(&b);
}

Test(tracer_custom, args_kwargs_rule_and_result_kinds)
{
    char *want_graph = golden("custom", "graph"), *want_code = golden("custom", "code");
    cr_assert(want_graph && want_code);
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_tensor *x = test_tensor(2, 3, 0);
        cfx_value a = cfx_tensor_value(x);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog_custom, "(Tensor x) -> (Tensor, int)", &a, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        char *graph = cfx_graph_to_string(g), *code = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(graph, want_graph, "mode %d", mode);
        cr_expect_str_eq(code, want_code, "mode %d", mode);
        expect_module_json_round_trip(gm, "custom");
        char *want = golden("custom", mode == CFX_TRACE_FAKE ? "meta_fake" : "meta_real");
        cr_assert(want);
        char *want2 = without_eager_input_vals(want);
        char *got = meta_text(g);
        cr_expect_str_eq(got, want2, "mode %d meta", mode);
        free(got);
        free(want2);
        free(want);
        free(graph);
        free(code);
        cfx_graph_module_free(gm);
        cfx_tensor_release(x);
    }
    cr_expect_eq(cfx_tensor_live_count(), live0);
    free(want_graph);
    free(want_code);
}

Test(tracer_custom, list_and_tuple_vals_survive_json)
{
    /* split2's val is a list (Tensor[]), a multi-return op's a tuple: JSON keeps them apart */
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog_custom, "(Tensor x) -> (Tensor, int)", &a, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    char *json = NULL;
    cr_assert_eq(cfx_graph_to_json(cfx_graph_module_graph(gm), 0, &json), CFX_OK, "%s", cfx_error_message());
    cfx_graph *back = cfx_graph_from_json(json, strlen(json));
    cr_assert(back, "%s", cfx_error_message());
    char *before = meta_text(cfx_graph_module_graph(gm)), *after = meta_text(back);
    cr_expect_str_eq(after, before);
    cr_expect(strstr(before, "split2|val|[Tensor("), "%s", before);
    free(before);
    free(after);
    free(json);
    cfx_graph_free(back);
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
}

static cfx_tensor *prog_composite(cfx_tensor *x)
{
    return cfx_relu(call("cfxtest::twice", (cfx_value[]){cfx_tensor_value(x)}, 1).u.t);
}

Test(tracer_custom, composite_implicit_kernels_decompose)
{
    /* what a CompositeImplicitAutograd kernel calls is recorded, not the op itself */
    char *want = golden("composite", "graph"), *want_code = golden("composite", "code");
    cr_assert(want && want_code);
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_tensor *x = test_tensor(2, 3, 0);
        cfx_value a = cfx_tensor_value(x);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog_composite, "(Tensor x) -> Tensor", &a, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        char *graph = cfx_graph_to_string(cfx_graph_module_graph(gm));
        char *code = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
        cr_expect_str_eq(graph, want, "mode %d", mode);
        cr_expect_str_eq(code, want_code, "mode %d", mode);
        free(graph);
        free(code);
        cfx_graph_module_free(gm);
        cfx_tensor_release(x);
    }
    free(want);
    free(want_code);
}

static cfx_tensor *enum_as_int(cfx_tensor *x)
{
    /* a ScalarType passed as its integer code shows as the dtype, as in PyTorch */
    return cfx_op_sum_dim_IntList(CFX_HERE, x, CFX_INTS(1), true, cfx_int(CFX_FLOAT64));
}

Test(tracer_custom, enum_given_as_int)
{
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)enum_as_int, "(Tensor x) -> Tensor", &a, 1, NULL);
    cr_assert(gm, "%s", cfx_error_message());
    char *graph = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect(strstr(graph, "(args = (%x_1, [1], True), kwargs = {dtype: torch.float64})"), "%s", graph);
    free(graph);
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
}

static cfx_tensor2 clash_model(cfx_module *m, cfx_tensor *x)
{
    static const double one[1] = {1};
    cfx_tensor *c = cfx_tensor_literal(one, (const int64_t[]){1}, 1, CFX_FLOAT32);
    return (cfx_tensor2){cfx_add(x, c), cfx_mul(x, cfx_module_get(m, "_tensor_constant0"))};
}

Test(tracer_custom, parameters_and_constants_are_numbered_apart)
{
    /* get_fresh_qualname keeps one counter per prefix: a parameter (whatever its name in the
     * module) is `_param_constant0`, the literal next to it `_tensor_constant0` */
    cfx_module *m = cfx_module_new("M");
    cfx_tensor *p = test_tensor(2, 3, 1);
    cfx_module_add(m, "_tensor_constant0", p);
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_make_fx_options o = {CFX_TRACE_FAKE, m, NULL, false};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)clash_model, "(Tensor x) -> (Tensor, Tensor)", &a, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    cr_expect_str_eq(cfx_graph_module_attr_name(gm, 0), "_tensor_constant0");
    cr_expect_str_eq(cfx_graph_module_attr_name(gm, 1), "_param_constant0");
    cr_expect_eq(cfx_graph_module_attr(gm, 1), p);
    cfx_graph_module_free(gm);
    cfx_module_free(m);
    cfx_tensor_release(p);
    cfx_tensor_release(x);
}
