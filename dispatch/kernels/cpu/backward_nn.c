/* backward_nn.c - the backward ops of softmax, log_softmax, nll_loss, mse_loss and embedding,
 * CPU and Meta kernels.
 *
 * CPU follows ATen's kernels: _softmax_backward_data / _log_softmax_backward_data are
 * structured (grad's sizes, contiguous, grad's dtype whatever input_dtype says: on CPU only a
 * float -> half input_dtype changes it), softmax's checks grad and output have one size, both
 * read grad and output contiguous, and each names its kernel in the dtype error
 * ("softmax_backward_lastdim_kernel_impl" for the last dim, "softmax_backward_kernel_impl"
 * otherwise). nll_loss_backward scatters -weight[t] * grad (over total_weight for the mean)
 * into a zeroed input-shaped gradient; mse_loss_backward is 2 / numel (mean) or 2 times
 * (self - target) * grad_output into a contiguous zeros_like(self); embedding_dense_backward
 * sums grad rows into [num_weights, D] (skipping padding_idx, each row scaled by 1 / count of
 * its index when scale_grad_by_freq).
 *
 * 2.13's Meta kernels are Python decompositions, replayed here through the Meta kernels of the
 * ops they call so that dtype and layout come out as theirs: softmax's
 * (grad * out - out * sum(grad * out, dim, keepdim)).to(input_dtype).contiguous(),
 * log_softmax's grad - exp(out) * sum(grad, dim, keepdim), then .to(input_dtype) (not made
 * contiguous), mse_loss's norm * (self - target) * grad_output. nll_loss_backward's is a meta
 * function with its own texts (sizes as torch.Size), embedding's new_zeros([num_weights, D]). */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/structured.h"
#include "dispatch/scope.h"

/* ---- softmax and log_softmax ------------------------------------------------------------------ */

/* maybe_wrap_dim(dim, ndim) with c10's text; false with the error recorded */
static bool wrap_dim(const char *op, int64_t *dim, int ndim)
{
    int64_t n = ndim ? ndim : 1;
    if (*dim < -n || *dim >= n) {
        cfx_error_set(CFX_ERR, op, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-n, (long long)(n - 1), (long long)*dim);
        return false;
    }
    if (*dim < 0)
        *dim += n;
    return true;
}

/* gi = o * (g - sum(g * o)) (softmax) or g - exp(o) * sum(g) (log) along dim of size D, with
 * `inner` elements after it, over `outer` slices; sums in double */
#define DEFINE_SOFTMAX_BW(S, T, EXP)                                                              \
    static void softmax_bw_##S(T *gi, const T *g, const T *o, int64_t outer, int64_t D, int64_t inner, bool log) \
    {                                                                                             \
        for (int64_t a = 0; a < outer; a++)                                                       \
            for (int64_t c = 0; c < inner; c++) {                                                 \
                int64_t base = a * D * inner + c;                                                 \
                double sum = 0;                                                                   \
                for (int64_t d = 0; d < D; d++) {                                                 \
                    int64_t k = base + d * inner;                                                 \
                    sum += log ? (double)g[k] : (double)g[k] * (double)o[k];                      \
                }                                                                                 \
                for (int64_t d = 0; d < D; d++) {                                                 \
                    int64_t k = base + d * inner;                                                 \
                    gi[k] = log ? (T)((double)g[k] - (double)EXP(o[k]) * sum)                     \
                                : (T)((double)o[k] * ((double)g[k] - sum));                       \
                }                                                                                 \
            }                                                                                     \
    }
DEFINE_SOFTMAX_BW(f32, float, expf)
DEFINE_SOFTMAX_BW(f64, double, exp)

