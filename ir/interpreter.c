/* interpreter.c - running a graph node by node (torch.fx.Interpreter).
 *
 * The environment is an array of values indexed by node seq (dense creation indices), so a
 * node's value is one load away and no hashing happens per argument. Each slot owns its value:
 * a tensor holds one reference, a tuple or list owns a malloc'd item array (deeply). A slot
 * that has no value (not yet run, or dropped) has the kind UNSET, so reading an argument
 * before its producer ran (a graph out of topological order) is caught, not a crash.
 *
 * Freeing after the last use is what FX's user_to_last_uses achieves, counted instead of
 * planned: a node's value starts with as many pending uses as the node has users (one use
 * record per distinct user, as FX's node.users), and each node that runs settles one use of
 * each of its inputs; the value is dropped when none is left, which is after its last user
 * in execution order. So the run needs no walk of the graph before the first node (a node's
 * input records sit together in the use table, read right after the node ran) and one
 * integer per node. A user in another graph never runs here: its producer's value stays to
 * the end of the run.
 *
 * A call_function on an operator binds its node's args and kwargs to the schema as torch.ops'
 * Python binding does (a kwarg goes to its argument's position, skipped defaults are filled),
 * substitutes node values (list items are copied into a scratch array reused across nodes,
 * sized only when a list does not fit),
 * and calls the operator boxed with a scope open around the call: the results are retained by
 * the environment and the scope then releases the call's temporaries, so a dropped value is
 * really freed at its last use, not at the end of the run. What a target's calls share (its
 * operator, schema and stack width) is worked out at the first node that calls it and kept for
 * the run, one plan per target id; cfx_op_call then does the binding's checks and the
 * dispatch in one walk over the stack, as it does for every boxed caller. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/error_internal.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "ir/internal.h"
#include "ir/interp_internal.h"
#include "ir/interpreter.h"

/* Values nest this deep at most (an operator returns at most a tuple of lists; deeper nesting
 * can only come from hand-made or loaded graphs), so the walks over a value may recurse. */
enum { MAX_DEPTH = 32 };
#define UNSET ((uint32_t)CFX_V_KIND_COUNT)

/* What a call_function node's target takes, worked out once per target and run rather than
 * at every node: the operator and its schema, and the boxed stack's width. */
typedef struct op_plan {
    bool ready;
    const cfx_op *op;
    const cfx_builtin_fn *fn;
    const cfx_schema *schema;
    size_t width; /* the schema's arguments or returns, whichever are more */
} op_plan;

typedef struct run {
    const cfx_graph *g;
    const cfx_interp_options *o;
    const cfx_value *args;
    int n_args, next_arg;
    uint32_t n_slots;
    cfx_value *env;      /* by seq: the node's value, owned; kind UNSET when it has none */
    uint32_t *pending;   /* by seq: uses of the node's value by nodes not run yet (0: no value) */
    cfx_value *scratch;  /* list items of substituted arguments, reset for every node */
    size_t n_scratch, cap_scratch;
    cfx_value *stack;    /* the boxed call's stack */
    uint8_t *bound;      /* by stack slot: given by the node (positionally or as a kwarg) */
    size_t cap_stack;
    bool foreign;        /* some node of g uses a node of another graph (g->has_foreign_uses) */
    op_plan *plans;      /* by target id: what calling the target takes, made at its first node */
    uint32_t n_plans;
    uint32_t live;       /* slots holding a value */
} run;

static int too_deep(void)
{
    return cfx_error_set(CFX_ERR, NULL, "value nested deeper than %d levels", MAX_DEPTH);
}

/* ---- owned values ----------------------------------------------------------------------- */

static void drop(cfx_value v)
{
    if (v.kind == CFX_V_TENSOR || v.kind == CFX_V_TOKEN) {
        cfx_tensor_release(v.u.t);
    } else if (cfx_value_is_container(v)) {
        for (uint32_t i = 0; i < v.len; i++)
            drop(v.u.items[i]);
        cfx_free((void *)v.u.items);
    }
}

