/* proxy.c - the proxy mode: one call_function node per operator call (proxy_call, PyTorch 2.13).
 *
 * Every operator the model calls arrives here once, so the handler does no per-call
 * allocation of its own and no formatting. What it needs to know about an operator (where
 * kwarg-only arguments start, which arguments are lists that may hold tensors or enums given
 * as ints, whether it is lift_fresh) is worked out from the schema the first time the
 * operator is seen and kept in the mode's table of plans, indexed by the operator's id; the
 * operator's tags say whether it is data-dependent (data_dependent_output) or random
 * (nondeterministic_seeded). Arguments are mapped into arrays on the C stack (list arguments
 * holding tensors into one scratch buffer reused across calls); the graph copies them into its
 * arena when it creates the node.
 *
 * The args/kwargs split reproduces what a Python __torch_dispatch__ receives, which is what
 * make_fx records: torch/csrc's parseIValuesToPyArgsKwargs turns the boxed stack into
 * (args, kwargs) by dropping kwarg-only arguments equal to their default and cutting the
 * positional ones after the last non-default. Equality is IValue's: the tags must agree
 * (an int 1 equals the default 1, a float 1.0 does not: `kwargs = {alpha: 1.0}`), and
 * ScalarType / Layout / MemoryFormat are ints to an IValue. Enum arguments passed as plain
 * ints are shown as the enum (torch.float32), as schemaAwareToPyObject does.
 *
 * Tensors that are not bound to a node are what PythonKeyTracer.create_arg sees: they become
 * get_attr nodes of interned attributes (proxy_attrs.c).
 *
 * Meta, as set_meta / extract_val write it: a tensor result gets `val` and `tensor_meta`; a
 * real tensor's val is what empty_strided(shape, stride) makes in a fake mode, so its storage
 * offset is 0 (a fake one keeps its own); a tuple or list result gets a tuple or list val on
 * its node and its elements their getitem nodes; int, float and bool results get nothing.
 * `stack_trace` (the C call site of the op) is recorded on every node the mode creates when
 * the tracer records stack traces (make_fx's record_stack_traces), never on placeholders.
 *
 * A data-dependent operator (item()) is answered from constants when its tracked arguments
 * all carry one (proxy_constants.c: proxy_call's constant propagation of literals); otherwise
 * it is refused with proxy_call's text on real tensors, and on fake tensors recorded and left
 * to the fake mode below, which raises (cfx has no ShapeEnv). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/operator_internal.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor_ext.h"
#include "dispatch/tensor_internal.h"
#include "ir/graph.h"
#include "tracer/proxy_internal.h"

static int proxy_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

static void proxy_destroy(cfx_mode *self)
{
    cfx_proxy_mode *pm = (cfx_proxy_mode *)self;
    cfx_free(pm->plans);
    cfx_free(pm->consts);
    cfx_free(pm->scratch);
    cfx_free(pm);
}

static const cfx_mode_vtable proxy_vtable = {"ProxyTorchDispatchMode", proxy_dispatch, proxy_destroy};

cfx_proxy_mode *cfx_proxy_mode_new(cfx_graph_module *gm, const cfx_module *module)
{
    if (!gm) {
        cfx_error_set(CFX_ERR, NULL, "cfx_proxy_mode_new: NULL graph module");
        return NULL;
    }
    cfx_proxy_mode *pm = cfx_calloc(1, sizeof *pm);
    if (!pm) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_mode_init(&pm->base, &proxy_vtable, CFX_MODE_PROXY);
    pm->gm = gm;
    pm->g = cfx_graph_module_graph(gm);
    pm->module = module;
    pm->owner = cfx_binding_owner_new();
    pm->const_owner = cfx_binding_owner_new();
    return pm;
}

void cfx_proxy_mode_set_record_stack_traces(cfx_proxy_mode *pm, bool on)
{
    if (pm)
        pm->record_stack_traces = on;
}

cfx_mode *cfx_proxy_mode_base(cfx_proxy_mode *pm) { return pm ? &pm->base : NULL; }

cfx_proxy_mode *cfx_proxy_mode_from_base(cfx_mode *m)
{
    return m && m->vt == &proxy_vtable ? (cfx_proxy_mode *)m : NULL;
}

cfx_graph *cfx_proxy_mode_graph(const cfx_proxy_mode *pm) { return pm ? pm->g : NULL; }
uint64_t cfx_proxy_mode_owner(const cfx_proxy_mode *pm) { return pm ? pm->owner : 0; }

/* ProxyTorchDispatchMode.__enter__ / __exit__: a proxy mode already set (an outer make_fx) is
 * stashed for the duration, so a trace inside a trace records into its own graph only. */