static cfx_tensor *softmax_bw_cpu(const char *op, const char *kname, bool log, cfx_tensor *grad, cfx_tensor *output,
                                  int64_t dim)
{
    if (!log && (grad->ndim != output->ndim ||
                 memcmp(grad->sizes, output->sizes, sizeof(int64_t) * (size_t)grad->ndim))) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 'output'; but ");
        cfx_geom_put_dims(&b, grad->sizes, grad->ndim);
        cfx_buf_puts(&b, " does not equal ");
        cfx_geom_put_dims(&b, output->sizes, output->ndim);
        cfx_buf_puts(&b, " (while checking arguments for softmax_backward)");
        char *m = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, m ? m : "softmax_backward: size mismatch");
        cfx_free(m);
        return NULL;
    }
    if (!wrap_dim(op, &dim, grad->ndim))
        return NULL;
    cfx_dtype dt = (cfx_dtype)grad->dtype;
    if (!cfx_dtype_is_floating(dt)) {
        bool last = grad->ndim == 0 || dim == grad->ndim - 1;
        cfx_error_set(CFX_ERR_NOTIMPL, op, "\"%s%s\" not implemented for '%s'", kname, last ? "_lastdim_kernel_impl" :
                      "_kernel_impl", cfx_dtype_scalar_name(dt));
        return NULL;
    }
    if (output->dtype != grad->dtype) {
        cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name(dt),
                      cfx_dtype_scalar_name((cfx_dtype)output->dtype));
        return NULL;
    }
    cfx_tensor *gi = cfx_tensor_new(grad->sizes, grad->ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!gi || cfx_tensor_numel(gi) == 0)
        return gi;
    int64_t D = grad->ndim ? grad->sizes[dim] : 1, outer = 1, inner = 1;
    for (int i = 0; i < grad->ndim; i++) {
        if (i < dim)
            outer *= grad->sizes[i];
        else if (i > dim)
            inner *= grad->sizes[i];
    }
    if (log && cfx_tensor_numel(output) < cfx_tensor_numel(grad)) {
        cfx_kernel_discard(gi);
        cfx_error_set(CFX_ERR, op, "_log_softmax_backward_data: output has fewer elements than grad_output");
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *g = cfx_cpu_contiguous(grad), *o = g ? cfx_cpu_contiguous(output) : NULL;
    if (o && dt == CFX_FLOAT32)
        softmax_bw_f32(cfx_tensor_data(gi), cfx_tensor_data(g), cfx_tensor_data(o), outer, D, inner, log);
    else if (o)
        softmax_bw_f64(cfx_tensor_data(gi), cfx_tensor_data(g), cfx_tensor_data(o), outer, D, inner, log);
    cfx_scope_end(s);
    if (!o) {
        cfx_kernel_discard(gi);
        return NULL;
    }
    return gi;
}

cfx_tensor *cfx_cpu__softmax_backward_data(cfx_tensor *grad_output, cfx_tensor *output, int64_t dim,
                                           cfx_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_bw_cpu("aten::_softmax_backward_data", "softmax_backward", false, grad_output, output, dim);
}

cfx_tensor *cfx_cpu__log_softmax_backward_data(cfx_tensor *grad_output, cfx_tensor *output, int64_t dim,
                                               cfx_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_bw_cpu("aten::_log_softmax_backward_data", "log_softmax_backward", true, grad_output, output, dim);
}

/* t laid out as it is, in dtype dt (Tensor.to(dt) of a dense tensor), or contiguous */
static cfx_tensor *meta_like(const cfx_tensor *t, cfx_dtype dt, bool contiguous)
{
    if (contiguous)
        return cfx_tensor_new(t->sizes, t->ndim, dt, t->device);
    return cfx_tensor_new_strided(t->sizes, t->strides, t->ndim, dt, t->device);
}

static cfx_tensor *softmax_bw_meta(bool log, cfx_tensor *grad, cfx_tensor *output, int64_t dim, cfx_dtype input_dtype)
{
    cfx_scope s = cfx_scope_begin();
    cfx_int_list dims = {&dim, 1};
    cfx_tensor *r = NULL;
    if (log) {
        cfx_tensor *e = cfx_meta_exp(output);
        cfx_tensor *sum = e ? cfx_meta_sum_dim_IntList(grad, dims, true, cfx_none()) : NULL;
        cfx_tensor *m = sum ? cfx_meta_mul_Tensor(e, sum) : NULL;
        r = m ? cfx_meta_sub_Tensor(grad, m, cfx_int(1)) : NULL;
    } else {
        cfx_tensor *ng = cfx_meta_mul_Tensor(grad, output);
        cfx_tensor *sum = ng ? cfx_meta_sum_dim_IntList(ng, dims, true, cfx_none()) : NULL;
        cfx_tensor *m = sum ? cfx_meta_mul_Tensor(output, sum) : NULL;
        r = m ? cfx_meta_sub_Tensor(ng, m, cfx_int(1)) : NULL;
    }
    cfx_dtype dt = r && (cfx_dtype)grad->dtype != input_dtype ? input_dtype : r ? (cfx_dtype)r->dtype : CFX_FLOAT32;
    cfx_tensor *out = r ? cfx_tensor_retain(meta_like(r, dt, !log)) : NULL;
    cfx_scope_end(s);
    return out ? cfx_autorelease(out) : NULL;
}

