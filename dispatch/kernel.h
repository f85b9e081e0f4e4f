/* kernel.h - the calling conventions of kernels (c10::KernelFunction's two faces).
 *
 * Every kernel can be called boxed: arguments on a cfx_value stack, results written back to
 * the front of the same stack (cfx_boxed_fn). A kernel registered as a plain C function
 * (cfx_fnptr, library.h) also keeps its unboxed pointer, so the typed entry points (ops.h)
 * call it directly without boxing, as PyTorch's unboxed fast path does; its boxed entry is,
 * for built-in kernels, a trampoline generated from ops.def (PyTorch's
 * make_boxed_from_unboxed_functor), and for user kernels a libffi adapter built once from the
 * schema (boxing.h). How the dispatcher stores kernels is its own business
 * (operator_internal.h). */
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

#endif
