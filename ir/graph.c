/* graph.c - graph lifecycle, node creation, the insertion point, erasing, walking.
 *
 * The node list is circular through a sentinel embedded in the graph, as FX's `_root`; links
 * are node seqs resolved through the node table (the sentinel's seq is CFX_NODE_ROOT_SEQ).
 * Every node is made by one function, create_node, whatever its op and whoever asks (builders,
 * the tracer, node_copy, the JSON reader). It follows Graph.create_node: the node takes its
 * name first (so, as in FX, a name is consumed even when the node is then refused), then its
 * target is checked, it is spliced in at the insertion point, and its args are copied and its
 * uses linked (args.c); if that fails it is taken out again and its record is cleared for the
 * next node (no user code runs in between; with node_copy's callback it is spliced in last).
 * Erasing unlinks and tombstones: the node keeps its own prev/next so an iterator standing on
 * it can still move on. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/value_internal.h"
#include "ir/internal.h"

/* The value printer is process-wide: install it once, not on every graph (graphs are built
 * on several threads at once, and rewriting a shared pointer there is a data race). */
static pthread_once_t printer_once = PTHREAD_ONCE_INIT;
static void install_node_printer(void) { cfx_value_set_node_printer(cfx_node_print_name); }

cfx_graph *cfx_graph_new(void)
{
    cfx_graph *g = cfx_calloc(1, sizeof *g);
    if (!g) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_arena_init(&g->arena);
    g->names = cfx_names_new(&g->arena);
    if (!g->names) {
        cfx_free(g);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    g->root.prev = g->root.next = g->root.seq = CFX_NODE_ROOT_SEQ;
    g->root_head.graph = g;
    g->root.op = CFX_NODE_ROOT;
    g->root.name_base = cfx_names_intern(g->names, "", 0);
    g->root.name_suffix = CFX_NAME_NO_SUFFIX;
    g->insert = (cfx_insert_point){&g->root, false};
    g->n_uses = 1; /* use id 0 means "none" */
    /* node references inside cfx_values print as node names */
    pthread_once(&printer_once, install_node_printer);
    return g;
}

void cfx_graph_free(cfx_graph *g)
{
    if (!g)
        return;
    if (g->has_foreign_uses) {
        /* our use records sit in other graphs' users lists: take them out */
        for (cfx_node *n = ir_link(g, g->root.next); n != &g->root; n = ir_link(g, n->next))
            for (uint32_t i = 0; i < n->n_inputs; i++)
                if (ir_use_at(g, n->inputs + i)->producer & IR_EXT) {
                    ir_unlink_inputs(n);
                    break;
                }
    }
    cfx_names_free(g->names);
    ir_target_table_free(g);
    ir_meta_free(g);
    cfx_free(g->nblock);
    cfx_free(g->ublock);
    cfx_free(g->ext);
    cfx_arena_free(&g->arena);
    cfx_free(g);
}

/* ---- creation ---------------------------------------------------------------------------- */

/* Node records sit in blocks of the node table, found by seq. A block is one arena
 * allocation, so the records are packed at their own size, not rounded up to 16 bytes; they
 * start at a 64-byte boundary, each on a cache line of its own, and the block's head (the
 * graph, for cfx_node_graph) follows the last. The arena's 16-byte alignment leaves at most
 * 48 bytes unused in front of the first. */
enum { NODE_BLOCK_BYTES = 48 + (sizeof(cfx_node) << IR_NODE_SHIFT) + sizeof(cfx_node_block_head) };
_Static_assert(sizeof(cfx_node) == 64, "node block layout");

/* The record of the next node (seq g->n_created): zero-filled (arena.h), and cleared again when
 * a node is refused, so it is taken only when the node is made (n_created counts it then).
 * Blocks are allocated in seq order. NULL + error when the table cannot grow. */
static cfx_node *node_slot(cfx_graph *g)
{
    uint32_t seq = g->n_created;
    uint32_t b = seq >> IR_NODE_SHIFT;
    if (b < g->nblock_cap && g->nblock[b])
        return ir_node_at(g, seq);
    if (seq >= IR_EXT) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory (too many nodes)");
        return NULL;
    }
    if (b >= g->nblock_cap) {
        uint32_t cap = g->nblock_cap ? g->nblock_cap * 2 : 8;
        cfx_node **t = cfx_realloc(g->nblock, cap * sizeof *t);
        if (!t) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        memset(t + g->nblock_cap, 0, (cap - g->nblock_cap) * sizeof *t);
        g->nblock = t;
        g->nblock_cap = cap;
    }
    char *p = cfx_arena_alloc(&g->arena, NODE_BLOCK_BYTES);
    if (!p) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_node *first = (cfx_node *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
    ((cfx_node_block_head *)(void *)(first + (1u << IR_NODE_SHIFT)))->graph = g;
    g->nblock[b] = first;
    return ir_node_at(g, seq);
}

/* torch.typename(target): module + "." + qualname. An OpOverload's module is torch._ops.<ns>
 * and its qualname the full "ns::name.overload"; operator.* functions live in _operator. */
static void print_target_typename(const cfx_target_info *t, cfx_buf *b)
{
    if (t->kind == CFX_TARGET_STRING) {
        cfx_buf_puts(b, "str");
    } else if (t->kind == CFX_TARGET_OP) {
        const char *qn = cfx_op_name((const cfx_op *)t->ptr);
        const char *colons = strstr(qn, "::");
        cfx_buf_puts(b, "torch._ops.");
        if (colons) {
            cfx_buf_putn(b, qn, (size_t)(colons - qn));
            cfx_buf_putc(b, '.');
        }
        cfx_buf_puts(b, qn);
    } else {
        const char *qn = ((const cfx_builtin_fn *)t->ptr)->qualified_name;
        if (strncmp(qn, "operator.", 9) == 0)
            cfx_buf_putc(b, '_');
        cfx_buf_puts(b, qn);
    }
}

/* str(target) for the ValueError text. */
static void print_target_str(const cfx_target_info *t, cfx_buf *b)
{
    if (t->kind == CFX_TARGET_STRING) {
        cfx_buf_puts(b, t->printed);
    } else if (t->kind == CFX_TARGET_OP) {
        cfx_buf_puts(b, t->printed + strlen("torch.ops."));
    } else {
        const cfx_builtin_fn *fn = t->ptr;
        cfx_buf_printf(b, "<built-in function %s>", fn->name);
    }
}

/* The error for a call_function node with a string target or another node with a callable
 * one (FX's Node.__init__ check). */
static void target_type_error(cfx_graph *g, cfx_name nm, const cfx_target_info *info, bool want_fn)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "Node [graph = ");
    cfx_graph_print(g, &b);
    cfx_buf_puts(&b, ", name = '");
    cfx_name_print(nm, &b);
    cfx_buf_puts(&b, "'] target ");
    print_target_str(info, &b);
    cfx_buf_puts(&b, " has type ");
    print_target_typename(info, &b);
    cfx_buf_puts(&b, want_fn ? " but a Callable is expected" : " but a str is expected");
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, NULL, msg ? msg : "invalid node target");
    cfx_free(msg);
}