/* An owned copy of a borrowed value: tensors retained, item arrays copied. */
static int own(cfx_value v, cfx_value *out, int depth)
{
    if (depth > MAX_DEPTH)
        return too_deep();
    switch (v.kind) {
    case CFX_V_TENSOR:
        *out = v.u.t ? cfx_tensor_value(cfx_tensor_retain(v.u.t)) : cfx_none();
        return CFX_OK;
    case CFX_V_TOKEN: /* held by its tensor, as a tensor value is */
        *out = v.u.t ? cfx_token_value(cfx_tensor_retain(v.u.t)) : cfx_none();
        return CFX_OK;
    case CFX_V_LIST:
    case CFX_V_TUPLE:
    case CFX_V_DICT: {
        cfx_value *items = v.len ? cfx_malloc(v.len * sizeof *items) : NULL;
        if (v.len && !items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; i < v.len; i++) {
            int rc = own(v.u.items[i], &items[i], depth + 1);
            if (rc != CFX_OK) {
                while (i-- > 0)
                    drop(items[i]);
                cfx_free(items);
                return rc;
            }
        }
        *out = v;
        out->u.items = items;
        return CFX_OK;
    }
    case CFX_V_NODE:
        return cfx_error_set(CFX_ERR, NULL, "a node reference cannot be an input value");
    default:
        *out = v;
        return CFX_OK;
    }
}

/* The same for the caller: tensors retained into its scope, item arrays scope blocks. */
static int give(cfx_value v, cfx_value *out, int depth)
{
    if (depth > MAX_DEPTH)
        return too_deep();
    *out = v;
    if (v.kind == CFX_V_TENSOR || v.kind == CFX_V_TOKEN) {
        cfx_autorelease(cfx_tensor_retain(v.u.t));
    } else if (cfx_value_is_container(v)) {
        cfx_value *items = cfx_scope_alloc(v.len * sizeof *items);
        if (!items)
            return CFX_ERR_NOMEM;
        for (uint32_t i = 0; i < v.len; i++)
            if (give(v.u.items[i], &items[i], depth + 1) != CFX_OK)
                return CFX_ERR;
        out->u.items = items;
    }
    return CFX_OK;
}

/* ---- substituting node values into arguments ------------------------------------------- */

/* Scratch items a value needs when substituted (every list is copied). */
static int count_items(cfx_value v, size_t *n, int depth)
{
    if (!cfx_value_is_container(v))
        return CFX_OK;
    if (depth > MAX_DEPTH)
        return too_deep();
    *n += v.len;
    for (uint32_t i = 0; i < v.len; i++)
        if (count_items(v.u.items[i], n, depth + 1) != CFX_OK)
            return CFX_ERR;
    return CFX_OK;
}

static int unset_input(const cfx_node *in, const cfx_node *user)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_node_print_name(in, &b);
    cfx_buf_puts(&b, " is used by ");
    cfx_node_print_name(user, &b);
    cfx_buf_puts(&b, " before it has a value (the graph is not in topological order, or the node is not in it)");
    int rc = cfx_error_set_text(CFX_ERR, NULL, b.oom ? "an argument has no value" : b.data);
    cfx_buf_free(&b);
    return rc;
}

/* A list did not fit the scratch array: call_op's bind sizes it (reserve_scratch) and binds
 * again, so the common node, which has no list, is bound without counting anything first.
 * Positive, so never a status. */
enum { SCRATCH_SHORT = 1 };

/* v with every node reference replaced by the node's value (borrowed from the environment);
 * copied lists take their items from the scratch array. */
static int subst_deep(run *r, const cfx_node *user, cfx_value v, cfx_value *out, int depth);

/* The common arguments (a node's value, a constant) without a call: most nodes have no list. */
static inline int subst(run *r, const cfx_node *user, cfx_value v, cfx_value *out)
{
    if (v.kind == CFX_V_NODE) {
        const cfx_node *in = v.u.node;
        /* A reference into another graph makes a foreign use (ir/uses.c), so a graph without
         * one needs no look at the node's block for its graph. */
        if (!in || in->seq >= r->n_slots || (r->foreign && cfx_node_graph(in) != r->g) ||
            r->env[in->seq].kind == UNSET)
            return in ? unset_input(in, user) : cfx_error_set(CFX_ERR, NULL, "a NULL node reference");
        *out = r->env[in->seq];
        return CFX_OK;
    }
    if (!cfx_value_is_container(v)) {
        *out = v;
        return CFX_OK;
    }
    return subst_deep(r, user, v, out, 1);
}

