/* test_trace_wrapped.c - trace_wrapped against PyTorch 2.13 (tools/interop/gen_hop.py): the
 * opaque node and its code, args[0] None, the _assert_meta check (which 2.13 does not insert:
 * cfx's graph minus its assertions equals 2.13's), the interpreter's mismatch errors, the rules
 * per mode, and the inline-trace-wrapped pass (compared with make_fx of fn inlined by hand). */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

static char *golden(const char *path)
{
    char *s = read_golden(path);
    cr_assert(s, "cannot open %s", path);
    return s;
}

static cfx_tensor *fn_cos(cfx_tensor *g) { return cfx_cos(g); }
static cfx_tensor *fn_bad_shape(cfx_tensor *g) { return cfx_sum(g, CFX_INTS(1)); }
static cfx_tensor *fn_bad_stride(cfx_tensor *g) { (void)g; return cfx_empty_strided(CFX_INTS(2, 3), CFX_INTS(1, 2)); }

static cfx_object *the_fn;

static cfx_tensor *model(cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(cfx_sin(x)), z;
    if (cfx_trace_wrapped(&a, 1, the_fn, &z) != CFX_OK)
        return NULL;
    return cfx_add(z.u.t, x);
}

static cfx_tensor *model_none_first(cfx_tensor *x)
{
    cfx_value a[2] = {cfx_none(), cfx_tensor_value(x)}, z;
    return cfx_trace_wrapped(a, 2, the_fn, &z) == CFX_OK ? z.u.t : NULL;
}

static cfx_tensor *ones23(void)
{
    int64_t shape[2] = {2, 3};
    cfx_tensor *t = cfx_autorelease(cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)));
    float *d = cfx_tensor_data(t);
    for (int i = 0; i < 6; i++)
        d[i] = 1.0f + (float)i;
    return t;
}

static cfx_graph_module *trace(cfx_fnptr f, cfx_object *fn, cfx_tracing_mode mode)
{
    the_fn = fn;
    cfx_value x = cfx_tensor_value(ones23());
    cfx_make_fx_options o = {mode, NULL, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(f, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert_not_null(gm, "%s", cfx_error_message());
    return gm;
}

static void expect_graph(cfx_graph_module *gm, const char *path)
{
    char *want = golden(path), *got = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect_str_eq(got, want, "%s", path);
    free(want);
    free(got);
}

Test(trace_wrapped, one_opaque_node_then_its_meta_check)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *fn = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_cos, "fn_cos(Tensor g) -> Tensor"));
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace((cfx_fnptr)model, fn, (cfx_tracing_mode)mode);
        char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
        cr_assert(strstr(text, "    %_assert_meta : [num_users=0] = call_function[target=torch._dynamo._trace_wrapped_"
                               "higher_order_op._assert_meta](args = (%trace_wrapped, (2, 3), (3, 1), torch.float32), "
                               "kwargs = {})\n"),
                  "%s", text);
        free(text);
        /* dce keeps the check (side-effectful); without it, the graph is 2.13's */
        bool changed;
        cr_assert_eq(cfx_pipeline_run_text("dce", gm, NULL, &changed), CFX_OK);
        cr_assert_not(changed);
        cr_assert_eq(cfx_pipeline_run_text("strip-asserts", gm, NULL, &changed), CFX_OK);
        cr_assert(changed);
        expect_graph(gm, "tests/data/hop_trace_wrapped.graph.txt");
        char *want = golden("tests/data/hop_trace_wrapped.code.txt");
        char *got = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
        cr_expect_str_eq(got, want);
        free(want);
        free(got);
        cfx_graph_module_free(gm);
    }
    cfx_object_release(fn);
    cfx_scope_end(s);
}

Test(trace_wrapped, grad_is_args1_when_args0_is_none)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *fn = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_cos, "fn_cos(Tensor g) -> Tensor"));
    cfx_graph_module *gm = trace((cfx_fnptr)model_none_first, fn, CFX_TRACE_FAKE);
    bool changed;
    cr_assert_eq(cfx_pipeline_run_text("strip-asserts", gm, NULL, &changed), CFX_OK);
    expect_graph(gm, "tests/data/hop_trace_wrapped_none_first.graph.txt");
    cfx_graph_module_free(gm);
    cfx_object_release(fn);
    cfx_scope_end(s);
}

