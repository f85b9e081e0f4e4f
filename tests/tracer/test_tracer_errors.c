/* test_tracer_errors.c - make_fx failures: messages, call sites, and a clean state after.
 *
 * Whatever fails (the model, an operator inside it, the arguments, the signature), make_fx
 * must return NULL with the first error, leave no mode on the thread's stack and leak no
 * tensor; the next trace on the thread must work. Texts PyTorch has are checked against
 * tests/data/tracer_errors.tsv (2.13's make_fx, tools/interop/gen_make_fx.py); the others are
 * cfx's own. */
#include <criterion/criterion.h>

#include "dispatch/tensor_ext.h"
#include "tests/tracer/tracer_programs.h"

static void setup(void) { cfx_error_clear(); }

TestSuite(tracer_errors, .init = setup);

/* The PyTorch text for key in tracer_errors.tsv. */
static char *oracle(const char *key)
{
    char *text = read_golden("tests/data/tracer_errors.tsv");
    cr_assert(text, "missing tests/data/tracer_errors.tsv (or its golden header)");
    size_t k = strlen(key);
    char *out = NULL;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, key, k) == 0 && line[k] == '\t') {
            out = strdup(line + k + 1);
            break;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    cr_assert(out, "no %s in tracer_errors.tsv", key);
    return out;
}

/* After a failed trace: no modes, no leaked tensors, and tracing works again. */
static void expect_clean(int64_t live0)
{
    cr_expect_eq(cfx_mode_stack_len(), 0, "modes left on the stack");
    cr_expect_eq(cfx_tensor_live_count(), live0, "tensors leaked: %lld live, %lld before",
                 (long long)cfx_tensor_live_count(), (long long)live0);
    cfx_error_clear();
    cfx_graph_module *gm = trace_program(find_program("basic"), CFX_TRACE_FAKE, NULL);
    cr_expect(gm, "tracing after the failure: %s", cfx_error_message());
    cfx_graph_module_free(gm);
    cr_expect_eq(cfx_tensor_live_count(), live0);
}

static cfx_tensor *bad_model(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *a = cfx_relu(x);
    cfx_tensor *b = cfx_add(a, y); /* @bad_add */
    return cfx_mul(b, b);
}

static int line_of(const char *file, const char *marker)
{
    char *text = read_text(file);
    cr_assert(text);
    char *at = strstr(text, marker);
    cr_assert(at);
    int line = 1;
    for (char *p = text; p < at; p++)
        line += *p == '\n';
    free(text);
    return line;
}

Test(tracer_errors, model_fails_mid_trace)
{
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        int64_t live0 = cfx_tensor_live_count();
        cfx_tensor *x = test_tensor(2, 3, 0);
        int64_t s25[2] = {2, 5};
        cfx_tensor *y = cfx_tensor_new(s25, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
        cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)bad_model, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
        cr_expect_null(gm);
        /* PyTorch 2.13: the CPU kernel's TensorIterator text for real tensors; fake tensors run
         * the Meta kernel, the Python reference, with _broadcast_shapes' text */
        cr_expect_str_eq(cfx_error_message(),
                         mode == CFX_TRACE_REAL
                             ? "The size of tensor a (3) must match the size of tensor b (5) at non-singleton "
                               "dimension 1"
                             : "Attempting to broadcast a dimension of length 5 at -1! Mismatching argument at "
                               "index 1 had torch.Size([2, 5]); but expected shape should be broadcastable to [2, 3]");
        cfx_site site = cfx_error_site();
        cr_assert(site.file);
        cr_expect(strstr(site.file, "tests/tracer/test_tracer_errors.c"), "site %s", site.file);
        cr_expect_eq(site.line, line_of("tests/tracer/test_tracer_errors.c", "/* @bad_add */"));
        cr_expect_str_eq(site.func, "bad_model");
        cfx_tensor_release(x);
        cfx_tensor_release(y);
        expect_clean(live0);
    }
}

Test(tracer_errors, argument_count)
{
    const program *p = find_program("basic");
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value args[3] = {cfx_tensor_value(x), cfx_tensor_value(x), cfx_tensor_value(x)};
    char *few = oracle("too_few"), *many = oracle("too_many");
    cr_expect_null(cfx_make_fx(p->fn, p->signature, args, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), few);
    cfx_error_clear();
    cr_expect_null(cfx_make_fx(p->fn, p->signature, args, 3, NULL));
    cr_expect_str_eq(cfx_error_message(), many);
    free(few);
    free(many);
    cfx_tensor_release(x);
    expect_clean(live0);
}

Test(tracer_errors, tracing_mode)
{
    /* the golden asks make_fx for tracing_mode="7"; cfx's mode is an enum, 7 no value of it */
    char *want = oracle("bad_mode");
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(x)};
    cfx_make_fx_options o = {(cfx_tracing_mode)7, NULL, NULL, false};
    cr_expect_null(cfx_make_fx(find_program("basic")->fn, find_program("basic")->signature, args, 2, &o));
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cfx_tensor_release(x);
}

