/* backward_conv.c - convolution_backward: its CompositeExplicitAutograd kernel (CPU; on meta
 * tensors it defers to the Meta kernel) and its Meta kernel (2.13's meta_convolution_backward).
 *
 * The gradients are convolution's adjoints over the forward's own geometry (conv_internal.h):
 *   - grad_input is the opposite-direction convolution of grad_output by the same weight
 *     (plain <-> transposed), i.e. cfx_conv_cpu with `transposed` flipped;
 *   - grad_weight is, per image and group, a gemm of the grid-side operand with the columns
 *     (im2col) of the image-side one: plain, dW_g [O/g, C/g * k] += dY_g [O/g, out] @
 *     cols(X_g)^T; transposed, dW_g [C/g, O/g * k] += X_g [C/g, in] @ cols(dY_g)^T;
 *   - grad_bias is grad_output summed over the batch and spatial dims (in double).
 * Arithmetic is in the tensors' dtype through cfx_blas_gemm, as the forward's. Each output
 * exists only where output_mask asks (None elsewhere). Both keys lay grad_input and
 * grad_weight out channels-last when the input or the weight suggests it (ATen's
 * determine_backend_memory_format, which the meta function copies); grad_bias has the bias's
 * sizes (bias_sizes on meta, [O] on CPU as ATen's backends compute it). */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/blas.h"
#include "dispatch/kernels/conv_internal.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/nn_shapes.h"

static const char OP[] = "aten::convolution_backward";

static bool mask_at(const cfx_value *mask, int i)
{
    return mask && mask->kind == CFX_V_LIST && (uint32_t)i < mask->len && mask->u.items[i].kind == CFX_V_BOOL &&
           mask->u.items[i].u.b;
}

/* meta_convolution_backward's _conv_memory_format(input, weight) */
static cfx_memory_format backend_format(const cfx_tensor *input, const cfx_tensor *weight)
{
    cfx_memory_format a = cfx_geom_suggest_memory_format(input->sizes, input->strides, input->ndim);
    cfx_memory_format b = cfx_geom_suggest_memory_format(weight->sizes, weight->strides, weight->ndim);
    if (a == CFX_CHANNELS_LAST || b == CFX_CHANNELS_LAST)
        return CFX_CHANNELS_LAST;
    if (a == CFX_CHANNELS_LAST_3D || b == CFX_CHANNELS_LAST_3D)
        return CFX_CHANNELS_LAST_3D;
    return CFX_CONTIGUOUS_FORMAT;
}

static cfx_tensor *new_in_format(const cfx_tensor *like, cfx_memory_format mf, cfx_dtype dt, cfx_device dev)
{
    int64_t strides[CFX_MAX_DIMS];
    if (mf == CFX_CONTIGUOUS_FORMAT || !cfx_geom_memory_format_strides(like->sizes, like->ndim, mf, strides, NULL))
        cfx_geom_contiguous_strides(like->sizes, like->ndim, strides);
    return cfx_tensor_new_strided(like->sizes, strides, like->ndim, dt, dev);
}

static void discard3(cfx_tensor **t)
{
    for (int k = 0; k < 3; k++)
        cfx_kernel_discard(t[k]), t[k] = NULL;
}

cfx_convolution_backward_result cfx_meta_convolution_backward(cfx_tensor *grad_output, cfx_tensor *input,
                                                              cfx_tensor *weight, cfx_int_list bias_sizes,
                                                              cfx_int_list stride, cfx_int_list padding,
                                                              cfx_int_list dilation, bool transposed,
                                                              cfx_int_list output_padding, int64_t groups,
                                                              const cfx_value *output_mask)
{
    (void)stride, (void)padding, (void)dilation, (void)transposed, (void)output_padding, (void)groups;
    cfx_convolution_backward_result r = {{NULL, NULL, NULL}};
    cfx_memory_format mf = backend_format(input, weight);
    cfx_dtype dt = (cfx_dtype)grad_output->dtype; /* grad_output.new_empty(...) */
    cfx_device dev = grad_output->device;
    if (mask_at(output_mask, 2) && bias_sizes.len < 0) {
        cfx_error_set(CFX_ERR, OP, "new_empty(): argument 'size' (position 1) must be tuple of ints, not NoneType");
        return r;
    }
    bool ok = true;
    if (mask_at(output_mask, 0))
        ok = (r.t[0] = new_in_format(input, mf, dt, dev)) != NULL;
    if (ok && mask_at(output_mask, 1))
        ok = (r.t[1] = new_in_format(weight, mf, dt, dev)) != NULL;
    if (ok && mask_at(output_mask, 2)) {
        for (int64_t i = 0; i < bias_sizes.len; i++)
            if (bias_sizes.data[i] < 0) {
                cfx_error_set(CFX_ERR, OP, "Trying to create tensor with negative dimension %lld: [%lld]",
                              (long long)bias_sizes.data[i], (long long)bias_sizes.data[i]);
                ok = false;
            }
        ok = ok && bias_sizes.len <= CFX_MAX_DIMS &&
             (r.t[2] = cfx_tensor_new(bias_sizes.data, (int)bias_sizes.len, dt, dev)) != NULL;
    }
    if (!ok)
        discard3(r.t);
    return r;
}

