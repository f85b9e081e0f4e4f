/* reduce.c - the CPU kernels of sum.dim_IntList and max.dim.
 *
 * As in ATen (make_reduction_from_out_ty) the input is first converted to the output dtype,
 * then summed: sum(float, dtype=int32) truncates every element before adding. Floating sums
 * accumulate in double and round once, which stays within an ulp of PyTorch's cascade sum;
 * integer sums wrap like the int64 (or int32) hardware sum; a bool sum is a logical or;
 * complex sums add both parts in double.
 * The input is walked once in its own memory order with an odometer, every element adding into
 * its output slot, whose offset advances by per-dimension steps (0 along reduced dims).
 *
 * max.dim scans each line along dim as ATen's max_kernel_impl does: start from the first
 * element and take a value when !(value <= max), stopping at the first NaN. So the first of
 * equal maxima wins and any NaN in the line is the result, with the index of the first one. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"

/* Walks every element of in, calling ADD(acc[o], value) with o its output slot. */
#define SUM_WALK(NAME, T, ACC, ADD)                                                         \
    static void NAME(const cfx_tensor *in, const int64_t *ostep, ACC *acc)                 \
    {                                                                                      \
        int n = in->ndim;                                                                  \
        const T *base = (const T *)cfx_tensor_data(in);                                    \
        if (n == 0) {                                                                      \
            ADD(acc[0], base[0]);                                                          \
            return;                                                                        \
        }                                                                                  \
        int64_t idx[CFX_MAX_DIMS];                                                         \
        memset(idx, 0, (size_t)n * sizeof idx[0]);                                         \
        const T *p = base;                                                                 \
        int64_t o = 0;                                                                     \
        int64_t len = in->sizes[n - 1], st = in->strides[n - 1], os = ostep[n - 1];        \
        for (;;) {                                                                         \
            for (int64_t i = 0; i < len; i++)                                              \
                ADD(acc[o + i * os], p[i * st]);                                           \
            int d = n - 2;                                                                 \
            for (; d >= 0; d--) {                                                          \
                p += in->strides[d];                                                       \
                o += ostep[d];                                                             \
                if (++idx[d] < in->sizes[d])                                               \
                    break;                                                                 \
                p -= in->strides[d] * in->sizes[d];                                        \
                o -= ostep[d] * in->sizes[d];                                              \
                idx[d] = 0;                                                                \
            }                                                                              \
            if (d < 0)                                                                     \
                return;                                                                    \
        }                                                                                  \
    }

#define ADD_FLOAT(acc, v) ((acc) += (double)(v))
#define ADD_INT(acc, v) ((acc) += (uint64_t)(int64_t)(v))
#define ADD_BOOL(acc, v) ((acc) |= (v))
#define ADD_COMPLEX(acc, v) ((acc) += (cfx_complex128)(v))

SUM_WALK(walk_f32, float, double, ADD_FLOAT)
SUM_WALK(walk_f64, double, double, ADD_FLOAT)
SUM_WALK(walk_i64, int64_t, uint64_t, ADD_INT)
SUM_WALK(walk_i32, int32_t, uint64_t, ADD_INT)
SUM_WALK(walk_b8, bool, bool, ADD_BOOL)
SUM_WALK(walk_c64, cfx_complex64, cfx_complex128, ADD_COMPLEX)
SUM_WALK(walk_c128, cfx_complex128, cfx_complex128, ADD_COMPLEX)

/* Sums in (already of the output dtype) into the contiguous out. */
static bool sum_into(cfx_tensor *out, const cfx_tensor *in, const cfx_reduce_shape *r)
{
    int64_t onumel = cfx_tensor_numel(out);
    /* output steps per input dim: contiguous strides of the non-reduced dims, in order */
    int64_t ostep[CFX_MAX_DIMS];
    int od = out->ndim - 1;
    for (int d = in->ndim - 1; d >= 0; d--) {
        if (r->reduced[d]) {
            ostep[d] = 0;
            if (out->ndim == in->ndim)
                od--; /* keepdim: the output has a size-1 dim here */
        } else {
            ostep[d] = out->strides[od--];
        }
    }
    void *acc = cfx_calloc(onumel ? (size_t)onumel : 1, sizeof(cfx_complex128)); /* the widest slot */
    if (!acc) {
        cfx_error_set(CFX_ERR_NOMEM, "aten::sum.dim_IntList", "out of memory in sum");
        return false;
    }
    void *dst = cfx_tensor_data(out);
    switch ((cfx_dtype)out->dtype) {
    case CFX_FLOAT32:
        walk_f32(in, ostep, acc);
        for (int64_t i = 0; i < onumel; i++)
            ((float *)dst)[i] = (float)((double *)acc)[i];
        break;
    case CFX_FLOAT64:
        walk_f64(in, ostep, acc);
        memcpy(dst, acc, (size_t)onumel * sizeof(double));
        break;
    case CFX_INT64:
        walk_i64(in, ostep, acc);
        memcpy(dst, acc, (size_t)onumel * sizeof(int64_t));
        break;
    case CFX_INT32:
        walk_i32(in, ostep, acc);
        for (int64_t i = 0; i < onumel; i++)
            ((int32_t *)dst)[i] = (int32_t)(uint32_t)((uint64_t *)acc)[i];
        break;
    case CFX_BOOL:
        walk_b8(in, ostep, acc);
        for (int64_t i = 0; i < onumel; i++)
            ((bool *)dst)[i] = ((bool *)acc)[i];
        break;
    case CFX_COMPLEX64: /* both parts accumulate in double, as the real ones */
        walk_c64(in, ostep, acc);
        for (int64_t i = 0; i < onumel; i++)
            ((cfx_complex64 *)dst)[i] = (cfx_complex64)((cfx_complex128 *)acc)[i];
        break;
    case CFX_COMPLEX128:
        walk_c128(in, ostep, acc);
        memcpy(dst, acc, (size_t)onumel * sizeof(cfx_complex128));
        break;
    case CFX_UINT8: case CFX_INT8: case CFX_INT16: /* a sum into a small integer dtype (dtype=) */
        cfx_free(acc);
        cfx_error_set(CFX_ERR_NOTIMPL, "aten::sum.dim_IntList", "sum into %s is not implemented in cfx",
                      cfx_dtype_torch_name((cfx_dtype)out->dtype));
        return false;
    }
    cfx_free(acc);
    return true;
}

