/* embedding_bag.c - _embedding_bag and _embedding_bag_forward_only (the same computation; 2.13
 * registers both on CPU and Meta, and make_fx records the forward-only one when nothing
 * requires grad) on CPU (ATen's EmbeddingBag.cpp) and Meta (2.13's meta_embedding_bag).
 *
 * Bag i is indices[offsets[i] : offsets[i + 1]] (the last bag runs to the end, or to the last
 * offset with include_last_offset). The four results, as 2.13's CPU kernel makes them:
 *   output       [num_bags, D]: per bag the sum (times per_sample_weights), mean or max of
 *                its weight rows, 0 for an empty bag; rows at padding_idx (>= 0) are skipped;
 *   offset2bag   [len(indices)]: the bag of every index (indices after the last offset count
 *                in the last bag), or [0] on the sum fast path (float32 weight with unit
 *                column stride, no padding_idx, per_sample_weights with unit stride if any);
 *   bag_size     [num_bags]: per bag its non-padding indices (so the trailing indices of
 *                include_last_offset count, though the sum leaves them out: a mean divides by
 *                it, and the max takes them in), zeros in sum mode, where the forward-only op
 *                (make_bag_size without requires_grad) sizes it like offsets;
 *   max_indices  [num_bags, D]: the index of each column's maximum (the first one) in max
 *                mode, else a copy of bag_size.
 * The index results take the promoted dtype of indices and offsets. The Meta kernel follows
 * meta_embedding_bag: with a CPU fake device the shapes above, on a plain meta device its
 * other branch (offset2bag [len(indices)], bag_size like offsets, max_indices [0] but in max
 * mode, all like indices). meta_embedding_bag_forward_only then sizes bag_size like offsets on
 * a CPU device in every mode (so a fake mean or max with include_last_offset has one more
 * than the CPU kernel's, and max_indices keeps [num_bags]: 2.13's fake and real differ). */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/nn_shapes.h"

static const char OP[] = "aten::_embedding_bag";

enum { SUM, MEAN, MAX };

static const char *tensor_type(cfx_dtype dt) /* torch.<T>Tensor, as TensorArg checks print */
{
    switch (dt) {
    case CFX_FLOAT32: return "torch.FloatTensor";
    case CFX_FLOAT64: return "torch.DoubleTensor";
    case CFX_INT64: return "torch.LongTensor";
    case CFX_INT32: return "torch.IntTensor";
    case CFX_INT16: return "torch.ShortTensor";
    case CFX_INT8: return "torch.CharTensor";
    case CFX_UINT8: return "torch.ByteTensor";
    default: return "torch.BoolTensor";
    }
}

static bool is_index(cfx_dtype dt) { return dt == CFX_INT64 || dt == CFX_INT32; }

/* Element i along dim 0 of a 1-d integer or bool tensor. promoteIndicesAndOffsets converts
 * indices and offsets to their promoted type (int32 or int64, checked first), so either may be
 * of a narrower type here: it is read as the value it converts to. */
static int64_t iget(const cfx_tensor *t, int64_t i)
{
    return cfx_load_int(cfx_tensor_data(t), i * (t->ndim ? t->strides[0] : 0), (cfx_dtype)t->dtype);
}

static void iset(cfx_tensor *t, int64_t i, int64_t v)
{
    if (t->dtype == CFX_INT64)
        ((int64_t *)cfx_tensor_data(t))[i] = v;
    else
        ((int32_t *)cfx_tensor_data(t))[i] = (int32_t)v;
}

static bool fast_path(const cfx_tensor *weight, const cfx_tensor *psw, int64_t padding_idx)
{
    return weight->dtype == CFX_FLOAT32 && weight->ndim == 2 && weight->strides[1] == 1 && padding_idx < 0 &&
           (!psw || (psw->ndim >= 1 && psw->strides[0] == 1));
}

static bool psw_checks(const cfx_tensor *indices, const cfx_tensor *psw, int64_t mode, bool meta)
{
    if (!psw)
        return true;
    if (mode != SUM) {
        cfx_error_set(CFX_ERR, OP, "embedding_bag: per_sample_weights only supported with mode='sum'");
        return false;
    }
    if (meta && psw->ndim != 1) {
        cfx_error_set(CFX_ERR, OP, "expected per_sample_weights to be 1D tensor, got %dD", psw->ndim);
        return false;
    }
    if (meta && cfx_tensor_numel(psw) != cfx_tensor_numel(indices)) {
        cfx_error_set(CFX_ERR, OP, "expected per_sample_weights.numel() (%lld to be the same as indices.numel() (%lld)",
                      (long long)cfx_tensor_numel(psw), (long long)cfx_tensor_numel(indices));
        return false;
    }
    return true;
}

