/* softmax.c - the CPU kernels of _softmax and _log_softmax (ATen's softmax_cpu and
 * log_softmax_cpu, float32 and float64).
 *
 * As in ATen the input is made contiguous and the result is contiguous; around `dim` it is
 * [outer, len, inner]. Each softmax row computes in the tensor's own dtype with the vector
 * primitives of vec.h, in ATen's order: max, exp(x - max) with its sum, then
 * out * (1 / sum) for softmax and (x - max) - log(sum) for log_softmax. A row over an inner
 * dim (inner > 1) is strided; it is gathered into a contiguous buffer, computed by the same
 * row code and scattered back, so there is one numeric path whatever the dim. */
#include <math.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/vec.h"

#define DEFINE_SOFTMAX(S, T, LOG)                                                                 \
    static void row_##S(T *o, const T *x, int64_t n, bool is_log)                                 \
    {                                                                                             \
        T m = cfx_vec_max_##S(x, n);                                                              \
        T sum = cfx_vec_exp_sum_##S(o, x, m, n);                                                  \
        if (is_log)                                                                               \
            cfx_vec_normalize_##S(o, x, m, 1, LOG(sum), n);                                       \
        else                                                                                      \
            cfx_vec_normalize_##S(o, o, 0, 1 / sum, 0, n);                                        \
    }                                                                                             \
                                                                                                  \
    /* buf: 2 * len elements when inner > 1 */                                                    \
    static void softmax_##S(T *o, const T *x, int64_t outer, int64_t len, int64_t inner,          \
                            bool is_log, T *buf)                                                  \
    {                                                                                             \
        if (inner == 1) {                                                                         \
            for (int64_t r = 0; r < outer; r++)                                                   \
                row_##S(o + r * len, x + r * len, len, is_log);                                   \
            return;                                                                               \
        }                                                                                         \
        for (int64_t b = 0; b < outer; b++)                                                       \
            for (int64_t j = 0; j < inner; j++) {                                                 \
                int64_t base = b * len * inner + j;                                               \
                for (int64_t i = 0; i < len; i++)                                                 \
                    buf[i] = x[base + i * inner];                                                 \
                row_##S(buf + len, buf, len, is_log);                                             \
                for (int64_t i = 0; i < len; i++)                                                 \
                    o[base + i * inner] = buf[len + i];                                           \
            }                                                                                     \
    }

DEFINE_SOFTMAX(f32, float, logf)
DEFINE_SOFTMAX(f64, double, log)

static cfx_tensor *softmax(const char *op, cfx_tensor *self, int64_t dim, bool half_to_float, bool is_log)
{
    int64_t d;
    if (!cfx_geom_wrap_dim(dim, self->ndim, &d, op))
        return NULL;
    if (half_to_float) {
        cfx_error_set(CFX_ERR, op, "softmax with half to float conversion is not supported on CPU");
        return NULL;
    }
    cfx_dtype dt = (cfx_dtype)self->dtype;
    if (!cfx_dtype_is_floating(dt)) {
        cfx_kernel_not_implemented(op, is_log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl", dt);
        return NULL;
    }
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    cfx_tensor *out = cfx_tensor_new(self->sizes, self->ndim, dt, cpu);
    int64_t numel = cfx_tensor_numel(self);
    if (!out || numel == 0)
        return out;
    int64_t len = self->ndim ? self->sizes[d] : 1;
    int64_t inner = self->ndim ? cfx_geom_numel(self->sizes + d + 1, self->ndim - (int)d - 1) : 1;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *x = cfx_cpu_contiguous(self);
    void *buf = inner > 1 ? cfx_malloc((size_t)(2 * len) * cfx_dtype_size(dt)) : NULL;
    bool ok = x && (inner == 1 || buf);
    if (ok && dt == CFX_FLOAT32)
        softmax_f32(cfx_tensor_data(out), cfx_tensor_data(x), numel / (len * inner), len, inner, is_log, buf);
    else if (ok)
        softmax_f64(cfx_tensor_data(out), cfx_tensor_data(x), numel / (len * inner), len, inner, is_log, buf);
    cfx_free(buf);
    cfx_scope_end(s);
    if (!ok) {
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in softmax");
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_cpu__softmax(cfx_tensor *self, int64_t dim, bool half_to_float)
{
    return softmax("aten::_softmax", self, dim, half_to_float, false);
}

cfx_tensor *cfx_cpu__log_softmax(cfx_tensor *self, int64_t dim, bool half_to_float)
{
    return softmax("aten::_log_softmax", self, dim, half_to_float, true);
}
