/* test_complex.c - the complex dtypes (complex64, complex128) and the FFT engine.
 *
 * Expected texts and values are PyTorch 2.13's answers to the same calls (python3 with
 * torch 2.13: repr(), promote_types, result_type, the arithmetic, the error texts). The FFT
 * engine is checked against a direct O(n^2) DFT in long double for every length 1..70 and a
 * few large primes and powers of two; the ops themselves against PyTorch in
 * tests/data/ops_fft_cases.json (test_ops_golden.c). */
#include <complex.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/kernels/fft.h"
#include "dispatch/kernels/iter.h"
#include "ir/safetensors.h"

static void clear_error(void) { cfx_error_clear(); }

TestSuite(complex_dtype, .init = clear_error);

static char *repr(const cfx_tensor *t)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_tensor_print(t, &b);
    return cfx_buf_take(&b);
}

/* A CPU complex tensor of shape sizes from n (re, im) pairs. */
static cfx_tensor *cplx(cfx_dtype dt, const int64_t *sizes, int nd, const double *pairs, int64_t n)
{
    cfx_tensor *t = cfx_tensor_new(sizes, nd, dt, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert_not_null(t);
    for (int64_t i = 0; i < 2 * n; i++) {
        if (dt == CFX_COMPLEX64)
            ((float *)cfx_tensor_data(t))[i] = (float)pairs[i];
        else
            ((double *)cfx_tensor_data(t))[i] = pairs[i];
    }
    return t;
}

static void expect_repr(const cfx_tensor *t, const char *want)
{
    char *s = repr(t);
    cr_expect_str_eq(s, want);
    free(s);
}

Test(complex_dtype, names_sizes_parse)
{
    cr_expect_str_eq(cfx_dtype_torch_name(CFX_COMPLEX64), "torch.complex64");
    cr_expect_str_eq(cfx_dtype_torch_name(CFX_COMPLEX128), "torch.complex128");
    cr_expect_str_eq(cfx_dtype_scalar_name(CFX_COMPLEX64), "ComplexFloat");
    cr_expect_str_eq(cfx_dtype_scalar_name(CFX_COMPLEX128), "ComplexDouble");
    cr_expect_eq(cfx_dtype_size(CFX_COMPLEX64), 8);
    cr_expect_eq(cfx_dtype_size(CFX_COMPLEX128), 16);
    cr_expect(!cfx_dtype_is_floating(CFX_COMPLEX64)); /* torch.complex64.is_floating_point is False */
    cr_expect(cfx_dtype_valid(9) && cfx_dtype_valid(10) && !cfx_dtype_valid(8));
    cfx_dtype d;
    cr_expect(cfx_dtype_parse("torch.cfloat", &d) && d == CFX_COMPLEX64);
    cr_expect(cfx_dtype_parse("complex128", &d) && d == CFX_COMPLEX128);
}

Test(complex_dtype, promote_types)
{
    /* torch.promote_types(x, complex64) and (x, complex128) for every real dtype */
    const cfx_dtype real[] = {CFX_BOOL, CFX_UINT8, CFX_INT8, CFX_INT16, CFX_INT32, CFX_INT64, CFX_FLOAT32};
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        cr_expect_eq(cfx_dtype_promote(real[i], CFX_COMPLEX64), CFX_COMPLEX64);
        cr_expect_eq(cfx_dtype_promote(CFX_COMPLEX128, real[i]), CFX_COMPLEX128);
    }
    cr_expect_eq(cfx_dtype_promote(CFX_FLOAT64, CFX_COMPLEX64), CFX_COMPLEX128);
    cr_expect_eq(cfx_dtype_promote(CFX_COMPLEX64, CFX_COMPLEX128), CFX_COMPLEX128);
    cr_expect(!cfx_dtype_can_cast(CFX_COMPLEX64, CFX_FLOAT64));
    cr_expect(cfx_dtype_can_cast(CFX_FLOAT64, CFX_COMPLEX64));
}

