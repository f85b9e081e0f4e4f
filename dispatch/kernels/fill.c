/* fill.c - fill_.Scalar, fill_.Tensor, their functional forms fill.Scalar / fill.Tensor, and
 * the functional copy (aten::copy), which Python's `x[...] = v` and functionalization need.
 *
 * As ATen: fill_ writes the number, cast to self's dtype, into every element of self (fill is
 * idempotent, so an expanded self is fine); fill_.Tensor takes a 0-dim value ("fill_ only
 * supports 0-dimension value tensor but got tensor with 1 dimensions.") and writes its item.
 * fill_.Tensor is copy_ of the value (so an expanded self is refused, as copy_ refuses it).
 * The Meta kernels (2.13's Python ones) only check and return self. fill.Scalar / fill.Tensor
 * are CompositeExplicitAutograd: empty_like(self).fill_(value), through the dispatcher; their
 * Meta kernels are empty_like(self); either way the result has empty_like's strides. copy is
 * CompositeExplicitAutogradNonFunctional: a clone that keeps self's strides and storage offset
 * (clone_preserve_strides: the whole storage is cloned, then viewed as self; a self with
 * internal overlap is cloned plainly), then copy_(src) into it; one kernel for CPU and Meta
 * (ATen's copy_meta does the same on meta storage). */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"

static cfx_tensor *same(cfx_tensor *self) { return cfx_autorelease(cfx_tensor_retain(self)); }

static bool value_0dim(const cfx_tensor *value)
{
    if (value->ndim == 0)
        return true;
    cfx_error_set(CFX_ERR, "aten::fill_", "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                  value->ndim);
    return false;
}

cfx_tensor *cfx_cpu_fill__Scalar(cfx_tensor *self, cfx_value value)
{
    if (!cfx_scalar_converts("aten::fill_.Scalar", value, (cfx_dtype)self->dtype))
        return NULL;
    cfx_scope sc = cfx_scope_begin();
    /* the number as a 0-dim tensor of self's dtype, broadcast over self (strides 0) */
    cfx_tensor *w = cfx_num_value(value), *v = w ? cfx_cpu_to_dtype(w, (cfx_dtype)self->dtype) : NULL;
    int64_t zeros[CFX_MAX_DIMS] = {0};
    cfx_tensor *from = v ? cfx_tensor_new_view(v, self->sizes, zeros, self->ndim, v->storage_offset) : NULL;
    if (from)
        cfx_cpu_copy(self, from);
    cfx_scope_end(sc);
    if (!from)
        return NULL;
    cfx_tensor_bump_version(self);
    return same(self);
}

cfx_tensor *cfx_meta_fill__Scalar(cfx_tensor *self, cfx_value value)
{
    (void)value;
    cfx_tensor_bump_version(self);
    return same(self);
}

/* ATen: self.copy_(value), from a clone when value is a view of self (so it is read before
 * self is written); copy_ brings the overlap checks of a written tensor */
cfx_tensor *cfx_cpu_fill__Tensor(cfx_tensor *self, cfx_tensor *value)
{
    if (!value_0dim(value))
        return NULL;
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *src = value;
    if (value->storage == self->storage) {
        src = cfx_tensor_new(NULL, 0, (cfx_dtype)value->dtype, value->device);
        if (src)
            cfx_cpu_copy(src, value);
    }
    cfx_tensor *r = src ? cfx_kernel_copy_(self, src, false) : NULL;
    cfx_scope_end(sc);
    return r ? same(self) : NULL;
}

cfx_tensor *cfx_meta_fill__Tensor(cfx_tensor *self, cfx_tensor *value)
{
    if (!value_0dim(value))
        return NULL;
    cfx_tensor_bump_version(self);
    return same(self);
}

static cfx_tensor *fill_functional(cfx_tensor *self, cfx_value scalar, cfx_tensor *tensor)
{
    cfx_tensor *r = cfx_op_empty_like(NULL, self, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());
    if (!r)
        return NULL;
    cfx_tensor *w = tensor ? cfx_op_fill__Tensor(NULL, r, tensor) : cfx_op_fill__Scalar(NULL, r, scalar);
    if (!w) {
        cfx_kernel_discard(r);
        return NULL;
    }
    cfx_kernel_discard(w);
    return r;
}

/* 2.13's Python meta_fill: the check, then empty_like(self) */
static cfx_tensor *meta_fill(cfx_tensor *self, cfx_tensor *value)
{
    if (value && !value_0dim(value))
        return NULL;
    return cfx_op_empty_like(NULL, self, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());
}

cfx_tensor *cfx_meta_fill_Scalar(cfx_tensor *self, cfx_value value)
{
    (void)value;
    return meta_fill(self, NULL);
}

cfx_tensor *cfx_meta_fill_Tensor(cfx_tensor *self, cfx_tensor *value) { return meta_fill(self, value); }

cfx_tensor *cfx_kernel_fill_Scalar(cfx_tensor *self, cfx_value value) { return fill_functional(self, value, NULL); }

cfx_tensor *cfx_kernel_fill_Tensor(cfx_tensor *self, cfx_tensor *value)
{
    return fill_functional(self, cfx_none(), value);
}

/* clone_preserve_strides */
static cfx_tensor *clone_preserve_strides(cfx_tensor *self)
{
    if (cfx_iter_internal_overlap(self))
        return cfx_op_clone(NULL, self, cfx_none());
    size_t es = cfx_dtype_size((cfx_dtype)self->dtype);
    int64_t numel = (int64_t)(self->storage->nbytes / es);
    cfx_tensor *whole = cfx_tensor_new(&numel, 1, (cfx_dtype)self->dtype, self->device);
    if (!whole)
        return NULL;
    if (self->storage->data && whole->storage->data && numel > 0)
        memcpy(whole->storage->data, self->storage->data, (size_t)numel * es);
    cfx_tensor *r = cfx_tensor_new_view(whole, self->sizes, self->strides, self->ndim, self->storage_offset);
    cfx_kernel_discard(whole); /* r holds the storage */
    return r;
}

cfx_tensor *cfx_kernel_copy(cfx_tensor *self, cfx_tensor *src, bool non_blocking)
{
    cfx_tensor *r = clone_preserve_strides(self);
    cfx_tensor *w = r ? cfx_op_copy_(NULL, r, src, non_blocking) : NULL;
    if (!w) {
        cfx_kernel_discard(r);
        return NULL;
    }
    cfx_kernel_discard(w);
    return r;
}
