/* graph.c - graph lifecycle, node creation, the insertion point, erasing, walking.
 *
 * The node list is circular through a sentinel embedded in the graph, as FX's `_root`; links
 * are node seqs resolved through the node table (the sentinel's seq is CFX_NODE_ROOT_SEQ). A
 * new node takes its name first (so, as in FX, a name is consumed even when the node is then
 * refused), then its target is checked, it is spliced in at the insertion point, and its args
 * are copied and its uses linked; if that fails it is taken out again (no user code runs in
 * between; with node_copy's callback it is spliced in last). Flat args (scalars and nodes of
 * this graph) take one pass (args_flat.h), the rest the general copy and walk (args.c).
 * The tracer's node (call_function, flat args, default name, at the end) has a path of its
 * own, cfx_graph_call_target, which cfx_graph_create_node's inline entry (graph.h) picks and
 * which makes the same node with no call; it checks all but the args before it changes
 * anything and takes back what it did when an arg is not flat.
 * Erasing unlinks and tombstones: the node keeps its own prev/next so an iterator standing on
 * it can still move on. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/value_internal.h"
#include "ir/args_flat.h"
#include "ir/internal.h"
#include "ir/istr.h"

/* The value printer is process-wide: install it once, not on every graph (graphs are built
 * on several threads at once, and rewriting a shared pointer there is a data race). */
static pthread_once_t printer_once = PTHREAD_ONCE_INIT;
static void install_node_printer(void) { cfx_value_set_node_printer(cfx_node_print_name); }