int cfx_proxy_mode_enter(cfx_proxy_mode *pm)
{
    if (!pm)
        return CFX_ERR;
    pm->stashed = cfx_mode_unset(CFX_MODE_PROXY);
    int rc = cfx_mode_set(&pm->base, CFX_MODE_PROXY);
    if (rc != CFX_OK && pm->stashed) {
        cfx_mode_set(pm->stashed, CFX_MODE_PROXY);
        pm->stashed = NULL;
    }
    return rc;
}

cfx_graph_module *cfx_proxy_mode_graph_module(const cfx_proxy_mode *pm) { return pm ? pm->gm : NULL; }

int cfx_proxy_mode_exit(cfx_proxy_mode *pm)
{
    if (!pm)
        return CFX_ERR;
    int rc = cfx_mode_exit(&pm->base);
    if (pm->stashed) {
        int rs = cfx_mode_set(pm->stashed, CFX_MODE_PROXY);
        pm->stashed = NULL;
        if (rc == CFX_OK)
            rc = rs;
    }
    return rc;
}

/* ---- operator plans ------------------------------------------------------------------------- */

static bool names_op(const cfx_schema *s, const char *name, const char *overload)
{
    return strcmp(s->name, name) == 0 && strcmp(s->overload ? s->overload : "", overload) == 0;
}

/* The C value kind an enum-typed argument shows an INT as, or NONE. */
static uint8_t enum_kind_of(const cfx_type *t)
{
    if (t->kind == CFX_TYPE_OPTIONAL && t->n_elems > 0)
        t = t->elems[0];
    switch (t->kind) {
    case CFX_TYPE_SCALAR_TYPE: return CFX_V_DTYPE;
    case CFX_TYPE_LAYOUT: return CFX_V_LAYOUT;
    case CFX_TYPE_MEMORY_FORMAT: return CFX_V_MEMORY_FORMAT;
    default: return CFX_V_NONE;
    }
}

static bool is_list_type(const cfx_type *t)
{
    if (t->kind == CFX_TYPE_OPTIONAL && t->n_elems > 0)
        t = t->elems[0];
    return t->kind == CFX_TYPE_LIST || t->kind == CFX_TYPE_TUPLE || t->kind == CFX_TYPE_ANY;
}

static int build_plan(const cfx_op *op, op_plan *p)
{
    const cfx_schema *s = cfx_op_schema(op);
    if (!s)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "%s has no schema", cfx_op_name(op));
    if (s->n_args > MAX_ARGS)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "cannot trace %s: it has %d arguments, at most %d are supported",
                             cfx_op_name(op), s->n_args, MAX_ARGS);
    memset(p, 0, sizeof *p);
    p->op = op;
    p->target = op;
    p->n_args = (uint8_t)s->n_args;
    uint16_t k = s->n_args;
    while (k > 0 && s->args[k - 1].kwarg_only)
        k--;
    p->kwarg_start = (uint8_t)k;
    while (k > 0 && s->args[k - 1].has_default)
        k--;
    p->trim_from = (uint8_t)k;
    p->n_returns = (uint16_t)s->n_returns;
    for (int i = 0; i < s->n_args; i++) {
        const cfx_type *t = s->args[i].type;
        if (is_list_type(t))
            p->lists |= 1ull << i;
        uint8_t ek = enum_kind_of(t);
        if (ek != CFX_V_NONE)
            p->enums |= 1ull << i;
        if (ek == CFX_V_DTYPE)
            p->enum_dtype |= 1ull << i;
        if (ek == CFX_V_LAYOUT)
            p->enum_layout |= 1ull << i;
    }
    /* proxy_call: `if func is torch.ops.aten.lift_fresh.default: func = lift_fresh_copy` */
    if (names_op(s, "aten::lift_fresh", "")) {
        p->target = cfx_op_lookup("aten::lift_fresh_copy");
        if (!p->target)
            return cfx_error_set(CFX_ERR, cfx_op_name(op), "aten::lift_fresh_copy is not defined");
    }
    p->lift = names_op(cfx_op_schema(p->target), "aten::lift_fresh_copy", "");
    p->data_dependent = cfx_op_has_tag(op, CFX_TAG_data_dependent_output);
    p->seeded = cfx_op_has_tag(p->target, CFX_TAG_nondeterministic_seeded);
    return CFX_OK;
}

