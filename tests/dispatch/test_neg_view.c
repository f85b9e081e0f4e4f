/* test_neg_view.c - negative views (the Negative key, dispatch/neg.h): `_neg_view`,
 * `resolve_neg`, `conj(c).imag`, the fallback's clones and copy-backs, and what make_fx records.
 *
 * Every expected repr, stride and graph is PyTorch 2.13's answer to the same calls (python3:
 * torch.conj(c).imag, torch._neg_view(x), make_fx(lambda x: torch.conj(x).imag.clone()), ...);
 * op-level cases (dtypes, layouts, Meta) are in tests/data/ops_breadth_cases.json. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_golden.h"

static void clear_error(void) { cfx_error_clear(); }

TestSuite(neg_view, .init = clear_error);

/* a 1-d CPU tensor of dtype dt holding v (complex: real, imaginary pairs) */
static cfx_tensor *filled(cfx_dtype dt, int64_t n, const double *v)
{
    cfx_tensor *t = cfx_tensor_new(&n, 1, dt, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert_not_null(t);
    void *d = cfx_tensor_data(t);
    for (int64_t i = 0; i < (cfx_dtype_is_complex(dt) ? 2 * n : n); i++)
        switch (dt) {
        case CFX_COMPLEX64:
        case CFX_FLOAT32: ((float *)d)[i] = (float)v[i]; break;
        case CFX_FLOAT64: ((double *)d)[i] = v[i]; break;
        case CFX_INT8: ((int8_t *)d)[i] = (int8_t)v[i]; break;
        case CFX_UINT8: ((uint8_t *)d)[i] = (uint8_t)v[i]; break;
        default: cr_assert_fail("dtype");
        }
    return t;
}

static void expect_repr(const cfx_tensor *t, const char *want)
{
    cr_assert_not_null(t, "%s", cfx_error_message());
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_tensor_print(t, &b);
    cr_expect_str_eq(b.data, want);
    cfx_buf_free(&b);
}

static cfx_tensor *sample(void) { return filled(CFX_COMPLEX64, 3, (const double[]){1, 2, 3, -4, -5, 6}); }

Test(neg_view, conj_imag_is_a_negative_view)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    cfx_tensor *i = cfx_imag(cfx_conj(c));
    cr_assert_not_null(i, "%s", cfx_error_message());
    cr_expect(cfx_is_neg(i) && !cfx_is_conj(i));
    cr_expect(i->dtype == CFX_FLOAT32 && i->strides[0] == 2 && i->storage_offset == 1 && i->storage == c->storage);
    expect_repr(i, "tensor([-2.,  4., -6.])");
    cfx_tensor *re = cfx_real(cfx_conj(c));
    cr_expect(!cfx_is_neg(re));
    expect_repr(re, "tensor([ 1.,  3., -5.])");
    cfx_tensor *r = cfx_resolve_neg(i); /* a clone holding the values */
    cr_assert_not_null(r);
    cr_expect(!cfx_is_neg(r) && r->storage != c->storage && r->strides[0] == 1);
    expect_repr(r, "tensor([-2.,  4., -6.])");
    cr_expect_eq(cfx_resolve_neg(c), c); /* no bit: the tensor itself */
    /* ops without neg support see the fallback's clone */
    expect_repr(cfx_add(i, cfx_num(1)), "tensor([-1.,  5., -5.])");
    expect_repr(cfx_mul(i, i), "tensor([ 4., 16., 36.])");
    /* the bits compose: _neg_view(conj(c)).imag is not negative */
    cfx_tensor *nc = cfx__neg_view(cfx_conj(c));
    expect_repr(nc, "tensor([-1.+2.j, -3.-4.j,  5.+6.j])");
    cfx_tensor *ni = cfx_imag(nc);
    cr_assert_not_null(ni, "%s", cfx_error_message());
    cr_expect(!cfx_is_neg(ni));
    expect_repr(ni, "tensor([ 2., -4.,  6.])");
    cfx_scope_end(s);
}

Test(neg_view, neg_view_flips_the_bit_and_clone_materialises_it)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = filled(CFX_FLOAT32, 3, (const double[]){1, 2, -3});
    cfx_tensor *n = cfx__neg_view(x);
    cr_assert_not_null(n, "%s", cfx_error_message());
    cr_expect(cfx_is_neg(n) && !cfx_is_neg(x) && cfx_tensor_data(n) == cfx_tensor_data(x));
    cr_expect(!cfx_is_neg(cfx__neg_view(n)));
    expect_repr(cfx_exp(n), "tensor([ 0.3679,  0.1353, 20.0855])");
    expect_repr(cfx_exp(cfx__neg_view(n)), "tensor([2.7183, 7.3891, 0.0498])");
    expect_repr(cfx_cat(CFX_TENSORS(n, x)), "tensor([-1., -2.,  3.,  1.,  2., -3.])"); /* a list argument */
    expect_repr(cfx_clone(cfx__neg_view(filled(CFX_INT8, 2, (const double[]){1, -128}))),
                "tensor([  -1, -128], dtype=torch.int8)");
    expect_repr(cfx__neg_view(filled(CFX_UINT8, 2, (const double[]){3, 0})), "tensor([253,   0], dtype=torch.uint8)");
    expect_repr(cfx__neg_view(sample()), "tensor([-1.-2.j, -3.+4.j,  5.-6.j])");
    cfx_scope_end(s);
}

