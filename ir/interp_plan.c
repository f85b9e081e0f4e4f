/* interp_plan.c - a graph compiled into the interpreter's run program.
 *
 * FX's Interpreter works out in __init__, once for all its runs, which node is each value's
 * last user (user_to_last_uses), so that run() can free a value right after that user ran.
 * cfx compiles the whole run that way: one step per live node in graph order, whose values
 * are the node's arguments with every node reference turned into the index of the producing
 * step (the run's environment is an array by step index), a call_function's kwargs already
 * moved to their schema positions as torch.ops' Python binding moves them (skipped defaults
 * filled in; cfx_op_call fills the rest), and the list of slots that die after it. So a run
 * does no lookup by name or node and no counting: it copies values and calls.
 *
 * Problems that FX reports when the node runs stay there: a node that cannot run (a binding
 * error, an input that has no value at that point because the graph is out of order or the
 * input is in another graph, a call_method) compiles to a FAIL step holding the error, which
 * the run records when it reaches the step, after the nodes before it ran. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/schema.h"
#include "ir/internal.h"
#include "ir/interp_internal.h"

#define NONE UINT32_MAX

typedef struct build {
    const cfx_graph *g;
    ir_program *p;
    uint32_t *index;  /* by node seq: its step, NONE for a node not in the run (yet) */
    uint32_t n_seq;   /* the graph's seq bound */
    uint32_t current; /* the step whose values are being made */
    uint32_t *last;   /* by step: the last step so far that uses its value (its own: none yet) */
} build;

/* ---- growing the program's arrays -------------------------------------------------------------- */

static bool grow(void **a, uint32_t *cap, uint64_t need, size_t size)
{
    if (need <= *cap)
        return true;
    if (need > UINT32_MAX)
        return false;
    uint64_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    c = c > UINT32_MAX ? UINT32_MAX : c;
    void *n = cfx_realloc(*a, (size_t)c * size);
    if (!n)
        return false;
    *a = n;
    *cap = (uint32_t)c;
    return true;
}

