/* inplace.h - an in-place op's result written into self, as each key of PyTorch 2.13 does it
 * (inplace_pointwise.c): the kernels that compute the out-of-place result first share these. */
#ifndef CFX_KERNELS_INPLACE_H
#define CFX_KERNELS_INPLACE_H

#include <stdbool.h>

#include "dispatch/scope.h"
#include "dispatch/tensor.h"

/* CPU (TensorIterator with out=self): r, the out-of-place result (NULL passes through), must
 * have self's shape and a dtype self can hold; its values are copied into self, whose version
 * is bumped. Returns self (not retained) or NULL + error. ctypes: name self's dtype as C++
 * does ("long int"), as clamp's check does, instead of "Long". */
cfx_tensor *cfx_cpu_into_self(const char *op, cfx_tensor *self, cfx_tensor *r, bool ctypes);
/* Meta (_make_inplace: _maybe_resize_out, _safe_copy_out): r's dtype must be safely castable
 * to self's; self is resized (contiguously) to a different result shape. Returns self (not
 * retained) or NULL + error. */
cfx_tensor *cfx_meta_into_self(const char *op, cfx_tensor *self, cfx_tensor *r);

/* In an in-place kernel: returns self (retained into the caller's scope) after into(...)'s
 * work, the out-of-place result included, in a scope of its own. */
#define INTO_SELF(into, ...)                                                                    \
    do {                                                                                        \
        cfx_scope sc_ = cfx_scope_begin();                                                      \
        cfx_tensor *r_ = into(__VA_ARGS__);                                                     \
        cfx_scope_end(sc_);                                                                     \
        return r_ ? cfx_autorelease(cfx_tensor_retain(r_)) : NULL;                              \
    } while (0)

#endif
