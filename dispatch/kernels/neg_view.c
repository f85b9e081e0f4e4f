/* neg_view.c - negative views: PyTorch's neg bit, the ops that set and resolve it, and the
 * Negative key's fallback (math_bits.c's, with the ops NegateFallback.cpp lets through).
 *
 * As the conj bit (conj.c), the bit is a functionality key in the tensor's key set
 * (TensorImpl::_set_neg): `_neg_view` is `alias` with the bit flipped, and views copy their
 * base's keys, so `select` of a negative view is one. ATen sets it where a view's values are
 * the negatives of its data: `imag` of a conjugate view is
 * `select(_neg_view(view_as_real(_conj(self))), -1, 1)` (complex_views.c). Ops that do not
 * handle the bit see a clone of the view (the fallback), which cfx_cpu_copy negates whenever
 * the source's bit differs from the destination's; so make_fx records `_neg_view` then
 * `clone` before any other op, as 2.13 does. */
#include "dispatch/neg_internal.h"

#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/math_bits_internal.h"

#define NEG_BIT CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Negative)

bool cfx_is_neg(const cfx_tensor *t) { return t && (t->keys.repr & NEG_BIT) != 0; }

/* Negates n elements in place; ctx: the dtype. Integers wrap as C++'s unary minus does on
 * their promoted values (uint8 3 -> 253, int8 -128 -> -128). */
static void negate(char **p, const int64_t *s, int64_t n, const void *ctx)
{
    cfx_dtype dt = *(const cfx_dtype *)ctx;
    char *e = p[0];
    for (int64_t i = 0; i < n; i++, e += s[0])
        switch (dt) {
        case CFX_UINT8: *(uint8_t *)e = (uint8_t)(0u - *(uint8_t *)e); break;
        case CFX_INT8: *(int8_t *)e = (int8_t)(uint8_t)(0u - (uint8_t) * (int8_t *)e); break;
        case CFX_INT16: *(int16_t *)e = (int16_t)(uint16_t)(0u - (uint16_t) * (int16_t *)e); break;
        case CFX_INT32: *(int32_t *)e = (int32_t)(0u - (uint32_t) * (int32_t *)e); break;
        case CFX_INT64: *(int64_t *)e = (int64_t)(0ull - (uint64_t) * (int64_t *)e); break;
        case CFX_FLOAT32: *(float *)e = -*(float *)e; break;
        case CFX_FLOAT64: *(double *)e = -*(double *)e; break;
        case CFX_COMPLEX64: ((float *)e)[0] = -((float *)e)[0], ((float *)e)[1] = -((float *)e)[1]; break;
        case CFX_COMPLEX128: ((double *)e)[0] = -((double *)e)[0], ((double *)e)[1] = -((double *)e)[1]; break;
        case CFX_BOOL: break;
        }
}

void cfx_neg_data_inplace(cfx_tensor *t)
{
    if (t->device.type != CFX_DEVICE_CPU || t->dtype == CFX_BOOL)
        return;
    cfx_dtype dt = (cfx_dtype)t->dtype;
    cfx_loop l;
    const cfx_tensor *in[1] = {t};
    cfx_loop_init(&l, t, in, 1);
    cfx_loop_run(&l, negate, &dt);
}

/* ---- the ops ----------------------------------------------------------------------------- */

/* _neg_view (CompositeExplicitAutograd): self.alias() with the bit flipped */
cfx_tensor *cfx_kernel__neg_view(cfx_tensor *self) { return cfx_math_bit_flipped_view(self, CFX_KEY_Negative); }

/* resolve_neg (CompositeImplicitAutograd): a clone materialises the negation (copy_) */
cfx_tensor *cfx_composite_resolve_neg(cfx_tensor *self) { return cfx_math_bit_resolve(self, CFX_KEY_Negative); }

/* ---- the Negative key ---------------------------------------------------------------------- */

/* NegateFallback.cpp's fallthroughs, with TORCH_VIEW_FNS, TENSOR_UTILITIES_AND_CONSTRUCTORS and
 * TORCH_VIEW_FNS_NATIVE_FN_REGISTRATION (MathBitFallThroughLists.h): the ops cfx has of them. */
static const char *const fallthrough_ops[] = {
    "copy_", "clone", "neg_", "resolve_neg", "resolve_conj",
    "as_strided_", "detach", "detach_", "diagonal", "expand", "expand_as", "movedim.int", "movedim.intlist",
    "narrow", "permute", "select.int", "squeeze", "squeeze_", "transpose.int", "transpose_", "t", "t_", "real",
    "imag", "view_as_real", "unflatten.int", "unfold", "unsqueeze", "unsqueeze_", "view_as", "unbind.int",
    "split.Tensor", "split_with_sizes", "swapaxes", "swapdims", "chunk", "reshape", "alias", "hsplit.int",
    "hsplit.array", "dsplit.int", "dsplit.array", "vsplit.int", "vsplit.array", "conj", "_conj", "_unsafe_view",
    "resize_",
    "empty_like", "empty.memory_format", "empty.out", "empty_strided", "full_like", "stride.int", "size.int",
    "is_complex", "is_floating_point", "requires_grad_",
    "as_strided", "view",
};

static const cfx_math_bit neg_bit = {CFX_KEY_Negative, "negation", fallthrough_ops,
                                     sizeof fallthrough_ops / sizeof fallthrough_ops[0]};

/* MathOpFallback::fallback_impl for the neg bit (NegateFallback.cpp's negationFallback) */
int cfx_neg_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    return cfx_math_bit_fallback(&neg_bit, op, ks, stack);
}
