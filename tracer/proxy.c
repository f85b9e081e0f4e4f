/* proxy.c - the proxy mode: one call_function node per operator call (proxy_call, 1.13).
 *
 * Every operator the model calls arrives here once, so the handler does no per-call
 * allocation of its own and no formatting. What it needs to know about an operator (where
 * kwarg-only arguments start, which arguments are lists that may hold tensors or enums given
 * as ints, whether it is lift_fresh) is worked out from the schema the first time the
 * operator is seen and kept in the mode's table of plans, indexed by the operator's id; a
 * data-dependent operator is told by its tag (data_dependent_output). Arguments are mapped into arrays on the C
 * stack (list arguments holding tensors into one scratch buffer reused across calls); the
 * graph copies them into its arena when it creates the node. A fresh node's meta (stack_trace,
 * val, tensor_meta) is set in one call, cfx_node_set_result_meta, which shares the records the
 * graph already holds for the same call site and result geometry.
 *
 * The args/kwargs split reproduces what a Python __torch_dispatch__ receives, which is what
 * make_fx records: torch/csrc's parseIValuesToPyArgsKwargs turns the boxed stack into
 * (args, kwargs) by dropping kwarg-only arguments equal to their default and cutting the
 * positional ones after the last non-default. Equality is IValue's: the tags must agree
 * (an int 1 equals the default 1, a float 1.0 does not: `kwargs = {alpha: 1.0}` in 1.13),
 * and ScalarType / Layout / MemoryFormat are ints to an IValue. Enum arguments passed as
 * plain ints are shown as the enum (torch.float32), as schemaAwareToPyObject does.
 *
 * Tensors that are not bound to a node are what FX's Tracer.create_arg sees: a module
 * parameter becomes `get_attr[target=fc1.weight]`, anything else an interned constant
 * `_tensor_constantN` (one attribute per tensor, the first N not already an attribute).
 * Like FX, every USE creates its own get_attr node (`_tensor_constant0_1` the second
 * time), placed just before the node that uses it.
 *
 * Not carried over from 1.13: constant propagation of small lift_fresh results (so item()
 * on a traced literal fails like any other data-dependent call), decomposition tables, and
 * the getitem nodes the in-place heuristic creates for list-valued first arguments (no cfx
 * operator has one). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/hash.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/tensor_ext.h"
#include "ir/graph.h"
#include "tracer/proxy.h"

enum { MAX_ARGS = 64 };

/* What the handler needs to know about one operator, computed once from its schema. */
typedef struct op_plan {
    const cfx_op *op;         /* NULL: not computed yet */
    const cfx_op *target;     /* recorded and run: lift_fresh becomes lift_fresh_copy */
    uint8_t n_args;           /* at most MAX_ARGS */
    uint8_t kwarg_start;      /* arguments from here on are kwarg-only */
    uint8_t trim_from;        /* positional arguments [trim_from, kwarg_start) all have defaults */
    uint16_t n_returns;
    uint64_t lists;           /* bit i: argument i is a list that may hold tensors */
    uint64_t enums;           /* bit i: argument i is ScalarType / Layout / MemoryFormat (?) */
    uint64_t enum_dtype;      /* of those, bit i: a ScalarType (an INT there is shown as a dtype) */
    uint64_t enum_layout;     /* bit i: a Layout; the other enums are MemoryFormats */
} op_plan;

_Static_assert(MAX_ARGS <= UINT8_MAX, "argument positions fit a byte");

typedef struct const_entry {
    const cfx_tensor *t; /* NULL = free slot */
    const char *name;    /* owned by the graph module */
} const_entry;

struct cfx_proxy_mode {
    cfx_mode base;
    cfx_graph_module *gm;
    cfx_graph *g;
    const cfx_module *module;
    uint64_t owner;
    bool fake;
    op_plan *plans;       /* by op id (operator.h), grown on demand */
    uint32_t plan_cap;
    const_entry *consts;
    uint32_t const_cap, n_consts;
    uint32_t next_const; /* `_tensor_constant<next_const>` is the first name to try */
    bool params_may_clash; /* some parameter name starts with "_tensor_constant" */
    cfx_value *scratch;  /* list arguments with tensors substituted */
    uint32_t scratch_cap;
};

