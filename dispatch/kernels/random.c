/* random.c - the in-place samplers (uniform_, normal_, exponential_, log_normal_, cauchy_,
 * geometric_, random_ in its three overloads) and their functional forms, as PyTorch 2.13 runs
 * them on CPU and on meta tensors.
 *
 * CPU: each kernel makes the checks of ATen's templates (native/DistributionTemplates.h) in
 * their order, then walks self in TensorIterator's order (cfx_loop: innermost stride first)
 * holding its generator's lock, drawing one element at a time as the templates of
 * native/cpu/DistributionTemplates.h do with core/DistributionsHelper.h's distributions, in the
 * same types: uniform in the tensor's type from 24 (float) or 53 (double) random bits, the
 * others in double and cast. So a seeded generator gives PyTorch's values bit for bit; where
 * PyTorch's build fuses a multiply and an add (-mfma) the kernel calls fma. normal_ of 16 or
 * more contiguous elements is the vectorised normal_fill (dispatch/generator.c).
 *
 * Meta: 2.13 runs Python for most of these, and cfx replays what that Python checks: uniform_
 * is a decomposition that checks nothing (uniform keeps self's strides as they are); normal_
 * is torch._refs.normal (std, then the dtype); exponential, log_normal, cauchy and geometric
 * are references that refuse any generator ("generator is not supported in refs", so that
 * fake tracing one with a generator fails as in 2.13) and then check the dtype and the
 * parameter with Python's number formatting; random_'s meta kernels check nothing.
 *
 * The functional forms are CompositeExplicitAutograd in 2.13: clone(self), then the in-place
 * op on the clone (so make_fx records them as one node, `uniform.default`). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/generator_internal.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/pointwise.h"
#include "dispatch/kernels/random_internal.h"
#include "dispatch/value.h"

/* ---- storing a drawn value: static_cast<scalar_t> as x86-64 compiles it ------------------- */

void cfx_random_store_double(char *o, cfx_dtype dt, double v)
{
    switch (dt) {
    case CFX_FLOAT32: *(float *)o = (float)v; break;
    case CFX_FLOAT64: *(double *)o = v; break;
    case CFX_INT64: *(int64_t *)o = cfx_conv_f64_i64(v); break;
    case CFX_INT32: *(int32_t *)o = cfx_conv_f64_i32(v); break;
    case CFX_INT16: *(int16_t *)o = (int16_t)cfx_conv_f64_i32(v); break;
    case CFX_INT8: *(int8_t *)o = (int8_t)cfx_conv_f64_i32(v); break;
    case CFX_UINT8: *(uint8_t *)o = (uint8_t)cfx_conv_f64_i32(v); break;
    case CFX_BOOL: *(bool *)o = v != 0; break;
    case CFX_COMPLEX64: ((float *)o)[0] = (float)v, ((float *)o)[1] = 0; break;
    case CFX_COMPLEX128: ((double *)o)[0] = v, ((double *)o)[1] = 0; break;
    }
}

void cfx_random_store_int(char *o, cfx_dtype dt, int64_t k)
{
    switch (dt) {
    case CFX_FLOAT32: *(float *)o = (float)k; break;
    case CFX_FLOAT64: *(double *)o = (double)k; break;
    case CFX_INT64: *(int64_t *)o = k; break;
    case CFX_INT32: *(int32_t *)o = (int32_t)k; break;
    case CFX_INT16: *(int16_t *)o = (int16_t)k; break;
    case CFX_INT8: *(int8_t *)o = (int8_t)k; break;
    case CFX_UINT8: *(uint8_t *)o = (uint8_t)k; break;
    case CFX_BOOL: *(bool *)o = k != 0; break;
    case CFX_COMPLEX64: ((float *)o)[0] = (float)k, ((float *)o)[1] = 0; break;
    case CFX_COMPLEX128: ((double *)o)[0] = (double)k, ((double *)o)[1] = 0; break;
    }
}

/* ---- the sampling loop -------------------------------------------------------------------- */

typedef enum kind { K_UNIFORM, K_NORMAL, K_EXPONENTIAL, K_LOG_NORMAL, K_CAUCHY, K_GEOMETRIC, K_FROM_TO, K_FULL64,
                    K_RANDOM } kind;

typedef struct sampler {
    kind k;
    cfx_generator *g;
    cfx_dtype dt;
    double a, b;    /* from/to, mean/std, lambda, median/sigma, p */
    uint64_t range; /* random_: [base, base + range) */
    int64_t base;
} sampler;

