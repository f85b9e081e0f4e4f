/* fft_layout.c - the checks and the output layout of aten::_fft_r2c, _fft_c2r and _fft_c2c,
 * shared by their CPU kernels (cpu/fft.c) and Meta kernels (meta/fft.c).
 *
 * The layout is _exec_fft's (aten/src/ATen/native/mkl/SpectralOps.cpp, mirrored by
 * torch/_meta_registrations.py since PyTorch's CPU build uses MKL): the batch dims are put
 * first, sorted by the input's strides (largest first, ties in order), then the transformed
 * dims in the order the caller sorted them; the output is contiguous in that order. r2c sorts
 * all but its last dim by stride, c2c all its dims; c2r runs a c2c over all but its last dim
 * first (its input for the last step is that c2c's output, laid out by the same rule).
 * A plain meta tensor takes the meta functions' other branch (device_hint() says "cuda" for
 * it): cuFFT's staged transforms of at most 3 dims, unsorted dims on the "optimized path",
 * a contiguous clone before c2r, a contiguous two-sided r2c; a CPU fake tensor the MKL one.
 *
 * The dtype checks differ by key, as in PyTorch: the C++ kernels say "Only supports
 * floating-point dtypes, but found: Long", the Python meta functions' bare torch._check says
 * "Expected cond to be True, but got False. ...". Where PyTorch's kernels fail with internal
 * asserts or Python IndexErrors (a dim out of range, no dims), cfx gives its own message:
 * these ops are called by the fft_* front-ends with dims already wrapped. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/fft.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"

static const char *const META_CHECK = "Expected cond to be True, but got False. (Could this error message be improved? "
                                      "If so, please report an enhancement request to PyTorch.)";

double cfx_fft_scale(int64_t normalization, int64_t n)
{
    if (normalization == CFX_FFT_NORM_BY_ROOT_N)
        return 1.0 / sqrt((double)n);
    if (normalization == CFX_FFT_NORM_BY_N)
        return 1.0 / (double)n;
    return 1.0; /* none, and any other code (fft_norm_mode's switch has no other case) */
}

/* _sort_dims: dims[0..n - exclude_last) stably sorted by stride, largest first. */
static void sort_dims(int *dims, int n, const int64_t *strides, bool exclude_last)
{
    int end = n - (exclude_last ? 1 : 0);
    for (int i = 1; i < end; i++) {
        int d = dims[i], j = i;
        for (; j > 0 && strides[dims[j - 1]] < strides[d]; j--)
            dims[j] = dims[j - 1];
        dims[j] = d;
    }
}

/* _exec_fft's output strides for an input of sizes/strides transformed over dims (sorted) into
 * out_sizes. */
static void exec_fft_strides(int ndim, const int64_t *strides, const int64_t *out_sizes, const int *dims, int ndims,
                             int64_t *out_strides)
{
    bool transformed[CFX_MAX_DIMS] = {false};
    for (int i = 0; i < ndims; i++)
        transformed[dims[i]] = true;
    int perm[CFX_MAX_DIMS], nb = 0;
    for (int d = 0; d < ndim; d++)
        if (!transformed[d])
            perm[nb++] = d;
    sort_dims(perm, nb, strides, false); /* the batch dims by the input's strides */
    for (int i = 0; i < ndims; i++)
        perm[nb + i] = dims[i];
    /* the batched output [batch, signal...] is contiguous: its strides */
    int64_t sig_strides[CFX_MAX_DIMS + 1], s = 1;
    for (int i = ndims - 1; i >= 0; i--) {
        sig_strides[i + 1] = s;
        s *= out_sizes[dims[i]] > 1 ? out_sizes[dims[i]] : 1;
    }
    sig_strides[0] = s;
    int64_t batch_numel = 1;
    for (int i = nb - 1; i >= 0; i--) {
        out_strides[perm[i]] = batch_numel * sig_strides[0];
        batch_numel *= out_sizes[perm[i]];
    }
    for (int i = 0; i < ndims; i++)
        out_strides[perm[nb + i]] = sig_strides[1 + i];
}

/* The reshape to [-1, signal sizes...] that _exec_fft makes fails for an empty signal. */
static bool check_signal(const char *op, const cfx_tensor *self, const int *dims, int ndims)
{
    int64_t shape[CFX_MAX_DIMS + 1] = {-1};
    bool empty = false;
    for (int i = 0; i < ndims; i++) {
        shape[i + 1] = self->sizes[dims[i]];
        empty = empty || shape[i + 1] == 0;
    }
    if (!empty)
        return true;
    cfx_geom_error_dims(op, "cannot reshape tensor of 0 elements into shape ", shape, ndims + 1,
                        " because the unspecified dimension size -1 can be any value and is ambiguous");
    return false;
}

