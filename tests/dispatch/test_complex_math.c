/* test_complex_math.c - abs, angle and the reductions sum/mean/prod/var/std on complex tensors.
 *
 * Expected values, dtypes, strides and texts are PyTorch 2.13's answers to the same calls
 * (python3: torch.abs(c), c.t().angle(), torch.var(c, 1), ... on the tensor below); the
 * many-layout and dtype= coverage is in tests/data/ops_fft_cases.json (test_ops_golden.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_golden.h"

static void clear_error(void) { cfx_error_clear(); }

TestSuite(complex_math, .init = clear_error);

/* [[1+2j, -3+4j, 0.5-1j], [2-2j, 0j, -1.5+0.25j]] as complex64 */
static cfx_tensor *sample(void)
{
    static const float v[12] = {1, 2, -3, 4, 0.5f, -1, 2, -2, 0, 0, -1.5f, 0.25f};
    int64_t sizes[2] = {2, 3};
    cfx_tensor *t = cfx_tensor_new(sizes, 2, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert_not_null(t);
    float *d = cfx_tensor_data(t);
    for (int i = 0; i < 12; i++)
        d[i] = v[i];
    return t;
}

/* t's n float values against want (1e-4 relative, as the printed digits) */
static void expect_floats(cfx_tensor *t, cfx_dtype dt, const double *want, int n)
{
    cr_assert_not_null(t, "%s", cfx_error_message());
    cr_expect_eq(t->dtype, dt, "dtype %s", cfx_dtype_torch_name((cfx_dtype)t->dtype));
    cr_assert_eq(cfx_tensor_numel(t) * (cfx_dtype_is_complex(dt) ? 2 : 1), n);
    cfx_tensor *c = cfx_contiguous(t);
    cr_assert_not_null(c);
    const float *f = cfx_tensor_data(c);
    for (int i = 0; i < n; i++)
        cr_expect(fabs(f[i] - want[i]) <= 1e-4 * fmax(1, fabs(want[i])), "[%d] %g != %g", i, f[i], want[i]);
}

static void expect_strides(const cfx_tensor *t, int64_t s0, int64_t s1)
{
    cr_assert_eq(t->ndim, 2);
    cr_expect(t->strides[0] == s0 && t->strides[1] == s1, "strides (%lld, %lld)", (long long)t->strides[0],
              (long long)t->strides[1]);
}

Test(complex_math, abs_is_real_in_the_inputs_layout)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    cfx_tensor *a = cfx_abs(c);
    expect_floats(a, CFX_FLOAT32, (const double[]){2.2361, 5, 1.1180, 2.8284, 0, 1.5207}, 6);
    expect_strides(a, 3, 1);
    cfx_tensor *at = cfx_abs(cfx_t(c)); /* empty_like(self): the transposed layout stays */
    cr_assert_not_null(at);
    expect_strides(at, 1, 3);
    cr_expect_null(cfx_abs_(c));
    cr_expect_str_eq(cfx_error_message(), "In-place abs is not supported for complex tensors.");
    cfx_scope_end(s);
}

Test(complex_math, angle_complex_and_real)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    expect_floats(cfx_angle(c), CFX_FLOAT32, (const double[]){1.1071, 2.2143, -1.1071, -0.7854, 0, 2.9764}, 6);
    cfx_tensor *at = cfx_angle(cfx_t(c)); /* angle_out's resize_output: contiguous */
    cr_assert_not_null(at);
    expect_strides(at, 2, 1);
    int64_t four = 4;
    cfx_tensor *r = cfx_tensor_new(&four, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    float *d = cfx_tensor_data(r);
    d[0] = -1, d[1] = 2, d[2] = NAN, d[3] = -0.0f; /* pi, 0, nan, 0 (-0.0 is not negative) */
    cfx_tensor *ar = cfx_angle(r);
    cr_assert_not_null(ar);
    const float *o = cfx_tensor_data(ar);
    cr_expect(fabsf(o[0] - 3.14159265f) < 1e-6f && o[1] == 0 && isnan(o[2]) && o[3] == 0 && !signbit(o[3]));
    cfx_scope_end(s);
}