static int subst_deep(run *r, const cfx_node *user, cfx_value v, cfx_value *out, int depth)
{
    if (depth > MAX_DEPTH)
        return too_deep();
    if (v.len > r->cap_scratch - r->n_scratch)
        return SCRATCH_SHORT;
    *out = v;
    cfx_value *items = r->scratch + r->n_scratch;
    r->n_scratch += v.len;
    for (uint32_t i = 0; i < v.len; i++) {
        cfx_value item = v.u.items[i];
        int rc = cfx_value_is_container(item) ? subst_deep(r, user, item, &items[i], depth + 1)
                                              : subst(r, user, item, &items[i]);
        if (rc != CFX_OK)
            return rc;
    }
    out->u.items = items;
    return CFX_OK;
}

/* Reserves scratch for every list in n's args and kwargs. */
static int reserve_scratch(run *r, const cfx_node *n)
{
    size_t need = 0;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    r->n_scratch = 0;
    for (uint32_t i = 0; i < na; i++) /* the test first: a call per argument cost more than the rest */
        if (cfx_value_is_container(cfx_node_arg(n, i)) && count_items(cfx_node_arg(n, i), &need, 1) != CFX_OK)
            return CFX_ERR;
    for (uint32_t i = 0; i < nk; i++)
        if (cfx_value_is_container(kw[i].value) && count_items(kw[i].value, &need, 1) != CFX_OK)
            return CFX_ERR;
    if (need <= r->cap_scratch)
        return CFX_OK;
    size_t cap = r->cap_scratch ? r->cap_scratch : 64;
    while (cap < need)
        cap *= 2;
    cfx_value *s = cfx_realloc(r->scratch, cap * sizeof *s);
    if (!s)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    r->scratch = s;
    r->cap_scratch = cap;
    return CFX_OK;
}

static int reserve_stack(run *r, size_t need)
{
    if (need <= r->cap_stack)
        return CFX_OK;
    size_t cap = r->cap_stack ? r->cap_stack : 16;
    while (cap < need)
        cap *= 2;
    cfx_value *s = cfx_realloc(r->stack, cap * sizeof *s);
    if (s)
        r->stack = s;
    uint8_t *b = s ? cfx_realloc(r->bound, cap) : NULL;
    if (!b)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    r->bound = b;
    r->cap_stack = cap;
    return CFX_OK;
}

/* ---- calling an operator ----------------------------------------------------------------- */

static int binding_error(const cfx_schema *s, const char *fmt, const char *arg)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, fmt, arg, s->name);
    cfx_schema_print(s, &b);
    int rc = cfx_error_set_text(CFX_ERR, NULL, b.oom ? "bad arguments" : b.data);
    cfx_buf_free(&b);
    return rc;
}

/* The node's kwargs on the stack in schema order, after its args; the count of slots given. */
static int bind_kwargs(run *r, const cfx_node *n, const cfx_schema *s, int *filled)
{
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    uint32_t end = na;
    memset(r->bound, 0, r->cap_stack); /* which slots are given: only kwargs ask */
    memset(r->bound, 1, na);
    for (uint32_t k = 0; k < nk; k++) {
        int i = cfx_schema_find_arg(s, kw[k].name);
        if (i < 0)
            return binding_error(s, "Unknown keyword argument '%s' for operator '%s'. Schema: ", kw[k].name);
        if (r->bound[i])
            return binding_error(s, "Argument '%s' specified both as positional and keyword argument. Schema: %.0s",
                                 kw[k].name);
        int rc = subst(r, n, kw[k].value, &r->stack[i]);
        if (rc != CFX_OK)
            return rc;
        r->bound[i] = 1;
        if ((uint32_t)i + 1 > end)
            end = (uint32_t)i + 1;
    }
    for (uint32_t i = na; i < end; i++) {
        if (r->bound[i])
            continue;
        if (!s->args[i].has_default) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_printf(&b, "%s() is missing value for argument '%s'. Declaration: ", s->name, s->args[i].name);
            cfx_schema_print(s, &b);
            int rc = cfx_error_set_text(CFX_ERR, NULL, b.oom ? "bad arguments" : b.data);
            cfx_buf_free(&b);
            return rc;
        }
        r->stack[i] = s->args[i].default_value;
    }
    *filled = (int)end;
    return CFX_OK;
}

