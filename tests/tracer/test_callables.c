/* test_callables.c - every kind of user callable (tracer/callable.h) traced by make_fx, against
 * what PyTorch 2.13 records for the twin programs of tools/interop/gen_callables.py
 * (tests/data/callable_<case>.<mode>.code.txt), and their error texts
 * (tests/data/callable_errors.tsv). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

/* ---- the twins ------------------------------------------------------------------------------ */

/* g(x, y, *, alpha=1) = relu(add(x, y, alpha=alpha)) */
static cfx_tensor *g_fn(cfx_tensor *x, cfx_tensor *y, int64_t alpha) { return cfx_relu(cfx_add(x, y, cfx_int(alpha))); }
static const char g_sig[] = "g(Tensor x, Tensor y, *, int alpha=1) -> Tensor";
static cfx_callable *G; /* the callable the traced functions call */

static cfx_tensor *plain_prog(cfx_tensor *x, cfx_tensor *y)
{
    cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(y)}, out;
    cfx_kwarg kw[1] = {{"alpha", cfx_int(2)}};
    return cfx_callable_call(G, args, 2, kw, 1, &out) == CFX_OK ? out.u.t : NULL;
}

/* table(n): n values 0, 1, ... doubled, computed for real even inside a fake trace */
static cfx_tensor *table_fn(int64_t n)
{
    float data[16];
    for (int64_t i = 0; i < n && i < 16; i++)
        data[i] = (float)i;
    int64_t size[1] = {n};
    cfx_tensor *t = cfx_tensor_from_floats(data, size, 1);
    return cfx_add(t, t);
}
static cfx_callable *TABLE;

static cfx_tensor *constant_prog(cfx_tensor *x)
{
    cfx_value n = cfx_int(4), out;
    return cfx_callable_call(TABLE, &n, 1, NULL, 0, &out) == CFX_OK ? cfx_add(x, out.u.t) : NULL;
}

static cfx_tensor *fused_fn(cfx_tensor *x) { return cfx_add(cfx_sin(x), x); }
static cfx_tensor *fused_fake(cfx_tensor *x) { return cfx_empty_like(x); }
static cfx_callable *FUSED;

static cfx_tensor *opaque_prog(cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(x), out;
    return cfx_callable_call(FUSED, &a, 1, NULL, 0, &out) == CFX_OK ? cfx_relu(out.u.t) : NULL;
}

static cfx_tensor *allreduce_prog(cfx_tensor *x)
{
    cfx_tensor *y = cfx_add(x, x);
    return cfx_dist_all_reduce(y, CFX_REDUCE_SUM, NULL, false) == CFX_OK ? y : NULL;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static cfx_scope scope;

static void setup(void)
{
    scope = cfx_scope_begin();
    G = cfx_callable_new((cfx_fnptr)g_fn, g_sig);
    TABLE = cfx_callable_assume_constant((cfx_fnptr)table_fn, "table(int n) -> Tensor");
    FUSED = cfx_callable_allow_in_graph((cfx_fnptr)fused_fn, "mylib::fused", "fused(Tensor x) -> Tensor",
                                        (cfx_fnptr)fused_fake);
    cr_assert(G && TABLE && FUSED, "%s", cfx_error_message());
}

static void teardown(void)
{
    cfx_callable_release(G);
    cfx_callable_release(TABLE);
    cfx_callable_release(FUSED);
    cfx_scope_end(scope);
    cfx_error_clear();
}

TestSuite(callables, .init = setup, .fini = teardown);

static cfx_tensor *filled(float v)
{
    int64_t size[1] = {4};
    float d[4] = {v, v, v, v};
    return cfx_tensor_from_floats(d, size, 1);
}

static char *golden_code(const char *name, const char *mode)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/callable_%s.%s.code.txt", name, mode);
    char *s = read_golden(path);
    cr_assert(s, "missing %s (run tools/interop/gen_callables.py)", path);
    return s;
}