/* A node's name: create_name on an explicit candidate, or on the target's candidate prepared
 * once (cfx_target_info.cand). */
static int node_name(cfx_graph *g, const char *name, const cfx_target_info *info, cfx_name *out)
{
    cfx_name_candidate c;
    const cfx_name_candidate *cand = &info->cand;
    if (name) {
        int rc = cfx_names_prepare(g->names, name, strlen(name), &c);
        if (rc != CFX_OK)
            return rc;
        cand = &c;
    }
    return cfx_names_create_prepared(g->names, cand, CFX_NAME_FOR_NONE, out);
}

/* The insertion point is a node of another graph or an erased one. */
static void insert_point_error(const cfx_graph *g, const cfx_node *at)
{
    if (cfx_node_graph(at) != g)
        cfx_error_set(CFX_ERR, NULL, "Node to insert before is not in graph.");
    else
        cfx_error_set(CFX_ERR, NULL, "the insertion point node was erased");
}

/* Graph.create_node, for every creator. map (node_copy's arg_transform) rewrites each node
 * reference of the args as they are copied. */
static cfx_node *create_node(cfx_graph *g, cfx_node_op op, cfx_target target, const cfx_value *args,
                             uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs, const char *name,
                             const ir_arg_map *map)
{
    if (!g)
        return NULL;
    if ((unsigned)op >= CFX_NODE_OP_COUNT) {
        cfx_error_set(CFX_ERR, NULL, "Node opcode %d is not one of placeholder, get_attr, "
                      "call_function, call_method, call_module, output", (int)op);
        return NULL;
    }
    cfx_node *at = g->insert.at;
    if (at != &g->root && (cfx_node_graph(at) != g || cfx_node_is_erased(at))) {
        insert_point_error(g, at);
        return NULL;
    }
    const cfx_target_info *info = ir_target_info(g, target);
    if (!info)
        return NULL;
    cfx_name nm;
    if (node_name(g, name, info, &nm) != CFX_OK)
        return NULL;
    if (!(info->op_mask >> op & 1)) {
        target_type_error(g, nm, info, op == CFX_NODE_CALL_FUNCTION);
        return NULL;
    }
    cfx_node *n = node_slot(g);
    if (!n)
        return NULL;
    /* the slot is zero-filled: only what is not 0 to start with (the graph is the block's) */
    n->name_base = nm.base;
    n->name_suffix = nm.suffix;
    n->target_id = info->id;
    n->seq = g->n_created;
    n->op = (uint8_t)op;
    /* Without a map nothing sees the graph while the args are taken, so the node is linked in
     * first (at is dead then) and unlinked if they fail; a map (node_copy's callback) might
     * walk the graph, so then it is linked in last. */
    if (!map)
        ir_list_insert(g, g->insert, n);
    int rc = ir_node_set_args(g, n, args, n_args, kwargs, n_kwargs, map);
    if (rc != CFX_OK) {
        ir_unlink_inputs(n); /* the record is reused: leave no use naming it */
        if (!map)
            ir_list_unlink(g, n);
        memset(n, 0, sizeof *n); /* the next node takes this slot */
        return NULL;
    }
    if (map)
        ir_list_insert(g, g->insert, n);
    g->n_created++;
    g->len++;
    return n;
}

