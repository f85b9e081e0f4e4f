/* fold.c - constant folding (Inductor's ConstantFolder + constant_fold, see fold.h).
 *
 * Three walks, none recursive. The forward walk gives each node a state (unknown, constant)
 * and a constant's value, indexed by the node's seq; operator calls are bound from the node's
 * args and kwargs by the schema (kwargs to their positions, skipped positions from their
 * defaults, trailing ones filled by cfx_op_call) and run through the dispatcher with node
 * references replaced by their values. A second forward walk replaces the constant call
 * nodes that some non-constant node uses. A backward walk erases the constant nodes the
 * replacement orphaned: each erased or replaced node marks its inputs, and an input is
 * erased only when marked and left without users, so nodes that had no users before the pass
 * are not touched (that is DCE's business).
 *
 * Values live in one scope opened for the pass: the module retains what it registers, the
 * scope's end releases the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/scope.h"
#include "dispatch/tags.h"
#include "ir/passes/fold.h"

enum { UNKNOWN = 0, CONSTANT = 1 };
enum { MARKED = 1 << 1 }; /* state bit: some user of the node went away */

typedef struct folder {
    cfx_graph_module *gm;
    cfx_graph *g;
    int64_t max_numel;
    bool constructors;
    uint8_t *state; /* by seq */
    cfx_value *val; /* by seq: the value of a constant */
    uint32_t bound; /* seqs below this have a slot */
} folder;

static bool is_const(const folder *f, const cfx_node *n)
{
    return n->seq < f->bound && (f->state[n->seq] & CONSTANT);
}

/* v with node references replaced by their values: 1, or 0 when some reference is not a
 * constant (or sits deeper than one list level, which no schema type has). */
static int subst(const folder *f, cfx_value v, cfx_value *out, bool *tensor)
{
    if (v.kind == CFX_V_NODE) {
        if (!is_const(f, v.u.node))
            return 0;
        *out = f->val[v.u.node->seq];
        *tensor |= out->kind == CFX_V_TENSOR;
        return 1;
    }
    *out = v;
    if (v.kind == CFX_V_DICT) /* a dict argument (a HOP's kwargs) is never folded */
        return 0;
    if (v.kind != CFX_V_LIST && v.kind != CFX_V_TUPLE)
        return 1;
    bool has_node = false;
    for (uint32_t i = 0; i < v.len; i++)
        has_node |= v.u.items[i].kind == CFX_V_NODE || cfx_value_is_container(v.u.items[i]);
    if (!has_node)
        return 1;
    cfx_value *items = cfx_scope_alloc((v.len ? v.len : 1) * sizeof *items);
    if (!items)
        return CFX_ERR_NOMEM;
    for (uint32_t i = 0; i < v.len; i++) {
        cfx_value it = v.u.items[i];
        if (cfx_value_is_container(it))
            return 0;
        if (it.kind == CFX_V_NODE) {
            if (!is_const(f, it.u.node))
                return 0;
            it = f->val[it.u.node->seq];
            *tensor |= it.kind == CFX_V_TENSOR;
        }
        items[i] = it;
    }
    out->u.items = items;
    return 1;
}

static bool within_limit(const folder *f, cfx_value v)
{
    if (f->max_numel < 0)
        return true;
    if (v.kind == CFX_V_TENSOR)
        return v.u.t && cfx_tensor_numel(v.u.t) <= f->max_numel;
    if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE)
        for (uint32_t i = 0; i < v.len; i++)
            if (v.u.items[i].kind == CFX_V_TENSOR && !within_limit(f, v.u.items[i]))
                return false;
    return true;
}

/* Runs a constant operator call: 1 with *out set, 0 when the node is not constant (or must
 * not be folded), or an error status. */
