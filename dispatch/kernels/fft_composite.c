/* fft_composite.c - the CompositeImplicitAutograd front-ends torch.fft.fft, ifft, rfft and
 * irfft (aten::fft_fft, fft_ifft, fft_rfft, fft_irfft), decomposing through the dispatcher
 * as 2.13's SpectralOps.cpp does, so that make_fx records the same calls: the dtype promotion
 * (an integer input .to() float32, a real input of irfft .to() its complex dtype), the
 * resize to n (slice.Tensor when shorter, constant_pad_nd with the full pad list when longer),
 * the norm string mapped to a normalization code, then _fft_r2c / _fft_c2c / _fft_c2r.
 *
 * ifft of a real input is, as in 2.13, the conjugate view (Tensor.conj(): aten::_conj) of a
 * two-sided r2c. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/fft.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"

/* norm_from_string; -1 with the error recorded for an unknown mode */
static int norm_from_string(const char *op, cfx_value norm, bool forward)
{
    const char *s = norm.kind == CFX_V_STRING ? norm.u.s : NULL;
    if (!s || !strcmp(s, "backward"))
        return forward ? CFX_FFT_NORM_NONE : CFX_FFT_NORM_BY_N;
    if (!strcmp(s, "forward"))
        return forward ? CFX_FFT_NORM_BY_N : CFX_FFT_NORM_NONE;
    if (!strcmp(s, "ortho"))
        return CFX_FFT_NORM_BY_ROOT_N;
    cfx_error_set(CFX_ERR, op, "Invalid normalization mode: \"%s\"", s);
    return -1;
}

/* promote_tensor_fft: integers to float32, then (require_complex) to the complex dtype */
static cfx_tensor *promote(cfx_tensor *t, bool require_complex)
{
    cfx_dtype cur = (cfx_dtype)t->dtype, to = cur;
    if (!cfx_dtype_is_complex(cur)) {
        if (!cfx_dtype_is_floating(cur))
            to = CFX_FLOAT32; /* the default dtype */
        if (require_complex)
            to = (cfx_dtype)cfx_dtype_to_complex(to);
    }
    return to == cur ? t : cfx_to(t, to);
}

/* resize_fft_input for one dim */
static cfx_tensor *resize(cfx_tensor *x, int64_t dim, int64_t n)
{
    int64_t have = x->sizes[dim];
    if (have > n)
        return cfx_op_slice_Tensor(NULL, x, dim, cfx_int(0), cfx_int(n), 1);
    if (have == n)
        return x;
    int64_t pad[2 * CFX_MAX_DIMS] = {0};
    int np = 2 * x->ndim;
    pad[np - 2 * dim - 1] = n - have;
    return cfx_op_constant_pad_nd(NULL, x, cfx_ints(pad, np), cfx_int(0));
}

/* maybe_wrap_dim(dim, ndim, wrap_scalar=false) */
static bool wrap(const char *op, const cfx_tensor *x, int64_t dim, int64_t *d)
{
    if (x->ndim == 0) {
        cfx_error_set(CFX_ERR, op, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
        return false;
    }
    return cfx_geom_wrap_dim(dim, x->ndim, d, op);
}

/* n as given, or its default; at least 1 */
static bool points(const char *op, cfx_value n_opt, int64_t n_default, int64_t *n)
{
    *n = n_opt.kind == CFX_V_INT ? n_opt.u.i : n_default;
    if (*n >= 1)
        return true;
    cfx_error_set(CFX_ERR, op, "Invalid number of data points (%lld) specified", (long long)*n);
    return false;
}

static cfx_tensor *r2c(const char *name, const char *op, cfx_tensor *self, cfx_value n_opt, int64_t dim,
                       cfx_value norm, bool forward, bool onesided)
{
    if (cfx_dtype_is_complex((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, op, "%s expects a real input tensor, but got %s", name,
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype));
        return NULL;
    }
    cfx_tensor *x = promote(self, false);
    int64_t d, n;
    if (!x || !wrap(op, x, dim, &d) || !points(op, n_opt, x->sizes[d], &n))
        return NULL;
    if (n_opt.kind == CFX_V_INT && !(x = resize(x, d, n)))
        return NULL;
    int norm_code = norm_from_string(op, norm, forward);
    cfx_tensor *r = norm_code < 0 ? NULL : cfx__fft_r2c(x, cfx_ints(&d, 1), norm_code, onesided);
    return r && !forward ? cfx_conj(r) : r; /* an inverse transform: ret.conj(), a conjugate view */
}

static cfx_tensor *c2c(const char *op, cfx_tensor *self, cfx_value n_opt, int64_t dim, cfx_value norm,
                       bool forward)
{
    int64_t d, n;
    if (!wrap(op, self, dim, &d) || !points(op, n_opt, self->sizes[d], &n))
        return NULL;
    cfx_tensor *x = self;
    if (n_opt.kind == CFX_V_INT && !(x = resize(x, d, n)))
        return NULL;
    int norm_code = norm_from_string(op, norm, forward);
    return norm_code < 0 ? NULL : cfx__fft_c2c(x, cfx_ints(&d, 1), norm_code, forward);
}

cfx_tensor *cfx_composite_fft_fft(cfx_tensor *self, cfx_value n, int64_t dim, cfx_value norm)
{
    if (cfx_dtype_is_complex((cfx_dtype)self->dtype))
        return c2c("aten::fft_fft", self, n, dim, norm, true);
    return r2c("fft", "aten::fft_fft", self, n, dim, norm, true, false);
}

cfx_tensor *cfx_composite_fft_ifft(cfx_tensor *self, cfx_value n, int64_t dim, cfx_value norm)
{
    if (cfx_dtype_is_complex((cfx_dtype)self->dtype))
        return c2c("aten::fft_ifft", self, n, dim, norm, false);
    return r2c("ifft", "aten::fft_ifft", self, n, dim, norm, false, false);
}

cfx_tensor *cfx_composite_fft_rfft(cfx_tensor *self, cfx_value n, int64_t dim, cfx_value norm)
{
    return r2c("rfft", "aten::fft_rfft", self, n, dim, norm, true, true);
}

cfx_tensor *cfx_composite_fft_irfft(cfx_tensor *self, cfx_value n_opt, int64_t dim, cfx_value norm)
{
    const char *op = "aten::fft_irfft";
    cfx_tensor *x = promote(self, true);
    if (!x)
        return NULL;
    int64_t d, n;
    if (!wrap(op, x, dim, &d) || !points(op, n_opt, 2 * (x->sizes[d] - 1), &n))
        return NULL;
    if (n_opt.kind == CFX_V_INT && !(x = resize(x, d, n / 2 + 1)))
        return NULL;
    int norm_code = norm_from_string(op, norm, false);
    return norm_code < 0 ? NULL : cfx__fft_c2r(x, cfx_ints(&d, 1), norm_code, n);
}