/* uniform_int_distribution<T>: random() or random64() modulo the type's range */
static int64_t random_default(cfx_generator *g, cfx_dtype dt)
{
    switch (dt) {
    case CFX_BOOL: return cfx_generator_next32(g) & 1;
    case CFX_UINT8: return cfx_generator_next32(g) % 256u;
    case CFX_INT8: return cfx_generator_next32(g) % 128u;
    case CFX_INT16: return cfx_generator_next32(g) % 32768u;
    case CFX_INT32: return cfx_generator_next32(g) % (UINT32_C(1) << 31);
    case CFX_FLOAT32: return cfx_generator_next32(g) % ((UINT64_C(1) << 24) + 1);
    case CFX_FLOAT64: return (int64_t)(cfx_generator_next64(g) % ((UINT64_C(1) << 53) + 1));
    default: return (int64_t)(cfx_generator_next64(g) % (UINT64_C(1) << 63)); /* int64 */
    }
}

static void sample_loop(char **ptr, const int64_t *strides, int64_t n, const void *ctx)
{
    const sampler *s = ctx;
    cfx_generator *g = s->g;
    char *o = ptr[0];
    /* uniform_real<float> / <double> with from and to in the tensor's type */
    float ff = (float)s->a, ft = (float)s->b;
    /* uniform_int_from_to_distribution: a 64-bit draw from a range of 2^28 up, for every dtype
     * ("allow approx 5% skew in uniform int generation using %"; measured against the wheel:
     * randint(0, 2**28) and randint(0, 2**28 - 1)) */
    bool wide = s->range >= (UINT64_C(1) << 28);
    for (int64_t i = 0; i < n; i++, o += strides[0]) {
        switch (s->k) {
        case K_UNIFORM:
            if (s->dt == CFX_FLOAT32)
                *(float *)o = fmaf(cfx_generator_next_uniform_f(g), ft - ff, ff);
            else
                *(double *)o = fma(cfx_generator_next_uniform_d(g), s->b - s->a, s->a);
            break;
        case K_NORMAL: cfx_random_store_double(o, s->dt, cfx_generator_next_normal(g, s->a, s->b)); break;
        case K_EXPONENTIAL: /* transformation::exponential (CPU): -1 / lambda * log(1 - u) */
            cfx_random_store_double(o, s->dt, -1.0 / s->a * log(1.0 - cfx_generator_next_uniform_d(g)));
            break;
        case K_LOG_NORMAL: cfx_random_store_double(o, s->dt, exp(cfx_generator_next_normal(g, s->a, s->b))); break;
        case K_CAUCHY: {
            double u = cfx_generator_next_uniform_d(g);
            cfx_random_store_double(o, s->dt, fma(s->b, tan(CFX_PW_PI * (u - 0.5)), s->a));
            break;
        }
        case K_GEOMETRIC:
            cfx_random_store_double(o, s->dt, ceil(log(cfx_generator_next_uniform_d(g)) / log(1.0 - s->a)));
            break;
        case K_FROM_TO: {
            uint64_t v = wide ? cfx_generator_next64(g) : cfx_generator_next32(g);
            cfx_random_store_int(o, s->dt, (int64_t)(v % s->range + (uint64_t)s->base));
            break;
        }
        case K_FULL64: cfx_random_store_int(o, s->dt, (int64_t)cfx_generator_next64(g)); break;
        case K_RANDOM: cfx_random_store_int(o, s->dt, random_default(g, s->dt)); break;
        }
    }
}

/* TensorIterator::borrowing_nullary_op(self) and the serial kernel under the generator's lock */
static cfx_tensor *run(const char *op, cfx_tensor *self, sampler *s, cfx_value generator)
{
    if (!cfx_iter_check_no_internal_overlap(op, self))
        return NULL;
    s->g = cfx_generator_or_default(generator);
    s->dt = (cfx_dtype)self->dtype;
    cfx_loop l;
    cfx_loop_init(&l, self, NULL, 0);
    cfx_generator_lock(s->g);
    cfx_loop_run(&l, sample_loop, s);
    cfx_generator_unlock(s->g);
    cfx_tensor_bump_version(self);
    return self;
}

static cfx_tensor *done(cfx_tensor *self)
{
    cfx_tensor_bump_version(self);
    return self;
}

