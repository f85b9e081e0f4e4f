/* random_tensor.c - the random ops whose parameters are tensors: bernoulli (p = self),
 * bernoulli.p, bernoulli_.Tensor and normal's Tensor_float, float_Tensor, Tensor_Tensor and
 * float_float overloads, as PyTorch 2.13 runs them.
 *
 * CPU, from ATen's native/Distributions.cpp and DistributionTemplates.h: bernoulli is
 * empty_like(self, contiguous).bernoulli_(self) and bernoulli.p empty_like(self,
 * contiguous).bernoulli_(p); bernoulli_.Tensor expands p to self and draws per element a
 * uniform of p's type (24 random bits for a float p, 53 for a double one) kept when below p.
 * normal(Tensor mean, float std) fills an empty_like(mean, contiguous) with N(0, std) and adds
 * mean; the std-tensor forms fill N(0, 1), multiply by std and add mean, so the values are
 * PyTorch's for a seeded generator.
 *
 * Meta: bernoulli and bernoulli.p are 2.13's Python meta functions (empty_like, contiguous;
 * nothing checked), bernoulli_.Tensor checks nothing; the normal overloads are
 * torch._refs.normal: the tensors promoted together, broadcast by _broadcast_shapes, checked
 * by prims.normal, and the result laid out as `std * samples + mean` lays it out. */
#include <math.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/generator_internal.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/random_internal.h"

/* ---- bernoulli_.Tensor ---------------------------------------------------------------------- */

typedef struct bern_ctx {
    cfx_generator *g;
    cfx_dtype self_dt, p_dt;
    bool bad_p; /* a float p outside [0, 1]: the distribution's constructor check failed */
} bern_ctx;

static void bernoulli_tensor_loop(char **ptr, const int64_t *strides, int64_t n, const void *ctx)
{
    bern_ctx *c = (bern_ctx *)ctx;
    char *o = ptr[0], *p = ptr[1];
    for (int64_t i = 0; i < n && !c->bad_p; i++, o += strides[0], p += strides[1]) {
        bool v;
        if (c->p_dt == CFX_FLOAT64) { /* bernoulli_distribution<double>: unchecked on this path */
            v = cfx_generator_next_uniform_d(c->g) < *(const double *)p;
        } else {
            float pv = *(const float *)p;
            if (!(pv >= 0 && pv <= 1)) {
                c->bad_p = true;
                break;
            }
            v = cfx_generator_next_uniform_f(c->g) < pv;
        }
        cfx_random_store_int(o, c->self_dt, v);
    }
}

cfx_tensor *cfx_cpu_bernoulli__Tensor(cfx_tensor *self, cfx_tensor *p, cfx_value generator)
{
    const char *op = "aten::bernoulli_.Tensor";
    cfx_dtype dt = (cfx_dtype)self->dtype;
    if (cfx_tensor_numel(self) == 0) {
        cfx_tensor_bump_version(self);
        return self;
    }
    if (!cfx_iter_check_no_internal_overlap(op, self))
        return NULL;
    if (dt == CFX_COMPLEX64 || dt == CFX_COMPLEX128) {
        cfx_kernel_not_implemented(op, "bernoulli_tensor_cpu_self_", dt);
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *pe = cfx_op_expand(NULL, p, (cfx_int_list){self->sizes, self->ndim}, false); /* expand_inplace */
    if (!pe)
        return cfx_scope_end(s), NULL;
    if (p->dtype != CFX_FLOAT64 && p->dtype != CFX_FLOAT32) {
        cfx_kernel_not_implemented(op, "bernoulli_tensor_cpu_p_", (cfx_dtype)p->dtype);
        return cfx_scope_end(s), NULL;
    }
    bern_ctx c = {cfx_generator_or_default(generator), dt, (cfx_dtype)p->dtype, false};
    const cfx_tensor *in[1] = {pe};
    cfx_loop l;
    cfx_loop_init(&l, self, in, 1);
    cfx_generator_lock(c.g);
    cfx_loop_run(&l, bernoulli_tensor_loop, &c);
    cfx_generator_unlock(c.g);
    cfx_scope_end(s);
    cfx_tensor_bump_version(self);
    if (c.bad_p) {
        cfx_error_set(CFX_ERR, op,
                      "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                      "improved?  If so, please report an enhancement request to PyTorch.)");
        return NULL;
    }
    return self;
}

cfx_tensor *cfx_meta_bernoulli__Tensor(cfx_tensor *self, cfx_tensor *p, cfx_value generator)
{
    (void)p, (void)generator;
    cfx_tensor_bump_version(self);
    return self;
}

/* ---- bernoulli, bernoulli.p ----------------------------------------------------------------- */

static cfx_tensor *empty_contiguous_like(cfx_tensor *self)
{
    return cfx_op_empty_like(NULL, self, cfx_none(), cfx_none(), cfx_none(), cfx_none(),
                             cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT));
}


