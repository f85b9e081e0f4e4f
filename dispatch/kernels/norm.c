/* norm.c - native_layer_norm's CompositeExplicitAutograd kernel (math_native_layer_norm).
 *
 * PyTorch 1.13 registers native_layer_norm on CPU and CompositeExplicitAutograd only, so a
 * meta (or fake) call runs the composite, which is a chain of other operators:
 *
 *   numel == 0  ->  (empty_like(input), empty_like(input, promote(dtype, float)) twice)
 *   R = input.reshape(1, M, -1)                       a view when computeStride allows,
 *                                                     else a contiguous copy
 *   out, mean, rstd = native_batch_norm(R, training)  on meta: torch._decomp's Python
 *       decomposition: mean/var over dims (0, 2) keepdim (contiguous [1, M, 1]; an integral
 *       input fails in mean()), out = (R - mean) * rstd * ones(()) + zeros(()), mean and
 *       rstd squeezed to [M]
 *   out = out.view(input.shape); bias.addcmul(out, weight) / out * weight / out + bias
 *   mean, rstd viewed as the leading sizes followed by ones
 *
 * The observable results are metadata, and they differ from the CPU kernel's: the output
 * follows the input's memory order through the elementwise steps (a transposed input gives a
 * transposed output), an empty input gives input-shaped stats, and weight/bias promote the
 * output dtype instead of failing. This file replays the chain on shapes with the same
 * TensorIterator code the elementwise kernels use, with meta tensors standing in for the
 * intermediate results. When every argument is a CPU tensor the dispatcher never picks this
 * kernel; a direct call then runs the CPU kernel, as composite.c does for the structured ops. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/structured.h"

static const char OP[] = "aten::native_layer_norm";

static bool on_cpu(const cfx_tensor *t) { return !t || t->device.type == CFX_DEVICE_CPU; }

static const cfx_iter_config elementwise = {.promote_inputs = true, .allow_cpu_scalars = true};
static const cfx_iter_config ternary = {.promote_inputs = true};

/* A data-less stand-in for an intermediate result with the iterator's metadata. */
static cfx_tensor *stand_in(const cfx_iter *it)
{
    return cfx_iter_new_output(it, -1, cfx_device_make(CFX_DEVICE_META));
}

/* it = the iterator of f(a, b) or f(a, b, c); false with the error recorded. */
static bool iterate(cfx_iter *it, const cfx_iter_config *cfg, const cfx_tensor *a, const cfx_tensor *b,
                    const cfx_tensor *c)
{
    const cfx_tensor *in[3] = {a, b, c};
    return cfx_iter_build(it, cfg, OP, NULL, in, c ? 3 : 2);
}

/* The [1, M, N] output of the batch-norm decomposition on R, viewed back as the input's
 * shape: its sizes/strides into `out`. */
static bool normalized_layout(const cfx_tensor *input, int64_t M, int64_t N, int64_t *out)
{
    int64_t rs[3] = {1, M, N}, rst[3];
    if (!cfx_geom_view_strides(input->sizes, input->strides, input->ndim, rs, 3, rst))
        cfx_geom_contiguous_strides(rs, 3, rst);
    cfx_device meta = cfx_device_make(CFX_DEVICE_META);
    cfx_dtype dt = (cfx_dtype)input->dtype;
    int64_t ss[3] = {1, M, 1};
    cfx_tensor *R = cfx_tensor_new_strided(rs, rst, 3, dt, meta);
    cfx_tensor *stat = cfx_tensor_new(ss, 3, dt, meta); /* mean, rstd: [1, M, 1] reductions */
    cfx_tensor *one = cfx_tensor_new(NULL, 0, dt, meta); /* new_ones(()), new_zeros(()) */
    if (!R || !stat || !one)
        return false;
    cfx_iter it;
    cfx_tensor *t;
    if (!iterate(&it, &elementwise, R, stat, NULL) || !(t = stand_in(&it)) || /* R - mean */
        !iterate(&it, &elementwise, t, stat, NULL) || !(t = stand_in(&it)) || /* * rstd */
        !iterate(&it, &elementwise, t, one, NULL) || !(t = stand_in(&it)) ||  /* * weight */
        !iterate(&it, &elementwise, t, one, NULL))                             /* + bias */
        return false;
    if (!cfx_geom_view_strides(it.shape, it.out_strides, 3, input->sizes, input->ndim, out)) {
        cfx_error_set(CFX_ERR, OP,
                      "view size is not compatible with input tensor's size and stride (at least one dimension "
                      "spans across two contiguous subspaces). Use .reshape(...) instead.");
        return false;
    }
    return true;
}