/* The MKL kernels' layout (_fft_*_mkl; the meta functions' branch for a CPU fake tensor). */
static void mkl_layout(cfx_fft_plan *p, const cfx_tensor *self)
{
    int n = p->ndims, sorted[CFX_MAX_DIMS];
    memcpy(sorted, p->dims, (size_t)n * sizeof(int));
    if (p->kind != CFX_FFT_C2R) { /* r2c keeps its last dim last */
        sort_dims(sorted, n, self->strides, p->kind == CFX_FFT_R2C);
        exec_fft_strides(p->ndim, self->strides, p->out_sizes, sorted, n, p->out_strides);
        return;
    }
    /* c2r: the c2c over dims[:-1] first, then the last dim from that layout */
    int64_t mid[CFX_MAX_DIMS];
    const int64_t *in_strides = self->strides;
    if (n > 1) {
        sort_dims(sorted, n - 1, self->strides, false);
        exec_fft_strides(p->ndim, self->strides, self->sizes, sorted, n - 1, mid);
        in_strides = mid;
    }
    exec_fft_strides(p->ndim, in_strides, p->out_sizes, &p->dims[n - 1], 1, p->out_strides);
}

/* use_optimized_cufft_path */
static bool cufft_optimized(const int *dims, int n)
{
    return !(n > 3 || (n >= 2 && dims[0] == 0 && dims[1] == 1));
}

/* meta_fft_c2c's cuFFT loop: at most 3 dims per staged transform, the remaining dims
 * re-sorted by the strides of the previous stage's output. work: the input's strides in,
 * the result's out. */
static void cufft_c2c_stages(int ndim, int64_t *work, const int64_t *sizes, const int *dims, int n)
{
    int rem[CFX_MAX_DIMS];
    memcpy(rem, dims, (size_t)n * sizeof(int));
    while (n > 0) {
        sort_dims(rem, n, work, false);
        int k = n < 3 ? n : 3;
        int64_t out[CFX_MAX_DIMS];
        exec_fft_strides(ndim, work, sizes, rem + n - k, k, out);
        memcpy(work, out, (size_t)ndim * sizeof(int64_t));
        n -= k;
    }
}

/* The meta functions' branch for a plain meta tensor (device_hint() says "cuda"). */
static void cufft_layout(cfx_fft_plan *p, const cfx_tensor *self)
{
    int n = p->ndims, nd = p->ndim, last = p->dims[n - 1];
    int64_t contiguous[CFX_MAX_DIMS], work[CFX_MAX_DIMS];
    if (p->kind == CFX_FFT_C2C) {
        memcpy(work, self->strides, (size_t)nd * sizeof(int64_t));
        cufft_c2c_stages(nd, work, p->out_sizes, p->dims, n);
        memcpy(p->out_strides, work, (size_t)nd * sizeof(int64_t));
        return;
    }
    if (p->kind == CFX_FFT_C2R) {
        cfx_geom_contiguous_strides(self->sizes, nd, contiguous); /* self.clone(contiguous) */
        if (cufft_optimized(p->dims, n)) {
            exec_fft_strides(nd, contiguous, p->out_sizes, p->dims, n, p->out_strides);
            return;
        }
        memcpy(work, n > 1 ? self->strides : contiguous, (size_t)nd * sizeof(int64_t));
        if (n > 1)
            cufft_c2c_stages(nd, work, self->sizes, p->dims, n - 1);
        exec_fft_strides(nd, work, p->out_sizes, &last, 1, p->out_strides);
        return;
    }
    /* r2c */
    if (cufft_optimized(p->dims, n)) {
        exec_fft_strides(nd, self->strides, p->out_sizes, p->dims, n, p->out_strides);
        return;
    }
    int64_t onesided[CFX_MAX_DIMS];
    memcpy(onesided, self->sizes, (size_t)nd * sizeof(int64_t));
    onesided[last] = self->sizes[last] / 2 + 1;
    /* the r2c of the last dim, then c2c stages of at most 3 dims, each from the strides of the
     * previous output (the two buffers swap: the first swap brings a contiguous one) */
    exec_fft_strides(nd, self->strides, onesided, &last, 1, work);
    cufft_c2c_stages(nd, work, onesided, p->dims, n - 1);
    if (onesided[last] != p->out_sizes[last]) /* two-sided: working_tensor.resize_(out_sizes) */
        cfx_geom_contiguous_strides(p->out_sizes, nd, work);
    memcpy(p->out_strides, work, (size_t)nd * sizeof(int64_t));
}

