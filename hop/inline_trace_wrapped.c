/* inline_trace_wrapped.c - pass `inline-trace-wrapped`: replace each opaque trace_wrapped node
 * by the traced body of its fn.
 *
 * This is what compiled autograd does when it finally looks inside the deferred hooks
 * AOTAutograd left opaque. fn is traced with make_fx (fake mode) on tensors made from the
 * node's argument metadata, the body's nodes are copied in front of the node with its
 * placeholders mapped to the node's arguments, and the node's users (its _assert_meta check
 * among them) switch to the body's result. With keep_asserts the checks stay and now verify
 * the inlined body; without, they are erased first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "hop/object_internal.h"
#include "hop/trace_wrapped.h"
#include "ir/graph.h"
#include "ir/meta.h"
#include "ir/passes/manager.h"
#include "ir/passes/strip_asserts.h"
#include "tracer/make_fx.h"

enum { MAX_ARGS = 16, MAX_USERS = 64 };

/* A node's name for a message (copied: the graph may change before the message is built). */
static const char *name_of(const cfx_node *n)
{
    static _Thread_local char buf[128];
    char *s = cfx_node_name_string(n);
    snprintf(buf, sizeof buf, "%s", s ? s : "?");
    cfx_free(s);
    return buf;
}

typedef struct body_map {
    const cfx_graph *sub;
    cfx_node **to; /* by sub-graph node sequence: the node it became in the outer graph */
    uint32_t n;
} body_map;

static cfx_node *map_node(cfx_node *n, void *ctx)
{
    body_map *m = ctx;
    return n->seq < m->n ? m->to[n->seq] : NULL;
}

/* An example argument from a node argument's meta val: a real tensor of that metadata. */
static int example(cfx_value a, cfx_value *out)
{
    if (a.kind != CFX_V_NODE) {
        *out = a;
        return CFX_OK;
    }
    const cfx_meta_val *v = cfx_node_val(a.u.node);
    if (!v || v->kind != CFX_MVAL_TENSOR)
        return cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: argument %s has no tensor meta val",
                             name_of(a.u.node));
    cfx_tensor *t = cfx_tensor_new_strided(v->sizes, v->strides, v->n, (cfx_dtype)v->dtype,
                                           cfx_device_make(CFX_DEVICE_CPU));
    if (!t)
        return CFX_ERR;
    *out = cfx_tensor_value(cfx_autorelease(t));
    return CFX_OK;
}

static int inline_one(cfx_graph *g, cfx_node *node, cfx_object *fn, bool keep_asserts)
{
    cfx_callable *c = cfx_object_callable(fn);
    const char *fname = cfx_callable_name(c);
    if (!cfx_callable_plain_fn(c))
        return cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: %s's function %s is a closure; only plain C "
                             "functions can be traced", name_of(node), fname ? fname : "?");
    uint32_t na = cfx_node_num_args(node);
    if (na > MAX_ARGS)
        return cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: too many arguments");
    cfx_scope s = cfx_scope_begin();
    cfx_value ex[MAX_ARGS];
    int rc = CFX_OK;
    for (uint32_t i = 0; i < na && rc == CFX_OK; i++)
        rc = example(cfx_node_arg(node, i), &ex[i]);
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, fname, false};
    char *sig = rc == CFX_OK ? cfx_schema_to_string(cfx_callable_schema(c)) : NULL;
    if (rc == CFX_OK && !sig)
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_graph_module *body = rc == CFX_OK ? cfx_make_fx(cfx_callable_plain_fn(c), sig, ex, (int)na, &o) : NULL;
    cfx_free(sig);
    cfx_scope_end(s);
    if (!body)
        return CFX_ERR;
    cfx_graph *sub = cfx_graph_module_graph(body);
    body_map m = {sub, cfx_calloc(cfx_graph_num_created(sub) + 1, sizeof(cfx_node *)), cfx_graph_num_created(sub)};
    if (!m.to) {
        cfx_graph_module_free(body);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    if (!keep_asserts) { /* the checks go with the opaque call */
        cfx_node *asserts[MAX_USERS];
        int k = 0;
        cfx_user_iter it;
        for (cfx_node *u = cfx_node_first_user(node, &it); u && k < MAX_USERS; u = cfx_node_next_user(&it))
            if (cfx_node_is_assert(u) && cfx_node_num_users(u) == 0)
                asserts[k++] = u;
        for (int i = 0; i < k && rc == CFX_OK; i++)
            rc = cfx_graph_erase_node(g, asserts[i]);
    }
    cfx_insert_point saved = cfx_graph_inserting_before(g, node);
    uint32_t ph = 0;
    cfx_node *result = NULL;
    for (cfx_node *sn = cfx_graph_first(sub); sn && rc == CFX_OK; sn = cfx_node_next(sn)) {
        switch (cfx_node_opcode(sn)) {
        case CFX_NODE_PLACEHOLDER: {
            cfx_value a = ph < na ? cfx_node_arg(node, ph) : cfx_none();
            ph++;
            if (a.kind != CFX_V_NODE)
                rc = cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: argument %u of %s is not a node", ph - 1,
                                   name_of(node));
            else
                m.to[sn->seq] = a.u.node;
            break;
        }
        case CFX_NODE_OUTPUT: {
            cfx_value r = cfx_node_arg(sn, 0);
            if (r.kind != CFX_V_NODE)
                rc = cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: %s must return one tensor", fname);
            else
                result = map_node(r.u.node, &m);
            break;
        }
        case CFX_NODE_CALL_FUNCTION:
            if (!(m.to[sn->seq] = cfx_graph_node_copy(g, sn, map_node, &m)))
                rc = CFX_ERR;
            break;
        default:
            rc = cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: %s uses a module attribute or constant (%s), "
                               "which cannot be inlined", fname, name_of(sn));
        }
    }
    cfx_graph_set_insert_point(g, saved);
    if (rc == CFX_OK && !result)
        rc = cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: %s returned nothing", fname);
    if (rc == CFX_OK && cfx_node_replace_all_uses_with(node, result, NULL, NULL, NULL) < 0)
        rc = CFX_ERR;
    if (rc == CFX_OK)
        rc = cfx_graph_erase_node(g, node);
    cfx_free(m.to);
    cfx_graph_module_free(body);
    return rc;
}

int cfx_inline_trace_wrapped(cfx_graph_module *gm, bool keep_asserts, bool *changed)
{
    if (changed)
        *changed = false;
    if (!gm)
        return cfx_error_set(CFX_ERR, NULL, "inline-trace-wrapped: NULL graph module");
    cfx_graph *g = cfx_graph_module_graph(gm);
    for (cfx_node *n = cfx_graph_first(g), *next; n; n = next) {
        next = cfx_node_next(n);
        cfx_object *fn = cfx_trace_wrapped_node_fn(n);
        if (!fn)
            continue;
        if (inline_one(g, n, fn, keep_asserts) != CFX_OK)
            return CFX_ERR;
        if (changed)
            *changed = true;
    }
    return CFX_OK;
}

static int run_keep(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    return cfx_inline_trace_wrapped(gm, true, changed);
}

static int run_drop(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    return cfx_inline_trace_wrapped(gm, false, changed);
}

void hop_inline_trace_wrapped_register(void)
{
    cfx_pass_register("inline-trace-wrapped",
                      "trace_wrapped calls replaced by their function's traced body; _assert_meta checks kept",
                      run_keep, NULL);
    cfx_pass_register("inline-trace-wrapped-drop-asserts",
                      "inline-trace-wrapped, and the _assert_meta checks of the inlined calls erased", run_drop, NULL);
}