cfx_graph *cfx_graph_new(void)
{
    cfx_graph *g = calloc(1, sizeof *g);
    if (!g) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_arena_init(&g->arena);
    g->names = cfx_names_new(&g->arena);
    if (!g->names) {
        free(g);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    g->root.prev = g->root.next = g->root.seq = CFX_NODE_ROOT_SEQ;
    g->root_head.graph = g;
    g->root.op = CFX_NODE_ROOT;
    g->root.name_base = cfx_names_intern(g->names, "", 0);
    g->root.name_suffix = CFX_NAME_NO_SUFFIX;
    g->insert = (cfx_insert_point){&g->root, false};
    g->tail_hint = &g->root; /* its seq is no node's */
    g->n_uses = 1; /* use id 0 means "none" */
    for (size_t i = 0; i < sizeof g->tcache / sizeof *g->tcache; i++)
        g->tcache[i] = &ir_tcache_empty;
    ir_meta_init(g);
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
    ir_target_cache_free(g);
    ir_meta_free(g);
    free(g->scratch);
    free(g->hset);
    free(g->nblock);
    free(g->ublock);
    free(g->ext);
    cfx_arena_free(&g->arena);
    free(g);
}

/* ---- creation ---------------------------------------------------------------------------- */

/* Node records sit in blocks of the node table, found by seq. A block is one arena
 * allocation, so the records are packed at their own size, not rounded up to 16 bytes; they
 * start at a 64-byte boundary, each on a cache line of its own, and the block's head (the
 * graph, for cfx_node_graph) follows the last. The arena's 16-byte alignment leaves at most
 * 48 bytes unused in front of the first. */
enum { NODE_BLOCK_BYTES = 48 + (sizeof(cfx_node) << IR_NODE_SHIFT) + sizeof(cfx_node_block_head) };
_Static_assert(sizeof(cfx_node) == 64, "node block layout");
cfx_node *ir_node_slot_slow(cfx_graph *g)
{
    uint32_t seq = g->n_created;
    uint32_t b = seq >> IR_NODE_SHIFT;
    if (seq >= IR_EXT) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory (too many nodes)");
        return NULL;
    }
    if (b >= g->nblock_cap) {
        uint32_t cap = g->nblock_cap ? g->nblock_cap * 2 : 8;
        cfx_node **t = realloc(g->nblock, cap * sizeof *t);
        if (!t) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        memset(t + g->nblock_cap, 0, (cap - g->nblock_cap) * sizeof *t);
        g->nblock = t;
        g->nblock_cap = cap;
    }
    if (!g->nblock[b]) {
        char *p = cfx_arena_alloc(&g->arena, NODE_BLOCK_BYTES);
        if (!p) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        cfx_node *first = (cfx_node *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
        ((cfx_node_block_head *)(void *)(first + (1u << IR_NODE_SHIFT)))->graph = g;
        g->nblock[b] = first;
    }
    /* blocks are taken in seq order: the rest of this one is next */
    g->nslot = ir_node_at(g, seq);
    g->nslot_end = g->nblock[b] + (1u << IR_NODE_SHIFT);
    ir_fast_end_update(g);
    return g->nslot;
}

static IR_ALWAYS_INLINE void link_before(cfx_graph *g, cfx_node *at, cfx_node *x)
{
    uint32_t p = at->prev;
    ir_link(g, p)->next = x->seq;
    x->prev = p;
    x->next = at->seq;
    at->prev = x->seq;
    ir_fast_end_update(g);
}

static void unlink_node(cfx_graph *g, cfx_node *x)
{
    ir_link(g, x->prev)->next = x->next;
    ir_link(g, x->next)->prev = x->prev;
    ir_fast_end_update(g);
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
 * one (FX's Node.__init__ check). Out of line: create_node is inlined twice. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
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
    free(msg);
}

/* A node's name the long way: from an explicit candidate, or by create_name's full loop.
 * Returned by value (base NULL on error) so the fast path's name stays in registers. */
static IR_NOINLINE cfx_name node_name(cfx_graph *g, const char *name, const cfx_target_info *info)
{
    cfx_name nm = {NULL, CFX_NAME_NO_SUFFIX};
    cfx_name_candidate c;
    const cfx_name_candidate *cand = &info->cand;
    if (name) {
        if (cfx_names_prepare(g->names, name, strlen(name), &c) != CFX_OK)
            return nm;
        cand = &c;
    }
    if (cfx_names_create_prepared(g->names, cand, CFX_NAME_FOR_NONE, &nm) != CFX_OK)
        nm.base = NULL;
    return nm;
}

/* The insertion point is a node of another graph or an erased one. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void insert_point_error(const cfx_graph *g, const cfx_node *at)
{
    if (cfx_node_graph(at) != g)
        cfx_error_set(CFX_ERR, NULL, "Node to insert before is not in graph.");
    else
        cfx_error_set(CFX_ERR, NULL, "the insertion point node was erased");
}

/* Always inlined: cfx_graph_create_node, the tracer's entry, gets a copy of its own with map
 * folded away; every other creator shares create_node_any's. */
static IR_ALWAYS_INLINE cfx_node *create_node(cfx_graph *g, cfx_node_op op, cfx_target target,
                                              const cfx_value *args, uint32_t n_args,
                                              const cfx_kwarg *kwargs, uint32_t n_kwargs,
                                              const char *name, cfx_node_map_fn map, void *ctx)
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
    if (name || !ir_names_next(info->fast_base, &nm)) {
        nm = node_name(g, name, info);
        if (!nm.base)
            return NULL;
    }
    if (!(info->op_mask >> op & 1)) {
        target_type_error(g, nm, info, op == CFX_NODE_CALL_FUNCTION);
        return NULL;
    }
    cfx_node *n = g->nslot;
    if (n == g->nslot_end && !(n = ir_node_slot_slow(g)))
        return NULL;
    /* the slot is zero-filled (arena.h; a refused node's is zeroed again): the fields that
     * are not 0 to start with, but those the args paths set (the graph is the block's) */
    n->name_base = nm.base;
    n->target_id = info->id;
    n->name_suffix = nm.suffix;
    n->seq = g->n_created; /* the slot is taken only if the node is made */
    n->op = (uint8_t)op;
    /* Without a map nothing sees the graph while the args are taken, so the node is linked in
     * first (at is dead then) and unlinked if they fail; a map (node_copy's callback) might
     * walk the graph, so then it is linked in last. */
    if (!map)
        link_before(g, g->insert.after ? ir_link(g, at->next) : at, n);
    int rc = map || n_kwargs ? IR_NOT_FLAT : ir_set_flat_args(g, n, args, n_args);
    if (rc == IR_NOT_FLAT) {
        cfx_value *a;
        if (ir_copy_args_kwargs(g, args, n_args, kwargs, n_kwargs, map, ctx, &a) != CFX_OK)
            rc = CFX_ERR;
        else {
            ir_set_args(n, a, n_args, n_kwargs); /* counts checked by ir_args_block */
            rc = ir_rebuild_inputs(n);
            if (rc != CFX_OK)
                ir_unlink_inputs(n); /* the slot is reused: leave no use naming it */
        }
    }
    if (rc != CFX_OK) {
        if (!map)
            unlink_node(g, n);
        memset(n, 0, sizeof *n); /* the next node takes this slot */
        return NULL;
    }
    if (map)
        link_before(g, g->insert.after ? ir_link(g, at->next) : at, n);
    ir_node_commit(g);
    g->len++;
    return n;
}

static IR_NOINLINE cfx_node *create_node_any(cfx_graph *g, cfx_node_op op, cfx_target target, const cfx_value *args,
                                 uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs,
                                 const char *name, cfx_node_map_fn map, void *ctx)
{
    return create_node(g, op, target, args, n_args, kwargs, n_kwargs, name, map, ctx);
}

extern inline cfx_node *cfx_graph_create_node(cfx_graph *g, cfx_node_op op, cfx_target target,
                                              const cfx_value *args, uint32_t n_args,
                                              const cfx_kwarg *kwargs, uint32_t n_kwargs, const char *name);

cfx_node *cfx_graph_create_node_general(cfx_graph *g, cfx_node_op op, cfx_target target,
                                        const cfx_value *args, uint32_t n_args,
                                        const cfx_kwarg *kwargs, uint32_t n_kwargs, const char *name)
{
    return create_node(g, op, target, args, n_args, kwargs, n_kwargs, name, NULL, NULL);
}

/* cfx_graph_call_target for whatever its fast path does not take: create_node with its
 * constants (a sibling call of the same register arguments, so the fallbacks are jumps). */
static IR_NOINLINE cfx_node *call_target_general(cfx_graph *g, cfx_target target, const cfx_value *args,
                                                 uint32_t n_args)
{
    return create_node(g, CFX_NODE_CALL_FUNCTION, target, args, n_args, NULL, 0, NULL, NULL, NULL);
}

/* The fast path met an arg it cannot take at *v (its copy is *a), with use ids from
 * g->n_uses to id linked: everything it did is taken back (links, argument block, name, node
 * fields), then the general path makes the node. */
static IR_COLD cfx_node *call_target_undo(cfx_graph *g, const cfx_value *v, const cfx_value *a, uint32_t id)
{
    cfx_node *n = g->nslot;
    cfx_target target = cfx_target_from_info(g->targets[n->target_id]);
    const cfx_value *args = v - (a - n->args);
    uint32_t n_args = n->n_args, first = g->n_uses;
    ir_flat_undo(g, first, id - first, n->args, n_args * sizeof(cfx_value));
    ir_names_unnext(n->name_base, cfx_node_name(n));
    memset(n, 0, sizeof *n); /* fresh again */
    return call_target_general(g, target, args, n_args);
}

/* The fast path makes the tracer's node without a call: an operator or function descriptor
 * the target cache holds, args that are flat (ir_set_flat_args' kinds and nodes of g), a
 * default name ir_names_next can give, appended at the end of a non-empty graph, with room
 * left in the current node block, use block and arena chunk. Everything but the args is
 * checked before anything changes; an arg that is not flat takes back what was done
 * (call_target_undo). Anything else is the general path's. The result is the general path's
 * to the bit: the same name, target record, record ids, users order and argument block
 * (test_call_fast.c compares them node for node). "At the end of a non-empty graph with room in the node
 * block" is one compare: g->nslot_fast_end (ir_fast_end_update).
 *
 * The function saves no callee-saved register: it runs in phases, each loading what it needs
 * from the graph (IR_RELOAD_BARRIER), so few values are live at once. The undo finds what it
 * needs in the graph, the node and the loop's pointers. */

/* The flat scalar kinds as a load, not a constant: GCC would hold the constant in a register
 * through the arg loop. */
static const volatile uint32_t flat_scalars = IR_FLAT_SCALARS;

IR_NO_SLP cfx_node *cfx_graph_call_target(cfx_graph *g, cfx_target target, const cfx_value *args, uint32_t n_args)
{
    if (IR_UNLIKELY(!g))
        goto general;
    if (IR_UNLIKELY(!args))
        goto general;
    /* The cache holds operator and function records (callable targets: call_function is in
     * their op_mask) and, in unused slots, ir_tcache_empty, whose fast_base is a name
     * ir_names_next refuses: a target of another kind finds no record, or
     * that one, and takes the general path. */
    const cfx_target_info *info = g->tcache[ir_tcache_slot(target.u.op)];
    if (IR_UNLIKELY(info->ptr != (const void *)target.u.op || info->kind != target.kind))
        goto general;
    /* From here the target is info's, and the function runs in phases that load what they
     * need from the graph again (the barriers), so that few values are live at once and it
     * needs no register that it would have to save and restore. */
    cfx_name nm;
    /* first < use_limit: ucur is first's record even when n_args is 0 */
    if (IR_UNLIKELY((uintptr_t)g->nslot >= (uintptr_t)g->nslot_fast_end ||
                    (uint64_t)g->n_uses + n_args >= g->use_limit ||
                    (size_t)n_args * sizeof(cfx_value) > (size_t)(g->arena.end - g->arena.cur) ||
                    !ir_names_next(info->fast_base, &nm)))
        goto general_info;
    IR_RELOAD_BARRIER();
    cfx_node *n = g->nslot;
    /* the slot is zero-filled (arena.h): only what is not 0 */
    cfx_value *a = (cfx_value *)(void *)g->arena.cur;
    g->arena.cur = (char *)(a + n_args); /* a multiple of 16: no rounding */
    n->args = n_args ? a : NULL;
    n->name_base = nm.base;
    n->name_suffix = nm.suffix;
    n->target_id = info->id;
    n->seq = g->n_created;
    n->n_args = (uint16_t)n_args;
    n->op = CFX_NODE_CALL_FUNCTION;
    IR_RELOAD_BARRIER();
    uint32_t id = g->n_uses;
    ir_use *u = g->ucur;
    /* the copy ends at the arena's cursor (just set): no register for the end */
    const cfx_value *v = args;
    for (; a != (cfx_value *)(void *)g->arena.cur; a++, v++) {
        *a = *v;
        if (v->kind != CFX_V_NODE) {
            /* the mask loaded where it is used (flat_scalars) */
            if (IR_UNLIKELY(v->kind >= 32 || !((1u << (v->kind & 31)) & flat_scalars)))
                goto undo;
            continue;
        }
        cfx_node *p = v->u.node;
        if (IR_UNLIKELY(!p || cfx_node_graph(p) != g))
            goto undo;
        /* ir_use_link written out: the run's first id and the node's seq are loaded from g
         * where used, and the barrier below makes p->seq a load again, so that nothing is
         * held in a register through the loop but its pointers and the id */
        uint32_t head = p->users_head;
        if (!head) {
            p->users_head = id;
            u->prev = id;
        } else {
            ir_use *h = ir_use_at(g, head);
            uint32_t tail = h->prev;
            if (tail >= g->n_uses)
                continue; /* p is an earlier arg: this run holds its use */
            h->prev = id;
            u->prev = tail;
            ir_use_at(g, tail)->next = id;
        }
        IR_RELOAD_BARRIER();
        u->producer = p->seq;
        u->user = g->n_created; /* the node's seq; next: 0 in a fresh record (arena.h) */
        p->n_users++;
        u++;
        id++;
    }
    /* what the rest needs is loaded again, not held through the loop */
    IR_RELOAD_BARRIER();
    n = g->nslot;
    uint32_t first = g->n_uses, seq = n->seq;
    n->n_inputs = id - first;
    n->inputs = first;
    uint32_t last = g->root.prev;
    n->prev = last;
    n->next = CFX_NODE_ROOT_SEQ;
    /* the last node is nearly always the one this path appended last */
    cfx_node *ln = g->tail_hint;
    if (IR_UNLIKELY(ln->seq != last))
        ln = ir_node_at(g, last);
    ln->next = seq;
    g->tail_hint = n;
    g->root.prev = seq;
    g->n_uses = id;
    g->ucur = u;
    g->nslot = n + 1;
    g->n_created = seq + 1;
    g->len++;
    return n;
undo:
    return call_target_undo(g, v, a, id);
general_info:
    /* the target from info, loaded again: not held through the checks */
    IR_RELOAD_BARRIER();
    return call_target_general(g, cfx_target_from_info(info), args, n_args);
general:
    return call_target_general(g, target, args, n_args);
}

cfx_node *cfx_graph_placeholder(cfx_graph *g, const char *name)
{
    return create_node_any(g, CFX_NODE_PLACEHOLDER, cfx_target_str(name), NULL, 0, NULL, 0, NULL, NULL, NULL);
}

cfx_node *cfx_graph_placeholder_default(cfx_graph *g, const char *name, cfx_value default_value)
{
    return create_node_any(g, CFX_NODE_PLACEHOLDER, cfx_target_str(name), &default_value, 1, NULL, 0,
                       NULL, NULL, NULL);
}

cfx_node *cfx_graph_get_attr(cfx_graph *g, const char *qualified_name)
{
    return create_node_any(g, CFX_NODE_GET_ATTR, cfx_target_str(qualified_name), NULL, 0, NULL, 0,
                       NULL, NULL, NULL);
}

cfx_node *cfx_graph_call_op(cfx_graph *g, const cfx_op *op, const cfx_value *args, uint32_t n_args,
                            const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    if (!n_kwargs)
        return cfx_graph_call_target(g, cfx_target_op(op), args, n_args);
    return create_node_any(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(op), args, n_args, kwargs, n_kwargs,
                       NULL, NULL, NULL);
}

cfx_node *cfx_graph_call_fn(cfx_graph *g, const cfx_builtin_fn *fn, const cfx_value *args,
                            uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    if (!n_kwargs)
        return cfx_graph_call_target(g, cfx_target_fn(fn), args, n_args);
    return create_node_any(g, CFX_NODE_CALL_FUNCTION, cfx_target_fn(fn), args, n_args, kwargs, n_kwargs,
                       NULL, NULL, NULL);
}

cfx_node *cfx_graph_call_method(cfx_graph *g, const char *method, const cfx_value *args,
                                uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    return create_node_any(g, CFX_NODE_CALL_METHOD, cfx_target_str(method), args, n_args, kwargs,
                       n_kwargs, NULL, NULL, NULL);
}

cfx_node *cfx_graph_call_module(cfx_graph *g, const char *module_path, const cfx_value *args,
                                uint32_t n_args, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    return create_node_any(g, CFX_NODE_CALL_MODULE, cfx_target_str(module_path), args, n_args, kwargs,
                       n_kwargs, NULL, NULL, NULL);
}

cfx_node *cfx_graph_output(cfx_graph *g, cfx_value result)
{
    return create_node_any(g, CFX_NODE_OUTPUT, cfx_target_str("output"), &result, 1, NULL, 0, NULL,
                       NULL, NULL);
}

cfx_node *cfx_graph_node_copy(cfx_graph *g, const cfx_node *node, cfx_node_map_fn map, void *ctx)
{
    if (!g || !node)
        return NULL;
    char small[128];
    cfx_name nm = cfx_node_name(node);
    size_t len = cfx_name_length(nm);
    char *name = len < sizeof small ? small : malloc(len + 1);
    if (!name) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    *cfx_name_write(nm, name) = '\0';
    cfx_node *n = create_node_any(g, (cfx_node_op)node->op, cfx_node_target(node), node->args, node->n_args,
                              cfx_node_kwargs(node), cfx_node_num_kwargs(node), name, map, ctx);
    if (name != small)
        free(name);
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

void cfx_graph_set_insert_point(cfx_graph *g, cfx_insert_point p)
{
    g->insert = p;
    ir_fast_end_update(g);
}

/* ---- erasing ------------------------------------------------------------------------------ */

static void null_node_ref(cfx_value *slot, void *ctx)
{
    (void)ctx;
    *slot = cfx_none();
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
        free(msg);
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
        free(msg);
        return rc;
    }
    if (cfx_node_is_erased(n)) {
        char *s = cfx_node_name_string(n);
        cfx_warn("erase_node(%s) on an already erased node", s ? s : "?");
        free(s);
        return CFX_OK;
    }
    unlink_node(g, n);
    n->flags |= CFX_NODE_ERASED;
    g->len--;
    /* null out node arguments so producers drop n from their users */
    if (n->n_inputs) {
        ir_walk_node_refs(n->args, n->n_args, null_node_ref, NULL);
        for (uint32_t i = 0, k = cfx_node_num_kwargs(n); i < k; i++)
            ir_walk_node_refs(&ir_kwargs(n)[i].value, 1, null_node_ref, NULL);
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
