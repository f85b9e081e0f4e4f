/* getitem.c - x[...] as PyTorch's THPVariable_getitem and applySlicing do it (getitem.h).
 *
 * Every step is an operator call through the dispatcher (slice.Tensor, select.int,
 * unsqueeze, alias, index.Tensor), so modes and tracers see exactly PyTorch's calls. A slice
 * passes Python's bounds through unchanged (None start = 0, None stop = INT64_MAX), an integer
 * its raw value (select(x, 0, -1)); the checks here are the ones Python's indexing makes
 * before any operator runs. */
#include <stdlib.h>

#include "dispatch/getitem.h"
#include "dispatch/getitem_internal.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/scope.h"

static const char getitem_op[] = "Tensor.__getitem__";

bool cfx_index_step_ok(const char *op, const cfx_index *s)
{
    if (s->step <= 0) {
        cfx_error_set(CFX_ERR, op, "step must be greater than zero");
        return false;
    }
    return true;
}

cfx_tensor *cfx_index_slice(cfx_tensor *x, int64_t dim, const cfx_index *s)
{
    return cfx_op_slice_Tensor(NULL, x, dim, cfx_int(s->has_start ? s->start : 0),
                               cfx_int(s->has_stop ? s->stop : INT64_MAX), s->step);
}

/* applySelect: the 0-dim and bounds checks with Python's texts, then select with the raw
 * index; real_dim is the dim of the original tensor, for the message */
cfx_tensor *cfx_index_select_checked(const char *op, cfx_tensor *x, int64_t dim, int64_t index, int64_t real_dim)
{
    if (index == 0 && dim == 0 && x->ndim == 0) {
        cfx_error_set(CFX_ERR, op,
                      "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                      "to convert a 0-dim tensor to a number");
        return NULL;
    }
    if (dim < x->ndim) {
        int64_t size = x->sizes[dim];
        if (!(size > -1 - index && size > index)) {
            cfx_error_set(CFX_ERR, op, "index %lld is out of bounds for dimension %lld with size %lld",
                          (long long)index, (long long)real_dim, (long long)size);
            return NULL;
        }
    }
    return cfx_op_select_int(NULL, x, dim, index);
}

/* The one-index forms of THPVariable_getitem. */
static cfx_tensor *single(cfx_tensor *x, const cfx_index *i)
{
    const char *op = getitem_op;
    switch (i->kind) {
    case CFX_INDEX_NONE: return cfx_op_unsqueeze(NULL, x, 0);
    case CFX_INDEX_ELLIPSIS: return cfx_op_alias(NULL, x);
    case CFX_INDEX_INT: return cfx_index_select_checked(op, x, 0, i->start, 0);
    case CFX_INDEX_SLICE:
        if (x->ndim == 0) {
            cfx_error_set(CFX_ERR, op, "slice() cannot be applied to a 0-dim tensor.");
            return NULL;
        }
        return cfx_index_step_ok(op, i) ? cfx_index_slice(x, 0, i) : NULL;
    case CFX_INDEX_TENSOR: {
        cfx_tensor *const one[1] = {i->tensor};
        return cfx_op_index_Tensor(NULL, x, (cfx_tensor_list){one, 1});
    }
    }
    cfx_error_set(CFX_ERR, op, "getitem: unknown index kind %d", (int)i->kind);
    return NULL;
}

cfx_tensor *cfx_index_apply_slicing(const char *op, cfx_tensor *x, const cfx_index *idx, int n,
                                    cfx_tensor **tensors, int *ntensors_out)
{
    int64_t specified = 0;
    for (int k = 0; k < n; k++) {
        if (idx[k].kind == CFX_INDEX_TENSOR && idx[k].tensor)
            specified += idx[k].tensor->dtype == CFX_BOOL ? idx[k].tensor->ndim : 1;
        else if (idx[k].kind == CFX_INDEX_INT || idx[k].kind == CFX_INDEX_SLICE)
            specified++;
    }
    if (specified > x->ndim) {
        cfx_error_set(CFX_ERR, op, "too many indices for tensor of dimension %d", x->ndim);
        return NULL;
    }
    int ntensors = 0;
    for (int d = 0; d < CFX_MAX_DIMS; d++)
        tensors[d] = NULL;
    cfx_tensor *r = x;
    int64_t dim = 0;
    for (int k = 0; k < n && r; k++) {
        const cfx_index *i = &idx[k];
        cfx_tensor *before = r;
        switch (i->kind) {
        case CFX_INDEX_INT: r = cfx_index_select_checked(op, r, dim, i->start, k); break;
        case CFX_INDEX_SLICE: {
            if (!cfx_index_step_ok(op, i)) {
                r = NULL;
                break;
            }
            int64_t start = i->has_start ? i->start : 0, stop = i->has_stop ? i->stop : INT64_MAX;
            bool whole = r->ndim > 0 && start == 0 && r->sizes[dim] <= stop && i->step == 1;
            if (!whole)
                r = cfx_index_slice(r, dim, i);
            dim++;
            break;
        }
        case CFX_INDEX_ELLIPSIS: dim += x->ndim - specified; break;
        case CFX_INDEX_NONE: r = cfx_op_unsqueeze(NULL, r, dim++); break;
        case CFX_INDEX_TENSOR:
            if (dim >= CFX_MAX_DIMS) {
                cfx_error_set(CFX_ERR, op, "too many indices");
                r = NULL;
                break;
            }
            tensors[dim] = i->tensor;
            ntensors = (int)dim + 1;
            dim++;
            break;
        default: cfx_error_set(CFX_ERR, op, "getitem: unknown index kind %d", (int)i->kind); r = NULL; break;
        }
        if (before != r && before != x) /* an intermediate view: the next one holds the storage */
            cfx_kernel_discard(before);
    }
    *ntensors_out = r ? ntensors : 0;
    return r;
}

/* applySlicing + dispatch_index for the tuple form. */
static cfx_tensor *multi(cfx_tensor *x, const cfx_index *idx, int n)
{
    cfx_tensor *tensors[CFX_MAX_DIMS];
    int ntensors;
    cfx_tensor *r = cfx_index_apply_slicing(getitem_op, x, idx, n, tensors, &ntensors);
    if (!r)
        return NULL;
    if (ntensors > 0) {
        cfx_tensor *out = cfx_op_index_Tensor(NULL, r, (cfx_tensor_list){tensors, ntensors});
        if (r != x)
            cfx_kernel_discard(r);
        return out;
    }
    return r == x ? cfx_op_alias(NULL, x) : r;
}

cfx_tensor *cfx_getitem_at(const cfx_site *site, cfx_tensor *x, const cfx_index *idx, int n)
{
    if (!x)
        return NULL;
    const cfx_site *prev = site ? cfx_set_current_site(site) : NULL;
    cfx_tensor *r;
    if (n < 1 || !idx) {
        cfx_error_set(CFX_ERR, getitem_op, "getitem: expected at least one index");
        r = NULL;
    } else {
        r = n == 1 ? single(x, idx) : multi(x, idx, n);
    }
    if (site)
        cfx_set_current_site(prev);
    return r;
}
