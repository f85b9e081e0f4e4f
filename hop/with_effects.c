/* with_effects.c - the with_effects HOP and handle_effects (torch._higher_order_ops.effects,
 * PyTorch 2.13).
 *
 * with_effects(token, op, *args) -> (new_token, *outs) runs op and returns a fresh token, so
 * that an effectful op becomes a data-flow link in a functional graph: under functionalization
 * with tokens (dispatch/effects.h) handle_effects rewrites each effectful op into a call of this
 * HOP with the mode's current token and stores the new one, chaining the ops of one effect
 * type. The op argument is an operator value (CFX_V_OP), which graphs print as 2.13 prints an
 * OpOverload argument: `aten._print.default` in str(graph), `torch.ops.aten._print.default` in
 * python_code; or a HOP value (CFX_V_HOP: call_torchbind, whose functionalize rule in
 * torchbind.c calls hop_handle_effects), printed `call_torchbind` /
 * `torch.ops.higher_order.call_torchbind`. As in 2.13 the HOP itself is not side-effectful: a with_effects node whose
 * token nobody uses is dead code; the token chain to the output is what keeps it.
 *
 * Tokens travel as CFX_V_TOKEN values (dispatch/value.h), the token's tensor inside: the
 * token argument must be one, the new token comes back as one, and the proxy gives the nodes
 * that carry tokens a token val (2.13's FakeTensor of size (0,), under its own kind). */
#include <stdio.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/effects.h"
#include "dispatch/error.h"
#include "dispatch/functional.h"
#include "dispatch/mode.h"
#include "dispatch/fake.h"
#include "dispatch/operator.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"
#include "hop/autograd.h"
#include "hop/hop_internal.h"
#include "hop/object_internal.h"
#include "hop/torchbind.h"
#include "hop/with_effects.h"
#include "ir/graph.h"
#include "tracer/proxy.h"

static cfx_hop *with_effects;

/* has_aliasing(op): an alias annotation on any argument or return. */
static bool has_aliasing(const cfx_schema *s)
{
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->alias)
            return true;
    for (int i = 0; i < s->n_returns; i++)
        if (s->returns[i].type->alias)
            return true;
    return false;
}

/* What with_effects runs: an operator overload or a HOP (call_torchbind). */
typedef struct effect_op {
    const cfx_op *op;
    cfx_hop *hop;
} effect_op;

/* WithEffects.__call__'s checks (a HOP has no alias annotations), after cfx's own: the token
 * is a token value (2.13 takes any tensor there; in cfx tokens are their own kind). */
static bool check(const cfx_value *args, int n, effect_op *e)
{
    e->op = NULL;
    if (n < 1 || args[0].kind != CFX_V_TOKEN || !args[0].u.t) {
        cfx_error_set(CFX_ERR, NULL, "with_effects: the token argument must be an effect token (a token value), got %s",
                      n < 1 ? "nothing" : cfx_value_kind_name(args[0].kind));
        return false;
    }
    e->hop = n >= 2 ? cfx_value_hop(args[1]) : NULL;
    if (e->hop)
        return true;
    if (n < 2 || args[1].kind != CFX_V_OP || !args[1].u.op) {
        cfx_error_set(CFX_ERR, NULL, "op must be HigherOrderOperator or OpOverload, got <class '%s'>",
                      n < 2 ? "NoneType" : hop_python_type_name(args[1]));
        return false;
    }
    if (has_aliasing(cfx_op_schema(args[1].u.op))) {
        cfx_error_set(CFX_ERR, NULL, "Ops with aliasing is not supported");
        return false;
    }
    e->op = args[1].u.op;
    return true;
}

/* op(*args) as with_effects_dense sees it: outs[0..*n_outs), a tuple result spread (the
 * returns of an operator with several), anything else one value (None for no returns). */
static int run_op(const effect_op *e, const cfx_value *args, int n, const cfx_value **outs, int *n_outs)
{
    cfx_value *r = cfx_scope_alloc(sizeof *r);
    if (!r)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (e->hop) {
        int rc = cfx_hop_call(e->hop, args, n, r);
        if (rc != CFX_OK)
            return rc;
        bool spread = r->kind == CFX_V_TUPLE;
        *outs = spread ? r->u.items : r;
        *n_outs = spread ? (int)r->len : 1;
        return CFX_OK;
    }
    const cfx_schema *s = cfx_op_schema(e->op);
    int cap = n > s->n_returns ? n : s->n_returns;
    cfx_value *stack = cfx_scope_alloc((size_t)(cap > 0 ? cap : 1) * sizeof *stack);
    if (!stack)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (n > 0)
        memcpy(stack, args, (size_t)n * sizeof *stack);
    int rc = cfx_op_call((cfx_op *)e->op, stack, n, cap);
    if (rc != CFX_OK)
        return rc;
    *r = cfx_none(); /* op(*args) is None */
    *outs = s->n_returns ? stack : r;
    *n_outs = s->n_returns > 1 ? s->n_returns : 1;
    return CFX_OK;
}

