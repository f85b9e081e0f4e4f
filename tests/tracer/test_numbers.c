/* test_numbers.c - numbers as operands (cfx_num), traced, dumped and run, against PyTorch.
 *
 * Each model is the C twin of a program of tools/interop/gen_numbers.py: where Python writes
 * `x * 2`, C writes cfx_mul(x, cfx_num(2)). make_fx must record the literal as PyTorch does
 * (`mul.Tensor(relu, 2)`), with the same printed graph and code in real and fake mode and the
 * same output dtypes and layouts (wrapped numbers promote by category only); the graph must
 * survive a JSON round trip and the interpreter must compute PyTorch's values from it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/json_round_trip.h"
#include "tests/test_util.h"

typedef struct out8 {
    cfx_tensor *t[8];
} out8;

static cfx_tensor *relu_mul(cfx_tensor *x) { return cfx_mul(cfx_relu(x), cfx_num(2)); }

static out8 arith(cfx_tensor *x, cfx_tensor *i)
{
    return (out8){{cfx_sub(x, cfx_num(1.5)), cfx_div(x, cfx_num(8.0)), cfx_mul(i, cfx_num(2.0)),
                   cfx_add(i, cfx_num(1)), cfx_add(x, cfx_num(3), cfx_int(2)), cfx_rsub_Scalar(x, cfx_int(1)),
                   cfx_pow_Tensor_Scalar(x, cfx_int(2)), cfx_div(i, cfx_num(2))}};
}

static out8 compare(cfx_tensor *x, cfx_tensor *y)
{
    return (out8){{cfx_gt_Scalar(x, cfx_int(0)), cfx_le_Tensor(x, y), cfx_where(cfx_gt_Tensor(x, y), x, y),
                   cfx_eq_Scalar(x, cfx_double(0.5)), cfx_ne_Tensor(x, y), cfx_ge_Scalar(x, cfx_int(2)),
                   cfx_lt_Tensor(x, y), NULL}};
}

static out8 activations(cfx_tensor *x)
{
    return (out8){{cfx_gelu(x), cfx_gelu(x, "tanh"), cfx_tanh(x), cfx_sigmoid(x), cfx_silu(x),
                   cfx_sqrt(cfx_relu(x)), cfx_rsqrt(cfx_add(cfx_relu(x), cfx_num(1))),
                   cfx_pow(x, cfx_relu(x))}};
}

static out8 where_scalar(cfx_tensor *x, cfx_tensor *i)
{
    return (out8){{cfx_where_ScalarOther(cfx_gt_Scalar(x, cfx_int(0)), i, cfx_double(0.5)),
                   cfx_where_Scalar(cfx_gt_Scalar(x, cfx_int(0)), cfx_double(1.0), cfx_int(0)),
                   cfx_where_ScalarSelf(cfx_gt_Scalar(x, cfx_int(0)), cfx_int(2), i),
                   cfx_masked_fill_Scalar(x, cfx_gt_Scalar(x, cfx_int(0)), cfx_int(2)), cfx_to(x, CFX_INT32),
                   cfx_to(i, CFX_INT64), NULL, NULL}};
}

/* In-place ops taking numbers inside nested scopes: each number and each in-place result
 * (a new reference to y) dies with its scope while the tracer still maps y to its last node. */
static cfx_tensor *inplace_scope(cfx_tensor *x)
{
    cfx_tensor *y = cfx_clone(x);
    cfx_scope s = cfx_scope_begin();
    cfx_mul_(y, cfx_num(2));
    cfx_add_(y, cfx_num(1.5));
    cfx_scope s2 = cfx_scope_begin();
    cfx_div_(y, cfx_num(4));
    cfx_scope_end(s2);
    cfx_scope_end(s);
    return cfx_sub(y, cfx_num(1));
}

typedef struct model {
    const char *name;
    cfx_fnptr fn;
    const char *signature;
    int n_in, n_out;
} model;

static const model models[] = {
    {"relu_mul", (cfx_fnptr)relu_mul, "(Tensor x) -> Tensor", 1, 1},
    {"arith", (cfx_fnptr)arith,
     "(Tensor x, Tensor i) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", 2, 8},
    {"compare", (cfx_fnptr)compare,
     "(Tensor x, Tensor y) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", 2, 7},
    {"activations", (cfx_fnptr)activations,
     "(Tensor x) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", 1, 8},
    {"where_scalar", (cfx_fnptr)where_scalar, "(Tensor x, Tensor i) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
     2, 6},
    {"inplace_scope", (cfx_fnptr)inplace_scope, "(Tensor x) -> Tensor", 1, 1},
};

