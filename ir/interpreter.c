/* interpreter.c - running a graph node by node (torch.fx.Interpreter).
 *
 * A cfx_interpreter is FX's Interpreter object: made for a graph, run any number of times.
 * Making it compiles the graph into a run program (interp_plan.c: every node's arguments with
 * node references turned into slots, kwargs bound to schema positions, and the slots that die
 * after each step, as FX's __init__ works out user_to_last_uses once); a run then walks the
 * steps. The program is remade before a run if the graph changed since (its version).
 *
 * The environment is an array of values by step index (in the program's block). Each slot
 * owns its value: a tensor holds one reference, a tuple or list owns a malloc'd item array
 * (deeply). A slot without a value has the kind IR_INTERP_UNSET, so the run's end knows what
 * is left to drop.
 *
 * An operator step puts its values on the stack (slots read from the environment; lists copied
 * into a scratch array reused across steps) and calls the operator boxed with a scope open
 * around the call: the environment takes the result's reference from the scope (or retains it,
 * if the call left more there) and the scope's end releases the call's temporaries, so a
 * dropped value is really freed at its last use, not at the end of the run. cfx_op_call checks
 * the arguments' types and dispatches in one walk over the stack, as it does for every boxed
 * caller. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/error_internal.h"
#include "dispatch/schema.h"
#include "dispatch/scope_internal.h"
#include "dispatch/tensor.h"
#include "ir/internal.h"
#include "ir/interp_internal.h"
#include "ir/interpreter.h"

struct cfx_interpreter {
    const cfx_graph *g;
    cfx_interp_options o;
    ir_program prog;
    uint32_t version;   /* the graph's version the program was made from */
    bool compiled;      /* the program is whole (a failed compile leaves none) */
    cfx_value *stack;   /* the boxed call's stack (prog.max_width) */
    cfx_value *scratch; /* list items of the step's values (prog.max_scratch) */
    bool running;
};

/* One run's state. */
typedef struct run {
    cfx_interpreter *ip;
    const ir_program *p;
    cfx_value *env;
    const cfx_value *args;
    int n_args, next_arg;
    cfx_value *out; /* the caller's: the output's value, given to its scope */
    size_t n_scratch;
    uint32_t live; /* slots holding a value */
} run;

