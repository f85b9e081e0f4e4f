/* python_fallback.c - the backend fallbacks of the Python and PythonTLSSnapshot keys
 * (aten/src/ATen/core/PythonFallbackKernel.cpp), i.e. where a call is handed to the modes.
 *
 * PythonTLSSnapshot sits above autograd; its fallback records the thread's local key sets as
 * they were when the call entered (once per entry from user code) and redispatches below
 * itself. A handler may later restore that snapshot (cfx_tls_snapshot_restore_begin).
 *
 * Python sits just above the backends; its fallback is pythonFallback:
 *  1. for the duration, exclude every key strictly above Python except PythonDispatcher, so
 *     whatever a handler calls starts at Python or below (autograd and friends already ran):
 *     2.13's after_Python_keyset, Conjugate/Negative/ZeroTensor included (earlier 2.x releases
 *     removed those three from the exclusion; 2.13 excludes them, as 1.13 did);
 *  2. with a mode set, run the top mode's handler with it popped (mode.c);
 *  3. else, the first tensor argument that belongs to a mode (a fake tensor, tensor_ext.h)
 *     enters that mode for one call: `with fake_mode: return func(*args)`;
 *  4. else fail with PyTorch's internal-assert message.
 *
 * Both are registered with the dispatcher's default fallbacks (fallbacks.c). */
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/keys_internal.h"
#include "dispatch/library.h"
#include "dispatch/mode.h"
#include "dispatch/mode_internal.h"
#include "dispatch/operator.h"
#include "dispatch/operator_internal.h"
#include "dispatch/tensor_ext.h"
#include "dispatch/wrapped_internal.h"

/* The snapshot: the local key sets when the outermost call entered PythonTLSSnapshot. */
static _Thread_local cfx_local_keys tls_on_entry;
static _Thread_local bool tls_on_entry_set;

/* The mode of the first tensor (or tensor-list element) argument that has one. */
static cfx_mode *tensor_arg_mode(const cfx_op *op, const cfx_value *stack)
{
    const cfx_schema *s = cfx_op_schema(op);
    if (!s)
        return NULL;
    for (int i = 0; i < s->n_args; i++) {
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR) {
            if (cfx_tensor_mode(v->u.t))
                return cfx_tensor_mode(v->u.t);
        } else if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && cfx_tensor_mode(v->u.items[j].u.t))
                    return cfx_tensor_mode(v->u.items[j].u.t);
        }
    }
    return NULL;
}

int cfx_python_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    /* a mode is handed the numbers, not their wrapped tensors (toPyObject) */
    if (op->schema)
        cfx_unwrap_numbers(op->schema, stack);
    /* steps 1 and 2: with a mode set, the top mode's handler, keys above Python excluded */
    if (cfx_mode_any_set())
        return cfx_mode_call_top(CFX_MODE_ABOVE_PYTHON_KEYS, op, ks, stack);
    /* step 3 (or 4): a tensor argument's own mode, entered for this one call (the tensor holds
     * it alive; pushing cannot collide since the stack is empty) */
    cfx_mode *m = tensor_arg_mode(op, stack);
    if (!m)
        return cfx_error_set(CFX_ERR, cfx_op_name(op),
                             "Hit Python dispatch key but no arguments had PyInterpreter (no tensor args?)");
    return cfx_mode_call_entered(m, CFX_MODE_ABOVE_PYTHON_KEYS, op, stack);
}

int cfx_python_tls_snapshot_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    ks = cfx_keyset_and(ks, CFX_KEYS_FULL_AFTER_FUNCTIONALITY(CFX_KEY_PythonTLSSnapshot));
    /* MaybeSetTLSOnEntryGuard: nested dispatcher calls keep the outermost snapshot */
    if (tls_on_entry_set)
        return cfx_dispatch_redispatch(op, ks, stack);
    tls_on_entry = cfx_keys_local();
    tls_on_entry_set = true;
    int rc = cfx_dispatch_redispatch(op, ks, stack);
    tls_on_entry_set = false;
    return rc;
}

int cfx_tls_snapshot_restore_begin(cfx_tls_snapshot_guard *g)
{
    g->active = false;
    if (!tls_on_entry_set)
        return cfx_error_set(CFX_ERR, NULL,
                             "Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.");
    g->saved_keys = cfx_keys_local();
    g->saved_entry = tls_on_entry;
    g->active = true;
    /* The snapshot is consumed while restored, so calls made now record their own. */
    tls_on_entry_set = false;
    cfx_keys_set_local(g->saved_entry);
    return CFX_OK;
}

void cfx_tls_snapshot_restore_end(cfx_tls_snapshot_guard *g)
{
    if (!g->active)
        return;
    cfx_keys_set_local(g->saved_keys);
    tls_on_entry = g->saved_entry;
    tls_on_entry_set = true;
    g->active = false;
}
