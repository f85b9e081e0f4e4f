/* test_ops_bwd.c - the backward and nn ops of tools/interop/ops_bwd_cases.py beyond their
 * golden cases (tests/dispatch/test_ops_golden.c): their opcheck samples really run (an op
 * whose every sample is rejected on both keys would pass opcheck having checked nothing). */
#include <criterion/criterion.h>

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