static int nomem(void) { return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory"); }

/* n more values at the end of vals; their index in *at. */
static inline int add_vals(ir_program *p, uint32_t n, uint32_t *at)
{
    uint64_t need = (uint64_t)p->n_vals + n;
    if (need > p->cap_vals && !grow((void **)&p->vals, &p->cap_vals, need, sizeof *p->vals))
        return nomem();
    *at = p->n_vals;
    p->n_vals += n;
    return CFX_OK;
}

/* ---- failures ------------------------------------------------------------------------------------ */

/* Turns the error just recorded into step s's failure (and clears it): the run records it again
 * when it reaches s. Running out of memory is the compile's own failure. */
static int fail_step(ir_program *p, ir_step *s)
{
    cfx_status st = cfx_error_status();
    if (st == CFX_ERR_NOMEM)
        return st;
    if (!grow((void **)&p->fails, &p->cap_fails, p->n_fails + 1, sizeof *p->fails))
        return nomem();
    ir_interp_failure *f = &p->fails[p->n_fails];
    const char *op = cfx_error_op(), *msg = cfx_error_message();
    f->status = st == CFX_OK ? CFX_ERR : st;
    f->op = op ? cfx_strdup(op) : NULL;
    f->msg = cfx_strdup(msg ? msg : "the node cannot run");
    if ((op && !f->op) || !f->msg) {
        cfx_free(f->op);
        cfx_free(f->msg);
        return nomem();
    }
    cfx_error_clear();
    s->kind = IR_STEP_FAIL;
    s->val = p->n_fails++;
    s->n_val = 0;
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

/* ---- values ------------------------------------------------------------------------------------- */

/* A node reference as the slot of its step, which must come before the current one (steps are
 * numbered as the graph is walked, so a later node has none yet). The step the seq names must
 * hold this very node: a node of another graph can have the same seq. The current step is the
 * value's last use so far, and one of its node's users seen (counted down in the step's n_drop). */
static inline int plan_ref(build *b, const cfx_node *in, cfx_value *out)
{
    uint32_t at = in && in->seq < b->n_seq ? b->index[in->seq] : NONE;
    if (at >= b->current || b->p->steps[at].node != in)
        return in ? unset_input(in, b->p->steps[b->current].node) : cfx_error_set(CFX_ERR, NULL, "a NULL node reference");
    if (b->last[at] != b->current) {
        ir_step *producer = &b->p->steps[at];
        b->last[at] = b->current;
        producer->n_drop -= producer->n_drop > 0;
    }
    *out = (cfx_value){.kind = IR_INTERP_SLOT, .u.i = at};
    return CFX_OK;
}

static int plan_list(build *b, cfx_value v, cfx_value *out, bool *lists, int depth);

/* v as the run reads it, in *out: node references as slots; a list copied with its items made
 * so (the copy is the program's). *lists is set for any list: the run copies lists into
 * scratch, so an operator that normalizes a list's items in place never writes into the
 * graph. */
static inline int plan_value(build *b, cfx_value v, cfx_value *out, bool *lists, int depth)
{
    if (v.kind == CFX_V_NODE)
        return plan_ref(b, v.u.node, out);
    if (cfx_value_is_container(v))
        return plan_list(b, v, out, lists, depth);
    *out = v;
    return CFX_OK;
}

static int plan_list(build *b, cfx_value v, cfx_value *out, bool *lists, int depth)
{
    *out = v;
    *lists = true;
    if (depth > IR_INTERP_MAX_DEPTH)
        return cfx_error_set(CFX_ERR, NULL, "value nested deeper than %d levels", IR_INTERP_MAX_DEPTH);
    ir_program *p = b->p;
    if (!v.len || !grow((void **)&p->owned, &p->cap_owned, p->n_owned + 1, sizeof *p->owned))
        return v.len ? nomem() : CFX_OK;
    cfx_value *items = cfx_malloc(v.len * sizeof *items);
    if (!items)
        return nomem();
    p->owned[p->n_owned++] = items;
    for (uint32_t i = 0; i < v.len; i++) {
        int rc = plan_value(b, v.u.items[i], &items[i], lists, depth + 1);
        if (rc != CFX_OK)
            return rc;
    }
    out->u.items = items;
    return CFX_OK;
}

/* Scratch items a value needs at run time (every list is copied). */
static size_t count_items(cfx_value v)
{
    if (!cfx_value_is_container(v))
        return 0;
    size_t n = v.len;
    for (uint32_t i = 0; i < v.len; i++)
        n += count_items(v.u.items[i]);
    return n;
}

/* The step's values from vals[0..n): each planned into the program's array. */
static int plan_values(build *b, ir_step *s, const cfx_value *vals, uint32_t n)
{
    int rc = add_vals(b->p, n, &s->val);
    if (rc != CFX_OK)
        return rc;
    s->n_val = n;
    for (uint32_t i = 0; i < n; i++)
        if ((rc = plan_value(b, vals[i], &b->p->vals[s->val + i], &s->lists, 1)) != CFX_OK)
            return rc;
    return CFX_OK;
}

/* ---- binding a call_function's arguments ---------------------------------------------------- */

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

/* torch.ops' binding of n's args and kwargs to op's schema: args at their positions, each
 * kwarg at its argument's, the defaults before the last one given filled in. */
static int plan_op(build *b, ir_step *s, const cfx_op *op)
{
    const cfx_node *n = s->node;
    const cfx_schema *sch = cfx_op_schema(op);
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    s->kind = IR_STEP_OP;
    s->target = op;
    if (!sch) /* the run's cfx_op_call reports "Could not find schema for ..." */
        return CFX_OK;
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    uint32_t end = na;
    for (uint32_t k = 0; k < nk; k++) {
        int i = cfx_schema_find_arg(sch, kw[k].name);
        if (i < 0)
            return binding_error(sch, "Unknown keyword argument '%s' for operator '%s'. Schema: ", kw[k].name);
        if ((uint32_t)i < na)
            return binding_error(sch, "Argument '%s' specified both as positional and keyword argument. Schema: %.0s",
                                 kw[k].name);
        for (uint32_t j = 0; j < k; j++)
            if (!strcmp(kw[j].name, kw[k].name))
                return binding_error(sch, "Argument '%s' specified both as positional and keyword argument. "
                                          "Schema: %.0s",
                                     kw[k].name);
        if ((uint32_t)i + 1 > end)
            end = (uint32_t)i + 1;
    }
    int rc = plan_values(b, s, cfx_node_args(n), na);
    uint32_t at = 0;
    if (rc != CFX_OK || (end > na && (rc = add_vals(b->p, end - na, &at)) != CFX_OK))
        return rc;
    s->n_val = end;
    cfx_value *vals = b->p->vals + s->val; /* planning a value adds no vals: a list's copy is apart */
    for (uint32_t i = na; i < end; i++)
        vals[i].kind = IR_INTERP_UNSET;
    for (uint32_t k = 0; k < nk; k++)
        if ((rc = plan_value(b, kw[k].value, &vals[cfx_schema_find_arg(sch, kw[k].name)], &s->lists, 1)) != CFX_OK)
            return rc;
    for (uint32_t i = na; i < end; i++) {
        if (vals[i].kind != IR_INTERP_UNSET)
            continue;
        if (!sch->args[i].has_default) {
            cfx_buf m;
            cfx_buf_init(&m);
            cfx_buf_printf(&m, "%s() is missing value for argument '%s'. Declaration: ", sch->name, sch->args[i].name);
            cfx_schema_print(sch, &m);
            rc = cfx_error_set_text(CFX_ERR, NULL, m.oom ? "bad arguments" : m.data);
            cfx_buf_free(&m);
            return rc;
        }
        vals[i] = sch->args[i].default_value;
    }
    size_t width = (size_t)(sch->n_args > sch->n_returns ? sch->n_args : sch->n_returns);
    s->width = (uint32_t)(width > end ? width : end);
    return CFX_OK;
}

/* A builtin's args, then its kwargs' values (their names stay the node's). */
static int plan_builtin(build *b, ir_step *s, const cfx_builtin_fn *fn)
{
    const cfx_node *n = s->node;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    s->kind = IR_STEP_BUILTIN;
    s->target = fn;
    if (nk && !fn->kwargs_dict)
        return cfx_error_set(CFX_ERR, NULL, "%s() takes no keyword arguments", fn->qualified_name);
    s->width = na + (nk ? nk : 1); /* the kwargs' values, then in their place one trailing dict */
    int rc = plan_values(b, s, cfx_node_args(n), na);
    if (rc != CFX_OK || !nk)
        return rc;
    uint32_t at = 0;
    if ((rc = add_vals(b->p, nk, &at)) != CFX_OK)
        return rc;
    s->n_val += nk;
    for (uint32_t k = 0; k < nk; k++)
        if ((rc = plan_value(b, cfx_node_kwargs(n)[k].value, &b->p->vals[at + k], &s->lists, 1)) != CFX_OK)
            return rc;
    return CFX_OK;
}

static int plan_step(build *b, ir_step *s)
{
    cfx_node *n = s->node;
    switch (cfx_node_opcode(n)) {
    case CFX_NODE_CALL_FUNCTION: {
        const cfx_target_info *t = b->g->targets[n->target_id];
        const cfx_op *op = cfx_target_info_op(t);
        const cfx_builtin_fn *fn = cfx_target_info_fn(t);
        if (op)
            return plan_op(b, s, op);
        if (fn)
            return plan_builtin(b, s, fn);
        return cfx_error_set(CFX_ERR, NULL, "call_function without a callable target");
    }
    case CFX_NODE_PLACEHOLDER: {
        const char *target = cfx_node_target_str(n);
        b->p->n_placeholders++;
        b->p->star_args |= target && target[0] == '*';
        s->kind = IR_STEP_PLACEHOLDER;
        return plan_values(b, s, cfx_node_args(n), cfx_node_num_args(n) ? 1 : 0);
    }
    case CFX_NODE_GET_ATTR:
        s->kind = IR_STEP_GET_ATTR;
        return CFX_OK;
    case CFX_NODE_CALL_METHOD:
    case CFX_NODE_CALL_MODULE:
        return cfx_error_set(CFX_ERR, NULL, "cfx's interpreter cannot run %s nodes (cfx graphs have no Python objects)",
                             cfx_node_op_name(n->op));
    case CFX_NODE_OUTPUT:
        s->kind = IR_STEP_OUTPUT;
        return plan_values(b, s, cfx_node_args(n), cfx_node_num_args(n) ? 1 : 0);
    default:
        return cfx_error_set(CFX_ERR, NULL, "unknown node opcode %d", n->op);
    }
}

/* ---- last uses ------------------------------------------------------------------------------------ */

/* Where each value dies: after its last user in the run, or after its own step if nothing uses
 * it. A value with a user the run does not have (a node of another graph) lives to the end of
 * the run. (A value a FAIL step uses may be set to die after a later step: the run stops at the
 * FAIL step, and its end drops what is left.) The drops of all steps are one array, by step (a
 * counting sort on the step each value dies at); until then each step's n_drop holds how many of
 * its node's users the program has not seen (not 0: a user in another graph). */
static void plan_drops(build *b)
{
    ir_program *p = b->p;
    uint32_t n = p->n_steps, *last = b->last;
    for (uint32_t i = 0; i < n; i++) {
        if (p->steps[i].n_drop)
            last[i] = NONE;
        p->steps[i].n_drop = 0;
    }
    for (uint32_t i = 0; i < n; i++)
        if (last[i] != NONE)
            p->steps[last[i]].n_drop++;
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        p->steps[i].drop = at;
        at += p->steps[i].n_drop;
        p->steps[i].n_drop = 0;
    }
    for (uint32_t i = 0; i < n; i++)
        if (last[i] != NONE) {
            ir_step *s = &p->steps[last[i]];
            p->drops[s->drop + s->n_drop++] = i;
        }
}

/* ---- the program ------------------------------------------------------------------------------- */

void ir_program_free(ir_program *p)
{
    for (uint32_t i = 0; i < p->n_fails; i++) {
        cfx_free(p->fails[i].op);
        cfx_free(p->fails[i].msg);
    }
    for (uint32_t i = 0; i < p->n_owned; i++)
        cfx_free(p->owned[i]);
    cfx_free(p->block);
    cfx_free(p->vals);
    cfx_free(p->fails);
    cfx_free(p->owned);
    *p = (ir_program){0};
}

/* One walk of the graph: each node gets its step (numbered as it comes, so a reference to a
 * node further on finds none) and is planned at once. */
int ir_program_build(const cfx_graph *g, ir_program *p)
{
    *p = (ir_program){0};
    uint32_t n = cfx_graph_num_nodes(g), n_seq = cfx_graph_num_created(g);
    build b = {.g = g, .p = p, .n_seq = n_seq};
    /* env, steps (16-byte multiples first), then drops and last by step, and index by seq */
    size_t n1 = n ? n : 1, at_steps = n1 * sizeof *p->env, at_drops = at_steps + n1 * sizeof *p->steps;
    size_t size = at_drops + 2 * n1 * sizeof(uint32_t) + (size_t)n_seq * sizeof(uint32_t);
    p->block = cfx_malloc(size);
    /* most nodes take one or two node values: the values rarely grow past this */
    int rc = p->block && grow((void **)&p->vals, &p->cap_vals, 2 * (uint64_t)n + 16, sizeof *p->vals) ? CFX_OK : nomem();
    if (rc == CFX_OK) {
        char *m = p->block;
        p->env = (cfx_value *)(void *)m;
        p->steps = (ir_step *)(void *)(m + at_steps);
        p->drops = (uint32_t *)(void *)(m + at_drops);
        b.last = p->drops + n1;
        b.index = b.last + n1;
        memset(b.index, 0xff, (size_t)n_seq * sizeof *b.index); /* NONE */
    }
    for (cfx_node *node = rc == CFX_OK ? cfx_graph_first((cfx_graph *)g) : NULL; node && p->n_steps < n;
         node = ir_next_in((cfx_graph *)g, node)) {
        uint32_t i = p->n_steps++;
        ir_step *s = &p->steps[i];
        b.index[node->seq] = i;
        b.current = i;
        /* n_drop: the users still to be seen, for plan_drops */
        *s = (ir_step){.node = node, .site = cfx_node_stack_trace(node), .n_drop = node->n_users};
        b.last[i] = i;
        rc = plan_step(&b, s);
        if (rc != CFX_OK && (rc = fail_step(p, s)) != CFX_OK)
            break;
        size_t scratch = 0;
        for (uint32_t k = 0; s->lists && k < s->n_val; k++)
            scratch += count_items(p->vals[s->val + k]);
        p->max_scratch = scratch > p->max_scratch ? scratch : p->max_scratch;
        p->max_width = s->width > p->max_width ? s->width : p->max_width;
    }
    if (rc == CFX_OK)
        plan_drops(&b);
    if (rc != CFX_OK)
        ir_program_free(p);
    return rc;
}