cfx_node *cfx_graph_create_node(cfx_graph *g, cfx_node_op op, cfx_target target, const cfx_value *args,
                                uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs, const char *name)
{
    return create_node(g, op, target, args, n_args, kwargs, n_kwargs, name, NULL);
}

cfx_node *cfx_graph_placeholder(cfx_graph *g, const char *name)
{
    return create_node(g, CFX_NODE_PLACEHOLDER, cfx_target_str(name), NULL, 0, NULL, 0, NULL, NULL);
}

cfx_node *cfx_graph_placeholder_default(cfx_graph *g, const char *name, cfx_value default_value)
{
    return create_node(g, CFX_NODE_PLACEHOLDER, cfx_target_str(name), &default_value, 1, NULL, 0,
                       NULL, NULL);
}

cfx_node *cfx_graph_get_attr(cfx_graph *g, const char *qualified_name)
{
    return create_node(g, CFX_NODE_GET_ATTR, cfx_target_str(qualified_name), NULL, 0, NULL, 0,
                       NULL, NULL);
}

cfx_node *cfx_graph_call_op(cfx_graph *g, const cfx_op *op, const cfx_value *args, uint32_t n_args,
                            const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    return create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(op), args, n_args, kwargs, n_kwargs,
                       NULL, NULL);
}

cfx_node *cfx_graph_call_fn(cfx_graph *g, const cfx_builtin_fn *fn, const cfx_value *args,
                            uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    return create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_fn(fn), args, n_args, kwargs, n_kwargs,
                       NULL, NULL);
}

cfx_node *cfx_graph_call_method(cfx_graph *g, const char *method, const cfx_value *args,
                                uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    return create_node(g, CFX_NODE_CALL_METHOD, cfx_target_str(method), args, n_args, kwargs,
                       n_kwargs, NULL, NULL);
}

cfx_node *cfx_graph_call_module(cfx_graph *g, const char *module_path, const cfx_value *args,
                                uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    return create_node(g, CFX_NODE_CALL_MODULE, cfx_target_str(module_path), args, n_args, kwargs,
                       n_kwargs, NULL, NULL);
}

cfx_node *cfx_graph_output(cfx_graph *g, cfx_value result)
{
    return create_node(g, CFX_NODE_OUTPUT, cfx_target_str("output"), &result, 1, NULL, 0, NULL, NULL);
}

cfx_node *cfx_graph_node_copy(cfx_graph *g, const cfx_node *node, cfx_node_map_fn map, void *ctx)
{
    if (!g || !node)
        return NULL;
    char small[128];
    cfx_name nm = cfx_node_name(node);
    size_t len = cfx_name_length(nm);
    char *name = len < sizeof small ? small : cfx_malloc(len + 1);
    ir_arg_map m = {map, ctx};
    if (!name) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    *cfx_name_write(nm, name) = '\0';
    cfx_node *n = create_node(g, (cfx_node_op)node->op, cfx_node_target(node), node->args, node->n_args,
                              cfx_node_kwargs(node), cfx_node_num_kwargs(node), name, map ? &m : NULL);
    if (name != small)
        cfx_free(name);
    if (n && node->meta && cfx_node_meta_copy(n, node) != CFX_OK)
        return NULL;
    return n;
}

/* ---- insertion point ---------------------------------------------------------------------- */

cfx_insert_point cfx_graph_inserting_before(cfx_graph *g, cfx_node *n)
{
    cfx_insert_point old = g->insert;
    cfx_graph_set_insert_point(g, n ? (cfx_insert_point){n, false} : (cfx_insert_point){&g->root, true});
    return old;
}