Test(complex_dtype, result_type_categories)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2;
    cfx_tensor *f32 = cfx_tensor_new(&two, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *f64 = cfx_tensor_new(&two, 1, CFX_FLOAT64, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *i64 = cfx_tensor_new(&two, 1, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *c64_0 = cfx_tensor_new(NULL, 0, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *c128_0 = cfx_tensor_new(NULL, 0, CFX_COMPLEX128, cfx_device_make(CFX_DEVICE_CPU));
    struct {
        cfx_tensor *a, *b;
        cfx_dtype want;
    } cases[] = {
        {f32, c128_0, CFX_COMPLEX64},  /* a 0-dim complex keeps the float tensor's precision */
        {f64, c64_0, CFX_COMPLEX128},
        {i64, c128_0, CFX_COMPLEX128}, /* an integer tensor takes the complex dtype as is */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfx_result_type_state st = CFX_RESULT_TYPE_INIT;
        cfx_result_type_update(&st, cases[i].a);
        cfx_result_type_update(&st, cases[i].b);
        cr_expect_eq(cfx_result_type(&st), cases[i].want, "case %zu", i);
    }
    cfx_scope_end(s);
}

Test(complex_dtype, repr)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2, sq[2] = {2, 2};
    expect_repr(cplx(CFX_COMPLEX64, &two, 1, (const double[]){1, 2, 3, -4}, 2), "tensor([1.+2.j, 3.-4.j])");
    expect_repr(cplx(CFX_COMPLEX128, &two, 1, (const double[]){1.5, 2, -3, -4.25}, 2),
                "tensor([ 1.5000+2.0000j, -3.0000-4.2500j], dtype=torch.complex128)");
    expect_repr(cplx(CFX_COMPLEX64, sq, 2, (const double[]){1e-5, 2, 3, -4, 0, 0, -0.0, -1}, 4),
                "tensor([[1.0000e-05+2.j, 3.0000e+00-4.j],\n        [0.0000e+00+0.j, -0.0000e+00-1.j]])");
    expect_repr(cplx(CFX_COMPLEX64, NULL, 0, (const double[]){1, 1}, 1), "tensor(1.+1.j)");
    int64_t zero = 0;
    expect_repr(cfx_tensor_new(&zero, 1, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU)),
                "tensor([], dtype=torch.complex64)");
    expect_repr(cfx_tensor_new(&two, 1, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_META)),
                "tensor(..., device='meta', size=(2,), dtype=torch.complex64)");
    /* 30 values (k + kj): rows of 8, the real parts right-aligned, the imaginary ones not */
    double v[60];
    for (int k = 0; k < 30; k++)
        v[2 * k] = v[2 * k + 1] = k;
    int64_t thirty = 30;
    expect_repr(cplx(CFX_COMPLEX64, &thirty, 1, v, 30),
                "tensor([ 0.+0.j,  1.+1.j,  2.+2.j,  3.+3.j,  4.+4.j,  5.+5.j,  6.+6.j,  7.+7.j,\n"
                "         8.+8.j,  9.+9.j, 10.+10.j, 11.+11.j, 12.+12.j, 13.+13.j, 14.+14.j, 15.+15.j,\n"
                "        16.+16.j, 17.+17.j, 18.+18.j, 19.+19.j, 20.+20.j, 21.+21.j, 22.+22.j, 23.+23.j,\n"
                "        24.+24.j, 25.+25.j, 26.+26.j, 27.+27.j, 28.+28.j, 29.+29.j])");
    cfx_scope_end(s);
}

/* element i of a complex64 tensor */
static double _Complex at64(const cfx_tensor *t, int64_t i) { return ((const float _Complex *)cfx_tensor_data(t))[i]; }

static void expect_values(const cfx_tensor *t, const double *pairs, int n, double tol)
{
    cr_assert_not_null(t, "%s", cfx_error_message());
    cr_expect_eq(t->dtype, CFX_COMPLEX64);
    for (int i = 0; i < n; i++) {
        double _Complex g = at64(t, i);
        cr_expect(fabs(creal(g) - pairs[2 * i]) <= tol && fabs(cimag(g) - pairs[2 * i + 1]) <= tol,
                  "[%d] = %g%+gj, want %g%+gj", i, creal(g), cimag(g), pairs[2 * i], pairs[2 * i + 1]);
    }
}

