/* functional_mode.c - the functional mode and torch.func.functionalize's wrapper around a call.
 *
 * The mode occupies the FUNCTIONAL slot of the thread's mode stack (FunctionalTensorMode's
 * place in 2.13's infra modes). Its presence is what "functionalization is on" means here:
 * cfx_functionalize_begin sets it and includes the Functionalize key, so every op of the call,
 * factories included, reaches the functionalization kernel first; the kernel (functionalize.c)
 * asks the current mode for its effect tokens. A call that gets to the mode through the Python
 * key has already been functionalized (or has no functional argument), so the mode passes it
 * on to the modes below.
 *
 * The wrapper follows torch._functorch.eager_transforms.functionalize: wrap the tensor inputs,
 * run, unwrap the outputs after syncing them, sync the inputs, and for each input whose value
 * changed copy the final value into the caller's tensor (_propagate_functional_input_mutation)
 * with functionalization already off, so a tracer records `copy_(x_1, add_1)` last. */
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/effects.h"
#include "dispatch/error.h"
#include "dispatch/functional_internal.h"
#include "dispatch/scope.h"

struct cfx_functional_mode {
    cfx_mode base; /* first: the mode is its own cfx_mode */
    bool tokens_on, allow_discovery;
    cfx_tensor *tokens[CFX_EFFECT_NUM_TYPES]; /* retained (functional wrappers) */
};

static int functional_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)self;
    (void)ks;
    return cfx_mode_redispatch(op, stack);
}

static void functional_destroy(cfx_mode *m)
{
    cfx_functional_mode *fm = (cfx_functional_mode *)m;
    for (int i = 0; i < CFX_EFFECT_NUM_TYPES; i++)
        cfx_tensor_release(fm->tokens[i]);
    cfx_free(m);
}

static const cfx_mode_vtable functional_vt = {"FunctionalTensorMode", functional_dispatch, functional_destroy};

cfx_functional_mode *cfx_functional_mode_new(void)
{
    cfx_functional_mode *m = cfx_calloc(1, sizeof *m);
    if (!m) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_mode_init(&m->base, &functional_vt, CFX_MODE_FUNCTIONAL);
    return m;
}

cfx_mode *cfx_functional_mode_base(cfx_functional_mode *m) { return m ? &m->base : NULL; }

cfx_functional_mode *cfx_functional_mode_from_base(cfx_mode *m)
{
    return m && m->vt == &functional_vt ? (cfx_functional_mode *)m : NULL;
}

cfx_functional_mode *cfx_functional_mode_current(void)
{
    return cfx_functional_mode_from_base(cfx_mode_get(CFX_MODE_FUNCTIONAL));
}

void cfx_functional_mode_enable_tokens(cfx_functional_mode *m, bool allow_discovery)
{
    if (m) {
        m->tokens_on = true;
        m->allow_discovery = allow_discovery;
    }
}

bool cfx_functional_mode_tokens_on(const cfx_functional_mode *m) { return m && m->tokens_on; }
bool cfx_functional_mode_allow_token_discovery(const cfx_functional_mode *m) { return m && m->allow_discovery; }

cfx_tensor *cfx_functional_mode_token(const cfx_functional_mode *m, int e)
{
    return m && e >= 0 && e < CFX_EFFECT_NUM_TYPES ? m->tokens[e] : NULL;
}

int cfx_functional_mode_set_token(cfx_functional_mode *m, int e, cfx_tensor *token)
{
    if (!m || e < 0 || e >= CFX_EFFECT_NUM_TYPES)
        return cfx_error_set(CFX_ERR, NULL, "functional mode: invalid effect type %d", e);
    cfx_tensor_retain(token);
    cfx_tensor_release(m->tokens[e]);
    m->tokens[e] = token;
    return CFX_OK;
}

void cfx_functional_mode_free(cfx_functional_mode *m)
{
    if (m)
        cfx_mode_release(&m->base);
}

int cfx_functionalize_begin(cfx_functionalize_call *c, cfx_value *args, int n)
{
    *c = (cfx_functionalize_call){0};
    if (n < 0 || n > CFX_FUNCTIONALIZE_MAX_ARGS || (n > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "functionalize: bad arguments (%d values)", n);
    if (cfx_scope_depth() == 0)
        return cfx_error_set(CFX_ERR, NULL, "functionalize: call it with an autorelease scope open (cfx_scope_begin)");
    cfx_dispatcher_init();
    for (int i = 0; i < n; i++) {
        c->orig[i] = args[i];
        if (args[i].kind == CFX_V_TENSOR && args[i].u.t && !(args[i].u.t = cfx_functional_wrap(args[i].u.t)))
            return CFX_ERR;
        c->wrapped[i] = args[i];
    }
    c->n = n;
    if (!(c->mode = cfx_functional_mode_new()))
        return CFX_ERR;
    if (cfx_mode_set(&c->mode->base, CFX_MODE_FUNCTIONAL) != CFX_OK) {
        cfx_functional_mode_free(c->mode);
        c->mode = NULL;
        return CFX_ERR;
    }
    c->mode_set = true;
    cfx_include_keys_begin(&c->keys, cfx_keyset_of(CFX_KEY_Functionalize));
    c->keys_set = true;
    return CFX_OK;
}

static void turn_off(cfx_functionalize_call *c)
{
    if (c->keys_set)
        cfx_key_guard_end(&c->keys);
    if (c->mode_set)
        cfx_mode_exit(&c->mode->base);
    cfx_functional_mode_free(c->mode);
    c->keys_set = c->mode_set = false;
    c->mode = NULL;
}

int cfx_functionalize_end(cfx_functionalize_call *c, cfx_value *rets, int n_rets, bool ok)
{
    int rc = ok ? CFX_OK : CFX_ERR;
    for (int i = 0; rc == CFX_OK && i < n_rets; i++)
        if (rets[i].kind == CFX_V_TENSOR && cfx_tensor_is_functional(rets[i].u.t)) {
            rc = cfx_functional_sync(rets[i].u.t);
            rets[i].u.t = cfx_functional_value(rets[i].u.t);
        }
    for (int i = 0; rc == CFX_OK && i < c->n; i++)
        if (c->wrapped[i].kind == CFX_V_TENSOR)
            rc = cfx_functional_sync(c->wrapped[i].u.t);
    turn_off(c);
    cfx_op *copy = rc == CFX_OK ? cfx_op_find("aten::copy_") : NULL;
    for (int i = 0; rc == CFX_OK && i < c->n; i++) {
        if (c->wrapped[i].kind != CFX_V_TENSOR || !cfx_tensor_is_functional(c->wrapped[i].u.t))
            continue;
        cfx_tensor *v = cfx_functional_value(c->wrapped[i].u.t);
        if (v == c->orig[i].u.t)
            continue;
        cfx_value stack[3] = {c->orig[i], cfx_tensor_value(v)};
        rc = cfx_op_call(copy, stack, 2, 3);
    }
    return rc;
}
