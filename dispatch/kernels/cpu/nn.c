/* nn.c - the CPU kernels of embedding, native_batch_norm (inference; training is
 * cpu/batch_norm.c),
 * _native_batch_norm_legit_no_training, nll_loss_forward and mse_loss.
 *
 * Float32/float64 only, computed in double and rounded once (ATen accumulates in the
 * operand's accumulate type; the goldens carry a tolerance for that). Layouts are ATen's:
 * embedding's results are indices.shape + [D] contiguous, batch norm's
 * output is empty_like(input) and its saved statistics are empty [0] tensors in inference (the
 * Meta kernels give [C]: 2.13's meta functions differ there), nll_loss gives [N] or a scalar
 * and a scalar total weight, mse_loss's "none" result is TensorIterator's (sub's layout). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/batch_norm.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/structured.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};

/* The element offset of linear (row-major) index e of t. */
static int64_t offset_at(const cfx_tensor *t, int64_t e)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (e % t->sizes[d]) * t->strides[d];
        e /= t->sizes[d];
    }
    return off;
}

static bool floating_only(const char *op, const char *kernel, const cfx_tensor *t)
{
    if (cfx_dtype_is_floating((cfx_dtype)t->dtype))
        return true;
    cfx_kernel_not_implemented(op, kernel, (cfx_dtype)t->dtype);
    return false;
}

cfx_tensor *cfx_kernel_embedding(cfx_tensor *weight, cfx_tensor *indices, int64_t padding_idx,
                                 bool scale_grad_by_freq, bool sparse)
{
    (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;
    const char *op = "aten::embedding";
    if (weight->device.type == CFX_DEVICE_META || indices->device.type == CFX_DEVICE_META)
        return cfx_meta_embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse);
    if (weight->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "'weight' must be 2-D");
        return NULL;
    }
    if (indices->dtype != CFX_INT64 && indices->dtype != CFX_INT32) {
        cfx_error_set(CFX_ERR, op, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                      "types: Long, Int; but got torch.%sTensor instead (while checking arguments for embedding)",
                      cfx_dtype_scalar_name((cfx_dtype)indices->dtype));
        return NULL;
    }
    int64_t sizes[CFX_MAX_DIMS];
    int n = indices->ndim;
    for (int i = 0; i < n; i++)
        sizes[i] = indices->sizes[i];
    int64_t rows = weight->sizes[0], cols = weight->sizes[1], count = cfx_tensor_numel(indices);
    sizes[n] = cols;
    size_t es = cfx_dtype_size((cfx_dtype)weight->dtype);
    const char *ib = cfx_tensor_data(indices), *wb = cfx_tensor_data(weight);
    for (int64_t e = 0; e < count; e++) {
        int64_t off = offset_at(indices, e);
        int64_t ix = indices->dtype == CFX_INT64 ? ((const int64_t *)ib)[off] : ((const int32_t *)ib)[off];
        if (ix < 0 || ix >= rows) {
            cfx_error_set(CFX_ERR, op, "index out of range in self");
            return NULL;
        }
    }
    cfx_tensor *out = cfx_tensor_new(sizes, n + 1, (cfx_dtype)weight->dtype, CPU);
    if (!out)
        return NULL;
    char *ob = cfx_tensor_data(out);
    for (int64_t e = 0; e < count; e++) {
        int64_t off = offset_at(indices, e);
        int64_t ix = indices->dtype == CFX_INT64 ? ((const int64_t *)ib)[off] : ((const int32_t *)ib)[off];
        for (int64_t j = 0; j < cols; j++)
            memcpy(ob + (size_t)(e * cols + j) * es, wb + (size_t)(ix * weight->strides[0] + j * weight->strides[1]) * es,
                   es);
    }
    return out;
}

/* The parameters batch_norm_eval reads, checked as 2.13's CPU kernel does: weight and bias of
 * the input's dtype (its mixed-dtype check), running stats of that dtype and 1-d (their
 * accessors). Each must also hold a value per channel: there 2.13's kernel reads past a short
 * tensor, and cfx gives instead the text of batch_norm's own check
 * (check_dims_match_num_input_features). */