/* make_fx(fn) in both modes, the code compared with the twin's. */
static void check_trace(const char *name, cfx_fnptr fn, const char *sig, int n_args)
{
    cfx_value args[2] = {cfx_tensor_value(filled(1.0f)), cfx_tensor_value(filled(2.0f))};
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        const char *mname = mode == CFX_TRACE_FAKE ? "fake" : "real";
        cfx_make_fx_options o = {(cfx_tracing_mode)mode};
        cfx_graph_module *gm = cfx_make_fx(fn, sig, args, n_args, &o);
        cr_assert(gm, "%s (%s): %s", name, mname, cfx_error_message());
        char *code = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
        char *want = golden_code(name, mname);
        cr_expect_str_eq(code, want, "%s (%s):\n%s\nwant:\n%s", name, mname, code, want);
        cr_expect_eq(cfx_graph_lint(cfx_graph_module_graph(gm)), CFX_OK, "%s", cfx_error_message());
        cr_expect_eq(cfx_mode_stack_len(), 0, "modes left on the stack");
        free(code);
        free(want);
        cfx_graph_module_free(gm);
    }
}

/* The message of callable_errors.tsv's line `name` (\n unescaped). */
static char *golden_error(const char *name)
{
    char *text = read_golden("tests/data/callable_errors.tsv");
    cr_assert(text, "missing tests/data/callable_errors.tsv (run tools/interop/gen_callables.py)");
    size_t n = strlen(name);
    char *line = text;
    while (line && !(strncmp(line, name, n) == 0 && line[n] == '\t'))
        line = (line = strchr(line, '\n')) ? line + 1 : NULL;
    cr_assert(line, "no error %s in callable_errors.tsv", name);
    char *out = malloc(strlen(line) + 1), *w = out;
    for (const char *r = line + n + 1; *r && *r != '\n'; r++)
        if (r[0] == '\\' && r[1] == 'n') {
            *w++ = '\n';
            r++;
        } else {
            *w++ = *r;
        }
    *w = '\0';
    free(text);
    return out;
}

/* ---- plain ---------------------------------------------------------------------------------- */

Test(callables, plain_function_is_inlined)
{
    check_trace("plain", (cfx_fnptr)plain_prog, "(Tensor x, Tensor y) -> Tensor", 2);
}

