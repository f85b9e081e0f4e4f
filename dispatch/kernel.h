/* kernel.h - a kernel as the dispatcher holds it (c10::KernelFunction).
 *
 * Every valid kernel can be called boxed: arguments on a cfx_value stack, results written
 * back to the front of the same stack. A kernel registered as a plain C function also keeps
 * its unboxed pointer, so typed wrappers (ops.h) call it directly without boxing, as
 * PyTorch's unboxed fast path does. Its boxed entry is, for built-in kernels, a trampoline
 * generated from ops.def (PyTorch's make_boxed_from_unboxed_functor), and for user kernels a
 * libffi adapter built once from the schema (boxing.h). A fallthrough kernel is only a marker: the dispatcher masks its key out
 * and never calls it. */
#ifndef CFX_KERNEL_H
#define CFX_KERNEL_H

#include <stdbool.h>

#include "dispatch/keys.h"
#include "dispatch/value.h"

typedef struct cfx_op cfx_op;

/* Boxed calling convention. On entry stack[0..n_args) holds the arguments with defaults
 * filled in (the schema's argument count); on success the kernel writes the returns to
 * stack[0..n_returns) and returns CFX_OK. On failure it records the error (error.h) and
 * returns a negative status. ks is the key set the call was dispatched with, for kernels that
 * redispatch below themselves. Tensors written to the stack are autoreleased (scope.h). */
typedef int (*cfx_boxed_fn)(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

/* Any plain C function pointer; cast to the real signature before calling. */
typedef void (*cfx_fnptr)(void);

enum {
    CFX_KERNEL_VALID = 1u << 0,
    CFX_KERNEL_FALLTHROUGH = 1u << 1,
    CFX_KERNEL_AMBIGUOUS_AUTOGRADOTHER = 1u << 2,
};

typedef struct cfx_kernel {
    cfx_boxed_fn boxed;
    void *ctx;          /* boxed_fn's context (for unboxed kernels: their libffi adapter) */
    cfx_fnptr unboxed;  /* the plain C function, or NULL for boxed-only kernels */
    unsigned flags;
    const char *debug;  /* "registered at FILE:LINE" (owned by the registry) */
    /* "(Tensor _0, Tensor _1, Scalar _2) -> Tensor _0" for unboxed kernels, else NULL */
    const char *inferred_schema;
} cfx_kernel;

static inline bool cfx_kernel_is_valid(const cfx_kernel *k) { return k->flags & CFX_KERNEL_VALID; }
static inline bool cfx_kernel_is_fallthrough(const cfx_kernel *k) { return k->flags & CFX_KERNEL_FALLTHROUGH; }

#endif