/* CompositeExplicitAutograd: op(*args), then (new_token, out) or (new_token, *outs). */
static int dense(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)mode;
    (void)ctx;
    effect_op e;
    const cfx_value *outs = NULL;
    int n_outs = 0;
    if (!check(args, n, &e) || run_op(&e, args + 2, n - 2, &outs, &n_outs) != CFX_OK)
        return CFX_ERR;
    cfx_tensor *token = cfx_token_new();
    if (!token)
        return CFX_ERR;
    cfx_value *items = cfx_scope_alloc((size_t)(n_outs + 1) * sizeof *items);
    if (!items)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    items[0] = cfx_token_value(token);
    memcpy(items + 1, outs, (size_t)n_outs * sizeof *items);
    *out = cfx_tuple(items, (uint32_t)(n_outs + 1));
    return CFX_OK;
}

static cfx_tensor *to_fake(cfx_tensor *t, void *fm)
{
    if (cfx_tensor_fake_mode(t))
        return t;
    cfx_tensor *f = cfx_fake_from_tensor(fm, t);
    if (f && cfx_tensor_is_token(t) && cfx_tensor_mark_token(f) != CFX_OK)
        return NULL;
    return f;
}

/* FakeTensorMode: the dense rule inside the mode, a real token made fake. */
static int fake(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    if (cfx_mode_push(mode) != CFX_OK)
        return CFX_ERR;
    int rc = dense(hop, NULL, ctx, args, n, out);
    cfx_mode_exit(mode);
    if (rc != CFX_OK)
        return rc;
    cfx_value in = *out;
    return hop_map_tensors(&in, 1, out, to_fake, cfx_fake_mode_from_base(mode));
}

/* ProxyTorchDispatchMode: the result computed below, then one call_function node whose
 * tuple result is tracked item by item (a getitem node each, the None too, as 2.13). */
static int proxy(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)ctx;
    effect_op e;
    if (!check(args, n, &e))
        return CFX_ERR;
    int rc = cfx_hop_call(hop, args, n, out);
    if (rc != CFX_OK)
        return rc;
    cfx_proxy_mode *pm = cfx_proxy_mode_from_base(mode);
    cfx_value *mapped = hop_proxy_args(pm, args, n);
    if (!mapped)
        return CFX_ERR;
    cfx_node *node = cfx_graph_call_fn(cfx_proxy_mode_graph(pm), cfx_hop_target(hop), mapped, (uint32_t)n, NULL, 0);
    if (!node)
        return CFX_ERR;
    return cfx_proxy_track_outputs(pm, node, out->u.items, (int)out->len);
}

static void op_name(const cfx_schema *s, char *buf, size_t cap)
{
    const char *colons = strstr(s->name, "::");
    int ns = colons ? (int)(colons - s->name) : 0;
    snprintf(buf, cap, "%.*s%s%s.%s", ns, s->name, colons ? "." : "", colons ? colons + 2 : s->name,
             s->overload[0] ? s->overload : "default");
}

/* PythonFunctionalizeAPI's unwrap_tensors / wrap_tensors, done here: the token and the
 * arguments synced and unwrapped, the outputs wrapped. */
static cfx_tensor *unwrap_one(cfx_tensor *t, void *ctx)
{
    (void)ctx;
    if (!cfx_tensor_is_functional(t))
        return t;
    return cfx_functional_sync(t) == CFX_OK ? cfx_functional_value(t) : NULL;
}

static cfx_tensor *wrap_one(cfx_tensor *t, void *ctx)
{
    (void)ctx;
    return cfx_tensor_is_functional(t) ? t : cfx_functional_wrap(t);
}

