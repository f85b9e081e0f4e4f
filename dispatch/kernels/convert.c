/* convert.c - dtype conversion (_to_copy, to.dtype), scalar_tensor, where with numbers and
 * masked_fill: the ops models reach through Python numbers and masks.
 *
 * _to_copy is CompositeExplicitAutograd: an empty_like with the requested options, then a copy
 * (none on meta). Its BackendSelect kernel adds the requested device's backend to the key set,
 * so a meta `device` routes a CPU tensor's copy to meta. to.dtype is CompositeImplicitAutograd:
 * self itself when nothing changes, else _to_copy, which is what make_fx records.
 *
 * where.ScalarSelf/.ScalarOther/.Scalar decompose (CompositeImplicitAutograd) as 2.13's
 * TensorCompare.cpp does, in its order: the Scalar becomes scalar_tensor(s, dtype=result_type,
 * layout, device) and the tensor is converted with .to(result_type), then where.self.
 *
 * masked_fill.Scalar is expand_outplace(mask, self), a contiguous clone of the expanded self,
 * then masked_fill_ (the mask must be bool); its Meta kernel is the reference: where(mask,
 * value, self).contiguous(), laid out the same. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/keys_internal.h"
#include "dispatch/wrapped_internal.h"

/* ---- _to_copy, to.dtype ----------------------------------------------------------------------- */

cfx_tensor *cfx_kernel__to_copy(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                cfx_value pin_memory, bool non_blocking, cfx_value memory_format)
{
    (void)non_blocking;
    cfx_tensor *out = cfx_kernel_empty_like(self, dtype, layout, device, pin_memory, memory_format);
    if (out && out->device.type == CFX_DEVICE_CPU && self->device.type == CFX_DEVICE_CPU) {
        /* copy_'s TORCH_WARN_ONCE (ATen/native/Copy.cpp) */
        static _Atomic bool warned;
        if (cfx_dtype_is_complex((cfx_dtype)self->dtype) && !cfx_dtype_is_complex((cfx_dtype)out->dtype) && !warned) {
            warned = true;
            cfx_warn("Casting complex values to real discards the imaginary part");
        }
        cfx_cpu_copy(out, self);
    }
    return out;
}

cfx_tensor *cfx_backend_select__to_copy(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                        cfx_value pin_memory, bool non_blocking, cfx_value memory_format)
{
    cfx_keyset ks = self->keys;
    cfx_device d;
    if (cfx_geom_opt_device(device, &d))
        ks = cfx_keyset_or(ks, cfx_keyset_of(d.type == CFX_DEVICE_META ? CFX_KEY_Meta : CFX_KEY_CPU));
    ks = cfx_keyset_and(ks, CFX_KEYS_FULL_AFTER_FUNCTIONALITY(CFX_KEY_BackendSelect));
    return cfx_op__to_copy_redispatch(ks, self, dtype, layout, device, pin_memory, non_blocking, memory_format);
}

cfx_tensor *cfx_kernel_to_dtype(cfx_tensor *self, cfx_dtype dtype, bool non_blocking, bool copy,
                                cfx_value memory_format)
{
    /* to_will_alias: same dtype, no copy asked, and a memory format the tensor already has */
    if ((cfx_dtype)self->dtype == dtype && !copy &&
        (cfx_value_is_none(memory_format) || memory_format.u.memory_format == CFX_PRESERVE_FORMAT))
        return self;
    return cfx__to_copy(self, cfx_dtype_value(dtype), cfx_none(), cfx_none(), cfx_none(), non_blocking,
                        memory_format);
}

/* ---- scalar_tensor ------------------------------------------------------------------------------ */

