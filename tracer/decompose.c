/* decompose.c - CompositeImplicitAutograd operators re-traced and spliced (see decompose.h).
 *
 * Per composite node: a three-node-kinds mini graph (a placeholder per input node, a copy of
 * the node, the output) is run by the interpreter on fake inputs while a proxy mode records
 * into a scratch graph module whose placeholders stand for the same inputs. The dispatcher
 * runs the composite kernel, so the scratch graph holds the decomposition as make_fx would
 * have recorded it. Splicing is a forward walk over the scratch graph with a node map by seq;
 * nothing here recurses. Everything made for one node (modes, fake tensors, the two scratch
 * graphs) is freed before the next. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/fake.h"
#include "dispatch/scope.h"
#include "dispatch/tags.h"
#include "ir/interpreter.h"
#include "ir/passes/fake_tensor_prop.h"
#include "tracer/decompose.h"
#include "tracer/proxy.h"

/* Whether keep-list name k names op: its qualified name "aten::foo.overload", its packet
 * "aten::foo", or, for the default overload, "aten::foo.default" as PyTorch spells it
 * (str(torch.ops.aten.relu.default)). */
static bool names_op(const char *k, const cfx_op *op)
{
    const char *name = cfx_op_name(op);
    const char *dot = strchr(name, '.');
    size_t packet = dot ? (size_t)(dot - name) : strlen(name);
    if (strncmp(k, name, packet) != 0)
        return false;
    size_t n = strlen(k);
    return !strcmp(k, name) || n == packet || (!dot && n == packet + 8 && !strcmp(k + packet, ".default"));
}

static bool kept(const cfx_decompose_options *o, const cfx_op *op)
{
    for (int i = 0; o && i < o->n_keep; i++)
        if (o->keep[i] && names_op(o->keep[i], op))
            return true;
    return false;
}

int cfx_decompose_options_check(const cfx_decompose_options *o)
{
    int n = cfx_op_list(NULL, 0);
    cfx_op **ops = cfx_malloc((size_t)(n > 0 ? n : 1) * sizeof *ops);
    if (!ops)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    n = cfx_op_list(ops, n);
    int rc = CFX_OK;
    for (int k = 0; o && k < o->n_keep && rc == CFX_OK; k++) {
        bool known = false;
        for (int i = 0; i < n && !known; i++)
            known = o->keep[k] && cfx_op_schema(ops[i]) && names_op(o->keep[k], ops[i]);
        if (!known)
            rc = cfx_error_set(CFX_ERR, NULL, "--decompose-keep: unknown operator '%s' (aten::foo.overload, or "
                                              "aten::foo for every overload)", o->keep[k] ? o->keep[k] : "(null)");
    }
    cfx_free(ops);
    return rc;
}

/* A multi-return node can be rewired only if every user is getitem(n, constant index). */
static bool users_are_getitems(const cfx_node *n)
{
    cfx_user_iter it;
    for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
        const cfx_target_info *ti = cfx_node_target_info(u);
        if (cfx_node_opcode(u) != CFX_NODE_CALL_FUNCTION || cfx_target_info_fn(ti) != &cfx_fn_getitem ||
            cfx_node_num_args(u) != 2 || cfx_node_arg(u, 1).kind != CFX_V_INT)
            return false;
    }
    return true;
}

static bool decomposable(const cfx_node *n, const cfx_decompose_options *o)
{
    const cfx_op *op = cfx_node_operator(n);
    if (!op || !cfx_op_schema(op) || !cfx_op_has_kernel_for_key(op, CFX_KEY_CompositeImplicitAutograd))
        return false;
    if (kept(o, op) || cfx_node_is_impure(n) || cfx_op_has_tag(op, CFX_TAG_nondeterministic_seeded))
        return false;
    return cfx_op_schema(op)->n_returns == 1 || users_are_getitems(n);
}

static int node_error(const cfx_node *n, const cfx_node *in, const char *why)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "decompose: cannot re-trace %");
    cfx_node_print_name(n, &b);
    cfx_buf_puts(&b, ": input %");
    cfx_node_print_name(in, &b);
    cfx_buf_puts(&b, why);
    int rc = cfx_error_set_text(CFX_ERR, NULL, b.oom ? "decompose: cannot re-trace a node" : b.data);
    cfx_buf_free(&b);
    return rc;
}