Test(neg_view, writes_through_a_negative_view)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = filled(CFX_FLOAT32, 2, (const double[]){1, 2});
    cfx_tensor *n = cfx__neg_view(x);
    cr_assert_not_null(cfx_copy_(n, filled(CFX_FLOAT32, 2, (const double[]){5, 6})), "%s", cfx_error_message());
    expect_repr(x, "tensor([-5., -6.])");
    expect_repr(n, "tensor([5., 6.])");
    cfx_tensor *y = filled(CFX_FLOAT64, 2, (const double[]){0, 0});
    cr_assert_not_null(cfx_copy_(y, n), "%s", cfx_error_message()); /* with a dtype change */
    expect_repr(y, "tensor([5., 6.], dtype=torch.float64)");
    /* an in-place op on a negative view: computed on its clone, copied back */
    cr_assert_not_null(cfx_add_(n, cfx_num(1)), "%s", cfx_error_message());
    expect_repr(x, "tensor([-6., -7.])");
    expect_repr(n, "tensor([6., 7.])");
    cfx_tensor *c = sample();
    cr_assert_not_null(cfx_mul_(cfx_imag(cfx_conj(c)), cfx_num(2)), "%s", cfx_error_message());
    expect_repr(c, "tensor([ 1.+4.j,  3.-8.j, -5.+12.j])");
    cfx_scope_end(s);
}

static cfx_tensor *imag_clone(cfx_tensor *x) { return cfx_clone(cfx_imag(cfx_conj(x))); }
static cfx_tensor *imag_resolve(cfx_tensor *x) { return cfx_resolve_neg(cfx_imag(cfx_conj(x))); }
static cfx_tensor *imag_mul_(cfx_tensor *x) { return cfx_mul_(cfx_imag(cfx_conj(x)), cfx_num(2)); }
static cfx_tensor *neg_mul(cfx_tensor *x) { return cfx_mul(cfx__neg_view(x), cfx_num(2)); }
static cfx_tensor *neg_conj_imag_exp(cfx_tensor *x) { return cfx_exp(cfx_imag(cfx__neg_view(cfx_conj(x)))); }

#define HEAD "\n\n\ndef forward(self, x_1):\n"
/* make_fx(...)(c) in 2.13, real and fake */
Test(neg_view, make_fx_records_neg_view_and_its_clone)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *c = sample();
    cfx_tensor *x = filled(CFX_FLOAT32, 3, (const double[]){1, 2, -3});
    static const char imag_clone_want[] =
        HEAD "    _conj = torch.ops.aten._conj.default(x_1);  x_1 = None\n"
             "    _conj_1 = torch.ops.aten._conj.default(_conj);  _conj = None\n"
             "    view_as_real = torch.ops.aten.view_as_real.default(_conj_1);  _conj_1 = None\n"
             "    _neg_view = torch.ops.aten._neg_view.default(view_as_real);  view_as_real = None\n"
             "    select = torch.ops.aten.select.int(_neg_view, 1, 1);  _neg_view = None\n"
             "    clone = torch.ops.aten.clone.default(select);  select = None\n"
             "    return clone\n    ";
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        char *code = traced_code((cfx_fnptr)imag_clone, c, (cfx_tracing_mode)mode);
        cr_expect_str_eq(code, imag_clone_want);
        free(code);
        code = traced_code((cfx_fnptr)imag_resolve, c, (cfx_tracing_mode)mode); /* resolve_neg is clone */
        cr_expect_str_eq(code, imag_clone_want);
        free(code);
        code = traced_code((cfx_fnptr)neg_mul, x, (cfx_tracing_mode)mode);
        cr_expect_str_eq(code, HEAD "    _neg_view = torch.ops.aten._neg_view.default(x_1);  x_1 = None\n"
                                    "    clone = torch.ops.aten.clone.default(_neg_view);  _neg_view = None\n"
                                    "    mul = torch.ops.aten.mul.Tensor(clone, 2);  clone = None\n"
                                    "    return mul\n    ");
        free(code);
        code = traced_code((cfx_fnptr)neg_conj_imag_exp, c, (cfx_tracing_mode)mode);
        cr_expect_str_eq(code,
                         HEAD "    _conj = torch.ops.aten._conj.default(x_1);  x_1 = None\n"
                              "    _neg_view = torch.ops.aten._neg_view.default(_conj);  _conj = None\n"
                              "    _conj_1 = torch.ops.aten._conj.default(_neg_view);  _neg_view = None\n"
                              "    view_as_real = torch.ops.aten.view_as_real.default(_conj_1);  _conj_1 = None\n"
                              "    _neg_view_1 = torch.ops.aten._neg_view.default(view_as_real);  view_as_real = None\n"
                              "    select = torch.ops.aten.select.int(_neg_view_1, 1, 1);  _neg_view_1 = None\n"
                              "    exp = torch.ops.aten.exp.default(select);  select = None\n"
                              "    return exp\n    ");
        free(code);
        /* an in-place op on the view: the fallback's clone, the op, the copy back */
        code = traced_code((cfx_fnptr)imag_mul_, c, (cfx_tracing_mode)mode);
        cr_expect_str_eq(code, HEAD "    _conj = torch.ops.aten._conj.default(x_1);  x_1 = None\n"
                                    "    _conj_1 = torch.ops.aten._conj.default(_conj);  _conj = None\n"
                                    "    view_as_real = torch.ops.aten.view_as_real.default(_conj_1);  _conj_1 = None\n"
                                    "    _neg_view = torch.ops.aten._neg_view.default(view_as_real);  view_as_real = None\n"
                                    "    select = torch.ops.aten.select.int(_neg_view, 1, 1);  _neg_view = None\n"
                                    "    clone = torch.ops.aten.clone.default(select)\n"
                                    "    mul_ = torch.ops.aten.mul_.Tensor(clone, 2);  clone = None\n"
                                    "    copy_ = torch.ops.aten.copy_.default(select, mul_);  select = mul_ = None\n"
                                    "    return copy_\n    ");
        free(code);
    }
    cfx_scope_end(s);
}