cfx_tensor *cfx_kernel_bernoulli(cfx_tensor *self, cfx_value generator)
{
    cfx_tensor *r = empty_contiguous_like(self);
    return cfx_random_drop_on_error(r, r ? cfx_op_bernoulli__Tensor(NULL, r, self, generator) : NULL);
}

cfx_tensor *cfx_meta_bernoulli(cfx_tensor *self, cfx_value generator)
{
    (void)generator;
    return empty_contiguous_like(self);
}

cfx_tensor *cfx_kernel_bernoulli_p(cfx_tensor *self, double p, cfx_value generator)
{
    cfx_tensor *r = empty_contiguous_like(self);
    return cfx_random_drop_on_error(r, r ? cfx_op_bernoulli__float(NULL, r, p, generator) : NULL);
}

cfx_tensor *cfx_meta_bernoulli_p(cfx_tensor *self, double p, cfx_value generator)
{
    (void)p, (void)generator;
    return empty_contiguous_like(self);
}

/* ---- normal: CPU ---------------------------------------------------------------------------- */

/* CHECK_NORMAL_TENSOR_STD */
static bool std_tensor_ok(const char *op, const cfx_tensor *std)
{
    cfx_dtype dt = (cfx_dtype)std->dtype;
    if (dt == CFX_COMPLEX64 || dt == CFX_COMPLEX128) {
        cfx_error_set(CFX_ERR, op, "normal expects standard deviation to be non-complex");
        return false;
    }
    const cfx_tensor *c = cfx_cpu_contiguous(std);
    if (!c)
        return false;
    int64_t n = cfx_tensor_numel(c);
    const char *d = cfx_tensor_data(c);
    size_t es = cfx_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) { /* std.min().ge(0): a NaN fails too */
        const char *e = d + (size_t)i * es;
        double v = dt == CFX_FLOAT32 ? *(const float *)e : dt == CFX_FLOAT64 ? *(const double *)e
                                                                             : (double)cfx_load_int(e, 0, dt);
        if (!(v >= 0)) {
            cfx_error_set(CFX_ERR, op, "normal expects all elements of std >= 0.0");
            return false;
        }
    }
    return true;
}

/* output.normal_(0, std_scalar) then output.mul_(std_tensor) (when given) and add_(mean) */
static cfx_tensor *fill_scale_shift(const char *op, cfx_tensor *out, double std_scalar, cfx_tensor *std,
                                    cfx_tensor *mean, cfx_value generator)
{
    if (!out || !cfx_random_normal_fill(op, out, 0.0, std_scalar, generator))
        return cfx_random_drop_on_error(out, NULL);
    if (std && !cfx_op_mul__Tensor(NULL, out, std))
        return cfx_random_drop_on_error(out, NULL);
    return cfx_random_drop_on_error(out, cfx_op_add__Tensor(NULL, out, mean, cfx_int(1)));
}

cfx_tensor *cfx_cpu_normal_Tensor_float(cfx_tensor *mean, double std, cfx_value generator)
{
    const char *op = "aten::normal.Tensor_float";
    if (!cfx_random_check_std(op, std, false))
        return NULL;
    return fill_scale_shift(op, empty_contiguous_like(mean), std, NULL, mean, generator);
}

cfx_tensor *cfx_cpu_normal_float_Tensor(double mean, cfx_tensor *std, cfx_value generator)
{
    const char *op = "aten::normal.float_Tensor";
    if (!std_tensor_ok(op, std))
        return NULL;
    cfx_tensor *out = empty_contiguous_like(std);
    if (!out)
        return NULL;
    /* mean_tensor = at::full({}, mean, output.options()) */
    cfx_tensor *m = cfx_op_full(NULL, CFX_INTS_EMPTY, cfx_double(mean), cfx_dtype_value((cfx_dtype)out->dtype),
                                cfx_none(), cfx_device_value(out->device), cfx_none());
    cfx_tensor *r = m ? fill_scale_shift(op, out, 1.0, std, m, generator) : cfx_random_drop_on_error(out, NULL);
    cfx_kernel_discard(m);
    return r;
}

cfx_tensor *cfx_cpu_normal_Tensor_Tensor(cfx_tensor *mean, cfx_tensor *std, cfx_value generator)
{
    const char *op = "aten::normal.Tensor_Tensor";
    if (!std_tensor_ok(op, std))
        return NULL;
    int64_t shape[CFX_MAX_DIMS];
    int nd;
    if (!cfx_geom_broadcast(mean->sizes, mean->ndim, std->sizes, std->ndim, shape, &nd, op))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(shape, nd, (cfx_dtype)mean->dtype, mean->device);
    return fill_scale_shift(op, out, 1.0, std, mean, generator);
}