/* The node's args and kwargs on the stack in schema order; the count of slots given.
 * SCRATCH_SHORT if a list did not fit the scratch array. Most nodes have no kwargs: their
 * args go on the stack as they are, and cfx_op_call fills the defaults. */
static inline int bind(run *r, const cfx_node *n, const cfx_schema *s, int *filled)
{
    uint32_t na = cfx_node_num_args(n);
    const cfx_value *args = cfx_node_args(n);
    r->n_scratch = 0;
    for (uint32_t i = 0; i < na; i++) {
        int rc = subst(r, n, args[i], &r->stack[i]);
        if (rc != CFX_OK)
            return rc;
    }
    *filled = (int)na;
    return cfx_node_num_kwargs(n) ? bind_kwargs(r, n, s, filled) : CFX_OK;
}

static int call_op(run *r, const cfx_node *n, const op_plan *p, cfx_value *res)
{
    const cfx_schema *s = p->schema;
    if (!s) /* the dispatcher's own error: "Could not find schema for ..." */
        return cfx_op_call((cfx_op *)p->op, NULL, 0, 0);
    size_t width = p->width > cfx_node_num_args(n) ? p->width : cfx_node_num_args(n);
    int filled = 0;
    if (width > r->cap_stack && reserve_stack(r, width) != CFX_OK)
        return CFX_ERR;
    int rc = bind(r, n, s, &filled);
    if (rc == SCRATCH_SHORT && reserve_scratch(r, n) == CFX_OK)
        rc = bind(r, n, s, &filled);
    if (rc != CFX_OK)
        return CFX_ERR;
    cfx_scope scope = cfx_scope_begin();
    rc = cfx_op_call((cfx_op *)p->op, r->stack, filled, (int)width);
    if (rc == CFX_OK) {
        if (s->n_returns == 1 && r->stack[0].kind == CFX_V_TENSOR && r->stack[0].u.t) {
            *res = cfx_tensor_value(cfx_tensor_retain(r->stack[0].u.t)); /* own()'s common case */
        } else if (s->n_returns == 0) {
            *res = cfx_none();
        } else if (s->n_returns == 1) {
            rc = own(r->stack[0], res, 1);
        } else {
            cfx_value t = cfx_tuple(r->stack, s->n_returns);
            rc = own(t, res, 0);
        }
    }
    cfx_scope_end(scope);
    return rc;
}

static int call_builtin(run *r, const cfx_node *n, const cfx_builtin_fn *fn, cfx_value *res)
{
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    if (nk && !fn->kwargs_dict)
        return cfx_error_set(CFX_ERR, NULL, "%s() takes no keyword arguments", fn->qualified_name);
    if (reserve_stack(r, na + 1) != CFX_OK || reserve_scratch(r, n) != CFX_OK)
        return CFX_ERR;
    for (uint32_t i = 0; i < na; i++)
        if (subst(r, n, cfx_node_arg(n, i), &r->stack[i]) != CFX_OK)
            return CFX_ERR;
    cfx_value v;
    cfx_scope scope = cfx_scope_begin(); /* what a later layer's builtin returns is scope-owned */
    int rc = CFX_OK;
    if (fn->kwargs_dict) { /* target(*args, **kwargs): the kwargs as one trailing dict */
        const cfx_kwarg *kw = cfx_node_kwargs(n);
        cfx_value *kv = cfx_scope_alloc((2 * (size_t)nk + 1) * sizeof *kv);
        if (!kv)
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; rc == CFX_OK && i < nk; i++) {
            kv[2 * i] = cfx_string(kw[i].name);
            rc = subst(r, n, kw[i].value, &kv[2 * i + 1]);
        }
        r->stack[na++] = cfx_dict(kv, nk);
    }
    if (rc == CFX_OK)
        rc = ir_interp_builtin(fn, r->stack, na, &v);
    if (rc == CFX_OK)
        rc = own(v, res, 1);
    cfx_scope_end(scope);
    return rc;
}

/* ---- the other opcodes -------------------------------------------------------------------- */

