/* inplace_pointwise.c - the in-place forms of clamp, clamp_min, clamp_max, hardtanh and gelu,
 * the Meta kernel of remainder_, and remainder's Scalar overloads.
 *
 * Each in-place kernel computes the out-of-place result and writes it into self, with the
 * checks of the code PyTorch 2.13 runs on each key:
 *   CPU   the structured kernel with out=self: TensorIterator refuses a broadcast shape other
 *         than self's ("output with shape [3] doesn't match the broadcast shape [2, 3]"), then
 *         a result type self cannot hold ("result type Float can't be cast to the desired
 *         output type Long"; clamp's own check names C++ types: "long int");
 *   Meta  the reference made in-place (_make_inplace: ref(a, out=a)): _safe_copy_out refuses
 *         an unsafe cast ("Attempting to cast from torch.float32 to out tensor ..."), and
 *         _maybe_resize_out resizes self (contiguously) to a larger broadcast shape, as 2.13
 *         still does with a deprecation warning.
 * hardtanh_ casts to self's dtype like hardtanh; gelu_'s reference keeps an integer dtype.
 * remainder.Scalar is remainder(self, wrapped(other)) through the dispatcher
 * (CompositeExplicitAutograd), remainder.Scalar_Tensor the Tensor kernel with self wrapped. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/alloc.h"
#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/inplace.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor_internal.h"
#include "dispatch/wrapped_internal.h"

static bool same_shape(const cfx_tensor *a, const cfx_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->sizes[d] != b->sizes[d])
            return false;
    return true;
}

/* c10's C++ type names, which clamp's meta function prints */
static const char *ctype_name(cfx_dtype t)
{
    switch (t) {
    case CFX_BOOL: return "bool";
    case CFX_UINT8: return "unsigned char";
    case CFX_INT8: return "signed char";
    case CFX_INT16: return "short int";
    case CFX_INT32: return "int";
    case CFX_INT64: return "long int";
    case CFX_FLOAT32: return "float";
    case CFX_FLOAT64: return "double";
    case CFX_COMPLEX64: return "c10::complex<float>";
    case CFX_COMPLEX128: return "c10::complex<double>";
    }
    return "?";
}

cfx_tensor *cfx_cpu_into_self(const char *op, cfx_tensor *self, cfx_tensor *r, bool ctypes)
{
    if (!r)
        return NULL;
    if (!same_shape(self, r)) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "output with shape ");
        cfx_geom_put_dims(&b, self->sizes, self->ndim);
        cfx_buf_puts(&b, " doesn't match the broadcast shape ");
        cfx_geom_put_dims(&b, r->sizes, r->ndim);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "output shape doesn't match the broadcast shape");
        cfx_free(msg);
        return NULL;
    }
    cfx_dtype rt = (cfx_dtype)r->dtype, st = (cfx_dtype)self->dtype;
    if (!cfx_dtype_can_cast(rt, st)) {
        cfx_error_set(CFX_ERR, op, "result type %s can't be cast to the desired output type %s",
                      cfx_dtype_scalar_name(rt), ctypes ? ctype_name(st) : cfx_dtype_scalar_name(st));
        return NULL;
    }
    cfx_cpu_copy(self, r);
    cfx_tensor_bump_version(self);
    return self;
}

cfx_tensor *cfx_cpu_into_out(const char *op, cfx_tensor *out, cfx_tensor *r)
{
    if (!r)
        return NULL;
    cfx_dtype rt = (cfx_dtype)r->dtype, ot = (cfx_dtype)out->dtype;
    if (!cfx_dtype_can_cast(rt, ot)) {
        cfx_error_set(CFX_ERR, op, "result type %s can't be cast to the desired output type %s",
                      cfx_dtype_scalar_name(rt), cfx_dtype_scalar_name(ot));
        return NULL;
    }
    if (!same_shape(out, r)) { /* resize_output, then as_strided_ to the iterator's strides */
        uint64_t need = 0;
        if (cfx_tensor_numel(r) > 0) {
            need = (uint64_t)out->storage_offset + 1;
            for (int d = 0; d < r->ndim; d++)
                need += (uint64_t)(r->sizes[d] - 1) * (uint64_t)r->strides[d];
            need *= cfx_dtype_size(ot);
        }
        cfx_storage *st = out->storage;
        if (need > st->nbytes) {
            if (st->data) {
                char *p = cfx_realloc(st->data, (size_t)need);
                if (!p) {
                    cfx_error_set(CFX_ERR_NOMEM, op, "DefaultCPUAllocator: not enough memory: you tried to allocate "
                                  "%llu bytes.", (unsigned long long)need);
                    return NULL;
                }
                memset(p + st->nbytes, 0, (size_t)need - st->nbytes);
                st->data = p;
            }
            st->nbytes = (size_t)need;
        }
        if (!cfx_tensor_set_geometry(out, r->sizes, r->strides, r->ndim))
            return NULL;
    }
    cfx_cpu_copy(out, r);
    cfx_tensor_bump_version(out);
    return out;
}

