/* fft.c - the Meta kernels of aten::_fft_r2c, _fft_c2r and _fft_c2c: PyTorch 2.13's
 * meta_fft_* (torch/_meta_registrations.py, the MKL branch a CPU build takes), which check
 * the dtype with a bare torch._check and lay the output out as the CPU kernel does
 * (fft_layout.c). */
#include "dispatch/kernels/fft.h"
#include "dispatch/kernels/kernels.h"

static cfx_tensor *empty_as_planned(const cfx_fft_plan *p, cfx_device dev)
{
    return cfx_tensor_new_strided(p->out_sizes, p->out_strides, p->ndim, p->out_dtype, dev);
}

cfx_tensor *cfx_meta__fft_r2c(cfx_tensor *self, cfx_int_list dim, int64_t normalization, bool onesided)
{
    cfx_fft_plan p;
    if (!cfx_fft_plan_make(&p, "aten::_fft_r2c", CFX_FFT_R2C, self, dim, normalization, onesided, 0, true))
        return NULL;
    return empty_as_planned(&p, self->device);
}

cfx_tensor *cfx_meta__fft_c2r(cfx_tensor *self, cfx_int_list dim, int64_t normalization, int64_t last_dim_size)
{
    cfx_fft_plan p;
    if (!cfx_fft_plan_make(&p, "aten::_fft_c2r", CFX_FFT_C2R, self, dim, normalization, false, last_dim_size, true))
        return NULL;
    return empty_as_planned(&p, self->device);
}

cfx_tensor *cfx_meta__fft_c2c(cfx_tensor *self, cfx_int_list dim, int64_t normalization, bool forward)
{
    (void)forward;
    cfx_fft_plan p;
    if (!cfx_fft_plan_make(&p, "aten::_fft_c2c", CFX_FFT_C2C, self, dim, normalization, false, 0, true))
        return NULL;
    return empty_as_planned(&p, self->device);
}
