/* triton_kernel_wrap.h - user kernels as higher-order operators: the kernel side table,
 * triton_kernel_wrapper_mutation and triton_kernel_wrapper_functional (PyTorch 2.13's
 * torch/_higher_order_ops/triton_kernel_wrap.py).
 *
 * A user kernel is a C function run once per program id of a grid, writing into the tensors it
 * is given (Triton's model: `kernel[grid](x, out, n)`). A graph cannot hold a function, so
 * kernels live in a process-wide side table (kernel_side_table.add_kernel) and the graph holds
 * the index. Constant arguments that a graph cannot hold go to a second table
 * (add_constant_args); cfx's launches pass tensors and ints only, which 2.13 keeps in the
 * graph, so their constant args are the empty dict.
 *
 * The HOPs are called with keywords only, as in 2.13; in C their one argument is the dict of
 * those keywords (the interpreter passes a node's kwargs so, see ir/target.h kwargs_dict):
 *   triton_kernel_wrapper_mutation({kernel_idx, constant_args_idx, grid,
 *                                   tma_descriptor_metadata, kwargs}) -> None
 *   triton_kernel_wrapper_functional({..., kwargs, tensors_to_clone}) -> {name: tensor}
 * `grid` is a list of one grid, a tuple of 1 to 3 ints; `kwargs` maps the kernel's parameter
 * names to tensors and ints; `tma_descriptor_metadata` must be {} (no TMA descriptors on CPU).
 * Rules as 2.13's: the dense rule runs the kernel (the functional one on clones of the tensors
 * named in tensors_to_clone, which it returns); the fake and Meta rules run nothing (the
 * functional one returns fake clones); the proxy rule records one call_function node named
 * `<hop>_proxy` with args () and the keywords as kwargs (tensors as their nodes), and the
 * functional node's dict result is read back with one `getitem` per entry; the functionalize
 * rule of the mutation calls the functional HOP with every tensor of kwargs to clone (what 2.13
 * does when it cannot analyse the kernel's source, which a C function never allows) and
 * replaces each input with its output. The mutation HOP is side-effectful for passes (its
 * node has no users yet must stay). */
#ifndef CFX_HOP_TRITON_KERNEL_WRAP_H
#define CFX_HOP_TRITON_KERNEL_WRAP_H

#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"
#include "hop/hop.h"

/* What one program of a launch sees: the tensor arguments then the int arguments, each in the
 * order of the launch's kwargs. */
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

/* kernel_side_table.add_kernel: the index of fn (the same fn gets the same index), or < 0.
 * arg_names are its parameters (Triton's kernel.arg_names), copied: a launch names its
 * tensors and then its ints with them, in order. */
CFX_API int cfx_kernel_side_table_add(const char *name, cfx_user_kernel_fn fn, const char *const *arg_names,
                                      int n_arg_names);
/* The name given to kernel idx, or NULL. */
CFX_API const char *cfx_kernel_side_table_name(int idx);
/* The parameter names of kernel idx (*n of them), or NULL. */
CFX_API const char *const *cfx_kernel_side_table_arg_names(int idx, int *n);
/* add_constant_args for a dict of ints names[i] = values[i]: its index, or < 0. */
CFX_API int cfx_kernel_side_table_add_constant_args(const char *const *names, const int64_t *values, int n);

/* The two HOPs (created by cfx_hop_init). NULL + error if they could not be created. */
CFX_API cfx_hop *cfx_triton_kernel_wrapper_mutation_hop(void);
CFX_API cfx_hop *cfx_triton_kernel_wrapper_functional_hop(void);

#endif