static bool eval_params_ok(const char *op, const cfx_tensor *input, const cfx_tensor *weight, const cfx_tensor *bias,
                           const cfx_tensor *mean, const cfx_tensor *var)
{
    cfx_dtype dt = (cfx_dtype)input->dtype;
    if ((weight && (cfx_dtype)weight->dtype != dt) || (bias && (cfx_dtype)bias->dtype != dt)) {
        cfx_error_set(CFX_ERR, op, dt == CFX_FLOAT32 ? "mixed dtype (CPU): expect parameter to have scalar type of Float"
                                                     : "mixed dtype (CPU): all inputs must share same datatype.");
        return false;
    }
    const cfx_tensor *stats[2] = {mean, var};
    for (int i = 0; i < 2; i++) {
        if ((cfx_dtype)stats[i]->dtype != dt) {
            cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name(dt),
                          cfx_dtype_scalar_name((cfx_dtype)stats[i]->dtype));
            return false;
        }
        if (stats[i]->ndim != 1) {
            cfx_error_set(CFX_ERR, op, "TensorAccessor expected 1 dims but tensor has %d", stats[i]->ndim);
            return false;
        }
    }
    const cfx_tensor *params[4] = {mean, var, weight, bias};
    static const char *const names[4] = {"running_mean", "running_var", "weight", "bias"};
    for (int i = 0; i < 4; i++)
        if (params[i] && cfx_tensor_numel(params[i]) != input->sizes[1]) {
            cfx_error_set(CFX_ERR, op, "%s should contain %lld elements not %lld", names[i], (long long)input->sizes[1],
                          (long long)cfx_tensor_numel(params[i]));
            return false;
        }
    return true;
}

/* Batch norm in inference: out = (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c], channel c
 * being dim 1, as alpha = invstd * w and beta = b - mean * alpha (ATen's transform). */
static cfx_native_batch_norm_result batch_norm_eval(const char *op, cfx_tensor *input, cfx_tensor *weight,
                                                    cfx_tensor *bias, cfx_tensor *mean, cfx_tensor *var, double eps)
{
    cfx_native_batch_norm_result none = {{NULL, NULL, NULL}};
    if (!mean || !var) {
        cfx_error_set(CFX_ERR, op, "running_mean and running_var must be defined in evaluation mode");
        return none;
    }
    if (input->ndim < 2 || !floating_only(op, "batch_norm", input) || !eval_params_ok(op, input, weight, bias, mean, var))
        return none;
    int64_t c = input->sizes[1];
    int64_t strides[CFX_MAX_DIMS], zero = 0;
    cfx_geom_preserve_strides(input->sizes, input->strides, input->ndim, strides);
    cfx_tensor *out = cfx_tensor_new_strided(input->sizes, strides, input->ndim, (cfx_dtype)input->dtype, CPU);
    cfx_tensor *sm = out ? cfx_tensor_new(&zero, 1, (cfx_dtype)input->dtype, CPU) : NULL;
    cfx_tensor *si = sm ? cfx_tensor_new(&zero, 1, (cfx_dtype)input->dtype, CPU) : NULL;
    if (!si) {
        cfx_kernel_discard(out);
        cfx_kernel_discard(sm);
        return none;
    }
    int64_t numel = cfx_tensor_numel(input), inner = cfx_geom_numel(input->sizes + 2, input->ndim - 2);
    for (int64_t e = 0; e < numel; e++) {
        int64_t ch = (e / inner) % c;
        double invstd = 1.0 / sqrt(cfx_nn_get(var, ch * var->strides[0]) + eps);
        double alpha = invstd * (weight ? cfx_nn_get(weight, ch * weight->strides[0]) : 1.0);
        double beta = (bias ? cfx_nn_get(bias, ch * bias->strides[0]) : 0.0) - cfx_nn_get(mean, ch * mean->strides[0]) * alpha;
        cfx_nn_set(out, offset_at(out, e), cfx_nn_get(input, offset_at(input, e)) * alpha + beta);
    }
    return (cfx_native_batch_norm_result){{out, sm, si}};
}

cfx_native_batch_norm_result cfx_cpu_native_batch_norm(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                                       cfx_tensor *running_mean, cfx_tensor *running_var,
                                                       bool training, double momentum, double eps)
{
    const char *op = "aten::native_batch_norm";
    if (training) /* cpu/batch_norm.c */
        return cfx_cpu_batch_norm_train(op, input, weight, bias, running_mean, running_var, momentum, eps);
    return batch_norm_eval(op, input, weight, bias, running_mean, running_var, eps);
}

cfx__native_batch_norm_legit_no_training_result
cfx_kernel__native_batch_norm_legit_no_training(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias,
                                                cfx_tensor *running_mean, cfx_tensor *running_var, double momentum,
                                                double eps)
{
    if (input->device.type == CFX_DEVICE_META)
        return cfx_meta__native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum,
                                                              eps);
    cfx_native_batch_norm_result r =
        batch_norm_eval("aten::_native_batch_norm_legit_no_training", input, weight, bias, running_mean, running_var,
                        eps);
    return (cfx__native_batch_norm_legit_no_training_result){{r.t[0], r.t[1], r.t[2]}};
}

