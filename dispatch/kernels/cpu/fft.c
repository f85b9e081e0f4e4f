/* fft.c - the CPU kernels of aten::_fft_r2c, _fft_c2r and _fft_c2c.
 *
 * The input is gathered into a contiguous double-precision complex buffer, transformed along
 * each dim in turn by the 1-D engine (fft_engine.c), scaled once by the normalization and
 * scattered into the output, which has the layout PyTorch's MKL kernels give it
 * (fft_layout.c). r2c transforms the full real signal and keeps the first n/2 + 1 entries of
 * its last dim when onesided (the rest is their conjugate mirror). c2r first runs the
 * inverse c2c over all but the last dim, then rebuilds each last-dim line of length
 * last_dim_size from its first n/2 + 1 entries by Hermitian symmetry and keeps the real part
 * of the inverse transform, which is what pocketfft and MKL compute (the imaginary parts of
 * the zero and Nyquist entries drop out). */
#include <complex.h>

#include "dispatch/alloc.h"
#include "dispatch/error.h"
#include "dispatch/kernels/fft.h"
#include "dispatch/kernels/kernels.h"

/* Row-major walk over sizes: the next multi-index; false after the last. */
static bool next_index(int64_t *idx, const int64_t *sizes, int n)
{
    for (int d = n - 1; d >= 0; d--) {
        if (++idx[d] < sizes[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

static int64_t offset_of(const int64_t *idx, const int64_t *strides, int n)
{
    int64_t off = 0;
    for (int d = 0; d < n; d++)
        off += idx[d] * strides[d];
    return off;
}

static int64_t numel_of(const int64_t *sizes, int n)
{
    int64_t k = 1;
    for (int d = 0; d < n; d++)
        k *= sizes[d];
    return k;
}

/* t's elements, row-major, into buf (a real input gets imaginary parts 0). */
static void gather(const cfx_tensor *t, double _Complex *buf)
{
    int64_t idx[CFX_MAX_DIMS] = {0}, n = cfx_tensor_numel(t);
    const char *base = t->storage->data;
    for (int64_t i = 0; i < n; i++, next_index(idx, t->sizes, t->ndim)) {
        int64_t off = t->storage_offset + offset_of(idx, t->strides, t->ndim);
        switch ((cfx_dtype)t->dtype) {
        case CFX_FLOAT32: buf[i] = ((const float *)base)[off]; break;
        case CFX_FLOAT64: buf[i] = ((const double *)base)[off]; break;
        case CFX_COMPLEX64: buf[i] = ((const float _Complex *)base)[off]; break;
        default: buf[i] = ((const double _Complex *)base)[off]; break;
        }
    }
}

/* out (row-major over its sizes) = scale * buf[...] read with buf's own sizes (bsizes, which
 * may be longer than out's in one dim: r2c's onesided output); a real output keeps the real
 * part. */
static void scatter(cfx_tensor *out, const double _Complex *buf, const int64_t *bsizes, double scale)
{
    int nd = out->ndim;
    int64_t bstrides[CFX_MAX_DIMS], s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        bstrides[d] = s;
        s *= bsizes[d];
    }
    int64_t idx[CFX_MAX_DIMS] = {0}, n = cfx_tensor_numel(out);
    char *base = out->storage->data;
    for (int64_t i = 0; i < n; i++, next_index(idx, out->sizes, nd)) {
        int64_t off = out->storage_offset + offset_of(idx, out->strides, nd);
        double _Complex v = buf[offset_of(idx, bstrides, nd)] * scale;
        switch ((cfx_dtype)out->dtype) {
        case CFX_FLOAT32: ((float *)base)[off] = (float)creal(v); break;
        case CFX_FLOAT64: ((double *)base)[off] = creal(v); break;
        case CFX_COMPLEX64: ((float _Complex *)base)[off] = (float _Complex)v; break;
        default: ((double _Complex *)base)[off] = v; break;
        }
    }
}

/* The 1-D transform of every line of buf (contiguous, sizes) along dim d. */
static bool along(double _Complex *buf, const int64_t *sizes, int nd, int d, bool forward)
{
    int64_t len = sizes[d], inner = numel_of(sizes + d + 1, nd - d - 1), outer = numel_of(sizes, d);
    if (len <= 1)
        return true;
    double _Complex *line = cfx_malloc((size_t)len * sizeof *line);
    if (!line)
        return false;
    bool ok = true;
    for (int64_t o = 0; ok && o < outer; o++)
        for (int64_t i = 0; ok && i < inner; i++) {
            double _Complex *p = buf + o * len * inner + i;
            for (int64_t k = 0; k < len; k++)
                line[k] = p[k * inner];
            ok = cfx_fft_1d(line, len, forward);
            for (int64_t k = 0; ok && k < len; k++)
                p[k * inner] = line[k];
        }
    cfx_free(line);
    return ok;
}

/* c2r's last step: buf (sizes, complex) -> res (sizes with sizes[d] = n): each line's first
 * n/2 + 1 entries (zeros past buf's) extended by Hermitian symmetry, then inverse transformed
 * along d; the caller keeps the real parts (scatter into the real output). */
static bool hermitian_inverse(const double _Complex *buf, const int64_t *sizes, int nd, int d, int64_t n,
                              double _Complex *res)
{
    int64_t len = sizes[d], inner = numel_of(sizes + d + 1, nd - d - 1), outer = numel_of(sizes, d);
    int64_t half = n / 2 + 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < n; k++) {
            int64_t from = k < half ? k : n - k; /* the mirror of k >= half is below half */
            for (int64_t i = 0; i < inner; i++) {
                double _Complex v = from < len ? buf[(o * len + from) * inner + i] : 0;
                res[(o * n + k) * inner + i] = k < half ? v : conj(v);
            }
        }
    int64_t rsizes[CFX_MAX_DIMS];
    for (int e = 0; e < nd; e++)
        rsizes[e] = e == d ? n : sizes[e];
    return along(res, rsizes, nd, d, false);
}

static int64_t signal_numel(const int64_t *sizes, const cfx_fft_plan *p)
{
    int64_t n = 1;
    for (int i = 0; i < p->ndims; i++)
        n *= sizes[p->dims[i]];
    return n;
}

/* Runs the planned transform of self into a new CPU tensor. */
static cfx_tensor *run(const char *op, const cfx_fft_plan *p, const cfx_tensor *self, int64_t normalization,
                       bool forward)
{
    cfx_tensor *out = cfx_tensor_new_strided(p->out_sizes, p->out_strides, p->ndim, p->out_dtype,
                                             cfx_device_make(CFX_DEVICE_CPU));
    if (!out || cfx_tensor_numel(out) == 0)
        return out;
    int64_t n = cfx_tensor_numel(self);
    double _Complex *buf = cfx_malloc((size_t)(n ? n : 1) * sizeof *buf), *res = NULL;
    bool ok = buf != NULL;
    if (ok)
        gather(self, buf);
    if (ok && p->clone) {
        scatter(out, buf, self->sizes, 1.0);
        cfx_free(buf);
        return out;
    }
    int steps = p->kind == CFX_FFT_C2R ? p->ndims - 1 : p->ndims;
    for (int i = 0; ok && i < steps; i++)
        ok = along(buf, self->sizes, p->ndim, p->dims[i], forward);
    const double _Complex *from = buf;
    int64_t scale_n = signal_numel(self->sizes, p);
    if (ok && p->kind == CFX_FFT_C2R) {
        int last = p->dims[p->ndims - 1];
        res = cfx_malloc((size_t)cfx_tensor_numel(out) * sizeof *res);
        ok = res && hermitian_inverse(buf, self->sizes, p->ndim, last, p->out_sizes[last], res);
        from = res;
        scale_n = signal_numel(p->out_sizes, p);
    }
    if (ok)
        scatter(out, from, p->kind == CFX_FFT_C2R ? p->out_sizes : self->sizes, cfx_fft_scale(normalization, scale_n));
    cfx_free(buf);
    cfx_free(res);
    if (!ok) {
        cfx_kernel_discard(out);
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory");
        return NULL;
    }
    return out;
}

cfx_tensor *cfx_cpu__fft_r2c(cfx_tensor *self, cfx_int_list dim, int64_t normalization, bool onesided)
{
    const char *op = "aten::_fft_r2c";
    cfx_fft_plan p;
    if (!cfx_fft_plan_make(&p, op, CFX_FFT_R2C, self, dim, normalization, onesided, 0, false))
        return NULL;
    return run(op, &p, self, normalization, true);
}

cfx_tensor *cfx_cpu__fft_c2r(cfx_tensor *self, cfx_int_list dim, int64_t normalization, int64_t last_dim_size)
{
    const char *op = "aten::_fft_c2r";
    cfx_fft_plan p;
    if (!cfx_fft_plan_make(&p, op, CFX_FFT_C2R, self, dim, normalization, false, last_dim_size, false))
        return NULL;
    return run(op, &p, self, normalization, false);
}

cfx_tensor *cfx_cpu__fft_c2c(cfx_tensor *self, cfx_int_list dim, int64_t normalization, bool forward)
{
    const char *op = "aten::_fft_c2c";
    cfx_fft_plan p;
    if (!cfx_fft_plan_make(&p, op, CFX_FFT_C2C, self, dim, normalization, false, 0, false))
        return NULL;
    return run(op, &p, self, normalization, forward);
}
