/* neg.h - negative views (dispatch/kernels/neg_view.c): PyTorch's neg bit, which is the
 * Negative dispatch key in a tensor's key set. `_neg_view(x)` is a view of x's data whose
 * values are the negatives of that data; `conj(c).imag` is one (the imaginary parts of a
 * conjugate view are the negatives of its data's). The ops that do not understand the bit see
 * its clone, which holds the negated values (`resolve_neg`). */
#ifndef CFX_NEG_H
#define CFX_NEG_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"

/* torch.is_neg: t is a negative view (its data holds the negatives of its values). */
CFX_API bool cfx_is_neg(const cfx_tensor *t);

#endif