/* at::empty({}, options).fill_(s): the default dtype (float32) unless dtype is given */
cfx_tensor *cfx_kernel_scalar_tensor(cfx_value s, cfx_value dtype, cfx_value layout, cfx_value device,
                                     cfx_value pin_memory)
{
    cfx_tensor *t = cfx_empty(CFX_INTS(), cfx_value_is_none(dtype) ? cfx_dtype_value(CFX_FLOAT32) : dtype, layout,
                              device, pin_memory, cfx_none());
    if (t && t->device.type == CFX_DEVICE_CPU) {
        cfx_tensor *w = cfx_wrapped_number_new(s);
        if (!w)
            return NULL;
        cfx_cpu_copy(t, w);
        cfx_tensor_release(w);
    }
    return t;
}

cfx_tensor *cfx_backend_select_scalar_tensor(cfx_value s, cfx_value dtype, cfx_value layout, cfx_value device,
                                             cfx_value pin_memory)
{
    cfx_device d = cfx_device_make(CFX_DEVICE_CPU);
    cfx_geom_opt_device(device, &d);
    return cfx_op_scalar_tensor_redispatch(cfx_keyset_of(d.type == CFX_DEVICE_META ? CFX_KEY_Meta : CFX_KEY_CPU), s,
                                           dtype, layout, device, pin_memory);
}

/* ---- where with numbers ------------------------------------------------------------------------- */

/* at::native::result_type(tensor, scalar) / (scalar, scalar): the scalar as a wrapped number */
static cfx_dtype result_type_with(const cfx_tensor *t, cfx_value a, cfx_value b, bool *ok)
{
    cfx_result_type_state st = CFX_RESULT_TYPE_INIT;
    if (t)
        cfx_result_type_update(&st, t);
    cfx_value nums[2] = {a, b};
    *ok = true;
    for (int i = 0; i < 2; i++) {
        if (cfx_value_is_none(nums[i]))
            continue;
        cfx_tensor *w = cfx_wrapped_number_new(nums[i]);
        if (!w) {
            *ok = false;
            return CFX_FLOAT32;
        }
        cfx_result_type_update(&st, w);
        cfx_tensor_release(w);
    }
    return cfx_result_type(&st);
}

/* at::scalar_tensor(s, like.options().dtype(dt)): dtype, layout and device given, pin_memory not */
static cfx_tensor *scalar_like(cfx_value s, const cfx_tensor *like, cfx_dtype dt)
{
    /* a fake tensor's device is the one it stands for, not meta */
    cfx_device dev = cfx_tensor_is_fake(like) ? cfx_tensor_fake_device(like) : like->device;
    return cfx_scalar_tensor(s, cfx_dtype_value(dt), cfx_layout_value(CFX_LAYOUT_STRIDED), cfx_device_value(dev),
                             cfx_none());
}

cfx_tensor *cfx_kernel_where_ScalarSelf(cfx_tensor *condition, cfx_value self, cfx_tensor *other)
{
    bool ok;
    cfx_dtype rt = result_type_with(other, self, cfx_none(), &ok);
    if (!ok)
        return NULL;
    cfx_tensor *other_c = cfx_to(other, rt);
    cfx_tensor *self_c = other_c ? scalar_like(self, other, rt) : NULL;
    return self_c ? cfx_where(condition, self_c, other_c) : NULL;
}

cfx_tensor *cfx_kernel_where_ScalarOther(cfx_tensor *condition, cfx_tensor *self, cfx_value other)
{
    bool ok;
    cfx_dtype rt = result_type_with(self, other, cfx_none(), &ok);
    if (!ok)
        return NULL;
    cfx_tensor *other_t = scalar_like(other, self, rt);
    cfx_tensor *self_t = other_t ? cfx_to(self, rt) : NULL;
    return self_t ? cfx_where(condition, self_t, other_t) : NULL;
}

cfx_tensor *cfx_kernel_where_Scalar(cfx_tensor *condition, cfx_value self, cfx_value other)
{
    bool ok;
    cfx_dtype rt = result_type_with(NULL, self, other, &ok);
    if (!ok)
        return NULL;
    cfx_tensor *other_t = scalar_like(other, condition, rt);
    cfx_tensor *self_t = other_t ? scalar_like(self, condition, rt) : NULL;
    return self_t ? cfx_where(condition, self_t, other_t) : NULL;
}