cfx_tensor *cfx_meta__softmax_backward_data(cfx_tensor *grad_output, cfx_tensor *output, int64_t dim,
                                            cfx_dtype input_dtype)
{
    return softmax_bw_meta(false, grad_output, output, dim, input_dtype);
}

cfx_tensor *cfx_meta__log_softmax_backward_data(cfx_tensor *grad_output, cfx_tensor *output, int64_t dim,
                                                cfx_dtype input_dtype)
{
    return softmax_bw_meta(true, grad_output, output, dim, input_dtype);
}

/* ---- nll_loss_backward ------------------------------------------------------------------------ */

static void put_size(cfx_buf *b, const cfx_tensor *t, bool meta)
{
    if (meta)
        cfx_prims_put_size(b, t->sizes, t->ndim);
    else
        cfx_geom_put_dims(b, t->sizes, t->ndim);
}

static bool fail_with(const char *op, cfx_buf *b)
{
    char *m = cfx_buf_take(b);
    cfx_error_set_text(CFX_ERR, op, m ? m : "bad arguments");
    cfx_free(m);
    return false;
}

/* the meta function's checks, after the forward's rank and size ones */
static bool nll_bw_check(const char *op, const cfx_tensor *grad, const cfx_tensor *self, const cfx_tensor *target,
                         const cfx_tensor *weight, int64_t reduction, const cfx_tensor *total_weight, bool meta)
{
    if (!cfx_nll_loss_check(op, self, target, NULL, meta))
        return false;
    cfx_buf b;
    cfx_buf_init(&b);
    if (cfx_tensor_numel(total_weight) != 1) {
        /* ATen's text has the double space */
        cfx_buf_puts(&b, meta ? "expected total_weight to be a single element tensor, got: "
                              : "expected total_weight to be a  single element tensor, got: ");
        put_size(&b, total_weight, meta);
        cfx_buf_printf(&b, " (%lld elements)", (long long)cfx_tensor_numel(total_weight));
        return fail_with(op, &b);
    }
    if (weight && cfx_tensor_numel(weight) != self->sizes[self->ndim - 1]) {
        cfx_buf_puts(&b, "weight tensor should be defined either for all or no classes");
        return fail_with(op, &b);
    }
    if (reduction == 0 && self->ndim == 2) {
        if (grad->ndim != 1 || grad->sizes[0] != self->sizes[0]) {
            cfx_buf_printf(&b, "Expected a tensor of dimension 1 and tensor.size[0] == %lld but got: dimension %d and "
                               "tensor.size[0] %s %lld", (long long)self->sizes[0], grad->ndim, meta ? "==" : "=",
                           (long long)(grad->ndim ? grad->sizes[0] : 1));
            return fail_with(op, &b);
        }
    } else if (grad->ndim > 1 || cfx_tensor_numel(grad) != 1) {
        cfx_buf_puts(&b, "Expected a single element grad_output tensor, but got: ");
        put_size(&b, grad, meta);
        return fail_with(op, &b);
    }
    cfx_buf_free(&b);
    return true;
}

cfx_tensor *cfx_meta_nll_loss_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_tensor *target,
                                       cfx_tensor *weight, int64_t reduction, int64_t ignore_index,
                                       cfx_tensor *total_weight)
{
    (void)ignore_index;
    if (!nll_bw_check("aten::nll_loss_backward", grad_output, self, target, weight, reduction, total_weight, true))
        return NULL;
    return cfx_tensor_new(self->sizes, self->ndim, (cfx_dtype)self->dtype, self->device);
}

/* element i (row-major logical order) of a CPU tensor of any layout; an index as int64 */
#define at_f cfx_tensor_get_double
static int64_t at_i(const cfx_tensor *t, int64_t i) { return (int64_t)cfx_tensor_get_double(t, i); }

/* writes v to element i of a contiguous float32/float64 tensor */
static void put_f(cfx_tensor *t, int64_t i, double v)
{
    if (t->dtype == CFX_FLOAT32)
        ((float *)cfx_tensor_data(t))[i] = (float)v;
    else
        ((double *)cfx_tensor_data(t))[i] = v;
}

