/* data_dependent.h - operators whose output depends on tensor data: item and nonzero.
 *
 * aten::_local_scalar_dense(Tensor self) -> Scalar is what Tensor.item() dispatches, and
 * aten::nonzero(Tensor self) -> Tensor has an output shape only the data decides. Both have
 * CPU kernels only; under a fake mode they are exactly the calls that cannot be faked, and the
 * mode fails them with DataDependentOutputException / DynamicOutputShapeException, whose text
 * is the op ("aten._local_scalar_dense.default", "aten.nonzero.default"). They are defined
 * from a FRAGMENT library of namespace "aten", registered once per process (any wrapper below,
 * or creating a fake mode, triggers it; cfx_data_dependent_ops_register is idempotent). */
#ifndef CFX_DATA_DEPENDENT_H
#define CFX_DATA_DEPENDENT_H

#include "dispatch/tensor.h"
#include "dispatch/value.h"

void cfx_data_dependent_ops_register(void);

/* Tensor.item(): the single element as a double, through aten::_local_scalar_dense. NAN with
 * an error recorded on failure (NAN without a new message for a NULL input); check
 * cfx_error_occurred() to tell a NaN element from an error. */
double cfx_item(cfx_tensor *t);
/* The Scalar itself (int, double or bool value); NONE on failure. */
cfx_value cfx_local_scalar_dense(cfx_tensor *t);
/* torch.nonzero: int64 [n, ndim] indices of the nonzero elements in row-major order. */
cfx_tensor *cfx_nonzero(cfx_tensor *t);

#endif
