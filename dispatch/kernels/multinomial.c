/* multinomial.c - aten::multinomial as PyTorch 2.13 runs it on CPU and on meta tensors.
 *
 * CPU (native/Distributions.cpp, multinomial_out): without replacement, or for one sample, the
 * Gumbel trick: q = empty_like(self).exponential_(1), q = self / q, and the sample is
 * argmax(q, -1, keepdim) (one) or topk(q, n).indices; with replacement
 * (cpu/MultinomialKernel.cpp), per row the cumulative sums in the input's type normalised by
 * their total, then per sample a 53-bit uniform and a binary search for its bucket. Both draw
 * from the generator in PyTorch's order, so a seeded generator gives PyTorch's samples (the
 * Gumbel path's ties, only possible between zero-probability categories sampled without
 * replacement, are broken by cfx's topk).
 *
 * Meta: 2.13's Python meta_multinomial: only the rank is checked. */
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/generator_internal.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"

/* element (i, j) of a 1-d (i = 0) or 2-d float tensor, as double */
static double at2(const cfx_tensor *t, int64_t i, int64_t j)
{
    int64_t off = t->storage_offset + (t->ndim > 1 ? i * t->strides[0] : 0) + j * t->strides[t->ndim - 1];
    const char *d = (const char *)t->storage->data;
    return t->dtype == CFX_FLOAT32 ? ((const float *)d)[off] : ((const double *)d)[off];
}

/* multinomial_with_replacement_apply<scalar_t>: the sums in float for a float32 input */
static bool with_replacement(const char *op, const cfx_tensor *self, int64_t n_sample, cfx_generator *g,
                             int64_t *out)
{
    int64_t ncat = self->sizes[self->ndim - 1], ndist = self->ndim > 1 ? self->sizes[0] : 1;
    bool f32 = self->dtype == CFX_FLOAT32;
    double *cum = cfx_malloc(sizeof(double) * (size_t)(ncat > 0 ? ncat : 1));
    if (!cum)
        return cfx_error_set(CFX_ERR_NOMEM, op, "out of memory"), false;
    const char *err = NULL;
    cfx_generator_lock(g);
    for (int64_t i = 0; i < ndist && !err; i++) {
        float sumf = 0;
        double sumd = 0;
        for (int64_t j = 0; j < ncat && !err; j++) {
            double v = at2(self, i, j);
            if (!(v >= 0))
                err = "invalid multinomial distribution (encountering probability entry < 0)";
            else if (!isfinite(v))
                err = "invalid multinomial distribution (encountering probability entry = infinity or NaN)";
            else if (f32)
                sumf += (float)v, cum[j] = sumf;
            else
                sumd += v, cum[j] = sumd;
        }
        if (err)
            break;
        double sum = f32 ? sumf : sumd;
        if (!(sum > 0)) {
            err = "invalid multinomial distribution (sum of probabilities <= 0)";
            break;
        }
        for (int64_t j = 0; j < ncat; j++)
            cum[j] = f32 ? (double)((float)cum[j] / sumf) : cum[j] / sumd;
        for (int64_t k = 0; k < n_sample; k++) {
            double u = cfx_generator_next_uniform_d(g);
            int64_t left = 0, right = ncat;
            cum[ncat - 1] = 1; /* the last bucket ends at 1 */
            while (right - left > 0) {
                int64_t mid = left + (right - left) / 2;
                if (cum[mid] < u)
                    left = mid + 1;
                else
                    right = mid;
            }
            out[i * n_sample + k] = left;
        }
    }
    cfx_generator_unlock(g);
    cfx_free(cum);
    if (err)
        cfx_error_set(CFX_ERR, op, "%s", err);
    return !err;
}

