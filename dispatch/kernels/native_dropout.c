/* native_dropout.c - aten::native_dropout (CPU and Meta), the dropout that returns its mask.
 *
 * CPU is Dropout.cpp's native_dropout_cpu: an empty input is returned with an uninitialised
 * mask of its dtype; in training (train true or None) the mask is a bool empty_like(input)
 * filled by bernoulli_(1 - p) from the default generator (the draws bernoulli_.float makes, so
 * after cfx_manual_seed the mask is PyTorch's where PyTorch runs ATen's own bernoulli kernel),
 * and the output input * mask * scale, scale = 1 / (1 - p) (0 when p == 1), computed in the
 * input's dtype as mul then mul_ do; an integral input cannot take the float scale. Out of
 * training the output is a clone and the mask all true.
 *
 * Meta is the decomposition 2.13's meta table uses (torch/_decomp/decompositions.py): the
 * same layouts, but out of training (train False or None, or p == 0) the output is the input
 * itself. */
#include "dispatch/error.h"
#include "dispatch/generator_internal.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"

/* empty_like(input, dtype) with preserve_format */
static cfx_tensor *like(const cfx_tensor *input, cfx_dtype dt)
{
    int64_t strides[CFX_MAX_DIMS];
    cfx_geom_preserve_strides(input->sizes, input->strides, input->ndim, strides);
    return cfx_tensor_new_strided(input->sizes, strides, input->ndim, dt, input->device);
}

static bool training(cfx_value train) { return train.kind == CFX_V_NONE || cfx_scalar_to_int64(train) != 0; }

static bool check_floating(const cfx_tensor *input)
{
    if (cfx_dtype_is_floating((cfx_dtype)input->dtype))
        return true;
    cfx_error_set(CFX_ERR, "aten::native_dropout", "result type Float can't be cast to the desired output type %s",
                  cfx_dtype_scalar_name((cfx_dtype)input->dtype));
    return false;
}

/* dst[i] = v at every element of a fresh bool tensor */
static void fill_bool(cfx_tensor *t, bool v)
{
    bool *p = cfx_tensor_data(t);
    for (int64_t i = 0, n = cfx_tensor_numel(t); p && i < n; i++)
        p[i] = v;
}

cfx_native_dropout_result cfx_cpu_native_dropout(cfx_tensor *input, double p, cfx_value train)
{
    cfx_native_dropout_result none = {{NULL, NULL}};
    if (cfx_tensor_numel(input) == 0) {
        cfx_tensor *mask = like(input, (cfx_dtype)input->dtype);
        return mask ? (cfx_native_dropout_result){{cfx_autorelease(cfx_tensor_retain(input)), mask}} : none;
    }
    bool train_mode = training(train);
    if (train_mode && !(1 - p >= 0 && 1 - p <= 1)) { /* mask.bernoulli_(1 - p) checks first */
        cfx_error_set(CFX_ERR, "aten::native_dropout", "bernoulli_ expects p to be in [0, 1], but got p=%g", 1 - p);
        return none;
    }
    cfx_tensor *mask = like(input, CFX_BOOL);
    cfx_tensor *out = mask ? like(input, (cfx_dtype)input->dtype) : NULL;
    if (!out) {
        cfx_kernel_discard(mask);
        return none;
    }
    if (!train_mode) {
        fill_bool(mask, true);
        cfx_cpu_copy(out, input);
        return (cfx_native_dropout_result){{out, mask}};
    }
    cfx_generator_fill_bernoulli(cfx_default_generator(), mask, 1 - p);
    if (!check_floating(input)) {
        cfx_kernel_discard(mask);
        cfx_kernel_discard(out);
        return none;
    }
    double scale = 1 - p == 0 ? 0.0 : 1.0 / (1 - p);
    /* mask and out share input's dense layout: walk all three by the same multi-index */
    int n = input->ndim;
    int64_t idx[CFX_MAX_DIMS] = {0}, total = cfx_tensor_numel(input);
    const bool *m = cfx_tensor_data(mask);
    for (int64_t e = 0; e < total; e++) {
        int64_t io = 0, oo = 0;
        for (int d = 0; d < n; d++)
            io += idx[d] * input->strides[d], oo += idx[d] * out->strides[d];
        if (input->dtype == CFX_FLOAT32) {
            float x = ((const float *)cfx_tensor_data(input))[io] * (float)m[oo];
            ((float *)cfx_tensor_data(out))[oo] = x * (float)scale;
        } else {
            double x = ((const double *)cfx_tensor_data(input))[io] * (double)m[oo];
            ((double *)cfx_tensor_data(out))[oo] = x * scale;
        }
        for (int d = n - 1; d >= 0 && ++idx[d] == input->sizes[d]; d--)
            idx[d] = 0;
    }
    return (cfx_native_dropout_result){{out, mask}};
}

cfx_native_dropout_result cfx_meta_native_dropout(cfx_tensor *input, double p, cfx_value train)
{
    cfx_native_dropout_result none = {{NULL, NULL}};
    /* the decomposition's `if train and p != 0`: None is not training there */
    if (train.kind == CFX_V_NONE || !training(train) || p == 0) {
        cfx_tensor *mask = like(input, CFX_BOOL);
        return mask ? (cfx_native_dropout_result){{cfx_autorelease(cfx_tensor_retain(input)), mask}} : none;
    }
    if (p != 1 && !check_floating(input))
        return none;
    cfx_tensor *out = like(input, (cfx_dtype)input->dtype);
    cfx_tensor *mask = out ? like(input, CFX_BOOL) : NULL;
    if (!mask) {
        cfx_kernel_discard(out);
        return none;
    }
    return (cfx_native_dropout_result){{out, mask}};
}