Test(complex_dtype, arithmetic)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2;
    cfx_tensor *a = cplx(CFX_COMPLEX64, &two, 1, (const double[]){1, 2, 3, -4}, 2);
    cfx_tensor *b = cplx(CFX_COMPLEX64, &two, 1, (const double[]){0.5, -1, 2, 0.25}, 2);
    expect_values(cfx_add(a, b), (const double[]){1.5, 1, 5, -3.75}, 2, 0);
    expect_values(cfx_mul(a, b), (const double[]){2.5, 0, 7, -7.25}, 2, 0);
    expect_values(cfx_div(a, b), (const double[]){-1.2000000476837158, 1.600000023841858, 1.2307692766189575,
                                                  -2.153846263885498}, 2, 1e-6);
    expect_values(cfx_neg(a), (const double[]){-1, -2, -3, 4}, 2, 0);
    expect_values(cfx_sub(a, b, cfx_int(2)), (const double[]){0, 4, -1, -4.5}, 2, 0);
    /* complex64 * float32 is complex64; + a float64 tensor complex128 */
    float re[2] = {1, 2};
    cfx_tensor *f = cfx_tensor_from_floats(re, &two, 1);
    cr_expect_eq(cfx_mul(f, a)->dtype, CFX_COMPLEX64);
    cfx_tensor *d = cfx_to(f, CFX_FLOAT64);
    cr_expect_eq(cfx_add(a, d)->dtype, CFX_COMPLEX128);
    /* torch: result type ComplexFloat can't be cast to the desired output type Float */
    cr_expect_null(cfx_add_(f, a));
    cr_expect_str_eq(cfx_error_message(), "result type ComplexFloat can't be cast to the desired output type Float");
    cfx_error_clear();
    cfx_scope_end(s);
}

static void capture(const char *message, void *ctx)
{
    cfx_buf_puts(ctx, message);
}

Test(complex_dtype, conversions)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2;
    float re[2] = {1.5f, -2};
    cfx_tensor *c = cfx_to(cfx_tensor_from_floats(re, &two, 1), CFX_COMPLEX64);
    expect_values(c, (const double[]){1.5, 0, -2, 0}, 2, 0);
    char *r = repr(c);
    cr_expect_str_eq(r, "tensor([ 1.5000+0.j, -2.0000+0.j])");
    free(r);
    cfx_tensor *a = cplx(CFX_COMPLEX64, &two, 1, (const double[]){1, 2, 3, -4}, 2);
    cfx_buf warn;
    cfx_buf_init(&warn);
    cfx_set_warning_handler(capture, &warn);
    cfx_tensor *i = cfx_to(a, CFX_INT64); /* the real parts: tensor([1, 3]) */
    cfx_set_warning_handler(NULL, NULL);
    cr_assert_not_null(i);
    cr_expect_eq(((int64_t *)cfx_tensor_data(i))[0], 1);
    cr_expect_eq(((int64_t *)cfx_tensor_data(i))[1], 3);
    /* TORCH_WARN_ONCE: the first such cast in the process warns (each test is a process of its own) */
    cr_assert_not_null(warn.data);
    cr_expect_str_eq(warn.data, "Casting complex values to real discards the imaginary part");
    cfx_buf_free(&warn);
    cfx_scope_end(s);
}

Test(complex_dtype, unsupported_kernels_refuse)
{
    cfx_scope s = cfx_scope_begin();
    int64_t sizes[2] = {2, 3};
    double v[12] = {0};
    cfx_tensor *a = cplx(CFX_COMPLEX64, sizes, 2, v, 6);
    cr_expect_null(cfx_max_dim(a, 0).values);
    cr_expect_str_eq(cfx_error_message(), "max(): does not support complex input");
    cfx_error_clear();
    cr_expect_null(cfx_amax(a, CFX_INTS(0)));
    cr_expect_str_eq(cfx_error_message(), "\"max_values_cpu\" not implemented for 'ComplexFloat'");
    cfx_error_clear();
    cr_expect_null(cfx_relu(a)); /* relu is clamp_min(0): 2.13's NotImplementedError */
    cr_expect_str_eq(cfx_error_message(), "clamp is not supported for complex types");
    cr_expect_eq(cfx_error_status(), CFX_ERR_NOTIMPL);
    cfx_error_clear();
    cfx_scope_end(s);
}