Test(callables, plain_call_binds_as_inspect_does)
{
    cfx_value args[3] = {cfx_tensor_value(filled(1.0f)), cfx_tensor_value(filled(2.0f)), cfx_int(5)}, out;
    cr_assert_eq(cfx_callable_call(G, args, 2, NULL, 0, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 3.0, 1e-9, "alpha defaults to 1");
    cfx_kwarg kw[2] = {{"alpha", cfx_int(3)}, {"y", args[1]}};
    cr_assert_eq(cfx_callable_call(G, args, 1, kw, 2, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 7.0, 1e-9, "x + 3 * y");
    static const struct {
        int n_args, n_kw;
        cfx_kwarg kw[2];
        const char *msg;
    } bad[] = {
        {3, 0, {{0}}, "g(): too many positional arguments"},
        {1, 0, {{0}}, "g(): missing a required argument: 'y'"},
        {2, 1, {{"x", {CFX_V_INT, 0, {.i = 1}}}}, "g(): multiple values for argument 'x'"},
        {2, 1, {{"beta", {CFX_V_INT, 0, {.i = 1}}}}, "g(): got an unexpected keyword argument 'beta'"},
    };
    for (int i = 0; i < COUNT_OF(bad); i++) {
        cfx_error_clear();
        cr_expect_lt(cfx_callable_call(G, args, bad[i].n_args, bad[i].kw, bad[i].n_kw, &out), 0);
        cr_expect_str_eq(cfx_error_message(), bad[i].msg);
    }
    cfx_error_clear();
    cr_expect_eq(cfx_callable_new((cfx_fnptr)g_fn, "g(Tensor x -> Tensor"), NULL);
    cr_expect(strstr(cfx_error_message(), "<--- HERE"), "%s", cfx_error_message());
}

/* ---- closure -------------------------------------------------------------------------------- */

static cfx_tensor *scale_closure(void *env, cfx_tensor *x, double s) { return cfx_mul(x, cfx_num(*(double *)env * s)); }

static int n_freed;
static void count_free(void *env) { (void)env, n_freed++; }

/* A closure gets its env first, binds like a plain function (defaults, keywords), is traced
 * as one (its operators recorded where it is called), frees env once, and is not a plain
 * function (cfx_callable_plain_fn). */
Test(callables, closure_gets_its_env_first)
{
    static double k = 3.0;
    n_freed = 0;
    cfx_callable *c = cfx_callable_closure_new((cfx_fnptr)scale_closure, "scale(Tensor x, float s=2.0) -> Tensor",
                                               &k, count_free);
    cr_assert_not_null(c, "%s", cfx_error_message());
    cr_expect_null(cfx_callable_plain_fn(c));
    cr_expect_eq(cfx_callable_plain_fn(G), (cfx_fnptr)g_fn);
    cfx_scope s = cfx_scope_begin();
    cfx_value x = cfx_tensor_value(filled(1.0f)), out;
    cr_assert_eq(cfx_callable_call(c, &x, 1, NULL, 0, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 6.0, 1e-9, "x * k * s, s defaulted");
    cfx_kwarg kw = {"s", cfx_double(0.5)};
    cr_assert_eq(cfx_callable_call(c, &x, 1, &kw, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 1.5, 1e-9);
    cr_expect_lt(cfx_callable_call(c, NULL, 0, NULL, 0, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "scale(): missing a required argument: 'x'");
    cfx_error_clear();
    cfx_scope_end(s);
    cfx_callable_retain(c);
    cfx_callable_release(c);
    cr_expect_eq(n_freed, 0, "env lives while a reference does");
    cfx_callable_release(c);
    cr_expect_eq(n_freed, 1);
    cr_expect_null(cfx_callable_closure_new(NULL, "f(Tensor x) -> Tensor", NULL, NULL));
    cr_expect_str_eq(cfx_error_message(), "cfx_callable_closure_new: NULL function");
    cfx_error_clear();
}

/* ---- constant ------------------------------------------------------------------------------- */

Test(callables, constant_function_result_is_a_get_attr)
{
    check_trace("constant", (cfx_fnptr)constant_prog, "(Tensor x) -> Tensor", 1);
    /* the constant holds the function's real result */
    cfx_value x = cfx_tensor_value(filled(1.0f));
    cfx_make_fx_options o = {CFX_TRACE_FAKE};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)constant_prog, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_value out;
    cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(cfx_tensor_get_double(out.u.t, i), 1.0 + 2.0 * i, 1e-9);
    cfx_graph_module_free(gm);
}

static cfx_tensor *scaled_table(cfx_tensor *x) { return cfx_add(x, x); }

static cfx_tensor *constant_on_traced_prog(cfx_tensor *x)
{
    cfx_callable *c = cfx_callable_assume_constant((cfx_fnptr)scaled_table, "table(Tensor x) -> Tensor");
    cfx_value a = cfx_tensor_value(x), out;
    int rc = cfx_callable_call(c, &a, 1, NULL, 0, &out);
    cfx_callable_release(c);
    return rc == CFX_OK ? cfx_relu(out.u.t) : NULL;
}

Test(callables, constant_function_refuses_a_fake_argument)
{
    cfx_value x = cfx_tensor_value(filled(1.0f));
    cfx_make_fx_options o = {CFX_TRACE_FAKE};
    cr_expect_eq(cfx_make_fx((cfx_fnptr)constant_on_traced_prog, "(Tensor x) -> Tensor", &x, 1, &o), NULL);
    char *want = golden_error("constant_fake_argument");
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cr_expect_eq(cfx_mode_stack_len(), 0);
    cfx_error_clear();
    /* real tracing: the traced tensor's real value is the argument (get_real_value) */
    o.mode = CFX_TRACE_REAL;
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)constant_on_traced_prog, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    char *code = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
    cr_expect(strstr(code, "_tensor_constant0 = self._tensor_constant0") && !strstr(code, "aten.add"), "%s", code);
    free(code);
    cfx_graph_module_free(gm);
}

/* ---- partial -------------------------------------------------------------------------------- */

Test(callables, partial_merges_and_is_a_c_function_pointer)
{
    cfx_kwarg bound[1] = {{"alpha", cfx_int(3)}};
    cfx_callable *p = cfx_partial_new(G, NULL, 0, bound, 1);
    cr_assert(p, "%s", cfx_error_message());
    char *s = cfx_schema_to_string(cfx_callable_schema(p));
    cr_expect_str_eq(s, "g(Tensor x, Tensor y) -> Tensor", "what is left unbound");
    free(s);
    cfx_fnptr fp = cfx_partial_fnptr(p);
    cr_assert(fp, "%s", cfx_error_message());
    /* a C function pointer make_fx calls as any other (it cannot name a partial's parameters) */
    check_trace("partial", fp, "(Tensor arg0, Tensor arg1) -> Tensor", 2);
    /* direct call: the closure boxes, merges alpha=3, unboxes */
    cfx_tensor *(*f)(cfx_tensor *, cfx_tensor *) = (cfx_tensor * (*)(cfx_tensor *, cfx_tensor *)) fp;
    cfx_tensor *r = f(filled(1.0f), filled(2.0f));
    cr_assert(r, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(r, 0), 7.0, 1e-9);
    /* a call's keyword replaces the bound one; bound positionals come first */
    cfx_value x = cfx_tensor_value(filled(1.0f)), y = cfx_tensor_value(filled(2.0f)), out;
    cfx_kwarg kw[1] = {{"alpha", cfx_int(-1)}};
    cr_assert_eq(cfx_callable_call(p, (cfx_value[]){x, y}, 2, kw, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 0.0, 1e-9, "relu(1 - 2)");
    cfx_callable *px = cfx_partial_new(p, &x, 1, NULL, 0);
    cr_assert(px, "%s", cfx_error_message());
    cr_assert_eq(cfx_callable_call(px, &y, 1, NULL, 0, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 7.0, 1e-9, "partial of a partial");
    cr_expect_lt(cfx_callable_call(px, (cfx_value[]){y, y}, 2, NULL, 0, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "g(): too many positional arguments");
    cfx_error_clear();
    cfx_callable_release(px);
    cfx_callable_release(p);
}

static const char *name_of(const char *s) { return s; }

Test(callables, partial_refuses_what_c_cannot_take)
{
    cfx_callable *named = cfx_callable_new((cfx_fnptr)name_of, "name_of(str s) -> str");
    cr_assert(named);
    cfx_callable *p = cfx_partial_new(named, NULL, 0, NULL, 0);
    cr_assert(p);
    cr_expect_eq(cfx_partial_fnptr(p), NULL);
    cr_expect(strstr(cfx_error_message(), "returns one Tensor, int, float or bool"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_eq(cfx_partial_fnptr(named), NULL, "not a partial");
    cfx_error_clear();
    cfx_callable_release(p);
    cfx_callable_release(named);
}

/* ---- context -------------------------------------------------------------------------------- */

typedef struct counter {
    int entered, exited, refuse;
} counter;

static int count_enter(void *ctx, void **state)
{
    counter *c = ctx;
    if (c->refuse)
        return cfx_error_set(CFX_ERR, NULL, "refused");
    c->entered++;
    *state = &c->exited;
    return CFX_OK;
}

static void count_exit(void *ctx, void *state)
{
    (void)ctx;
    ++*(int *)state;
}

static cfx_tensor *check_excluded(cfx_tensor *x)
{
    /* inside the guard the key is excluded; fail to show the exit runs on error too */
    if (cfx_keyset_has(cfx_local_keys_get().excluded, CFX_KEY_AutocastCPU) &&
        cfx_keyset_has(cfx_local_keys_get().excluded, CFX_KEY_Python))
        cfx_error_set(CFX_ERR, NULL, "Python excluded inside");
    (void)x;
    return NULL;
}

Test(callables, context_hooks_run_around_the_call_and_on_error)
{
    counter c = {0};
    cfx_context_hooks hooks = {count_enter, count_exit};
    cfx_callable *w = cfx_callable_with_context(G, &hooks, &c);
    cr_assert(w, "%s", cfx_error_message());
    cfx_value args[2] = {cfx_tensor_value(filled(1.0f)), cfx_tensor_value(filled(2.0f))}, out;
    cr_expect_eq(cfx_callable_call(w, args, 2, NULL, 0, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(c.entered, 1);
    cr_expect_eq(c.exited, 1);
    cr_expect_lt(cfx_callable_call(w, args, 1, NULL, 0, &out), 0, "a failing call");
    cfx_error_clear();
    cr_expect_eq(c.exited, 2, "exit ran after the failure");
    c.refuse = 1;
    cr_expect_lt(cfx_callable_call(w, args, 2, NULL, 0, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "refused");
    cr_expect_eq(c.exited, 2, "no exit without an enter");
    cfx_error_clear();
    cfx_callable_release(w);
}

Test(callables, exclude_keys_guard_is_restored_on_error)
{
    cfx_local_keys before = cfx_local_keys_get();
    cfx_callable *inner = cfx_callable_new((cfx_fnptr)check_excluded, "check(Tensor x) -> Tensor");
    cfx_callable *w = cfx_callable_exclude_keys(inner, cfx_keyset_of(CFX_KEY_Python));
    cr_assert(w, "%s", cfx_error_message());
    cfx_value x = cfx_tensor_value(filled(1.0f)), out;
    cr_expect_lt(cfx_callable_call(w, &x, 1, NULL, 0, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "Python excluded inside");
    cfx_error_clear();
    cfx_local_keys after = cfx_local_keys_get();
    cr_expect(!memcmp(&before, &after, sizeof before), "the thread's key sets are restored");
    cfx_callable_release(w);
    cfx_callable_release(inner);
}

/* ---- opaque --------------------------------------------------------------------------------- */

Test(callables, opaque_function_is_one_node)
{
    check_trace("opaque", (cfx_fnptr)opaque_prog, "(Tensor x) -> Tensor", 1);
    /* the node runs the C function */
    cfx_value x = cfx_tensor_value(filled(0.5f)), out;
    cr_assert_eq(cfx_callable_call(FUSED, &x, 1, NULL, 0, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(out.u.t, 0), 0.9794255386, 1e-6, "sin(0.5) + 0.5");
}

static cfx_tensor *nofake_fn(cfx_tensor *x) { return cfx_cos(x); }
static cfx_callable *NOFAKE;

static cfx_tensor *nofake_prog(cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(x), out;
    return cfx_callable_call(NOFAKE, &a, 1, NULL, 0, &out) == CFX_OK ? out.u.t : NULL;
}

Test(callables, opaque_function_without_fake_rule)
{
    NOFAKE = cfx_callable_allow_in_graph((cfx_fnptr)nofake_fn, "mylib::nofake", "nofake(Tensor x) -> Tensor", NULL);
    cr_assert(NOFAKE, "%s", cfx_error_message());
    cfx_value x = cfx_tensor_value(filled(1.0f));
    cfx_make_fx_options o = {CFX_TRACE_FAKE};
    cr_expect_eq(cfx_make_fx((cfx_fnptr)nofake_prog, "(Tensor x) -> Tensor", &x, 1, &o), NULL);
    char *want = golden_error("opaque_no_fake_rule");
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cfx_error_clear();
    o.mode = CFX_TRACE_REAL; /* a real trace runs the function itself */
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)nofake_prog, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_expect(gm, "%s", cfx_error_message());
    cfx_graph_module_free(gm);
    cfx_callable_release(NOFAKE);
    cr_expect_eq(cfx_op_find("mylib::nofake"), NULL, "the operator goes with the callable");
    cfx_error_clear();
    cr_expect_eq(cfx_callable_allow_in_graph((cfx_fnptr)nofake_fn, "nofake", "nofake(Tensor x) -> Tensor", NULL),
                 NULL);
    cr_expect(strstr(cfx_error_message(), "no operator name of the form ns::name"), "%s", cfx_error_message());
}

/* ---- collectives ---------------------------------------------------------------------------- */

Test(callables, all_reduce_becomes_functional_collectives)
{
    check_trace("allreduce", (cfx_fnptr)allreduce_prog, "(Tensor x) -> Tensor", 1);
    /* eagerly, in a one-process world, the reduction of a tensor is itself */
    cfx_tensor *t = filled(3.0f);
    cr_assert_eq(cfx_dist_all_reduce(t, CFX_REDUCE_MAX, "0", false), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(t, 0), 3.0, 1e-9);
}

Test(callables, all_reduce_refusals_are_dynamos)
{
    cfx_tensor *t = filled(1.0f);
    cr_expect_lt(cfx_dist_all_reduce(t, CFX_REDUCE_PREMUL_SUM, NULL, false), 0);
    char *want = golden_error("allreduce_premul_sum");
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cfx_error_clear();
    /* 2.13's graph break, deterministic (no address), for a None and a named group */
    cr_expect_lt(cfx_dist_all_reduce(t, CFX_REDUCE_SUM, NULL, true), 0);
    want = golden_error("allreduce_async_op");
    cr_expect_str_eq(cfx_error_message(), want);
    cr_expect_null(strstr(cfx_error_message(), " at 0x"));
    free(want);
    cfx_error_clear();
    cr_expect_lt(cfx_dist_all_reduce(t, CFX_REDUCE_SUM, "0", true), 0);
    want = golden_error("allreduce_async_op_group");
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cfx_error_clear();
}