/* gen_numbers.py's inputs: x, then y (float) or i (int64) */
static int make_inputs(const model *m, cfx_value *args)
{
    static const float xs[6] = {-1.5f, -0.25f, 0.0f, 0.5f, 1.25f, 2.0f};
    static const float ys[6] = {0.5f, -1.0f, 0.0f, 2.0f, 1.25f, -3.0f};
    static const int64_t is[6] = {-3, 0, 1, 2, 5, 7};
    static const int64_t sz[2] = {2, 3};
    args[0] = cfx_tensor_value(cfx_autorelease(cfx_tensor_from_floats(xs, sz, 2)));
    if (m->n_in > 1)
        args[1] = cfx_tensor_value(cfx_autorelease((!strcmp(m->name, "arith") || !strcmp(m->name, "where_scalar")) ? cfx_tensor_from_int64s(is, sz, 2)
                                                                              : cfx_tensor_from_floats(ys, sz, 2)));
    return m->n_in;
}

static char *data(const char *name, const char *suffix)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/numbers_%s.%s.txt", name, suffix);
    char *s = read_golden(path);
    cr_assert(s, "missing %s (run tools/interop/gen_numbers.py)", path);
    return s;
}

/* gen_numbers.py's meta_text: name dtype sizes strides of every tensor-valued node */
static char *meta_text(cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        const cfx_meta_val *v = cfx_node_val(n);
        if (!v || v->kind != CFX_MVAL_TENSOR)
            continue;
        cfx_node_print_name(n, &b);
        cfx_buf_printf(&b, " %s [", cfx_dtype_name((cfx_dtype)v->dtype));
        for (int d = 0; d < v->n; d++)
            cfx_buf_printf(&b, d ? ", %lld" : "%lld", (long long)v->sizes[d]);
        cfx_buf_puts(&b, "] [");
        for (int d = 0; d < v->n; d++)
            cfx_buf_printf(&b, d ? ", %lld" : "%lld", (long long)v->strides[d]);
        cfx_buf_puts(&b, "]\n");
    }
    return cfx_buf_take(&b);
}

/* The outputs against the values golden (dtype, then values), float32 within 1e-6 relative. */
static void check_values(const model *m, cfx_value out)
{
    char *want = data(m->name, "values");
    char *save = NULL, *line = strtok_r(want, "\n", &save);
    for (int k = 0; k < m->n_out; k++, line = strtok_r(NULL, "\n", &save)) {
        cr_assert(line, "%s: fewer golden lines than outputs", m->name);
        cfx_value v = m->n_out == 1 ? out : out.u.items[k];
        cr_assert_eq(v.kind, CFX_V_TENSOR, "%s output %d", m->name, k);
        const cfx_tensor *t = v.u.t;
        char *p = strchr(line, ' ');
        cr_assert(p);
        *p++ = '\0';
        cr_expect_str_eq(cfx_dtype_name((cfx_dtype)t->dtype), line, "%s output %d dtype", m->name, k);
        for (int64_t e = 0; e < cfx_tensor_numel(t); e++) {
            double want_v = strtod(p, &p), got = cfx_tensor_get_double(t, e);
            cr_expect(fabs(got - want_v) <= 1e-6 + 1e-6 * fabs(want_v) || (isnan(got) && isnan(want_v)),
                      "%s output %d element %lld: got %.9g want %.9g", m->name, k, (long long)e, got, want_v);
        }
    }
    free(want);
}

static void check_model(const model *m)
{
    char *want_graph = data(m->name, "graph"), *want_code = data(m->name, "code"), *want_meta = data(m->name, "meta");
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_scope s = cfx_scope_begin();
        cfx_value args[2];
        int n = make_inputs(m, args);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(m->fn, m->signature, args, n, &o);
        cr_assert(gm, "%s: %s", m->name, cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        char *graph = cfx_graph_to_string(g), *code = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(graph, want_graph, "%s graph (mode %d)", m->name, mode);
        cr_expect_str_eq(code, want_code, "%s code (mode %d)", m->name, mode);
        expect_module_json_round_trip(gm, m->name);
        if (mode == CFX_TRACE_FAKE) {
            char *meta = meta_text(g);
            cr_expect_str_eq(meta, want_meta, "%s meta", m->name);
            free(meta);
        }
        /* the literal survives JSON, and the interpreter wraps it again */
        char *json = NULL;
        cr_assert_eq(cfx_graph_module_to_json(gm, 0, &json), CFX_OK, "%s", cfx_error_message());
        cfx_graph_module *back = cfx_graph_module_from_json(json, strlen(json));
        cr_assert(back, "%s: %s", m->name, cfx_error_message());
        char *graph2 = cfx_graph_to_string(cfx_graph_module_graph(back));
        cr_expect_str_eq(graph2, want_graph, "%s graph after JSON", m->name);
        cfx_value out;
        cr_assert_eq(cfx_graph_module_run(back, args, n, &out), CFX_OK, "%s run: %s", m->name, cfx_error_message());
        check_values(m, out);
        free(graph);
        free(code);
        free(graph2);
        free(json);
        cfx_graph_module_free(back);
        cfx_graph_module_free(gm);
        cfx_scope_end(s);
    }
    cr_expect_eq(cfx_tensor_live_count(), live0, "%s: tensors leaked", m->name);
    free(want_graph);
    free(want_code);
    free(want_meta);
}