/* The plan of op, computed on its first call in this mode. */
static const op_plan *plan_for(cfx_proxy_mode *pm, const cfx_op *op)
{
    uint32_t id = op->id;
    if (id >= pm->plan_cap) {
        uint32_t cap = pm->plan_cap ? pm->plan_cap : 64;
        while (cap <= id)
            cap *= 2;
        op_plan *np = cfx_realloc(pm->plans, cap * sizeof *np);
        if (!np) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        memset(np + pm->plan_cap, 0, (cap - pm->plan_cap) * sizeof *np);
        pm->plans = np;
        pm->plan_cap = cap;
    }
    op_plan *p = &pm->plans[id];
    if (!p->op && build_plan(op, p) != CFX_OK) {
        p->op = NULL;
        return NULL;
    }
    return p;
}

/* ---- meta ------------------------------------------------------------------------------------ */

/* set_meta for a tensor: val and tensor_meta, and the stack trace if recorded. */
static int set_tensor_meta(cfx_node *n, const cfx_tensor *t, const cfx_site *site)
{
    bool fake = cfx_tensor_is_fake(t);
    cfx_device dev = fake ? cfx_tensor_fake_device(t) : t->device;
    int rc = cfx_node_set_result_meta(n, site, t, &dev, false);
    /* the graph's one-call setter takes the offset from t: a real view's val still has 0 */
    if (rc == CFX_OK && !fake && t->storage_offset != 0) {
        cfx_meta_val v = cfx_proxy_tensor_val(t);
        rc = cfx_node_set_val(n, &v);
    }
    return rc;
}

/* ---- tensors to nodes ------------------------------------------------------------------------ */

/* cfx_proxy_node_of for a non-NULL tensor. */
static cfx_node *node_of(cfx_proxy_mode *pm, cfx_tensor *t)
{
    const cfx_tensor_binding *b = cfx_tensor_binding_find(t, pm->owner);
    return b && b->data ? b->data : cfx_proxy_attr_node(pm, t);
}

cfx_node *cfx_proxy_node_of(cfx_proxy_mode *pm, cfx_tensor *t)
{
    return pm && t ? node_of(pm, t) : NULL;
}

/* ---- results to nodes -------------------------------------------------------------------------- */

/* track_tensor + set_meta for a non-NULL tensor and node; the constant replaced (NULL clears). */
/* token: t carries an effect token (a CFX_V_TOKEN value), whose val is a token val: the
 * tensor's metadata (2.13's FakeTensor of size (0,)) under its own kind. */
static int track(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n, cfx_tensor *constant, const cfx_site *site,
                 bool token)
{
    int rc = cfx_tensor_binding_set(t, pm->owner, n, NULL);
    if (rc == CFX_OK && (constant || pm->constants_made)) /* else there is none to clear */
        rc = cfx_proxy_set_constant(pm, t, constant);
    if (rc == CFX_OK)
        rc = set_tensor_meta(n, t, site);
    if (rc == CFX_OK && token) {
        cfx_meta_val v = cfx_proxy_tensor_val(t);
        v.kind = CFX_MVAL_TOKEN;
        rc = cfx_node_set_val(n, &v);
    }
    return rc;
}