Test(tracer_errors, argument_kind)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    const program *p = find_program("basic");
    cfx_value args[2] = {cfx_tensor_value(x), cfx_int(3)};
    cr_expect_null(cfx_make_fx(p->fn, p->signature, args, 2, NULL));
    /* torch.ops' binding text, for the function as an operator named `f` */
    cr_expect_str_eq(cfx_error_message(),
                     "f() Expected a value of type 'Tensor' for argument 'y' but instead found type 'int'.\n"
                     "Position: 1\nValue: 3\nDeclaration: f(Tensor x, Tensor y) -> (Tensor, Tensor)\n"
                     "Cast error details: Unable to cast 3 to Tensor");
    cfx_error_clear();
    /* a non-tensor argument of the wrong kind is caught by the adapter, before the call */
    const program *q = find_program("outputs");
    cfx_value bad[4] = {cfx_tensor_value(x), cfx_double(2.5), cfx_double(1.5), cfx_bool(true)};
    cr_expect_null(cfx_make_fx(q->fn, q->signature, bad, 4, NULL));
    cr_expect(strstr(cfx_error_message(), "Expected a value of type 'int' for argument 'n' but instead found type 'float'"),
              "%s", cfx_error_message());
    cfx_tensor_release(x);
    expect_clean(live0);
}

static cfx_tensor *item_model(cfx_tensor *x)
{
    double v = cfx_item(cfx_sum(x, CFX_NO_INTS)); /* data-dependent: refused while tracing */
    (void)v;
    return cfx_error_occurred() ? NULL : cfx_mul(x, x);
}

static cfx_tensor *nonzero_model(cfx_tensor *x) { return cfx_nonzero(x); }

/* Real tracing: proxy_call refuses item() on a real tensor (the op named in the text). Fake
 * tracing: the fake mode below raises, as one without a ShapeEnv does (make_fx's has one and
 * would make an unbacked symbol; cfx has no symbolic sizes): the golden is make_fx over fake
 * inputs of such a mode. */
Test(tracer_errors, data_dependent_op)
{
    char *want[2] = {oracle("item_real"), oracle("item_fake")};
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        int64_t live0 = cfx_tensor_live_count();
        cfx_tensor *x = test_tensor(2, 3, 0);
        cfx_value a = cfx_tensor_value(x);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cr_expect_null(cfx_make_fx((cfx_fnptr)item_model, "(Tensor x) -> Tensor", &a, 1, &o));
        cr_expect_str_eq(cfx_error_message(), want[mode]);
        cr_expect_str_eq(cfx_error_op(), "aten::_local_scalar_dense");
        cfx_tensor_release(x);
        expect_clean(live0);
        free(want[mode]);
    }
}

Test(tracer_errors, dynamic_output_shape_op)
{
    /* nonzero is recorded in real tracing (its result is real) and raises in fake tracing */
    char *want = oracle("nonzero_fake");
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false};
    cr_expect_null(cfx_make_fx((cfx_fnptr)nonzero_model, "(Tensor x) -> Tensor", &a, 1, &o));
    cr_expect_str_eq(cfx_error_message(), want);
    cfx_error_clear();
    o.mode = CFX_TRACE_REAL;
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)nonzero_model, "(Tensor x) -> Tensor", &a, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    cr_expect_not_null(cfx_graph_find_node(cfx_graph_module_graph(gm), "nonzero"));
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
    free(want);
    expect_clean(live0);
}

static cfx_tensor *null_model(cfx_tensor *x)
{
    (void)x;
    return NULL;
}

static cfx_tensor *self_error_model(cfx_tensor *x)
{
    cfx_tensor *y = cfx_neg(x);
    cfx_error_set(CFX_ERR, NULL, "model gave up");
    return y;
}

Test(tracer_errors, model_returns_null_or_sets_an_error)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cr_expect_null(cfx_make_fx((cfx_fnptr)null_model, "(Tensor x) -> Tensor", &a, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), "the kernel of f returned NULL without an error");
    cfx_error_clear();
    cr_expect_null(cfx_make_fx((cfx_fnptr)self_error_model, "(Tensor x) -> Tensor", &a, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), "model gave up");
    cfx_tensor_release(x);
    expect_clean(live0);
}

Test(tracer_errors, pending_error_is_kept)
{
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_error_set(CFX_ERR, NULL, "earlier failure");
    cr_expect_null(cfx_make_fx((cfx_fnptr)prog_scalar, "(Tensor x) -> int", &a, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), "earlier failure");
    cfx_tensor_release(x);
}

