/* conj.c - conjugate views: PyTorch's conj bit, the ops that set, test and resolve it, and
 * the Conjugate key's fallback (math_bits.c's, with the ops that pass through it).
 *
 * As in PyTorch the bit is the Conjugate dispatch key in a tensor's key set
 * (TensorImpl::_set_conj): `_conj` returns a view of the same data with the bit flipped, so
 * `conj` costs nothing; views copy their base's keys and so keep it. Any op reaching the
 * Conjugate key on a tensor with the bit goes through the fallback (MathBitsFallback.h's
 * MathOpFallback): every such tensor argument is materialised with `clone` through the
 * dispatcher, then the op is redispatched below Conjugate; a mutable argument with the bit is
 * cloned, the op runs on the clone, and the result is copied back into it (copy_ writes the
 * conjugate into a conjugate view). The ops that understand the bit (MathBitFallThroughLists.h
 * and ConjugateFallback.cpp: the views, clone, copy_, the conj family) go straight below the
 * key: so make_fx records `_conj`, then `clone(_conj)` before any other op, as 2.13 does.
 * Data is conjugated by cfx_cpu_copy (loops.c) whenever the source's bit differs from the
 * destination's, which is what clone and copy_ rely on. */
#include "dispatch/conj_internal.h"

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/math_bits_internal.h"

#define CONJ_BIT CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Conjugate)

bool cfx_is_conj(const cfx_tensor *t) { return t && (t->keys.repr & CONJ_BIT) != 0; }

/* Negates the imaginary parts of a complex tensor's elements in place. */
static void negate_imag(char **p, const int64_t *s, int64_t n, const void *ctx)
{
    size_t half = *(const size_t *)ctx; /* the size of one part */
    for (int64_t i = 0; i < n; i++) {
        char *e = p[0] + i * s[0] + half;
        if (half == sizeof(float))
            *(float *)e = -*(float *)e;
        else
            *(double *)e = -*(double *)e;
    }
}

void cfx_conj_data_inplace(cfx_tensor *t)
{
    if (!cfx_dtype_is_complex((cfx_dtype)t->dtype) || t->device.type != CFX_DEVICE_CPU)
        return;
    size_t half = cfx_dtype_size((cfx_dtype)t->dtype) / 2;
    cfx_loop l;
    const cfx_tensor *in[1] = {t};
    cfx_loop_init(&l, t, in, 1);
    cfx_loop_run(&l, negate_imag, &half);
}

/* ---- the ops ----------------------------------------------------------------------------- */

/* _conj (CompositeExplicitAutograd): self.alias() with the bit flipped */
cfx_tensor *cfx_kernel__conj(cfx_tensor *self) { return cfx_math_bit_flipped_view(self, CFX_KEY_Conjugate); }

/* conj (CompositeImplicitAutograd): a real tensor is its own conjugate */
cfx_tensor *cfx_composite_conj(cfx_tensor *self)
{
    if (!cfx_dtype_is_complex((cfx_dtype)self->dtype))
        return cfx_autorelease(cfx_tensor_retain(self));
    return cfx__conj(self);
}

/* resolve_conj (CompositeImplicitAutograd): a clone materialises the conjugate */
cfx_tensor *cfx_composite_resolve_conj(cfx_tensor *self) { return cfx_math_bit_resolve(self, CFX_KEY_Conjugate); }

/* _conj_physical (CompositeExplicitAutograd): a new tensor of the conjugated values; of a
 * conjugate view, the clone of its data (self.conj().clone()) */
cfx_tensor *cfx_kernel__conj_physical(cfx_tensor *self)
{
    if (cfx_is_conj(self)) {
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *plain = cfx__conj(self);
        cfx_tensor *r = plain ? cfx_clone(plain) : NULL;
        if (r)
            cfx_tensor_retain(r);
        cfx_scope_end(s);
        return r ? cfx_autorelease(r) : NULL;
    }
    cfx_tensor *r = cfx_empty_like(self);
    if (r && r->device.type == CFX_DEVICE_CPU) {
        cfx_cpu_copy(r, self);
        cfx_conj_data_inplace(r);
    }
    return r;
}

/* conj_physical (CompositeImplicitAutograd) */
cfx_tensor *cfx_composite_conj_physical(cfx_tensor *self)
{
    if (!cfx_dtype_is_complex((cfx_dtype)self->dtype))
        return cfx_autorelease(cfx_tensor_retain(self));
    return cfx__conj_physical(self);
}

/* ---- the Conjugate key --------------------------------------------------------------------- */

/* The ops that handle the bit themselves: 2.13 registers them as fallthroughs on Conjugate
 * (ConjugateFallback.cpp; TORCH_VIEW_FNS, TORCH_VIEW_FNS_NATIVE_FN_REGISTRATION and
 * TENSOR_UTILITIES_AND_CONSTRUCTORS). cfx lets the fallback pass them straight below the key
 * instead (the same call), so that their dispatch tables stay the built-in ones. */
static const char *const fallthrough_ops[] = {
    "copy_", "clone", "conj", "_conj", "_conj_physical", "resolve_conj", "empty_like",
    "empty_strided", "view_as_real", "real", "imag", "view", "reshape",
    "as_strided", "as_strided_", "detach", "diagonal", "expand", "expand_as", "movedim.int", "narrow", "permute",
    "select.int", "squeeze", "squeeze.dim", "squeeze.dims", "squeeze_", "transpose.int", "transpose_", "t", "t_",
    "unflatten.int", "unfold", "unsqueeze", "unsqueeze_", "view_as", "unbind.int", "split.Tensor",
    "split_with_sizes", "chunk", "alias", "_unsafe_view", "resize_", "full_like", "empty.memory_format",
};

static const cfx_math_bit conj_bit = {CFX_KEY_Conjugate, "conjugate", fallthrough_ops,
                                      sizeof fallthrough_ops / sizeof fallthrough_ops[0]};

/* MathOpFallback::fallback_impl for the conj bit (math_bits.c) */
int cfx_conj_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    return cfx_math_bit_fallback(&conj_bit, op, ks, stack);
}
