/* backward_group_norm.c - native_group_norm_backward on CPU (ATen's native_group_norm_backward
 * and GroupNormBackwardKernelImpl) and Meta (2.13's decomposition, which its Meta key runs).
 *
 * The input is [N, C, *] with its spatial dims flattened to HxW, in `group` groups of
 * cpg = C / group channels; mean and rstd are the forward's saved [N, group] statistics. Per
 * (n, c): ds = sum(dy * x), db = sum(dy); per (n, g), with gamma 1 without a weight and
 * s = 1 / (HxW * cpg):
 *     ds_g = sum_c ds * gamma, db_g = sum_c db * gamma
 *     c2 = (db_g * mean - ds_g) * rstd^3 * s,  c3 = -c2 * mean - db_g * rstd * s
 *     dx = dy * rstd * gamma + x * c2 + c3
 * and dgamma[c] = sum_n (ds - db * mean) * rstd, dbeta[c] = sum_n db. Sums are in double.
 * Each output exists only where output_mask asks (None elsewhere). The two keys differ as in
 * 2.13: the CPU kernel lays dx out in the input's suggested memory format and checks with
 * ATen's texts (a missing weight with a weight or bias gradient asked for is "tensor does not
 * have a device": it reads the undefined gamma's device); the decomposition checks with its
 * own texts, computes in the promoted dtype and lays dx out like grad_out (its elementwise
 * ops follow their first operand).
 *
 * Not reproduced: 2.13's CPU kernel reads grad_out's memory as if it were laid out in the
 * input's suggested memory format, so a channels-last input with a contiguous grad_out (or
 * the reverse) gets wrong values there; cfx computes the true gradient whatever the layouts. */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/prims.h"

static const char OP[] = "aten::native_group_norm_backward";

static bool mask_at(const cfx_value *mask, int i)
{
    return mask && mask->kind == CFX_V_LIST && (uint32_t)i < mask->len && mask->u.items[i].kind == CFX_V_BOOL &&
           mask->u.items[i].u.b;
}

static bool fail_text(cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    cfx_error_set_text(CFX_ERR, OP, msg ? msg : "native_group_norm_backward: invalid arguments");
    cfx_free(msg);
    return false;
}

/* utils.check_same_shape(a, b): "Shape <b> is not the expected shape <a>!" */
static bool same_shape(const cfx_tensor *a, const cfx_tensor *b)
{
    if (a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim))
        return true;
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, "Shape ");
    cfx_prims_put_size(&m, b->sizes, b->ndim);
    cfx_buf_puts(&m, " is not the expected shape ");
    cfx_prims_put_size(&m, a->sizes, a->ndim);
    cfx_buf_puts(&m, "!");
    return fail_text(&m);
}

/* The decomposition's checks, in its order. */
static bool meta_checks(cfx_tensor *grad_out, cfx_tensor *input, cfx_tensor *mean, cfx_tensor *rstd,
                        cfx_tensor *weight, int64_t N, int64_t C, int64_t HxW, int64_t group)
{
    if (!same_shape(input, grad_out) || !same_shape(mean, rstd))
        return false;
    if (cfx_tensor_numel(input) != N * C * HxW) {
        cfx_error_set(CFX_ERR, OP, "Expect input to have %lld elements", (long long)(N * C * HxW));
        return false;
    }
    if (!(mean->ndim == 2 && mean->sizes[0] == N && mean->sizes[1] == group)) {
        cfx_buf m;
        cfx_buf_init(&m);
        cfx_buf_printf(&m, "Expect mean to have shape (%lld, %lld, but got ", (long long)N, (long long)group);
        cfx_prims_put_size(&m, mean->sizes, mean->ndim);
        return fail_text(&m);
    }
    if (weight && cfx_tensor_numel(weight) != C) {
        cfx_error_set(CFX_ERR, OP, "Expect gamma to have %lld elements but got %lld", (long long)C,
                      (long long)cfx_tensor_numel(weight));
        return false;
    }
    if (group == 0) { /* the decomposition's C // group */
        cfx_error_set(CFX_ERR, OP, "integer division or modulo by zero");
        return false;
    }
    if (C % group != 0) {
        cfx_error_set(CFX_ERR, OP, "Expect number of channels %lld to be evenly-divisible by number of groups %lld",
                      (long long)C, (long long)group);
        return false;
    }
    return true;
}