Test(complex_math, reductions_keep_complex)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    expect_floats(cfx_sum_all(c, cfx_none()), CFX_COMPLEX64, (const double[]){-1, 3.25}, 2);
    expect_floats(cfx_sum(c, CFX_INTS(0)), CFX_COMPLEX64, (const double[]){3, 0, -3, 4, -1, -0.75}, 6);
    expect_floats(cfx_mean_all(c, cfx_none()), CFX_COMPLEX64, (const double[]){-0.16667, 0.54167}, 2);
    expect_floats(cfx_mean(c, CFX_INTS(1), true), CFX_COMPLEX64, (const double[]){-0.5, 1.66667, 0.16667, -0.58333},
                  4);
    expect_floats(cfx_prod(c, 1), CFX_COMPLEX64, (const double[]){-7.5, 10, 0, 0}, 4);
    /* dtype=: a complex sum into complex128, a real one into complex64 */
    cfx_tensor *wide = cfx_sum(c, CFX_INTS(0), false, cfx_dtype_value(CFX_COMPLEX128));
    cr_assert_not_null(wide);
    cr_expect_eq(wide->dtype, CFX_COMPLEX128);
    cfx_tensor *m = cfx_mean(cfx_real(c), CFX_INTS(1), false, cfx_dtype_value(CFX_COMPLEX64));
    expect_floats(m, CFX_COMPLEX64, (const double[]){-0.5, 0, 0.16667, 0}, 4);
    cfx_scope_end(s);
}

Test(complex_math, var_std_are_real)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    expect_floats(cfx_var(c, CFX_INTS(1)), CFX_FLOAT32, (const double[]){11.0833, 4.6042}, 2);
    expect_floats(cfx_std(c, CFX_INTS(1)), CFX_FLOAT32, (const double[]){3.3292, 2.1457}, 2);
    expect_floats(cfx_var(c), CFX_FLOAT32, (const double[]){7.9271}, 1);
    /* the fake kernel agrees on the dtype */
    cfx_tensor *meta = cfx_tensor_new(c->sizes, 2, CFX_COMPLEX128, cfx_device_make(CFX_DEVICE_META));
    cfx_tensor *v = cfx_var(meta, CFX_INTS(0), cfx_none(), true);
    cr_assert_not_null(v, "%s", cfx_error_message());
    cr_expect_eq(v->dtype, CFX_FLOAT64);
    cfx_scope_end(s);
}

Test(complex_math, still_refused)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    cr_expect_null(cfx_argmax(c));
    cr_expect_str_eq(cfx_error_message(), "argmax(): does not support complex input");
    cfx_scope_end(s);
}

/* any and all: a complex value is true when either part is nonzero (torch.any(c), torch.all(c),
 * torch.all(c, 1), torch.any(c, 0), torch.any(torch.tensor([0j, 1j, 0j])) in 2.13) */