int cfx_proxy_track(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n)
{
    /* placeholders (wrap_key) and HOP outputs: no stack trace on placeholders */
    return pm && t && n ? track(pm, t, n, NULL, n->op == CFX_NODE_PLACEHOLDER ? NULL : cfx_proxy_site_to_record(pm), false)
                        : CFX_ERR;
}

int cfx_proxy_track_token(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n)
{
    return pm && t && n ? track(pm, t, n, NULL, n->op == CFX_NODE_PLACEHOLDER ? NULL : cfx_proxy_site_to_record(pm), true)
                        : CFX_ERR;
}

void cfx_proxy_untrack(cfx_proxy_mode *pm, cfx_tensor *t)
{
    if (pm && t) {
        cfx_tensor_binding_clear(t, pm->owner);
        cfx_tensor_binding_clear(t, pm->const_owner);
    }
}

static cfx_node *getitem(cfx_proxy_mode *pm, cfx_node *of, int64_t i, const cfx_site *site)
{
    cfx_value a[2] = {cfx_node_value(of), cfx_int(i)};
    cfx_node *n = cfx_graph_call_fn(pm->g, &cfx_fn_getitem, a, 2, NULL, 0);
    if (n && site && cfx_node_set_stack_trace(n, site) != CFX_OK)
        return NULL;
    return n;
}

/* extract_val of one returned value that is no container. */
static cfx_meta_val leaf_val(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_TENSOR: return v.u.t ? cfx_proxy_tensor_val(v.u.t) : (cfx_meta_val){.kind = CFX_MVAL_NONE};
    case CFX_V_TOKEN: {
        cfx_meta_val tv = v.u.t ? cfx_proxy_tensor_val(v.u.t) : (cfx_meta_val){.kind = CFX_MVAL_NONE};
        if (v.u.t)
            tv.kind = CFX_MVAL_TOKEN;
        return tv;
    }
    case CFX_V_INT: return (cfx_meta_val){.kind = CFX_MVAL_INT, .u.i = v.u.i};
    case CFX_V_DOUBLE: return (cfx_meta_val){.kind = CFX_MVAL_DOUBLE, .u.d = v.u.d};
    case CFX_V_BOOL: return (cfx_meta_val){.kind = CFX_MVAL_BOOL, .u.b = v.u.b};
    default: return (cfx_meta_val){.kind = CFX_MVAL_NONE};
    }
}

/* set_meta of a container result on its node: a tuple or list of the elements' vals, a list
 * element of a tuple as a list of its leaves (no schema returns deeper nesting). */
static int set_container_val(cfx_node *n, const cfx_value *outs, int n_outs, bool tuple)
{
    if (n_outs < 0 || n_outs > INT32_MAX / 2)
        return cfx_error_set(CFX_ERR, NULL, "set_meta: %d results", n_outs);
    uint64_t n_items = (uint64_t)n_outs;
    for (int i = 0; i < n_outs; i++)
        if (outs[i].kind == CFX_V_LIST || outs[i].kind == CFX_V_TUPLE)
            n_items += outs[i].len;
    cfx_meta_val small[16];
    cfx_meta_val *items = n_items <= 16 ? small : n_items <= UINT32_MAX ? cfx_malloc((size_t)n_items * sizeof *items) : NULL;
    if (!items)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_meta_val *inner = items + n_outs; /* the nested lists' items, after the top level */
    for (int i = 0; i < n_outs; i++) {
        cfx_value v = outs[i];
        if (v.kind != CFX_V_LIST && v.kind != CFX_V_TUPLE) {
            items[i] = leaf_val(v);
            continue;
        }
        items[i] = (cfx_meta_val){.kind = v.kind == CFX_V_LIST ? CFX_MVAL_LIST : CFX_MVAL_TUPLE,
                                  .n = (int32_t)v.len, .u.items = inner};
        for (uint32_t j = 0; j < v.len; j++)
            *inner++ = leaf_val(v.u.items[j]);
    }
    cfx_meta_val v = {.kind = tuple ? CFX_MVAL_TUPLE : CFX_MVAL_LIST, .n = n_outs, .u.items = items};
    int rc = cfx_node_set_val(n, &v);
    if (items != small)
        cfx_free(items);
    return rc;
}

