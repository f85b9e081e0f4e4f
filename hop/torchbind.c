/* torchbind.c - the call_torchbind HOP and torchbind tracing (see torchbind.h).
 *
 * The rules are 2.13's torchbind.py, one function each. The proxy rule needs the node an
 * object stands for: make_fx hands every object argument to the hook below, which binds it to
 * its placeholder under the proxy mode's owner id (as tensors are bound, tensor_ext.h). */
#include <stdio.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/functional.h"
#include "dispatch/scope.h"
#include "hop/autograd.h"
#include "hop/class_internal.h"
#include "hop/fake_class.h"
#include "hop/hop_internal.h"
#include "hop/object_internal.h"
#include "hop/torchbind.h"
#include "ir/graph.h"
#include "ir/graph_module.h"
#include "ir/meta.h"
#include "tracer/make_fx.h"
#include "tracer/proxy.h"


static cfx_hop *call_torchbind;
static _Thread_local bool tracing;

static bool check_first(const cfx_value *args, int n, cfx_object **obj, const char **method)
{
    *obj = n > 0 ? cfx_value_object(args[0]) : NULL;
    *method = n > 1 && args[1].kind == CFX_V_STRING ? args[1].u.s : NULL;
    if (!*obj || ((*obj)->kind != CFX_OBJECT_SCRIPT && (*obj)->kind != CFX_OBJECT_FAKE_SCRIPT)) {
        cfx_error_set(CFX_ERR, NULL, "Unsupported first arg type <class '%s'> for call_torchbind",
                      n > 0 ? hop_python_type_name(args[0]) : "NoneType");
        return false;
    }
    if (!*method) {
        cfx_error_set(CFX_ERR, NULL, "call_torchbind: the second argument must be the method name (a string)");
        return false;
    }
    return true;
}

/* CompositeExplicitAutograd: the real method (a fake object's own method in fake_class.c). */
static int dense(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)mode;
    (void)ctx;
    cfx_object *obj;
    const char *method;
    if (!check_first(args, n, &obj, &method))
        return CFX_ERR;
    if (obj->kind == CFX_OBJECT_FAKE_SCRIPT)
        return hop_fake_object_call(obj, method, args + 2, n - 2, out);
    return cfx_script_object_call(obj, method, args + 2, n - 2, out);
}

static cfx_tensor *to_fake(cfx_tensor *t, void *fm)
{
    return cfx_tensor_fake_mode(t) ? t : cfx_fake_from_tensor(fm, t);
}

/* FakeTensorMode: run inside the mode, real tensor results made fake with static shapes. */
static int fake(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    cfx_object *obj;
    const char *method;
    if (!check_first(args, n, &obj, &method))
        return CFX_ERR;
    cfx_fake_mode *fm = cfx_fake_mode_from_base(mode);
    cfx_value *fargs = NULL;
    if (obj->kind == CFX_OBJECT_SCRIPT) { /* a real object never sees the fake trace */
        cfx_object *f = cfx_to_fake_obj(fm, obj);
        fargs = f ? cfx_scope_alloc((size_t)n * sizeof *fargs) : NULL;
        if (!fargs) {
            cfx_object_release(f);
            return cfx_error_occurred() ? CFX_ERR : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        }
        memcpy(fargs, args, (size_t)n * sizeof *fargs);
        fargs[0] = cfx_object_value(f);
        cfx_object_release(f); /* the real object's cache keeps it */
        args = fargs;
    }
    if (cfx_mode_push(mode) != CFX_OK)
        return CFX_ERR;
    int rc = dense(hop, NULL, ctx, args, n, out);
    cfx_mode_exit(mode);
    if (rc != CFX_OK)
        return rc;
    cfx_value in = *out;
    return hop_map_tensors(&in, 1, out, to_fake, fm);
}