/* ---- masked_fill --------------------------------------------------------------------------------- */

/* out[i] = value where mask[i] (the value's bytes in out's dtype in ctx) */
#define FILL_LOOP(T)                                                                            \
    do {                                                                                        \
        T v;                                                                                    \
        memcpy(&v, ctx, sizeof v);                                                              \
        char *po = p[0];                                                                        \
        const char *pm = p[1];                                                                  \
        for (int64_t i = 0; i < n; i++, po += s[0], pm += s[1])                                 \
            if (*(const bool *)pm)                                                              \
                *(T *)po = v;                                                                   \
    } while (0)
static void fill_1(char **p, const int64_t *s, int64_t n, const void *ctx) { FILL_LOOP(uint8_t); }
static void fill_2(char **p, const int64_t *s, int64_t n, const void *ctx) { FILL_LOOP(uint16_t); }
static void fill_4(char **p, const int64_t *s, int64_t n, const void *ctx) { FILL_LOOP(uint32_t); }
static void fill_8(char **p, const int64_t *s, int64_t n, const void *ctx) { FILL_LOOP(uint64_t); }

/* the broadcast shape of (mask, self), expand_outplace's order */
static bool fill_shape(const char *op, const cfx_tensor *self, const cfx_tensor *mask, int64_t *shape, int *nd)
{
    return cfx_geom_broadcast(mask->sizes, mask->ndim, self->sizes, self->ndim, shape, nd, op);
}

