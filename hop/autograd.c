/* autograd.c - grad mode, requires_grad and autograd_not_implemented for HOPs.
 *
 * See autograd.h. The per-tensor record is a tensor binding under one process-wide owner id
 * (allocated on first use), holding requires_grad and the delayed error message. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor_ext.h"
#include "hop/autograd.h"
#include "hop/hop_internal.h"

typedef struct grad_info {
    bool requires_grad;
    char *delayed_error;
} grad_info;

static _Thread_local bool grad_disabled;
static atomic_uint_fast64_t owner_id;

static uint64_t owner(void)
{
    uint64_t o = atomic_load(&owner_id);
    if (o)
        return o;
    uint64_t fresh = cfx_binding_owner_new();
    uint_fast64_t expected = 0;
    return atomic_compare_exchange_strong(&owner_id, &expected, fresh) ? fresh : expected;
}

bool cfx_grad_mode_enabled(void) { return !grad_disabled; }

bool cfx_grad_mode_set(bool enabled)
{
    bool old = !grad_disabled;
    grad_disabled = !enabled;
    return old;
}

static void info_free(void *p)
{
    grad_info *g = p;
    if (g)
        cfx_free(g->delayed_error);
    cfx_free(g);
}

static const grad_info *info_of(const cfx_tensor *t)
{
    return t ? cfx_tensor_binding_get(t, owner()) : NULL;
}

static grad_info *info_for(cfx_tensor *t)
{
    grad_info *g = cfx_tensor_binding_get(t, owner());
    if (g)
        return g;
    g = cfx_calloc(1, sizeof *g);
    if (!g) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (cfx_tensor_binding_set(t, owner(), g, info_free) != CFX_OK) {
        cfx_free(g);
        return NULL;
    }
    return g;
}

bool cfx_tensor_requires_grad(const cfx_tensor *t)
{
    const grad_info *g = info_of(t);
    return g && g->requires_grad;
}

static bool differentiable(const cfx_tensor *t)
{
    cfx_dtype d = (cfx_dtype)t->dtype;
    return cfx_dtype_is_floating(d); /* cfx has no complex dtypes */
}

int cfx_tensor_set_requires_grad(cfx_tensor *t, bool requires_grad)
{
    if (!t)
        return cfx_error_set(CFX_ERR, NULL, "requires_grad_: NULL tensor");
    if (requires_grad && !differentiable(t))
        return cfx_error_set(CFX_ERR, NULL, "only Tensors of floating point and complex dtype can require gradients");
    if (!requires_grad && !info_of(t))
        return CFX_OK;
    grad_info *g = info_for(t);
    if (!g)
        return CFX_ERR;
    g->requires_grad = requires_grad;
    return CFX_OK;
}

const char *cfx_tensor_delayed_error(const cfx_tensor *t)
{
    const grad_info *g = info_of(t);
    return g ? g->delayed_error : NULL;
}

int cfx_backward(cfx_tensor *t)
{
    if (!t)
        return cfx_error_set(CFX_ERR, NULL, "backward: NULL tensor");
    const grad_info *g = info_of(t);
    if (g && g->delayed_error)
        return cfx_error_set_text(CFX_ERR, NULL, g->delayed_error);
    if (!g || !g->requires_grad)
        return cfx_error_set(CFX_ERR, NULL, "element 0 of tensors does not require grad and does not have a grad_fn");
    return cfx_error_set(CFX_ERR_NOTIMPL, NULL, "cfx has no autograd engine: backward is not supported");
}

cfx_keyset cfx_autograd_keyset(void)
{
    cfx_keyset ks = cfx_keyset_or(cfx_keyset_of(CFX_KEY_AutogradOther), cfx_keyset_of(CFX_KEY_AutogradNestedTensor));
    return cfx_keyset_or(ks, cfx_keyset_of(CFX_KEY_AutogradCPU)); /* the functionality bit covers all backends */
}

static bool any_requires_grad(const cfx_value *v, int n, int depth)
{
    for (int i = 0; i < n; i++) {
        if (v[i].kind == CFX_V_TENSOR && cfx_tensor_requires_grad(v[i].u.t))
            return true;
        if ((v[i].kind == CFX_V_LIST || v[i].kind == CFX_V_TUPLE) && depth < 32 &&
            any_requires_grad(v[i].u.items, (int)v[i].len, depth + 1))
            return true;
    }
    return false;
}

static bool is_argument(cfx_tensor *t, const cfx_value *v, int n, int depth)
{
    for (int i = 0; i < n; i++) {
        if (v[i].kind == CFX_V_TENSOR && v[i].u.t == t)
            return true;
        if ((v[i].kind == CFX_V_LIST || v[i].kind == CFX_V_TUPLE) && depth < 32 &&
            is_argument(t, v[i].u.items, (int)v[i].len, depth + 1))
            return true;
    }
    return false;
}

typedef struct mark_ctx {
    const char *msg;
    const cfx_value *args;
    int n_args;
} mark_ctx;

/* DelayedError(msg)(t): a new tensor aliasing t that fails on backward. */
static cfx_tensor *mark(cfx_tensor *t, void *p)
{
    mark_ctx *m = p;
    cfx_tensor *r = t;
    if (is_argument(t, m->args, m->n_args, 0) || info_of(t)) {
        r = cfx_autorelease(cfx_tensor_new_view(t, t->sizes, t->strides, t->ndim, t->storage_offset));
        if (!r)
            return NULL;
    }
    grad_info *g = info_for(r);
    if (!g)
        return NULL;
    cfx_free(g->delayed_error);
    if (!(g->delayed_error = cfx_strdup(m->msg))) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    g->requires_grad = differentiable(r);
    return r;
}

static int not_implemented(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)mode;
    bool deferred = ctx != NULL;
    cfx_key_guard g; /* _AutoDispatchBelowAutograd */
    cfx_exclude_keys_begin(&g, cfx_autograd_keyset());
    int rc = cfx_hop_call(hop, args, n, out);
    cfx_key_guard_end(&g);
    if (rc != CFX_OK)
        return rc;
    if (!cfx_grad_mode_enabled() || !any_requires_grad(args, n, 0))
        return CFX_OK;
    if (!deferred)
        return cfx_error_set(CFX_ERR, NULL, "Autograd not implemented for %s", cfx_hop_name(hop));
    char msg[200];
    snprintf(msg, sizeof msg, "Autograd not implemented for %s", cfx_hop_name(hop));
    mark_ctx m = {msg, args, n};
    cfx_value in = *out;
    return hop_map_tensors(&in, 1, out, mark, &m);
}

int cfx_hop_autograd_not_implemented(cfx_hop *hop, bool deferred_error)
{
    static int deferred_tag;
    return cfx_hop_py_impl(hop, CFX_KEY_Autograd, not_implemented, deferred_error ? &deferred_tag : NULL);
}
