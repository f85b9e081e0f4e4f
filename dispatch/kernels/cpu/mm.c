/* mm.c - the CPU kernel of mm.
 *
 * ATen's mm_out_cpu ends in addmm_impl_cpu_, whose checks after the shared meta function are
 * observable: first the operands' dtypes must match ("expected m1 and m2 to have the same
 * dtype, but got: float != double", in caffe2's C++ type names), then an empty result or an
 * empty inner dimension returns before the dtype dispatch (so mm of empty bool matrices
 * works), and bool is "not implemented".
 * Floating products go to OpenBLAS's sgemm/dgemm (the serial build: cfx starts no thread);
 * an operand that BLAS cannot address (neither of its strides is 1) is copied contiguous
 * first, as ATen's addmm_impl_cpu_ does. Integers, which BLAS has not, take a plain i-k-j loop
 * that wraps like C++ unsigned arithmetic. cfx_cpu_gemm is shared with bmm, addmm, linear's
 * and convolution's kernels (dispatch/kernels/blas.h). */
#include "dispatch/error.h"
#include "dispatch/kernels/blas.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/structured.h"

/* A dtype as caffe2::TypeMeta prints it: the demangled C++ type of its elements. */
static const char *cpp_type_name(cfx_dtype t)
{
    switch (t) {
    case CFX_FLOAT32: return "float";
    case CFX_FLOAT64: return "double";
    case CFX_INT64: return "long int";
    case CFX_INT32: return "int";
    case CFX_BOOL: return "bool";
    case CFX_UINT8: return "unsigned char";
    case CFX_INT8: return "signed char";
    case CFX_INT16: return "short int";
    case CFX_COMPLEX64: return "c10::complex<float>";
    case CFX_COMPLEX128: return "c10::complex<double>";
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
        cfx_kernel_not_implemented(op, "addmm_impl_cpu_", CFX_BOOL);
        return NULL;
    }
    cfx_tensor *out = cfx_tensor_new(sizes, 2, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!out || empty)
        return out; /* zero-filled */
    if (!cfx_cpu_gemm(out, self, mat2, 0.0, 1.0)) {
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in mm");
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}