/* ATen's checks (native_group_norm_backward, then the kernel's TORCH_CHECKs), in its order. */
static bool cpu_checks(cfx_tensor *grad_out, cfx_tensor *input, cfx_tensor *mean, cfx_tensor *rstd,
                       cfx_tensor *weight, int64_t N, int64_t C, int64_t HxW, int64_t group, const cfx_value *mask)
{
    static const char UNCLEAR[] = " to be true, but got false.  (Could this error message be improved?  If so, please "
                                  "report an enhancement request to PyTorch.)";
    if (input->dtype != grad_out->dtype) {
        cfx_error_set(CFX_ERR, OP, "Expected scalar types of X and dY are same.");
        return false;
    }
    if (input->dtype != mean->dtype) { /* is_mixed_type, then check_mixed_data_type */
        bool params_float = mean->dtype == CFX_FLOAT32 && rstd->dtype == CFX_FLOAT32;
        cfx_error_set(CFX_ERR, OP, params_float ? "mixed dtype (CPU): all inputs must share same datatype."
                                                : "mixed dtype (CPU): expect parameter to have scalar type of Float");
        return false;
    }
    if (!weight && (mask_at(mask, 1) || mask_at(mask, 2))) {
        cfx_error_set(CFX_ERR, OP, "tensor does not have a device");
        return false;
    }
    const char *what = cfx_tensor_numel(grad_out) != N * C * HxW ? "dY.numel() == N * C * HxW"
                       : cfx_tensor_numel(input) != N * C * HxW  ? "X.numel() == N * C * HxW"
                       : cfx_tensor_numel(mean) != N * group     ? "mean.numel() == N * group"
                       : cfx_tensor_numel(rstd) != N * group     ? "rstd.numel() == N * group"
                       : weight && cfx_tensor_numel(weight) != C ? "!gamma.defined() || gamma.numel() == C"
                                                                 : NULL;
    if (what) {
        cfx_error_set(CFX_ERR, OP, "Expected %s%s", what, UNCLEAR);
        return false;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype)) {
        cfx_kernel_not_implemented(OP, "GroupNormBackwardKernelImpl", (cfx_dtype)input->dtype);
        return false;
    }
    if (weight && weight->dtype != input->dtype) {
        cfx_error_set(CFX_ERR, OP, "mixed dtype (CPU): all inputs must share same datatype.");
        return false;
    }
    if (group <= 0 || C % group != 0 || input->ndim < 2) {
        cfx_error_set(CFX_ERR, OP, "Expected C to be divisible by group, got C=%lld, group=%lld", (long long)C,
                      (long long)group);
        return false;
    }
    return true;
}

/* dx (contiguous, or NULL), dgamma, dbeta (NULL when not asked) from contiguous dy, x, mean,
 * rstd and gamma (NULL: ones). */
static void gn_backward(const cfx_tensor *dy, const cfx_tensor *x, const cfx_tensor *mean, const cfx_tensor *rstd,
                        const cfx_tensor *gamma, cfx_tensor *dx, cfx_tensor *dg, cfx_tensor *db, int64_t N, int64_t C,
                        int64_t HxW, int64_t group)
{
    int64_t cpg = C / group;
    double s = 1.0 / (double)(HxW * cpg);
    for (int64_t c = 0; c < C; c++) {
        if (dg)
            cfx_nn_set(dg, c, 0);
        if (db)
            cfx_nn_set(db, c, 0);
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < group; g++) {
            double mu = cfx_nn_get(mean, n * group + g), rs = cfx_nn_get(rstd, n * group + g);
            double ds_g = 0, db_g = 0;
            for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
                double ds = 0, dbs = 0, gm = gamma ? cfx_nn_get(gamma, c) : 1.0;
                int64_t base = (n * C + c) * HxW;
                for (int64_t i = 0; i < HxW; i++) {
                    double d = cfx_nn_get(dy, base + i);
                    ds += d * cfx_nn_get(x, base + i);
                    dbs += d;
                }
                ds_g += ds * gm, db_g += dbs * gm;
                if (dg)
                    cfx_nn_set(dg, c, cfx_nn_get(dg, c) + (ds - dbs * mu) * rs);
                if (db)
                    cfx_nn_set(db, c, cfx_nn_get(db, c) + dbs);
            }
            if (!dx)
                continue;
            double c2 = (db_g * mu - ds_g) * rs * rs * rs * s, c3 = -c2 * mu - db_g * rs * s;
            for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
                double c1 = rs * (gamma ? cfx_nn_get(gamma, c) : 1.0);
                int64_t base = (n * C + c) * HxW;
                for (int64_t i = 0; i < HxW; i++)
                    cfx_nn_set(dx, base + i, cfx_nn_get(dy, base + i) * c1 + cfx_nn_get(x, base + i) * c2 + c3);
            }
        }
}

/* The outputs: dx of the input's shape in memory format mf, dgamma and dbeta [C] (the
 * weight's shape when there is one), of dtype dt on device dev; false when one cannot be made. */