static cfx__embedding_bag_result make4(const int64_t *s0, int n0, cfx_dtype d0, const int64_t *s1, int n1,
                                       const int64_t *s2, int n2, const int64_t *s3, int n3, cfx_dtype di,
                                       cfx_device dev)
{
    cfx__embedding_bag_result r = {{NULL, NULL, NULL, NULL}};
    r.t[0] = cfx_tensor_new(s0, n0, d0, dev);
    r.t[1] = r.t[0] ? cfx_tensor_new(s1, n1, di, dev) : NULL;
    r.t[2] = r.t[1] ? cfx_tensor_new(s2, n2, di, dev) : NULL;
    r.t[3] = r.t[2] ? cfx_tensor_new(s3, n3, di, dev) : NULL;
    if (!r.t[3]) {
        for (int k = 0; k < 3; k++)
            cfx_kernel_discard(r.t[k]);
        return (cfx__embedding_bag_result){{NULL, NULL, NULL, NULL}};
    }
    return r;
}

/* meta_embedding_bag; forward_only: meta_embedding_bag_forward_only, whose bag_size on a CPU
 * device hint is sized like offsets (as make_bag_size sizes it without requires_grad in sum
 * mode, though the meta does it in every mode; max_indices keeps _embedding_bag's size) */
static cfx__embedding_bag_result meta_bag(cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets, int64_t mode,
                                          cfx_tensor *per_sample_weights, bool include_last_offset,
                                          int64_t padding_idx, bool forward_only)
{
    cfx__embedding_bag_result none = {{NULL, NULL, NULL, NULL}};
    const cfx_tensor *chk[2] = {indices, offsets};
    for (int i = 0; i < 2; i++)
        if (!is_index((cfx_dtype)chk[i]->dtype)) {
            cfx_error_set(CFX_ERR, OP, "expected %s to be long or int, got %s", i ? "offsets" : "indices",
                          cfx_dtype_torch_name((cfx_dtype)chk[i]->dtype));
            return none;
        }
    if (!cfx_dtype_is_floating((cfx_dtype)weight->dtype)) {
        cfx_error_set(CFX_ERR, OP, "expected weight to be floating point type, got %s",
                      cfx_dtype_torch_name((cfx_dtype)weight->dtype));
        return none;
    }
    if (weight->ndim < 2 || offsets->ndim < 1 || indices->ndim < 1) {
        cfx_error_set(CFX_ERR, OP, "embedding_bag: expected a 2-D weight and 1-D indices and offsets");
        return none;
    }
    int64_t nb = offsets->sizes[0], D = weight->sizes[1], ni = indices->sizes[0], zero = 0;
    if (include_last_offset) {
        if (nb < 1) {
            cfx_error_set(CFX_ERR, OP, "include_last_offset: numBags should be at least 1");
            return none;
        }
        nb--;
    }
    if (!psw_checks(indices, per_sample_weights, mode, true))
        return none;
    int64_t out[2] = {nb, D};
    cfx_device dev = weight->device;
    if (cfx_tensor_fake_device(offsets).type != CFX_DEVICE_CPU) {
        cfx_dtype di = (cfx_dtype)indices->dtype;
        return make4(out, 2, (cfx_dtype)weight->dtype, &ni, 1, offsets->sizes, offsets->ndim,
                     mode == MAX ? out : &zero, mode == MAX ? 2 : 1, di, dev);
    }
    cfx_dtype di = (cfx_dtype)offsets->dtype;
    bool fast = mode == SUM && fast_path(weight, per_sample_weights, padding_idx);
    return make4(out, 2, (cfx_dtype)weight->dtype, fast ? &zero : &ni, 1, forward_only ? offsets->sizes : &nb,
                 forward_only ? offsets->ndim : 1, out, mode == MAX ? 2 : 1, di, dev);
}

cfx__embedding_bag_result cfx_meta__embedding_bag(cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets,
                                                  bool scale_grad_by_freq, int64_t mode, bool sparse,
                                                  cfx_tensor *per_sample_weights, bool include_last_offset,
                                                  int64_t padding_idx)
{
    (void)scale_grad_by_freq, (void)sparse;
    return meta_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, false);
}