static bool dtype_floating(const char *op, const char *kernel, const cfx_tensor *self)
{
    if (cfx_dtype_is_floating((cfx_dtype)self->dtype))
        return true;
    cfx_kernel_not_implemented(op, kernel, (cfx_dtype)self->dtype);
    return false;
}

static bool is_complex(const cfx_tensor *t) { return cfx_dtype_is_complex((cfx_dtype)t->dtype); }

/* The functional forms: the in-place op's result on clone(self), which is dropped on error */
cfx_tensor *cfx_random_drop_on_error(cfx_tensor *r, cfx_tensor *filled)
{
    if (r && !filled) {
        cfx_kernel_discard(r);
        return NULL;
    }
    return r;
}

/* ---- uniform_ ------------------------------------------------------------------------------- */

static cfx_tensor *uniform_impl(cfx_tensor *self, double from, double to, cfx_value generator)
{
    const char *op = "aten::uniform_";
    if (is_complex(self)) { /* view_as_real: both parts drawn in storage order */
        if (cfx_tensor_numel(self) == 0)
            return done(self);
        cfx_tensor *re = cfx_op_view_as_real(NULL, self);
        bool ok = re && uniform_impl(re, from, to, generator);
        cfx_kernel_discard(re);
        return ok ? done(self) : NULL;
    }
    if (!dtype_floating(op, "check_uniform_bounds", self))
        return NULL;
    bool f32 = self->dtype == CFX_FLOAT32;
    const char *tm = cfx_dtype_type_meta_name((cfx_dtype)self->dtype);
    double max = f32 ? FLT_MAX : DBL_MAX;
    if (!(from >= -max && from <= max))
        return cfx_error_set(CFX_ERR, op, "from is out of bounds for %s", tm), NULL;
    if (!(to >= -max && to <= max))
        return cfx_error_set(CFX_ERR, op, "to is out of bounds for %s", tm), NULL;
    if (!(from <= to)) {
        cfx_error_set(CFX_ERR, op, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
        return NULL;
    }
    if (!(to - from <= max)) {
        cfx_error_set(CFX_ERR, op,
                      "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%g and from=%g which "
                      "result in to-from to exceed the limit",
                      cfx_dtype_scalar_name((cfx_dtype)self->dtype), to, from);
        return NULL;
    }
    if (cfx_tensor_numel(self) == 0)
        return done(self);
    sampler s = {.k = K_UNIFORM, .a = from, .b = to};
    return run(op, self, &s, generator);
}

cfx_tensor *cfx_cpu_uniform_(cfx_tensor *self, double from, double to, cfx_value generator)
{
    return uniform_impl(self, from, to, generator);
}

/* torch._decomp's uniform_: self.copy_(uniform(...)), which checks nothing */
cfx_tensor *cfx_meta_uniform_(cfx_tensor *self, double from, double to, cfx_value generator)
{
    (void)from, (void)to, (void)generator;
    return done(self);
}

/* ---- normal_ -------------------------------------------------------------------------------- */

/* "name=value" of a failed parameter check: C++'s ostream (%g) on CPU, Python's repr on meta */
static void param_error(const char *op, const char *head, double v, bool python)
{
    cfx_buf b = {0};
    cfx_buf_printf(&b, "%s", head);
    if (python)
        cfx_format_double_python(v, &b);
    else
        cfx_buf_printf(&b, "%g", v);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : head);
    cfx_free(msg);
}

bool cfx_random_check_std(const char *op, double std, bool python)
{
    if (std >= 0.0)
        return true;
    param_error(op, "normal expects std >= 0.0, but found std ", std, python);
    return false;
}

bool cfx_random_check_floating_ref(const char *op, cfx_dtype dt)
{
    if (cfx_dtype_is_floating(dt) || dt == CFX_COMPLEX64 || dt == CFX_COMPLEX128)
        return true;
    cfx_error_set(CFX_ERR, op, "expected a floating-point or complex dtype, but got dtype=%s", cfx_dtype_torch_name(dt));
    return false;
}

