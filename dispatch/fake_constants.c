/* fake_constants.c - FakeTensor.constant (torch/_subclasses/fake_tensor.py, PyTorch 2.13).
 *
 * A fake tensor known to hold a small real value (at most CONSTANT_NUMEL_LIMIT elements)
 * carries that value as a real tensor, bound to it under the mode's const_owner (tensor_ext.h):
 * the fake mode can then answer what fake tensors cannot, item() above all. Constants start
 * at literals (a lift of a real tensor, torch.tensor()) and at ops taking Python numbers as
 * tensors called on real tensors only; an op whose fake arguments all carry one runs on the
 * constants for real and its small results are constants too; an op writing to a constant
 * without that drops it. fake_dispatch.c decides when; this file holds the constants and runs
 * the real calls.
 *
 * A view of a constant gets no constant, so constants never alias one another: 2.13 drops the
 * constants of every view of a storage written to (constant_storage_mapping), which cfx then
 * needs no registry for; the price is that item() of a view of a literal is refused where
 * 2.13 answers it. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/scope.h"

enum { CONSTANT_NUMEL_LIMIT = 1 };

static void release_constant(void *t) { cfx_tensor_release(t); }

cfx_tensor *cfx_fake_tensor_constant(const cfx_tensor *t)
{
    return cfx_tensor_is_fake(t) ? cfx_fake_constant_of((const cfx_fake_mode *)t->ext.mode, t) : NULL;
}

/* FakeTensorMode.may_turn_const */
static bool may_turn_const(const cfx_tensor *t)
{
    return cfx_tensor_numel(t) <= CONSTANT_NUMEL_LIMIT && !cfx_tensor_is_fake(t) && !cfx_tensor_is_meta(t);
}

/* from_real_tensor(real, make_constant=True): a new fake of real with real as its constant
 * (owned like a new tensor). */
static cfx_tensor *constant_fake(cfx_fake_mode *m, cfx_tensor *real)
{
    cfx_tensor *f = cfx_fake_from_real_unmemoized(m, real);
    if (!f)
        return NULL;
    int rc = cfx_tensor_binding_set(f, m->const_owner, cfx_tensor_retain(real), release_constant);
    if (rc != CFX_OK) {
        cfx_tensor_release(real);
        if (cfx_scope_depth() == 0)
            cfx_tensor_release(f);
        return NULL;
    }
    m->constants_made = true;
    return f;
}

cfx_tensor *cfx_fake_to_constant(void *vctx, cfx_tensor *t)
{
    cfx_tensor *c = cfx_fake_constant_of(vctx, t);
    return c ? c : t;
}

/* The results of a call on constants (real tensors, scalars) as the call's results: a tensor
 * that is the constant of a fake argument is that argument (an in-place op), any other a new
 * constant fake. false: some result cannot be a constant (too big, a list), nothing done. */
static bool wrap_constants(cfx_fake_mode *m, const cfx_schema *s, cfx_value *results, const cfx_value *args,
                           int *rc)
{
    *rc = CFX_OK;
    for (int i = 0; i < s->n_returns; i++) {
        if (results[i].kind == CFX_V_LIST || results[i].kind == CFX_V_TUPLE)
            return false;
        cfx_tensor *t = results[i].kind == CFX_V_TENSOR ? results[i].u.t : NULL;
        if (t && !may_turn_const(t))
            return false;
        /* a view of an argument's constant is no constant: constants never alias one another,
         * so dropping a written one's needs no search for its views */
        for (int j = 0; t && j < s->n_args; j++) {
            cfx_tensor *c = args[j].kind == CFX_V_TENSOR ? cfx_fake_constant_of(m, args[j].u.t) : NULL;
            if (c && c != t && c->storage == t->storage)
                return false;
        }
    }
    for (int i = 0; i < s->n_returns && *rc == CFX_OK; i++) {
        cfx_tensor *t = results[i].kind == CFX_V_TENSOR ? results[i].u.t : NULL;
        if (!t)
            continue;
        cfx_tensor *input = NULL;
        for (int j = 0; j < s->n_args && !input; j++)
            if (args[j].kind == CFX_V_TENSOR && args[j].u.t && cfx_fake_constant_of(m, args[j].u.t) == t)
                input = args[j].u.t;
        cfx_tensor *f = input ? input : constant_fake(m, t);
        if (!f)
            *rc = CFX_ERR;
        else
            results[i].u.t = input ? f : cfx_tensor_retain(f); /* made in the caller's scope */
    }
    return true;
}