/* the CPU kernel's argument checks (check_arguments and its callers), in their order */
static bool cpu_checks(const cfx_tensor *weight, const cfx_tensor *indices, const cfx_tensor *offsets, int64_t mode,
                       const cfx_tensor *psw, bool include_last_offset)
{
    cfx_dtype pi = cfx_dtype_promote((cfx_dtype)indices->dtype, (cfx_dtype)offsets->dtype);
    if (!is_index(pi)) { /* promoteIndicesAndOffsets converts both before the check */
        cfx_error_set(CFX_ERR, OP, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                      "types: Long, Int; but got %s instead (while checking arguments for embedding_bag)",
                      tensor_type(pi));
        return false;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)weight->dtype)) {
        cfx_error_set(CFX_ERR, OP, "Expected tensor for argument #1 'weight' to have one of the following scalar "
                      "types: Half, BFloat16, Float, Double; but got %s instead (while checking arguments for "
                      "embedding_bag)", tensor_type((cfx_dtype)weight->dtype));
        return false;
    }
    if (offsets->ndim != 1) {
        cfx_error_set(CFX_ERR, OP, "offsets has to be a 1D Tensor, but got Tensor of dimension %d", offsets->ndim);
        return false;
    }
    if (indices->ndim != 1 || weight->ndim != 2) {
        cfx_error_set(CFX_ERR, OP, "input has to be a 1D or 2D Tensor, but got Tensor of dimension %d", indices->ndim);
        return false;
    }
    int64_t no = offsets->sizes[0], ni = indices->sizes[0];
    if (no > 0) {
        int64_t first = iget(offsets, 0), last = iget(offsets, no - 1);
        if (first != 0) {
            cfx_error_set(CFX_ERR, OP, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                          "start from position 0. However, got %lld\n[ %s{} ]", (long long)first,
                          tensor_type((cfx_dtype)offsets->dtype));
            return false;
        }
        if (last > ni) {
            cfx_error_set(CFX_ERR, OP, "offsets[-1] can not be greater than input's length %lld but got offsets[-1] "
                          "of %lld", (long long)ni, (long long)last);
            return false;
        }
    }
    if (!psw_checks(indices, psw, mode, false))
        return false;
    if (psw && psw->dtype != weight->dtype) {
        cfx_error_set(CFX_ERR, OP, "Expected tensor for argument #1 'weight' to have the same type as tensor for "
                      "argument #1 'per_sample_weights'; but type %s does not equal %s (while checking arguments "
                      "for embedding_bag)", tensor_type((cfx_dtype)weight->dtype), tensor_type((cfx_dtype)psw->dtype));
        return false;
    }
    static const char UNCLEAR[] = " to be true, but got false.  (Could this error message be improved?  If so, please "
                                  "report an enhancement request to PyTorch.)";
    if (psw && (psw->ndim != 1 || cfx_tensor_numel(psw) != ni)) {
        cfx_error_set(CFX_ERR, OP, "Expected %s%s", psw->ndim != 1 ? "per_sample_weights.value().dim() == 1"
                                                                   : "per_sample_weights.value().numel() == indices.numel()",
                      UNCLEAR);
        return false;
    }
    if (include_last_offset && no < 1) {
        cfx_error_set(CFX_ERR, OP, "include_last_offset: number of offset should be at least 1");
        return false;
    }
    if (mode < SUM || mode > MAX) {
        cfx_error_set(CFX_ERR, OP, "`mode` must be sum, mean, or max.");
        return false;
    }
    for (int64_t j = 0; j < ni; j++) {
        int64_t v = iget(indices, j);
        if (v < 0 || v >= weight->sizes[0]) {
            cfx_error_set(CFX_ERR, OP, "Expected i < index_size%s", UNCLEAR);
            return false;
        }
    }
    for (int64_t i = 1; i < no; i++)
        if (iget(offsets, i) < iget(offsets, i - 1)) {
            cfx_error_set(CFX_ERR, OP, "Expected i < index_size%s", UNCLEAR);
            return false;
        }
    return true;
}

/* _embedding_bag_cpu_impl: requires_grad is true for _embedding_bag, false for the forward-only
 * op, where make_bag_size keeps bag_size (and so max_indices) sized like offsets in sum mode */
