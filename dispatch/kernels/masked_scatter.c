/* masked_scatter and masked_scatter_: self's elements where mask is true replaced, in
 * row-major order, by source's first elements.
 *
 * CPU (masked_scatter__cpu): self and source must have one dtype ("masked_scatter: expected
 * self and source to have same dtypes but gotFloat and Long", ATen's missing space), mask
 * expands to self (expand_inplace's texts), must be bool ("masked_scatter_ only supports
 * boolean masks, but got mask with dtype Long"), and source must hold enough elements
 * ("Number of elements of source < number of ones in mask"). masked_scatter
 * (CompositeExplicitAutograd) broadcasts self and mask (expand_outplace), clones self
 * contiguous and calls masked_scatter_ through the dispatcher.
 * Meta (the Python meta functions): masked_scatter _maybe_broadcasts self and mask into a
 * contiguous result; both check the mask dtype ("Mask must be bool or uint8") and the dtypes
 * ("... but got torch.float32 and torch.int64"), nothing else. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/structured.h"

/* expand_inplace(self, mask)'s checks: mask's sizes fit self's */
static bool mask_expands(const char *op, const cfx_tensor *self, const cfx_tensor *mask)
{
    if (mask->ndim > self->ndim) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "expand(CPU%sType{", cfx_dtype_scalar_name((cfx_dtype)mask->dtype));
        cfx_geom_put_dims(&b, mask->sizes, mask->ndim);
        cfx_buf_puts(&b, "}, size=");
        cfx_geom_put_dims(&b, self->sizes, self->ndim);
        cfx_buf_printf(&b, "): the number of sizes provided (%d) must be greater or equal to the number of "
                           "dimensions in the tensor (%d)", self->ndim, mask->ndim);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "expand: too few sizes");
        cfx_free(msg);
        return false;
    }
    return cfx_matrix_check_expand(op, mask, self->sizes, self->ndim);
}

static bool same_dtypes(const char *op, const cfx_tensor *self, const cfx_tensor *source, bool meta)
{
    if (self->dtype == source->dtype)
        return true;
    if (meta)
        cfx_error_set(CFX_ERR, op, "masked_scatter: expected self and source to have same dtypes but got %s and %s",
                      cfx_dtype_torch_name((cfx_dtype)self->dtype), cfx_dtype_torch_name((cfx_dtype)source->dtype));
    else
        cfx_error_set(CFX_ERR, op, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype), cfx_dtype_scalar_name((cfx_dtype)source->dtype));
    return false;
}

cfx_tensor *cfx_cpu_masked_scatter_(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *source)
{
    const char *op = "aten::masked_scatter_";
    if (cfx_iter_internal_overlap(self)) {
        cfx_error_set(CFX_ERR, op, "unsupported operation: more than one element of the written-to tensor refers to a "
                                   "single memory location. Please clone() the tensor before performing the operation.");
        return NULL;
    }
    if (!same_dtypes(op, self, source, false) || !mask_expands(op, self, mask))
        return NULL;
    if (mask->dtype != CFX_BOOL) {
        cfx_error_set(CFX_ERR, op, "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                      cfx_dtype_scalar_name((cfx_dtype)mask->dtype));
        return NULL;
    }
    int n = self->ndim, lead = self->ndim - mask->ndim;
    int64_t ones = 0, total = cfx_tensor_numel(self), nsrc = cfx_tensor_numel(source);
    size_t es = cfx_dtype_size((cfx_dtype)self->dtype);
    const bool *m = cfx_tensor_data(mask);
    int64_t idx[CFX_MAX_DIMS] = {0};
    /* two walks: the count first, so a short source leaves self untouched */
    for (int pass = 0; pass < 2 && total > 0; pass++) {
        cfx_scope s = cfx_scope_begin();
        const cfx_tensor *src = pass ? cfx_cpu_contiguous(source) : source;
        if (!src) {
            cfx_scope_end(s);
            return NULL;
        }
        const char *sp = pass ? cfx_tensor_data(src) : NULL;
        char *dst = cfx_tensor_data(self);
        int64_t k = 0;
        memset(idx, 0, sizeof idx);
        do {
            int64_t mo = 0, so = 0;
            for (int d = 0; d < n; d++) {
                so += idx[d] * self->strides[d];
                if (d >= lead && mask->sizes[d - lead] != 1)
                    mo += idx[d] * mask->strides[d - lead];
            }
            if (m[mo]) {
                if (pass)
                    memcpy(dst + so * (int64_t)es, sp + k * (int64_t)es, es);
                k++;
            }
        } while (cfx_geom_next_index(idx, self->sizes, n));
        cfx_scope_end(s);
        ones = k;
        if (!pass && ones > nsrc) {
            cfx_error_set(CFX_ERR, op, "Number of elements of source < number of ones in mask");
            return NULL;
        }
    }
    cfx_tensor_bump_version(self);
    return self;
}

static bool meta_checks(const char *op, const cfx_tensor *self, const cfx_tensor *mask, const cfx_tensor *source)
{
    if (mask->dtype != CFX_BOOL && mask->dtype != CFX_UINT8) {
        cfx_error_set(CFX_ERR, op, "Mask must be bool or uint8");
        return false;
    }
    return same_dtypes(op, self, source, true);
}

cfx_tensor *cfx_meta_masked_scatter_(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *source)
{
    if (!meta_checks("aten::masked_scatter_", self, mask, source))
        return NULL;
    cfx_tensor_bump_version(self); /* ADInplaceOrView, above the Meta kernel in PyTorch */
    return self;
}

cfx_tensor *cfx_meta_masked_scatter(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *source)
{
    const char *op = "aten::masked_scatter";
    cfx_tmeta s, m;
    cfx_tmeta_of(&s, self);
    cfx_tmeta_of(&m, mask);
    cfx_tmeta *sm[2] = {&s, &m};
    if (!cfx_prims_maybe_broadcast(op, sm, 2) || !meta_checks(op, self, mask, source))
        return NULL;
    return cfx_tensor_new(s.sizes, s.ndim, (cfx_dtype)self->dtype, self->device);
}

cfx_tensor *cfx_kernel_masked_scatter(cfx_tensor *self, cfx_tensor *mask, cfx_tensor *source)
{
    const char *op = "aten::masked_scatter";
    int64_t shape[CFX_MAX_DIMS];
    int n;
    if (!cfx_geom_broadcast(mask->sizes, mask->ndim, self->sizes, self->ndim, shape, &n, op))
        return NULL;
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *e = cfx_expand(self, cfx_ints(shape, n));
    cfx_tensor *c = e ? cfx_clone(e, cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT)) : NULL;
    return cfx_composite_return(sc, c ? cfx_masked_scatter_(c, mask, source) : NULL);
}
