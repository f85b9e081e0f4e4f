/* callable_context.c - a function called inside a context manager.
 *
 * Dynamo traces `with torch.no_grad(): f(x)` by entering the context, inlining f, and exiting
 * on every path out, including an exception (ContextWrappingVariable). In C the context is a
 * pair of hooks: enter may refuse (then f is not called), exit runs after every call that
 * entered, whether f failed or not, so the thread's state (a dispatch-key guard, a flag) is
 * what it was before the call. The first error stays the one reported: an exit hook runs
 * after a failure without masking it. */
#include <stdlib.h>

#include "dispatch/error.h"
#include "tracer/callable_internal.h"

typedef struct context {
    cfx_callable *inner;
    cfx_context_hooks hooks;
    void *ctx;
    cfx_keyset keys; /* cfx_callable_exclude_keys' guard */
} context;

static int context_call_args(cfx_callable *c, const cfx_value *args, int n_args, const cfx_kwarg *kwargs,
                             int n_kwargs, cfx_value *out)
{
    context *w = c->data;
    void *state = NULL;
    if (w->hooks.enter) {
        int rc = w->hooks.enter(w->ctx, &state);
        if (rc != CFX_OK)
            return cfx_error_occurred() ? cfx_error_status()
                                        : cfx_error_set(CFX_ERR, NULL, "%s: entering the context failed",
                                                        c->schema->name);
    }
    int rc = cfx_callable_call(w->inner, args, n_args, kwargs, n_kwargs, out);
    if (w->hooks.exit)
        w->hooks.exit(w->ctx, state);
    return rc;
}

static void context_destroy(cfx_callable *c)
{
    context *w = c->data;
    if (w)
        cfx_callable_release(w->inner);
    cfx_free(w);
}

static const callable_kind context_kind = {NULL, context_destroy, context_call_args};

static cfx_callable *wrap(cfx_callable *fn, const cfx_context_hooks *hooks, void *ctx, cfx_keyset keys)
{
    if (!fn || !hooks) {
        cfx_error_set(CFX_ERR, NULL, "cfx_callable_with_context: NULL function or hooks");
        return NULL;
    }
    context *w = cfx_calloc(1, sizeof *w);
    cfx_schema *s = w ? cfx_callable_copy_schema(fn->schema) : NULL;
    if (!s) {
        cfx_free(w);
        if (!cfx_error_occurred())
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_callable *c = cfx_callable_make_schema(&context_kind, NULL, s);
    if (!c) {
        cfx_free(w);
        return NULL;
    }
    *w = (context){cfx_callable_retain(fn), *hooks, ctx, keys};
    w->ctx = ctx ? ctx : w; /* the key guard's context is the wrapper itself */
    c->data = w;
    return c;
}

cfx_callable *cfx_callable_with_context(cfx_callable *fn, const cfx_context_hooks *hooks, void *ctx)
{
    return wrap(fn, hooks, ctx, cfx_keyset_empty());
}

/* ExcludeDispatchKeyGuard as a context: the guard's saved sets travel as the exit state. */
static int exclude_enter(void *ctx, void **state)
{
    cfx_key_guard *g = cfx_malloc(sizeof *g);
    if (!g)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_exclude_keys_begin(g, ((context *)ctx)->keys);
    *state = g;
    return CFX_OK;
}

static void exclude_exit(void *ctx, void *state)
{
    (void)ctx;
    cfx_key_guard_end(state);
    cfx_free(state);
}

cfx_callable *cfx_callable_exclude_keys(cfx_callable *fn, cfx_keyset keys)
{
    static const cfx_context_hooks hooks = {exclude_enter, exclude_exit};
    return wrap(fn, &hooks, NULL, keys);
}
