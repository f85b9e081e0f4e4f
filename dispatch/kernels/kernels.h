/* kernels.h - what every built-in kernel file includes.
 *
 * Kernels are plain C functions with exactly their operator's unboxed signature; the op table
 * (dispatch/ops.def) names them per dispatch key, and tools/opgen declares every one of them
 * in dispatch/ops_gen_kernels.h from the op's schema, so a kernel whose definition does not
 * match its schema does not compile. They are callable directly, without the dispatcher (the
 * benchmarks compare against that). */
#ifndef CFX_KERNELS_KERNELS_H
#define CFX_KERNELS_KERNELS_H

#include "dispatch/ops.h"
#include "dispatch/ops_gen_kernels.h"
#include "dispatch/scope.h"

/* Drops a tensor a kernel made but will not return: released unless a scope owns it. */
static inline void cfx_kernel_discard(cfx_tensor *t)
{
    if (t && cfx_scope_depth() == 0)
        cfx_tensor_release(t);
}

/* c10's checked_convert of the number v into dtype dt, with its error ("value cannot be
 * converted to type uint8_t without overflow") recorded for op when it does not fit. */
bool cfx_scalar_converts(const char *op, cfx_value v, cfx_dtype dt);

/* A complex tensor's real parts as a view in the real dtype, made without the dispatcher
 * (complex_views.c). */
cfx_tensor *cfx_kernel_real_part(cfx_tensor *self);

#endif