/* The input values of n, one per input node, made under the entered fake mode. */
static int make_inputs(const cfx_node *n, cfx_value *vals)
{
    for (uint32_t i = 0; i < cfx_node_num_inputs(n); i++) {
        const cfx_node *in = cfx_node_input(n, i);
        const cfx_meta_val *v = cfx_node_val(in);
        if (!v)
            return node_error(n, in, " has no meta['val'] (run FakeTensorProp first)");
        int rc = CFX_OK;
        switch (v->kind) {
        case CFX_MVAL_TENSOR:
        case CFX_MVAL_TOKEN: rc = cfx_fake_tensor_of_val(v, &vals[i]); break;
        case CFX_MVAL_INT: vals[i] = cfx_int(v->u.i); break;
        case CFX_MVAL_DOUBLE: vals[i] = cfx_double(v->u.d); break;
        case CFX_MVAL_BOOL: vals[i] = cfx_bool(v->u.b); break;
        default: return node_error(n, in, "'s meta['val'] is not a tensor or a number");
        }
        if (rc != CFX_OK)
            return rc;
    }
    return CFX_OK;
}

/* node_copy's map for the mini graph: the placeholder of the same input index (a node has
 * few inputs: a linear search beats a table sized by the whole graph). */
typedef struct input_map {
    const cfx_node *call;
    cfx_node **ph;
} input_map;

static cfx_node *map_input(cfx_node *n, void *ctx)
{
    input_map *m = ctx;
    for (uint32_t i = 0; i < cfx_node_num_inputs(m->call); i++)
        if (cfx_node_input(m->call, i) == n)
            return m->ph[i];
    return NULL;
}

/* node_copy's map for splicing: recorded nodes to their copies, by seq. */
typedef struct seq_map {
    cfx_node **by_seq;
    uint32_t bound;
} seq_map;

static cfx_node *map_seq(cfx_node *n, void *ctx)
{
    seq_map *m = ctx;
    return n->seq < m->bound ? m->by_seq[n->seq] : NULL;
}

/* One re-trace: the state freed together. */
typedef struct retrace {
    cfx_graph *mini;
    cfx_graph_module *rec;
    cfx_fake_mode *fake;
    cfx_proxy_mode *pm;
    cfx_value *inputs;
    cfx_node **recorded_out; /* the recorded node of each returned value */
    uint32_t n_out;
} retrace;

static void retrace_free(retrace *r)
{
    cfx_graph_free(r->mini);
    if (r->pm)
        cfx_mode_release(cfx_proxy_mode_base(r->pm));
    cfx_graph_module_free(r->rec);
    cfx_fake_mode_free(r->fake);
    cfx_free(r->inputs);
    cfx_free(r->recorded_out);
}

static int out_node(retrace *r, cfx_value v, uint32_t i)
{
    if (v.kind != CFX_V_TENSOR || !v.u.t)
        return cfx_error_set(CFX_ERR, NULL, "decompose: the decomposition returned a %s where a tensor was expected",
                             cfx_value_kind_name(v.kind));
    cfx_node *m = cfx_proxy_node_of(r->pm, v.u.t);
    if (!m)
        return cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
    r->recorded_out[i] = m;
    return CFX_OK;
}