int hop_handle_effects(cfx_functional_mode *fm, cfx_value op, const char *name, const cfx_value *in, int n_in,
                       int n_returns, cfx_value *outs)
{
    cfx_hop *hop = cfx_value_hop(op);
    cfx_effect_type key = hop ? cfx_effect_of_name(cfx_hop_name(hop)) : cfx_op_effect(op.u.op);
    if (key == CFX_EFFECT_NONE)
        return cfx_error_set(CFX_ERR, NULL, "effect key must not be None for op %s", name);
    if (!fm)
        return cfx_error_set(CFX_ERR, NULL, "%s: effect tokens need a functional mode (FunctionalTensorMode)", name);
    cfx_tensor *token = cfx_functional_mode_token(fm, key);
    if (!token) {
        if (!cfx_functional_mode_allow_token_discovery(fm))
            return cfx_error_set(CFX_ERR, NULL, "Could not find a token for effect %s which came from the function %s",
                                 cfx_effect_type_name(key), name);
        if (cfx_mode_get(CFX_MODE_PROXY))
            return cfx_error_set(CFX_ERR, NULL, "with_effects: token discovery during proxy tracing (a backward "
                                 "tangents_token) is not supported by cfx");
        if (!(token = cfx_functional_wrap(cfx_token_new())))
            return CFX_ERR;
    }
    cfx_functionalize_ctx c;
    hop_functionalize_ctx_init(&c, CFX_FUNCTIONALIZE_MODE, cfx_functional_mode_base(fm));
    int n = n_in + 2;
    cfx_value *args = cfx_scope_alloc((size_t)n * sizeof *args), *un = cfx_scope_alloc((size_t)n * sizeof *un);
    if (!args || !un)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    args[0] = cfx_token_value(token);
    args[1] = op;
    if (n_in > 0)
        memcpy(args + 2, in, (size_t)n_in * sizeof *args);
    if (hop_map_tensors(args, n, un, unwrap_one, NULL) != CFX_OK || cfx_functionalize_redispatch_begin(&c) != CFX_OK)
        return CFX_ERR;
    cfx_value r;
    int rc = cfx_hop_call(with_effects, un, n, &r);
    cfx_functionalize_redispatch_end(&c);
    if (rc != CFX_OK)
        return rc;
    int want = n_returns > 1 ? n_returns : 1;
    if (r.kind != CFX_V_TUPLE || (int)r.len != want + 1 || r.u.items[0].kind != CFX_V_TOKEN)
        return cfx_error_set(CFX_ERR, NULL, "expected %d outputs but got %d", want, r.kind == CFX_V_TUPLE ? (int)r.len - 1 : 0);
    if (n_returns == 0 && r.u.items[1].kind != CFX_V_NONE)
        return cfx_error_set(CFX_ERR, NULL, "expected no outputs but got %s", cfx_value_kind_name(r.u.items[1].kind));
    cfx_value wrapped;
    if (hop_map_tensors(&r, 1, &wrapped, wrap_one, NULL) != CFX_OK)
        return CFX_ERR;
    if (cfx_functional_mode_set_token(fm, key, wrapped.u.items[0].u.t) != CFX_OK)
        return CFX_ERR;
    if (n_returns > 0)
        memcpy(outs, wrapped.u.items + 1, (size_t)n_returns * sizeof *outs);
    return CFX_OK;
}

/* handle_effects for an operator: its schema's arguments in on the stack, its returns out. */
static int handle_effects(const cfx_op *op, cfx_value *stack, cfx_functional_mode *fm)
{
    const cfx_schema *s = cfx_op_schema(op);
    char name[256];
    op_name(s, name, sizeof name);
    return hop_handle_effects(fm, cfx_op_value(op), name, stack, s->n_args, s->n_returns, stack);
}

void hop_with_effects_register(void)
{
    static const hop_rules rules = {.name = "with_effects", .dense = dense, .proxy = proxy, .fake = fake,
                                    .functionalize = hop_functionalize_redispatch,
                                    .autograd = HOP_AUTOGRAD_FALLTHROUGH};
    with_effects = hop_define(&rules);
    cfx_effects_set_handler(handle_effects);
}

cfx_hop *cfx_with_effects_hop(void) { return hop_get(&with_effects, "with_effects"); }

int cfx_with_effects(cfx_tensor *token, const cfx_op *op, const cfx_value *args, int n, cfx_value *out)
{
    cfx_hop *h = cfx_with_effects_hop();
    if (!h || n < 0 || (n > 0 && !args) || !out)
        return cfx_error_set(CFX_ERR, NULL, "with_effects: bad arguments");
    cfx_value *all = cfx_scope_alloc((size_t)(n + 2) * sizeof *all);
    if (!all)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    all[0] = token ? cfx_token_value(token) : cfx_none();
    all[1] = op ? cfx_op_value(op) : cfx_none();
    if (n > 0)
        memcpy(all + 2, args, (size_t)n * sizeof *all);
    effect_op e;
    if (!check(all, n + 2, &e))
        return CFX_ERR;
    return cfx_hop_call(h, all, n + 2, out);
}
