/* crossref.c - the Python-dispatcher switches and make_crossref_functionalize (crossref.h).
 *
 * The check follows torch/_dispatch/python.py of 2.13: the fake half and the comparison are
 * fake_check.c's (shared with opcheck); what is crossref functionalize's own is that the real
 * half runs through functionalization and the op is named as str(OpOverload) prints it. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/crossref.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake_check_internal.h"
#include "dispatch/functional_internal.h"

static _Thread_local bool crossref_on;

static void set_included(cfx_key_guard *g, cfx_dispatch_key k, bool on)
{
    g->saved = cfx_local_keys_get();
    cfx_local_keys l = g->saved;
    l.included = on ? cfx_keyset_add(l.included, k) : cfx_keyset_minus(l.included, cfx_keyset_of(k));
    cfx_local_keys_set(l);
}

void cfx_python_dispatcher_enable_begin(cfx_key_guard *g) { set_included(g, CFX_KEY_PythonDispatcher, true); }
void cfx_python_dispatcher_disable_begin(cfx_key_guard *g) { set_included(g, CFX_KEY_PythonDispatcher, false); }
void cfx_pre_dispatch_enable_begin(cfx_key_guard *g) { set_included(g, CFX_KEY_PreDispatch, true); }

bool cfx_python_dispatcher_enabled(void)
{
    cfx_local_keys l = cfx_local_keys_get();
    return cfx_keyset_has(l.included, CFX_KEY_PythonDispatcher) && !cfx_keyset_has(l.excluded, CFX_KEY_PythonDispatcher);
}

void cfx_crossref_functionalize_begin(cfx_crossref_guard *g)
{
    cfx_python_dispatcher_enable_begin(&g->keys);
    g->was_on = crossref_on;
    crossref_on = true;
}

void cfx_crossref_functionalize_end(cfx_crossref_guard *g)
{
    crossref_on = g->was_on;
    cfx_key_guard_end(&g->keys);
}

bool cfx_crossref_functionalize_active(void) { return crossref_on && cfx_python_dispatcher_enabled(); }

static int crossref_call(const cfx_op *op, cfx_value *stack)
{
    const cfx_schema *s = cfx_op_schema(op);
    int n = s->n_args > s->n_returns ? s->n_args : s->n_returns;
    if (n > CFX_FAKE_CHECK_MAX_STACK)
        return cfx_functionalize_call_op(op, stack);
    cfx_value fake_args[CFX_FAKE_CHECK_MAX_STACK], f_r[CFX_FAKE_CHECK_MAX_STACK];
    cfx_fake_mode *fm = NULL;
    int rc = cfx_fake_check_run_fake(op, stack, fake_args, f_r, &fm);
    if (rc == CFX_OK)
        rc = cfx_functionalize_call_op(op, stack);
    if (rc == CFX_OK)
        rc = cfx_fake_check_compare(op, fake_args, f_r, stack, CFX_CALL_NAME_PYTHON);
    cfx_fake_mode_free(fm);
    return rc;
}

int cfx_functionalize_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)ks;
    /* "This case is pretty weird, suppress it for now" (the seed): lift_fresh is not checked */
    if (cfx_crossref_functionalize_active() && strcmp(cfx_op_name(op), "aten::lift_fresh") != 0)
        return crossref_call(op, stack);
    return cfx_functionalize_call_op(op, stack);
}