/* The constant a value's counterpart c (NULL: none) gives a tensor. */
static cfx_tensor *tensor_constant(const cfx_value *c)
{
    return c && c->kind == CFX_V_TENSOR ? c->u.t : NULL;
}

/* wrap_with_proxy for one value bound to node proxy, with its constant c (NULL: none): a
 * tensor is tracked; a list gets its val and a getitem per element, its tensors tracked;
 * primitives pass. */
static int wrap_value(cfx_proxy_mode *pm, cfx_value v, cfx_node *proxy, const cfx_site *site, const cfx_value *c)
{
    if (v.kind == CFX_V_TENSOR || v.kind == CFX_V_TOKEN)
        return v.u.t ? track(pm, v.u.t, proxy, tensor_constant(c), site, v.kind == CFX_V_TOKEN) : CFX_OK;
    if (v.kind != CFX_V_LIST)
        return CFX_OK;
    bool list_c = c && c->kind == CFX_V_LIST && c->len == v.len;
    int rc = set_container_val(proxy, v.u.items, (int)v.len, false);
    for (uint32_t j = 0; rc == CFX_OK && j < v.len; j++) {
        cfx_node *gi = getitem(pm, proxy, j, site);
        if (!gi)
            return CFX_ERR;
        cfx_value e = v.u.items[j];
        if (e.kind == CFX_V_TENSOR && e.u.t)
            rc = track(pm, e.u.t, gi, list_c ? tensor_constant(&c->u.items[j]) : NULL, site, false);
    }
    return rc;
}

/* track_tensor_tree of an op's returns outs[0..n_outs) produced by node n, with their
 * constants consts (NULL: none): one return as itself, several as a tuple (a val on n, a
 * getitem node for every element, whatever it holds). */
static int track_outputs(cfx_proxy_mode *pm, cfx_node *n, const cfx_value *outs, int n_outs, const cfx_site *site,
                         const cfx_value *consts)
{
    if (n_outs == 1)
        return wrap_value(pm, outs[0], n, site, consts);
    int rc = n_outs > 0 ? set_container_val(n, outs, n_outs, true) : CFX_OK;
    for (int i = 0; rc == CFX_OK && i < n_outs; i++) {
        cfx_node *gi = getitem(pm, n, i, site);
        if (!gi)
            return CFX_ERR;
        rc = wrap_value(pm, outs[i], gi, site, consts ? &consts[i] : NULL);
    }
    return rc;
}

int cfx_proxy_track_outputs(cfx_proxy_mode *pm, cfx_node *n, const cfx_value *outs, int n_outs)
{
    return pm && n ? track_outputs(pm, n, outs, n_outs, cfx_proxy_site_to_record(pm), NULL) : CFX_ERR;
}

/* ---- the handler ----------------------------------------------------------------------------- */

/* One argument as a node argument. List items with tensors are copied into *scratch. */
static bool map_arg(cfx_proxy_mode *pm, const op_plan *p, int i, cfx_value v, cfx_value **scratch,
                    cfx_value *out)
{
    switch (v.kind) {
    case CFX_V_TENSOR:
        if (!v.u.t) {
            *out = cfx_none();
            return true;
        }
        {
            cfx_node *n = node_of(pm, v.u.t);
            if (!n)
                return false;
            *out = cfx_node_value(n);
        }
        return true;
    case CFX_V_GENERATOR: { /* an opaque reference: a get_attr of the module's `_opaque_objN` */
        cfx_node *n = cfx_proxy_opaque_attr_node(pm, v, "_opaque_obj");
        if (!n)
            return false;
        *out = cfx_node_value(n);
        return true;
    }
    case CFX_V_INT:
        if (p->enums >> i & 1) {
            if (p->enum_dtype >> i & 1)
                *out = cfx_dtype_value((cfx_dtype)v.u.i);
            else /* layout and memory_format are int64 in the union */
                *out = (cfx_value){(p->enum_layout >> i & 1) ? CFX_V_LAYOUT : CFX_V_MEMORY_FORMAT, 0, {.i = v.u.i}};
            return true;
        }
        break;
    case CFX_V_LIST:
    case CFX_V_TUPLE:
        if (p->lists >> i & 1) {
            bool any = false;
            for (uint32_t j = 0; j < v.len && !any; j++)
                any = v.u.items[j].kind == CFX_V_TENSOR;
            if (!any)
                break;
            cfx_value *items = *scratch;
            *scratch += v.len;
            for (uint32_t j = 0; j < v.len; j++) {
                cfx_value e = v.u.items[j];
                if (e.kind == CFX_V_TENSOR) {
                    cfx_node *n = e.u.t ? node_of(pm, e.u.t) : NULL;
                    if (e.u.t && !n)
                        return false;
                    e = n ? cfx_node_value(n) : cfx_none();
                }
                items[j] = e;
            }
            *out = (cfx_value){v.kind, v.len, {.items = items}};
            return true;
        }
        break;
    default:
        break;
    }
    *out = v;
    return true;
}

