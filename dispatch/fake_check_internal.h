/* fake_check_internal.h - one op call run on fake copies of its arguments and compared with the
 * real call (internal: shared by crossref functionalize, crossref.c, and opcheck, opcheck.c).
 *
 * Both checks are PyTorch's crossref of a Meta kernel against the real kernel: make the
 * arguments fake under a FRESH fake mode, run the op there with every current mode and
 * functionalization suspended (so a tracer records nothing of it), run the op for real, then
 * compare each flattened tensor output (sizes, then dtype, then significant strides:
 * torch._prims_common.check_significant_strides, dims of size > 1 only), with the text of
 * torch/_dispatch/python.py's check_tensor_metadata_matches:
 *     <call> output 0: strides (1, 2) != (3, 1) (mismatch at index 0)
 * where <call> prints the fake arguments as that file's _fmt does
 * (`torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)`) and splits them into args and
 * kwargs as the C++ -> Python hand-over does. */
#ifndef CFX_FAKE_CHECK_INTERNAL_H
#define CFX_FAKE_CHECK_INTERNAL_H

#include <stdbool.h>

#include "dispatch/fake.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"

/* How the operator is named in a description: str(OpOverload) "aten.add.Tensor" /
 * "ns.op.default" (crossref functionalize, as the seed prints it), or the qualified name
 * "aten::add.Tensor" / "ns::op" (opcheck and cfx trace --crossref, where no Python object
 * prints itself). */
typedef enum cfx_call_name_style { CFX_CALL_NAME_PYTHON, CFX_CALL_NAME_QUALIFIED } cfx_call_name_style;

/* op(args, kwargs) as _fmt prints the call (tensors as torch.empty_strided(...)). */
void cfx_fake_check_describe(cfx_buf *b, const cfx_op *op, const cfx_value *args, cfx_call_name_style style);
/* Appends ": <what differs>" (sizes, dtype or significant strides) and returns true if the
 * fake output nv and the real output rv disagree. */
bool cfx_fake_check_mismatch(cfx_buf *b, const cfx_tensor *nv, const cfx_tensor *rv);

/* The ops CrossRefFakeMode does not check: fake tensors cannot answer them (tags
 * dynamic_output_shape, data_dependent_output), inplace_view ones, lift_fresh and
 * lift_fresh_copy, and calls bigger than CFX_FAKE_CHECK_MAX_STACK. */
bool cfx_fake_check_skips(const cfx_op *op);

/* Largest stack the checks handle (arguments or returns); bigger calls are not checked. */
enum { CFX_FAKE_CHECK_MAX_STACK = 32 };

/* The fake half: copies the n_args arguments of stack into fake_args (tensors, also inside
 * lists, made fake by a new fake mode, functional tensors unwrapped first), and runs op on a
 * copy of them, f_r, under that mode with the current modes and functionalization suspended.
 * Returns the run's status (error recorded on failure); *fm gets the mode in every case where
 * it was made (free it with cfx_fake_mode_free once fake_args and f_r are no longer used). */
int cfx_fake_check_run_fake(const cfx_op *op, const cfx_value *stack, cfx_value *fake_args, cfx_value *f_r,
                            cfx_fake_mode **fm);

/* pytree.tree_flatten of the returns: a list or tuple return gives its items. Returns the
 * count (at most cap written). */
int cfx_fake_check_flatten(const cfx_value *rets, int n, cfx_value *out, int cap);

/* check_metadata_matches over the flattened returns: CFX_OK, or an error "<call> output i: ..."
 * (the call described from fake_args). */
int cfx_fake_check_compare(const cfx_op *op, const cfx_value *fake_args, const cfx_value *f_r, const cfx_value *r,
                           cfx_call_name_style style);

#endif
