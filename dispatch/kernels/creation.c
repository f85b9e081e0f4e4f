/* creation.c - the filled factories: zeros, ones, full, arange (3 overloads), rand, randn,
 * their *_like forms (zeros_like, ones_like, full_like, rand_like, randn_like) and new_zeros,
 * new_ones, new_full.
 *
 * As with empty (factory.c), the ones without a tensor argument have a BackendSelect kernel
 * that routes on the device argument; their kernel is CompositeExplicitAutograd, one C
 * function for every device, which 2.13 also registers (as Python) on Meta, so the same
 * function serves both keys here, with the few texts the Meta path words differently
 * ("zeros: Dimension size must be non-negative." is the CPU kernel's own). The *_like results
 * are laid out as empty_like's (preserve format keeps dense strides); new_* are contiguous.
 *
 * dtype inference follows the C++ factories: full takes bool/int64/float32 from its fill
 * value, arange int64 when start, end and step are all integral numbers, else float32.
 * arange sizes int64 ranges in integer arithmetic and every other dtype in double
 * (ceil((end - start) / step)), and computes values in the accumulate type (double for the
 * floating dtypes, int64 for the integral ones, from the truncated start and step), so
 * arange(-1.5, 2.5, 0.5, dtype=int32) is eight -1s as in PyTorch.
 *
 * rand and randn draw from a per-thread xorshift64* generator (fixed seed): real uniform and
 * normal (Box-Muller) samples, but not PyTorch's mt19937 stream, so no golden compares their
 * values. They carry the nondeterministic_seeded tag; the Generator overloads are not here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/factory.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/structured.h"

typedef enum fill_kind { FILL_VALUE, FILL_UNIFORM, FILL_NORMAL } fill_kind;

static _Thread_local uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* [0, 1) with the mantissa bits of dt (24 for float32, 53 for float64) */
static double uniform(cfx_dtype dt)
{
    return dt == CFX_FLOAT32 ? (double)(next_u64() >> 40) * 0x1p-24 : (double)(next_u64() >> 11) * 0x1p-53;
}

static double normal(cfx_dtype dt)
{
    double u1 = 1.0 - uniform(CFX_FLOAT64), u2 = uniform(CFX_FLOAT64);
    double r = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return dt == CFX_FLOAT32 ? (double)(float)r : r;
}

/* Fills the fresh (dense) CPU tensor t element by element in storage order. */
static void fill(cfx_tensor *t, fill_kind kind, cfx_value v)
{
    if (t->device.type != CFX_DEVICE_CPU)
        return;
    int64_t n = cfx_tensor_numel(t);
    void *p = cfx_tensor_data(t);
    cfx_dtype dt = (cfx_dtype)t->dtype;
    double d = kind == FILL_VALUE ? cfx_scalar_to_double(v) : 0;
    int64_t i64 = kind == FILL_VALUE ? cfx_scalar_to_int64(v) : 0;
    for (int64_t j = 0; j < n; j++) {
        double x = kind == FILL_UNIFORM ? uniform(dt) : kind == FILL_NORMAL ? normal(dt) : d;
        switch (dt) {
        case CFX_FLOAT32: ((float *)p)[j] = (float)x; break;
        case CFX_FLOAT64: ((double *)p)[j] = x; break;
        case CFX_INT64: ((int64_t *)p)[j] = i64; break;
        case CFX_INT32: ((int32_t *)p)[j] = (int32_t)i64; break;
        case CFX_BOOL: ((bool *)p)[j] = v.kind == CFX_V_DOUBLE ? d != 0 : i64 != 0; break;
        }
    }
}

/* The random kernels refuse integral dtypes on CPU (ATen's dispatch macros) and, for randn,
 * on meta (the reference). */
static bool random_dtype_ok(const char *op, fill_kind kind, cfx_dtype dt, cfx_device_type dev)
{
    if (cfx_dtype_is_floating(dt) || kind == FILL_VALUE)
        return true;
    if (dev == CFX_DEVICE_CPU) {
        cfx_error_set(CFX_ERR, op, "\"%s\" not implemented for '%s'",
                      kind == FILL_UNIFORM ? "check_uniform_bounds" : "normal_kernel_cpu", cfx_dtype_scalar_name(dt));
        return false;
    }
    if (kind == FILL_NORMAL) {
        cfx_error_set(CFX_ERR, op, "expected a floating-point or complex dtype, but got dtype=%s",
                      cfx_dtype_torch_name(dt));
        return false;
    }
    return true;
}