/* ATen's checks before a backend runs: check_shape_backward (convolution's own shape checks,
 * without a bias), grad_output's rank, output_padding of a plain convolution; and, cfx's own
 * (ATen leaves it to the backend, whose texts are oneDNN's), grad_output of the output's shape
 * and the dtypes a CPU kernel computes in. */
static bool cpu_checks(const cfx_tensor *grad_output, const cfx_tensor *input, const cfx_tensor *weight,
                       cfx_int_list stride, cfx_int_list padding, cfx_int_list dilation, bool transposed,
                       cfx_int_list output_padding, int64_t groups, int64_t *out_sizes)
{
    if (weight->ndim < 3) {
        cfx_error_set(CFX_ERR, OP, "weight should have at least three dimensions");
        return false;
    }
    if (!cfx_conv_output_size(OP, input, weight, NULL, stride, padding, dilation, transposed, output_padding, groups,
                              out_sizes))
        return false;
    if (input->ndim != grad_output->ndim) {
        cfx_error_set(CFX_ERR, OP, "Expected input and grad_output to have the same number of dimensions, but got: "
                      "%d and %d", input->ndim, grad_output->ndim);
        return false;
    }
    for (int64_t i = 0; !transposed && i < output_padding.len; i++)
        if (output_padding.data[i] != 0) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_puts(&b, "output_padding is not supported for non-transposed convolutions; got: ");
            for (int64_t j = 0; j < output_padding.len; j++) /* a std::vector as c10 prints it */
                cfx_buf_printf(&b, "%s%lld", j ? " " : "", (long long)output_padding.data[j]);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, OP, msg ? msg : "output_padding is not supported for non-transposed convolutions");
            cfx_free(msg);
            return false;
        }
    if (input->ndim - 2 > CFX_CONV_MAXK) {
        cfx_error_set(CFX_ERR_NOTIMPL, OP, "convolution with more than 3 spatial dimensions is not implemented in cfx");
        return false;
    }
    if (memcmp(grad_output->sizes, out_sizes, sizeof(int64_t) * (size_t)input->ndim)) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Expected grad_output of the convolution's output shape ");
        cfx_geom_put_dims(&b, out_sizes, input->ndim);
        cfx_buf_puts(&b, ", but got ");
        cfx_geom_put_dims(&b, grad_output->sizes, grad_output->ndim);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, OP, msg ? msg : "grad_output does not have the convolution's output shape");
        cfx_free(msg);
        return false;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype) || weight->dtype != input->dtype ||
        grad_output->dtype != input->dtype) {
        cfx_error_set(CFX_ERR, OP, "Input type (%s) and weight type (%s) should be the same or input should be a "
                      "floating point tensor", cfx_dtype_name((cfx_dtype)input->dtype),
                      cfx_dtype_name((cfx_dtype)weight->dtype));
        return false;
    }
    return true;
}

/* dW (contiguous, zeroed) += the per-image, per-group gemms of the header comment. a is the
 * image-side operand (im2col'd), b the grid-side one; both contiguous. */
static bool grad_weight(cfx_tensor *dw, const cfx_tensor *a, const cfx_tensor *b, const conv_geom *g, int64_t groups)
{
    cfx_dtype dt = (cfx_dtype)dw->dtype;
    size_t es = cfx_dtype_size(dt);
    int64_t ac = a->sizes[1] / groups, bc = b->sizes[1] / groups, rows = ac * g->kprod;
    int64_t ncol = rows * g->cols;
    char *col = cfx_malloc((size_t)(ncol > 0 ? ncol : 1) * es);
    if (!col)
        return false;
    char *ab = cfx_tensor_data(a), *bb = cfx_tensor_data(b), *wb = cfx_tensor_data(dw);
    bool ok = true;
    for (int64_t img = 0; ok && img < a->sizes[0]; img++)
        for (int64_t grp = 0; ok && grp < groups; grp++) {
            char *ag = ab + (size_t)((img * a->sizes[1] + grp * ac) * g->image_numel) * es;
            char *bg = bb + (size_t)((img * b->sizes[1] + grp * bc) * g->cols) * es;
            cfx_conv_columns(dt, ag, col, ac, g, false);
            cfx_mat c = {wb + (size_t)(grp * bc * rows) * es, bc, rows, rows, 1};
            cfx_mat x = {bg, bc, g->cols, g->cols, 1};
            cfx_mat y = {col, g->cols, rows, 1, g->cols}; /* the columns, transposed */
            ok = cfx_blas_gemm(dt, c, x, y, 1.0, 1.0);
        }
    cfx_free(col);
    return ok;
}