/* Records n's decomposition into r->rec. */
static int record(const cfx_node *n, retrace *r)
{
    uint32_t ni = cfx_node_num_inputs(n);
    cfx_fake_mode_options fo = {.allow_non_fake_inputs = true, .allow_fallback_kernels = true};
    r->mini = cfx_graph_new();
    r->rec = cfx_graph_module_new(cfx_graph_new(), NULL);
    r->fake = cfx_fake_mode_new(&fo);
    r->inputs = cfx_malloc((ni ? ni : 1) * sizeof *r->inputs);
    if (!r->mini || !r->rec || !r->fake || !r->inputs)
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    r->pm = cfx_proxy_mode_new(r->rec, NULL);
    if (!r->pm)
        return cfx_error_occurred() ? cfx_error_status() : CFX_ERR_NOMEM;

    /* the mini graph: placeholders for the inputs, the call, its output */
    cfx_graph *rg = cfx_graph_module_graph(r->rec);
    cfx_node **ph = cfx_malloc(2 * (ni ? ni : 1) * sizeof *ph), **rec_ph = ph + (ni ? ni : 1);
    int rc = ph ? CFX_OK : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (uint32_t i = 0; rc == CFX_OK && i < ni; i++) {
        char *name = cfx_node_name_string(cfx_node_input(n, i));
        ph[i] = name ? cfx_graph_placeholder(r->mini, name) : NULL;
        rec_ph[i] = name ? cfx_graph_placeholder(rg, name) : NULL;
        cfx_free(name);
        if (!ph[i] || !rec_ph[i])
            rc = cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    input_map im = {n, ph};
    cfx_node *call = rc == CFX_OK ? cfx_graph_node_copy(r->mini, n, map_input, &im) : NULL;
    if (rc == CFX_OK && (!call || !cfx_graph_output(r->mini, cfx_node_value(call))))
        rc = cfx_error_occurred() ? cfx_error_status() : CFX_ERR;

    cfx_scope s = cfx_scope_begin();
    bool fake_in = false, proxy_in = false;
    if (rc == CFX_OK && (rc = cfx_fake_mode_enter(r->fake)) == CFX_OK)
        fake_in = true;
    if (rc == CFX_OK)
        rc = make_inputs(n, r->inputs);
    for (uint32_t i = 0; rc == CFX_OK && i < ni; i++)
        if (r->inputs[i].kind == CFX_V_TENSOR)
            rc = cfx_proxy_track(r->pm, r->inputs[i].u.t, rec_ph[i]);
    if (rc == CFX_OK && (rc = cfx_proxy_mode_enter(r->pm)) == CFX_OK)
        proxy_in = true;
    cfx_value out = cfx_none();
    if (rc == CFX_OK)
        rc = cfx_interpret(r->mini, r->inputs, (int)ni, NULL, &out);
    if (proxy_in) {
        int rc2 = cfx_proxy_mode_exit(r->pm);
        if (rc == CFX_OK)
            rc = rc2;
    }
    if (fake_in) {
        int rc2 = cfx_fake_mode_exit(r->fake);
        if (rc == CFX_OK)
            rc = rc2;
    }
    if (rc == CFX_OK) {
        bool many = out.kind == CFX_V_TUPLE || out.kind == CFX_V_LIST;
        r->n_out = many ? out.len : 1;
        r->recorded_out = cfx_calloc(r->n_out ? r->n_out : 1, sizeof *r->recorded_out);
        if (!r->recorded_out)
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; rc == CFX_OK && i < r->n_out; i++)
            rc = out_node(r, many ? out.u.items[i] : out, i);
    }
    for (uint32_t i = 0; i < ni && r->inputs; i++)
        if (rc == CFX_OK && r->inputs[i].kind == CFX_V_TENSOR)
            cfx_proxy_untrack(r->pm, r->inputs[i].u.t);
    cfx_scope_end(s);
    cfx_free(ph);
    return rc;
}

/* The first _tensor_constant<i> naming nothing in gm. */
static void fresh_constant(const cfx_graph_module *gm, uint32_t *next, char *buf, size_t cap)
{
    for (;; (*next)++) {
        snprintf(buf, cap, "_tensor_constant%u", *next);
        if (!cfx_graph_module_has_path(gm, buf))
            break;
    }
    (*next)++;
}

