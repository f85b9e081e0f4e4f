/* conj.h - conjugate views (dispatch/kernels/conj.c): PyTorch's conj bit, which is the
 * Conjugate dispatch key in a tensor's key set. cfx_conj(x) (aten::conj) of a complex tensor
 * is a view with the bit set; the ops that do not understand the bit see its clone, which
 * holds the conjugated values (cfx_resolve_conj). */
#ifndef CFX_CONJ_H
#define CFX_CONJ_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"

/* torch.is_conj: t is a conjugate view (its data holds the conjugates of its values). */
CFX_API bool cfx_is_conj(const cfx_tensor *t);

#endif
