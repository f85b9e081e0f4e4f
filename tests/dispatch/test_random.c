/* test_random.c - the random sampling ops beyond their golden cases (tests/data/
 * ops_random_cases.json, which pins their values to PyTorch 2.13's bit for bit): the laws of
 * large samples (mean and variance within a few standard errors, ranges), determinism under a
 * seed, independent generators, errors on bad arguments without side effects, and make_fx:
 * a traced sampler is one node, and fake tracing with a generator fails as 2.13's references
 * make it fail. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(random_ops, .init = setup);

enum { N = 200000 };

static cfx_tensor *empty(int64_t n, cfx_dtype dt)
{
    return cfx_tensor_new(&n, 1, dt, cfx_device_make(CFX_DEVICE_CPU));
}

/* mean and variance of a float64 tensor */
static void moments(cfx_tensor *t, double *mean, double *var, double *lo, double *hi)
{
    const double *d = cfx_tensor_data(t);
    int64_t n = cfx_tensor_numel(t);
    double s = 0, s2 = 0;
    *lo = INFINITY, *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        s += d[i];
        *lo = d[i] < *lo ? d[i] : *lo;
        *hi = d[i] > *hi ? d[i] : *hi;
    }
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++)
        s2 += (d[i] - *mean) * (d[i] - *mean);
    *var = s2 / (double)(n - 1);
}

/* |mean - mu| within 5 standard errors, variance within 5% */
static void expect_law(const char *what, cfx_tensor *t, double mu, double sigma2)
{
    double mean, var, lo, hi;
    moments(t, &mean, &var, &lo, &hi);
    cr_expect_lt(fabs(mean - mu), 5 * sqrt(sigma2 / N), "%s: mean %g, want %g", what, mean, mu);
    cr_expect_lt(fabs(var - sigma2), 0.05 * sigma2, "%s: variance %g, want %g", what, var, sigma2);
}

Test(random_ops, continuous_laws)
{
    cfx_scope s = cfx_scope_begin();
    cfx_manual_seed(1234);
    cfx_tensor *u = cfx_uniform_(empty(N, CFX_FLOAT64), -1.0, 3.0);
    cr_assert_not_null(u, "%s", cfx_error_message());
    expect_law("uniform_(-1, 3)", u, 1.0, 16.0 / 12.0);
    double mean, var, lo, hi;
    moments(u, &mean, &var, &lo, &hi);
    cr_expect(lo >= -1.0 && hi < 3.0, "uniform_ range [%g, %g]", lo, hi);
    expect_law("normal_(0.5, 2)", cfx_normal_(empty(N, CFX_FLOAT64), 0.5, 2.0), 0.5, 4.0);
    expect_law("exponential_(4)", cfx_exponential_(empty(N, CFX_FLOAT64), 4.0), 0.25, 1.0 / 16.0);
    /* log-normal(0, 0.5): mean e^(s^2 / 2), variance (e^(s^2) - 1) e^(s^2) */
    expect_law("log_normal_(0, 0.5)", cfx_log_normal_(empty(N, CFX_FLOAT64), 0.0, 0.5), exp(0.125),
               (exp(0.25) - 1) * exp(0.25));
    /* geometric(p) counts trials up to the first success: mean 1/p, variance (1 - p) / p^2 */
    expect_law("geometric_(0.2)", cfx_geometric_(empty(N, CFX_FLOAT64), 0.2), 5.0, 0.8 / 0.04);
    /* cauchy has no moments: its quartiles are median -/+ sigma */
    cfx_tensor *c = cfx_cauchy_(empty(N, CFX_FLOAT64), 1.0, 2.0);
    const double *d = cfx_tensor_data(c);
    int64_t below = 0, inner = 0;
    for (int64_t i = 0; i < N; i++)
        below += d[i] < 1.0, inner += d[i] > -1.0 && d[i] < 3.0;
    cr_expect_lt(fabs((double)below / N - 0.5), 0.01, "cauchy_: %lld of %d below the median", (long long)below, N);
    cr_expect_lt(fabs((double)inner / N - 0.5), 0.01, "cauchy_: %lld of %d within a sigma", (long long)inner, N);
    cfx_scope_end(s);
}