static int eval_op(folder *f, const cfx_node *n, const cfx_op *op, cfx_value *out)
{
    const cfx_schema *s = cfx_op_schema(op);
    if (!s || s->is_vararg || cfx_op_has_tag(op, CFX_TAG_nondeterministic_seeded))
        return 0;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    if (na > s->n_args)
        return 0;
    int cap = s->n_args > s->n_returns ? s->n_args : s->n_returns;
    cfx_value *stack = cfx_scope_alloc((size_t)(cap ? cap : 1) * sizeof *stack + s->n_args);
    if (!stack)
        return CFX_ERR_NOMEM;
    bool *filled = (bool *)(stack + (cap ? cap : 1));
    memset(filled, 0, s->n_args);
    bool tensor = false;
    int used = (int)na, r;
    for (uint32_t i = 0; i < na; i++) {
        if ((r = subst(f, cfx_node_arg(n, i), &stack[i], &tensor)) != 1)
            return r;
        filled[i] = true;
    }
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t i = 0; i < nk; i++) {
        int idx = cfx_schema_find_arg(s, kw[i].name);
        if (idx < 0 || filled[idx])
            return 0; /* the interpreter would refuse it: leave the error to a run */
        if ((r = subst(f, kw[i].value, &stack[idx], &tensor)) != 1)
            return r;
        filled[idx] = true;
        if (idx + 1 > used)
            used = idx + 1;
    }
    for (int i = 0; i < used; i++) {
        if (filled[i])
            continue;
        if (!s->args[i].has_default)
            return 0;
        stack[i] = s->args[i].default_value;
    }
    if (!tensor && !f->constructors)
        return 0;
    int rc = cfx_op_call((cfx_op *)op, stack, used, cap);
    if (rc != CFX_OK)
        return rc;
    if (s->n_returns == 1) {
        *out = stack[0];
    } else {
        /* a tuple of the returns (stack is scope memory: it outlives the pass's walks) */
        *out = cfx_tuple(stack, s->n_returns);
    }
    return within_limit(f, *out) ? 1 : 0;
}

/* The forward walk. Stops giving constants after a mutating node that reads one. */
static int evaluate(folder *f)
{
    bool stop = false;
    for (cfx_node *n = cfx_graph_first(f->g); n && !stop; n = cfx_node_next(n)) {
        cfx_node_op op = cfx_node_opcode(n);
        if (op == CFX_NODE_GET_ATTR) {
            cfx_tensor *t = cfx_graph_module_get_attr(f->gm, cfx_node_target_str(n));
            if (t) {
                f->state[n->seq] = CONSTANT;
                f->val[n->seq] = cfx_tensor_value(t);
            }
            continue;
        }
        if (op != CFX_NODE_CALL_FUNCTION)
            continue;
        bool all = true;
        for (uint32_t i = 0; i < cfx_node_num_inputs(n) && all; i++)
            all = is_const(f, cfx_node_input(n, i));
        if (cfx_node_is_impure(n)) {
            const cfx_op *o = cfx_node_operator(n);
            const cfx_schema *s = o ? cfx_op_schema(o) : NULL;
            bool reads_const = false;
            for (uint32_t i = 0; i < cfx_node_num_inputs(n) && !reads_const; i++)
                reads_const = is_const(f, cfx_node_input(n, i));
            stop = s && s->is_mutable && reads_const;
            continue;
        }
        if (!all)
            continue;
        const cfx_op *o = cfx_node_operator(n);
        cfx_target_info const *ti = cfx_node_target_info(n);
        cfx_value v;
        int r = 0;
        if (o) {
            r = eval_op(f, n, o, &v);
        } else if (cfx_target_info_fn(ti) == &cfx_fn_getitem && cfx_node_num_args(n) == 2 &&
                   cfx_node_num_kwargs(n) == 0 && cfx_node_arg(n, 0).kind == CFX_V_NODE &&
                   cfx_node_arg(n, 1).kind == CFX_V_INT) {
            cfx_value c = f->val[cfx_node_arg(n, 0).u.node->seq];
            int64_t i = cfx_node_arg(n, 1).u.i;
            if ((c.kind == CFX_V_TUPLE || c.kind == CFX_V_LIST) && i >= -(int64_t)c.len && i < (int64_t)c.len) {
                v = c.u.items[i < 0 ? i + c.len : i];
                r = 1;
            }
        }
        if (r < 0)
            return r;
        if (r == 1) {
            f->state[n->seq] = CONSTANT;
            f->val[n->seq] = v;
        }
    }
    return CFX_OK;
}

static void mark_inputs(folder *f, const cfx_node *n)
{
    for (uint32_t i = 0; i < cfx_node_num_inputs(n); i++) {
        const cfx_node *in = cfx_node_input(n, i);
        if (in->seq < f->bound)
            f->state[in->seq] |= MARKED;
    }
}

