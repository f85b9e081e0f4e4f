/* matrix.c - the CPU kernels of bmm, addmm, baddbmm, dot and mv's CompositeExplicitAutograd
 * kernel (mm is in mm.c).
 *
 * Each runs ATen's checks in ATen's order and words (the structured meta functions for bmm,
 * baddbmm and addmm, dot_check, addmv's checks for mv: mv is addmv into an empty vector, so
 * its messages speak of an "input"), then computes every product with cfx_blas_gemm (OpenBLAS
 * for floats). The beta * self term is the broadcast self, skipped when beta is 0 (NaN in self
 * does not propagate then, as in ATen). Results are contiguous. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/blas.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/structured.h"

static cfx_tensor *oom(const char *op, cfx_tensor *out)
{
    cfx_error_set(CFX_ERR_NOMEM, op, "out of memory");
    cfx_kernel_discard(out);
    return NULL;
}

/* expand(self, sizes)'s check, in its words ("The expanded size of the tensor ..."). */
bool cfx_matrix_check_expand(const char *op, const cfx_tensor *self, const int64_t *sizes, int n)
{
    int off = n - self->ndim;
    bool ok = off >= 0;
    for (int i = 0; ok && i < self->ndim; i++) {
        int64_t s = self->sizes[i], t = sizes[off + i];
        if (s == t || s == 1)
            continue;
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                           "non-singleton dimension %d.  Target sizes: ", (long long)t, (long long)s, off + i);
        cfx_geom_put_dims(&b, sizes, n);
        cfx_buf_puts(&b, ".  Tensor sizes: ");
        cfx_geom_put_dims(&b, self->sizes, self->ndim);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "expand: size mismatch");
        cfx_free(msg);
        return false;
    }
    if (!ok)
        cfx_error_set(CFX_ERR, op, "expand: the number of sizes provided (%d) must be greater or equal to the number "
                      "of dimensions in the tensor (%d)", n, self->ndim);
    return ok;
}

/* out (contiguous, n dims) = self broadcast to out's shape, converted to out's dtype. */
static void fill_broadcast(cfx_tensor *out, const cfx_tensor *self)
{
    int n = out->ndim, off = n - self->ndim;
    int64_t st[CFX_MAX_DIMS] = {0};
    for (int i = 0; i < self->ndim; i++)
        st[off + i] = self->sizes[i] == 1 ? 0 : self->strides[i];
    int64_t numel = cfx_tensor_numel(out), idx[CFX_MAX_DIMS] = {0};
    size_t es = cfx_dtype_size((cfx_dtype)out->dtype);
    const char *src = cfx_tensor_data(self);
    char *dst = cfx_tensor_data(out);
    for (int64_t e = 0; e < numel; e++) {
        int64_t so = 0;
        for (int d = 0; d < n; d++)
            so += idx[d] * st[d];
        memcpy(dst + (size_t)e * es, src + (size_t)so * es, es);
        for (int d = n - 1; d >= 0 && ++idx[d] == out->sizes[d]; d--)
            idx[d] = 0;
    }
}

/* The scalars of addmm/baddbmm as the computation dtype reads them. */
static double scalar_of(cfx_value v) { return cfx_scalar_to_double(v); }

/* out = beta * self + alpha * (a @ b) batch by batch (nb = 0: 2-D operands). */
static bool gemm_into(cfx_tensor *out, const cfx_tensor *self, const cfx_tensor *a, const cfx_tensor *b, int nb,
                      double beta, double alpha)
{
    if (self && beta != 0)
        fill_broadcast(out, self);
    else
        beta = 0;
    int64_t batches = nb ? out->sizes[0] : 1;
    int d0 = nb, d1 = nb + 1;
    for (int64_t i = 0; i < batches; i++) {
        int64_t oa = nb ? i * a->strides[0] : 0, ob = nb ? i * b->strides[0] : 0, oc = nb ? i * out->strides[0] : 0;
        if (!cfx_blas_gemm(out->dtype, cfx_mat_of(out, d0, d1, oc), cfx_mat_of(a, d0, d1, oa),
                           cfx_mat_of(b, d0, d1, ob), alpha, beta))
            return false;
    }
    return true;
}