static int proxy_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

static void proxy_destroy(cfx_mode *self)
{
    cfx_proxy_mode *pm = (cfx_proxy_mode *)self;
    free(pm->plans);
    free(pm->consts);
    free(pm->scratch);
    free(pm);
}

static const cfx_mode_vtable proxy_vtable = {"ProxyTorchDispatchMode", proxy_dispatch, proxy_destroy};

cfx_proxy_mode *cfx_proxy_mode_new(cfx_graph_module *gm, const cfx_module *module, bool fake)
{
    if (!gm) {
        cfx_error_set(CFX_ERR, NULL, "cfx_proxy_mode_new: NULL graph module");
        return NULL;
    }
    cfx_proxy_mode *pm = calloc(1, sizeof *pm);
    if (!pm) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_mode_init(&pm->base, &proxy_vtable, CFX_MODE_PROXY);
    pm->gm = gm;
    pm->g = cfx_graph_module_graph(gm);
    pm->module = module;
    pm->owner = cfx_binding_owner_new();
    pm->fake = fake;
    for (int i = 0; i < cfx_module_count(module); i++)
        if (strncmp(cfx_module_name_at(module, i), "_tensor_constant", 16) == 0)
            pm->params_may_clash = true;
    return pm;
}

cfx_mode *cfx_proxy_mode_base(cfx_proxy_mode *pm) { return pm ? &pm->base : NULL; }

cfx_proxy_mode *cfx_proxy_mode_from_base(cfx_mode *m)
{
    return m && m->vt == &proxy_vtable ? (cfx_proxy_mode *)m : NULL;
}

cfx_graph *cfx_proxy_mode_graph(const cfx_proxy_mode *pm) { return pm ? pm->g : NULL; }
uint64_t cfx_proxy_mode_owner(const cfx_proxy_mode *pm) { return pm ? pm->owner : 0; }

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
    return CFX_OK;
}

/* The plan of op, computed on its first call in this mode. */
static const op_plan *plan_for(cfx_proxy_mode *pm, const cfx_op *op)
{
    if (cfx_op_id(op) >= pm->plan_cap) {
        uint32_t cap = pm->plan_cap ? pm->plan_cap : 64;
        while (cap <= cfx_op_id(op))
            cap *= 2;
        op_plan *np = realloc(pm->plans, cap * sizeof *np);
        if (!np) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        memset(np + pm->plan_cap, 0, (cap - pm->plan_cap) * sizeof *np);
        pm->plans = np;
        pm->plan_cap = cap;
    }
    op_plan *p = &pm->plans[cfx_op_id(op)];
    if (!p->op && build_plan(op, p) != CFX_OK) {
        p->op = NULL;
        return NULL;
    }
    return p;
}

/* ---- argument defaults (IValue ==) ---------------------------------------------------------- */

/* The integer an IValue holds for an int or an int-like enum, or false. */
static bool int_code(cfx_value v, int64_t *out)
{
    switch (v.kind) {
    case CFX_V_INT: *out = v.u.i; return true;
    case CFX_V_DTYPE: *out = (int64_t)v.u.dtype; return true;
    case CFX_V_LAYOUT: *out = v.u.layout; return true;
    case CFX_V_MEMORY_FORMAT: *out = v.u.memory_format; return true;
    default: return false;
    }
}

static bool is_none(cfx_value v) { return v.kind == CFX_V_NONE || (v.kind == CFX_V_TENSOR && !v.u.t); }

/* IValue equality of a non-list value with a default. */
static bool scalar_equal(cfx_value d, cfx_value v)
{
    int64_t a, b;
    switch (d.kind) {
    case CFX_V_NONE: return is_none(v);
    case CFX_V_BOOL: return v.kind == CFX_V_BOOL && v.u.b == d.u.b;
    case CFX_V_DOUBLE: return v.kind == CFX_V_DOUBLE && v.u.d == d.u.d;
    case CFX_V_STRING: return v.kind == CFX_V_STRING && v.len == d.len && memcmp(v.u.s, d.u.s, d.len) == 0;
    case CFX_V_DEVICE: return v.kind == CFX_V_DEVICE && cfx_device_eq(v.u.device, d.u.device);
    default:
        return int_code(d, &a) && int_code(v, &b) && a == b;
    }
}