Test(random_ops, discrete_laws)
{
    cfx_scope s = cfx_scope_begin();
    cfx_manual_seed(99);
    cfx_tensor *r = cfx_random__to(empty(N, CFX_INT64), 6);
    cr_assert_not_null(r, "%s", cfx_error_message());
    int64_t counts[6] = {0};
    const int64_t *v = cfx_tensor_data(r);
    for (int64_t i = 0; i < N; i++) {
        cr_assert(v[i] >= 0 && v[i] < 6, "random_(6) drew %lld", (long long)v[i]);
        counts[v[i]]++;
    }
    for (int k = 0; k < 6; k++)
        cr_expect_lt(fabs(counts[k] - N / 6.0), 5 * sqrt(N / 6.0), "random_(6): %lld of value %d",
                     (long long)counts[k], k);
    cfx_tensor *b = cfx_bernoulli_p(empty(N, CFX_FLOAT64), 0.3);
    expect_law("bernoulli(p=0.3)", b, 0.3, 0.21);
    /* multinomial with replacement: frequencies follow the (unnormalised) weights 1:2:3:4 */
    double w[4] = {1, 2, 3, 4};
    int64_t four = 4;
    cfx_tensor *p = cfx_tensor_from_doubles(w, &four, 1);
    cr_assert_not_null(p, "%s", cfx_error_message());
    cfx_tensor *m = cfx_multinomial(p, N, true);
    cr_assert_not_null(m, "%s", cfx_error_message());
    int64_t mc[4] = {0};
    const int64_t *mv = cfx_tensor_data(m);
    for (int64_t i = 0; i < N; i++) {
        cr_assert(mv[i] >= 0 && mv[i] < 4, "multinomial drew category %lld of 4", (long long)mv[i]);
        mc[mv[i]]++;
    }
    for (int k = 0; k < 4; k++) {
        double pk = w[k] / 10.0;
        cr_expect_lt(fabs(mc[k] - N * pk), 5 * sqrt(N * pk * (1 - pk)), "multinomial: category %d drawn %lld times",
                     k, (long long)mc[k]);
    }
    /* without replacement: every row a permutation of distinct categories */
    cfx_tensor *perm = cfx_multinomial(p, 4);
    cr_assert_not_null(perm, "%s", cfx_error_message());
    const int64_t *pv = cfx_tensor_data(perm);
    int seen = 0;
    for (int k = 0; k < 4; k++)
        seen |= 1 << pv[k];
    cr_expect_eq(seen, 15, "multinomial without replacement repeated a category");
    cfx_scope_end(s);
}

/* the same seed draws the same values; a generator of its own leaves the default stream alone */
Test(random_ops, determinism_and_generators)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a[2], *b[2];
    for (int k = 0; k < 2; k++) {
        cfx_manual_seed(7);
        a[k] = cfx_normal_(empty(40, CFX_FLOAT32), 0.0, 1.0);
        b[k] = cfx_geometric_(empty(5, CFX_INT64), 0.5);
        cr_assert(a[k] && b[k], "%s", cfx_error_message());
    }
    cr_expect_eq(memcmp(cfx_tensor_data(a[0]), cfx_tensor_data(a[1]), 40 * sizeof(float)), 0);
    cr_expect_eq(memcmp(cfx_tensor_data(b[0]), cfx_tensor_data(b[1]), 5 * sizeof(int64_t)), 0);

    cfx_generator *g = cfx_generator_new();
    cr_assert_not_null(g);
    cfx_manual_seed(7);
    cfx_generator_manual_seed(g, 1);
    cfx_tensor *other = cfx_uniform_(empty(100, CFX_FLOAT64), 0.0, 1.0, cfx_generator_value(g));
    cfx_tensor *again = cfx_normal_(empty(40, CFX_FLOAT32), 0.0, 1.0);
    cr_assert(other && again, "%s", cfx_error_message());
    cr_expect_eq(memcmp(cfx_tensor_data(a[0]), cfx_tensor_data(again), 40 * sizeof(float)), 0,
                 "drawing from a generator of its own moved the default stream");
    cfx_generator_free(g);
    cfx_scope_end(s);
}

