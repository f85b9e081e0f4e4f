/* functionalize.c - the Functionalize key's kernel (FunctionalizeFallbackKernel.cpp and the
 * kernels torchgen writes into RegisterFunctionalization_*.cpp, PyTorch 2.13).
 *
 * PyTorch generates one functionalization kernel per view and per in-place op and uses a boxed
 * fallback for the rest; cfx has one boxed kernel that reads the same facts from the schema's
 * alias annotations, so a new op in the table is functionalized without code:
 *  - `Tensor(a) self -> Tensor(a)` (a view): the op runs on self's value as it is (views are
 *    not synced first: the generated view kernels do not sync, which is why 2.13's graphs show
 *    `t = t(x_1)` taken from the stale input before the synced `t_1`), and the result becomes
 *    a view wrapper sharing self's storage;
 *  - `Tensor(a!) self ... -> Tensor(a!)` named `op_` (an in-place op): its functional variant
 *    `op` runs on the synced, unwrapped arguments and the result replaces self's value, is
 *    committed to the storage and synced back (cfx_functional_mutate); self is returned;
 *  - other written arguments (out= variants, inplace views) are refused with a message;
 *  - everything else: tensor arguments that are functional are synced and unwrapped, the op
 *    runs below functionalization, and the tensor results are wrapped when some input was
 *    functional or there was no tensor input (a factory op);
 *  - `lift_fresh` has its own kernel in 2.13: a plain literal is lifted below and wrapped.
 * Ops with an effect (effects.h) are routed through handle_effects when the functional mode
 * threads tokens, as FunctionalTensorMode does in 2.13. */
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/effects.h"
#include "dispatch/error.h"
#include "dispatch/functional_internal.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"

/* The op below functionalization: a fresh dispatch with Functionalize excluded. */
static int call_below(const cfx_op *op, cfx_value *stack)
{
    cfx_key_guard g;
    cfx_functional_skip_begin(&g);
    int rc = cfx_op_dispatch_stack(op, stack);
    cfx_key_guard_end(&g);
    return rc;
}

static bool alias_read(const cfx_argument *a) { return a->type->alias && !a->type->alias->is_write; }
static bool alias_write(const cfx_argument *a) { return a->type->alias && a->type->alias->is_write; }

static bool is_view_op(const cfx_schema *s)
{
    return s->n_args > 0 && s->n_returns == 1 && s->returns[0].type->kind == CFX_TYPE_TENSOR &&
           alias_read(&s->returns[0]) && alias_read(&s->args[0]);
}

/* Syncs and unwraps functional tensors of stack[0..n) in place (lists get a copy in the
 * scope). */
static int unwrap_args(const cfx_schema *s, cfx_value *stack, bool *any_tensor, bool *any_functional)
{
    for (int i = 0; i < s->n_args; i++) {
        cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            *any_tensor = true;
            if (cfx_tensor_is_functional(v->u.t)) {
                *any_functional = true;
                if (cfx_functional_sync(v->u.t) != CFX_OK)
                    return CFX_ERR;
                v->u.t = cfx_functional_value(v->u.t);
            }
        } else if ((v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) && v->len > 0) {
            bool has = false;
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR) {
                    *any_tensor = true;
                    has = has || cfx_tensor_is_functional(v->u.items[j].u.t);
                }
            if (!has)
                continue;
            *any_functional = true;
            cfx_value *items = cfx_scope_alloc(v->len * sizeof *items);
            if (!items)
                return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            for (uint32_t j = 0; j < v->len; j++) {
                items[j] = v->u.items[j];
                if (items[j].kind == CFX_V_TENSOR && cfx_tensor_is_functional(items[j].u.t)) {
                    if (cfx_functional_sync(items[j].u.t) != CFX_OK)
                        return CFX_ERR;
                    items[j].u.t = cfx_functional_value(items[j].u.t);
                }
            }
            v->u.items = items;
        }
    }
    return CFX_OK;
}

static int wrap_outputs(const cfx_schema *s, cfx_value *stack)
{
    for (int i = 0; i < s->n_returns; i++) {
        cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            if (!(v->u.t = cfx_functional_wrap(v->u.t)))
                return CFX_ERR;
        } else if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
            cfx_value *items = cfx_scope_alloc((v->len ? v->len : 1) * sizeof *items);
            if (!items)
                return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            for (uint32_t j = 0; j < v->len; j++) {
                items[j] = v->u.items[j];
                if (items[j].kind == CFX_V_TENSOR && items[j].u.t &&
                    !(items[j].u.t = cfx_functional_wrap(items[j].u.t)))
                    return CFX_ERR;
            }
            v->u.items = items;
        }
    }
    return CFX_OK;
}