/* A factory of size on the options' device, filled. */
static cfx_tensor *factory(const char *op, cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                           cfx_value pin_memory, bool has_default, cfx_dtype default_dtype, fill_kind kind, cfx_value v)
{
    cfx_factory_options o;
    if (!cfx_factory_parse(op, dtype, layout, device, pin_memory, cfx_none(), &o))
        return NULL;
    cfx_dtype dt = o.has_dtype ? o.dtype : has_default ? default_dtype : o.dtype;
    bool meta = o.device.type == CFX_DEVICE_META;
    if (!meta && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, cfx_factory_pinned_error());
        return NULL;
    }
    if (meta && o.pinned && kind == FILL_NORMAL) {
        cfx_error_set(CFX_ERR, op, "PrimTorch does not support pinned memory");
        return NULL;
    }
    for (int64_t i = 0; i < size.len; i++)
        if (size.data[i] < 0 && !meta && kind == FILL_VALUE && v.kind == CFX_V_NONE) {
            cfx_error_set(CFX_ERR, op, "zeros: Dimension size must be non-negative.");
            return NULL;
        } else if (size.data[i] < 0 && meta && kind == FILL_NORMAL) {
            cfx_error_set(CFX_ERR, op, "Expected cond to be True, but got False. (Could this error message be "
                                       "improved? If so, please report an enhancement request to PyTorch.)");
            return NULL;
        }
    if (!cfx_factory_sizes_ok(op, size) || !random_dtype_ok(op, kind, dt, o.device.type))
        return NULL;
    cfx_tensor *t = cfx_tensor_new(size.data, (int)size.len, dt, cfx_device_make(o.device.type));
    if (t)
        fill(t, kind, v.kind == CFX_V_NONE ? cfx_int(0) : v);
    return t;
}

/* zeros is the one factory whose fill is None here: its CPU kernel has its own size text */
cfx_tensor *cfx_kernel_zeros(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                             cfx_value pin_memory)
{
    return factory("aten::zeros", size, dtype, layout, device, pin_memory, false, CFX_FLOAT32, FILL_VALUE, cfx_none());
}

cfx_tensor *cfx_kernel_ones(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                            cfx_value pin_memory)
{
    return factory("aten::ones", size, dtype, layout, device, pin_memory, false, CFX_FLOAT32, FILL_VALUE, cfx_int(1));
}

/* full's dtype from its fill value: bool, int64, or the default float32 */
static cfx_dtype scalar_dtype(cfx_value v)
{
    return v.kind == CFX_V_BOOL ? CFX_BOOL : v.kind == CFX_V_INT ? CFX_INT64 : CFX_FLOAT32;
}

cfx_tensor *cfx_kernel_full(cfx_int_list size, cfx_value fill_value, cfx_value dtype, cfx_value layout,
                            cfx_value device, cfx_value pin_memory)
{
    return factory("aten::full", size, dtype, layout, device, pin_memory, true, scalar_dtype(fill_value), FILL_VALUE,
                   fill_value);
}

cfx_tensor *cfx_kernel_rand(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                            cfx_value pin_memory)
{
    return factory("aten::rand", size, dtype, layout, device, pin_memory, false, CFX_FLOAT32, FILL_UNIFORM, cfx_none());
}

cfx_tensor *cfx_kernel_randn(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                             cfx_value pin_memory)
{
    return factory("aten::randn", size, dtype, layout, device, pin_memory, false, CFX_FLOAT32, FILL_NORMAL, cfx_none());
}

/* ---- arange ---------------------------------------------------------------------------------- */

static bool integral_number(cfx_value v) { return v.kind == CFX_V_INT || v.kind == CFX_V_BOOL; }