/* at::empty(size, options).normal_(mean, std) */
cfx_tensor *cfx_kernel_normal_float_float(double mean, double std, cfx_int_list size, cfx_value generator,
                                          cfx_value dtype, cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    cfx_tensor *r = cfx_op_empty_memory_format(NULL, size, dtype, layout, device, pin_memory, cfx_none());
    return cfx_random_drop_on_error(r, r ? cfx_op_normal_(NULL, r, mean, std, generator) : NULL);
}

/* ---- normal: meta (torch._refs.normal) -------------------------------------------------------- */

/* std * samples + mean over tmetas, samples contiguous in (shape, dt); std or mean NULL when a
 * number. Each tensor is first converted to dt (the type promotion wrapper). */
static cfx_tensor *ref_normal(const char *op, const cfx_tensor *mean, const cfx_tensor *std, cfx_dtype dt)
{
    cfx_tmeta tm, ts, samples, prod, out;
    const cfx_tmeta *both[2];
    int n = 0;
    if (mean)
        cfx_tmeta_of(&tm, mean), cfx_prims_to(&tm, dt), both[n++] = &tm;
    if (std)
        cfx_tmeta_of(&ts, std), cfx_prims_to(&ts, dt), both[n++] = &ts;
    int64_t buf[CFX_MAX_DIMS];
    const int64_t *shape;
    int nd;
    unsigned differs;
    if (!cfx_prims_broadcast_shapes(op, both, n, buf, &shape, &nd, &differs))
        return NULL;
    if (!cfx_random_check_floating_ref(op, dt))
        return NULL;
    cfx_device dev = (mean ? mean : std)->device;
    cfx_prims_empty_permuted(&samples, shape, nd, NULL, dt, dev);
    if (std) { /* std * samples */
        cfx_tmeta *pair[2] = {&ts, &samples};
        if (!cfx_prims_maybe_broadcast(op, pair, 2))
            return NULL;
        const cfx_tmeta *args[2] = {&ts, &samples};
        if (!cfx_prims_elementwise(op, &prod, args, 2, 0, CFX_PROMOTE_DEFAULT))
            return NULL;
    } else {
        cfx_tmeta_copy(&prod, &samples);
    }
    if (mean) { /* + mean */
        cfx_tmeta *pair[2] = {&prod, &tm};
        if (!cfx_prims_maybe_broadcast(op, pair, 2))
            return NULL;
        const cfx_tmeta *args[2] = {&prod, &tm};
        if (!cfx_prims_elementwise(op, &out, args, 2, 0, CFX_PROMOTE_DEFAULT))
            return NULL;
    } else {
        cfx_tmeta_copy(&out, &prod);
    }
    return cfx_tmeta_new_tensor(&out);
}

/* the wrapper's result dtype over the tensor arguments */
static cfx_dtype promoted(const cfx_tensor *a, const cfx_tensor *b)
{
    cfx_tmeta ta, tb;
    const cfx_tmeta *ts[2] = {&ta, &tb};
    cfx_tmeta_of(&ta, a);
    int n = 1;
    if (b)
        cfx_tmeta_of(&tb, b), n = 2;
    cfx_dtype compute, result;
    cfx_prims_elementwise_dtypes(ts, n, NULL, 0, CFX_PROMOTE_DEFAULT, &compute, &result);
    return result;
}

cfx_tensor *cfx_meta_normal_Tensor_float(cfx_tensor *mean, double std, cfx_value generator)
{
    (void)generator;
    const char *op = "aten::normal.Tensor_float";
    if (!cfx_random_check_std(op, std, true))
        return NULL;
    return ref_normal(op, mean, NULL, promoted(mean, NULL));
}

cfx_tensor *cfx_meta_normal_float_Tensor(double mean, cfx_tensor *std, cfx_value generator)
{
    (void)mean, (void)generator;
    return ref_normal("aten::normal.float_Tensor", NULL, std, promoted(std, NULL));
}

cfx_tensor *cfx_meta_normal_Tensor_Tensor(cfx_tensor *mean, cfx_tensor *std, cfx_value generator)
{
    (void)generator;
    return ref_normal("aten::normal.Tensor_Tensor", mean, std, promoted(mean, std));
}

cfx_tensor *cfx_meta_normal_float_float(double mean, double std, cfx_int_list size, cfx_value generator,
                                        cfx_value dtype, cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    (void)mean, (void)generator, (void)layout, (void)pin_memory;
    const char *op = "aten::normal.float_float";
    if (!cfx_random_check_std(op, std, true))
        return NULL;
    cfx_dtype dt = dtype.kind == CFX_V_DTYPE ? dtype.u.dtype : CFX_FLOAT32;
    if (!cfx_random_check_floating_ref(op, dt))
        return NULL;
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    (void)cfx_geom_opt_device(device, &dev);
    return cfx_tensor_new(size.data, (int)size.len, dt, dev);
}