static bool make_outputs(const cfx_tensor *input, const cfx_tensor *weight, int64_t C, const cfx_value *mask,
                         cfx_memory_format mf, cfx_dtype dt, cfx_device dev, cfx_tensor **out)
{
    int64_t strides[CFX_MAX_DIMS];
    out[0] = out[1] = out[2] = NULL;
    if (mask_at(mask, 0)) {
        if (!cfx_geom_memory_format_strides(input->sizes, input->ndim, mf, strides, NULL))
            cfx_geom_contiguous_strides(input->sizes, input->ndim, strides);
        out[0] = cfx_tensor_new_strided(input->sizes, strides, input->ndim, dt, dev);
        if (!out[0])
            return false;
    }
    for (int k = 1; k < 3; k++)
        if (mask_at(mask, k)) {
            out[k] = weight ? cfx_tensor_new(weight->sizes, weight->ndim, dt, dev) : cfx_tensor_new(&C, 1, dt, dev);
            if (!out[k]) {
                for (int j = 0; j < k; j++)
                    cfx_kernel_discard(out[j]);
                return false;
            }
        }
    return true;
}

cfx_native_group_norm_backward_result cfx_meta_native_group_norm_backward(cfx_tensor *grad_out, cfx_tensor *input,
                                                                          cfx_tensor *mean, cfx_tensor *rstd,
                                                                          cfx_tensor *weight, int64_t N, int64_t C,
                                                                          int64_t HxW, int64_t group,
                                                                          const cfx_value *output_mask)
{
    cfx_native_group_norm_backward_result r = {{NULL, NULL, NULL}};
    if (!meta_checks(grad_out, input, mean, rstd, weight, N, C, HxW, group))
        return r;
    if (mask_at(output_mask, 0) && HxW * (C / group) == 0) { /* its s = 1.0 / (HxW * cpg) */
        cfx_error_set(CFX_ERR, OP, "float division by zero");
        return r;
    }
    /* pw_cast_for_opmath: every result in the promoted dtype of the tensor arguments */
    cfx_dtype dt = cfx_dtype_promote((cfx_dtype)grad_out->dtype, (cfx_dtype)input->dtype);
    dt = cfx_dtype_promote(cfx_dtype_promote(dt, (cfx_dtype)mean->dtype), (cfx_dtype)rstd->dtype);
    if (weight)
        dt = cfx_dtype_promote(dt, (cfx_dtype)weight->dtype);
    cfx_memory_format mf = cfx_geom_suggest_memory_format(grad_out->sizes, grad_out->strides, grad_out->ndim);
    if (!make_outputs(input, weight, C, output_mask, mf, dt, cfx_device_make(CFX_DEVICE_META), r.t))
        return (cfx_native_group_norm_backward_result){{NULL, NULL, NULL}};
    return r;
}

cfx_native_group_norm_backward_result cfx_cpu_native_group_norm_backward(cfx_tensor *grad_out, cfx_tensor *input,
                                                                         cfx_tensor *mean, cfx_tensor *rstd,
                                                                         cfx_tensor *weight, int64_t N, int64_t C,
                                                                         int64_t HxW, int64_t group,
                                                                         const cfx_value *output_mask)
{
    cfx_native_group_norm_backward_result none = {{NULL, NULL, NULL}}, r = none;
    if (!cpu_checks(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask))
        return none;
    cfx_dtype dt = (cfx_dtype)input->dtype;
    cfx_memory_format mf = cfx_geom_suggest_memory_format(input->sizes, input->strides, input->ndim);
    if (!make_outputs(input, weight, C, output_mask, mf, dt, input->device, r.t))
        return none;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *dy = cfx_cpu_contiguous(grad_out), *x = dy ? cfx_cpu_contiguous(input) : NULL;
    const cfx_tensor *mu = x ? cfx_cpu_contiguous(mean) : NULL, *rs = mu ? cfx_cpu_contiguous(rstd) : NULL;
    const cfx_tensor *gm = rs && weight ? cfx_cpu_contiguous(weight) : NULL;
    /* dx is computed contiguous, then copied into its layout when that is channels-last */
    cfx_tensor *dx = r.t[0] && !cfx_tensor_is_contiguous(r.t[0]) ? cfx_tensor_new(input->sizes, input->ndim, dt,
                                                                                  input->device)
                                                                 : r.t[0];
    bool ok = rs && (!weight || gm) && (!r.t[0] || dx);
    if (ok) {
        gn_backward(dy, x, mu, rs, gm, dx, r.t[1], r.t[2], N, C, HxW, group);
        if (dx != r.t[0])
            cfx_cpu_copy(r.t[0], dx);
    }
    cfx_scope_end(s);
    if (!ok) {
        cfx_error_set(CFX_ERR_NOMEM, OP, "out of memory in native_group_norm_backward");
        for (int k = 0; k < 3; k++)
            cfx_kernel_discard(r.t[k]);
        return none;
    }
    return r;
}