static int map_arg(cfx_proxy_mode *pm, cfx_value in, cfx_value *out, int depth)
{
    *out = in;
    if (cfx_value_tensor_or_token(in)) {
        cfx_node *node = cfx_proxy_node_of(pm, in.u.t);
        if (!node)
            return CFX_ERR;
        *out = cfx_node_value(node);
    } else if (in.kind == CFX_V_OBJECT) {
        cfx_node *node = hop_object_node(in.u.obj, cfx_proxy_mode_owner(pm));
        if (!node && !(node = cfx_proxy_opaque_attr_node(pm, in, "_torchbind_obj")))
            return CFX_ERR;
        *out = cfx_node_value(node);
    } else if ((in.kind == CFX_V_LIST || in.kind == CFX_V_TUPLE) && in.len) {
        if (depth > 32)
            return cfx_error_set(CFX_ERR, NULL, "value nested too deeply");
        cfx_value *items = cfx_scope_alloc(in.len * sizeof *items);
        if (!items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; i < in.len; i++)
            if (map_arg(pm, in.u.items[i], &items[i], depth + 1) != CFX_OK)
                return CFX_ERR;
        out->u.items = items;
    }
    return CFX_OK;
}

cfx_value *hop_proxy_args(cfx_proxy_mode *pm, const cfx_value *args, int n)
{
    cfx_value *mapped = cfx_scope_alloc((size_t)(n > 0 ? n : 1) * sizeof *mapped);
    if (!mapped) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        if (map_arg(pm, args[i], &mapped[i], 0) != CFX_OK)
            return NULL;
    return mapped;
}

/* ProxyTorchDispatchMode: one call_function node, the result computed below. */
static int proxy(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)ctx;
    cfx_object *obj;
    const char *method;
    if (!check_first(args, n, &obj, &method))
        return CFX_ERR;
    cfx_proxy_mode *pm = cfx_proxy_mode_from_base(mode);
    cfx_value *mapped = hop_proxy_args(pm, args, n);
    if (!mapped)
        return CFX_ERR;
    cfx_node *node = cfx_graph_call_fn(cfx_proxy_mode_graph(pm), cfx_hop_target(hop), mapped, (uint32_t)n, NULL, 0);
    if (!node)
        return CFX_ERR;
    int rc = cfx_hop_call(hop, args, n, out);
    if (rc != CFX_OK)
        return rc;
    if (obj->kind == CFX_OBJECT_SCRIPT) {
        const char *q = cfx_class_qualname(obj->cls), *sep = strstr(q, "::");
        cfx_warn("Tracing torchbind method %s.%s with real ScriptObject. This may cause the original object being "
                 "mutated. If this is not intended, You can register a fake class with "
                 "torch._library.register_fake_class(\"%s\").",
                 sep + 2, method, q);
    }
    cfx_meta_val v = {0};
    switch (out->kind) {
    case CFX_V_TENSOR:
    case CFX_V_TUPLE:
    case CFX_V_LIST: return cfx_proxy_track_outputs(pm, node, out, 1);
    case CFX_V_NONE: v.kind = CFX_MVAL_NONE; break;
    case CFX_V_INT: v.kind = CFX_MVAL_INT; v.u.i = out->u.i; break;
    case CFX_V_DOUBLE: v.kind = CFX_MVAL_DOUBLE; v.u.d = out->u.d; break;
    case CFX_V_BOOL: v.kind = CFX_MVAL_BOOL; v.u.b = out->u.b; break;
    default:
        return cfx_error_set(CFX_ERR, NULL, "Currently, only these constant dtypes are supported to be returned from "
                             "torchbind methods, got <class '%s'>", cfx_value_kind_name(out->kind));
    }
    return cfx_node_set_val(node, &v);
}

/* make_fx's object hook: under fake tracing the object becomes its fake copy; the object is
 * bound to its placeholder for this proxy mode, whose meta val names its class. */
static int bind_placeholder(cfx_mode *proxy_mode, cfx_mode *fake_mode, cfx_value *arg, struct cfx_node *ph)
{
    cfx_proxy_mode *pm = cfx_proxy_mode_from_base(proxy_mode);
    cfx_object *o = cfx_value_object(*arg);
    if (!pm || !o || (o->kind != CFX_OBJECT_SCRIPT && o->kind != CFX_OBJECT_FAKE_SCRIPT))
        return CFX_OK;
    if (fake_mode && o->kind == CFX_OBJECT_SCRIPT) {
        cfx_object *f = cfx_to_fake_obj(cfx_fake_mode_from_base(fake_mode), o);
        if (!f)
            return CFX_ERR;
        cfx_object_release(f); /* the real object's cache keeps it alive */
        *arg = cfx_object_value(f);
        o = f;
    }
    cfx_meta_val v = {.kind = CFX_MVAL_OBJECT, .u.class_name = cfx_class_script_name(o->cls)};
    if (cfx_node_set_val(ph, &v) != CFX_OK)
        return CFX_ERR;
    return hop_object_bind(o, cfx_proxy_mode_owner(pm), ph);
}

