/* user_kernel.h - a user's compute kernel launched over a grid, recorded as one node
 * (2.x's triton_kernel_wrapper_mutation, torch/_higher_order_ops/triton_kernel_wrap.py).
 *
 * A kernel is a C function run once per program id of a grid, writing into the tensors it is
 * given (Triton's model: `kernel[grid](x, out, n)`). Kernels live in a process-wide side table
 * (kernel_side_table.add_kernel): the graph refers to one by its index, since a function
 * pointer has no printable or reloadable form. A launch is the operator
 * `cfx::user_kernel_mutation(int kernel_idx, int[] grid, Tensor(a!)[] tensors, int[] args) -> ()`:
 * its CPU kernel runs the user's kernel over the grid, its Meta kernel does nothing (a fake
 * trace records the launch without running it), and the schema marks the tensors as written,
 * so DCE keeps the node and the tensors stay bound to their nodes (the launch returns
 * nothing, as the HOP does). PyTorch records a higher-order operator with its kwargs in a
 * dict; cfx has no HOP targets nor dict values in its IR yet, hence an operator of its own
 * namespace rather than a lookalike of torch.ops.higher_order. */
#ifndef CFX_TRACER_USER_KERNEL_H
#define CFX_TRACER_USER_KERNEL_H

#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"

/* What one program of a launch sees. */
typedef struct cfx_kernel_program {
    int64_t pid[3];  /* tl.program_id(0..2) */
    int64_t grid[3]; /* tl.num_programs(0..2) */
    cfx_tensor *const *tensors;
    int n_tensors;
    const int64_t *args;
    int n_args;
} cfx_kernel_program;

/* Returns 0, or an error status (with cfx_error_set) to stop the launch. */
typedef int (*cfx_user_kernel_fn)(const cfx_kernel_program *p);

/* A launch grid: up to three dimensions, the missing ones 1 ((4,) is {4, 1, 1}). */
typedef struct cfx_grid {
    int64_t x, y, z;
} cfx_grid;

/* kernel_side_table.add_kernel: the index of fn (the same fn gets the same index), or < 0. */
CFX_API int cfx_kernel_side_table_add(const char *name, cfx_user_kernel_fn fn);
/* The name given to kernel idx, or NULL. */
CFX_API const char *cfx_kernel_side_table_name(int idx);

/* kernel[grid](*tensors, *args): n_grids must be 1, else Dynamo's texts: "Triton kernel
 * requires to be called with a grid" (none), "Triton kernels should be called with only a
 * single grid" (several). Under make_fx one node; eagerly, the kernel runs. */
CFX_API int cfx_user_kernel_launch(int kernel_idx, const cfx_grid *grids, int n_grids, cfx_tensor *const *tensors,
                                   int n_tensors, const int64_t *args, int n_args);

#endif