/* Room for the list items of this call's list arguments. */
static bool reserve_scratch(cfx_proxy_mode *pm, const op_plan *p, const cfx_value *stack)
{
    uint64_t need = 0;
    for (uint64_t m = p->lists; m; m &= m - 1) {
        const cfx_value *v = &stack[__builtin_ctzll(m)];
        if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE)
            need += v->len;
    }
    if (need <= pm->scratch_cap)
        return true;
    cfx_value *s = cfx_realloc(pm->scratch, need * sizeof *s);
    if (!s) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return false;
    }
    pm->scratch = s;
    pm->scratch_cap = (uint32_t)need;
    return true;
}

/* How many positional arguments stay once the trailing ones equal to their defaults are cut
 * (for an op with positional defaults at the end). */
static uint32_t positional_count(const cfx_op *op, const op_plan *p, const cfx_value *stack)
{
    const cfx_schema *s = op->schema;
    uint32_t n_pos = p->kwarg_start;
    while (n_pos > p->trim_from && cfx_argument_is_default(&s->args[n_pos - 1], stack[n_pos - 1]))
        n_pos--;
    return n_pos;
}

/* The kwarg-only arguments that differ from their defaults, into kwargs; their count, or -1
 * with the error recorded. */
static int map_kwargs(cfx_proxy_mode *pm, const cfx_op *op, const op_plan *p, const cfx_value *stack,
                      cfx_value *scratch, cfx_kwarg *kwargs)
{
    const cfx_schema *s = op->schema;
    int n_kw = 0;
    for (uint32_t i = p->kwarg_start; i < p->n_args; i++) {
        if (cfx_argument_is_default(&s->args[i], stack[i]))
            continue;
        kwargs[n_kw].name = s->args[i].name;
        if (!map_arg(pm, p, (int)i, stack[i], &scratch, &kwargs[n_kw].value))
            return -1;
        n_kw++;
    }
    return n_kw;
}

static bool any_fake_arg(const op_plan *p, const cfx_value *stack)
{
    for (int i = 0; i < p->n_args; i++) {
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && cfx_tensor_is_fake(v->u.t))
            return true;
        if ((p->lists >> i & 1) && (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE))
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && cfx_tensor_is_fake(v->u.items[j].u.t))
                    return true;
    }
    return false;
}

/* proxy_call's refusal of a data-dependent op on real tensors. */
static int data_dependent_error(const cfx_op *op)
{
    const cfx_schema *s = cfx_op_schema(op);
    const char *sep = strstr(s->name, "::");
    int ns = sep ? (int)(sep - s->name) : 0;
    return cfx_error_set(CFX_ERR, cfx_op_name(op),
                         "It appears that you're trying to get value out of a tracing tensor with %.*s.%s.%s - "
                         "erroring out! It's likely that this is caused by data-dependent control flow or similar.  "
                         "It may be possible to trace this with dynamic shapes; try setting tracing_mode='symbolic' "
                         "in your make_fx call.",
                         ns, s->name, sep ? sep + 2 : s->name, s->overload && *s->overload ? s->overload : "default");
}