static cfx__embedding_bag_result cpu_bag(cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets, int64_t mode,
                                         cfx_tensor *per_sample_weights, bool include_last_offset,
                                         int64_t padding_idx, bool requires_grad)
{
    cfx__embedding_bag_result none = {{NULL, NULL, NULL, NULL}};
    const cfx_tensor *psw = per_sample_weights;
    if (!cpu_checks(weight, indices, offsets, mode, psw, include_last_offset))
        return none;
    int64_t no = offsets->sizes[0], ni = indices->sizes[0], D = weight->sizes[1], zero = 0;
    int64_t nb = include_last_offset ? no - 1 : no, out[2] = {nb, D};
    bool fast = mode == SUM && fast_path(weight, psw, padding_idx);
    cfx_dtype di = cfx_dtype_promote((cfx_dtype)indices->dtype, (cfx_dtype)offsets->dtype);
    int64_t bags = requires_grad || mode != SUM ? nb : no; /* bag_size's; max_indices' but in max mode */
    cfx__embedding_bag_result r = make4(out, 2, (cfx_dtype)weight->dtype, fast ? &zero : &ni, 1, &bags, 1,
                                        mode == MAX ? out : &bags, mode == MAX ? 2 : 1, di, weight->device);
    if (!r.t[0])
        return none;
    cfx_tensor *o = r.t[0];
    for (int64_t e = 0; e < nb * D; e++)
        cfx_nn_set(o, e, 0);
    for (int k = 2; k < 4; k++) /* sum mode's bag_size and max_indices stay zeros */
        for (int64_t e = 0; e < cfx_tensor_numel(r.t[k]); e++)
            iset(r.t[k], e, 0);
    int64_t ws0 = weight->strides[0], ws1 = weight->strides[1];
    for (int64_t i = 0; i < nb; i++) {
        int64_t lo = iget(offsets, i), hi = i + 1 < no ? iget(offsets, i + 1) : ni, count = 0;
        /* offset2bag, bag_size and the max run over every index up to the next bag's offset
         * (the last bag's to the end), the sum and mean only over [lo, hi) */
        int64_t end = i + 1 < nb ? iget(offsets, i + 1) : ni;
        for (int64_t j = lo; j < end; j++) {
            if (!fast)
                iset(r.t[1], j, i);
            count += iget(indices, j) != padding_idx;
        }
        bool seen = false; /* max: the first row sets, a later one must be greater */
        for (int64_t j = lo; j < (mode == MAX ? end : hi); j++) {
            int64_t row = iget(indices, j);
            if (row == padding_idx)
                continue;
            double scale = psw ? cfx_nn_get(psw, j * psw->strides[0]) : 1.0;
            for (int64_t d = 0; d < D; d++) {
                double v = cfx_nn_get(weight, row * ws0 + d * ws1), cur = cfx_nn_get(o, i * D + d);
                if (mode != MAX) {
                    cfx_nn_set(o, i * D + d, cur + scale * v);
                } else if (!seen || v > cur) {
                    cfx_nn_set(o, i * D + d, v);
                    iset(r.t[3], i * D + d, row);
                }
            }
            seen = true;
        }
        if (mode == MEAN && count)
            for (int64_t d = 0; d < D; d++)
                cfx_nn_set(o, i * D + d, cfx_nn_get(o, i * D + d) / (double)count);
        if (mode != SUM)
            iset(r.t[2], i, count);
        if (mode == MEAN) /* max_indices: bag_size's values */
            iset(r.t[3], i, count);
    }
    return r;
}

cfx__embedding_bag_result cfx_cpu__embedding_bag(cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets,
                                                 bool scale_grad_by_freq, int64_t mode, bool sparse,
                                                 cfx_tensor *per_sample_weights, bool include_last_offset,
                                                 int64_t padding_idx)
{
    (void)scale_grad_by_freq, (void)sparse;
    return cpu_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, true);
}

cfx__embedding_bag_forward_only_result cfx_meta__embedding_bag_forward_only(
    cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets, bool scale_grad_by_freq, int64_t mode, bool sparse,
    cfx_tensor *per_sample_weights, bool include_last_offset, int64_t padding_idx)
{
    (void)scale_grad_by_freq, (void)sparse;
    cfx__embedding_bag_result r =
        meta_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, true);
    return (cfx__embedding_bag_forward_only_result){{r.t[0], r.t[1], r.t[2], r.t[3]}};
}

cfx__embedding_bag_forward_only_result cfx_cpu__embedding_bag_forward_only(
    cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets, bool scale_grad_by_freq, int64_t mode, bool sparse,
    cfx_tensor *per_sample_weights, bool include_last_offset, int64_t padding_idx)
{
    (void)scale_grad_by_freq, (void)sparse;
    cfx__embedding_bag_result r =
        cpu_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, false);
    return (cfx__embedding_bag_forward_only_result){{r.t[0], r.t[1], r.t[2], r.t[3]}};
}