cfx_tensor *cfx_meta_into_self(const char *op, cfx_tensor *self, cfx_tensor *r)
{
    if (!r)
        return NULL;
    cfx_dtype rt = (cfx_dtype)r->dtype, st = (cfx_dtype)self->dtype;
    if (cfx_pytype_of_dtype(st) < cfx_pytype_of_dtype(rt)) {
        cfx_error_set(CFX_ERR, op,
                      "Attempting to cast from %s to out tensor with dtype %s, but this can't be cast because it is "
                      "not safe!",
                      cfx_dtype_torch_name(rt), cfx_dtype_torch_name(st));
        return NULL;
    }
    if (!same_shape(self, r)) {
        int64_t strides[CFX_MAX_DIMS];
        cfx_contiguous_strides(r->sizes, r->ndim, strides);
        if (!cfx_tensor_set_geometry(self, r->sizes, strides, r->ndim))
            return NULL;
    }
    cfx_tensor_bump_version(self);
    return self;
}

/* ---- clamp_, clamp_min_, clamp_max_, clamp_.Tensor, hardtanh_, gelu_ --------------------------- */

cfx_tensor *cfx_cpu_clamp_(cfx_tensor *self, cfx_value min, cfx_value max)
{
    INTO_SELF(cfx_cpu_into_self, "aten::clamp_", self, cfx_cpu_clamp(self, min, max), true);
}
cfx_tensor *cfx_meta_clamp_(cfx_tensor *self, cfx_value min, cfx_value max)
{
    INTO_SELF(cfx_meta_into_self, "aten::clamp_", self, cfx_meta_clamp(self, min, max));
}
cfx_tensor *cfx_cpu_clamp_min_(cfx_tensor *self, cfx_value min)
{
    INTO_SELF(cfx_cpu_into_self, "aten::clamp_min_", self, cfx_cpu_clamp_min(self, min), true);
}
cfx_tensor *cfx_meta_clamp_min_(cfx_tensor *self, cfx_value min)
{
    INTO_SELF(cfx_meta_into_self, "aten::clamp_min_", self, cfx_meta_clamp_min(self, min));
}
cfx_tensor *cfx_cpu_clamp_max_(cfx_tensor *self, cfx_value max)
{
    INTO_SELF(cfx_cpu_into_self, "aten::clamp_max_", self, cfx_cpu_clamp_max(self, max), true);
}
cfx_tensor *cfx_meta_clamp_max_(cfx_tensor *self, cfx_value max)
{
    INTO_SELF(cfx_meta_into_self, "aten::clamp_max_", self, cfx_meta_clamp_max(self, max));
}
cfx_tensor *cfx_cpu_hardtanh_(cfx_tensor *self, cfx_value min_val, cfx_value max_val)
{
    INTO_SELF(cfx_cpu_into_self, "aten::hardtanh_", self, cfx_cpu_hardtanh(self, min_val, max_val), false);
}
cfx_tensor *cfx_meta_hardtanh_(cfx_tensor *self, cfx_value min_val, cfx_value max_val)
{
    INTO_SELF(cfx_meta_into_self, "aten::hardtanh_", self, cfx_meta_hardtanh(self, min_val, max_val));
}
cfx_tensor *cfx_cpu_gelu_(cfx_tensor *self, const char *approximate)
{
    INTO_SELF(cfx_cpu_into_self, "aten::gelu_", self, cfx_cpu_gelu(self, approximate), false);
}
cfx_tensor *cfx_meta_gelu_(cfx_tensor *self, const char *approximate)
{
    INTO_SELF(cfx_meta_into_self, "aten::gelu_", self, cfx_meta_gelu(self, approximate));
}

/* ---- remainder ----------------------------------------------------------------------------------- */

cfx_tensor *cfx_meta_remainder__Tensor(cfx_tensor *self, cfx_tensor *other)
{
    INTO_SELF(cfx_meta_into_self, "aten::remainder_", self, cfx_meta_remainder_Tensor(self, other));
}
cfx_tensor *cfx_kernel_remainder_Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_remainder(self, w_));
}
cfx_tensor *cfx_meta_remainder_Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_meta_remainder_Tensor(self, w_));
}
cfx_tensor *cfx_kernel_remainder__Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_remainder__Tensor(self, w_));
}
cfx_tensor *cfx_meta_remainder__Scalar(cfx_tensor *self, cfx_value other)
{
    CFX_WITH_WRAPPED(other, cfx_meta_remainder__Tensor(self, w_));
}
cfx_tensor *cfx_cpu_remainder_Scalar_Tensor(cfx_value self, cfx_tensor *other)
{
    CFX_WITH_WRAPPED(self, cfx_cpu_remainder_Tensor(w_, other));
}
cfx_tensor *cfx_meta_remainder_Scalar_Tensor(cfx_value self, cfx_tensor *other)
{
    CFX_WITH_WRAPPED(self, cfx_meta_remainder_Tensor(w_, other));
}
