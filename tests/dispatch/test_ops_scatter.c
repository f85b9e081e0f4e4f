/* test_ops_scatter.c - what the PyTorch goldens of this branch's operators (scatter_add,
 * scatter_reduce, cumsum_, conv*d.padding 'same' with an even kernel) cannot show: that the
 * temporaries of their decompositions are owned once (constant_pad_nd released its narrowed
 * view by hand although the open scope owned it too, and the scope then released a header
 * already reused by a later tensor), checked across several calls in one scope. */
#include <criterion/criterion.h>

#include "cfx.h"
#include "dispatch/tensor_internal.h"

TestSuite(ops_scatter, .init = cfx_error_clear);

Test(ops_scatter, constant_pad_nd_in_a_scope_owns_its_view_once)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_ones(CFX_INTS(2, 5));
    cfx_tensor *keep[4];
    for (int i = 0; i < 4; i++) {
        keep[i] = cfx_constant_pad_nd(x, CFX_INTS(-1, i), cfx_int(i));
        cr_assert_not_null(keep[i], "%s", cfx_error_message());
    }
    cfx_scope_end(s); /* released every header once: ASan reports a double release here */
    s = cfx_scope_begin();
    x = cfx_ones(CFX_INTS(2, 5));
    for (int i = 0; i < 4; i++) {
        keep[i] = cfx_constant_pad_nd(x, CFX_INTS(-1, i), cfx_int(i));
        cr_assert_eq(keep[i]->ndim, 2);
        cr_assert_eq(keep[i]->sizes[1], 4 + i);
    }
    for (int i = 0; i < 4; i++) /* still the results made above, not reused headers */
        cr_expect_eq(keep[i]->sizes[1], 4 + i, "result %d was overwritten", i);
    cfx_scope_end(s);
}

Test(ops_scatter, conv1d_same_even_kernel_unbatched_keeps_its_result)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *y = cfx_conv1d_padding(cfx_ones(CFX_INTS(3, 6)), cfx_ones(CFX_INTS(4, 3, 2)), NULL, CFX_INTS(1),
                                       "same");
    cr_assert_not_null(y, "%s", cfx_error_message());
    cr_assert_eq(y->ndim, 2);
    cr_expect_eq(y->sizes[0], 4);
    cr_expect_eq(y->sizes[1], 6);
    /* 2.13: every output sums 3 channels x 2 taps of ones, the last one tap of padding */
    const float *d = cfx_tensor_data(y);
    cr_expect_float_eq(d[0], 6.0f, 0);
    cr_expect_float_eq(d[5], 3.0f, 0);
    cfx_scope_end(s);
}