static int placeholder(run *r, const cfx_node *n, cfx_value *res)
{
    const char *target = cfx_node_target_str(n);
    if (target && target[0] == '*') { /* *args: the rest, as a list */
        cfx_value rest = cfx_list(r->args + r->next_arg, (uint32_t)(r->n_args - r->next_arg));
        r->next_arg = r->n_args;
        return own(rest, res, 0);
    }
    if (r->next_arg < r->n_args)
        return own(r->args[r->next_arg++], res, 0);
    if (cfx_node_num_args(n) > 0) { /* the default value */
        if (reserve_scratch(r, n) != CFX_OK)
            return CFX_ERR;
        cfx_value v;
        if (subst(r, n, cfx_node_arg(n, 0), &v) != CFX_OK)
            return CFX_ERR;
        return own(v, res, 0);
    }
    return cfx_error_set(CFX_ERR, NULL, "Expected positional argument for parameter %s, but one was not passed in!",
                         target ? target : "?");
}

static int get_attr(run *r, const cfx_node *n, cfx_value *res)
{
    const char *target = cfx_node_target_str(n);
    const cfx_graph_module *gm = r->o->module;
    cfx_tensor *t = target ? cfx_graph_module_get_attr(gm, target) : NULL;
    if (t) {
        *res = cfx_tensor_value(cfx_tensor_retain(t));
        return CFX_OK;
    }
    cfx_value opaque = target ? cfx_graph_module_get_attr_opaque(gm, target) : cfx_none();
    if (opaque.kind != CFX_V_NONE) { /* a script object or generator: the module keeps it alive */
        *res = opaque;
        return CFX_OK;
    }
    if (!target)
        return cfx_error_set(CFX_ERR, NULL, "get_attr without a target");
    /* fetch_attr: the first dotted prefix that is missing */
    size_t len = strlen(target);
    for (size_t i = 0; i <= len; i++) {
        if (target[i] != '.' && target[i] != '\0')
            continue;
        char *prefix = cfx_strndup(target, i);
        if (!prefix)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        bool has = cfx_graph_module_has_path(gm, prefix);
        int rc = has ? CFX_OK : cfx_error_set(CFX_ERR, NULL, "Node referenced nonexistent target %s", prefix);
        cfx_free(prefix);
        if (!has)
            return rc;
    }
    return cfx_error_set(CFX_ERR, NULL, "get_attr %s names a submodule, not a tensor", target);
}

static void plan_target(op_plan *p, const cfx_target_info *t)
{
    p->op = cfx_target_info_op(t);
    p->fn = cfx_target_info_fn(t);
    p->schema = p->op ? cfx_op_schema(p->op) : NULL;
    p->width = p->schema ? (size_t)(p->schema->n_args > p->schema->n_returns ? p->schema->n_args
                                                                             : p->schema->n_returns)
                         : 0;
    p->ready = true;
}

/* n's target's plan, made at the first node that calls the target (in spare for a target the
 * graph did not have when the run began). */
static inline const op_plan *plan_of(run *r, const cfx_node *n, op_plan *spare)
{
    op_plan *p = &r->plans[n->target_id];
    if (n->target_id >= r->n_plans) {
        p = spare;
        p->ready = false;
    }
    if (!p->ready)
        plan_target(p, r->g->targets[n->target_id]);
    return p;
}

/* n's value in *res (set on success). call_function, the common node, is asked for first. */
static int run_node(run *r, cfx_node *n, cfx_value *res)
{
    if (cfx_node_opcode(n) == CFX_NODE_CALL_FUNCTION) {
        op_plan spare;
        const op_plan *p = plan_of(r, n, &spare);
        if (p->op)
            return call_op(r, n, p, res);
        if (p->fn)
            return call_builtin(r, n, p->fn, res);
        return cfx_error_set(CFX_ERR, NULL, "call_function without a callable target");
    }
    /* *res is n's slot, read by a reference to n: it stays unset until n has its value */
    switch (cfx_node_opcode(n)) {
    case CFX_NODE_PLACEHOLDER:
        return placeholder(r, n, res);
    case CFX_NODE_GET_ATTR:
        return get_attr(r, n, res);
    case CFX_NODE_CALL_METHOD:
    case CFX_NODE_CALL_MODULE:
        return cfx_error_set(CFX_ERR, NULL, "cfx's interpreter cannot run %s nodes (cfx graphs have no Python objects)",
                             cfx_node_op_name(n->op));
    case CFX_NODE_OUTPUT: {
        if (cfx_node_num_args(n) == 0) {
            *res = cfx_none();
            return CFX_OK;
        }
        cfx_value v;
        if (reserve_scratch(r, n) != CFX_OK || subst(r, n, cfx_node_arg(n, 0), &v) != CFX_OK)
            return CFX_ERR;
        return own(v, res, 0);
    }
    default:
        return cfx_error_set(CFX_ERR, NULL, "unknown node opcode %d", n->op);
    }
}