Test(complex_dtype, safetensors)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2;
    cfx_tensor *a = cplx(CFX_COMPLEX64, &two, 1, (const double[]){1, 2, 3, -4}, 2);
    const char *names[] = {"a"};
    void *bytes = NULL;
    size_t len = 0;
    cr_assert_eq(cfx_safetensors_write_bytes(names, &a, 1, NULL, 0, &bytes, &len), CFX_OK);
    /* safetensors.torch.save({'a': ...}) writes this header */
    const char *header = "{\"a\":{\"dtype\":\"C64\",\"shape\":[2],\"data_offsets\":[0,16]}}";
    cr_assert_gt(len, 8 + strlen(header));
    cr_expect(!strncmp((const char *)bytes + 8, header, strlen(header))); /* after the u64 length */
    cfx_safetensors *st = cfx_safetensors_read_bytes(bytes, len);
    cr_assert_not_null(st, "%s", cfx_error_message());
    expect_values(cfx_safetensors_tensor(st, 0), (const double[]){1, 2, 3, -4}, 2, 0);
    cfx_safetensors_free(st);
    free(bytes);
    cfx_tensor *b = cplx(CFX_COMPLEX128, &two, 1, (const double[]){1, 2, 3, -4}, 2);
    cr_expect_neq(cfx_safetensors_write_bytes(names, &b, 1, NULL, 0, &bytes, &len), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "complex128") != NULL, "%s", cfx_error_message());
    cfx_error_clear();
    cfx_scope_end(s);
}

/* The engine against the definition, for every kind of length (powers of two: radix-2; the
 * rest: Bluestein). */
static double dft_error(int64_t n, bool forward)
{
    double _Complex *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    cr_assert(x && y);
    for (int64_t k = 0; k < n; k++)
        x[k] = y[k] = sin(0.7 * (double)k + 0.1) + cos(1.3 * (double)k * (double)k) * I;
    cr_assert(cfx_fft_1d(y, n, forward));
    double worst = 0, norm = 0;
    for (int64_t f = 0; f < n; f++) {
        long double re = 0, im = 0;
        for (int64_t k = 0; k < n; k++) {
            long double a = (forward ? -2 : 2) * 3.14159265358979323846264338327950288L * (long double)((f * k) % n) /
                            (long double)n;
            re += creal(x[k]) * cosl(a) - cimag(x[k]) * sinl(a);
            im += creal(x[k]) * sinl(a) + cimag(x[k]) * cosl(a);
        }
        double e = cabs(y[f] - ((double)re + (double)im * I));
        worst = e > worst ? e : worst;
        norm = fmax(norm, hypot((double)re, (double)im));
    }
    free(x);
    free(y);
    return worst / (norm > 0 ? norm : 1);
}

Test(complex_dtype, fft_engine_matches_dft)
{
    for (int64_t n = 1; n <= 70; n++)
        cr_expect_leq(dft_error(n, n % 2 == 0), 1e-13, "n = %lld", (long long)n);
    const int64_t big[] = {97, 128, 257, 1000, 1024, 1031};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        cr_expect_leq(dft_error(big[i], true), 1e-12, "n = %lld", (long long)big[i]);
}

Test(complex_dtype, fft_errors)
{
    cfx_scope s = cfx_scope_begin();
    int64_t sizes[2] = {3, 4};
    float v[12] = {0};
    cfx_tensor *x = cfx_tensor_from_floats(v, sizes, 2);
    cr_expect_null(cfx__fft_r2c(x, CFX_INTS(2), 0, true));
    cr_expect(strstr(cfx_error_message(), "out of range") != NULL, "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_null(cfx__fft_r2c(x, CFX_INTS(1, 1), 0, true));
    cr_expect(strstr(cfx_error_message(), "repeated") != NULL, "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_null(cfx__fft_c2c(x, CFX_INTS(0), 0, true));
    cr_expect_str_eq(cfx_error_message(), "Only supports complex dtypes, but found: Float");
    cfx_error_clear();
    cfx_tensor *c = cfx__fft_r2c(x, CFX_INTS(1), 0, true); /* [3, 3] complex */
    cr_assert_not_null(c);
    cr_expect_null(cfx__fft_c2r(c, CFX_INTS(1), 0, 9)); /* 3 entries: last_dim_size 4 or 5 (or 3) */
    cr_expect(strstr(cfx_error_message(), "last_dim_size") != NULL, "%s", cfx_error_message());
    cfx_error_clear();
    cfx_scope_end(s);
}