static cfx_tensor *arange(const char *op, cfx_value start, cfx_value end, cfx_value step, cfx_value dtype,
                          cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    cfx_factory_options o;
    if (!cfx_factory_parse(op, dtype, layout, device, pin_memory, cfx_none(), &o))
        return NULL;
    cfx_dtype dt = o.has_dtype ? o.dtype
                   : integral_number(start) && integral_number(end) && integral_number(step) ? CFX_INT64
                                                                                              : CFX_FLOAT32;
    bool meta = o.device.type == CFX_DEVICE_META;
    if (!meta && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, cfx_factory_pinned_error());
        return NULL;
    }
    /* ATen checks and sizes an int64 range in (truncated) integers, any other in double; the
     * reference checks the numbers as given and sizes in integers when the dtype is int64 or
     * all three are integral, then its iota refuses a step that truncates to 0 */
    bool integer_args = integral_number(start) && integral_number(end) && integral_number(step);
    bool int_checks = !meta && dt == CFX_INT64;
    bool int_length = dt == CFX_INT64 || (meta && integer_args);
    double ds = cfx_scalar_to_double(start), de = cfx_scalar_to_double(end), dst = cfx_scalar_to_double(step);
    int64_t is = cfx_scalar_to_int64(start), ie = cfx_scalar_to_int64(end), ist = cfx_scalar_to_int64(step);
    /* NaN and infinite numbers (found by fuzz/fuzz_op_call.c), as PyTorch 2.13 answers them for
     * any dtype: a NaN step is "nonzero", a non-finite bound an unsupported range, and for int64
     * a number past int64 (an infinite step) fails Scalar::to<int64_t> after the sign check.
     * The meta reference refuses a non-finite step first and lets a NaN bound reach the sign
     * check; its int64 length past int64 (a pybind cast error there) is the CPU text here. */
    if (meta && !isfinite(dst)) {
        cfx_error_set(CFX_ERR, op, "step must be finite but got %s", isnan(dst) ? "nan" : dst > 0 ? "inf" : "-inf");
        return NULL;
    }
    if (isnan(dst) || (int_checks ? ist == 0 : dst == 0)) {
        cfx_error_set(CFX_ERR, op, "step must be nonzero");
        return NULL;
    }
    if (meta ? isinf(ds) || isinf(de) : !isfinite(ds) || !isfinite(de)) {
        cfx_error_set(CFX_ERR, op, "unsupported range: %g -> %g", ds, de); /* C++ ostream's default format */
        return NULL;
    }
    bool in_int64 = fabs(ds) < 9223372036854775808.0 && fabs(de) < 9223372036854775808.0 &&
                    fabs(dst) < 9223372036854775808.0;
    bool ok_sign = int_checks && in_int64 ? (ist > 0 && ie >= is) || (ist < 0 && ie <= is)
                                          : (dst > 0 && de >= ds) || (dst < 0 && de <= ds);
    if (!ok_sign) {
        cfx_error_set(CFX_ERR, op, "upper bound and lower bound inconsistent with step sign");
        return NULL;
    }
    if (int_length && !in_int64) {
        cfx_error_set(CFX_ERR, op, "value cannot be converted to type int64_t without overflow");
        return NULL;
    }
    int64_t n;
    if (int_length) {
        if (ist == 0) {
            cfx_error_set(CFX_ERR, op, "step must be nonzero");
            return NULL;
        }
        int64_t sgn = (ist > 0) - (ist < 0);
        n = (ie - is + ist - sgn) / ist;
    } else {
        double size_d = ceil((de - ds) / dst);
        if (!(size_d >= 0 && size_d <= 9223372036854775807.0)) {
            cfx_error_set(CFX_ERR, op, "invalid size, possible overflow?");
            return NULL;
        }
        n = (int64_t)size_d;
    }
    if (meta && !cfx_dtype_is_floating(dt) && ist == 0) {
        cfx_error_set(CFX_ERR, op, "step must be nonzero");
        return NULL;
    }
    cfx_tensor *t = cfx_tensor_new(&n, 1, dt, cfx_device_make(o.device.type));
    if (!t || meta)
        return t;
    void *p = cfx_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        double x = ds + (double)i * dst;
        int64_t k = is + i * ist;
        switch (dt) {
        case CFX_FLOAT32: ((float *)p)[i] = (float)x; break;
        case CFX_FLOAT64: ((double *)p)[i] = x; break;
        case CFX_INT64: ((int64_t *)p)[i] = k; break;
        case CFX_INT32: ((int32_t *)p)[i] = (int32_t)k; break;
        case CFX_BOOL: ((bool *)p)[i] = k != 0; break;
        }
    }
    return t;
}

