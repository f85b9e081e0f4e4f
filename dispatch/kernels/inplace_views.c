/* inplace_views.c - squeeze_ (3 overloads) and unsqueeze_, PyTorch's in-place views (tag
 * inplace_view).
 *
 * They change the sizes and strides of self itself and return self: at::native::squeeze_ and
 * unsqueeze_ compute the out-of-place view's geometry and call set_sizes_and_strides on self,
 * and ADInplaceOrView bumps the version counter as for any in-place op. Here the geometry (and
 * every check, with its error text) comes from the out-of-place kernels of shape.c, then
 * cfx_tensor_set_geometry moves it into self's header, so every holder of self (a fake, a
 * traced value) sees the new shape. 2.13's matmul ends 1-D @ 2-D with squeeze_.dim. The same
 * function serves every key (CompositeExplicitAutograd; unsqueeze_ also on Meta, as PyTorch). */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/scope.h"
#include "dispatch/tensor_internal.h"

/* self takes the geometry of view (a view of self made by a shape.c kernel, or NULL) */
static cfx_tensor *take_geometry(cfx_tensor *self, cfx_tensor *view)
{
    if (!view)
        return NULL;
    if (!cfx_tensor_set_geometry(self, view->sizes, view->strides, view->ndim))
        return NULL;
    cfx_tensor_bump_version(self);
    return self;
}

/* The view is made in a scope of its own, so it dies here rather than with the caller's. */
#define INPLACE_VIEW(call)                                                                      \
    do {                                                                                        \
        cfx_scope sc_ = cfx_scope_begin();                                                      \
        cfx_tensor *r_ = take_geometry(self, (call));                                           \
        cfx_scope_end(sc_);                                                                     \
        return r_ ? cfx_autorelease(cfx_tensor_retain(r_)) : NULL;                              \
    } while (0)

cfx_tensor *cfx_kernel_squeeze_(cfx_tensor *self) { INPLACE_VIEW(cfx_kernel_squeeze(self)); }
cfx_tensor *cfx_kernel_squeeze__dim(cfx_tensor *self, int64_t dim) { INPLACE_VIEW(cfx_kernel_squeeze_dim(self, dim)); }
cfx_tensor *cfx_kernel_squeeze__dims(cfx_tensor *self, cfx_int_list dim)
{
    INPLACE_VIEW(cfx_kernel_squeeze_dims(self, dim));
}
cfx_tensor *cfx_kernel_unsqueeze_(cfx_tensor *self, int64_t dim) { INPLACE_VIEW(cfx_kernel_unsqueeze(self, dim)); }