/* a new contiguous CPU tensor of zeros (float dtypes only) */
static cfx_tensor *zeros(const int64_t *sizes, int ndim, cfx_dtype dt)
{
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (t && cfx_tensor_numel(t))
        memset(cfx_tensor_data(t), 0, (size_t)cfx_tensor_numel(t) * cfx_dtype_size(dt));
    return t;
}

cfx_tensor *cfx_cpu_nll_loss_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_tensor *target,
                                      cfx_tensor *weight, int64_t reduction, int64_t ignore_index,
                                      cfx_tensor *total_weight)
{
    const char *op = "aten::nll_loss_backward";
    if (!nll_bw_check(op, grad_output, self, target, weight, reduction, total_weight, false))
        return NULL;
    cfx_dtype dt = (cfx_dtype)self->dtype;
    if (!cfx_dtype_is_floating(dt)) {
        cfx_kernel_not_implemented(op, "nll_loss_backward_out_frame", dt);
        return NULL;
    }
    cfx_tensor *gi = zeros(self->sizes, self->ndim, dt);
    if (!gi)
        return NULL;
    int64_t C = self->sizes[self->ndim - 1], N = self->ndim == 2 ? self->sizes[0] : 1;
    double tw = at_f(total_weight, 0), g0 = at_f(grad_output, 0);
    for (int64_t i = 0; i < N; i++) {
        int64_t t = at_i(target, i);
        if (t == ignore_index)
            continue;
        if (t < 0 || t >= C) {
            cfx_kernel_discard(gi);
            cfx_error_set(CFX_ERR, op, "Target %lld is out of bounds.", (long long)t);
            return NULL;
        }
        double g = reduction == 0 && self->ndim == 2 ? at_f(grad_output, i) : g0;
        if (reduction == 1)
            g /= tw;
        g = -g;
        put_f(gi, i * C + t, weight ? at_f(weight, t) * g : g);
    }
    return gi;
}

/* ---- mse_loss_backward ----------------------------------------------------------------------- */

cfx_tensor *cfx_cpu_mse_loss_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_tensor *target,
                                      int64_t reduction)
{
    const char *op = "aten::mse_loss_backward";
    cfx_dtype dt = (cfx_dtype)self->dtype;
    cfx_tensor *gi = cfx_tensor_new(self->sizes, self->ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!gi)
        return NULL;
    /* one TensorIterator over (grad_input, self, target, grad_output): the inputs broadcast to
     * grad_input's shape and share its dtype */
    static const cfx_iter_config cfg = {.check_mem_overlap = true};
    const cfx_tensor *in[3] = {self, target, grad_output};
    cfx_iter it;
    bool ok = cfx_iter_build(&it, &cfg, op, gi, in, 3);
    for (int k = 1; ok && k < 3; k++)
        if (in[k]->dtype != self->dtype) {
            cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name(dt),
                          cfx_dtype_scalar_name((cfx_dtype)in[k]->dtype));
            ok = false;
        }
    if (ok && !cfx_dtype_is_floating(dt)) {
        cfx_kernel_not_implemented(op, "mse_backward_cpu_out", dt);
        ok = false;
    }
    if (!ok) {
        cfx_kernel_discard(gi);
        return NULL;
    }
    int64_t n = cfx_tensor_numel(self);
    double norm = reduction == 1 ? 2.0 / (double)n : 2.0;
    /* numel is small next to a kernel call; element-wise through the broadcast views */
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *views[3];
    for (int k = 0; k < 3; k++) {
        int64_t st[CFX_MAX_DIMS];
        int off = self->ndim - in[k]->ndim;
        for (int d = 0; d < self->ndim; d++)
            st[d] = d < off || in[k]->sizes[d - off] == 1 ? 0 : in[k]->strides[d - off];
        views[k] = cfx_tensor_new_view((cfx_tensor *)in[k], self->sizes, st, self->ndim, in[k]->storage_offset);
        ok = ok && views[k];
    }
    for (int64_t i = 0; ok && i < n; i++)
        put_f(gi, i, norm * (at_f(views[0], i) - at_f(views[1], i)) * at_f(views[2], i));
    cfx_scope_end(s);
    if (!ok) {
        cfx_kernel_discard(gi);
        return NULL;
    }
    return gi;
}

