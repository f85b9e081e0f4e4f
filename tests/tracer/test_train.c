/* test_train.c - training-mode batch norm and dropout traced and run against PyTorch 2.13.
 *
 * Each program is the C twin of one in tools/interop/gen_train.py: F.batch_norm (the
 * batch_norm composite: a uint8 empty reserve then native_batch_norm), with and without running
 * statistics, and F.dropout / F.dropout2d in training mode (empty_like or new_empty,
 * bernoulli_, div_, mul). make_fx in real and fake mode must print 2.13's graph; the graph is
 * then run by the interpreter after cfx_manual_seed(0) and its output (and the running
 * statistics it updated in place) must equal PyTorch's eager run after torch.manual_seed(0):
 * the dropout masks included, cfx's generator being PyTorch's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/json_round_trip.h"
#include "tests/test_util.h"

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(train, .init = setup);

static cfx_tensor *bn_train(cfx_tensor *x, cfx_tensor *w, cfx_tensor *b, cfx_tensor *rm, cfx_tensor *rv)
{
    return cfx_batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5, false);
}
static cfx_tensor *bn_eval(cfx_tensor *x, cfx_tensor *w, cfx_tensor *b, cfx_tensor *rm, cfx_tensor *rv)
{
    return cfx_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5, false);
}
static cfx_tensor *bn_nostats(cfx_tensor *x, cfx_tensor *w, cfx_tensor *b)
{
    return cfx_batch_norm(x, w, b, NULL, NULL, true, 0.2, 1e-5, false);
}
static cfx_tensor *dropout(cfx_tensor *x) { return cfx_dropout(x, 0.5, true); }
static cfx_tensor *dropout_p1(cfx_tensor *x) { return cfx_dropout(x, 1.0, true); }
static cfx_tensor *dropout_eval(cfx_tensor *x) { return cfx_mul(cfx_dropout(x, 0.3, false), cfx_num(2)); }
static cfx_tensor *feature_dropout(cfx_tensor *x) { return cfx_feature_dropout(x, 0.2, true); }
static cfx_tensor *native_dropout(cfx_tensor *x)
{
    cfx_native_dropout_result r = cfx_native_dropout(x, 0.3, cfx_bool(true));
    return cfx_add(r.t[0], r.t[1]);
}

typedef struct program {
    const char *name;
    cfx_fnptr fn;
    const char *signature;
    int n_in;
} program;

#define SIG5 "(Tensor x, Tensor w, Tensor b, Tensor rm, Tensor rv) -> Tensor"
static const program programs[] = {
    {"bn_train", (cfx_fnptr)bn_train, SIG5, 5},
    {"bn_eval", (cfx_fnptr)bn_eval, SIG5, 5},
    {"bn_nostats", (cfx_fnptr)bn_nostats, "(Tensor x, Tensor w, Tensor b) -> Tensor", 3},
    {"dropout", (cfx_fnptr)dropout, "(Tensor x) -> Tensor", 1},
    {"dropout_p1", (cfx_fnptr)dropout_p1, "(Tensor x) -> Tensor", 1},
    {"dropout_eval", (cfx_fnptr)dropout_eval, "(Tensor x) -> Tensor", 1},
    {"feature_dropout", (cfx_fnptr)feature_dropout, "(Tensor x) -> Tensor", 1},
    {"native_dropout", (cfx_fnptr)native_dropout, "(Tensor x) -> Tensor", 1},
};

/* gen_train.py's inputs, in argument order x, w, b, rm, rv */
static void make_inputs(cfx_value *args)
{
    float xs[96];
    for (int i = 0; i < 96; i++)
        xs[i] = (float)(i % 7 - 3) * 0.5f;
    static const float w[3] = {1.0f, 0.5f, -2.0f}, b[3] = {0.1f, 0.2f, 0.3f}, rm[3] = {0.0f, 0.5f, -0.5f},
                       rv[3] = {1.0f, 2.0f, 0.5f};
    static const int64_t xsz[4] = {2, 3, 4, 4}, csz[1] = {3};
    args[0] = cfx_tensor_value(cfx_autorelease(cfx_tensor_from_floats(xs, xsz, 4)));
    const float *per_channel[4] = {w, b, rm, rv};
    for (int k = 0; k < 4; k++)
        args[1 + k] = cfx_tensor_value(cfx_autorelease(cfx_tensor_from_floats(per_channel[k], csz, 1)));
}

