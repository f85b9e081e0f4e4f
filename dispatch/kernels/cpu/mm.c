/* mm.c - the CPU kernel of mm.
 *
 * ATen's mm_out_cpu ends in addmm_impl_cpu_, whose checks after the shared meta function are
 * observable: first the operands' dtypes must match ("expected m1 and m2 to have the same
 * dtype, but got: float != double", in caffe2's C++ type names), then an empty result or an
 * empty inner dimension returns before the dtype dispatch (so mm of empty bool matrices
 * works), and bool is "not implemented".
 * The product is a plain i-k-j loop over strided operands; floats accumulate in double and
 * round once (BLAS's float accumulation may differ in the last bit), integers wrap. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/structured.h"

#define MM_LOOP(NAME, T, ACC, FINISH)                                                      \
    static bool NAME(cfx_tensor *out, const cfx_tensor *a, const cfx_tensor *b)           \
    {                                                                                     \
        int64_t n = a->sizes[0], k = a->sizes[1], m = b->sizes[1];                        \
        ACC *acc = calloc((size_t)m, sizeof(ACC));                                        \
        if (!acc)                                                                         \
            return false;                                                                 \
        const T *pa = cfx_tensor_data(a), *pb = cfx_tensor_data(b);                       \
        T *po = cfx_tensor_data(out);                                                     \
        for (int64_t i = 0; i < n; i++) {                                                 \
            memset(acc, 0, (size_t)m * sizeof(ACC));                                      \
            for (int64_t kk = 0; kk < k; kk++) {                                          \
                ACC av = (ACC)pa[i * a->strides[0] + kk * a->strides[1]];                 \
                const T *row = pb + kk * b->strides[0];                                   \
                for (int64_t j = 0; j < m; j++)                                           \
                    acc[j] += av * (ACC)row[j * b->strides[1]];                           \
            }                                                                             \
            for (int64_t j = 0; j < m; j++)                                               \
                po[i * out->strides[0] + j * out->strides[1]] = FINISH(T, acc[j]);        \
        }                                                                                 \
        free(acc);                                                                        \
        return true;                                                                      \
    }

#define AS_IS(T, v) ((T)(v))
MM_LOOP(mm_f32, float, double, AS_IS)
MM_LOOP(mm_f64, double, double, AS_IS)
MM_LOOP(mm_i64, int64_t, uint64_t, AS_IS)
MM_LOOP(mm_i32, int32_t, uint32_t, AS_IS)

/* A dtype as caffe2::TypeMeta prints it: the demangled C++ type of its elements. */
static const char *cpp_type_name(cfx_dtype t)
{
    switch (t) {
    case CFX_FLOAT32: return "float";
    case CFX_FLOAT64: return "double";
    case CFX_INT64: return "long int";
    case CFX_INT32: return "int";
    case CFX_BOOL: return "bool";
    }
    return "?";
}

cfx_tensor *cfx_cpu_mm(cfx_tensor *self, cfx_tensor *mat2)
{
    const char *op = "aten::mm";
    if (!cfx_structured_mm(op, self, mat2))
        return NULL;
    cfx_dtype dt = (cfx_dtype)self->dtype;
    int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
    if (mat2->dtype != self->dtype) {
        cfx_error_set(CFX_ERR, op, "expected m1 and m2 to have the same dtype, but got: %s != %s", cpp_type_name(dt),
                      cpp_type_name((cfx_dtype)mat2->dtype));
        return NULL;
    }
    bool empty = sizes[0] * sizes[1] == 0 || self->sizes[1] == 0;
    if (!empty && dt == CFX_BOOL) {
        cfx_error_set(CFX_ERR, op, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
        return NULL;
    }
    cfx_tensor *out = cfx_tensor_new(sizes, 2, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!out || empty)
        return out; /* zero-filled */
    bool ok = false;
    switch (dt) {
    case CFX_FLOAT32: ok = mm_f32(out, self, mat2); break;
    case CFX_FLOAT64: ok = mm_f64(out, self, mat2); break;
    case CFX_INT64: ok = mm_i64(out, self, mat2); break;
    case CFX_INT32: ok = mm_i32(out, self, mat2); break;
    case CFX_BOOL: break;
    }
    if (!ok) {
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in mm");
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}
