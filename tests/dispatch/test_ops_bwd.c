/* test_ops_bwd.c - the backward and nn ops of tools/interop/ops_bwd_cases.py beyond their
 * golden cases (tests/dispatch/test_ops_golden.c): their opcheck samples really run (an op
 * whose every sample is rejected on both keys would pass opcheck having checked nothing). */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/opcheck.h"

static void ran_for_real(const char *name)
{
    cfx_dispatcher_init();
    const cfx_op *op = cfx_op_find(name);
    cr_assert(op, "%s is not registered", name);
    cfx_opcheck_report r;
    cr_assert_eq(cfx_opcheck_op(op, CFX_OPCHECK_ALL, &r), CFX_OK, "%s: %s", name, cfx_error_message());
    cr_expect_gt(r.n_ran, 0, "%s: no sample ran", name);
}

Test(ops_bwd, native_group_norm_backward_samples_run) { ran_for_real("aten::native_group_norm_backward"); }
Test(ops_bwd, convolution_backward_samples_run) { ran_for_real("aten::convolution_backward"); }
Test(ops_bwd, cdist_samples_run) { ran_for_real("aten::_cdist_forward"); ran_for_real("aten::cdist"); }
Test(ops_bwd, pdist_samples_run) { ran_for_real("aten::_pdist_forward"); ran_for_real("aten::pdist"); }
Test(ops_bwd, embedding_bag_samples_run)
{
    ran_for_real("aten::_embedding_bag");
    ran_for_real("aten::_embedding_bag_forward_only");
}

/* Found by fuzz_op_call: an input of more than two dims that is empty past dim 1 ([2, 1, 0])
 * holds fewer than size(0) * size(1) elements, which 2.13's CPU kernel reads anyway (PyTorch
 * crashes with SIGSEGV); cfx refuses it. A non-empty 3-d input still reads its first rows. */
Test(ops_bwd, pdist_forward_of_input_empty_past_dim_1_is_refused)
{
    cfx_dispatcher_init();
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_tensor_new((int64_t[]){2, 1, 0}, 3, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert_null(cfx__pdist_forward(x, 2.0));
    cr_expect(strstr(cfx_error_message(), "cannot hold 2 rows of size(1) = 1"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_tensor *y = cfx_tensor_new((int64_t[]){2, 3, 4}, 3, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *d = cfx__pdist_forward(y, 2.0);
    cr_assert_not_null(d, "%s", cfx_error_message());
    cr_expect_eq(cfx_tensor_numel(d), 1);
    cfx_scope_end(s);
}