/* Functionalize: handle_effects, as 2.13's call_torchbind_func (call_torchbind is registered
 * ORDERED, dispatch/effects.c): with_effects(token, call_torchbind, obj, method, *args), the
 * tokens chained by the functional mode; the method's schema shapes the results. */
static int functionalize(cfx_hop *hop, cfx_functionalize_ctx *c, void *ctx, const cfx_value *args, int n,
                         cfx_value *out)
{
    (void)ctx;
    cfx_object *obj;
    const char *method;
    if (!check_first(args, n, &obj, &method))
        return CFX_ERR;
    const cfx_schema *ms = hop_class_method_schema(obj->cls, method);
    if (!ms)
        return hop_no_such_method(obj, method);
    cfx_functional_mode *fm = c->route == CFX_FUNCTIONALIZE_MODE ? cfx_functional_mode_from_base(c->mode)
                                                                 : cfx_functional_mode_current();
    cfx_value *outs = cfx_scope_alloc((size_t)(ms->n_returns > 0 ? ms->n_returns : 1) * sizeof *outs);
    if (!outs)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    int rc = hop_handle_effects(fm, cfx_hop_value(hop), cfx_hop_name(hop), args, n, ms->n_returns, outs);
    if (rc != CFX_OK)
        return rc;
    if (ms->n_returns == 0)
        *out = cfx_none();
    else if (ms->n_returns == 1)
        *out = outs[0];
    else
        *out = cfx_tuple(outs, (uint32_t)ms->n_returns);
    return CFX_OK;
}

void hop_torchbind_register(void)
{
    static const hop_rules rules = {.name = "call_torchbind", .side_effect = true, .dense = dense, .proxy = proxy,
                                    .fake = fake, .functionalize = functionalize,
                                    .autograd = HOP_AUTOGRAD_DEFERRED_ERROR};
    call_torchbind = hop_define(&rules);
    cfx_make_fx_set_object_hook(bind_placeholder);
}

cfx_hop *cfx_call_torchbind_hop(void) { return hop_get(&call_torchbind, "call_torchbind"); }

int cfx_call_torchbind(cfx_object *obj, const char *method, const cfx_value *args, int n, cfx_value *out)
{
    cfx_hop *h = cfx_call_torchbind_hop();
    if (!h || n < 0 || (n > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "call_torchbind: bad arguments");
    cfx_value *all = cfx_scope_alloc((size_t)(n + 2) * sizeof *all);
    if (!all)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    all[0] = obj ? cfx_object_value(obj) : cfx_none();
    all[1] = method ? cfx_string(method) : cfx_none();
    if (n > 0)
        memcpy(all + 2, args, (size_t)n * sizeof *all);
    return cfx_hop_call(h, all, n + 2, out);
}

bool cfx_torchbind_tracing_set(bool enabled)
{
    cfx_hop_init();
    bool old = tracing;
    tracing = enabled;
    return old;
}

bool cfx_torchbind_tracing_enabled(void) { return tracing; }

int cfx_object_call_method(cfx_object *obj, const char *method, const cfx_value *args, int n, cfx_value *out)
{
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!obj || (obj->kind != CFX_OBJECT_SCRIPT && obj->kind != CFX_OBJECT_FAKE_SCRIPT))
        return cfx_error_set(CFX_ERR, NULL, "cfx_object_call_method: not a script object");
    if (obj->kind == CFX_OBJECT_SCRIPT && !cfx_class_has_method(obj->cls, method))
        return hop_no_such_method(obj, method);
    if (tracing || obj->kind == CFX_OBJECT_FAKE_SCRIPT)
        return cfx_call_torchbind(obj, method, args, n, out);
    return cfx_script_object_call(obj, method, args, n, out);
}