/* bmm / baddbmm's meta checks (common_checks_baddbmm_bmm). */
bool cfx_matrix_check_bmm(const char *op, const cfx_tensor *b1, const cfx_tensor *b2)
{
    if (b1->ndim != 3) {
        cfx_error_set(CFX_ERR, op, "batch1 must be a 3D tensor");
        return false;
    }
    if (b2->ndim != 3) {
        cfx_error_set(CFX_ERR, op, "batch2 must be a 3D tensor");
        return false;
    }
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2]) {
        cfx_error_set(CFX_ERR, op,
                      "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, "
                      "%lld].",
                      (long long)b1->sizes[0], (long long)b1->sizes[2], (long long)b2->sizes[0],
                      (long long)b2->sizes[1]);
        return false;
    }
    return true;
}

static bool check_same_dtype(const char *op, const cfx_tensor *want, const cfx_tensor *got)
{
    if (want->dtype == got->dtype)
        return true;
    cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name((cfx_dtype)want->dtype),
                  cfx_dtype_scalar_name((cfx_dtype)got->dtype));
    return false;
}

static bool refuse_bool(const char *op, const char *name, const cfx_tensor *t)
{
    if (t->dtype != CFX_BOOL)
        return true;
    cfx_kernel_not_implemented(op, name, CFX_BOOL);
    return false;
}