/* The first _frozen_param<i> that names nothing in the module, from *next on. */
static int fresh_name(folder *f, uint32_t *next, char *buf, size_t cap)
{
    for (;; (*next)++) {
        snprintf(buf, cap, "_frozen_param%u", *next);
        if (!cfx_graph_module_has_path(f->gm, buf) && !cfx_graph_module_get_attr(f->gm, buf))
            break;
    }
    (*next)++;
    return CFX_OK;
}

/* replace_node_with_constant: get_attr before n, uses moved, meta copied, n erased, name taken. */
static int replace(folder *f, cfx_node *n, uint32_t *next)
{
    char qual[32];
    fresh_name(f, next, qual, sizeof qual);
    int rc = cfx_graph_module_set_attr(f->gm, qual, f->val[n->seq].u.t);
    if (rc != CFX_OK)
        return rc;
    cfx_insert_point saved = cfx_graph_inserting_before(f->g, n);
    cfx_node *c = cfx_graph_get_attr(f->g, qual);
    cfx_graph_set_insert_point(f->g, saved);
    if (!c)
        return cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
    if (cfx_node_replace_all_uses_with(n, c, NULL, NULL, NULL) < 0 || cfx_node_meta_copy(c, n) != CFX_OK)
        return cfx_error_status();
    char *name = cfx_node_name_string(n);
    if (!name)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    mark_inputs(f, n);
    rc = cfx_graph_erase_node(f->g, n);
    if (rc == CFX_OK)
        rc = cfx_node_set_name_unchecked(c, name);
    cfx_free(name);
    return rc;
}

/* Constant call nodes with a tensor value and a non-constant user. */
static int materialize(folder *f, bool *any)
{
    uint32_t next = 0;
    cfx_node *n = cfx_graph_first(f->g);
    while (n) {
        cfx_node *after = cfx_node_next(n);
        if (n->seq < f->bound && (f->state[n->seq] & CONSTANT) && cfx_node_opcode(n) == CFX_NODE_CALL_FUNCTION &&
            f->val[n->seq].kind == CFX_V_TENSOR) {
            bool needed = false;
            cfx_user_iter it;
            for (cfx_node *u = cfx_node_first_user(n, &it); u && !needed; u = cfx_node_next_user(&it))
                needed = !is_const(f, u);
            if (needed) {
                int rc = replace(f, n, &next);
                if (rc != CFX_OK)
                    return rc;
                *any = true;
            }
        }
        n = after;
    }
    return CFX_OK;
}

/* Erases, newest first, the marked constants left without users. */
static int sweep(folder *f)
{
    for (cfx_node *n = cfx_graph_last(f->g); n;) {
        cfx_node *before = cfx_node_prev(n);
        if (n->seq < f->bound && f->state[n->seq] == (CONSTANT | MARKED) && cfx_node_num_users(n) == 0 &&
            !cfx_node_is_impure(n)) {
            mark_inputs(f, n);
            int rc = cfx_graph_erase_node(f->g, n);
            if (rc != CFX_OK)
                return rc;
        }
        n = before;
    }
    return CFX_OK;
}

int cfx_pass_fold(cfx_graph_module *gm, void *ctx, bool *changed)
{
    if (changed)
        *changed = false;
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!gm)
        return cfx_error_set(CFX_ERR, NULL, "fold: no graph module given");
    const cfx_fold_options *o = ctx;
    folder f = {.gm = gm, .g = cfx_graph_module_graph(gm)};
    f.max_numel = o && o->max_numel ? o->max_numel : CFX_FOLD_DEFAULT_MAX_NUMEL;
    f.constructors = o && o->fold_constructors;
    int rc = cfx_graph_lint(f.g);
    if (rc != CFX_OK)
        return rc;
    f.bound = cfx_graph_num_created(f.g);
    f.state = cfx_calloc(f.bound ? f.bound : 1, 1);
    f.val = cfx_malloc((f.bound ? f.bound : 1) * sizeof *f.val);
    if (!f.state || !f.val) {
        cfx_free(f.state);
        cfx_free(f.val);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    bool any = false;
    cfx_scope s = cfx_scope_begin();
    rc = evaluate(&f);
    if (rc == CFX_OK)
        rc = materialize(&f, &any);
    if (rc == CFX_OK && any)
        rc = sweep(&f);
    cfx_scope_end(s);
    cfx_free(f.state);
    cfx_free(f.val);
    if (rc != CFX_OK && !cfx_error_occurred())
        rc = cfx_error_set(rc, NULL, "fold: out of memory");
    if (rc == CFX_OK && changed)
        *changed = any;
    return rc;
}
