/* user_kernel.c - kernel[grid](...) as Dynamo's TritonHOPifier turns it into a call of
 * triton_kernel_wrapper_mutation (user_kernel.h).
 *
 * The grid checks come first, with Dynamo's texts, so nothing is recorded for a bad launch.
 * Every argument of a cfx launch is a tensor or an int, which 2.13 keeps in the graph's
 * `kwargs`; what is left for the constant args side table is the empty dict. 2.13's Dynamo
 * adds one (empty) entry per traced launch; cfx adds it once and every launch shares its
 * index, so a graph's text does not depend on how many launches the process traced before. */
#include <pthread.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "tracer/user_kernel.h"

static int empty_constants = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void add_empty_constants(void) { empty_constants = cfx_kernel_side_table_add_constant_args(NULL, NULL, 0); }

int cfx_user_kernel_launch(int kernel_idx, const cfx_grid *grids, int n_grids, cfx_tensor *const *tensors,
                           int n_tensors, const int64_t *args, int n_args)
{
    if (cfx_error_occurred())
        return cfx_error_status();
    if (n_grids <= 0 || !grids)
        return cfx_error_set(CFX_ERR, NULL, "Triton kernel requires to be called with a grid");
    if (n_grids > 1)
        return cfx_error_set(CFX_ERR, NULL, "Triton kernels should be called with only a single grid");
    int n_names;
    const char *const *names = cfx_kernel_side_table_arg_names(kernel_idx, &n_names);
    if (!names)
        return cfx_error_set(CFX_ERR, NULL, "no kernel at index %d of the kernel side table", kernel_idx);
    if (n_tensors < 0 || n_args < 0 || (n_tensors && !tensors) || (n_args && !args))
        return cfx_error_set(CFX_ERR, NULL, "cfx_user_kernel_launch: bad tensor or argument list");
    for (int i = 0; i < n_tensors; i++)
        if (!tensors[i])
            return cfx_error_set(CFX_ERR, NULL, "cfx_user_kernel_launch: tensor %d is NULL", i);
    if (n_tensors + n_args != n_names)
        return cfx_error_set(CFX_ERR, NULL, "%s() takes %d positional arguments but %d were given",
                             cfx_kernel_side_table_name(kernel_idx), n_names, n_tensors + n_args);
    pthread_once(&once, add_empty_constants);
    if (empty_constants < 0)
        return cfx_error_set(CFX_ERR, NULL, "the constant args side table could not be set up");
    cfx_hop *hop = cfx_triton_kernel_wrapper_mutation_hop();
    cfx_value *kv = cfx_scope_alloc((2 * (size_t)n_names + 1) * sizeof *kv);
    if (!hop || !kv)
        return hop ? cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory") : CFX_ERR;
    for (int i = 0; i < n_names; i++) {
        kv[2 * i] = cfx_string(names[i]);
        kv[2 * i + 1] = i < n_tensors ? cfx_tensor_value(tensors[i]) : cfx_int(args[i - n_tensors]);
    }
    /* a grid (4,) is (4, 1, 1): 2.13 prints the grid as the tuple it was given */
    cfx_value dims[3] = {cfx_int(grids[0].x), cfx_int(grids[0].y), cfx_int(grids[0].z)};
    cfx_value grid = cfx_tuple(dims, 3);
    cfx_value kw[10] = {cfx_string("kernel_idx"), cfx_int(kernel_idx),
                        cfx_string("constant_args_idx"), cfx_int(empty_constants),
                        cfx_string("grid"), cfx_list(&grid, 1),
                        cfx_string("tma_descriptor_metadata"), cfx_dict(NULL, 0),
                        cfx_string("kwargs"), cfx_dict(kv, (uint32_t)n_names)};
    cfx_value call = cfx_dict(kw, 5), out;
    return cfx_hop_call(hop, &call, 1, &out);
}
