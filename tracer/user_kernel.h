/* user_kernel.h - launching a user kernel over a grid, recorded as PyTorch 2.13 records a
 * Triton kernel launch: one triton_kernel_wrapper_mutation HOP call (hop/triton_kernel_wrap.h).
 *
 * This is what Dynamo's TritonHOPifier does with `kernel[grid](*args)`: the grid is checked
 * (exactly one), the arguments are named by the kernel's parameters (kernel.arg_names) into
 * the `kwargs` dict, and the HOP is called with the kernel's side-table index. Under make_fx
 * the proxy rule records the node; eagerly the dense rule runs the kernel. */
#ifndef CFX_TRACER_USER_KERNEL_H
#define CFX_TRACER_USER_KERNEL_H

#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"
#include "hop/triton_kernel_wrap.h"

/* A launch grid: up to three dimensions, the missing ones 1 ((4,) is {4, 1, 1}). */
typedef struct cfx_grid {
    int64_t x, y, z;
} cfx_grid;

/* kernel[grid](*tensors, *args): the kernel's parameters name the tensors first, then the ints
 * (their counts must add up to its parameters). n_grids must be 1, else Dynamo's texts:
 * "Triton kernel requires to be called with a grid" (none), "Triton kernels should be called
 * with only a single grid" (several). */
CFX_API int cfx_user_kernel_launch(int kernel_idx, const cfx_grid *grids, int n_grids, cfx_tensor *const *tensors,
                                   int n_tensors, const int64_t *args, int n_args);

#endif