static void zero(cfx_tensor *t)
{
    if (t && cfx_tensor_numel(t))
        memset(cfx_tensor_data(t), 0, (size_t)cfx_tensor_numel(t) * cfx_dtype_size((cfx_dtype)t->dtype));
}

cfx_convolution_backward_result cfx_kernel_convolution_backward(cfx_tensor *grad_output, cfx_tensor *input,
                                                                cfx_tensor *weight, cfx_int_list bias_sizes,
                                                                cfx_int_list stride, cfx_int_list padding,
                                                                cfx_int_list dilation, bool transposed,
                                                                cfx_int_list output_padding, int64_t groups,
                                                                const cfx_value *output_mask)
{
    cfx_convolution_backward_result none = {{NULL, NULL, NULL}}, r = none;
    if (grad_output->device.type == CFX_DEVICE_META || input->device.type == CFX_DEVICE_META ||
        weight->device.type == CFX_DEVICE_META)
        return cfx_meta_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                             transposed, output_padding, groups, output_mask);
    int64_t sizes[CFX_MAX_DIMS];
    if (!cpu_checks(grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups, sizes))
        return none;
    conv_geom g;
    cfx_conv_geom_init(&g, input, weight, sizes, stride, padding, dilation, transposed);
    if (transposed && !cfx_conv_output_padding_ok(OP, g.k, output_padding, g.s, g.d))
        return none;
    cfx_memory_format mf = backend_format(input, weight);
    cfx_dtype dt = (cfx_dtype)input->dtype;
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    int64_t nbias = grad_output->sizes[1];
    bool ok = true;
    if (mask_at(output_mask, 0))
        ok = (r.t[0] = new_in_format(input, mf, dt, cpu)) != NULL;
    if (ok && mask_at(output_mask, 1))
        ok = (r.t[1] = new_in_format(weight, mf, dt, cpu)) != NULL;
    if (ok && mask_at(output_mask, 2))
        ok = (r.t[2] = cfx_tensor_new(&nbias, 1, dt, cpu)) != NULL;
    if (!ok) {
        discard3(r.t);
        return none;
    }
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *dy = cfx_cpu_contiguous(grad_output), *x = dy ? cfx_cpu_contiguous(input) : NULL;
    const cfx_tensor *w = x ? cfx_cpu_contiguous(weight) : NULL;
    /* the gradients are computed contiguous, then copied into a channels-last layout */
    cfx_tensor *dx = r.t[0] && !cfx_tensor_is_contiguous(r.t[0]) ? cfx_tensor_new(input->sizes, input->ndim, dt, cpu)
                                                                 : r.t[0];
    cfx_tensor *dw = r.t[1] && !cfx_tensor_is_contiguous(r.t[1]) ? cfx_tensor_new(weight->sizes, weight->ndim, dt, cpu)
                                                                 : r.t[1];
    ok = w && (!r.t[0] || dx) && (!r.t[1] || dw);
    if (ok && dx) {
        zero(dx);
        if (cfx_tensor_numel(dx) && cfx_tensor_numel(dy))
            ok = cfx_conv_cpu(dx, dy, w, NULL, &g, groups, !transposed);
        if (ok && dx != r.t[0])
            cfx_cpu_copy(r.t[0], dx);
    }
    if (ok && dw) {
        zero(dw);
        if (cfx_tensor_numel(dw) && cfx_tensor_numel(dy) && cfx_tensor_numel(x))
            ok = transposed ? grad_weight(dw, dy, x, &g, groups) : grad_weight(dw, x, dy, &g, groups);
        if (ok && dw != r.t[1])
            cfx_cpu_copy(r.t[1], dw);
    }
    if (ok && r.t[2]) {
        int64_t per = cfx_geom_numel(dy->sizes + 2, dy->ndim - 2);
        for (int64_t c = 0; c < nbias; c++) {
            double sum = 0;
            for (int64_t n = 0; n < dy->sizes[0]; n++)
                for (int64_t i = 0; i < per; i++)
                    sum += cfx_nn_get(dy, (n * nbias + c) * per + i);
            cfx_nn_set(r.t[2], c, sum);
        }
    }
    cfx_scope_end(s);
    if (!ok) {
        cfx_error_set(CFX_ERR_NOMEM, OP, "out of memory in convolution_backward");
        discard3(r.t);
        return none;
    }
    return r;
}
