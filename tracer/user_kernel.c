/* user_kernel.c - the kernel side table and the launch operator (user_kernel.h).
 *
 * The side table is process-wide, as PyTorch's kernel_side_table is: a graph names a kernel by
 * its index, so the index must mean the same kernel in every thread that runs the graph. It
 * only grows (a graph may outlive the code that traced it); a mutex guards it.
 *
 * The launch checks the grid the way TritonKernelVariable does before anything is recorded:
 * `kernel.run(...)` without grid= and `kernel[g1][g2]` are refused with its texts. Then one
 * boxed call of cfx::user_kernel_mutation, which the proxy mode records as any operator; the
 * CPU kernel walks the grid in row-major program order (z, y, x), the order Triton's
 * interpreter uses, and bumps each tensor's version (they are written). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/scope.h"
#include "tracer/user_kernel.h"

enum { MAX_KERNELS = 4096 };

typedef struct side_entry {
    cfx_user_kernel_fn fn;
    char *name;
} side_entry;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static side_entry *table;
static int n_kernels, cap_kernels;

static cfx_library *lib;
static cfx_op *launch_op;
static int register_status = CFX_OK;
static pthread_once_t once = PTHREAD_ONCE_INIT;

int cfx_kernel_side_table_add(const char *name, cfx_user_kernel_fn fn)
{
    if (!fn)
        return cfx_error_set(CFX_ERR, NULL, "cfx_kernel_side_table_add: NULL kernel");
    pthread_mutex_lock(&table_lock);
    int idx = -1;
    for (int i = 0; i < n_kernels && idx < 0; i++)
        if (table[i].fn == fn)
            idx = i;
    if (idx < 0 && n_kernels < MAX_KERNELS) {
        if (n_kernels == cap_kernels) {
            int cap = cap_kernels ? 2 * cap_kernels : 16;
            side_entry *t = realloc(table, (size_t)cap * sizeof *t);
            if (t) {
                table = t;
                cap_kernels = cap;
            }
        }
        char *copy = cfx_strdup(name ? name : "kernel");
        if (n_kernels < cap_kernels && copy) {
            table[n_kernels] = (side_entry){fn, copy};
            idx = n_kernels++;
        } else {
            free(copy);
        }
    }
    pthread_mutex_unlock(&table_lock);
    return idx >= 0 ? idx : cfx_error_set(CFX_ERR_NOMEM, NULL, "the kernel side table is full");
}

static side_entry lookup(int idx)
{
    side_entry e = {NULL, NULL};
    pthread_mutex_lock(&table_lock);
    if (idx >= 0 && idx < n_kernels)
        e = table[idx];
    pthread_mutex_unlock(&table_lock);
    return e;
}

const char *cfx_kernel_side_table_name(int idx) { return lookup(idx).name; }

/* The CPU kernel of cfx::user_kernel_mutation: every program of the grid, in order. */
static void launch_cpu(int64_t kernel_idx, cfx_int_list grid, cfx_tensor_list tensors, cfx_int_list args)
{
    const char *op = "cfx::user_kernel_mutation";
    side_entry k = kernel_idx >= 0 && kernel_idx < MAX_KERNELS ? lookup((int)kernel_idx) : (side_entry){0};
    if (!k.fn) {
        cfx_error_set(CFX_ERR, op, "no kernel at index %lld of the kernel side table", (long long)kernel_idx);
        return;
    }
    if (grid.len != 3 || grid.data[0] < 0 || grid.data[1] < 0 || grid.data[2] < 0) {
        cfx_error_set(CFX_ERR, op, "%s: a grid has three non-negative dimensions", op);
        return;
    }
    cfx_kernel_program p = {{0, 0, 0}, {grid.data[0], grid.data[1], grid.data[2]}, tensors.data,
                            (int)tensors.len, args.data, (int)args.len};
    for (p.pid[2] = 0; p.pid[2] < p.grid[2]; p.pid[2]++)
        for (p.pid[1] = 0; p.pid[1] < p.grid[1]; p.pid[1]++)
            for (p.pid[0] = 0; p.pid[0] < p.grid[0]; p.pid[0]++)
                if (k.fn(&p) != CFX_OK) {
                    if (!cfx_error_occurred())
                        cfx_error_set(CFX_ERR, op, "kernel '%s' failed at program (%lld, %lld, %lld)", k.name,
                                      (long long)p.pid[0], (long long)p.pid[1], (long long)p.pid[2]);
                    return;
                }
    for (int64_t i = 0; i < tensors.len; i++)
        cfx_tensor_bump_version(tensors.data[i]);
}

