/* setitem.c - Python's `x[...] = v` (THPVariable_setitem) for C: the exact operator calls
 * PyTorch makes, so make_fx records the same graph (getitem.h documents the indices).
 *
 * The value first becomes a tensor as valueToTensor makes it: a tensor stays itself; a number
 * (a wrapped number, cfx_num) becomes a 0-dim tensor of x's dtype built without dispatch and
 * passed through lift_fresh, so make_fx interns it as `_tensor_constantN` and records
 * lift_fresh_copy. One index is at::indexing::set_item: Ellipsis writes x itself, None its
 * unsqueeze(0), an integer its select, a slice its slice (skipped when it spans the whole dim
 * from 0 with step 1); several are applySlicing (getitem_internal.h). Then copy_to: equal
 * sizes copy_, a 0-dim CPU value fill_.Tensor, anything else views the value without its
 * leading 1s, expands it to the target's shape ("setitem"'s expand_inplace) and copy_. Tensor
 * indices end in index_put_ with the value viewed without its leading 1s. */
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/getitem_internal.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/scope.h"

static const char op[] = "Tensor.__setitem__";

/* slicePrefix1sSize: the sizes from the first one that is not 1 */
static cfx_int_list prefix1s_stripped(const cfx_tensor *t)
{
    int first = 0;
    while (first < t->ndim && t->sizes[first] == 1)
        first++;
    return (cfx_int_list){t->sizes + first, t->ndim - first};
}

static bool sizes_equal(const cfx_tensor *a, const int64_t *sizes, int64_t n)
{
    if (a->ndim != n)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->sizes[d] != sizes[d])
            return false;
    return true;
}

/* at::indexing::copy_to; the results are discarded (dst is written in place) */
static bool copy_to(cfx_tensor *dst, cfx_tensor *src)
{
    cfx_tensor *r;
    if (sizes_equal(dst, src->sizes, src->ndim)) {
        r = cfx_op_copy_(NULL, dst, src, false);
    } else if (src->ndim == 0 && cfx_tensor_fake_device(src).type == CFX_DEVICE_CPU) {
        r = cfx_op_fill__Tensor(NULL, dst, src);
    } else {
        cfx_tensor *view = cfx_op_view(NULL, src, prefix1s_stripped(src));
        cfx_tensor *b = view;
        if (view && !sizes_equal(view, dst->sizes, dst->ndim))
            b = cfx_op_expand(NULL, view, (cfx_int_list){dst->sizes, dst->ndim}, false);
        r = b ? cfx_op_copy_(NULL, dst, b, false) : NULL;
        if (b != view)
            cfx_kernel_discard(b);
        cfx_kernel_discard(view);
    }
    cfx_kernel_discard(r);
    return r != NULL;
}

/* valueToTensor for a wrapped number: scalar_tensor_static of x's dtype, then lift_fresh */
static cfx_tensor *value_to_tensor(cfx_tensor *x, cfx_tensor *value)
{
    if (!value->is_wrapped_number)
        return cfx_autorelease(cfx_tensor_retain(value));
    cfx_tensor *t = cfx_cpu_to_dtype(value, (cfx_dtype)x->dtype);
    if (!t)
        return NULL;
    cfx_tensor *plain = cfx_tensor_new(NULL, 0, (cfx_dtype)x->dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!plain)
        return NULL;
    cfx_cpu_copy(plain, t); /* a fresh tensor, not the wrapped number nor a view of it */
    cfx_tensor *r = cfx_op_lift_fresh(NULL, plain);
    cfx_kernel_discard(plain);
    return r;
}

/* set_item's one-index forms; NULL target = nothing to write */
static cfx_tensor *single_target(cfx_tensor *x, const cfx_index *i, bool *ok)
{
    switch (i->kind) {
    case CFX_INDEX_ELLIPSIS: return x;
    case CFX_INDEX_NONE: return cfx_op_unsqueeze(NULL, x, 0);
    case CFX_INDEX_INT: return cfx_index_select_checked(op, x, 0, i->start, 0);
    case CFX_INDEX_SLICE: {
        if (!cfx_index_step_ok(op, i))
            return NULL;
        int64_t start = i->has_start ? i->start : 0, stop = i->has_stop ? i->stop : INT64_MAX;
        if (x->ndim > 0 && start == 0 && x->sizes[0] <= stop && i->step == 1)
            return x;
        return cfx_index_slice(x, 0, i);
    }
    default: break;
    }
    *ok = false; /* a tensor index: the tuple form */
    return NULL;
}

static bool setitem(cfx_tensor *x, const cfx_index *idx, int n, cfx_tensor *value)
{
    cfx_tensor *v = value_to_tensor(x, value);
    if (!v)
        return false;
    if (n == 1) {
        bool simple = true;
        cfx_tensor *dst = single_target(x, &idx[0], &simple);
        if (simple)
            return dst && copy_to(dst, v);
    }
    cfx_tensor *tensors[CFX_MAX_DIMS];
    int ntensors;
    cfx_tensor *sliced = cfx_index_apply_slicing(op, x, idx, n, tensors, &ntensors);
    if (!sliced)
        return false;
    if (ntensors == 0)
        return copy_to(sliced, v);
    cfx_int_list stripped = prefix1s_stripped(v);
    cfx_tensor *vs = stripped.len == v->ndim ? v : cfx_op_view(NULL, v, stripped);
    cfx_tensor *r = vs ? cfx_op_index_put_(NULL, sliced, (cfx_tensor_list){tensors, ntensors}, vs, false) : NULL;
    cfx_kernel_discard(r);
    return r != NULL;
}

int cfx_setitem_at(const cfx_site *site, cfx_tensor *x, const cfx_index *idx, int n, cfx_tensor *value)
{
    if (!x || !value)
        return cfx_error_set(CFX_ERR, op, "setitem: %s is NULL", x ? "the value" : "the tensor");
    if (n < 1 || !idx)
        return cfx_error_set(CFX_ERR, op, "setitem: expected at least one index");
    const cfx_site *prev = site ? cfx_set_current_site(site) : NULL;
    cfx_scope sc = cfx_scope_begin(); /* the views and the value tensor die here */
    bool ok = setitem(x, idx, n, value);
    cfx_scope_end(sc);
    if (site)
        cfx_set_current_site(prev);
    return ok ? CFX_OK : (int)(cfx_error_occurred() ? cfx_error_status() : CFX_ERR);
}