/* Runs op for real on stack (real tensors: the fake mode is off the mode stack while it
 * handles a call) in a scope of its own, and when every result can be a constant replaces
 * them by their fakes. Returns true when the call is answered (*rc its status). args: the
 * call's arguments as the caller sees them (to map in-place results back). */
bool cfx_fake_answer_with_constants(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack, const cfx_value *args,
                                  int *rc)
{
    const cfx_schema *s = cfx_op_schema(op);
    cfx_scope scope = cfx_scope_begin();
    *rc = cfx_mode_redispatch(op, stack);
    bool answered = *rc != CFX_OK || wrap_constants(m, s, stack, args, rc);
    cfx_scope_end(scope);
    if (answered && *rc == CFX_OK) /* new fakes were retained past the scope: now the caller's */
        for (int i = 0; i < s->n_returns; i++)
            if (stack[i].kind == CFX_V_TENSOR && stack[i].u.t) {
                bool input = false;
                for (int j = 0; j < s->n_args && !input; j++)
                    input = args[j].kind == CFX_V_TENSOR && args[j].u.t == stack[i].u.t;
                if (!input)
                    cfx_autorelease(stack[i].u.t);
            }
    return answered;
}

/* A lift of a real tensor (torch.tensor()): its value as a constant fake when small, else the
 * converter's (memoized) fake of the argument. */
int cfx_fake_lift_real(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack)
{
    cfx_tensor *arg = stack[0].u.t;
    cfx_scope scope = cfx_scope_begin();
    cfx_value st[1] = {stack[0]}; /* a lift: one argument, one result */
    int rc = cfx_mode_redispatch(op, st);
    cfx_tensor *f = NULL;
    if (rc == CFX_OK && st[0].kind == CFX_V_TENSOR && st[0].u.t && may_turn_const(st[0].u.t)) {
        /* out.clone(): the constant must not be the caller's tensor (lift_fresh returns it) */
        cfx_op *clone = cfx_op_lookup("aten::clone");
        cfx_value cl[2] = {st[0], cfx_none()};
        if (!clone)
            rc = cfx_error_set(CFX_ERR, cfx_op_name(op), "aten::clone is not defined");
        else if (cfx_op_call(clone, cl, 1, 2) != CFX_OK || cl[0].kind != CFX_V_TENSOR)
            rc = CFX_ERR;
        f = rc == CFX_OK ? constant_fake(m, cl[0].u.t) : NULL;
        if (f)
            cfx_tensor_retain(f);
        else
            rc = CFX_ERR;
    }
    cfx_scope_end(scope);
    if (rc != CFX_OK)
        return rc;
    if (f) {
        stack[0] = cfx_tensor_value(cfx_autorelease(f));
        return CFX_OK;
    }
    f = cfx_fake_from_tensor(m, arg);
    if (!f)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(f);
    return CFX_OK;
}

/* invalidate_written_to_constants: a fake argument the op writes loses its constant (its new
 * value is not known when the call was not answered with constants). */
void cfx_fake_invalidate_written(const cfx_fake_mode *m, const cfx_schema *s, const cfx_value *stack)
{
    if (!s->is_mutable)
        return;
    for (int i = 0; i < s->n_args; i++)
        if (cfx_argument_is_write(&s->args[i]) && stack[i].kind == CFX_V_TENSOR && cfx_fake_constant_of(m, stack[i].u.t))
            cfx_tensor_binding_clear(stack[i].u.t, m->const_owner);
}
