/* blas.c - strided matrices onto CBLAS's gemm.
 *
 * BLAS addresses a row-major matrix by a leading dimension with unit column stride, or its
 * transpose. A view with a unit stride on either dim maps onto one of the two without a copy
 * (a size-1 dim's stride is irrelevant, so it counts as unit); anything else (a gapped or
 * broadcast operand) is copied contiguous first, as ATen's addmm_impl_cpu_ does with
 * .contiguous(). The result must be writable row-major; callers make it so (fresh outputs
 * are contiguous), and a result that is not is computed into a temporary and copied back.
 * BLAS has no integer gemm: int32/int64 take a plain loop here, so callers need not care. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/kernels/blas.h"
#include "dispatch/kernels/kernels.h"

cfx_mat cfx_mat_of(const cfx_tensor *t, int d0, int d1, int64_t offset)
{
    char *base = (char *)cfx_tensor_data(t) + offset * (int64_t)cfx_dtype_size((cfx_dtype)t->dtype);
    cfx_mat m = {base, t->sizes[d0], t->sizes[d1], t->strides[d0], t->strides[d1]};
    return m;
}

static int64_t max1(int64_t v) { return v < 1 ? 1 : v; }

/* Whether m is row-major addressable: unit column step and a leading dim >= cols. */
static bool row_major(const cfx_mat *m, int64_t *ld)
{
    if ((m->cs == 1 || m->cols <= 1) && (m->rs >= max1(m->cols) || m->rows <= 1)) {
        *ld = m->rows <= 1 ? max1(m->cols) : m->rs;
        return true;
    }
    return false;
}

static bool col_major(const cfx_mat *m, int64_t *ld)
{
    cfx_mat t = {m->p, m->cols, m->rows, m->cs, m->rs};
    return row_major(&t, ld);
}

/* A contiguous copy of m into buf (caller frees). */
static void *pack(const cfx_mat *m, size_t es)
{
    void *buf = cfx_malloc((size_t)max1(m->rows * m->cols) * es);
    if (!buf)
        return NULL;
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            memcpy((char *)buf + (size_t)(i * m->cols + j) * es, (char *)m->p + (size_t)(i * m->rs + j * m->cs) * es,
                   es);
    return buf;
}

/* The operand as BLAS sees it: pointer, transpose flag, leading dim; *tmp is a copy to free. */
static bool operand(const cfx_mat *m, size_t es, void **p, enum CBLAS_TRANSPOSE *tr, int64_t *ld, void **tmp)
{
    *tmp = NULL;
    *p = m->p;
    if (row_major(m, ld)) {
        *tr = CblasNoTrans;
        return true;
    }
    if (col_major(m, ld)) {
        *tr = CblasTrans;
        return true;
    }
    if (!(*tmp = pack(m, es)))
        return false;
    *p = *tmp;
    *tr = CblasNoTrans;
    *ld = max1(m->cols);
    return true;
}

/* Integers: an i-k-j loop in unsigned arithmetic, so overflow wraps as in ATen's C++. */
#define INT_GEMM(NAME, T, U)                                                                          \
    static void NAME(cfx_mat c, cfx_mat a, cfx_mat b, U alpha, U beta)                                \
    {                                                                                                 \
        T *pc = c.p;                                                                                  \
        const T *pa = a.p, *pb = b.p;                                                                 \
        for (int64_t i = 0; i < c.rows; i++)                                                          \
            for (int64_t j = 0; j < c.cols; j++) {                                                    \
                U acc = 0;                                                                            \
                for (int64_t k = 0; k < a.cols; k++)                                                  \
                    acc += (U)pa[i * a.rs + k * a.cs] * (U)pb[k * b.rs + j * b.cs];                   \
                T *o = pc + i * c.rs + j * c.cs;                                                      \
                *o = (T)(alpha * acc + (beta ? beta * (U)*o : 0));                                    \
            }                                                                                         \
    }
INT_GEMM(gemm_i64, int64_t, uint64_t)
INT_GEMM(gemm_i32, int32_t, uint32_t)

bool cfx_blas_gemm(int dt, cfx_mat c, cfx_mat a, cfx_mat b, double alpha, double beta)
{
    if (dt == CFX_INT64 || dt == CFX_INT32) {
        if (dt == CFX_INT64)
            gemm_i64(c, a, b, (uint64_t)(int64_t)alpha, (uint64_t)(int64_t)beta);
        else
            gemm_i32(c, a, b, (uint32_t)(int32_t)alpha, (uint32_t)(int32_t)beta);
        return true;
    }
    size_t es = dt == CFX_FLOAT32 ? sizeof(float) : sizeof(double);
    if (c.rows == 0 || c.cols == 0)
        return true;
    void *pa, *pb, *ta, *tb, *tc = NULL;
    enum CBLAS_TRANSPOSE tra, trb;
    int64_t lda, ldb, ldc;
    if (!operand(&a, es, &pa, &tra, &lda, &ta))
        return false;
    if (!operand(&b, es, &pb, &trb, &ldb, &tb)) {
        cfx_free(ta);
        return false;
    }
    void *pc = c.p;
    bool direct = row_major(&c, &ldc);
    if (!direct) {
        if (!(tc = pack(&c, es))) {
            cfx_free(ta);
            cfx_free(tb);
            return false;
        }
        pc = tc;
        ldc = max1(c.cols);
    }
    int M = (int)c.rows, N = (int)c.cols, K = (int)a.cols;
    /* BLAS wants lda >= max(1, K) even when K == 0 */
    if (tra == CblasNoTrans && lda < max1(K))
        lda = max1(K);
    if (trb == CblasNoTrans && ldb < max1(N))
        ldb = max1(N);
    if (dt == CFX_FLOAT32)
        cblas_sgemm(CblasRowMajor, tra, trb, M, N, K, (float)alpha, pa, (int)lda, pb, (int)ldb, (float)beta, pc,
                    (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, tra, trb, M, N, K, alpha, pa, (int)lda, pb, (int)ldb, beta, pc, (int)ldc);
    if (tc) {
        for (int64_t i = 0; i < c.rows; i++)
            for (int64_t j = 0; j < c.cols; j++)
                memcpy((char *)c.p + (size_t)(i * c.rs + j * c.cs) * es, (char *)tc + (size_t)(i * c.cols + j) * es,
                       es);
        cfx_free(tc);
    }
    cfx_free(ta);
    cfx_free(tb);
    return true;
}

bool cfx_cpu_gemm(cfx_tensor *out, const cfx_tensor *a, const cfx_tensor *b, double beta, double alpha)
{
    return cfx_blas_gemm(out->dtype, cfx_mat_of(out, 0, 1, 0), cfx_mat_of(a, 0, 1, 0), cfx_mat_of(b, 0, 1, 0), alpha,
                         beta);
}