cfx_tensor *cfx_kernel_arange(cfx_value end, cfx_value dtype, cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    return arange("aten::arange", cfx_int(0), end, cfx_int(1), dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_kernel_arange_start(cfx_value start, cfx_value end, cfx_value dtype, cfx_value layout, cfx_value device,
                                    cfx_value pin_memory)
{
    return arange("aten::arange.start", start, end, cfx_int(1), dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_kernel_arange_start_step(cfx_value start, cfx_value end, cfx_value step, cfx_value dtype,
                                         cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    return arange("aten::arange.start_step", start, end, step, dtype, layout, device, pin_memory);
}

/* ---- the *_like ops and new_* ------------------------------------------------------------------ */

static cfx_tensor *like(const char *op, cfx_tensor *self, fill_kind kind, cfx_value v, cfx_value dtype,
                        cfx_value layout, cfx_value device, cfx_value pin_memory, cfx_value memory_format)
{
    cfx_factory_options o;
    if (!cfx_factory_parse(op, dtype, layout, device, pin_memory, memory_format, &o))
        return NULL;
    cfx_dtype dt = o.has_dtype ? o.dtype : (cfx_dtype)self->dtype;
    cfx_device_type dev = (cfx_device_type)(o.has_device ? o.device : self->device).type;
    if (dev == CFX_DEVICE_CPU && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, cfx_factory_pinned_error());
        return NULL;
    }
    int64_t strides[CFX_MAX_DIMS];
    if (!cfx_factory_like_strides(op, self, o.has_memory_format, o.memory_format, strides) ||
        !random_dtype_ok(op, kind, dt, dev))
        return NULL;
    cfx_tensor *t = cfx_tensor_new_strided(self->sizes, strides, self->ndim, dt, cfx_device_make(dev));
    if (t)
        fill(t, kind, v);
    return t;
}

cfx_tensor *cfx_kernel_zeros_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                  cfx_value pin_memory, cfx_value memory_format)
{
    return like("aten::zeros_like", self, FILL_VALUE, cfx_int(0), dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_meta_zeros_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                cfx_value pin_memory, cfx_value memory_format)
{
    return cfx_kernel_zeros_like(self, dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_kernel_ones_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                 cfx_value pin_memory, cfx_value memory_format)
{
    return like("aten::ones_like", self, FILL_VALUE, cfx_int(1), dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_meta_ones_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                               cfx_value pin_memory, cfx_value memory_format)
{
    return cfx_kernel_ones_like(self, dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_kernel_full_like(cfx_tensor *self, cfx_value fill_value, cfx_value dtype, cfx_value layout,
                                 cfx_value device, cfx_value pin_memory, cfx_value memory_format)
{
    return like("aten::full_like", self, FILL_VALUE, fill_value, dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_kernel_rand_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                 cfx_value pin_memory, cfx_value memory_format)
{
    return like("aten::rand_like", self, FILL_UNIFORM, cfx_none(), dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_kernel_randn_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                  cfx_value pin_memory, cfx_value memory_format)
{
    return like("aten::randn_like", self, FILL_NORMAL, cfx_none(), dtype, layout, device, pin_memory, memory_format);
}

static cfx_tensor *new_filled(const char *op, cfx_tensor *self, cfx_int_list size, cfx_value v, cfx_value dtype,
                              cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    cfx_factory_options o;
    if (!cfx_factory_parse(op, dtype, layout, device, pin_memory, cfx_none(), &o))
        return NULL;
    cfx_dtype dt = o.has_dtype ? o.dtype : (cfx_dtype)self->dtype;
    cfx_device_type dev = (cfx_device_type)(o.has_device ? o.device : self->device).type;
    if (dev == CFX_DEVICE_CPU && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, cfx_factory_pinned_error());
        return NULL;
    }
    if (!cfx_factory_sizes_ok(op, size))
        return NULL;
    cfx_tensor *t = cfx_tensor_new(size.data, (int)size.len, dt, cfx_device_make(dev));
    if (t)
        fill(t, FILL_VALUE, v);
    return t;
}

cfx_tensor *cfx_kernel_new_zeros(cfx_tensor *self, cfx_int_list size, cfx_value dtype, cfx_value layout,
                                 cfx_value device, cfx_value pin_memory)
{
    return new_filled("aten::new_zeros", self, size, cfx_int(0), dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_kernel_new_ones(cfx_tensor *self, cfx_int_list size, cfx_value dtype, cfx_value layout,
                                cfx_value device, cfx_value pin_memory)
{
    return new_filled("aten::new_ones", self, size, cfx_int(1), dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_kernel_new_full(cfx_tensor *self, cfx_int_list size, cfx_value fill_value, cfx_value dtype,
                                cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    return new_filled("aten::new_full", self, size, fill_value, dtype, layout, device, pin_memory);
}

/* ---- BackendSelect: the device argument picks the backend (factory.c's rule) ----------------- */

cfx_tensor *cfx_backend_select_zeros(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                                     cfx_value pin_memory)
{
    return cfx_op_zeros_redispatch(cfx_factory_backend(device), size, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_ones(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                                    cfx_value pin_memory)
{
    return cfx_op_ones_redispatch(cfx_factory_backend(device), size, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_full(cfx_int_list size, cfx_value fill_value, cfx_value dtype, cfx_value layout,
                                    cfx_value device, cfx_value pin_memory)
{
    return cfx_op_full_redispatch(cfx_factory_backend(device), size, fill_value, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_rand(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                                    cfx_value pin_memory)
{
    return cfx_op_rand_redispatch(cfx_factory_backend(device), size, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_randn(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                                     cfx_value pin_memory)
{
    return cfx_op_randn_redispatch(cfx_factory_backend(device), size, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_arange(cfx_value end, cfx_value dtype, cfx_value layout, cfx_value device,
                                      cfx_value pin_memory)
{
    return cfx_op_arange_redispatch(cfx_factory_backend(device), end, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_arange_start(cfx_value start, cfx_value end, cfx_value dtype, cfx_value layout,
                                            cfx_value device, cfx_value pin_memory)
{
    return cfx_op_arange_start_redispatch(cfx_factory_backend(device), start, end, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_backend_select_arange_start_step(cfx_value start, cfx_value end, cfx_value step, cfx_value dtype,
                                                 cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    return cfx_op_arange_start_step_redispatch(cfx_factory_backend(device), start, end, step, dtype, layout, device,
                                               pin_memory);
}