static cfx_tensor *bmm_like(const char *op, cfx_tensor *self, cfx_tensor *b1, cfx_tensor *b2, cfx_value beta,
                            cfx_value alpha)
{
    if (!cfx_matrix_check_bmm(op, b1, b2))
        return NULL;
    int64_t sizes[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    if (self && !cfx_matrix_check_expand(op, self, sizes, 3))
        return NULL;
    if (!check_same_dtype(op, b1, b2) || (self && !check_same_dtype(op, self, b1)) || !refuse_bool(op, "bmm", b1))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(sizes, 3, (cfx_dtype)b1->dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    if (!gemm_into(out, self, b1, b2, 1, self ? scalar_of(beta) : 0, self ? scalar_of(alpha) : 1))
        return oom(op, out);
    return out;
}

cfx_tensor *cfx_cpu_bmm(cfx_tensor *self, cfx_tensor *mat2)
{
    return bmm_like("aten::bmm", NULL, self, mat2, cfx_none(), cfx_none());
}

cfx_tensor *cfx_cpu_baddbmm(cfx_tensor *self, cfx_tensor *batch1, cfx_tensor *batch2, cfx_value beta,
                            cfx_value alpha)
{
    return bmm_like("aten::baddbmm", self, batch1, batch2, beta, alpha);
}

cfx_tensor *cfx_cpu_addmm(cfx_tensor *self, cfx_tensor *mat1, cfx_tensor *mat2, cfx_value beta, cfx_value alpha)
{
    const char *op = "aten::addmm";
    if (mat1->ndim != 2 || mat2->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "%s must be a matrix, got %d-D tensor", mat1->ndim != 2 ? "mat1" : "mat2",
                      mat1->ndim != 2 ? mat1->ndim : mat2->ndim);
        return NULL;
    }
    if (mat1->sizes[1] != mat2->sizes[0]) {
        cfx_error_set(CFX_ERR, op, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                      (long long)mat1->sizes[0], (long long)mat1->sizes[1], (long long)mat2->sizes[0],
                      (long long)mat2->sizes[1]);
        return NULL;
    }
    int64_t sizes[2] = {mat1->sizes[0], mat2->sizes[1]};
    if (!cfx_matrix_check_expand(op, self, sizes, 2))
        return NULL;
    const cfx_tensor *odd = self->dtype != mat2->dtype ? self : mat1->dtype != mat2->dtype ? mat1 : NULL;
    if (odd) {
        cfx_error_set(CFX_ERR, op, "%s and mat2 must have the same dtype, but got %s and %s",
                      odd == self ? "self" : "mat1", cfx_dtype_scalar_name((cfx_dtype)odd->dtype),
                      cfx_dtype_scalar_name((cfx_dtype)mat2->dtype));
        return NULL;
    }
    if (!refuse_bool(op, "addmm_impl_cpu_", self))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(sizes, 2, (cfx_dtype)self->dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    if (!gemm_into(out, self, mat1, mat2, 0, scalar_of(beta), scalar_of(alpha)))
        return oom(op, out);
    return out;
}

/* dot_check, in its order: ranks, dtypes, lengths. */
bool cfx_matrix_check_dot(const char *op, const cfx_tensor *a, const cfx_tensor *b, bool meta)
{
    if (a->ndim != 1 || b->ndim != 1) {
        cfx_error_set(CFX_ERR, op, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
        return false;
    }
    if (a->dtype != b->dtype) {
        cfx_dtype x = (cfx_dtype)a->dtype, y = (cfx_dtype)b->dtype;
        cfx_error_set(CFX_ERR, op, "dot : expected both vectors to have same dtype, but found %s and %s",
                      meta ? cfx_dtype_torch_name(x) : cfx_dtype_scalar_name(x),
                      meta ? cfx_dtype_torch_name(y) : cfx_dtype_scalar_name(y));
        return false;
    }
    if (a->sizes[0] != b->sizes[0]) {
        /* the Python meta function's message lacks a space ("thesame"), as 2.13's does */
        cfx_error_set(CFX_ERR, op,
                      "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the%snumber of "
                      "elements, but got %lld and %lld elements respectively",
                      (long long)a->sizes[0], (long long)b->sizes[0], meta ? "same " : " same ",
                      (long long)a->sizes[0], (long long)b->sizes[0]);
        return false;
    }
    return true;
}

cfx_tensor *cfx_cpu_dot(cfx_tensor *self, cfx_tensor *tensor)
{
    const char *op = "aten::dot";
    if (!cfx_matrix_check_dot(op, self, tensor, false) || !refuse_bool(op, "dot", self))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(NULL, 0, (cfx_dtype)self->dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    cfx_mat c = {cfx_tensor_data(out), 1, 1, 1, 1};
    cfx_mat a = {cfx_tensor_data(self), 1, self->sizes[0], 1, self->strides[0]};
    cfx_mat b = {cfx_tensor_data(tensor), tensor->sizes[0], 1, tensor->strides[0], 1};
    if (!cfx_blas_gemm(out->dtype, c, a, b, 1, 0))
        return oom(op, out);
    return out;
}

/* mv as addmv(empty vector, self, vec, beta=0): addmv's checks, with the empty input's shape. */
static cfx_tensor *cpu_mv(cfx_tensor *self, cfx_tensor *vec)
{
    const char *op = "aten::mv";
    if (self->ndim != 2 || vec->ndim != 1) {
        cfx_error_set(CFX_ERR, op, "vector + matrix @ vector expected, got 1, %d, %d", self->ndim, vec->ndim);
        return NULL;
    }
    if (self->sizes[1] != vec->sizes[0]) {
        cfx_error_set(CFX_ERR, op, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                      (long long)self->sizes[0], (long long)self->sizes[0], (long long)self->sizes[1],
                      (long long)vec->sizes[0]);
        return NULL;
    }
    if (self->dtype != vec->dtype) {
        const char *v = cfx_dtype_scalar_name((cfx_dtype)vec->dtype);
        cfx_error_set(CFX_ERR, op, "addmv input tensors must have the same dtype, but got %s, %s, and %s", v,
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype), v);
        return NULL;
    }
    if (!refuse_bool(op, "addmv_impl_cpu", self))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(self->sizes, 1, (cfx_dtype)self->dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    cfx_mat c = {cfx_tensor_data(out), self->sizes[0], 1, 1, 1};
    cfx_mat b = {cfx_tensor_data(vec), vec->sizes[0], 1, vec->strides[0], 1};
    if (!cfx_blas_gemm(out->dtype, c, cfx_mat_of(self, 0, 1, 0), b, 1, 0))
        return oom(op, out);
    return out;
}

cfx_tensor *cfx_kernel_mv(cfx_tensor *self, cfx_tensor *vec)
{
    if (self->device.type == CFX_DEVICE_META || vec->device.type == CFX_DEVICE_META)
        return cfx_meta_mv(self, vec);
    return cpu_mv(self, vec);
}
