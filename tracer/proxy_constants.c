/* proxy_constants.c - proxy_call's constant propagation (PyTorch 2.13, CONSTANT_NUMEL_LIMIT = 1).
 *
 * The result of lift_fresh_copy (a tensor literal) of at most one element carries a real copy
 * of the literal as its `constant`, and an operator whose tracked tensor arguments all carry
 * constants (at least one) computes its results' constants for real when every tensor result
 * has at most one element (the elements of a tuple or list result each get theirs). A
 * data-dependent operator (item()) whose tracked tensor arguments all carry constants returns
 * the value computed for real and records nothing (proxy.c), which is how
 * `x * torch.tensor([2.]).item()` traces as `mul(x, 2.0)`. Constants live in a second binding
 * of the tensor (owner const_owner), holding a reference to the real constant, so they go
 * with the tensor. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor_ext.h"
#include "tracer/proxy_internal.h"

static void release_constant(void *t) { cfx_tensor_release(t); }

/* The constant t carries (a real tensor), or NULL. */
static cfx_tensor *constant_of(const cfx_proxy_mode *pm, const cfx_tensor *t)
{
    return pm->constants_made ? cfx_tensor_binding_get(t, pm->const_owner) : NULL;
}

/* Sets (c non-NULL: takes a new reference) or clears t's constant, as set_proxy_slot replaces
 * the whole _ProxyTensor(proxy, constant) of a tracked tensor. */
int cfx_proxy_set_constant(cfx_proxy_mode *pm, cfx_tensor *t, cfx_tensor *c)
{
    if (!c) {
        if (pm->constants_made)
            cfx_tensor_binding_clear(t, pm->const_owner);
        return CFX_OK;
    }
    if (constant_of(pm, t) == c) /* an in-place op on constants updated it where it is */
        return CFX_OK;
    int rc = cfx_tensor_binding_set(t, pm->const_owner, cfx_tensor_retain(c), release_constant);
    if (rc != CFX_OK)
        cfx_tensor_release(c);
    else
        pm->constants_made = true;
    return rc;
}

static void note_constant(const cfx_proxy_mode *pm, const cfx_tensor *t, cfx_proxy_const_flags *f)
{
    if (!t || !cfx_tensor_binding_get(t, pm->owner))
        return;
    bool has = constant_of(pm, t) != NULL;
    f->all &= has;
    f->any |= has;
}

cfx_proxy_const_flags cfx_proxy_constant_flags(const cfx_proxy_mode *pm, const op_plan *p, const cfx_value *stack)
{
    cfx_proxy_const_flags f = {true, false};
    for (int i = 0; i < p->n_args; i++) {
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR)
            note_constant(pm, v->u.t, &f);
        else if ((p->lists >> i & 1) && (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE))
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR)
                    note_constant(pm, v->u.items[j].u.t, &f);
    }
    return f;
}

/* Runs op on the arguments' constants for real, as proxy_call does under
 * unset_fake_temporarily: tracked tensors replaced by their constants, the fake mode unset for
 * the call (the proxy mode is already off the stack while it handles a call). stack receives
 * the results. */
int cfx_proxy_run_on_constants(cfx_proxy_mode *pm, const op_plan *p, const cfx_value *args, cfx_value *stack)
{
    if (p->n_returns > MAX_ARGS)
        return cfx_error_set(CFX_ERR, cfx_op_name(p->op), "cannot run %s on constants: %d results",
                             cfx_op_name(p->op), (int)p->n_returns);
    cfx_value call[MAX_ARGS];
    cfx_value *lists[MAX_ARGS];
    int n_lists = 0, rc = CFX_OK;
    for (int i = 0; i < p->n_args; i++) {
        cfx_value v = args[i];
        if (v.kind == CFX_V_TENSOR && v.u.t && constant_of(pm, v.u.t)) {
            v.u.t = constant_of(pm, v.u.t);
        } else if ((p->lists >> i & 1) && (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) && v.len) {
            cfx_value *items = cfx_malloc(v.len * sizeof *items);
            if (!items) {
                rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
                break;
            }
            lists[n_lists++] = items;
            for (uint32_t j = 0; j < v.len; j++) {
                items[j] = v.u.items[j];
                if (items[j].kind == CFX_V_TENSOR && items[j].u.t && constant_of(pm, items[j].u.t))
                    items[j].u.t = constant_of(pm, items[j].u.t);
            }
            v.u.items = items;
        }
        call[i] = v;
    }
    if (rc == CFX_OK) {
        cfx_mode *fake = cfx_mode_unset(CFX_MODE_FAKE);
        rc = cfx_mode_redispatch(p->target, call);
        if (fake && cfx_mode_set(fake, CFX_MODE_FAKE) != CFX_OK && rc == CFX_OK)
            rc = CFX_ERR;
        if (rc == CFX_OK)
            memcpy(stack, call, (size_t)p->n_returns * sizeof *stack);
    }
    for (int i = 0; i < n_lists; i++)
        cfx_free(lists[i]);
    return rc;
}

/* Every tensor among the results (list items included) has at most CONSTANT_NUMEL_LIMIT
 * elements. */
static bool small_results(const cfx_value *outs, int n_outs)
{
    for (int i = 0; i < n_outs; i++) {
        const cfx_value *v = &outs[i];
        if (v->kind == CFX_V_TENSOR && v->u.t && cfx_tensor_numel(v->u.t) > CONSTANT_NUMEL_LIMIT)
            return false;
        if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE)
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && v->u.items[j].u.t &&
                    cfx_tensor_numel(v->u.items[j].u.t) > CONSTANT_NUMEL_LIMIT)
                    return false;
    }
    return true;
}

/* The constants of a call's results, computed for real into consts[0..n_returns) (shaped as
 * the results): a lift's input copied, else the op run on its arguments' constants when they
 * all have one (f) and every tensor result is small. false: no constants (consts untouched);
 * an error is reported through *rc. */
bool cfx_proxy_result_constants(cfx_proxy_mode *pm, const op_plan *p, const cfx_value *args, const cfx_value *outs,
                             cfx_proxy_const_flags f, cfx_value *consts, int *rc)
{
    *rc = CFX_OK;
    if (!small_results(outs, p->n_returns))
        return false;
    if (p->lift) {
        /* args[0].clone() under unset_fake_temporarily: the literal itself is real */
        if (!args[0].u.t || cfx_tensor_is_fake(args[0].u.t))
            return false;
        cfx_mode *fake = cfx_mode_unset(CFX_MODE_FAKE);
        cfx_tensor *c = cfx_op_clone(NULL, args[0].u.t, cfx_none());
        if (fake)
            cfx_mode_set(fake, CFX_MODE_FAKE);
        if (!c) {
            *rc = CFX_ERR;
            return false;
        }
        consts[0] = cfx_tensor_value(c);
        return true;
    }
    if (p->seeded || !f.all || !f.any)
        return false;
    *rc = cfx_proxy_run_on_constants(pm, p, args, consts);
    return *rc == CFX_OK;
}
