/* matrix.c - the Meta kernels of bmm, baddbmm, addmm, dot and mv.
 *
 * In 2.13 these are torch/_meta_registrations.py's functions and references, whose texts and
 * dtype rules differ from the CPU kernels': bmm/baddbmm share the C++ checks' words but name
 * dtypes as torch.float32; addmm is mm's meta ("a must be 2D") plus an elementwise add with
 * self (prims' broadcast error, type promotion over all three operands); mv's meta says
 * "matrix @ vector expected" and promotes; dot's says "thesame". Results are contiguous, on
 * the first operand's device. */
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/structured.h"

static cfx_tensor *new_empty(const cfx_tensor *like, const int64_t *sizes, int n, cfx_dtype dt)
{
    return cfx_tensor_new(sizes, n, dt, like->device);
}

static bool same_dtype(const char *op, const cfx_tensor *want, const cfx_tensor *got)
{
    if (want->dtype == got->dtype)
        return true;
    cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_torch_name((cfx_dtype)want->dtype),
                  cfx_dtype_torch_name((cfx_dtype)got->dtype));
    return false;
}

cfx_tensor *cfx_meta_bmm(cfx_tensor *self, cfx_tensor *mat2)
{
    const char *op = "aten::bmm";
    if (!cfx_matrix_check_bmm(op, self, mat2) || !same_dtype(op, self, mat2))
        return NULL;
    int64_t sizes[3] = {self->sizes[0], self->sizes[1], mat2->sizes[2]};
    return new_empty(self, sizes, 3, (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_meta_baddbmm(cfx_tensor *self, cfx_tensor *batch1, cfx_tensor *batch2, cfx_value beta,
                             cfx_value alpha)
{
    (void)beta, (void)alpha;
    const char *op = "aten::baddbmm";
    if (!cfx_matrix_check_bmm(op, batch1, batch2))
        return NULL;
    int64_t sizes[3] = {batch1->sizes[0], batch1->sizes[1], batch2->sizes[2]};
    if (!cfx_matrix_check_expand(op, self, sizes, 3) || !same_dtype(op, batch1, batch2) ||
        !same_dtype(op, self, batch1))
        return NULL;
    return new_empty(batch1, sizes, 3, (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_meta_addmm(cfx_tensor *self, cfx_tensor *mat1, cfx_tensor *mat2, cfx_value beta, cfx_value alpha)
{
    (void)alpha;
    const char *op = "aten::addmm";
    cfx_tensor *mm = cfx_meta_mm(mat1, mat2);
    if (!mm)
        return NULL;
    cfx_dtype dt = cfx_dtype_promote(cfx_dtype_promote((cfx_dtype)self->dtype, (cfx_dtype)mat1->dtype),
                                     (cfx_dtype)mat2->dtype);
    int64_t sizes[2] = {mm->sizes[0], mm->sizes[1]};
    bool ok = true;
    if (cfx_scalar_to_double(beta) != 0 || beta.kind == CFX_V_BOOL) {
        cfx_tmeta a, b;
        cfx_tmeta_of(&a, mm);
        cfx_tmeta_of(&b, self);
        const cfx_tmeta *ts[2] = {&a, &b};
        int64_t buf[CFX_MAX_DIMS];
        const int64_t *common;
        int nd;
        unsigned differs;
        ok = cfx_prims_broadcast_shapes(op, ts, 2, buf, &common, &nd, &differs);
    }
    cfx_kernel_discard(mm);
    return ok ? new_empty(mat1, sizes, 2, dt) : NULL;
}

cfx_tensor *cfx_meta_dot(cfx_tensor *self, cfx_tensor *tensor)
{
    if (!cfx_matrix_check_dot("aten::dot", self, tensor, true))
        return NULL;
    return new_empty(self, NULL, 0, (cfx_dtype)self->dtype);
}

cfx_tensor *cfx_meta_mv(cfx_tensor *self, cfx_tensor *vec)
{
    const char *op = "aten::mv";
    if (self->ndim != 2 || vec->ndim != 1) {
        cfx_error_set(CFX_ERR, op, "matrix @ vector expected, got %d, %d", self->ndim, vec->ndim);
        return NULL;
    }
    if (self->sizes[1] != vec->sizes[0]) {
        cfx_error_set(CFX_ERR, op, "size mismatch, got input (%lldx%lld), vec (%lld)", (long long)self->sizes[0],
                      (long long)self->sizes[1], (long long)vec->sizes[0]);
        return NULL;
    }
    return new_empty(self, self->sizes, 1, cfx_dtype_promote((cfx_dtype)self->dtype, (cfx_dtype)vec->dtype));
}