static char *data(const char *name, const char *suffix)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/train_%s.%s.txt", name, suffix);
    char *s = read_golden(path);
    cr_assert(s, "missing %s (run tools/interop/gen_train.py)", path);
    return s;
}

/* One "label v v v ..." line against t, within float32 rounding of a double computation. */
static void check_line(const char *prog, char *line, const char *label, const cfx_tensor *t)
{
    cr_assert(line, "%s: no golden line for %s", prog, label);
    size_t n = strlen(label);
    cr_assert(!strncmp(line, label, n) && line[n] == ' ', "%s: golden line '%.20s' is not %s", prog, line, label);
    char *p = line + n;
    for (int64_t e = 0; e < cfx_tensor_numel(t); e++) {
        double want = strtod(p, &p), got = cfx_tensor_get_double(t, e);
        cr_expect(fabs(got - want) <= 1e-6 + 1e-5 * fabs(want), "%s %s[%lld]: got %.9g want %.9g", prog, label,
                  (long long)e, got, want);
    }
}

static void check_program(const program *pg)
{
    char *want_graph = data(pg->name, "graph");
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_scope s = cfx_scope_begin();
        cfx_value args[5];
        make_inputs(args);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(pg->fn, pg->signature, args, pg->n_in, &o);
        cr_assert(gm, "%s: %s", pg->name, cfx_error_message());
        char *graph = cfx_graph_to_string(cfx_graph_module_graph(gm));
        cr_expect_str_eq(graph, want_graph, "%s graph (mode %d)", pg->name, mode);
        free(graph);
        expect_module_json_round_trip(gm, pg->name);
        /* a fresh run on fresh inputs, seeded as the eager PyTorch run */
        cfx_value fresh[5], out;
        make_inputs(fresh);
        cfx_manual_seed(0);
        cr_assert_eq(cfx_graph_module_run(gm, fresh, pg->n_in, &out), CFX_OK, "%s run: %s", pg->name,
                     cfx_error_message());
        char *want = data(pg->name, "values"), *save = NULL;
        check_line(pg->name, strtok_r(want, "\n", &save), "out", out.u.t);
        if (pg->n_in == 5) {
            check_line(pg->name, strtok_r(NULL, "\n", &save), "rm", fresh[3].u.t);
            check_line(pg->name, strtok_r(NULL, "\n", &save), "rv", fresh[4].u.t);
        }
        free(want);
        cfx_graph_module_free(gm);
        cfx_scope_end(s);
    }
    free(want_graph);
}

Test(train, bn_train) { check_program(&programs[0]); }
Test(train, bn_eval) { check_program(&programs[1]); }
Test(train, bn_nostats) { check_program(&programs[2]); }
Test(train, dropout) { check_program(&programs[3]); }
Test(train, dropout_p1) { check_program(&programs[4]); }
Test(train, dropout_eval) { check_program(&programs[5]); }
Test(train, feature_dropout) { check_program(&programs[6]); }

Test(train, errors)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_zeros(CFX_INTS(2, 3));
    cr_assert_null(cfx_dropout(x, 1.5, true));
    cr_assert_str_eq(cfx_error_message(), "dropout probability has to be between 0 and 1, but got 1.5");
    cfx_error_clear();
    cr_assert_null(cfx_feature_dropout(cfx_zeros(CFX_INTS(3)), 0.5, true));
    cr_assert_str_eq(cfx_error_message(), "Feature dropout requires at least 2 dimensions in the input");
    cfx_error_clear();
    cr_assert_null(cfx_bernoulli_(x, 1.5));
    cr_assert_str_eq(cfx_error_message(), "bernoulli_ expects p to be in [0, 1], but got p=1.5");
    cfx_error_clear();
    cr_assert_null(cfx_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5, false));
    cr_assert_str_eq(cfx_error_message(), "running_mean must be defined in evaluation mode");
    cfx_error_clear();
    cr_assert_null(cfx_batch_norm(x, cfx_zeros(CFX_INTS(4)), NULL, NULL, NULL, true, 0.1, 1e-5, false));
    cr_assert_str_eq(cfx_error_message(), "weight should contain 3 elements not 4");
    cfx_error_clear();
    cfx_scope_end(s);
}