static int too_deep(void)
{
    return cfx_error_set(CFX_ERR, NULL, "value nested deeper than %d levels", IR_INTERP_MAX_DEPTH);
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
    if (depth > IR_INTERP_MAX_DEPTH)
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
    if (depth > IR_INTERP_MAX_DEPTH)
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

/* ---- a step's values ------------------------------------------------------------------------- */

/* A program value as the step sees it: a slot's value (borrowed from the environment), a list
 * copied into scratch with its items so made (sized by the program, so it always fits). */
static void subst_list(run *r, cfx_value v, cfx_value *out);

static inline void subst(run *r, cfx_value v, cfx_value *out)
{
    if (v.kind == IR_INTERP_SLOT)
        *out = r->env[v.u.i];
    else if (cfx_value_is_container(v))
        subst_list(r, v, out);
    else
        *out = v;
}

static void subst_list(run *r, cfx_value v, cfx_value *out)
{
    cfx_value *items = r->ip->scratch + r->n_scratch;
    r->n_scratch += v.len;
    for (uint32_t i = 0; i < v.len; i++)
        subst(r, v.u.items[i], &items[i]);
    *out = v;
    out->u.items = items;
}

/* The step's values into dst[0..n_val). */
static inline void subst_all(run *r, const ir_step *s, cfx_value *dst)
{
    const cfx_value *v = r->p->vals + s->val;
    r->n_scratch = 0;
    if (s->lists) {
        for (uint32_t i = 0; i < s->n_val; i++)
            subst(r, v[i], &dst[i]);
        return;
    }
    for (uint32_t i = 0; i < s->n_val; i++) { /* the common step: slots and constants */
        const cfx_value *e = v[i].kind == IR_INTERP_SLOT ? &r->env[v[i].u.i] : &v[i];
        /* a tensor as its pointer: the slot was just written as two 8-byte halves, and a
         * 16-byte copy of it would wait for both to reach the cache (no store forwarding) */
        if (e->kind == CFX_V_TENSOR)
            dst[i] = cfx_tensor_value(e->u.t);
        else
            dst[i] = *e;
    }
}

/* ---- the steps ------------------------------------------------------------------------------- */

static int call_op(run *r, const ir_step *s, cfx_value *res)
{
    cfx_op *op = (cfx_op *)s->target;
    const cfx_schema *sch = cfx_op_schema(op);
    cfx_value *stack = r->ip->stack;
    if (!sch) /* the dispatcher's own error: "Could not find schema for ..." */
        return cfx_op_call(op, stack, 0, 0);
    subst_all(r, s, stack);
    cfx_scope scope = cfx_scope_open();
    int rc = cfx_op_call(op, stack, (int)s->n_val, (int)s->width);
    if (rc == CFX_OK && sch->n_returns == 1 && stack[0].kind == CFX_V_TENSOR && stack[0].u.t) {
        /* own()'s common case: the scope's reference, or a new one if it holds more */
        *res = cfx_tensor_value(cfx_scope_end_keep(scope, stack[0].u.t));
        return CFX_OK;
    }
    if (rc == CFX_OK) {
        if (sch->n_returns == 0) {
            *res = cfx_none();
        } else if (sch->n_returns == 1) {
            rc = own(stack[0], res, 1);
        } else {
            cfx_value t = cfx_tuple(stack, sch->n_returns);
            rc = own(t, res, 0);
        }
    }
    cfx_scope_end(scope);
    return rc;
}

static int call_builtin(run *r, const ir_step *s, cfx_value *res)
{
    const cfx_builtin_fn *fn = s->target;
    uint32_t nk = cfx_node_num_kwargs(s->node), na = s->n_val - nk;
    cfx_value *stack = r->ip->stack;
    subst_all(r, s, stack);
    cfx_value v;
    cfx_scope scope = cfx_scope_begin(); /* what a later layer's builtin returns is scope-owned */
    int rc = CFX_OK;
    if (fn->kwargs_dict) { /* target(*args, **kwargs): the kwargs as one trailing dict */
        const cfx_kwarg *kw = cfx_node_kwargs(s->node);
        cfx_value *kv = cfx_scope_alloc((2 * (size_t)nk + 1) * sizeof *kv);
        if (!kv)
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; rc == CFX_OK && i < nk; i++) {
            kv[2 * i] = cfx_string(kw[i].name);
            kv[2 * i + 1] = stack[na + i];
        }
        stack[na] = cfx_dict(kv, nk);
        na++;
    }
    if (rc == CFX_OK)
        rc = ir_interp_builtin(fn, stack, na, &v);
    if (rc == CFX_OK)
        rc = own(v, res, 1);
    cfx_scope_end(scope);
    return rc;
}

static int placeholder(run *r, const ir_step *s, cfx_value *res)
{
    const char *target = cfx_node_target_str(s->node);
    if (target && target[0] == '*') { /* *args: the rest, as a list */
        cfx_value rest = cfx_list(r->args + r->next_arg, (uint32_t)(r->n_args - r->next_arg));
        r->next_arg = r->n_args;
        return own(rest, res, 0);
    }
    if (r->next_arg < r->n_args)
        return own(r->args[r->next_arg++], res, 0);
    if (s->n_val > 0) { /* the default value */
        cfx_value v;
        subst_all(r, s, &v);
        return own(v, res, 0);
    }
    return cfx_error_set(CFX_ERR, NULL, "Expected positional argument for parameter %s, but one was not passed in!",
                         target ? target : "?");
}