cfx_tensor *cfx_random_normal_fill(const char *op, cfx_tensor *self, double mean, double std, cfx_value generator)
{
    if (!cfx_random_check_std(op, std, false))
        return NULL;
    if (cfx_tensor_numel(self) == 0)
        return done(self);
    if (is_complex(self)) { /* the real and imaginary parts each get half the variance */
        cfx_tensor *re = cfx_op_view_as_real(NULL, self);
        bool ok = re && cfx_random_normal_fill(op, re, mean, std / sqrt(2.0), generator);
        cfx_kernel_discard(re);
        return ok ? done(self) : NULL;
    }
    if (!dtype_floating(op, "normal_kernel_cpu", self))
        return NULL;
    int64_t n = cfx_tensor_numel(self);
    if (n >= 16 && cfx_tensor_is_contiguous(self)) { /* normal_fill */
        cfx_generator_fill_normal(cfx_generator_or_default(generator), cfx_tensor_data(self), n,
                                  (cfx_dtype)self->dtype, true, mean, std);
        return done(self);
    }
    sampler s = {.k = K_NORMAL, .a = mean, .b = std};
    return run(op, self, &s, generator);
}

cfx_tensor *cfx_cpu_normal_(cfx_tensor *self, double mean, double std, cfx_value generator)
{
    return cfx_random_normal_fill("aten::normal_", self, mean, std, generator);
}

/* torch._refs.normal_: normal(mean, std, self.shape, out=self) */
cfx_tensor *cfx_meta_normal_(cfx_tensor *self, double mean, double std, cfx_value generator)
{
    (void)mean, (void)generator;
    const char *op = "aten::normal_";
    if (!cfx_random_check_std(op, std, true) || !cfx_random_check_floating_ref(op, (cfx_dtype)self->dtype))
        return NULL;
    return done(self);
}

/* ---- exponential_, log_normal_, cauchy_, geometric_ ------------------------------------------ */

static bool params_ok(kind k, const char *op, double a, double b, bool python)
{
    switch (k) {
    case K_EXPONENTIAL:
        if (!(a > 0.0))
            return param_error(op, "exponential_ expects lambda > 0.0, but found lambda=", a, python), false;
        return true;
    case K_LOG_NORMAL:
        if (!(b > 0.0))
            return param_error(op, "log_normal_ expects std > 0.0, but found std=", b, python), false;
        return true;
    case K_CAUCHY:
        if (!(b > 0.0))
            return param_error(op, "cauchy_ expects sigma > 0.0, but found sigma=", b, python), false;
        return true;
    case K_GEOMETRIC:
        if (!(a > 0 && a < 1))
            return param_error(op, "geometric_ expects p to be in (0, 1), but got p=", a, python), false;
        return true;
    default: return true;
    }
}

static cfx_tensor *cpu_sampler(kind k, const char *op, cfx_tensor *self, double a, double b, cfx_value generator)
{
    cfx_dtype dt = (cfx_dtype)self->dtype;
    if (!params_ok(k, op, a, b, false))
        return NULL;
    if (k == K_CAUCHY && !cfx_dtype_is_floating(dt)) { /* checked before the empty return */
        cfx_error_set(CFX_ERR, op,
                      "Cauchy distribution is a continuous probability distribution. dtype must be a floating point "
                      "but you specified %s",
                      cfx_dtype_type_meta_name(dt));
        return NULL;
    }
    if (cfx_tensor_numel(self) == 0)
        return done(self);
    if (!cfx_iter_check_no_internal_overlap(op, self))
        return NULL;
    if (k == K_EXPONENTIAL && !cfx_dtype_is_floating(dt)) {
        cfx_error_set(CFX_ERR, op,
                      "Exponential distribution is a continuous probability distribution. dtype must be a floating "
                      "point but you specified %s",
                      cfx_dtype_scalar_name(dt));
        return NULL;
    }
    if (k == K_LOG_NORMAL && !dtype_floating(op, "log_normal_cpu", self))
        return NULL;
    if (k == K_GEOMETRIC && (dt == CFX_BOOL || is_complex(self))) {
        cfx_kernel_not_implemented(op, "geometric_cpu", dt);
        return NULL;
    }
    sampler s = {.k = k, .a = a, .b = b};
    return run(op, self, &s, generator);
}