bool cfx_fft_plan_make(cfx_fft_plan *p, const char *op, cfx_fft_kind kind, const cfx_tensor *self, cfx_int_list dim,
                       int64_t normalization, bool onesided, int64_t last_dim_size, bool meta)
{
    (void)normalization; /* any code is accepted (fft_norm_mode has no check) */
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->ndim = self->ndim;
    cfx_dtype dt = (cfx_dtype)self->dtype;
    bool ok_dtype = kind == CFX_FFT_R2C ? cfx_dtype_is_floating(dt) : cfx_dtype_is_complex(dt);
    if (!ok_dtype) {
        if (meta)
            cfx_error_set(CFX_ERR, op, "%s", META_CHECK);
        else
            cfx_error_set(CFX_ERR, op, "Only supports %s dtypes, but found: %s",
                          kind == CFX_FFT_R2C ? "floating-point" : "complex", cfx_dtype_scalar_name(dt));
        return false;
    }
    int64_t n = dim.len < 0 ? 0 : dim.len;
    if (n == 0 && kind != CFX_FFT_C2C) {
        cfx_error_set(CFX_ERR, op, "ArrayRef: attempted to access back() of empty list");
        return false;
    }
    if (n > self->ndim) {
        cfx_error_set(CFX_ERR, op, "%s: %lld dims given for a %d-d tensor", op, (long long)n, self->ndim);
        return false;
    }
    bool seen[CFX_MAX_DIMS] = {false};
    for (int64_t i = 0; i < n; i++) {
        int64_t d = dim.data[i];
        if (d < 0 || d >= self->ndim || seen[d]) {
            cfx_error_set(CFX_ERR, op,
                          "%s: dim %lld is %s for a %d-d tensor (the dims of the internal FFT ops are wrapped and "
                          "distinct, as torch.fft's functions pass them)",
                          op, (long long)d, d >= 0 && d < self->ndim ? "repeated" : "out of range", self->ndim);
            return false;
        }
        seen[d] = true;
        p->dims[i] = (int)d;
    }
    p->ndims = (int)n;
    memcpy(p->out_sizes, self->sizes, (size_t)self->ndim * sizeof(int64_t));
    if (kind == CFX_FFT_C2C && n == 0) { /* self.clone() */
        p->clone = true;
        p->out_dtype = dt;
        cfx_geom_preserve_strides(self->sizes, self->strides, self->ndim, p->out_strides);
        return true;
    }
    int last = p->dims[n - 1];
    if (!check_signal(op, self, p->dims, p->ndims))
        return false;
    if (kind == CFX_FFT_C2R) {
        p->out_sizes[last] = last_dim_size;
        if (last_dim_size < 0) {
            char pre[96];
            snprintf(pre, sizeof pre, "Trying to create tensor with negative dimension %lld: ", (long long)last_dim_size);
            cfx_geom_error_dims(op, pre, p->out_sizes, self->ndim, "");
            return false;
        }
        int64_t in_last = self->sizes[last];
        if (!meta && (last_dim_size == 0 || (in_last != last_dim_size && in_last != last_dim_size / 2 + 1))) {
            /* the C++ kernel's assert; its meta function does not check */
            cfx_error_set(CFX_ERR, op,
                          "%s: the last dim has %lld complex entries, which is neither last_dim_size (%lld) nor "
                          "last_dim_size / 2 + 1",
                          op, (long long)in_last, (long long)last_dim_size);
            return false;
        }
    } else if (kind == CFX_FFT_R2C && onesided) {
        p->out_sizes[last] = self->sizes[last] / 2 + 1;
    }
    p->out_dtype = kind == CFX_FFT_R2C ? (cfx_dtype)cfx_dtype_to_complex(dt) : kind == CFX_FFT_C2R ? cfx_dtype_to_real(dt) : dt;
    /* device_hint(): a plain meta tensor takes the meta functions' cuFFT branch */
    if (meta && cfx_tensor_fake_device(self).type != CFX_DEVICE_CPU)
        cufft_layout(p, self);
    else
        mkl_layout(p, self);
    return true;
}