static int get_attr(run *r, const cfx_node *n, cfx_value *res)
{
    const char *target = cfx_node_target_str(n);
    const cfx_graph_module *gm = r->ip->o.module;
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

/* The step's value in *res (set on success). An operator, the common step, is asked for first. */
static int run_step(run *r, const ir_step *s, cfx_value *res)
{
    if (s->kind == IR_STEP_OP)
        return call_op(r, s, res);
    switch ((ir_step_kind)s->kind) {
    case IR_STEP_BUILTIN:
        return call_builtin(r, s, res);
    case IR_STEP_PLACEHOLDER:
        return placeholder(r, s, res);
    case IR_STEP_GET_ATTR:
        return get_attr(r, s->node, res);
    case IR_STEP_OUTPUT: {
        if (s->n_val == 0) {
            *res = cfx_none();
            return CFX_OK;
        }
        cfx_value v;
        subst_all(r, s, &v);
        return own(v, res, 0);
    }
    case IR_STEP_FAIL: {
        const ir_interp_failure *f = &r->p->fails[s->val];
        return cfx_error_set_text(f->status, f->op, f->msg);
    }
    default:
        return cfx_error_set(CFX_ERR, NULL, "unknown step");
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

static inline void drop_slot(run *r, uint32_t i)
{
    cfx_value v = r->env[i];
    if (v.kind == CFX_V_TENSOR) /* the common value, without drop's call */
        cfx_tensor_unref(v.u.t);
    else
        drop(v);
    r->env[i].kind = IR_INTERP_UNSET;
    r->live--;
}

/* (Re)compiles the program and sizes the run's arrays for it. */
static int prepare(cfx_interpreter *ip)
{
    ir_program_free(&ip->prog);
    ip->compiled = false;
    ip->version = ip->g->version;
    int rc = ir_program_build(ip->g, &ip->prog);
    if (rc != CFX_OK)
        return rc;
    const ir_program *p = &ip->prog;
    cfx_value *stack = cfx_realloc(ip->stack, (p->max_width ? p->max_width : 1) * sizeof *stack);
    if (stack)
        ip->stack = stack;
    cfx_value *scratch = stack ? cfx_realloc(ip->scratch, (p->max_scratch ? p->max_scratch : 1) * sizeof *scratch) : NULL;
    if (scratch)
        ip->scratch = scratch;
    if (!scratch) {
        ir_program_free(&ip->prog);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    ip->compiled = true;
    return CFX_OK;
}

cfx_interpreter *cfx_interpreter_new(const cfx_graph *g, const cfx_interp_options *opts)
{
    if (cfx_error_occurred()) /* the first error of a context wins */
        return NULL;
    if (!g) {
        cfx_error_set(CFX_ERR, NULL, "cfx_interpreter_new: NULL graph");
        return NULL;
    }
    cfx_interpreter *ip = cfx_calloc(1, sizeof *ip);
    if (!ip) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    ip->g = g;
    if (opts)
        ip->o = *opts;
    if (prepare(ip) != CFX_OK) {
        cfx_interpreter_free(ip);
        return NULL;
    }
    return ip;
}

void cfx_interpreter_free(cfx_interpreter *ip)
{
    if (!ip)
        return;
    ir_program_free(&ip->prog);
    cfx_free(ip->stack);
    cfx_free(ip->scratch);
    cfx_free(ip);
}

/* The steps from the first, until the output or an error. */
static int run_steps(run *r)
{
    cfx_interpreter *ip = r->ip;
    const ir_program *p = r->p;
    for (uint32_t i = 0; i < p->n_steps; i++) {
        const ir_step *s = &p->steps[i];
        cfx_error_swap_site(s->site); /* cfx_set_current_site, inline: per node */
        /* the next step's values, and the record after it, are fetched while this step's call
         * runs: a run reaches them only after the call's instructions, and their wait for
         * the cache then sat between one node's result and the next call */
        if (i + 1 < p->n_steps) {
            const ir_step *next = s + 1;
            __builtin_prefetch(next + 1);
            __builtin_prefetch(p->vals + next->val);
        }
        /* the value is made in its slot: a copy out of a local was read back as one 16-byte
         * load of two 8-byte stores, which stalls store-to-load forwarding on every node */
        cfx_value *slot = &r->env[i];
        int rc = run_step(r, s, slot);
        if (rc == CFX_OK) {
            r->live++;
            if (ip->o.on_node) {
                if ((rc = ip->o.on_node(s->node, *slot, ip->o.on_node_ctx)) != CFX_OK && !cfx_error_occurred())
                    cfx_error_set(rc, NULL, "the on_node callback failed");
                if (rc == CFX_OK && ip->g->version != ip->version)
                    rc = cfx_error_set(CFX_ERR, NULL, "the graph was changed while it ran (by the on_node callback)");
            }
            if (rc == CFX_OK && s->kind == IR_STEP_OUTPUT)
                rc = give(*slot, r->out, 0);
        } else {
            slot->kind = IR_INTERP_UNSET;
        }
        if (rc != CFX_OK) {
            annotate(s->node);
            return rc;
        }
        if (s->kind == IR_STEP_OUTPUT)
            return CFX_OK;
        const uint32_t *d = p->drops + s->drop;
        for (uint32_t k = 0; k < s->n_drop; k++)
            drop_slot(r, d[k]);
    }
    return CFX_OK;
}

/* What a run's entry (fn) checks first; what names the interpreter or graph run. */
static int check_entry(const char *fn, const char *what_name, const void *what, const cfx_value *args, int n_args,
                       cfx_value *out)
{
    if (out)
        *out = cfx_none();
    if (cfx_error_occurred()) /* the first error of a context wins */
        return cfx_error_status();
    if (!what || !out || n_args < 0 || (n_args > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "%s: NULL %s, arguments or result", fn, what_name);
    if (cfx_scope_depth() == 0)
        return cfx_error_set(CFX_ERR, NULL, "%s: no scope is open to own the results (cfx_scope_begin)", fn);
    return CFX_OK;
}

int cfx_interpreter_run(cfx_interpreter *ip, const cfx_value *args, int n_args, cfx_value *out)
{
    int rc = check_entry("cfx_interpreter_run", "interpreter", ip, args, n_args, out);
    if (rc != CFX_OK)
        return rc;
    if (ip->running)
        return cfx_error_set(CFX_ERR, NULL, "cfx_interpreter_run: the interpreter is already running");
    rc = !ip->compiled || ip->version != ip->g->version ? prepare(ip) : CFX_OK;
    if (rc != CFX_OK)
        return rc;
    const ir_program *p = &ip->prog;
    if (n_args > p->n_placeholders && !p->star_args)
        return cfx_error_set(CFX_ERR, NULL, "the graph takes %d positional argument%s but %d were given",
                             p->n_placeholders, p->n_placeholders == 1 ? "" : "s", n_args);
    run r = {.ip = ip, .p = p, .env = p->env, .args = args, .n_args = n_args, .out = out};
    for (uint32_t i = 0; i < p->n_steps; i++)
        r.env[i].kind = IR_INTERP_UNSET;
    ip->running = true;
    const cfx_site *prev_site = cfx_current_site();
    rc = run_steps(&r);
    cfx_set_current_site(prev_site);
    /* what is left: the output's value and the values used by it or by other graphs, which
     * are mostly the last made (the walk stops at the last one) */
    for (uint32_t i = p->n_steps; r.live > 0 && i-- > 0;)
        if (r.env[i].kind != IR_INTERP_UNSET)
            drop_slot(&r, i);
    ip->running = false;
    if (rc != CFX_OK)
        *out = cfx_none();
    return rc;
}

int cfx_interpret(const cfx_graph *g, const cfx_value *args, int n_args, const cfx_interp_options *opts,
                  cfx_value *out)
{
    int rc = check_entry("cfx_interpret", "graph", g, args, n_args, out);
    if (rc != CFX_OK)
        return rc;
    cfx_interpreter *ip = cfx_interpreter_new(g, opts);
    rc = ip ? cfx_interpreter_run(ip, args, n_args, out) : cfx_error_status();
    cfx_interpreter_free(ip);
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