Test(complex_math, any_all)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    const struct {
        cfx_tensor *got;
        int n;
        bool want[3];
    } cases[] = {
        {cfx_any(c), 1, {true}},
        {cfx_all(c), 1, {false}},
        {cfx_all_dim(c, 1), 2, {true, false}},
        {cfx_any_dim(c, 0), 3, {true, true, true}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cfx_tensor *t = cases[k].got;
        cr_assert_not_null(t, "case %zu: %s", k, cfx_error_message());
        cr_assert_eq(t->dtype, CFX_BOOL);
        cr_assert_eq(cfx_tensor_numel(t), cases[k].n);
        for (int i = 0; i < cases[k].n; i++)
            cr_expect_eq(((const bool *)cfx_tensor_data(t))[i], cases[k].want[i], "case %zu [%d]", k, i);
    }
    int64_t three = 3;
    cfx_tensor *im = cfx_tensor_new(&three, 1, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert_not_null(im);
    float *d = cfx_tensor_data(im);
    memset(d, 0, 6 * sizeof *d);
    d[3] = 1; /* [0j, 1j, 0j]: only an imaginary part */
    cfx_tensor *a = cfx_any(im), *l = cfx_all(im);
    cr_assert(a && l, "%s", cfx_error_message());
    cr_expect(*(const bool *)cfx_tensor_data(a));
    cr_expect(!*(const bool *)cfx_tensor_data(l));
    cfx_scope_end(s);
}

/* A CPU tensor of n float32 values (2n for complex64: real, imaginary pairs). */
static cfx_tensor *filled(cfx_dtype dt, int64_t n, const float *v)
{
    cfx_tensor *t = cfx_tensor_new(&n, 1, dt, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert_not_null(t);
    float *d = cfx_tensor_data(t);
    for (int64_t i = 0; i < (dt == CFX_COMPLEX64 ? 2 * n : n); i++)
        d[i] = v[i];
    return t;
}

/* torch.complex(a, b) and torch.polar(a, b): complex64 from float32, as the iterator lays out */
Test(complex_math, complex_and_polar)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = filled(CFX_FLOAT32, 2, (const float[]){1, 2}), *b = filled(CFX_FLOAT32, 2, (const float[]){0.5f, -1});
    expect_floats(cfx_complex(a, b), CFX_COMPLEX64, (const double[]){1, 0.5, 2, -1}, 4);
    expect_floats(cfx_polar(a, b), CFX_COMPLEX64, (const double[]){0.87758, 0.47943, 1.08060, -1.68294}, 4);
    cfx_tensor *l = cfx_tensor_new((const int64_t[]){2}, 1, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    cr_expect_null(cfx_complex(l, b));
    cr_expect_str_eq(cfx_error_message(), "Expected both inputs to be Half, Float or Double tensors but got Long and Float");
    cfx_error_clear();
    cfx_tensor *f64 = cfx_tensor_new((const int64_t[]){2}, 1, CFX_FLOAT64, cfx_device_make(CFX_DEVICE_CPU));
    cr_expect_null(cfx_polar(a, f64));
    cr_expect_str_eq(cfx_error_message(), "Expected object of scalar type Float but got scalar type Double for second argument");
    cfx_error_clear();
    /* the meta kernel (meta_complex) promotes instead, and has its own texts */
    cfx_tensor *ma = cfx_tensor_new((const int64_t[]){2}, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
    cfx_tensor *mb = cfx_tensor_new((const int64_t[]){2}, 1, CFX_FLOAT64, cfx_device_make(CFX_DEVICE_META));
    cfx_tensor *m = cfx_complex(ma, mb);
    cr_assert_not_null(m, "%s", cfx_error_message());
    cr_expect_eq(m->dtype, CFX_COMPLEX128);
    cfx_tensor *ml = cfx_tensor_new((const int64_t[]){2}, 1, CFX_INT64, cfx_device_make(CFX_DEVICE_META));
    cr_expect_null(cfx_complex(ml, mb));
    cr_expect_str_eq(cfx_error_message(), "real must be floating point, got torch.int64");
    cfx_scope_end(s);
}

/* ---- conjugate views ------------------------------------------------------------------------ */

static void expect_repr(const cfx_tensor *t, const char *want)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_tensor_print(t, &b);
    cr_expect_str_eq(b.data, want);
    cfx_buf_free(&b);
}

Test(complex_math, conj_is_a_view_with_the_bit)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2;
    cfx_tensor *c = filled(CFX_COMPLEX64, 2, (const float[]){1, 2, 3, -4});
    cfx_tensor *v = cfx_conj(c);
    cr_assert_not_null(v, "%s", cfx_error_message());
    cr_expect(cfx_is_conj(v) && !cfx_is_conj(c));
    cr_expect_eq(cfx_tensor_data(v), cfx_tensor_data(c)); /* the same data: a view */
    expect_repr(v, "tensor([1.-2.j, 3.+4.j])");
    cr_expect(!cfx_is_conj(cfx_conj(v))); /* _conj flips the bit back */
    cfx_tensor *r = cfx_resolve_conj(v); /* a clone holding the conjugated values */
    cr_assert_not_null(r);
    cr_expect(!cfx_is_conj(r) && cfx_tensor_data(r) != cfx_tensor_data(c));
    expect_repr(r, "tensor([1.-2.j, 3.+4.j])");
    expect_repr(cfx_conj_physical(c), "tensor([1.-2.j, 3.+4.j])");
    expect_repr(cfx_conj_physical(v), "tensor([1.+2.j, 3.-4.j])");
    /* an op without conj support sees the resolved values (the fallback's clone) */
    expect_repr(cfx_mul(v, c), "tensor([ 5.+0.j, 25.+0.j])");
    expect_repr(cfx_abs(cfx_add(v, v)), "tensor([ 4.4721, 10.0000])");
    /* a list argument: its conjugate views are cloned (torch.cat([c.conj(), c])) */
    expect_repr(cfx_cat(CFX_TENSORS(v, c)), "tensor([1.-2.j, 3.+4.j, 1.+2.j, 3.-4.j])");
    cr_expect_null(cfx_view_as_real(v));
    cr_expect(strstr(cfx_error_message(), "view_as_real doesn't work on unresolved conjugated tensors.") != NULL);
    cfx_error_clear();
    /* a real tensor is its own conjugate */
    cfx_tensor *x = cfx_tensor_new(&two, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cr_expect_eq(cfx_conj(x), x);
    cr_expect_eq(cfx_conj_physical(x), x);
    cfx_scope_end(s);
}

Test(complex_math, copy_into_a_conjugate_view)
{
    cfx_scope s = cfx_scope_begin();
    int64_t two = 2;
    cfx_tensor *c = cfx_tensor_new(&two, 1, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *src = filled(CFX_COMPLEX64, 2, (const float[]){1, 2, 3, -4});
    cfx_tensor *v = cfx_conj(c);
    cr_assert_not_null(cfx_copy_(v, src));
    expect_repr(v, "tensor([1.+2.j, 3.-4.j])");
    expect_repr(c, "tensor([1.-2.j, 3.+4.j])"); /* the base holds the conjugates */
    /* an in-place op on a conjugate view: computed on its clone, copied back */
    cr_assert_not_null(cfx_add_(v, src), "%s", cfx_error_message());
    expect_repr(v, "tensor([2.+4.j, 6.-8.j])");
    expect_repr(c, "tensor([2.-4.j, 6.+8.j])");
    cfx_scope_end(s);
}

static cfx_tensor *ifft_prog(cfx_tensor *x) { return cfx_fft_ifft(x); }
static cfx_tensor *conj_mul_prog(cfx_tensor *c) { return cfx_mul(cfx_conj(c), c); }

/* make_fx(lambda x: torch.fft.ifft(x)) and make_fx(lambda c: c.conj() * c) in 2.13 */
Test(complex_math, make_fx_records_conj_and_its_clone)
{
    cfx_scope s = cfx_scope_begin();
    int64_t eight = 8, four = 4;
    cfx_tensor *x = cfx_tensor_new(&eight, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *c = cfx_tensor_new(&four, 1, CFX_COMPLEX64, cfx_device_make(CFX_DEVICE_CPU));
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        char *code = traced_code((cfx_fnptr)ifft_prog, x, (cfx_tracing_mode)mode);
        cr_expect_str_eq(code, "\n\n\ndef forward(self, x_1):\n"
                               "    _fft_r2c = torch.ops.aten._fft_r2c.default(x_1, [0], 2, False);  x_1 = None\n"
                               "    _conj = torch.ops.aten._conj.default(_fft_r2c);  _fft_r2c = None\n"
                               "    return _conj\n    ");
        free(code);
        code = traced_code((cfx_fnptr)conj_mul_prog, c, (cfx_tracing_mode)mode);
        cr_expect_str_eq(code, "\n\n\ndef forward(self, x_1):\n"
                               "    _conj = torch.ops.aten._conj.default(x_1)\n"
                               "    clone = torch.ops.aten.clone.default(_conj);  _conj = None\n"
                               "    mul = torch.ops.aten.mul.Tensor(clone, x_1);  clone = x_1 = None\n"
                               "    return mul\n    ");
        free(code);
    }
    cfx_scope_end(s);
}

Test(complex_math, ifft_of_a_real_input)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = filled(CFX_FLOAT32, 4, (const float[]){1, 2, 0, -1});
    cfx_tensor *r = cfx_fft_ifft(x); /* torch.fft.ifft(torch.tensor([1., 2, 0, -1])) */
    cr_assert_not_null(r, "%s", cfx_error_message());
    cr_expect(cfx_is_conj(r));
    expect_repr(r, "tensor([0.5000-0.0000j, 0.2500+0.7500j, 0.0000-0.0000j, 0.2500-0.7500j])");
    cfx_scope_end(s);
}