cfx_nll_loss_forward_result cfx_cpu_nll_loss_forward(cfx_tensor *self, cfx_tensor *target, cfx_tensor *weight,
                                                     int64_t reduction, int64_t ignore_index)
{
    const char *op = "aten::nll_loss_forward";
    cfx_nll_loss_forward_result none = {{NULL, NULL}};
    if (self->ndim == 1 && target->ndim == 1) {
        /* 2.13's C++ check: a 1-D input takes a 0-D target or a 1-D one of size 1, read as 0-D */
        if (target->sizes[0] != 1) {
            cfx_error_set(CFX_ERR, op, "For 1D input, 1D target must have size 1, but got target size: %lld",
                          (long long)target->sizes[0]);
            return none;
        }
        cfx_tensor *one = cfx_tensor_new_view(target, NULL, NULL, 0, target->storage_offset);
        if (!one)
            return none;
        cfx_nll_loss_forward_result r = cfx_cpu_nll_loss_forward(self, one, weight, reduction, ignore_index);
        cfx_tensor_release(one);
        return r;
    }
    if (!cfx_nll_loss_check(op, self, target, weight, false) || !floating_only(op, "nll_loss_out_frame", self))
        return none;
    if (weight && weight->dtype != self->dtype) { /* the kernel reads weight in self's dtype */
        cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name((cfx_dtype)self->dtype),
                      cfx_dtype_scalar_name((cfx_dtype)weight->dtype));
        return none;
    }
    if (target->dtype != CFX_INT64) { /* the CPU kernel also takes uint8, which cfx has not */
        cfx_error_set(CFX_ERR, op, "expected target dtype to be Long or Byte, but got %s",
                      cfx_dtype_scalar_name((cfx_dtype)target->dtype));
        return none;
    }
    bool batched = self->ndim == 2;
    int64_t n = batched ? self->sizes[0] : 1, classes = self->sizes[self->ndim - 1];
    bool per_item = reduction == 0 && batched;
    cfx_tensor *out = cfx_tensor_new(&n, per_item ? 1 : 0, (cfx_dtype)self->dtype, CPU);
    cfx_tensor *tw = out ? cfx_tensor_new(NULL, 0, (cfx_dtype)self->dtype, CPU) : NULL;
    if (!tw) {
        cfx_kernel_discard(out);
        return none;
    }
    double total = 0, wsum = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t toff = target->ndim ? i * target->strides[0] : 0;
        int64_t t = target->dtype == CFX_INT64 ? ((const int64_t *)cfx_tensor_data(target))[toff]
                                               : ((const int32_t *)cfx_tensor_data(target))[toff];
        double v = 0;
        if (t != ignore_index) {
            if (t < 0 || t >= classes) {
                cfx_error_set(CFX_ERR, op, "Target %lld is out of bounds.", (long long)t);
                cfx_kernel_discard(out);
                cfx_kernel_discard(tw);
                return none;
            }
            double w = weight ? cfx_nn_get(weight, t * weight->strides[0]) : 1.0;
            int64_t xoff = (batched ? i * self->strides[0] : 0) + t * self->strides[self->ndim - 1];
            v = -cfx_nn_get(self, xoff) * w;
            wsum += w;
        }
        if (per_item)
            cfx_nn_set(out, i * out->strides[0], v);
        total += v;
    }
    if (!per_item)
        cfx_nn_set(out, 0, reduction == 1 ? total / wsum : total);
    cfx_nn_set(tw, 0, per_item ? 0.0 : wsum);
    return (cfx_nll_loss_forward_result){{out, tw}};
}

cfx_tensor *cfx_cpu_mse_loss(cfx_tensor *self, cfx_tensor *target, int64_t reduction)
{
    const char *op = "aten::mse_loss";
    if (!floating_only(op, "mse_cpu", self))
        return NULL;
    cfx_tensor *d = cfx_cpu_sub_Tensor(self, target, cfx_int(1)); /* TensorIterator's layout and checks */
    if (!d)
        return NULL;
    int64_t numel = cfx_tensor_numel(d);
    double sum = 0;
    for (int64_t e = 0; e < numel; e++) {
        int64_t off = offset_at(d, e);
        double v = cfx_nn_get(d, off);
        cfx_nn_set(d, off, v * v);
        sum += v * v;
    }
    if (reduction == 0)
        return d;
    cfx_tensor *out = cfx_tensor_new(NULL, 0, (cfx_dtype)d->dtype, CPU);
    if (out)
        cfx_nn_set(out, 0, reduction == 1 ? sum / (double)numel : sum);
    cfx_kernel_discard(d);
    return out;
}