cfx_tensor *cfx_meta_mse_loss_backward(cfx_tensor *grad_output, cfx_tensor *self, cfx_tensor *target,
                                       int64_t reduction)
{
    double norm = reduction == 1 ? 2.0 / (double)cfx_tensor_numel(self) : 2.0;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *d = cfx_meta_sub_Tensor(self, target, cfx_int(1));
    cfx_tensor *nrm = d ? cfx_num_double(norm) : NULL;
    cfx_tensor *scaled = nrm ? cfx_meta_mul_Tensor(d, nrm) : NULL;
    cfx_tensor *r = scaled ? cfx_tensor_retain(cfx_meta_mul_Tensor(scaled, grad_output)) : NULL;
    cfx_scope_end(s);
    return r ? cfx_autorelease(r) : NULL;
}

/* ---- embedding_dense_backward ------------------------------------------------------------------ */

static bool embedding_bw_check(const char *op, const cfx_tensor *indices)
{
    if (indices->dtype == CFX_INT64 || indices->dtype == CFX_INT32)
        return true;
    cfx_error_set(CFX_ERR, op, "Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                  "Long, Int; but got torch.%sTensor instead (while checking arguments for embedding_backward)",
                  cfx_dtype_scalar_name((cfx_dtype)indices->dtype));
    return false;
}

static bool embedding_bw_shape(const cfx_tensor *grad, int64_t num_weights, int64_t *sizes)
{
    sizes[0] = num_weights;
    sizes[1] = grad->ndim ? grad->sizes[grad->ndim - 1] : 1;
    return true;
}

cfx_tensor *cfx_cpu_embedding_dense_backward(cfx_tensor *grad_output, cfx_tensor *indices, int64_t num_weights,
                                             int64_t padding_idx, bool scale_grad_by_freq)
{
    const char *op = "aten::embedding_dense_backward";
    if (!embedding_bw_check(op, indices))
        return NULL;
    cfx_dtype dt = (cfx_dtype)grad_output->dtype;
    if (!cfx_dtype_is_floating(dt)) {
        cfx_kernel_not_implemented(op, "embedding_backward", dt);
        return NULL;
    }
    int64_t sizes[2];
    embedding_bw_shape(grad_output, num_weights, sizes);
    int64_t n = cfx_tensor_numel(indices), D = sizes[1];
    if (n * D != cfx_tensor_numel(grad_output)) {
        cfx_error_set(CFX_ERR, op, "embedding_dense_backward: grad_output holds %lld values, not indices (%lld) "
                      "times the embedding size (%lld)", (long long)cfx_tensor_numel(grad_output), (long long)n,
                      (long long)D);
        return NULL;
    }
    cfx_tensor *gw = zeros(sizes, 2, dt);
    if (!gw)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t idx = at_i(indices, i);
        if (idx == padding_idx)
            continue;
        if (idx < 0 || idx >= num_weights) {
            cfx_kernel_discard(gw);
            cfx_error_set(CFX_ERR, op, "index %lld is out of bounds for dimension 0 with size %lld", (long long)idx,
                          (long long)num_weights);
            return NULL;
        }
        double scale = 1;
        if (scale_grad_by_freq) {
            int64_t count = 0;
            for (int64_t j = 0; j < n; j++)
                count += at_i(indices, j) == idx;
            scale = 1.0 / (double)count;
        }
        for (int64_t d = 0; d < D; d++) {
            int64_t k = idx * D + d;
            double cur = dt == CFX_FLOAT32 ? ((float *)cfx_tensor_data(gw))[k] : ((double *)cfx_tensor_data(gw))[k];
            put_f(gw, k, cur + at_f(grad_output, i * D + d) * scale);
        }
    }
    return gw;
}

cfx_tensor *cfx_meta_embedding_dense_backward(cfx_tensor *grad_output, cfx_tensor *indices, int64_t num_weights,
                                              int64_t padding_idx, bool scale_grad_by_freq)
{
    (void)indices, (void)padding_idx, (void)scale_grad_by_freq;
    int64_t sizes[2];
    embedding_bw_shape(grad_output, num_weights, sizes);
    return cfx_tensor_new(sizes, 2, (cfx_dtype)grad_output->dtype, grad_output->device);
}