/* The reference's checks: no generator, the dtype, then the parameter (Python's texts). */
static bool ref_checks(kind k, const char *op, const cfx_tensor *self, double a, double b, cfx_value generator)
{
    if (generator.kind == CFX_V_GENERATOR) {
        cfx_error_set(CFX_ERR, op, "generator is not supported in refs");
        return false;
    }
    cfx_dtype dt = (cfx_dtype)self->dtype;
    const char *tn = cfx_dtype_torch_name(dt);
    bool floating = cfx_dtype_is_floating(dt);
    switch (k) {
    case K_EXPONENTIAL:
    case K_CAUCHY:
        if (!floating) {
            /* the reference's f-string continues its line with a backslash, keeping the next
             * line's indentation inside the text */
            cfx_error_set(CFX_ERR, op,
                          "%s distribution is a continuous probability distribution.         dtype must be a floating "
                          "point but you specified %s",
                          k == K_EXPONENTIAL ? "Exponential" : "Cauchy", tn);
            return false;
        }
        break;
    case K_LOG_NORMAL:
        if (!floating)
            return cfx_error_set(CFX_ERR, op, "log_normal not implemented for %s", tn), false;
        break;
    case K_GEOMETRIC:
        if (dt == CFX_BOOL || is_complex(self))
            return cfx_error_set(CFX_ERR, op, "geometric not implemented for %s", tn), false;
        break;
    default: break;
    }
    return params_ok(k, op, a, b, true);
}

