/* conj.c - conjugate views: PyTorch's conj bit, the ops that set, test and resolve it, and
 * the Conjugate key's fallback.
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
 * key: so make_fx records `_conj`, then `clone(_conj)` before any other op, as 2.13 does. Data is conjugated by cfx_cpu_copy (loops.c) whenever the source's bit differs from
 * the destination's, which is what clone and copy_ rely on. */
#include "dispatch/conj_internal.h"

#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/library.h"
#include "dispatch/registry.h"

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
cfx_tensor *cfx_kernel__conj(cfx_tensor *self)
{
    cfx_tensor *v = cfx_kernel_alias(self);
    if (v)
        v->keys.repr ^= CONJ_BIT;
    return v;
}

/* conj (CompositeImplicitAutograd): a real tensor is its own conjugate */
cfx_tensor *cfx_composite_conj(cfx_tensor *self)
{
    if (!cfx_dtype_is_complex((cfx_dtype)self->dtype))
        return cfx_autorelease(cfx_tensor_retain(self));
    return cfx__conj(self);
}

/* resolve_conj (CompositeImplicitAutograd): a clone materialises the conjugate */
cfx_tensor *cfx_composite_resolve_conj(cfx_tensor *self)
{
    if (!cfx_is_conj(self))
        return cfx_autorelease(cfx_tensor_retain(self));
    return cfx_clone(self);
}

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

enum { MAX_LISTS = 8 };

static bool list_has_conj(const cfx_value *v)
{
    for (uint32_t j = 0; j < v->len; j++)
        if (v->u.items[j].kind == CFX_V_TENSOR && cfx_is_conj(v->u.items[j].u.t))
            return true;
    return false;
}

static void free_lists(cfx_value **lists, int n)
{
    for (int i = 0; i < n; i++)
        cfx_free(lists[i]);
}

/* The ops that handle the bit themselves: 2.13 registers them as fallthroughs on Conjugate.
 * cfx lets the fallback pass them straight below the key instead (the same call), so that
 * their dispatch tables stay the built-in ones. */
static const char *const fallthrough_ops[] = {
    /* ConjugateFallback.cpp */
    "copy_", "clone", "conj", "_conj", "_conj_physical", "resolve_conj", "empty_like", "empty_strided",
    "view_as_real", "real", "imag", "view", "reshape",
    /* TORCH_VIEW_FNS, TORCH_VIEW_FNS_NATIVE_FN_REGISTRATION, TENSOR_UTILITIES_AND_CONSTRUCTORS */
    "as_strided", "as_strided_", "detach", "diagonal", "expand", "expand_as", "movedim.int", "narrow", "permute",
    "select.int", "squeeze", "squeeze.dim", "squeeze.dims", "squeeze_", "transpose.int", "transpose_", "t", "t_",
    "unflatten.int", "unfold", "unsqueeze", "unsqueeze_", "view_as", "unbind.int", "split.Tensor",
    "split_with_sizes", "chunk", "alias", "_unsafe_view", "resize_", "full_like", "empty.memory_format",
};

static bool handles_bit(const cfx_op *op)
{
    const char *name = cfx_op_name(op);
    if (strncmp(name, "aten::", 6))
        return false;
    for (size_t i = 0; i < sizeof fallthrough_ops / sizeof fallthrough_ops[0]; i++)
        if (!strcmp(name + 6, fallthrough_ops[i]))
            return true;
    return false;
}

/* MathOpFallback::fallback_impl for the conj bit */
int cfx_conj_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    const cfx_schema *s = cfx_op_schema(op);
    cfx_keyset below = cfx_keyset_and(ks, cfx_keyset_full_after(CFX_KEY_Conjugate));
    int view = -1; /* -1: no aliasing argument, 0: a view op, 1: a mutating one */
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->alias) {
            int w = cfx_argument_is_write(&s->args[i]) ? 1 : 0;
            if (view >= 0 && view != w)
                return cfx_error_set(CFX_ERR, cfx_op_name(op),
                                     "Unsupported operator for conjugate fallback: %s conjugate fallback doesn't work "
                                     "for operators with a mix mutable and non-mutable inputs that alias with outputs, "
                                     "this must be implemented manually.  If you got this error on a core op, please "
                                     "report a bug to PyTorch.",
                                     cfx_op_name(op));
            view = w;
        }
    if (view == 0 || handles_bit(op)) /* views propagate the bit with their keys */
        return cfx_op_redispatch(op, below, stack);
    cfx_tensor *mutable_in = NULL, *mutable_clone = NULL;
    cfx_value *lists[MAX_LISTS];
    int nlists = 0;
    for (int i = 0; i < s->n_args; i++) {
        cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && cfx_is_conj(v->u.t)) {
            cfx_tensor *c = cfx_clone(v->u.t);
            if (!c) {
                free_lists(lists, nlists);
                return (int)cfx_error_status();
            }
            if (s->args[i].type->alias) {
                if (mutable_in) {
                    free_lists(lists, nlists);
                    return cfx_error_set(CFX_ERR, cfx_op_name(op),
                                         "conjugate fallback does not support operators with more than one mutable "
                                         "tensors with conjugatebit set to true.");
                }
                mutable_in = v->u.t;
                mutable_clone = c;
            }
            *v = cfx_tensor_value(c);
        } else if (v->kind == CFX_V_LIST && list_has_conj(v)) {
            if (s->args[i].type->alias) {
                free_lists(lists, nlists);
                return cfx_error_set(CFX_ERR, cfx_op_name(op),
                                     " fallback doesn't currently support mutable TensorLists with conjugate inputs. "
                                     "Please materialize all the conjugate input tensor(s) in the mutable TensorList "
                                     "inputs before calling %s",
                                     cfx_op_name(op));
            }
            /* the list's items belong to the caller: a copy with the clones */
            cfx_value *items = nlists < MAX_LISTS ? cfx_calloc(v->len ? v->len : 1, sizeof *items) : NULL;
            if (!items) {
                free_lists(lists, nlists);
                return cfx_error_set(CFX_ERR_NOMEM, cfx_op_name(op), "out of memory in the conjugate fallback");
            }
            lists[nlists++] = items;
            for (uint32_t j = 0; j < v->len; j++) {
                items[j] = v->u.items[j];
                if (items[j].kind == CFX_V_TENSOR && cfx_is_conj(items[j].u.t)) {
                    cfx_tensor *c = cfx_clone(items[j].u.t);
                    if (!c) {
                        free_lists(lists, nlists);
                        return (int)cfx_error_status();
                    }
                    items[j] = cfx_tensor_value(c);
                }
            }
            *v = cfx_list(items, v->len);
        }
    }
    int rc = cfx_op_redispatch(op, below, stack);
    free_lists(lists, nlists);
    if (rc != CFX_OK || !mutable_in)
        return rc;
    if (stack[0].kind != CFX_V_TENSOR || stack[0].u.t != mutable_clone)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "conjugate fallback: the op did not return its mutated input");
    if (!cfx_copy_(mutable_in, mutable_clone))
        return (int)cfx_error_status();
    stack[0] = cfx_tensor_value(mutable_in);
    return CFX_OK;
}


