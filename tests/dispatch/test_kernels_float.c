/* test_kernels_float.c - properties of the float CPU kernels that the PyTorch goldens cannot
 * pin down: the vector primitives' exp at the edges of float's range and on vector tails,
 * softmax on masked (-inf) rows, and transposed convolution as the exact adjoint of the plain
 * one (<conv(x, w), y> == <x, conv_transpose(y, w)>) across strides, padding, dilation,
 * groups and 1-3 spatial dims. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/kernels/vec.h"
#include "tests/test_util.h"

Test(kernels_float, exp_matches_libm_within_two_ulp_and_sums_its_outputs)
{
    enum { N = 1003 }; /* not a multiple of the 8 lanes: the tail takes the padded path */
    static float x[N], o[N];
    for (int i = 0; i < N; i++)
        x[i] = -103.0f + 183.0f * (float)i / (float)N; /* sums stay below FLT_MAX */
    float sum = cfx_vec_exp_sum_f32(o, x, 0.0f, N);
    double want_sum = 0;
    for (int i = 0; i < N; i++) {
        double want = expf(x[i]);
        want_sum += o[i];
        if (want > 1e-37) /* normal results: relative error; denormal ones: absolute */
            cr_expect(fabs(o[i] - want) <= 2.5e-7 * want, "exp(%g) = %g, libm %g", x[i], o[i], want);
        else
            cr_expect(fabs(o[i] - want) <= 1e-44, "exp(%g) = %g, libm %g", x[i], o[i], want);
    }
    cr_expect(fabs(sum - want_sum) <= 1e-6 * want_sum, "sum %g, want %g", sum, want_sum);
}

Test(kernels_float, exp_edges_are_libms)
{
    float x[11] = {-INFINITY, INFINITY, NAN, -200.0f, 89.0f, 88.72f, 0.0f, -0.0f, 1.0f, -1.0f, 10.0f};
    float o[11];
    cfx_vec_exp_sum_f32(o, x, 0.0f, 11);
    cr_expect(o[0] == 0.0f && o[1] == INFINITY && isnan(o[2]) && o[3] == 0.0f && o[4] == INFINITY);
    cr_expect(isfinite(o[5]) && fabsf(o[5] - expf(88.72f)) <= 2.5e-7f * expf(88.72f));
    cr_expect(o[6] == 1.0f && o[7] == 1.0f);
    for (int i = 8; i < 11; i++)
        cr_expect(fabsf(o[i] - expf(x[i])) <= 2.5e-7f * expf(x[i]), "exp(%g) = %g", x[i], o[i]);
}

Test(kernels_float, max_propagates_nan_from_any_lane_or_the_tail)
{
    float x[13];
    for (int i = 0; i < 13; i++)
        x[i] = (float)i;
    cr_expect(cfx_vec_max_f32(x, 13) == 12.0f);
    cr_expect(cfx_vec_max_f32(x, 0) == -INFINITY);
    x[3] = NAN;
    cr_expect(isnan(cfx_vec_max_f32(x, 13)));
    x[3] = 0, x[12] = NAN;
    cr_expect(isnan(cfx_vec_max_f32(x, 13)));
    double d[5] = {1, -2, 7, 3, 6};
    cr_expect(cfx_vec_max_f64(d, 5) == 7);
}

/* Masked attention: -inf entries get exactly 0 (log_softmax: -inf), a fully masked row NaN, as
 * in PyTorch (softmax of [-inf, -inf] is [nan, nan]). */
Test(kernels_float, softmax_of_masked_rows)
{
    cfx_scope s = cfx_scope_begin();
    float v[2][20];
    for (int j = 0; j < 20; j++) {
        v[0][j] = j % 3 ? -INFINITY : (float)j / 10;
        v[1][j] = -INFINITY;
    }
    cfx_tensor *x = cfx_tensor_from_floats(&v[0][0], (const int64_t[]){2, 20}, 2);
    cfx_tensor *y = cfx_softmax(x, 1), *ly = cfx_log_softmax(x, 1);
    cr_assert(y && ly);
    double total = 0;
    for (int j = 0; j < 20; j++) {
        double p = cfx_tensor_get_double(y, j), lp = cfx_tensor_get_double(ly, j);
        cr_expect(j % 3 ? p == 0 && lp == -INFINITY : p > 0 && fabs(log(p) - lp) < 1e-6);
        cr_expect(isnan(cfx_tensor_get_double(y, 20 + j)));
        total += p;
    }
    cr_expect(fabs(total - 1) < 1e-6);
    cfx_scope_end(s);
}