/* Copies r's recorded graph before n and rewires n's users; n is erased. */
static int splice(cfx_graph_module *gm, cfx_node *n, retrace *r, uint32_t *next_const)
{
    cfx_graph *g = cfx_graph_module_graph(gm);
    cfx_graph *rg = cfx_graph_module_graph(r->rec);
    uint32_t bound = cfx_graph_num_created(rg), ph = 0;
    cfx_node **map = cfx_calloc(bound ? bound : 1, sizeof *map);
    if (!map)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    seq_map m = {map, bound};
    const cfx_site *site = cfx_node_stack_trace(n);
    cfx_insert_point saved = cfx_graph_inserting_before(g, n);
    int rc = CFX_OK;
    for (cfx_node *x = cfx_graph_first(rg); x && rc == CFX_OK; x = cfx_node_next(x)) {
        cfx_node *y = NULL;
        switch (cfx_node_opcode(x)) {
        case CFX_NODE_PLACEHOLDER:
            y = cfx_node_input(n, ph++);
            break;
        case CFX_NODE_GET_ATTR: {
            char qual[48];
            fresh_constant(gm, next_const, qual, sizeof qual);
            cfx_tensor *t = cfx_graph_module_get_attr(r->rec, cfx_node_target_str(x));
            if (!t || (rc = cfx_graph_module_set_attr(gm, qual, t)) != CFX_OK ||
                !(y = cfx_graph_get_attr(g, qual)) || (rc = cfx_node_meta_copy(y, x)) != CFX_OK)
                rc = cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
            break;
        }
        case CFX_NODE_CALL_FUNCTION:
            y = cfx_graph_node_copy(g, x, map_seq, &m);
            if (y && site && !cfx_node_stack_trace(y))
                rc = cfx_node_set_stack_trace(y, site);
            break;
        default:
            continue; /* the recorded graph has no output node */
        }
        if (!y && rc == CFX_OK)
            rc = cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
        if (rc == CFX_OK)
            map[x->seq] = y;
    }
    cfx_graph_set_insert_point(g, saved);
    if (rc == CFX_OK && r->n_out == 1 && cfx_op_schema(cfx_node_operator(n))->n_returns == 1) {
        if (cfx_node_replace_all_uses_with(n, map[r->recorded_out[0]->seq], NULL, NULL, NULL) < 0)
            rc = cfx_error_status();
    } else if (rc == CFX_OK) {
        cfx_user_iter it;
        for (cfx_node *u = cfx_node_first_user(n, &it); u && rc == CFX_OK; u = cfx_node_next_user(&it)) {
            int64_t i = cfx_node_arg(u, 1).u.i;
            if (i < 0)
                i += r->n_out;
            if (i < 0 || i >= (int64_t)r->n_out) {
                rc = cfx_error_set(CFX_ERR, NULL, "decompose: getitem index %lld out of range for %u results",
                                   (long long)cfx_node_arg(u, 1).u.i, r->n_out);
                break;
            }
            if (cfx_node_replace_all_uses_with(u, map[r->recorded_out[i]->seq], NULL, NULL, NULL) < 0 ||
                cfx_graph_erase_node(g, u) != CFX_OK)
                rc = cfx_error_status();
        }
    }
    cfx_free(map);
    if (rc == CFX_OK)
        rc = cfx_graph_erase_node(g, n);
    return rc;
}

int cfx_pass_decompose(cfx_graph_module *gm, void *ctx, bool *changed)
{
    if (changed)
        *changed = false;
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!gm)
        return cfx_error_set(CFX_ERR, NULL, "decompose: no graph module given");
    const cfx_decompose_options *o = ctx;
    if (o && o->n_keep < 0)
        return cfx_error_set(CFX_ERR, NULL, "decompose: negative keep-list length %d", o->n_keep);
    if (o && o->n_keep > 0 && !o->keep)
        return cfx_error_set(CFX_ERR, NULL, "decompose: keep-list of %d names is NULL", o->n_keep);
    cfx_graph *g = cfx_graph_module_graph(gm);
    int rc = cfx_graph_lint(g);
    uint32_t next_const = 0;
    bool any = false;
    for (cfx_node *n = cfx_graph_first(g); n && rc == CFX_OK;) {
        cfx_node *after = cfx_node_next(n);
        if (cfx_node_opcode(n) == CFX_NODE_CALL_FUNCTION && decomposable(n, o)) {
            retrace r = {0};
            rc = record(n, &r);
            if (rc == CFX_OK)
                rc = splice(gm, n, &r, &next_const);
            retrace_free(&r);
            any |= rc == CFX_OK;
        }
        n = after;
    }
    if (rc == CFX_OK && changed)
        *changed = any;
    return rc;
}
