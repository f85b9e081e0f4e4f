/* trace_wrapped.c - the trace_wrapped HOP, _assert_meta, and their interpreter hooks
 * (see trace_wrapped.h; the inlining pass is inline_trace_wrapped.c).
 *
 * PyTorch's proxy rule makes a fresh closure `self_invoke` per call as the node's target, so
 * the graph itself carries fn. cfx does the same: each recorded call gets its own builtin
 * function descriptor holding fn, registered with the interpreter; descriptors live for the
 * process (graphs may outlive the trace) in one list, which also answers "is this node a
 * trace_wrapped call?". */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "hop/autograd.h"
#include "hop/hop_internal.h"
#include "hop/object_internal.h"
#include "hop/torchbind.h"
#include "hop/trace_wrapped.h"
#include "ir/graph.h"
#include "ir/interpreter.h"
#include "tracer/proxy.h"

const cfx_builtin_fn cfx_fn_assert_meta = {"torch._dynamo._trace_wrapped_higher_order_op._assert_meta",
                                           "_assert_meta", true};
static const char INVOKE_NAME[] = "torch._dynamo._trace_wrapped_higher_order_op.self_invoke";

typedef struct invoker {
    cfx_builtin_fn fn; /* first: a node's target leads back here */
    cfx_object *callable;
    struct invoker *next;
} invoker;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static invoker *invokers;
static cfx_hop *trace_wrapped;

cfx_object *cfx_trace_wrapped_node_fn(const struct cfx_node *n)
{
    if (!n || cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
        return NULL;
    const cfx_builtin_fn *fn = cfx_target_info_fn(cfx_node_target_info(n));
    if (!fn)
        return NULL;
    pthread_mutex_lock(&lock);
    cfx_object *c = NULL;
    for (invoker *i = invokers; i && !c; i = i->next)
        if (&i->fn == fn)
            c = i->callable;
    pthread_mutex_unlock(&lock);
    return c;
}

static int self_invoke(const cfx_builtin_fn *fn, void *ctx, const cfx_value *args, uint32_t n, cfx_value *out)
{
    (void)fn;
    return cfx_trace_wrapped(args, (int)n, ((invoker *)ctx)->callable, out);
}

static invoker *new_invoker(cfx_object *callable)
{
    invoker *i = cfx_calloc(1, sizeof *i);
    if (!i) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    i->fn = (cfx_builtin_fn){INVOKE_NAME, "self_invoke", false};
    i->callable = cfx_object_retain(callable);
    if (cfx_interp_register_builtin(&i->fn, self_invoke, i) != CFX_OK) {
        cfx_object_release(callable);
        cfx_free(i);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    i->next = invokers;
    invokers = i;
    pthread_mutex_unlock(&lock);
    return i;
}

/* ---- _assert_meta ---------------------------------------------------------------------- */

static bool same_ints(cfx_value v, const int64_t *a, int n)
{
    if ((v.kind != CFX_V_TUPLE && v.kind != CFX_V_LIST) || (int)v.len != n)
        return false;
    for (int i = 0; i < n; i++)
        if (v.u.items[i].kind != CFX_V_INT || v.u.items[i].u.i != a[i])
            return false;
    return true;
}

static int assert_meta(const cfx_builtin_fn *fn, void *ctx, const cfx_value *a, uint32_t n, cfx_value *out)
{
    (void)fn;
    (void)ctx;
    if (n != 4 || a[0].kind != CFX_V_TENSOR || !a[0].u.t || a[3].kind != CFX_V_DTYPE)
        return cfx_error_set(CFX_ERR, NULL, "_assert_meta() takes a tensor, its size, its stride and its dtype");
    const cfx_tensor *t = a[0].u.t;
    if (!same_ints(a[1], t->sizes, t->ndim))
        return cfx_error_set(CFX_ERR, NULL, "size mismatch");
    if (!same_ints(a[2], t->strides, t->ndim))
        return cfx_error_set(CFX_ERR, NULL, "stride mismatch");
    if ((cfx_dtype)t->dtype != a[3].u.dtype)
        return cfx_error_set(CFX_ERR, NULL, "dtype mismatch");
    *out = a[0];
    return CFX_OK;
}

/* ---- the rules ------------------------------------------------------------------------- */

static cfx_object *fn_arg(const cfx_value *args, int n)
{
    cfx_object *o = n > 0 ? cfx_value_object(args[n - 1]) : NULL;
    if (!o || o->kind != CFX_OBJECT_CALLABLE) {
        cfx_error_set(CFX_ERR, NULL, "trace_wrapped: the last argument must be fn, a callable");
        return NULL;
    }
    return o;
}

static int dense(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)mode;
    (void)ctx;
    if (cfx_mode_top())
        return cfx_error_set(CFX_ERR, NULL, "Mode should never be enabled for CPU/CUDA key");
    cfx_object *fn = fn_arg(args, n);
    return fn ? cfx_callable_call(cfx_object_callable(fn), args, n - 1, NULL, 0, out) : CFX_ERR;
}

static int fake(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop, (void)mode, (void)ctx, (void)args, (void)n, (void)out;
    return cfx_error_set(CFX_ERR, NULL, "This op should never be invoked here");
}

static int unwrap_proxy(cfx_proxy_mode *pm, cfx_value in, cfx_value *out, int depth)
{
    *out = in;
    switch (in.kind) {
    case CFX_V_NONE: return CFX_OK;
    case CFX_V_TENSOR: {
        if (!in.u.t)
            return CFX_OK;
        cfx_node *node = cfx_proxy_node_of(pm, in.u.t);
        if (!node)
            return CFX_ERR;
        *out = cfx_node_value(node);
        return CFX_OK;
    }
    case CFX_V_LIST:
    case CFX_V_TUPLE: {
        if (depth > 32)
            return cfx_error_set(CFX_ERR, NULL, "value nested too deeply");
        cfx_value *items = in.len ? cfx_scope_alloc(in.len * sizeof *items) : NULL;
        if (in.len && !items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; i < in.len; i++)
            if (unwrap_proxy(pm, in.u.items[i], &items[i], depth + 1) != CFX_OK)
                return CFX_ERR;
        out->u.items = items;
        return CFX_OK;
    }
    default:
        return cfx_error_set(CFX_ERR, NULL, "unhandled type: <class '%s'>", hop_python_type_name(in));
    }
}

static cfx_tensor *empty_like(cfx_tensor *t, void *ctx)
{
    (void)ctx;
    return cfx_empty_like(t);
}

/* The _assert_meta check right after the node, for a single tensor result. */
static int add_assert(cfx_graph *g, cfx_node *node, const cfx_tensor *t)
{
    cfx_value sizes[16], strides[16];
    if (t->ndim > 16)
        return CFX_OK;
    for (int i = 0; i < t->ndim; i++) {
        sizes[i] = cfx_int(t->sizes[i]);
        strides[i] = cfx_int(t->strides[i]);
    }
    cfx_value a[4] = {cfx_node_value(node), cfx_tuple(sizes, (uint32_t)t->ndim), cfx_tuple(strides, (uint32_t)t->ndim),
                      cfx_dtype_value((cfx_dtype)t->dtype)};
    return cfx_graph_call_fn(g, &cfx_fn_assert_meta, a, 4, NULL, 0) ? CFX_OK : CFX_ERR;
}

static int proxy(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)ctx;
    cfx_proxy_mode *pm = cfx_proxy_mode_from_base(mode);
    cfx_object *fn = fn_arg(args, n);
    if (!fn)
        return CFX_ERR;
    int na = n - 1;
    if (na < 1 || (args[0].kind == CFX_V_NONE && na < 2))
        return cfx_error_set(CFX_ERR, NULL, "trace_wrapped: expected a grad argument");
    cfx_value *mapped = cfx_scope_alloc((size_t)na * sizeof *mapped);
    if (!mapped)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (int i = 0; i < na; i++)
        if (unwrap_proxy(pm, args[i], &mapped[i], 0) != CFX_OK)
            return CFX_ERR;
    invoker *inv = new_invoker(fn);
    if (!inv)
        return CFX_ERR;
    cfx_graph *g = cfx_proxy_mode_graph(pm);
    cfx_node *node = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_fn(&inv->fn), mapped, (uint32_t)na,
                                           NULL, 0, "trace_wrapped");
    if (!node)
        return CFX_ERR;
    cfx_value grad = args[0].kind == CFX_V_NONE ? args[1] : args[0]; /* module backward hooks pass None first */
    if (hop_map_tensors(&grad, 1, out, empty_like, NULL) != CFX_OK)
        return CFX_ERR;
    if (cfx_proxy_track_outputs(pm, node, out, 1) != CFX_OK)
        return CFX_ERR;
    return out->kind == CFX_V_TENSOR && out->u.t ? add_assert(g, node, out->u.t) : CFX_OK;
}