/* ---- the run ------------------------------------------------------------------------------ */

/* FX's error context: the message, then the node and its stack trace. */
static void annotate(const cfx_node *n)
{
    cfx_status st = cfx_error_status();
    char *msg = cfx_strdup(cfx_error_message()), *op = cfx_strdup(cfx_error_op());
    cfx_site site = cfx_error_site();
    char *file = cfx_strdup(site.file), *func = cfx_strdup(site.func);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, msg ? msg : "unknown error");
    cfx_buf_puts(&b, "\n\nWhile executing ");
    cfx_node_format(n, &b);
    cfx_buf_puts(&b, "\nOriginal traceback:\n");
    const cfx_site *tr = cfx_node_stack_trace(n);
    if (tr) {
        cfx_buf_printf(&b, "  File \"%s\", line %d", tr->file ? tr->file : "?", tr->line);
        if (tr->func)
            cfx_buf_printf(&b, ", in %s", tr->func);
    } else {
        cfx_buf_puts(&b, "None");
    }
    cfx_error_clear();
    cfx_site keep = {file, site.line, func};
    const cfx_site *prev = cfx_set_current_site(file ? &keep : NULL);
    cfx_error_set_text(st == CFX_OK ? CFX_ERR : st, op, b.oom ? msg : b.data);
    cfx_set_current_site(prev);
    cfx_buf_free(&b);
    cfx_free(msg);
    cfx_free(op);
    cfx_free(file);
    cfx_free(func);
}

/* Refuses more positional arguments than the graph has placeholders (unless one is *args).
 * Placeholders come first in the graphs cfx makes, so counting the leading ones settles the
 * common case; only when the arguments outnumber them is the whole graph walked. */
static int check_arg_count(run *r)
{
    int n_ph = 0;
    cfx_graph *g = (cfx_graph *)r->g;
    cfx_node *n = cfx_graph_first(g);
    for (; n && n->op == CFX_NODE_PLACEHOLDER && r->n_args > n_ph; n = ir_next_in(g, n))
        n_ph++;
    if (r->n_args <= n_ph)
        return CFX_OK;
    bool star = false;
    for (n = cfx_graph_first(g), n_ph = 0; n; n = ir_next_in(g, n)) {
        if (n->op == CFX_NODE_PLACEHOLDER) {
            const char *t = cfx_node_target_str(n);
            star |= t && t[0] == '*';
            n_ph++;
        }
    }
    if (r->n_args > n_ph && !star)
        return cfx_error_set(CFX_ERR, NULL, "the graph takes %d positional argument%s but %d were given", n_ph,
                             n_ph == 1 ? "" : "s", r->n_args);
    return CFX_OK;
}

static void drop_slot(run *r, uint32_t seq)
{
    cfx_value v = r->env[seq];
    if (v.kind == CFX_V_TENSOR) /* the common value, without drop's call */
        cfx_tensor_release(v.u.t);
    else
        drop(v);
    r->env[seq].kind = UNSET;
    r->live--;
}

/* Settles n's use of each of its inputs (n has run), dropping the values with no use left,
 * and n's own value if nothing uses it. An input of another graph (an IR_EXT ref) has no slot
 * here; neither has one whose value was never made (an unused placeholder default), whose
 * pending count is 0 as for a dropped value: only a slot with a value has uses pending. The
 * node's input records are one run in one block (ir_use_alloc), so they are addressed once. */