static bool equals_default(const cfx_argument *a, cfx_value v)
{
    if (!a->has_default)
        return false;
    cfx_value d = a->default_value;
    if (d.kind != CFX_V_LIST && d.kind != CFX_V_TUPLE)
        return scalar_equal(d, v);
    /* default lists are flat ([], [1, 1], [0.5]) */
    if (v.kind != d.kind || v.len != d.len)
        return false;
    for (uint32_t i = 0; i < d.len; i++)
        if (d.u.items[i].kind == CFX_V_LIST || d.u.items[i].kind == CFX_V_TUPLE ||
            !scalar_equal(d.u.items[i], v.u.items[i]))
            return false;
    return true;
}

/* ---- tensors to nodes ------------------------------------------------------------------------ */

static int grow_consts(cfx_proxy_mode *pm)
{
    uint32_t cap = pm->const_cap ? pm->const_cap * 2 : 16;
    const_entry *nc = calloc(cap, sizeof *nc);
    if (!nc)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (uint32_t i = 0; i < pm->const_cap; i++) {
        if (!pm->consts[i].t)
            continue;
        uint32_t j = (uint32_t)cfx_hash_ptr(pm->consts[i].t) & (cap - 1);
        while (nc[j].t)
            j = (j + 1) & (cap - 1);
        nc[j] = pm->consts[i];
    }
    free(pm->consts);
    pm->consts = nc;
    pm->const_cap = cap;
    return CFX_OK;
}

static const_entry *const_slot(const cfx_proxy_mode *pm, const cfx_tensor *t)
{
    uint32_t mask = pm->const_cap - 1;
    uint32_t i = (uint32_t)cfx_hash_ptr(t) & mask;
    while (pm->consts[i].t && pm->consts[i].t != t)
        i = (i + 1) & mask;
    return &pm->consts[i];
}

/* hasattr(root, name) for a `_tensor_constantN` name, where root holds the graph module's
 * attributes: interned constants (exact names, found by hash) and module parameters, which
 * are scanned only if one of them could clash (so many constants stay linear). */
static bool root_has(const cfx_proxy_mode *pm, const char *name)
{
    if (cfx_graph_module_get_attr(pm->gm, name))
        return true;
    if (!pm->params_may_clash)
        return false;
    size_t n = strlen(name);
    for (int i = 0; i < cfx_module_count(pm->module); i++) {
        const char *a = cfx_module_name_at(pm->module, i);
        if (strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '.'))
            return true;
    }
    return false;
}

/* The `_tensor_constantN` attribute name of t, registering t the first time. */
static const char *constant_name(cfx_proxy_mode *pm, cfx_tensor *t)
{
    if (pm->const_cap && const_slot(pm, t)->t)
        return const_slot(pm, t)->name;
    if (2 * (pm->n_consts + 1) > pm->const_cap && grow_consts(pm) != CFX_OK)
        return NULL;
    static const char prefix[] = "_tensor_constant";
    char name[sizeof prefix + 20];
    memcpy(name, prefix, sizeof prefix - 1);
    for (;; pm->next_const++) {
        name[sizeof prefix - 1 + cfx_fmt_u64(pm->next_const, name + sizeof prefix - 1)] = '\0';
        if (!root_has(pm, name))
            break;
    }
    if (cfx_graph_module_set_attr(pm->gm, name, t) != CFX_OK)
        return NULL;
    const char *stored = cfx_graph_module_attr_name(pm->gm, cfx_graph_module_n_attrs(pm->gm) - 1);
    *const_slot(pm, t) = (const_entry){t, stored};
    pm->n_consts++;
    pm->next_const++;
    return stored;
}