static int view_op(const cfx_op *op, const cfx_schema *s, cfx_value *stack)
{
    cfx_tensor *self = stack[0].kind == CFX_V_TENSOR ? stack[0].u.t : NULL;
    if (!self || !cfx_tensor_is_functional(self))
        return call_below(op, stack); /* re-entrant no-op for plain tensors */
    cfx_fview *v = cfx_fview_new(op, stack, s->n_args);
    if (!v)
        return CFX_ERR;
    stack[0].u.t = cfx_functional_value(self);
    bool any_tensor = false, any_functional = false;
    int rc = unwrap_args(s, stack, &any_tensor, &any_functional);
    if (rc == CFX_OK)
        rc = call_below(op, stack);
    if (rc == CFX_OK) {
        cfx_tensor *out = cfx_functional_wrap_view(stack[0].u.t, self, v);
        rc = out ? CFX_OK : CFX_ERR;
        stack[0] = cfx_tensor_value(out);
    }
    cfx_fview_release(v);
    return rc;
}

/* "ns::name_.overload" -> the op "ns::name.overload", or NULL + error. */
static const cfx_op *functional_variant(const cfx_schema *s)
{
    char name[256];
    size_t n = strlen(s->name);
    if (n < 2 || n + strlen(s->overload) + 2 > sizeof name || s->name[n - 1] != '_')
        goto none;
    memcpy(name, s->name, n - 1);
    name[n - 1] = '\0';
    if (s->overload[0]) {
        strcat(name, ".");
        strcat(name, s->overload);
    }
    cfx_op *f = cfx_op_lookup(name);
    if (f)
        return f;
none:
    cfx_error_set(CFX_ERR, s->name,
                  "functionalization: %s%s%s writes to its input and cfx has no functional variant of it",
                  s->name, s->overload[0] ? "." : "", s->overload);
    return NULL;
}

static int inplace_op(const cfx_op *op, const cfx_schema *s, cfx_value *stack)
{
    cfx_tensor *self = stack[0].u.t;
    bool any_tensor = false, any_functional = false;
    for (int i = 1; i < s->n_args; i++)
        if (stack[i].kind == CFX_V_TENSOR && cfx_tensor_is_functional(stack[i].u.t))
            any_functional = true;
    if (!cfx_tensor_is_functional(self)) {
        if (any_functional) /* at::functionalization::impl::isFunctionalTensor check of 2.13 */
            return cfx_error_set(CFX_ERR, s->name,
                                 "mutating a non-functional tensor with a functional tensor is not allowed. "
                                 "Please ensure that all of your inputs are wrapped inside of a functionalize() call.");
        return call_below(op, stack);
    }
    const cfx_op *f = functional_variant(s);
    if (!f)
        return CFX_ERR;
    int rc = unwrap_args(s, stack, &any_tensor, &any_functional);
    if (rc == CFX_OK)
        rc = call_below(f, stack);
    if (rc == CFX_OK)
        rc = cfx_functional_mutate(self, stack[0].u.t);
    stack[0] = cfx_tensor_value(self);
    return rc;
}

static int lift_fresh(const cfx_op *op, cfx_value *stack)
{
    cfx_tensor *t = stack[0].u.t;
    if (cfx_tensor_is_functional(t))
        return CFX_OK; /* 2.13 returns self.view_as(self); the value is the same */
    int rc = call_below(op, stack);
    if (rc == CFX_OK && !(stack[0].u.t = cfx_functional_wrap(stack[0].u.t)))
        rc = CFX_ERR;
    return rc;
}

int cfx_functionalize_call_op(const cfx_op *op, cfx_value *stack)
{
    const cfx_schema *s = cfx_op_schema(op);
    cfx_functional_mode *fm = cfx_functional_mode_current();
    if (cfx_functional_mode_tokens_on(fm) && cfx_op_has_effects(op)) {
        /* FunctionalTensorMode.__torch_dispatch__: `if has_effects(func): return handle_effects(...)` */
        cfx_effects_handler h = cfx_effects_get_handler();
        if (!h)
            return cfx_error_set(CFX_ERR, s->name, "%s has an effect but with_effects is not available (hop/effects.c)",
                                 s->name);
        return h(op, stack, fm);
    }
    if (!strcmp(s->name, "aten::lift_fresh"))
        return lift_fresh(op, stack);
    if (is_view_op(s))
        return view_op(op, s, stack);
    for (int i = 0; i < s->n_args; i++)
        if (alias_write(&s->args[i])) {
            if (i == 0 && stack[0].kind == CFX_V_TENSOR && s->n_returns == 1 && alias_write(&s->returns[0]) &&
                !cfx_op_has_tag(op, CFX_TAG_inplace_view))
                return inplace_op(op, s, stack);
            return cfx_error_set(CFX_ERR, s->name,
                                 "functionalization: %s%s%s writes to argument '%s', which cfx only "
                                 "functionalizes for in-place ops on self",
                                 s->name, s->overload[0] ? "." : "", s->overload, s->args[i].name);
        }
    bool any_tensor = false, any_functional = false;
    int rc = unwrap_args(s, stack, &any_tensor, &any_functional);
    if (rc == CFX_OK)
        rc = call_below(op, stack);
    if (rc == CFX_OK && (!any_tensor || any_functional))
        rc = wrap_outputs(s, stack);
    return rc;
}