Test(tracer_errors, bad_signatures)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cr_expect_null(cfx_make_fx((cfx_fnptr)prog_scalar, "(Tensor x -> int", &a, 1, NULL));
    cr_expect_eq(cfx_error_status(), CFX_ERR_PARSE);
    cr_expect(strstr(cfx_error_message(), "<--- HERE"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_value l = cfx_list(&a, 1);
    cr_expect_null(cfx_make_fx((cfx_fnptr)prog_scalar, "(Tensor[] xs) -> int", &l, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), "make_fx: argument 'xs' is a list of tensors; pytree inputs are not supported");
    cfx_error_clear();
    cfx_value d[2] = {a, cfx_none()};
    cr_expect_null(cfx_make_fx((cfx_fnptr)prog_scalar, "(Tensor x, Dict(str, Tensor) d) -> int", d, 2, NULL));
    cr_expect(strstr(cfx_error_message(), "which has no C mapping"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_null(cfx_make_fx(NULL, "(Tensor x) -> int", &a, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), "cfx_make_fx: NULL function, signature or arguments");
    cfx_tensor_release(x);
    expect_clean(live0);
}

static cfx_tensor *one_result_model(cfx_tensor *x) { return cfx_neg(x); }

/* C cannot check a function's return type: a signature promising two tensors from a function
 * returning one reads a second "tensor" from whatever the register holds. It must be refused
 * with a clear message, never dereferenced: as a NULL tensor when the register holds 0, else
 * as no live tensor. */
Test(tracer_errors, signature_promising_more_returns)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    for (int mode = 0; mode < 2; mode++) {
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cr_expect_null(cfx_make_fx((cfx_fnptr)one_result_model, "(Tensor x) -> (Tensor, Tensor)", &a, 1, &o));
        const char *msg = cfx_error_message();
        cr_expect(msg && (!strcmp(msg, "the kernel of f returned NULL without an error") ||
                          !strcmp(msg, "make_fx: the function returned something that is not a live tensor where "
                                       "its signature promises one; does the C function return what the "
                                       "signature says (f(Tensor x) -> (Tensor, Tensor))?")),
                  "%s", msg ? msg : "(no error)");
        cfx_error_clear();
    }
    cfx_tensor_release(x);
    expect_clean(live0);
}

static cfx_tensor *missing_param_model(cfx_module *m, cfx_tensor *x)
{
    return cfx_add(x, cfx_module_get(m, "fc3.weight"));
}

static cfx_tensor *missing_nested_model(cfx_module *m, cfx_tensor *x)
{
    return cfx_add(x, cfx_module_get(m, "fc1.bias2"));
}

Test(tracer_errors, missing_parameter)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_module *mlp = make_mlp();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_make_fx_options o = {CFX_TRACE_FAKE, mlp, NULL, false};
    cr_expect_null(cfx_make_fx((cfx_fnptr)missing_param_model, "(Tensor x) -> Tensor", &a, 1, &o));
    cr_expect_str_eq(cfx_error_message(), "'MLP' object has no attribute 'fc3'");
    cfx_error_clear();
    cr_expect_null(cfx_make_fx((cfx_fnptr)missing_nested_model, "(Tensor x) -> Tensor", &a, 1, &o));
    cr_expect_str_eq(cfx_error_message(), "'Module' object has no attribute 'bias2'");
    cfx_tensor_release(x);
    cfx_module_free(mlp);
    expect_clean(live0);
}

static cfx_tensor *nested_failing_model(cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(x);
    cfx_graph_module *inner = cfx_make_fx((cfx_fnptr)item_model, "(Tensor x) -> Tensor", &a, 1, NULL);
    cfx_graph_module_free(inner);
    return inner ? cfx_neg(x) : NULL;
}

Test(tracer_errors, failing_trace_inside_a_trace)
{
    /* the inner trace's error is the outer one's, and both proxy modes leave the stack */
    int64_t live0 = cfx_tensor_live_count();
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    char *want = oracle("item_real");
    cr_expect_null(cfx_make_fx((cfx_fnptr)nested_failing_model, "(Tensor x) -> Tensor", &a, 1, NULL));
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cfx_tensor_release(x);
    expect_clean(live0);
}

Test(tracer_errors, bindings_do_not_outlive_the_trace)
{
    /* inputs, parameters and constants are cleaned of the tracer's bindings afterwards */
    cfx_module *mlp = make_mlp();
    const program *p = find_program("mlp");
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, mlp, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(p->fn, p->signature, &a, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        cfx_graph_module_free(gm);
    }
    const cfx_tensor *ts[5] = {x, cfx_module_get(mlp, "fc1.weight"), cfx_module_get(mlp, "fc1.bias"),
                               cfx_module_get(mlp, "fc2.weight"), cfx_module_get(mlp, "fc2.bias")};
    for (int i = 0; i < 5; i++) {
        const struct cfx_tensor_ext *e = &ts[i]->ext;
        uint32_t live = 0;
        for (uint32_t j = 0; e && j < e->n_bindings; j++)
            live += e->bindings[j].owner != 0;
        cr_expect_eq(live, 0, "tensor %d keeps %u bindings", i, live);
    }
    cfx_tensor_release(x);
    cfx_module_free(mlp);
}