cfx_tensor *cfx_kernel_masked_fill_Scalar(cfx_tensor *self, cfx_tensor *mask, cfx_value value)
{
    const char *op = "aten::masked_fill.Scalar";
    int64_t shape[CFX_MAX_DIMS], st[CFX_MAX_DIMS];
    int nd;
    if (!fill_shape(op, self, mask, shape, &nd))
        return NULL;
    cfx_tensor *out = cfx_tensor_new(shape, nd, (cfx_dtype)self->dtype, self->device);
    if (!out || out->device.type != CFX_DEVICE_CPU)
        return out;
    if (mask->dtype != CFX_BOOL) {
        /* the dtype as caffe2's TypeMeta names it */
        cfx_dtype md = (cfx_dtype)mask->dtype;
        cfx_error_set(CFX_ERR, op, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                      md == CFX_INT64 ? "long int" : md == CFX_INT32 ? "int" : md == CFX_FLOAT64 ? "double" : "float");
        cfx_kernel_discard(out);
        return NULL;
    }
    cfx_scope sc = cfx_scope_begin();
    /* the contiguous clone of the expanded self (cfx_cpu_copy copies equal shapes: a view
     * with the broadcast dims' strides 0) */
    int off = nd - self->ndim;
    for (int d = 0; d < nd; d++)
        st[d] = d < off || self->sizes[d - off] == 1 ? 0 : self->strides[d - off];
    cfx_tensor *ex = cfx_tensor_new_view(self, shape, st, nd, self->storage_offset);
    cfx_tensor *w = cfx_num_value(value), *v = w ? cfx_cpu_to_dtype(w, (cfx_dtype)out->dtype) : NULL;
    bool ok = ex && v;
    if (ok) {
        cfx_cpu_copy(out, ex);
        const cfx_tensor *m[1] = {mask};
        cfx_loop l;
        cfx_loop_init(&l, out, m, 1);
        size_t es = cfx_dtype_size((cfx_dtype)out->dtype);
        cfx_loop_run(&l, es == 1 ? fill_1 : es == 2 ? fill_2 : es == 4 ? fill_4 : fill_8, cfx_tensor_data(v));
    }
    cfx_scope_end(sc);
    if (!ok) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

/* torch._refs.masked_fill: where(mask, value, a).contiguous(): the broadcast shape, contiguous,
 * a's dtype */
cfx_tensor *cfx_meta_masked_fill_Scalar(cfx_tensor *self, cfx_tensor *mask, cfx_value value)
{
    const char *op = "aten::masked_fill.Scalar";
    (void)value;
    int64_t shape[CFX_MAX_DIMS];
    int nd;
    if (mask->dtype != CFX_BOOL) {
        cfx_error_set(CFX_ERR, op, "expected predicate to be bool, got %s",
                      cfx_dtype_torch_name((cfx_dtype)mask->dtype));
        return NULL;
    }
    /* where's _broadcast_shapes(pred, value, a): the value, a number, never mismatches */
    cfx_tmeta M, V, A;
    cfx_tmeta_of(&M, mask);
    cfx_tmeta_of(&A, self);
    V = (cfx_tmeta){.ndim = 0, .dtype = CFX_FLOAT32, .device = self->device};
    V.sizes = V.own_sizes;
    V.strides = V.own_strides;
    const cfx_tmeta *mva[3] = {&M, &V, &A};
    const int64_t *common;
    unsigned differs;
    if (!cfx_prims_broadcast_shapes(op, mva, 3, shape, &common, &nd, &differs))
        return NULL;
    return cfx_tensor_new(common, nd, (cfx_dtype)self->dtype, cfx_device_make(CFX_DEVICE_META));
}

/* c10's checked_convert, as Scalar::to<T>() applies it where a kernel writes a number into a
 * tensor (fill_, full, constant_pad_nd): a double overflows an integral type when NaN or outside
 * [lowest, max] (infinities included) and a floating type when finite and outside its range;
 * an int may wrap into an unsigned type from below (two's complement: -1 is 255) but not past
 * its max; bool takes anything. The type names are the C++ ones PyTorch prints. */
bool cfx_scalar_converts(const char *op, cfx_value v, cfx_dtype dt)
{
    double lo = 0, hi = 0;
    const char *name = NULL;
    switch (dt) {
    case CFX_BOOL: return true;
    case CFX_FLOAT64: case CFX_COMPLEX128: return true;
    case CFX_COMPLEX64: lo = -FLT_MAX, hi = FLT_MAX, name = "c10::complex<float>"; break;
    case CFX_FLOAT32: lo = -FLT_MAX, hi = FLT_MAX, name = "float"; break;
    case CFX_INT64: lo = (double)INT64_MIN, hi = (double)INT64_MAX, name = "int64_t"; break;
    case CFX_INT32: lo = INT32_MIN, hi = INT32_MAX, name = "int"; break;
    case CFX_INT16: lo = INT16_MIN, hi = INT16_MAX, name = "int16_t"; break;
    case CFX_INT8: lo = INT8_MIN, hi = INT8_MAX, name = "int8_t"; break;
    case CFX_UINT8: lo = 0, hi = UINT8_MAX, name = "uint8_t"; break;
    }
    bool over;
    if (v.kind == CFX_V_DOUBLE) {
        double f = v.u.d;
        over = dt == CFX_FLOAT32 || dt == CFX_COMPLEX64 ? isfinite(f) && (f < lo || f > hi) : isnan(f) || f < lo || f > hi;
        over = over || (dt == CFX_INT64 && f >= 0x1p63); /* INT64_MAX rounds up to 2^63 as a double */
    } else if (v.kind == CFX_V_INT) {
        int64_t i = v.u.i;
        over = dt == CFX_UINT8 ? i > (int64_t)hi || (i < 0 && -(uint64_t)i > (uint64_t)hi)
                               : dt != CFX_FLOAT32 && dt != CFX_COMPLEX64 && dt != CFX_INT64 && ((double)i < lo || (double)i > hi);
    } else {
        return true; /* a bool */
    }
    if (over)
        cfx_error_set(CFX_ERR, op, "value cannot be converted to type %s without overflow", name);
    return !over;
}