void hop_trace_wrapped_register(void)
{
    cfx_builtin_fn_register(&cfx_fn_assert_meta);
    cfx_interp_register_builtin(&cfx_fn_assert_meta, assert_meta, NULL);
    static const hop_rules rules = {.name = "trace_wrapped", .dense = dense, .proxy = proxy, .fake = fake,
                                    .functionalize = hop_functionalize_redispatch,
                                    .autograd = HOP_AUTOGRAD_DEFERRED_ERROR};
    trace_wrapped = hop_define(&rules);
}

cfx_hop *cfx_trace_wrapped_hop(void) { return hop_get(&trace_wrapped, "trace_wrapped"); }

int cfx_trace_wrapped(const cfx_value *args, int n, cfx_object *fn, cfx_value *out)
{
    cfx_hop *h = cfx_trace_wrapped_hop();
    if (!h || n < 0 || (n > 0 && !args) || !out)
        return cfx_error_set(CFX_ERR, NULL, "trace_wrapped: bad arguments");
    cfx_value *all = cfx_scope_alloc((size_t)(n + 1) * sizeof *all);
    if (!all)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (n > 0)
        memcpy(all, args, (size_t)n * sizeof *all);
    all[n] = fn ? cfx_object_value(fn) : cfx_none();
    bool was = cfx_grad_mode_set(false); /* with torch.no_grad() */
    int rc = cfx_hop_call(h, all, n + 1, out);
    cfx_grad_mode_set(was);
    return rc;
}