#define SAMPLER_KERNELS(name, K, a_expr, b_expr, PARAMS, ...)                                                         \
    cfx_tensor *cfx_cpu_##name##_(cfx_tensor *self, PARAMS, cfx_value generator)                                       \
    {                                                                                                                  \
        return cpu_sampler(K, "aten::" #name "_", self, a_expr, b_expr, generator);                                   \
    }                                                                                                                  \
    cfx_tensor *cfx_meta_##name##_(cfx_tensor *self, PARAMS, cfx_value generator)                                      \
    {                                                                                                                  \
        return ref_checks(K, "aten::" #name "_", self, a_expr, b_expr, generator) ? done(self) : NULL;               \
    }                                                                                                                  \
    cfx_tensor *cfx_meta_##name(cfx_tensor *self, PARAMS, cfx_value generator)                                         \
    {                                                                                                                  \
        if (!ref_checks(K, "aten::" #name, self, a_expr, b_expr, generator))                                           \
            return NULL;                                                                                               \
        return cfx_op_empty_like(NULL, self, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());           \
    }                                                                                                                  \
    cfx_tensor *cfx_kernel_##name(cfx_tensor *self, PARAMS, cfx_value generator)                                       \
    {                                                                                                                  \
        cfx_tensor *r = cfx_op_clone(NULL, self, cfx_none());                                                          \
        return cfx_random_drop_on_error(r, r ? cfx_op_##name##_(NULL, r, __VA_ARGS__, generator) : NULL);            \
    }

#define P1(x) double x
#define P2(x, y) double x, double y
SAMPLER_KERNELS(exponential, K_EXPONENTIAL, lambd, 0.0, P1(lambd), lambd)
SAMPLER_KERNELS(log_normal, K_LOG_NORMAL, mean, std, P2(mean, std), mean, std)
SAMPLER_KERNELS(cauchy, K_CAUCHY, median, sigma, P2(median, sigma), median, sigma)
SAMPLER_KERNELS(geometric, K_GEOMETRIC, p, 0.0, P1(p), p)

/* ---- uniform, normal_functional ------------------------------------------------------------- */

cfx_tensor *cfx_kernel_uniform(cfx_tensor *self, double from, double to, cfx_value generator)
{
    cfx_tensor *r = cfx_op_clone(NULL, self, cfx_none());
    return cfx_random_drop_on_error(r, r ? cfx_op_uniform_(NULL, r, from, to, generator) : NULL);
}

/* torch._decomp's uniform: prims._uniform_helper(x.shape, stride=x.stride(), ...), self's
 * strides taken as they are (even a broadcast's zeros) */
cfx_tensor *cfx_meta_uniform(cfx_tensor *self, double from, double to, cfx_value generator)
{
    (void)from, (void)to, (void)generator;
    return cfx_tensor_new_strided(self->sizes, self->strides, self->ndim, (cfx_dtype)self->dtype, self->device);
}

cfx_tensor *cfx_kernel_normal_functional(cfx_tensor *self, double mean, double std, cfx_value generator)
{
    cfx_tensor *r = cfx_op_clone(NULL, self, cfx_none());
    return cfx_random_drop_on_error(r, r ? cfx_op_normal_(NULL, r, mean, std, generator) : NULL);
}

/* ---- random_ -------------------------------------------------------------------------------- */

static int digits_of(cfx_dtype dt) { return dt == CFX_FLOAT32 ? 24 : 53; }

/* static_cast<int64_t>(static_cast<scalar_t>(v)) */
static int64_t through_float(cfx_dtype dt, int64_t v)
{
    return cfx_conv_f64_i64(dt == CFX_FLOAT32 ? (double)(float)v : (double)v);
}

/* update_from / update_to: the nearest bounds the float type keeps within [from, to) */
static int64_t update_from(cfx_dtype dt, int64_t from)
{
    int64_t from_plus_1 = through_float(dt, (int64_t)((uint64_t)from + 1));
    if (from_plus_1 < from) {
        int64_t f = llabs(from + 1);
        int n = 0;
        while (f >>= 1)
            ++n;
        from = from_plus_1 + (INT64_C(1) << (n - digits_of(dt) + 1));
    }
    return from;
}

static int64_t update_to(cfx_dtype dt, int64_t to)
{
    int64_t to_minus_1 = through_float(dt, (int64_t)((uint64_t)to - 1));
    if (to_minus_1 >= to) {
        int64_t t = llabs(to - 1);
        int n = 0;
        while (t >>= 1)
            ++n;
        to = to_minus_1 - (INT64_C(1) << (n - digits_of(dt) + 1));
    }
    return to;
}

static void int_limits(cfx_dtype dt, int64_t *min, int64_t *max)
{
    switch (dt) {
    case CFX_BOOL: *min = 0, *max = 1; break;
    case CFX_UINT8: *min = 0, *max = UINT8_MAX; break;
    case CFX_INT8: *min = INT8_MIN, *max = INT8_MAX; break;
    case CFX_INT16: *min = INT16_MIN, *max = INT16_MAX; break;
    case CFX_INT32: *min = INT32_MIN, *max = INT32_MAX; break;
    default: *min = INT64_MIN, *max = INT64_MAX; break;
    }
}

/* check_from_to_in_range (its precision warnings for floats are not emitted: cfx has no
 * warning channel) */
static bool from_to_in_range(const char *op, int64_t from, int64_t to_inc, cfx_dtype dt)
{
    const char *tm = cfx_dtype_type_meta_name(dt);
    if (cfx_dtype_is_floating(dt)) {
        double max = dt == CFX_FLOAT32 ? FLT_MAX : DBL_MAX;
        if (!((double)from >= -max && (double)from <= max))
            return cfx_error_set(CFX_ERR, op, "from is out of bounds for %s", tm), false;
        if (!((double)to_inc >= -max && (double)to_inc <= max))
            return cfx_error_set(CFX_ERR, op, "to - 1 is out of bounds for %s", tm), false;
        return true;
    }
    if (cfx_dtype_is_complex(dt)) {
        cfx_error_set(CFX_ERR, op, "check_random_bounds handles only integral, floating-point and boolean types");
        return false;
    }
    int64_t min, max;
    int_limits(dt, &min, &max);
    if (!(from >= min && from <= max))
        return cfx_error_set(CFX_ERR, op, "from is out of bounds for %s", tm), false;
    if (!(to_inc >= min && to_inc <= max))
        return cfx_error_set(CFX_ERR, op, "to - 1 is out of bounds for %s", tm), false;
    return true;
}

/* random_from_to_impl */
static cfx_tensor *random_from_to(const char *op, cfx_tensor *self, int64_t from, bool has_to, int64_t to,
                                  cfx_value generator)
{
    cfx_dtype dt = (cfx_dtype)self->dtype;
    if (!cfx_iter_check_no_internal_overlap(op, self)) /* the iterator is built first */
        return NULL;
    bool floating = cfx_dtype_is_floating(dt);
    sampler s = {.k = K_FROM_TO};
    if (has_to) {
        if (!(from < to)) {
            cfx_error_set(CFX_ERR, op, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                          (long long)from, (long long)to);
            return NULL;
        }
        if (floating) {
            from = update_from(dt, from);
            to = update_to(dt, to);
            if (!(from < to)) {
                cfx_error_set(CFX_ERR, op,
                              "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                              "from=%lld >= to=%lld",
                              (long long)from, (long long)to);
                return NULL;
            }
        }
        if (!from_to_in_range(op, from, to - 1, dt))
            return NULL;
        if (cfx_tensor_numel(self) == 0)
            return done(self);
        s.range = (uint64_t)to - (uint64_t)from;
    } else if (from != INT64_MIN) {
        int64_t to_inc;
        if (floating) {
            to_inc = INT64_C(1) << digits_of(dt);
            from = update_from(dt, from);
            if (!(from < to_inc)) {
                cfx_error_set(CFX_ERR, op,
                              "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
                              "dtype, but got from=%lld > to_inc=%lld",
                              (long long)from, (long long)to_inc);
                return NULL;
            }
        } else if (!is_complex(self)) {
            int64_t min;
            int_limits(dt, &min, &to_inc);
        } else {
            cfx_error_set(CFX_ERR, op, "random_from_to_impl handles only integral, floating-point and boolean types");
            return NULL;
        }
        if (!from_to_in_range(op, from, to_inc, dt))
            return NULL;
        if (cfx_tensor_numel(self) == 0)
            return done(self);
        s.range = (uint64_t)to_inc - (uint64_t)from + 1;
    } else { /* [INT64_MIN, INT64_MAX]: the full 64-bit range */
        if (cfx_tensor_numel(self) == 0)
            return done(self);
        if (dt == CFX_BOOL || is_complex(self)) {
            cfx_kernel_not_implemented(op, "random_full_64_bits_range_kernel_cpu", dt);
            return NULL;
        }
        if (dt != CFX_INT64 && !floating) {
            cfx_error_set(CFX_ERR, op, "random_full_64_bits_range_kernel_cpu handles only int64, double, float and "
                                       "bfloat16");
            return NULL;
        }
        s.k = K_FULL64;
    }
    s.base = from;
    return run(op, self, &s, generator);
}

cfx_tensor *cfx_random_from_to_fill(cfx_tensor *self, uint64_t range, int64_t base, cfx_value generator)
{
    sampler s = {.k = K_FROM_TO, .range = range, .base = base};
    return run("aten::random_.from", self, &s, generator);
}

cfx_tensor *cfx_cpu_random__from(cfx_tensor *self, int64_t from, cfx_value to, cfx_value generator)
{
    bool has_to = to.kind == CFX_V_INT;
    return random_from_to("aten::random_.from", self, from, has_to, has_to ? to.u.i : 0, generator);
}

cfx_tensor *cfx_cpu_random__to(cfx_tensor *self, int64_t to, cfx_value generator)
{
    return random_from_to("aten::random_.to", self, 0, true, to, generator);
}

cfx_tensor *cfx_cpu_random_(cfx_tensor *self, cfx_value generator)
{
    const char *op = "aten::random_";
    if (cfx_tensor_numel(self) == 0)
        return done(self);
    if (is_complex(self)) {
        cfx_kernel_not_implemented(op, "random_kernel_cpu", (cfx_dtype)self->dtype);
        return NULL;
    }
    sampler s = {.k = K_RANDOM};
    return run(op, self, &s, generator);
}

/* random_'s meta kernels check nothing */
cfx_tensor *cfx_meta_random__from(cfx_tensor *self, int64_t from, cfx_value to, cfx_value generator)
{
    (void)from, (void)to, (void)generator;
    return done(self);
}

cfx_tensor *cfx_meta_random__to(cfx_tensor *self, int64_t to, cfx_value generator)
{
    (void)to, (void)generator;
    return done(self);
}

cfx_tensor *cfx_meta_random_(cfx_tensor *self, cfx_value generator)
{
    (void)generator;
    return done(self);
}

cfx_tensor *cfx_kernel_random_from(cfx_tensor *self, int64_t from, cfx_value to, cfx_value generator)
{
    cfx_tensor *r = cfx_op_clone(NULL, self, cfx_none());
    return cfx_random_drop_on_error(r, r ? cfx_op_random__from(NULL, r, from, to, generator) : NULL);
}

cfx_tensor *cfx_kernel_random_to(cfx_tensor *self, int64_t to, cfx_value generator)
{
    cfx_tensor *r = cfx_op_clone(NULL, self, cfx_none());
    return cfx_random_drop_on_error(r, r ? cfx_op_random__to(NULL, r, to, generator) : NULL);
}

cfx_tensor *cfx_kernel_random(cfx_tensor *self, cfx_value generator)
{
    cfx_tensor *r = cfx_op_clone(NULL, self, cfx_none());
    return cfx_random_drop_on_error(r, r ? cfx_op_random_(NULL, r, generator) : NULL);
}