Test(numbers, relu_mul) { check_model(&models[0]); }
Test(numbers, arith) { check_model(&models[1]); }
Test(numbers, compare) { check_model(&models[2]); }
Test(numbers, activations) { check_model(&models[3]); }
Test(numbers, where_scalar) { check_model(&models[4]); }
Test(numbers, inplace_scope) { check_model(&models[5]); }

/* Direct calls: the wrapped number's dtype, and promotion by category only. */
Test(numbers, promotion)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *n = cfx_num(2), *d = cfx_num(2.5), *b = cfx_num((bool)true); /* C's true is an int */
    cr_expect(cfx_tensor_is_wrapped_number(n));
    cr_expect_eq(cfx_tensor_dtype(n), CFX_INT64);
    cr_expect_eq(cfx_tensor_dtype(d), CFX_FLOAT64);
    cr_expect_eq(cfx_tensor_dtype(b), CFX_BOOL);
    cr_expect_eq(n->ndim, 0);
    const int64_t sz[1] = {3};
    cfx_tensor *f = cfx_tensor_from_floats((const float[]){1, 2, 3}, sz, 1);
    cfx_tensor *i = cfx_tensor_from_int64s((const int64_t[]){1, 2, 3}, sz, 1);
    cfx_autorelease(f);
    cfx_autorelease(i);
    cr_expect_eq(cfx_tensor_dtype(cfx_mul(f, n)), CFX_FLOAT32);     /* an int does not promote a float */
    cr_expect_eq(cfx_tensor_dtype(cfx_mul(i, d)), CFX_FLOAT32);     /* a float makes an int tensor float32 */
    cr_expect_eq(cfx_tensor_dtype(cfx_mul(i, n)), CFX_INT64);
    cr_expect_eq(cfx_tensor_dtype(cfx_add(i, b)), CFX_INT64);
    cr_expect_float_eq(cfx_tensor_get_double(cfx_mul(i, d), 2), 7.5, 1e-6);
    /* a 0-dim float64 tensor that is not a wrapped number does not promote either, but a
     * dimensioned one does */
    cr_expect_eq(cfx_tensor_dtype(cfx_mul(f, cfx_autorelease(cfx_tensor_scalar_double(2, CFX_FLOAT64)))), CFX_FLOAT32);
    /* ops that do not take numbers for tensors refuse them, boxed, with torch.ops' text */
    cfx_value st[2] = {cfx_tensor_value(f), cfx_int(2)};
    cr_expect_neq(cfx_op_call(cfx_op_lookup("aten::eq.Tensor"), st, 2, 2), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "Expected a value of type 'Tensor' for argument 'other' but instead found "
                                          "type 'int'"),
              "%s", cfx_error_message());
    cfx_error_clear();
    /* ... and the ones that do take them */
    cfx_value st2[3] = {cfx_tensor_value(i), cfx_double(0.5)};
    cr_expect_eq(cfx_op_call(cfx_op_lookup("aten::mul.Tensor"), st2, 2, 3), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(cfx_tensor_dtype(st2[0].u.t), CFX_FLOAT32);
    cfx_scope_end(s);
}

Test(numbers, no_scope_no_leak)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *n = cfx_num(3); /* no scope: the caller's */
    cfx_tensor *x = cfx_tensor_from_floats((const float[]){1, 2}, (const int64_t[]){2}, 1);
    cfx_tensor *y = cfx_mul(x, n);
    cr_expect_float_eq(cfx_tensor_get_double(y, 1), 6.0, 1e-6);
    cfx_value st[3] = {cfx_tensor_value(x), cfx_int(4)}; /* boxed: the wrapped number is made and dropped */
    cr_expect_eq(cfx_op_call(cfx_op_lookup("aten::add.Tensor"), st, 2, 3), CFX_OK, "%s", cfx_error_message());
    cfx_tensor_release(st[0].u.t);
    cfx_tensor_release(y);
    cfx_tensor_release(x);
    cfx_tensor_release(n);
    cr_expect_eq(cfx_tensor_live_count(), live0);
    cr_expect_null(cfx_num_value(cfx_string("x")));
    cr_expect(strstr(cfx_error_message(), "expected a number"), "%s", cfx_error_message());
    cfx_error_clear();
}