static cfx_native_layer_norm_result math_path(cfx_tensor *input, cfx_int_list normalized_shape, cfx_tensor *weight,
                             cfx_tensor *bias)
{
    cfx_native_layer_norm_result none = {{NULL, NULL, NULL}};
    int64_t M, N;
    if (!cfx_check_layer_norm_inputs(OP, input, normalized_shape, weight, bias, &M, &N))
        return none;
    int n = input->ndim, axis = n - (int)normalized_shape.len;
    cfx_dtype dt = (cfx_dtype)input->dtype;
    cfx_device dev = input->device;
    if (cfx_geom_numel(input->sizes, n) == 0) {
        int64_t st[CFX_MAX_DIMS];
        cfx_geom_preserve_strides(input->sizes, input->strides, n, st);
        cfx_dtype sdt = cfx_dtype_promote(dt, CFX_FLOAT32);
        cfx_tensor *o = cfx_tensor_new_strided(input->sizes, st, n, dt, dev);
        cfx_tensor *m = o ? cfx_tensor_new_strided(input->sizes, st, n, sdt, dev) : NULL;
        cfx_tensor *r = m ? cfx_tensor_new_strided(input->sizes, st, n, sdt, dev) : NULL;
        if (!r) {
            cfx_kernel_discard(o);
            cfx_kernel_discard(m);
            return none;
        }
        return (cfx_native_layer_norm_result){{o, m, r}};
    }
    if (!cfx_dtype_is_floating(dt)) {
        cfx_error_set(CFX_ERR, OP,
                      "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                      "complex dtype. Got: %s",
                      cfx_dtype_scalar_name(dt));
        return none;
    }

    /* output layout and dtype; the stand-ins live in a scope of their own */
    int64_t strides[CFX_MAX_DIMS];
    cfx_iter it;
    bool ok;
    cfx_scope s = cfx_scope_begin();
    ok = normalized_layout(input, M, N, strides);
    /* on the input's device, so that a weight on another one fails as in PyTorch */
    cfx_tensor *out = ok ? cfx_tensor_new_strided(input->sizes, strides, n, dt, dev) : NULL;
    if (out && weight && bias)
        ok = iterate(&it, &ternary, bias, out, weight); /* bias.addcmul(out, weight, 1) */
    else if (out && (weight || bias))
        ok = iterate(&it, &elementwise, out, weight ? weight : bias, NULL);
    else
        ok = out != NULL;
    cfx_dtype odt = dt;
    cfx_device odev = dev;
    if (ok && (weight || bias)) {
        memcpy(strides, it.out_strides, (size_t)n * sizeof strides[0]);
        odt = it.common_dtype;
        odev = it.device;
    }
    cfx_scope_end(s);
    if (!ok)
        return none;

    int64_t ssizes[CFX_MAX_DIMS], sstrides[CFX_MAX_DIMS];
    cfx_layer_norm_stat_layout(input, axis, M, ssizes, sstrides);
    cfx_tensor *o = cfx_tensor_new_strided(input->sizes, strides, n, odt, odev);
    cfx_tensor *m = o ? cfx_tensor_new_strided(ssizes, sstrides, n, dt, dev) : NULL;
    cfx_tensor *r = m ? cfx_tensor_new_strided(ssizes, sstrides, n, dt, dev) : NULL;
    if (!r) {
        cfx_kernel_discard(o);
        cfx_kernel_discard(m);
        return none;
    }
    return (cfx_native_layer_norm_result){{o, m, r}};
}

cfx_native_layer_norm_result cfx_kernel_native_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape, cfx_tensor *weight,
                                         cfx_tensor *bias, double eps)
{
    if (on_cpu(input) && on_cpu(weight) && on_cpu(bias))
        return cfx_cpu_native_layer_norm(input, normalized_shape, weight, bias, eps);
    return math_path(input, normalized_shape, weight, bias);
}