/* A tensor not bound to a node: a get_attr for the parameter or interned constant it is. */
static cfx_node *attr_node(cfx_proxy_mode *pm, cfx_tensor *t)
{
    const char *name = cfx_module_name_of(pm->module, t);
    if (name) {
        /* a parameter: an attribute under its qualified name, registered on first use */
        if (!cfx_graph_module_get_attr(pm->gm, name) && cfx_graph_module_set_attr(pm->gm, name, t) != CFX_OK)
            return NULL;
    } else {
        name = constant_name(pm, t);
        if (!name)
            return NULL;
    }
    return cfx_graph_get_attr(pm->g, name);
}

/* cfx_proxy_node_of for a non-NULL tensor. */
static cfx_node *node_of(cfx_proxy_mode *pm, cfx_tensor *t)
{
    cfx_node *n = cfx_tensor_binding_get(t, pm->owner);
    return n ? n : attr_node(pm, t);
}

cfx_node *cfx_proxy_node_of(cfx_proxy_mode *pm, cfx_tensor *t)
{
    return pm && t ? node_of(pm, t) : NULL;
}

/* ---- results to nodes -------------------------------------------------------------------------- */

static int set_site(cfx_node *n)
{
    const cfx_site *site = cfx_current_site();
    return site && site->file ? cfx_node_set_stack_trace(n, site) : CFX_OK;
}

/* track_tensor + set_meta for a non-NULL tensor and node. */
static int track(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n)
{
    int rc = cfx_tensor_binding_set(t, pm->owner, n, NULL);
    if (rc != CFX_OK)
        return rc;
    /* set_meta: a FakeTensor gets val and tensor_meta, a real tensor tensor_meta only */
    if (cfx_tensor_is_fake(t)) {
        cfx_meta_val v = {
            .kind = CFX_MVAL_TENSOR,
            .dtype = t->dtype,
            .device = cfx_tensor_fake_device(t),
            .n = t->ndim,
            .sizes = t->sizes,
            .strides = t->strides,
            .storage_offset = t->storage_offset,
        };
        rc = cfx_node_set_val(n, &v);
        if (rc != CFX_OK)
            return rc;
    }
    return cfx_node_set_tensor_meta_from_tensor(n, t, false);
}

int cfx_proxy_track(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n)
{
    return pm && t && n ? track(pm, t, n) : CFX_ERR;
}

void cfx_proxy_untrack(cfx_proxy_mode *pm, cfx_tensor *t)
{
    if (pm && t)
        cfx_tensor_binding_clear(t, pm->owner);
}

static cfx_node *getitem(cfx_proxy_mode *pm, cfx_node *of, int64_t i)
{
    cfx_value a[2] = {cfx_node_value(of), cfx_int(i)};
    cfx_node *n = cfx_graph_call_fn(pm->g, &cfx_fn_getitem, a, 2, NULL, 0);
    if (n && set_site(n) != CFX_OK)
        return NULL;
    return n;
}

/* wrap_with_proxy: a tensor is tracked; a list gets a getitem per element, its tensors
 * tracked (lists inside lists are not walked: no schema returns them). */
static int wrap_value(cfx_proxy_mode *pm, cfx_value v, cfx_node *proxy)
{
    if (v.kind == CFX_V_TENSOR)
        return v.u.t ? track(pm, v.u.t, proxy) : CFX_OK;
    if (v.kind != CFX_V_LIST)
        return CFX_OK;
    for (uint32_t j = 0; j < v.len; j++) {
        cfx_node *gi = getitem(pm, proxy, j);
        if (!gi)
            return CFX_ERR;
        cfx_value e = v.u.items[j];
        if (e.kind == CFX_V_TENSOR && e.u.t) {
            int rc = track(pm, e.u.t, gi);
            if (rc != CFX_OK)
                return rc;
        }
    }
    return CFX_OK;
}