static cfx_tensor *random_tensor(const int64_t *sizes, int ndim, uint64_t *rng)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= sizes[i];
    double *buf = malloc((size_t)n * sizeof *buf);
    for (int64_t i = 0; i < n; i++)
        buf[i] = (double)(test_rand(rng) >> 11) / 9007199254740992.0 - 0.5;
    cfx_tensor *t = cfx_tensor_from_doubles(buf, sizes, ndim);
    free(buf);
    return t;
}

/* sum(a * b) over two tensors of one shape, in row-major order */
static double inner(const cfx_tensor *a, const cfx_tensor *b)
{
    double r = 0;
    for (int64_t i = 0; i < cfx_tensor_numel(a); i++)
        r += cfx_tensor_get_double(a, i) * cfx_tensor_get_double(b, i);
    return r;
}

Test(kernels_float, conv_transpose_is_the_adjoint_of_conv)
{
    /* spatial dims, N, C, O, groups, in size, kernel, stride, padding, dilation */
    static const struct { int k; int64_t n, c, o, g, in, ker, s, p, d; } cases[] = {
        {2, 2, 4, 6, 2, 7, 3, 2, 1, 1}, {2, 1, 3, 3, 3, 6, 3, 1, 1, 2}, {2, 1, 2, 5, 1, 5, 1, 1, 0, 1},
        {1, 2, 3, 4, 1, 9, 3, 3, 2, 1}, {3, 1, 2, 4, 2, 5, 2, 2, 0, 1}, {2, 1, 2, 2, 1, 8, 2, 3, 0, 2},
    };
    uint64_t rng = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < COUNT_OF(cases); i++) {
        cfx_scope sc = cfx_scope_begin();
        int k = cases[i].k, nd = k + 2;
        int64_t xs[5] = {cases[i].n, cases[i].c}, ws[5] = {cases[i].o, cases[i].c / cases[i].g};
        int64_t out = (cases[i].in + 2 * cases[i].p - cases[i].d * (cases[i].ker - 1) - 1) / cases[i].s + 1;
        int64_t rem = (cases[i].in + 2 * cases[i].p - cases[i].d * (cases[i].ker - 1) - 1) % cases[i].s;
        int64_t ys[5] = {cases[i].n, cases[i].o};
        for (int d = 0; d < k; d++)
            xs[d + 2] = cases[i].in, ws[d + 2] = cases[i].ker, ys[d + 2] = out;
        cfx_tensor *x = random_tensor(xs, nd, &rng), *w = random_tensor(ws, nd, &rng);
        cfx_tensor *y = random_tensor(ys, nd, &rng);
        cfx_int_list st = cfx_ints(&cases[i].s, 1), pd = cfx_ints(&cases[i].p, 1), dl = cfx_ints(&cases[i].d, 1);
        int64_t zero = 0;
        cfx_tensor *cx = cfx_convolution(x, w, NULL, st, pd, dl, false, cfx_ints(&zero, 1), cases[i].g);
        /* output_padding = the rows the plain convolution dropped, so the sizes meet again */
        cfx_tensor *ty = cfx_convolution(y, w, NULL, st, pd, dl, true, cfx_ints(&rem, 1), cases[i].g);
        cr_assert(cx && ty, "case %d: %s", i, cfx_error_message());
        for (int d = 0; d < nd; d++)
            cr_assert(ty->sizes[d] == xs[d] && cx->sizes[d] == ys[d], "case %d: dim %d", i, d);
        double a = inner(cx, y), b = inner(x, ty);
        cr_expect(fabs(a - b) <= 1e-12 * (1 + fabs(a)), "case %d: <conv x, y> = %.17g, <x, conv_t y> = %.17g", i, a,
                  b);
        cfx_scope_end(sc);
    }
}
