/* clamp.c - clamp, clamp_min, clamp_max and hardtanh.
 *
 * clamp(a, min, max) is minimum(maximum(a, min), max) with the bounds as wrapped numbers: the
 * same result type (result_type(a, min, max): a bound lifts only a lower category), the same
 * layout (the bounds are 0-dim), NaN in a or in a bound propagates, and min > max gives max,
 * as ATen's clamp kernel does. The Meta kernels are the same composition of the references.
 * hardtanh keeps a's dtype (its out= is allocated like a), bool refused. The Tensor overloads
 * take the bounds as tensors the same way. */
#include "dispatch/error.h"
#include "dispatch/kernels/inplace.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/wrapped_internal.h"

typedef cfx_tensor *(*binary_fn)(cfx_tensor *, cfx_tensor *);

/* f(a, wrapped(v)) unless v is None */
static cfx_tensor *bound(binary_fn f, cfx_tensor *a, cfx_value v)
{
    if (!a || cfx_value_is_none(v))
        return a;
    cfx_tensor *w = cfx_wrapped_number_new(v);
    if (!w)
        return NULL;
    cfx_tensor *r = f(a, w);
    cfx_tensor_release(w);
    return r;
}

static cfx_tensor *clamp_with(binary_fn maxf, binary_fn minf, cfx_tensor *self, cfx_value min, cfx_value max)
{
    if (cfx_value_is_none(min) && cfx_value_is_none(max)) {
        /* the C++ meta function's text, and the reference's */
        cfx_error_set(CFX_ERR, "aten::clamp", "%s",
                      maxf == cfx_meta_maximum ? "clamp called but both min and max are none!"
                                               : "torch.clamp: At least one of 'min' or 'max' must not be None");
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = bound(minf, bound(maxf, self, min), max);
    if (r == self) /* cannot happen (a bound is given), but a result is never the input */
        r = NULL;
    cfx_tensor_retain(r);
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

cfx_tensor *cfx_cpu_clamp(cfx_tensor *self, cfx_value min, cfx_value max)
{
    return clamp_with(cfx_cpu_maximum, cfx_cpu_minimum, self, min, max);
}
cfx_tensor *cfx_meta_clamp(cfx_tensor *self, cfx_value min, cfx_value max)
{
    return clamp_with(cfx_meta_maximum, cfx_meta_minimum, self, min, max);
}
cfx_tensor *cfx_cpu_clamp_min(cfx_tensor *self, cfx_value min) { return cfx_cpu_clamp(self, min, cfx_none()); }
cfx_tensor *cfx_meta_clamp_min(cfx_tensor *self, cfx_value min) { return cfx_meta_clamp(self, min, cfx_none()); }
cfx_tensor *cfx_cpu_clamp_max(cfx_tensor *self, cfx_value max) { return cfx_cpu_clamp(self, cfx_none(), max); }
cfx_tensor *cfx_meta_clamp_max(cfx_tensor *self, cfx_value max) { return cfx_meta_clamp(self, cfx_none(), max); }

static cfx_tensor *hardtanh(bool meta, cfx_tensor *self, cfx_value min_val, cfx_value max_val)
{
    if (self->dtype == CFX_BOOL) {
        cfx_error_set(CFX_ERR, "aten::hardtanh", "Bool inputs not supported for hardtanh");
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = meta ? cfx_meta_clamp(self, min_val, max_val) : cfx_cpu_clamp(self, min_val, max_val);
    if (r && r->dtype != self->dtype) {
        if (meta) {
            cfx_tensor *c = cfx_tensor_new_strided(r->sizes, r->strides, r->ndim, (cfx_dtype)self->dtype, r->device);
            r = c;
        } else {
            r = cfx_cpu_to_dtype(r, (cfx_dtype)self->dtype);
        }
    }
    cfx_tensor_retain(r);
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

cfx_tensor *cfx_cpu_hardtanh(cfx_tensor *self, cfx_value min_val, cfx_value max_val)
{
    return hardtanh(false, self, min_val, max_val);
}
cfx_tensor *cfx_meta_hardtanh(cfx_tensor *self, cfx_value min_val, cfx_value max_val)
{
    return hardtanh(true, self, min_val, max_val);
}

/* ---- clamp.Tensor, clamp_min.Tensor, clamp_max.Tensor, clamp_.Tensor ----------------------------- */

/* The bounds as tensors: maximum with min, then minimum with max (None skipped), so promotion
 * and broadcasting take all three in. clamp_cpu dispatches without bool; with one bound ATen
 * runs clamp_min/clamp_max's kernels, which have bool; the reference takes bool on Meta. */
static cfx_tensor *clamp_tensor(bool meta, bool bool_ok, cfx_tensor *self, cfx_tensor *min, cfx_tensor *max)
{
    if (!min && !max) {
        cfx_error_set(CFX_ERR, "aten::clamp", "%s",
                      meta ? "clamp called but both min and max are none!"
                           : "torch.clamp: At least one of 'min' or 'max' must not be None");
        return NULL;
    }
    binary_fn maxf = meta ? cfx_meta_maximum : cfx_cpu_maximum, minf = meta ? cfx_meta_minimum : cfx_cpu_minimum;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = min ? maxf(self, min) : self;
    r = r && max ? minf(r, max) : r;
    if (r && !meta && !bool_ok && min && max && r->dtype == CFX_BOOL) {
        cfx_kernel_not_implemented("aten::clamp", "clamp_cpu", CFX_BOOL);
        r = NULL;
    }
    cfx_tensor_retain(r);
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

cfx_tensor *cfx_cpu_clamp_Tensor(cfx_tensor *self, cfx_tensor *min, cfx_tensor *max)
{
    return clamp_tensor(false, false, self, min, max);
}
cfx_tensor *cfx_meta_clamp_Tensor(cfx_tensor *self, cfx_tensor *min, cfx_tensor *max)
{
    return clamp_tensor(true, false, self, min, max);
}
cfx_tensor *cfx_cpu_clamp_min_Tensor(cfx_tensor *self, cfx_tensor *min) { return clamp_tensor(false, true, self, min, NULL); }
cfx_tensor *cfx_meta_clamp_min_Tensor(cfx_tensor *self, cfx_tensor *min) { return clamp_tensor(true, true, self, min, NULL); }
cfx_tensor *cfx_cpu_clamp_max_Tensor(cfx_tensor *self, cfx_tensor *max) { return clamp_tensor(false, true, self, NULL, max); }
cfx_tensor *cfx_meta_clamp_max_Tensor(cfx_tensor *self, cfx_tensor *max) { return clamp_tensor(true, true, self, NULL, max); }

cfx_tensor *cfx_cpu_clamp__Tensor(cfx_tensor *self, cfx_tensor *min, cfx_tensor *max)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = cfx_cpu_into_self("aten::clamp_", self, cfx_cpu_clamp_Tensor(self, min, max), false);
    cfx_scope_end(s);
    return r ? cfx_autorelease(cfx_tensor_retain(r)) : NULL;
}
cfx_tensor *cfx_meta_clamp__Tensor(cfx_tensor *self, cfx_tensor *min, cfx_tensor *max)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *r = cfx_meta_into_self("aten::clamp_", self, cfx_meta_clamp_Tensor(self, min, max));
    cfx_scope_end(s);
    return r ? cfx_autorelease(cfx_tensor_retain(r)) : NULL;
}
