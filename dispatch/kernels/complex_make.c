/* complex_make.c - aten::complex(real, imag) and aten::polar(abs, angle): a complex tensor
 * from two real ones.
 *
 * The CPU kernels are 2.13's CompositeExplicitAutograd ones (TensorFactories.cpp): an empty
 * complex result, then complex_out / polar_out, which check the dtypes (complex_check_dtype:
 * both float or both double, with its texts) and build a TensorIterator over the two inputs,
 * so the result is broadcast and laid out by the iterator. The Meta kernels are the Python
 * ones: _meta_registrations' meta_complex (its own texts, both inputs converted to their
 * complex dtypes, then elementwise_meta: promotion, _maybe_broadcast, the prim's layout), and
 * for polar its decomposition (torch._refs polar), which begins with torch.complex(abs,
 * angle) and so has the same answer. A float32 with a float64 input is refused on CPU and
 * promoted to complex128 on Meta, as in 2.13. */
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"

/* complex_check_dtype (TensorFactories.cpp) */
static bool check_dtype(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    cfx_dtype x = (cfx_dtype)a->dtype, y = (cfx_dtype)b->dtype;
    if (!cfx_dtype_is_floating(x) || !cfx_dtype_is_floating(y)) {
        cfx_error_set(CFX_ERR, op, "Expected both inputs to be Half, Float or Double tensors but got %s and %s",
                      cfx_dtype_scalar_name(x), cfx_dtype_scalar_name(y));
        return false;
    }
    if (x != y) {
        cfx_error_set(CFX_ERR, op, "Expected object of scalar type %s but got scalar type %s for second argument",
                      cfx_dtype_scalar_name(x), cfx_dtype_scalar_name(y));
        return false;
    }
    return true;
}

/* The element functions: out[i] = (a, b) as the real and imaginary parts, or polar's
 * (a cos b, a sin b), written as the two parts of the complex element (C11 6.2.5). */
#define MAKE_LOOP(NAME, R, RE, IM)                                                               \
    static void NAME(char **p, const int64_t *s, int64_t n, const void *ctx)                    \
    {                                                                                            \
        (void)ctx;                                                                               \
        for (int64_t i = 0; i < n; i++) {                                                        \
            R a = *(const R *)(p[1] + i * s[1]), b = *(const R *)(p[2] + i * s[2]);              \
            R *o = (R *)(p[0] + i * s[0]);                                                       \
            o[0] = RE;                                                                           \
            o[1] = IM;                                                                           \
        }                                                                                        \
    }
MAKE_LOOP(complex_f32, float, a, b)
MAKE_LOOP(complex_f64, double, a, b)
/* c10's polar: abs * cos(angle), abs * sin(angle) in the element type */
MAKE_LOOP(polar_f32, float, a * cosf(b), a * sinf(b))
MAKE_LOOP(polar_f64, double, a * cos(b), a * sin(b))

static cfx_tensor *make_cpu(const char *op, cfx_tensor *a, cfx_tensor *b, cfx_loop_fn f32, cfx_loop_fn f64)
{
    if (!check_dtype(op, a, b))
        return NULL;
    static const cfx_iter_config cfg = {.check_mem_overlap = true};
    const cfx_tensor *in[2] = {a, b};
    cfx_iter it;
    if (!cfx_iter_build(&it, &cfg, op, NULL, in, 2))
        return NULL;
    cfx_dtype dt = (cfx_dtype)cfx_dtype_to_complex((cfx_dtype)a->dtype);
    cfx_tensor *out = cfx_iter_new_output(&it, (int)dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return NULL;
    cfx_loop l;
    cfx_loop_init(&l, out, in, 2);
    cfx_loop_run(&l, a->dtype == CFX_FLOAT32 ? f32 : f64, NULL);
    return out;
}

cfx_tensor *cfx_kernel_complex(cfx_tensor *real, cfx_tensor *imag)
{
    return make_cpu("aten::complex", real, imag, complex_f32, complex_f64);
}

cfx_tensor *cfx_kernel_polar(cfx_tensor *abs, cfx_tensor *angle)
{
    return make_cpu("aten::polar", abs, angle, polar_f32, polar_f64);
}

/* meta_complex */
static cfx_tensor *make_meta(const char *op, const cfx_tensor *a, const cfx_tensor *b)
{
    const cfx_tensor *in[2] = {a, b};
    static const char *const names[2] = {"real", "imag"};
    cfx_tmeta m[2];
    cfx_tmeta *ops[2] = {&m[0], &m[1]};
    for (int i = 0; i < 2; i++) {
        if (!cfx_dtype_is_floating((cfx_dtype)in[i]->dtype)) {
            cfx_error_set(CFX_ERR, op, "%s must be floating point, got %s", names[i],
                          cfx_dtype_torch_name((cfx_dtype)in[i]->dtype));
            return NULL;
        }
        cfx_tmeta_of(&m[i], in[i]);
        cfx_prims_to(&m[i], (cfx_dtype)cfx_dtype_to_complex((cfx_dtype)in[i]->dtype));
    }
    cfx_dtype compute, result;
    cfx_prims_elementwise_dtypes((const cfx_tmeta *const *)ops, 2, NULL, 0, CFX_PROMOTE_DEFAULT, &compute, &result);
    for (int i = 0; i < 2; i++)
        cfx_prims_to(&m[i], result);
    if (!cfx_prims_maybe_broadcast(op, ops, 2))
        return NULL;
    cfx_tmeta out;
    if (!cfx_prims_elementwise(op, &out, (const cfx_tmeta *const *)ops, 2, 0, CFX_PROMOTE_DEFAULT))
        return NULL;
    return cfx_tmeta_new_tensor(&out);
}

cfx_tensor *cfx_meta_complex(cfx_tensor *real, cfx_tensor *imag) { return make_meta("aten::complex", real, imag); }

cfx_tensor *cfx_meta_polar(cfx_tensor *abs, cfx_tensor *angle) { return make_meta("aten::polar", abs, angle); }