Test(trace_wrapped, the_interpreter_checks_fns_contract)
{
    cfx_object *good = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_cos, "fn_cos(Tensor g) -> Tensor"));
    cfx_object *shape = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_bad_shape, "fn_bad_shape(Tensor g) -> Tensor"));
    cfx_object *stride = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_bad_stride, "fn_bad_stride(Tensor g) -> Tensor"));
    cfx_scope s = cfx_scope_begin();
    cfx_value x = cfx_tensor_value(ones23()), out;
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false};
    the_fn = good;
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)model, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert_not_null(gm);
    cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
    cfx_tensor_release(out.u.t);
    cfx_graph_module_free(gm);
    /* functions that break the contract: the trace never runs fn (it records empty_like), so
     * the check is what notices when the graph runs */
    the_fn = shape;
    gm = cfx_make_fx((cfx_fnptr)model, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert_not_null(gm);
    cr_assert_neq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK);
    cr_assert(strncmp(cfx_error_message(), "size mismatch", 13) == 0, "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);
    the_fn = stride;
    gm = cfx_make_fx((cfx_fnptr)model, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert_not_null(gm);
    cr_assert_neq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK);
    cr_assert(strncmp(cfx_error_message(), "stride mismatch", 15) == 0, "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    cfx_object_release(good);
    cfx_object_release(shape);
    cfx_object_release(stride);
}

Test(trace_wrapped, dtype_mismatch_from_assert_meta)
{
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value sz[2] = {cfx_int(2), cfx_int(3)}, st[2] = {cfx_int(3), cfx_int(1)};
    cfx_value a[4] = {cfx_node_value(x), cfx_tuple(sz, 2), cfx_tuple(st, 2), cfx_dtype_value(CFX_INT64)};
    cfx_trace_wrapped_hop(); /* registers _assert_meta with the interpreter */
    cfx_graph_call_fn(g, &cfx_fn_assert_meta, a, 4, NULL, 0);
    cfx_graph_output(g, cfx_node_value(x));
    cfx_value in = cfx_tensor_value(ones23()), out;
    cr_assert_neq(cfx_interpret(g, &in, 1, NULL, &out), CFX_OK);
    cr_assert(strncmp(cfx_error_message(), "dtype mismatch", 14) == 0, "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_free(g);
    cfx_scope_end(s);
}

Test(trace_wrapped, rules_per_mode)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *fn = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_cos, "fn_cos(Tensor g) -> Tensor"));
    cfx_value x = cfx_tensor_value(ones23()), out;
    /* no mode: fn(*args) */
    cr_assert_eq(cfx_trace_wrapped(&x, 1, fn, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_float_eq(((float *)cfx_tensor_data(out.u.t))[0], 0.5403023f, 1e-6);
    /* fake mode: PyTorch's refusal */
    cfx_fake_mode *fm = cfx_fake_mode_new(NULL);
    cfx_fake_mode_enter(fm);
    cr_assert_neq(cfx_trace_wrapped(&x, 1, fn, &out), CFX_OK);
    cr_assert_str_eq(cfx_error_message(), "This op should never be invoked here");
    cfx_error_clear();
    cfx_fake_mode_exit(fm);
    cfx_fake_mode_free(fm);
    /* requires_grad input: the forward works, the output fails on backward */
    cfx_tensor *g = ones23();
    cfx_tensor_set_requires_grad(g, true);
    cfx_value gv = cfx_tensor_value(g);
    cr_assert_eq(cfx_hop_call(cfx_trace_wrapped_hop(), (cfx_value[]){gv, cfx_object_value(fn)}, 2, &out), CFX_OK);
    cr_assert_str_eq(cfx_tensor_delayed_error(out.u.t), "Autograd not implemented for trace_wrapped");
    /* a missing fn is a clear error */
    cr_assert_neq(cfx_trace_wrapped(&x, 1, NULL, &out), CFX_OK);
    cr_assert_str_eq(cfx_error_message(), "trace_wrapped: the last argument must be fn, a callable");
    cfx_error_clear();
    cfx_object_release(fn);
    cfx_scope_end(s);
}

Test(trace_wrapped, inline_pass_keeps_or_drops_the_checks)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *fn = cfx_callable_object(cfx_callable_new((cfx_fnptr)fn_cos, "fn_cos(Tensor g) -> Tensor"));
    cfx_graph_module *gm = trace((cfx_fnptr)model, fn, CFX_TRACE_FAKE);
    bool changed;
    cr_assert_eq(cfx_pipeline_run_text("inline-trace-wrapped", gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_assert(changed);
    char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_assert(strstr(text, "_assert_meta](args = (%cos, (2, 3), (3, 1), torch.float32)"), "%s", text);
    free(text);
    /* the kept check passes when the graph runs */
    cfx_value x = cfx_tensor_value(ones23()), out;
    cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
    cfx_tensor_release(out.u.t);
    cr_assert_eq(cfx_pipeline_run_text("strip-asserts", gm, NULL, &changed), CFX_OK);
    expect_graph(gm, "tests/data/hop_trace_wrapped_inlined.graph.txt");
    cfx_graph_module_free(gm);

    gm = trace((cfx_fnptr)model, fn, CFX_TRACE_FAKE);
    cr_assert_eq(cfx_pipeline_run_text("inline-trace-wrapped-drop-asserts", gm, NULL, &changed), CFX_OK);
    expect_graph(gm, "tests/data/hop_trace_wrapped_inlined.graph.txt");
    cfx_graph_module_free(gm);

    /* a closure cannot be traced */
    double k = 1;
    cfx_object *c = cfx_callable_object(cfx_callable_closure_new((cfx_fnptr)fn_cos, "clo(Tensor g) -> Tensor", &k, NULL));
    gm = trace((cfx_fnptr)model, c, CFX_TRACE_FAKE);
    cr_assert_neq(cfx_pipeline_run_text("inline-trace-wrapped", gm, NULL, &changed), CFX_OK);
    cr_assert(strstr(cfx_error_message(), "is a closure"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);
    cfx_object_release(c);
    cfx_object_release(fn);
    cfx_scope_end(s);
}
