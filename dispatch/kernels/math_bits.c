/* math_bits.c - the fallback of the tensor math bits (conj and neg), 2.13's MathOpFallback
 * (MathBitsFallback.h), shared by the Conjugate key (conj.c) and the Negative key
 * (neg_view.c) as ATen shares it.
 *
 * A bit is a functionality key in the tensor's key set; an op reaching that key goes through
 * here. View ops (every aliasing argument read-only) and the ops listed as passthroughs (2.13
 * registers them as fallthroughs on the key: clone, copy_, the views, ...) go straight below
 * the key, views keeping the bit with their keys. Any other op gets each argument with the
 * bit replaced by its clone through the dispatcher (clone materialises the bit), then runs
 * below the key; a mutated argument with the bit is cloned too, the op runs on the clone, and
 * the result is copied back into it (copy_ writes through the bit). So make_fx records
 * `clone` before the op, as 2.13 does. */
#include "dispatch/math_bits_internal.h"

#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/registry.h"

cfx_tensor *cfx_math_bit_flipped_view(cfx_tensor *self, cfx_dispatch_key key)
{
    cfx_tensor *v = cfx_kernel_alias(self);
    if (v)
        v->keys.repr ^= CFX_KEYS_FUNCTIONALITY_BIT(key);
    return v;
}

cfx_tensor *cfx_math_bit_resolve(cfx_tensor *self, cfx_dispatch_key key)
{
    if (!(self->keys.repr & CFX_KEYS_FUNCTIONALITY_BIT(key)))
        return cfx_autorelease(cfx_tensor_retain(self));
    return cfx_clone(self);
}

enum { MAX_LISTS = 8 };

static bool list_has_bit(const cfx_math_bit *b, const cfx_value *v)
{
    for (uint32_t j = 0; j < v->len; j++)
        if (v->u.items[j].kind == CFX_V_TENSOR && cfx_math_bit_set(b, v->u.items[j].u.t))
            return true;
    return false;
}

static void free_lists(cfx_value **lists, int n)
{
    for (int i = 0; i < n; i++)
        cfx_free(lists[i]);
}

static bool passes_through(const cfx_math_bit *b, const cfx_op *op)
{
    const char *name = cfx_op_name(op);
    if (strncmp(name, "aten::", 6))
        return false;
    for (size_t i = 0; i < b->n_passthrough; i++)
        if (!strcmp(name + 6, b->passthrough[i]))
            return true;
    return false;
}

/* The clones of the bit's tensors in list argument v, in a copy of the list (its items
 * belong to the caller); the copy is recorded in lists[] to be freed after the call. */
static int clone_list(const cfx_math_bit *b, const cfx_op *op, cfx_value *v, cfx_value **lists, int *nlists)
{
    cfx_value *items = *nlists < MAX_LISTS ? cfx_calloc(v->len ? v->len : 1, sizeof *items) : NULL;
    if (!items)
        return cfx_error_set(CFX_ERR_NOMEM, cfx_op_name(op), "out of memory in the %s fallback", b->name);
    lists[(*nlists)++] = items;
    for (uint32_t j = 0; j < v->len; j++) {
        items[j] = v->u.items[j];
        if (items[j].kind == CFX_V_TENSOR && cfx_math_bit_set(b, items[j].u.t)) {
            cfx_tensor *c = cfx_clone(items[j].u.t);
            if (!c)
                return (int)cfx_error_status();
            items[j] = cfx_tensor_value(c);
        }
    }
    *v = cfx_list(items, v->len);
    return CFX_OK;
}

int cfx_math_bit_fallback(const cfx_math_bit *b, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    const cfx_schema *s = cfx_op_schema(op);
    cfx_keyset below = cfx_keyset_and(ks, cfx_keyset_full_after(b->key));
    int view = -1; /* -1: no aliasing argument, 0: a view op, 1: a mutating one */
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->alias) {
            int w = cfx_argument_is_write(&s->args[i]) ? 1 : 0;
            if (view >= 0 && view != w)
                return cfx_error_set(CFX_ERR, cfx_op_name(op),
                                     "Unsupported operator for %s fallback: %s%s fallback doesn't work for operators "
                                     "with a mix mutable and non-mutable inputs that alias with outputs, this must be "
                                     "implemented manually.  If you got this error on a core op, please report a bug "
                                     "to PyTorch.",
                                     b->name, cfx_op_name(op), b->name);
            view = w;
        }
    if (view == 0 || passes_through(b, op))
        return cfx_op_redispatch(op, below, stack);
    cfx_tensor *mutable_in = NULL, *mutable_clone = NULL;
    cfx_value *lists[MAX_LISTS];
    int nlists = 0, rc = CFX_OK;
    for (int i = 0; i < s->n_args && rc == CFX_OK; i++) {
        cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && cfx_math_bit_set(b, v->u.t)) {
            cfx_tensor *c = cfx_clone(v->u.t);
            if (!c) {
                rc = (int)cfx_error_status();
                break;
            }
            if (s->args[i].type->alias) {
                if (mutable_in) {
                    rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                                       "%s fallback does not support operators with more than one mutable tensors "
                                       "with %sbit set to true.",
                                       b->name, b->name);
                    break;
                }
                mutable_in = v->u.t;
                mutable_clone = c;
            }
            *v = cfx_tensor_value(c);
        } else if (v->kind == CFX_V_LIST && list_has_bit(b, v)) {
            if (s->args[i].type->alias)
                rc = cfx_error_set(CFX_ERR, cfx_op_name(op),
                                   " fallback doesn't currently support mutable TensorLists with %s inputs. Please "
                                   "materialize all the %s input tensor(s) in the mutable TensorList inputs before "
                                   "calling %s",
                                   b->name, b->name, cfx_op_name(op));
            else
                rc = clone_list(b, op, v, lists, &nlists);
        }
    }
    if (rc == CFX_OK)
        rc = cfx_op_redispatch(op, below, stack);
    free_lists(lists, nlists);
    if (rc != CFX_OK || !mutable_in)
        return rc;
    if (stack[0].kind != CFX_V_TENSOR || stack[0].u.t != mutable_clone)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "%s fallback: the op did not return its mutated input",
                             b->name);
    if (!cfx_copy_(mutable_in, mutable_clone))
        return (int)cfx_error_status();
    stack[0] = cfx_tensor_value(mutable_in);
    return CFX_OK;
}