cfx_insert_point cfx_graph_inserting_after(cfx_graph *g, cfx_node *n)
{
    cfx_insert_point old = g->insert;
    cfx_graph_set_insert_point(g, n ? (cfx_insert_point){n, true} : (cfx_insert_point){&g->root, false});
    return old;
}

void cfx_graph_set_insert_point(cfx_graph *g, cfx_insert_point p) { g->insert = p; }

/* ---- erasing ------------------------------------------------------------------------------ */

static bool null_ref(cfx_value *slot, void *ctx)
{
    (void)ctx;
    *slot = cfx_none();
    return true;
}

int cfx_graph_erase_node(cfx_graph *g, cfx_node *n)
{
    if (!g || !n)
        return CFX_ERR;
    if (n->n_users > 0) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Tried to erase Node ");
        ir_print_name(n, &b);
        cfx_buf_printf(&b, " but it still had %u users in the graph: {", n->n_users);
        cfx_user_iter it;
        for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
            ir_print_name(u, &b);
            cfx_buf_puts(&b, it.use ? ": None, " : ": None");
        }
        cfx_buf_puts(&b, "}!");
        char *msg = cfx_buf_take(&b);
        int rc = cfx_error_set_text(CFX_ERR, NULL, msg ? msg : "Tried to erase Node with users");
        cfx_free(msg);
        return rc;
    }
    if (cfx_node_graph(n) != g) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Attempting to remove ");
        ir_print_name(n, &b);
        cfx_buf_puts(&b, " from wrong graph!");
        char *msg = cfx_buf_take(&b);
        int rc = cfx_error_set_text(CFX_ERR, NULL, msg ? msg : "Attempting to remove from wrong graph!");
        cfx_free(msg);
        return rc;
    }
    if (cfx_node_is_erased(n)) {
        char *s = cfx_node_name_string(n);
        cfx_warn("erase_node(%s) on an already erased node", s ? s : "?");
        cfx_free(s);
        return CFX_OK;
    }
    ir_list_unlink(g, n);
    n->flags |= CFX_NODE_ERASED;
    g->len--;
    /* null out node arguments so producers drop n from their users */
    if (n->n_inputs) {
        ir_walk_refs(n, null_ref, NULL); /* out of memory part way: the rest stay, unused */
        ir_unlink_inputs(n);
    }
    return CFX_OK;
}

/* ---- walking ------------------------------------------------------------------------------ */

cfx_node *cfx_node_next(const cfx_node *n) { return ir_next_in(cfx_node_graph(n), n); }
cfx_node *cfx_node_prev(const cfx_node *n) { return ir_prev_in(cfx_node_graph(n), n); }

const cfx_target_info *cfx_node_target_info(const cfx_node *n) { return ir_target_of(n); }
cfx_target cfx_node_target(const cfx_node *n) { return cfx_target_from_info(ir_target_of(n)); }
const cfx_op *cfx_node_operator(const cfx_node *n) { return cfx_target_info_op(ir_target_of(n)); }

const char *cfx_node_target_str(const cfx_node *n)
{
    const cfx_target_info *t = ir_target_of(n);
    return t->kind == CFX_TARGET_STRING ? (const char *)t->ptr : NULL;
}

cfx_node *cfx_graph_first(const cfx_graph *g) { return g ? ir_next_in((cfx_graph *)g, &g->root) : NULL; }
cfx_node *cfx_graph_last(const cfx_graph *g) { return g ? ir_prev_in((cfx_graph *)g, &g->root) : NULL; }
uint32_t cfx_graph_num_nodes(const cfx_graph *g) { return g ? g->len : 0; }
uint32_t cfx_graph_num_created(const cfx_graph *g) { return g ? g->n_created : 0; }

cfx_node *cfx_graph_output_node(const cfx_graph *g)
{
    cfx_node *n = cfx_graph_last(g);
    return n && n->op == CFX_NODE_OUTPUT ? n : NULL;
}

cfx_node *cfx_graph_find_node(const cfx_graph *g, const char *name)
{
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        if (cfx_node_name_is(n, name))
            return n;
    return NULL;
}

cfx_names *cfx_graph_names(cfx_graph *g) { return g->names; }
cfx_arena *cfx_graph_arena(cfx_graph *g) { return &g->arena; }
size_t cfx_graph_arena_bytes(const cfx_graph *g) { return g->arena.total; }

void cfx_graph_set_module_impure_fn(cfx_graph *g, cfx_module_impure_fn fn, void *ctx)
{
    g->module_impure = fn;
    g->module_impure_ctx = ctx;
}