/* the Gumbel path's sanity checks: every probability finite and >= 0, no row summing to 0 */
static bool gumbel_checks(const char *op, const cfx_tensor *self)
{
    int64_t ncat = self->sizes[self->ndim - 1], ndist = self->ndim > 1 ? self->sizes[0] : 1;
    bool zero_row = false;
    for (int64_t i = 0; i < ndist; i++) {
        bool all_zero = true;
        for (int64_t j = 0; j < ncat; j++) {
            double v = at2(self, i, j);
            if (!(v >= 0 && v < INFINITY)) {
                cfx_error_set(CFX_ERR, op, "probability tensor contains either `inf`, `nan` or element < 0");
                return false;
            }
            all_zero = all_zero && v == 0;
        }
        zero_row = zero_row || all_zero;
    }
    if (zero_row)
        cfx_error_set(CFX_ERR, op, "invalid multinomial distribution (sum of probabilities <= 0)");
    return !zero_row;
}

cfx_tensor *cfx_cpu_multinomial(cfx_tensor *self, int64_t num_samples, bool replacement, cfx_value generator)
{
    const char *op = "aten::multinomial";
    if (self->ndim < 1 || self->ndim > 2)
        return cfx_error_set(CFX_ERR, op, "prob_dist must be 1 or 2 dim"), NULL;
    if (!cfx_dtype_is_floating((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, op, "multinomial only supports floating-point dtypes for input, got: %s",
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype));
        return NULL;
    }
    if (num_samples <= 0)
        return cfx_error_set(CFX_ERR, op, "cannot sample n_sample <= 0 samples"), NULL;
    int64_t ncat = self->sizes[self->ndim - 1];
    if (!replacement && num_samples > ncat) {
        cfx_error_set(CFX_ERR, op, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
        return NULL;
    }
    if (ncat > (INT64_C(1) << 24))
        return cfx_error_set(CFX_ERR, op, "number of categories cannot exceed 2^24"), NULL;
    int64_t sizes[2] = {self->ndim > 1 ? self->sizes[0] : num_samples, num_samples};
    cfx_tensor *result = cfx_tensor_new(self->ndim > 1 ? sizes : sizes + 1, self->ndim, CFX_INT64, self->device);
    if (!result || cfx_tensor_numel(self) == 0)
        return result;
    int64_t *out = cfx_tensor_data(result);
    cfx_generator *g = cfx_generator_or_default(generator);
    if (replacement && num_samples > 1) {
        if (!with_replacement(op, self, num_samples, g, out))
            return cfx_kernel_discard(result), NULL;
        return result;
    }
    if (!gumbel_checks(op, self))
        return cfx_kernel_discard(result), NULL;
    cfx_scope s = cfx_scope_begin();
    /* q = empty_like(self).exponential_(1, gen); q = self / q */
    cfx_tensor *q = cfx_op_empty_like(NULL, self, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());
    q = q ? cfx_op_exponential_(NULL, q, 1.0, generator) : NULL;
    q = q ? cfx_op_div_Tensor(NULL, self, q) : NULL;
    cfx_tensor *idx = NULL;
    if (q && num_samples == 1)
        idx = cfx_op_argmax(NULL, q, cfx_int(-1), true);
    else if (q)
        idx = cfx_op_topk(NULL, q, num_samples, -1, true, true).indices;
    if (idx)
        cfx_cpu_copy(result, idx); /* into the contiguous result, as argmax_out / topk_out write it */
    cfx_scope_end(s);
    if (!idx)
        return cfx_kernel_discard(result), NULL;
    return result;
}

/* meta_multinomial */
cfx_tensor *cfx_meta_multinomial(cfx_tensor *self, int64_t num_samples, bool replacement, cfx_value generator)
{
    (void)replacement, (void)generator;
    if (self->ndim < 1 || self->ndim > 2) {
        cfx_error_set(CFX_ERR, "aten::multinomial",
                      "The probability distributions dimensions must be 1 or 2, but got %d", self->ndim);
        return NULL;
    }
    int64_t sizes[2] = {self->ndim > 1 ? self->sizes[0] : num_samples, num_samples};
    return cfx_tensor_new(self->ndim > 1 ? sizes : sizes + 1, self->ndim, CFX_INT64, self->device);
}