/* Fake and meta tensors: the launch is recorded, nothing runs (no data to write). */
static void launch_meta(int64_t kernel_idx, cfx_int_list grid, cfx_tensor_list tensors, cfx_int_list args)
{
    (void)kernel_idx;
    (void)grid;
    (void)args;
    for (int64_t i = 0; i < tensors.len; i++)
        cfx_tensor_bump_version(tensors.data[i]);
}

static void register_op(void)
{
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_FRAGMENT, "cfx");
    int rc = lib ? CFX_OK : cfx_error_status();
    if (rc == CFX_OK)
        rc = cfx_library_def(lib, "cfx::user_kernel_mutation(int kernel_idx, int[] grid, Tensor(a!)[] tensors, "
                                  "int[] args) -> ()");
    if (rc == CFX_OK)
        rc = CFX_IMPL(lib, "user_kernel_mutation", CFX_KEY_CPU, launch_cpu);
    if (rc == CFX_OK)
        rc = CFX_IMPL(lib, "user_kernel_mutation", CFX_KEY_Meta, launch_meta);
    if (rc == CFX_OK && !(launch_op = cfx_op_find("cfx::user_kernel_mutation")))
        rc = cfx_error_status();
    register_status = rc;
}

int cfx_user_kernel_launch(int kernel_idx, const cfx_grid *grids, int n_grids, cfx_tensor *const *tensors,
                           int n_tensors, const int64_t *args, int n_args)
{
    if (cfx_error_occurred())
        return cfx_error_status();
    if (n_grids <= 0 || !grids)
        return cfx_error_set(CFX_ERR, NULL, "Triton kernel requires to be called with a grid");
    if (n_grids > 1)
        return cfx_error_set(CFX_ERR, NULL, "Triton kernels should be called with only a single grid");
    if (!lookup(kernel_idx).fn)
        return cfx_error_set(CFX_ERR, NULL, "no kernel at index %d of the kernel side table", kernel_idx);
    if (n_tensors < 0 || n_args < 0 || (n_tensors && !tensors) || (n_args && !args) || n_tensors > 64 || n_args > 64)
        return cfx_error_set(CFX_ERR, NULL, "cfx_user_kernel_launch: bad tensor or argument list");
    pthread_once(&once, register_op);
    if (register_status != CFX_OK)
        return cfx_error_set(CFX_ERR, NULL, "cfx::user_kernel_mutation could not be registered");
    /* a grid (4,) is (4, 1, 1): a zero dimension stays 0 (no program runs) */
    cfx_value grid[3] = {cfx_int(grids[0].x), cfx_int(grids[0].y), cfx_int(grids[0].z)};
    cfx_value ts[64], as[64];
    for (int i = 0; i < n_tensors; i++)
        ts[i] = cfx_tensor_value(tensors[i]);
    for (int i = 0; i < n_args; i++)
        as[i] = cfx_int(args[i]);
    cfx_value stack[4] = {cfx_int(kernel_idx), cfx_list(grid, 3), cfx_list(ts, (uint32_t)n_tensors),
                          cfx_list(as, (uint32_t)n_args)};
    return cfx_op_call(launch_op, stack, 4, 4);
}
