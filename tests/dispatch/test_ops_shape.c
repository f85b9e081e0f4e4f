/* test_ops_shape.c - what the PyTorch goldens of the shape, creation and indexing ops cannot
 * show: cfx_getitem's own checks (Python's texts, raised before any operator runs) and values,
 * the random factories' samples (not PyTorch's stream, so no golden has their values), and
 * that a failed call leaks nothing. */
#include <criterion/criterion.h>
#include <math.h>

#include "cfx.h"

TestSuite(ops_shape, .init = cfx_error_clear);

static cfx_tensor *arange12(void)
{
    float d[12];
    for (int i = 0; i < 12; i++)
        d[i] = (float)i;
    return cfx_tensor_from_floats(d, (const int64_t[]){3, 4}, 2);
}

static void expect_error(cfx_tensor *r, const char *text)
{
    cr_expect_null(r);
    cr_expect_str_eq(cfx_error_message() ? cfx_error_message() : "(none)", text);
    cfx_error_clear();
}

Test(ops_shape, getitem_checks_as_python_indexing_does)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_autorelease(arange12());
    expect_error(cfx_getitem(x, CFX_I(0), CFX_I(0), CFX_I(0)), "too many indices for tensor of dimension 2");
    expect_error(cfx_getitem(x, CFX_I(3)), "index 3 is out of bounds for dimension 0 with size 3");
    expect_error(cfx_getitem(x, CFX_ALL, CFX_I(-5)), "index -5 is out of bounds for dimension 1 with size 4");
    expect_error(cfx_getitem(x, CFX_STEP(-1)), "step must be greater than zero");
    cfx_tensor *scalar = cfx_getitem(x, CFX_I(1), CFX_I(2));
    cr_assert_not_null(scalar, "%s", cfx_error_message());
    expect_error(cfx_getitem(scalar, CFX_I(0)),
                 "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                 "convert a 0-dim tensor to a number");
    cfx_scope_end(s);
}

Test(ops_shape, getitem_values_are_the_indexed_elements)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_autorelease(arange12());
    cfx_tensor *r = cfx_getitem(x, CFX_ALL, CFX_SLICE(1, 3)); /* x[:, 1:3] */
    cr_assert_not_null(r, "%s", cfx_error_message());
    cr_expect_eq(r->ndim, 2);
    cr_expect_eq(r->sizes[0], 3);
    cr_expect_eq(r->sizes[1], 2);
    cr_expect_eq(r->storage, x->storage, "a slice is a view");
    const double want[6] = {1, 2, 5, 6, 9, 10};
    for (int i = 0; i < 6; i++)
        cr_expect_eq(cfx_tensor_get_double(r, i), want[i]);
    cfx_tensor *i = cfx_autorelease(cfx_tensor_from_int64s((const int64_t[]){2, -3}, (const int64_t[]){2}, 1));
    cfx_tensor *g = cfx_getitem(x, CFX_IDX(i), CFX_I(3)); /* x[i, 3]: select first, then index */
    cr_assert_not_null(g, "%s", cfx_error_message());
    cr_expect_eq(g->ndim, 1);
    cr_expect_eq(cfx_tensor_get_double(g, 0), 11);
    cr_expect_eq(cfx_tensor_get_double(g, 1), 3);
    cr_expect_neq(g->storage, x->storage, "advanced indexing copies");
    cfx_scope_end(s);
}

/* rand is uniform in [0, 1), randn roughly standard normal; both really draw (two calls
 * differ), in the requested dtype. */
Test(ops_shape, random_factories_sample)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *u = cfx_rand(CFX_INTS(4000));
    cfx_tensor *n = cfx_randn(CFX_INTS(4000), cfx_dtype_value(CFX_FLOAT64));
    cfx_tensor *u2 = cfx_rand(CFX_INTS(4000));
    cr_assert(u && n && u2, "%s", cfx_error_message());
    cr_expect_eq(n->dtype, CFX_FLOAT64);
    double su = 0, sn = 0, sn2 = 0;
    bool differ = false;
    for (int64_t k = 0; k < 4000; k++) {
        double a = cfx_tensor_get_double(u, k), b = cfx_tensor_get_double(n, k);
        cr_assert(a >= 0 && a < 1, "rand gave %g", a);
        differ |= a != cfx_tensor_get_double(u2, k);
        su += a;
        sn += b;
        sn2 += b * b;
    }
    cr_expect(differ, "two rand calls gave the same samples");
    cr_expect(fabs(su / 4000 - 0.5) < 0.03, "rand mean %g", su / 4000);
    cr_expect(fabs(sn / 4000) < 0.08, "randn mean %g", sn / 4000);
    cr_expect(fabs(sn2 / 4000 - 1) < 0.1, "randn variance %g", sn2 / 4000);
    cfx_scope_end(s);
}

Test(ops_shape, failed_calls_leak_nothing)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_autorelease(arange12());
    cfx_tensor *t = cfx_transpose(x, 0, 1);
    cfx_tensor *i = cfx_autorelease(cfx_tensor_from_int64s((const int64_t[]){7}, (const int64_t[]){1}, 1));
    cr_expect_null(cfx_index(x, CFX_TENSORS(i)));
    cfx_error_clear();
    cr_expect_null(cfx_getitem(t, CFX_SLICE(0, 2), CFX_I(9)));
    cfx_error_clear();
    cr_expect_null(cfx_cat(CFX_TENSORS(x, t), 0)); /* [3, 4] and [4, 3] */
    cfx_error_clear();
    cr_expect_null(cfx_reshape(t, CFX_INTS(5, -1)));
    cfx_error_clear();
    cfx_scope_end(s);
    cr_expect_eq(cfx_tensor_live_count(), live0);
}