static void drop_dead(run *r, const cfx_node *n)
{
    uint32_t *pending = r->pending, n_slots = r->n_slots, n_inputs = n->n_inputs;
    const ir_use *in = n_inputs ? ir_use_at(r->g, n->inputs) : NULL;
    for (uint32_t i = 0; i < n_inputs; i++) {
        uint32_t ref = in[i].producer;
        if (ref < n_slots && pending[ref] && --pending[ref] == 0) /* an IR_EXT ref is >= n_slots */
            drop_slot(r, ref);
    }
    if (n->n_users == 0)
        drop_slot(r, n->seq);
}

int cfx_interpret(const cfx_graph *g, const cfx_value *args, int n_args, const cfx_interp_options *opts,
                  cfx_value *out)
{
    if (out)
        *out = cfx_none();
    if (cfx_error_occurred()) /* the first error of a context wins */
        return cfx_error_status();
    if (!g || !out || n_args < 0 || (n_args > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "cfx_interpret: NULL graph, arguments or result");
    if (cfx_scope_depth() == 0)
        return cfx_error_set(CFX_ERR, NULL, "cfx_interpret: no scope is open to own the results (cfx_scope_begin)");
    cfx_interp_options none = {0};
    run r = {.g = g, .o = opts ? opts : &none, .args = args, .n_args = n_args, .n_slots = cfx_graph_num_created(g),
             .foreign = g->has_foreign_uses, .n_plans = g->tinfo_count};
    size_t n = r.n_slots ? r.n_slots : 1;
    r.env = cfx_malloc(n * sizeof *r.env);
    r.pending = cfx_calloc(n, sizeof *r.pending); /* set when the node's value is, 0 without one */
    r.plans = cfx_calloc((size_t)r.n_plans + 1, sizeof *r.plans);
    int rc = r.env && r.pending && r.plans ? CFX_OK : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (uint32_t i = 0; rc == CFX_OK && i < r.n_slots; i++)
        r.env[i].kind = UNSET;
    if (rc == CFX_OK)
        rc = check_arg_count(&r);
    const cfx_site *prev_site = cfx_current_site();
    for (cfx_node *node = rc == CFX_OK ? cfx_graph_first(g) : NULL; node; node = ir_next_in((cfx_graph *)g, node)) {
        cfx_error_swap_site(cfx_node_stack_trace(node)); /* cfx_set_current_site, inline: per node */
        /* the value is made in its slot: a copy out of a local was read back as one 16-byte
         * load of two 8-byte stores, which stalls store-to-load forwarding on every node */
        cfx_value *slot = &r.env[node->seq];
        rc = run_node(&r, node, slot);
        if (rc != CFX_OK)
            slot->kind = UNSET;
        if (rc == CFX_OK) {
            r.pending[node->seq] = node->n_users;
            r.live++;
            if (r.o->on_node && (rc = r.o->on_node(node, *slot, r.o->on_node_ctx)) != CFX_OK && !cfx_error_occurred())
                cfx_error_set(rc, NULL, "the on_node callback failed");
        }
        if (rc == CFX_OK && node->op == CFX_NODE_OUTPUT)
            rc = give(*slot, out, 0);
        if (rc != CFX_OK) {
            annotate(node);
            break;
        }
        if (node->op == CFX_NODE_OUTPUT)
            break;
        drop_dead(&r, node);
    }
    cfx_set_current_site(prev_site);
    /* what is left: the output's value and the values used by it or by other graphs, which
     * are mostly the last made (the walk stops at the last one) */
    for (uint32_t i = r.n_slots; r.env && r.live > 0 && i-- > 0;)
        if (r.env[i].kind != UNSET)
            drop_slot(&r, i);
    cfx_free(r.env);
    cfx_free(r.pending);
    cfx_free(r.scratch);
    cfx_free(r.stack);
    cfx_free(r.bound);
    cfx_free(r.plans);
    if (rc != CFX_OK)
        *out = cfx_none();
    return rc;
}

int cfx_graph_module_run(const cfx_graph_module *gm, const cfx_value *args, int n_args, cfx_value *out)
{
    if (!gm) {
        if (out)
            *out = cfx_none();
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR, NULL, "cfx_graph_module_run: NULL module");
    }
    cfx_interp_options o = {.module = gm};
    return cfx_interpret(cfx_graph_module_graph(gm), args, n_args, &o, out);
}
