/* functional_views.c - replaying views and undoing them (ViewMeta, FunctionalInverses.cpp).
 *
 * Functionalization remembers every view op taken from a base (op + its arguments) so that it
 * can recompute the view from an updated base (forward), and knows for each view op how to
 * write a mutated view back into its base (inverse). PyTorch generates both per view op; cfx
 * keeps the forward generic (the op itself, called again with the saved arguments) and the
 * inverses in one table keyed by the op's name, in their reapply-views form (the inverse is
 * itself a view op, as make_fx(functionalize(f)) records them with remove='mutations'):
 *   view(size)       -> view(mutated, base.sizes)
 *   t                -> t(mutated)
 *   transpose(d0,d1) -> transpose(mutated, d0, d1)
 *   unsqueeze(d)     -> squeeze.dim(mutated, d)
 *   squeeze.dim(d)   -> unsqueeze(mutated, d)
 *   permute(dims)    -> permute(mutated, argsort(dims))
 * The ops are looked up by name when used, so a row works as soon as its op is in the table.
 * A view op without a row gives an error naming it rather than a wrong graph. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/functional_internal.h"
#include "dispatch/schema.h"

static void free_value(cfx_value *v)
{
    if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
        cfx_value *items = (cfx_value *)v->u.items;
        for (uint32_t i = 0; i < v->len; i++)
            free_value(&items[i]);
        cfx_free(items);
    } else if (v->kind == CFX_V_STRING) {
        cfx_free((char *)v->u.s);
    } else if (v->kind == CFX_V_TENSOR) {
        cfx_tensor_release(v->u.t);
    }
    *v = cfx_none();
}

/* A deep copy that owns its lists and strings and retains its tensors (their unwrapped
 * values: a view's arguments are replayed below functionalization). */
static int copy_value(cfx_value in, cfx_value *out)
{
    *out = in;
    if (in.kind == CFX_V_LIST || in.kind == CFX_V_TUPLE) {
        cfx_value *items = cfx_calloc(in.len ? in.len : 1, sizeof *items);
        if (!items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        out->u.items = items;
        for (uint32_t i = 0; i < in.len; i++)
            if (copy_value(in.u.items[i], &items[i]) != CFX_OK) {
                out->len = i;
                free_value(out);
                return CFX_ERR_NOMEM;
            }
    } else if (in.kind == CFX_V_STRING) {
        if (!(out->u.s = cfx_strdup(in.u.s)))
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    } else if (in.kind == CFX_V_TENSOR && in.u.t) {
        out->u.t = cfx_tensor_retain(cfx_functional_value(in.u.t));
    }
    return CFX_OK;
}

cfx_fview *cfx_fview_new(const cfx_op *op, const cfx_value *stack, int n)
{
    cfx_fview *v = cfx_calloc(1, sizeof *v);
    cfx_value *args = cfx_calloc((size_t)(n > 0 ? n : 1), sizeof *args);
    if (!v || !args) {
        cfx_free(v);
        cfx_free(args);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    v->refcount = 1;
    v->op = op;
    v->args = args;
    for (int i = 1; i < n; i++) {
        if (copy_value(stack[i], &args[i]) != CFX_OK) {
            v->n_args = i;
            cfx_fview_release(v);
            return NULL;
        }
    }
    v->n_args = n;
    return v;
}

void cfx_fview_release(cfx_fview *v)
{
    if (!v || --v->refcount > 0)
        return;
    for (int i = 1; i < v->n_args; i++)
        free_value(&v->args[i]);
    cfx_free(v->args);
    cfx_free(v);
}

/* Calls the op named `name` on stack[0..n) and returns its first result. */
static cfx_tensor *call_named(const char *name, cfx_value *stack, int n)
{
    cfx_op *op = cfx_op_find(name);
    if (!op)
        return NULL;
    cfx_value full[16];
    if (n > 16) {
        cfx_error_set(CFX_ERR, NULL, "functionalization: too many arguments for %s", name);
        return NULL;
    }
    memcpy(full, stack, (size_t)n * sizeof *full);
    if (cfx_op_call(op, full, n, 16) != CFX_OK)
        return NULL;
    return full[0].kind == CFX_V_TENSOR ? full[0].u.t : NULL;
}

cfx_tensor *cfx_fview_forward(const cfx_fview *v, cfx_tensor *base)
{
    cfx_value stack[16];
    if (v->n_args > 16) {
        cfx_error_set(CFX_ERR, NULL, "functionalization: too many arguments for %s", cfx_op_name(v->op));
        return NULL;
    }
    stack[0] = cfx_tensor_value(base);
    memcpy(stack + 1, v->args + 1, (size_t)(v->n_args - 1) * sizeof *stack);
    cfx_key_guard g;
    cfx_functional_skip_begin(&g);
    int rc = cfx_op_dispatch_stack(v->op, stack);
    cfx_key_guard_end(&g);
    return rc == CFX_OK && stack[0].kind == CFX_V_TENSOR ? stack[0].u.t : NULL;
}

cfx_tensor *cfx_fview_inverse(const cfx_fview *v, cfx_tensor *base, cfx_tensor *mutated)
{
    const char *name = cfx_op_name(v->op);
    cfx_value s[4] = {cfx_tensor_value(mutated)};
    cfx_key_guard g;
    cfx_functional_skip_begin(&g);
    cfx_tensor *r = NULL;
    if (!strcmp(name, "aten::view")) {
        cfx_value sizes[CFX_MAX_DIMS];
        for (int i = 0; i < base->ndim; i++)
            sizes[i] = cfx_int(base->sizes[i]);
        s[1] = cfx_list(sizes, (uint32_t)base->ndim);
        r = call_named("aten::view", s, 2);
    } else if (!strcmp(name, "aten::t")) {
        r = call_named("aten::t", s, 1);
    } else if (!strcmp(name, "aten::transpose.int")) {
        s[1] = v->args[1];
        s[2] = v->args[2];
        r = call_named("aten::transpose.int", s, 3);
    } else if (!strcmp(name, "aten::unsqueeze")) {
        s[1] = v->args[1];
        r = call_named("aten::squeeze.dim", s, 2);
    } else if (!strcmp(name, "aten::squeeze.dim")) {
        s[1] = v->args[1];
        r = call_named("aten::unsqueeze", s, 2);
    } else if (!strcmp(name, "aten::permute") && v->args[1].kind == CFX_V_LIST &&
               v->args[1].len <= CFX_MAX_DIMS) {
        cfx_value inv[CFX_MAX_DIMS];
        uint32_t n = v->args[1].len;
        for (uint32_t i = 0; i < n; i++) {
            int64_t d = v->args[1].u.items[i].u.i;
            if (d < 0)
                d += n;
            if (d >= 0 && d < (int64_t)n)
                inv[d] = cfx_int((int64_t)i);
        }
        s[1] = cfx_list(inv, n);
        r = call_named("aten::permute", s, 2);
    } else {
        cfx_error_set(CFX_ERR, name,
                      "functionalization: cfx has no inverse for the view op %s, so a mutation through "
                      "this view cannot be written back to its base", name);
    }
    cfx_key_guard_end(&g);
    return r;
}