static int proxy_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    cfx_proxy_mode *pm = (cfx_proxy_mode *)self;
    const op_plan *p = plan_for(pm, op);
    if (!p)
        return CFX_ERR;
    cfx_proxy_const_flags cf = {true, false};
    if (p->data_dependent || pm->constants_made)
        cf = cfx_proxy_constant_flags(pm, p, stack);
    if (p->data_dependent) {
        /* all tracked arguments constant: the value is known, nothing is recorded */
        if (cf.all)
            return cfx_proxy_run_on_constants(pm, p, stack, stack);
        if (!any_fake_arg(p, stack))
            return data_dependent_error(op);
        /* fake tensors: recorded, and the fake mode below raises (cfx has no ShapeEnv) */
    }
    if (p->lists && !reserve_scratch(pm, p, stack))
        return CFX_ERR_NOMEM;
    cfx_value *scratch = pm->scratch;

    /* parseIValuesToPyArgsKwargs; only the trailing run of positional arguments that have
     * defaults can be cut, and only kwarg-only arguments with a default can be dropped */
    uint32_t n_pos = p->kwarg_start;
    if (p->trim_from < n_pos)
        n_pos = positional_count(op, p, stack);
    cfx_value args[MAX_ARGS];
    cfx_kwarg kwargs[MAX_ARGS];
    int n_kw = 0;
    for (uint32_t i = 0; i < n_pos; i++) {
        if (stack[i].kind == CFX_V_TENSOR && stack[i].u.t) {
            cfx_node *a = node_of(pm, stack[i].u.t);
            if (!a)
                return CFX_ERR;
            args[i] = cfx_node_value(a);
        } else if (stack[i].kind != CFX_V_TENSOR && stack[i].kind != CFX_V_GENERATOR &&
                   !((p->lists | p->enums) >> i & 1)) {
            args[i] = stack[i];
        } else if (!map_arg(pm, p, (int)i, stack[i], &scratch, &args[i])) {
            return CFX_ERR;
        }
    }
    if (p->kwarg_start < p->n_args && (n_kw = map_kwargs(pm, op, p, stack, scratch, kwargs)) < 0)
        return CFX_ERR;
    cfx_node *n = cfx_graph_create_node(pm->g, CFX_NODE_CALL_FUNCTION, cfx_target_op(p->target), args, n_pos,
                                        kwargs, (uint32_t)n_kw, NULL);
    if (!n)
        return CFX_ERR;

    /* constants are computed from the arguments, which the call overwrites */
    cfx_value in[MAX_ARGS];
    bool may_be_constant = p->lift || (cf.all && cf.any && !p->seeded);
    if (may_be_constant)
        memcpy(in, stack, (size_t)p->n_args * sizeof *in);
    const cfx_site *site = cfx_proxy_site_to_record(pm);
    int rc = cfx_mode_redispatch(p->target, stack);
    /* a single tensor result's meta carries the site (set with it in one record); any other
     * node, a failed call's included (it stays, as in PyTorch), gets it now */
    bool meta_has_site = rc == CFX_OK && p->n_returns == 1 && stack[0].kind == CFX_V_TENSOR && stack[0].u.t;
    if (site && !meta_has_site) {
        int rs = cfx_node_set_stack_trace(n, site);
        if (rc == CFX_OK)
            rc = rs;
    }
    if (rc != CFX_OK)
        return rc;
    if (!may_be_constant) /* a single tensor, the usual result, is tracked as itself */
        return meta_has_site ? track(pm, stack[0].u.t, n, NULL, site, false)
                             : track_outputs(pm, n, stack, p->n_returns, site, NULL);
    /* constants are computed in a scope of their own: the bindings keep what they need */
    cfx_value consts[MAX_ARGS];
    cfx_scope cs = cfx_scope_begin();
    bool have_consts = p->n_returns <= MAX_ARGS && cfx_proxy_result_constants(pm, p, in, stack, cf, consts, &rc);
    if (rc == CFX_OK)
        rc = track_outputs(pm, n, stack, p->n_returns, site, have_consts ? consts : NULL);
    cfx_scope_end(cs);
    return rc;
}
