/* embedding_bag_composite.c - aten::embedding_bag and embedding_bag.padding_idx, the
 * CompositeImplicitAutograd front ends F.embedding_bag calls, as 2.13's C++ decomposes them
 * (native/EmbeddingBag.cpp): padding_idx checked against the weight's rows and wrapped, then
 * _embedding_bag_forward_only on contiguous indices and offsets. (2.13 calls _embedding_bag
 * instead when the weight or the per-sample weights require grad; cfx has no autograd, so
 * nothing does, and make_fx records _embedding_bag_forward_only as 2.13's does for such
 * tensors.) The default overload is the padding_idx one with None. */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"

cfx_embedding_bag_padding_idx_result cfx_composite_embedding_bag_padding_idx(
    cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets, bool scale_grad_by_freq, int64_t mode, bool sparse,
    cfx_tensor *per_sample_weights, bool include_last_offset, cfx_value padding_idx)
{
    cfx_embedding_bag_padding_idx_result none = {{NULL, NULL, NULL, NULL}};
    int64_t pad = -1;
    if (padding_idx.kind == CFX_V_INT) {
        int64_t n = weight->ndim > 0 ? weight->sizes[0] : 1;
        pad = padding_idx.u.i;
        if (!(pad >= -n && pad < n)) {
            cfx_error_set(CFX_ERR, "aten::embedding_bag.padding_idx",
                          "padding_idx must be within the number of embeddings, -%lld through %lld, but got %lld",
                          (long long)n, (long long)(n - 1), (long long)pad);
            return none;
        }
        pad = pad < 0 ? pad + n : pad; /* maybe_wrap_dim(padding_idx, weight.size(0)) */
    }
    cfx_tensor *ci = cfx_op_contiguous(NULL, indices, CFX_CONTIGUOUS_FORMAT);
    cfx_tensor *co = ci ? cfx_op_contiguous(NULL, offsets, CFX_CONTIGUOUS_FORMAT) : NULL;
    if (!co)
        return none;
    cfx__embedding_bag_forward_only_result r = cfx_op__embedding_bag_forward_only(
        NULL, weight, ci, co, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, pad);
    cfx_embedding_bag_padding_idx_result out = {{r.r0, r.r1, r.r2, r.r3}};
    return out;
}

cfx_embedding_bag_result cfx_composite_embedding_bag(cfx_tensor *weight, cfx_tensor *indices, cfx_tensor *offsets,
                                                     bool scale_grad_by_freq, int64_t mode, bool sparse,
                                                     cfx_tensor *per_sample_weights, bool include_last_offset)
{
    cfx_embedding_bag_padding_idx_result r =
        cfx_op_embedding_bag_padding_idx(NULL, weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                         per_sample_weights, include_last_offset, cfx_none());
    cfx_embedding_bag_result out = {{r.r0, r.r1, r.r2, r.r3}};
    return out;
}
