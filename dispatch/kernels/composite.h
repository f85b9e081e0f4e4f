/* composite.h - what the CompositeImplicitAutograd kernels share.
 *
 * Such a kernel is PyTorch's C++ decomposition: it calls other operators through the
 * dispatcher (cfx_op_*), so a mode or tracer below sees those calls, never the composite
 * itself, exactly as make_fx records 2.13's decompositions. Its intermediates live in a scope
 * of its own; the result survives it as one new reference, autoreleased into the caller's
 * scope (the ownership rule of every operator result). */
#ifndef CFX_KERNELS_COMPOSITE_H
#define CFX_KERNELS_COMPOSITE_H

#include "dispatch/scope.h"
#include "dispatch/tensor.h"

/* Ends the composite's scope s, keeping r (NULL passes through with the error as set). */
static inline cfx_tensor *cfx_composite_return(cfx_scope s, cfx_tensor *r)
{
    cfx_tensor_retain(r);
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

#endif