/* a refused call changes neither the tensor nor the stream */
Test(random_ops, errors_leave_state)
{
    cfx_scope s = cfx_scope_begin();
    cfx_manual_seed(3);
    cfx_tensor *t = empty(4, CFX_FLOAT32);
    cr_expect_null(cfx_uniform_(t, 2.0, 1.0));
    cr_expect_str_eq(cfx_error_message(), "uniform_ expects to return a [from, to) range, but found from=2 > to=1");
    cfx_error_clear();
    cr_expect_null(cfx_random__from(empty(4, CFX_INT64), 5, cfx_int(2)));
    cr_expect_str_eq(cfx_error_message(), "random_ expects 'from' to be less than 'to', but got from=5 >= to=2");
    cfx_error_clear();
    cr_expect_null(cfx_multinomial(t, 5));
    cr_expect_str_eq(cfx_error_message(), "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    cfx_error_clear();
    cr_expect_null(cfx_uniform_(NULL, 0.0, 1.0), "NULL propagates");
    const float *d = cfx_tensor_data(t);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(d[i], 0.0f, "a refused uniform_ wrote element %d", i);
    cfx_tensor *first = cfx_rand(CFX_INTS(3));
    cfx_manual_seed(3);
    cfx_tensor *want = cfx_rand(CFX_INTS(3));
    cr_expect_eq(memcmp(cfx_tensor_data(first), cfx_tensor_data(want), 3 * sizeof(float)), 0,
                 "a refused call drew from the generator");
    cfx_scope_end(s);
}

/* got is NULL with 2.13's text for a dtype its kernel's dispatch has no case for, and the kind
 * of PyTorch's NotImplementedError (CFX_ERR_NOTIMPL) */
static void expect_not_implemented(cfx_tensor *got, const char *text)
{
    cr_expect_null(got, "%s", text);
    cr_expect_str_eq(cfx_error_message() ? cfx_error_message() : "(none)", text);
    cr_expect_eq(cfx_error_status(), CFX_ERR_NOTIMPL, "%s", text);
    cfx_error_clear();
}

/* texts and kinds of 2.13 (python3); other argument errors stay RuntimeError (CFX_ERR) */
Test(random_ops, dtype_refusals_are_not_implemented)
{
    cfx_scope s = cfx_scope_begin();
    int64_t three = 3;
    cfx_tensor *c = cfx_tensor_new(&three, 1, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU));
    expect_not_implemented(cfx_random_(c), "\"random_kernel_cpu\" not implemented for 'ComplexFloat'");
    expect_not_implemented(cfx_bernoulli__Tensor(empty(3, CFX_FLOAT32), empty(3, CFX_INT64)),
                           "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'");
    expect_not_implemented(cfx_randperm(3, cfx_dtype_value(CFX_BOOL)), "\"randperm\" not implemented for 'Bool'");
    expect_not_implemented(cfx_gelu(empty(3, CFX_INT64)), "\"GeluKernelImpl\" not implemented for 'Long'");
    cr_expect_null(cfx_uniform_(empty(2, CFX_FLOAT32), 2.0, 1.0));
    cr_expect_eq(cfx_error_status(), CFX_ERR, "a bad range is a RuntimeError");
    cfx_scope_end(s);
}

static cfx_generator *trace_gen;

static cfx_tensor *sample_fn(cfx_tensor *x)
{
    cfx_value g = trace_gen ? cfx_generator_value(trace_gen) : cfx_none();
    return cfx_exponential_(cfx_clone(x), 2.0, g);
}

/* make_fx records the sampler as one node, as 2.13 does; fake tracing it with a generator fails
 * as in 2.13, whose Meta kernel (the reference) refuses generators */
Test(random_ops, make_fx)
{
    cfx_scope s = cfx_scope_begin();
    int64_t three = 3;
    cfx_value args[1] = {cfx_tensor_value(cfx_tensor_new(&three, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)))};
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false};
    trace_gen = NULL;
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)sample_fn, "(Tensor x) -> Tensor", args, 1, &o);
    cr_assert_not_null(gm, "%s", cfx_error_message());
    char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect(strstr(text, "call_function[target=torch.ops.aten.exponential_.default](args = (%clone, 2.0), kwargs = {})"),
              "%s", text);
    free(text);
    cfx_graph_module_free(gm);

    trace_gen = cfx_generator_new();
    cr_assert_not_null(trace_gen);
    cr_expect_null(cfx_make_fx((cfx_fnptr)sample_fn, "(Tensor x) -> Tensor", args, 1, &o));
    cr_expect(strstr(cfx_error_message(), "generator is not supported in refs"), "%s", cfx_error_message());
    cfx_error_clear();
    o.mode = CFX_TRACE_REAL; /* a real trace runs the CPU kernel, which takes generators */
    gm = cfx_make_fx((cfx_fnptr)sample_fn, "(Tensor x) -> Tensor", args, 1, &o);
    cr_assert_not_null(gm, "%s", cfx_error_message());
    cfx_graph_module_free(gm);
    cfx_generator_free(trace_gen);
    trace_gen = NULL;
    cfx_scope_end(s);
}