cfx_tensor *cfx_cpu_sum_dim_IntList(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    cfx_reduce_shape r;
    if (!cfx_structured_sum(&r, "aten::sum.dim_IntList", self, dim, keepdim, dtype))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(r.sizes, r.ndim, r.dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!out || cfx_tensor_numel(self) == 0)
        return out; /* new CPU tensors are zero-filled: the sum of nothing */
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *in = cfx_cpu_to_dtype(self, r.dtype);
    bool ok = in && sum_into(out, in, &r);
    cfx_scope_end(s);
    if (!ok) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

/* Walks the lines of in along dim w in row-major order of the other dims (the order of the
 * contiguous outputs), writing each line's maximum and its index. `v != v` is isnan for the
 * floating types and false for the others. */
#define MAX_LINES(NAME, T)                                                                 \
    static void NAME(const cfx_tensor *in, int w, int64_t nout, T *vals, int64_t *idx)     \
    {                                                                                      \
        int n = in->ndim;                                                                  \
        const T *p = (const T *)cfx_tensor_data(in);                                       \
        int64_t len = n ? in->sizes[w] : 1, st = n ? in->strides[w] : 0;                   \
        int64_t pos[CFX_MAX_DIMS];                                                         \
        memset(pos, 0, (size_t)n * sizeof pos[0]);                                         \
        for (int64_t o = 0; o < nout; o++) {                                               \
            T best = p[0];                                                                 \
            int64_t bi = 0;                                                                \
            for (int64_t i = 0; i < len; i++) {                                            \
                T v = p[i * st];                                                           \
                if (!(v <= best)) {                                                        \
                    best = v;                                                              \
                    bi = i;                                                                \
                    if (v != v)                                                            \
                        break;                                                             \
                }                                                                          \
            }                                                                              \
            vals[o] = best;                                                                \
            idx[o] = bi;                                                                   \
            for (int d = n - 1; d >= 0; d--) {                                             \
                if (d == w)                                                                \
                    continue;                                                              \
                p += in->strides[d];                                                       \
                if (++pos[d] < in->sizes[d])                                               \
                    break;                                                                 \
                p -= in->strides[d] * in->sizes[d];                                        \
                pos[d] = 0;                                                                \
            }                                                                              \
        }                                                                                  \
    }

MAX_LINES(max_f32, float)
MAX_LINES(max_f64, double)
MAX_LINES(max_i64, int64_t)
MAX_LINES(max_i32, int32_t)
MAX_LINES(max_b8, bool)
MAX_LINES(max_u8, uint8_t)
MAX_LINES(max_i8, int8_t)
MAX_LINES(max_i16, int16_t)

cfx_max_dim_result cfx_cpu_max_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    cfx_reduce_shape r;
    int64_t w;
    if (!cfx_structured_max_dim(&r, &w, "aten::max.dim", self, dim, keepdim))
        return (cfx_max_dim_result){{NULL, NULL}};
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    cfx_tensor *values = cfx_tensor_new(r.sizes, r.ndim, r.dtype, cpu);
    cfx_tensor *indices = values ? cfx_tensor_new(r.sizes, r.ndim, CFX_INT64, cpu) : NULL;
    if (!indices) {
        cfx_kernel_discard(values);
        return (cfx_max_dim_result){{NULL, NULL}};
    }
    int64_t nout = cfx_tensor_numel(values);
    void *v = cfx_tensor_data(values);
    int64_t *ix = cfx_tensor_data(indices);
    if (nout > 0) {
        switch ((cfx_dtype)self->dtype) {
        case CFX_FLOAT32: max_f32(self, (int)w, nout, v, ix); break;
        case CFX_FLOAT64: max_f64(self, (int)w, nout, v, ix); break;
        case CFX_INT64: max_i64(self, (int)w, nout, v, ix); break;
        case CFX_INT32: max_i32(self, (int)w, nout, v, ix); break;
        case CFX_BOOL: max_b8(self, (int)w, nout, v, ix); break;
        case CFX_UINT8: max_u8(self, (int)w, nout, v, ix); break;
        case CFX_INT8: max_i8(self, (int)w, nout, v, ix); break;
        case CFX_INT16: max_i16(self, (int)w, nout, v, ix); break;
        case CFX_COMPLEX64: case CFX_COMPLEX128: break; /* refused by cfx_structured_max_dim */
        }
    }
    return (cfx_max_dim_result){{values, indices}};
}