int cfx_proxy_track_outputs(cfx_proxy_mode *pm, cfx_node *n, const cfx_value *outs, int n_outs)
{
    if (!pm || !n)
        return CFX_ERR;
    if (n_outs == 1) {
        cfx_value v = outs[0];
        switch (v.kind) {
        case CFX_V_TENSOR:
        case CFX_V_LIST:
            return wrap_value(pm, v, n);
        case CFX_V_INT:
            return cfx_node_set_val(n, &(cfx_meta_val){.kind = CFX_MVAL_INT, .u.i = v.u.i});
        case CFX_V_DOUBLE:
            return cfx_node_set_val(n, &(cfx_meta_val){.kind = CFX_MVAL_DOUBLE, .u.d = v.u.d});
        case CFX_V_BOOL:
            return cfx_node_set_val(n, &(cfx_meta_val){.kind = CFX_MVAL_BOOL, .u.b = v.u.b});
        default:
            return CFX_OK;
        }
    }
    /* a tuple: proxy_res[idx] makes a getitem node for every element, whatever it holds */
    for (int i = 0; i < n_outs; i++) {
        cfx_node *gi = getitem(pm, n, i);
        if (!gi)
            return CFX_ERR;
        int rc = wrap_value(pm, outs[i], gi);
        if (rc != CFX_OK)
            return rc;
    }
    return CFX_OK;
}

/* ---- meta of a fresh node -------------------------------------------------------------------- */

static int track_fresh(cfx_proxy_mode *pm, cfx_tensor *t, cfx_node *n, const cfx_site *site)
{
    if (site && !site->file)
        site = NULL;
    int rc = cfx_tensor_binding_set(t, pm->owner, n, NULL);
    if (rc != CFX_OK)
        return rc;
    bool fake = cfx_tensor_is_fake(t);
    cfx_device dev = fake ? cfx_tensor_fake_device(t) : t->device;
    return cfx_node_set_result_meta(n, site, t, fake ? &dev : NULL, false);
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
    cfx_value *s = realloc(pm->scratch, need * sizeof *s);
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
    const cfx_schema *s = cfx_op_schema(op);
    uint32_t n_pos = p->kwarg_start;
    while (n_pos > p->trim_from && equals_default(&s->args[n_pos - 1], stack[n_pos - 1]))
        n_pos--;
    return n_pos;
}

/* The kwarg-only arguments that differ from their defaults, into kwargs; their count, or -1
 * with the error recorded. */
static int map_kwargs(cfx_proxy_mode *pm, const cfx_op *op, const op_plan *p, const cfx_value *stack,
                      cfx_value *scratch, cfx_kwarg *kwargs)
{
    const cfx_schema *s = cfx_op_schema(op);
    int n_kw = 0;
    for (uint32_t i = p->kwarg_start; i < p->n_args; i++) {
        if (equals_default(&s->args[i], stack[i]))
            continue;
        kwargs[n_kw].name = s->args[i].name;
        if (!map_arg(pm, p, (int)i, stack[i], &scratch, &kwargs[n_kw].value))
            return -1;
        n_kw++;
    }
    return n_kw;
}

static int proxy_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    cfx_proxy_mode *pm = (cfx_proxy_mode *)self;
    const op_plan *p = plan_for(pm, op);
    if (!p)
        return CFX_ERR;
    if (cfx_op_has_tag(op, CFX_TAG_data_dependent_output))
        return cfx_error_set(CFX_ERR, cfx_op_name(op),
                             "It appears that you're trying to get value out of a tracing tensor - erroring out! "
                             "It's likely that this is caused by data-dependent control flow or similar.");
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
        } else if (stack[i].kind != CFX_V_TENSOR && !((p->lists | p->enums) >> i & 1)) {
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

    /* the site is set with the rest of the meta once the result is known */
    const cfx_site *site = cfx_current_site();
    int rc = cfx_mode_redispatch(p->target, stack);
    if (rc == CFX_OK && p->n_returns == 1 && stack[0].kind == CFX_V_TENSOR && stack[0].u.t)
        return track_fresh(pm, stack[0].u.t, n, site);
    int src = site && site->file ? cfx_node_set_stack_trace(n, site) : CFX_OK;
    if (rc != CFX_OK)
        return rc;
    if (src != CFX_OK)
        return src;
    return cfx_proxy_track_outputs(pm, n, stack, p->n_returns);
}
