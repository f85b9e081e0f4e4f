/* register.c - registering a file's list of built-in kernels.
 *
 * Every kernel file registers its kernels the same way: each into an IMPL library that
 * cfx_builtin_ops_init opened for one dispatch key, with the op's compiled boxed entry and the
 * C function as its context. Doing that from a table keeps the per-file part a plain list;
 * the entries carry their own lines so dumps still name the entry that registered a kernel. */
#include "dispatch/kernels/kernels.h"

int cfx_kernels_register_list(const cfx_kernel_reg *regs, size_t n, const char *file)
{
    int rc = CFX_OK;
    for (size_t i = 0; i < n; i++) {
        const cfx_kernel_reg *e = &regs[i];
        CFX_KEEP_FIRST(rc, cfx_library_impl_boxed_unboxed_at(e->lib, cfx_builtin_ops[e->id].name, CFX_KEY_Undefined,
                                                             e->fn, e->boxed, cfx_kfn_ctx(e->fn), file, e->line));
    }
    return rc;
}
