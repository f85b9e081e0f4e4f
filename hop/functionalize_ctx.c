/* functionalize_ctx.c - the context a HOP's functionalize implementation receives.
 *
 * PyTorch's py_functionalize_impl hands the implementation a BaseFunctionalizeAPI whose
 * unwrap_tensors / wrap_tensors / redispatch_to_next differ by route: CppFunctionalizeAPI for
 * the Functionalize dispatch key (C++ functional tensor wrappers; redispatch excludes the key),
 * PythonFunctionalizeAPI for the functional mode (FunctionalTensor subclass; the mode is
 * already off the stack while the rule runs). The functionalization layer owns functional
 * tensors, so it installs the operations per route; hop/ only routes the calls. Until it does,
 * the defaults treat every value as already unwrapped, which is exactly right for a program
 * that holds no functional tensors. */
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/functional.h"
#include "dispatch/scope.h"
#include "hop/hop_internal.h"

static _Atomic(const cfx_functionalize_ops *) installed[2];

void cfx_functionalize_set_ops(cfx_functionalize_route route, const cfx_functionalize_ops *ops)
{
    if (route == CFX_FUNCTIONALIZE_KEY || route == CFX_FUNCTIONALIZE_MODE)
        atomic_store(&installed[route], ops);
}

void hop_functionalize_ctx_init(cfx_functionalize_ctx *c, cfx_functionalize_route route, cfx_mode *mode)
{
    memset(c, 0, sizeof *c);
    c->route = route;
    c->mode = route == CFX_FUNCTIONALIZE_MODE ? mode : NULL;
    c->ops = atomic_load(&installed[route == CFX_FUNCTIONALIZE_MODE]);
}

static int copy_values(const cfx_value *in, int n, cfx_value *out)
{
    if (n > 0 && (!in || !out))
        return cfx_error_set(CFX_ERR, NULL, "functionalize: NULL values");
    if (n > 0)
        memmove(out, in, (size_t)n * sizeof *out);
    return CFX_OK;
}

int cfx_functionalize_unwrap(cfx_functionalize_ctx *c, const cfx_value *in, int n, cfx_value *out)
{
    if (!c)
        return cfx_error_set(CFX_ERR, NULL, "functionalize: NULL context");
    return c->ops && c->ops->unwrap ? c->ops->unwrap(c, in, n, out) : copy_values(in, n, out);
}

int cfx_functionalize_wrap(cfx_functionalize_ctx *c, const cfx_value *in, int n, cfx_value *out)
{
    if (!c)
        return cfx_error_set(CFX_ERR, NULL, "functionalize: NULL context");
    return c->ops && c->ops->wrap ? c->ops->wrap(c, in, n, out) : copy_values(in, n, out);
}

int cfx_functionalize_redispatch_begin(cfx_functionalize_ctx *c)
{
    if (!c)
        return cfx_error_set(CFX_ERR, NULL, "functionalize: NULL context");
    if (c->ops && c->ops->redispatch_begin)
        return c->ops->redispatch_begin(c);
    if (c->route == CFX_FUNCTIONALIZE_KEY) /* _ExcludeDispatchKeyGuard(Functionalize) */
        cfx_exclude_keys_begin(&c->guard, cfx_keyset_of(CFX_KEY_Functionalize));
    return CFX_OK;
}

void cfx_functionalize_redispatch_end(cfx_functionalize_ctx *c)
{
    if (!c)
        return;
    if (c->ops && c->ops->redispatch_end) {
        c->ops->redispatch_end(c);
        return;
    }
    if (c->route == CFX_FUNCTIONALIZE_KEY && !(c->ops && c->ops->redispatch_begin))
        cfx_key_guard_end(&c->guard);
}

/* ---- value trees ------------------------------------------------------------------------ */

static int map_one(cfx_value in, cfx_value *out, hop_tensor_map_fn fn, void *ctx, int depth)
{
    if (cfx_value_tensor_or_token(in)) { /* a token stays a token */
        cfx_tensor *t = fn(in.u.t, ctx);
        if (!t)
            return CFX_ERR;
        *out = in;
        out->u.t = t;
        return CFX_OK;
    }
    if (cfx_value_is_container(in) && in.len > 0) { /* a dict too: its keys map to themselves */
        if (depth > 64)
            return cfx_error_set(CFX_ERR, NULL, "value nested too deeply");
        cfx_value *items = cfx_scope_alloc(in.len * sizeof *items);
        if (!items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; i < in.len; i++)
            if (map_one(in.u.items[i], &items[i], fn, ctx, depth + 1) != CFX_OK)
                return CFX_ERR;
        *out = in;
        out->u.items = items;
        return CFX_OK;
    }
    *out = in;
    return CFX_OK;
}

int hop_map_tensors(const cfx_value *in, int n, cfx_value *out, hop_tensor_map_fn fn, void *ctx)
{
    for (int i = 0; i < n; i++)
        if (map_one(in[i], &out[i], fn, ctx, 0) != CFX_OK)
            return CFX_ERR;
    return CFX_OK;
}

cfx_tensor *hop_functional_unwrap_one(cfx_tensor *t, void *ctx)
{
    (void)ctx;
    if (!cfx_tensor_is_functional(t))
        return t;
    return cfx_functional_sync(t) == CFX_OK ? cfx_functional_value(t) : NULL;
}

cfx_tensor *hop_functional_wrap_one(cfx_tensor *t, void *ctx)
{
    (void)ctx;
    return cfx_tensor_is_functional(t) ? t : cfx_functional_wrap(t);
}

int hop_functionalize_redispatch(cfx_hop *hop, cfx_functionalize_ctx *c, void *ctx, const cfx_value *args, int n,
                                 cfx_value *out)
{
    (void)ctx;
    cfx_value *un = cfx_scope_alloc((size_t)(n > 0 ? n : 1) * sizeof *un);
    if (!un)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (cfx_functionalize_unwrap(c, args, n, un) != CFX_OK || cfx_functionalize_redispatch_begin(c) != CFX_OK)
        return CFX_ERR;
    cfx_value r;
    int rc = cfx_hop_call(hop, un, n, &r);
    cfx_functionalize_redispatch_end(c);
    return rc == CFX_OK ? cfx_functionalize_wrap(c, &r, 1, out) : rc;
}
