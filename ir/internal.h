/* internal.h - what the ir/ sources share and nobody else may touch.
 *
 * The graph record, the node list's links, the target table, and the helpers that copy and
 * walk argument values and keep def-use links.
 * Only files under ir/ include this header; the public surface is graph.h. */
#ifndef CFX_IR_INTERNAL_H
#define CFX_IR_INTERNAL_H

#include <string.h>

#include "ir/arena.h"
#include "ir/graph.h"

/* An open-addressing set of arena records (meta_intern.c). */
typedef struct ir_hcons {
    struct ir_hcons_slot { uint32_t hash; const void *rec; } *slots;
    uint32_t cap, count;
    const void *last; /* the record the last lookup found or made: asked first */
} ir_hcons;

/* One use record: `user` has `producer` among its inputs. Both are node refs (below); prev
 * and next are use ids (0 = none) linking the producer's users list, whose head's prev is
 * the tail (O(1) append without a tail field in every node).
 *
 * A use across graphs (user in A, producer in B) takes two records: A's, in the user's run,
 * has producer = IR_EXT|k (A's ext[k] is the producer) and next = the id of B's record, which
 * sits in the producer's list with user = IR_EXT|j (B's ext[j] is the user). */
typedef struct ir_use {
    uint32_t producer, user, prev, next;
} ir_use;

/* A node ref: the node's seq in the same graph, or IR_EXT|index into that graph's ext[]. */
#define IR_EXT 0x80000000u

enum {
    IR_NODE_SHIFT = CFX_NODE_BLOCK_SHIFT, /* 128 nodes per node-table block */
    IR_USE_SHIFT = 9,   /* 512 records per use-table block */
};

struct cfx_graph {
    cfx_node root;              /* sentinel of the circular node list */
    cfx_node_block_head root_head; /* names this graph for the sentinel (cfx_node_graph) */
    cfx_arena arena;
    cfx_names *names;           /* node names + interned strings */
    cfx_insert_point insert;    /* where create_node puts nodes */
    uint32_t len;               /* live nodes */
    uint32_t n_created;         /* next seq */
    cfx_target_info **tinfo;    /* target table: open addressing on (kind, ptr) */
    uint32_t tinfo_cap, tinfo_count;
    cfx_target_info **targets;  /* the same records by id (cfx_node.target_id) */
    uint32_t targets_cap;
    cfx_node **nblock;          /* node table: node seq -> nblock[seq >> IR_NODE_SHIFT][low bits];
                                   each block's records are followed by a cfx_node_block_head */
    ir_use **ublock;            /* use table, the same way (id 0 is never handed out) */
    uint32_t nblock_cap, ublock_cap;
    uint32_t n_uses;            /* next use id (from 1: id 0 means none) */
    uint32_t n_ext, ext_cap;
    cfx_node **ext;             /* nodes of other graphs named by IR_EXT refs */
    uint32_t version;           /* changes with the node list, any node's args, users or
                                   stack_trace (ir_graph_changed): what a compiled run keeps */
    bool has_foreign_uses;      /* some use links a node of another graph */
    bool names_unchecked;       /* cfx_node_set_name_unchecked was used: lint checks names */
    cfx_module_impure_fn module_impure;
    void *module_impure_ctx;
    ir_hcons hc_meta;           /* meta_intern.c: the shared meta records */
};

_Static_assert(offsetof(struct cfx_graph, root_head) == offsetof(struct cfx_graph, root) + sizeof(cfx_node),
               "the sentinel's block head is right after it");
_Static_assert((CFX_NODE_ROOT_SEQ & (CFX_NODE_BLOCK - 1)) == CFX_NODE_BLOCK - 1,
               "the sentinel is last in its block");

static inline cfx_node *ir_node_at(const cfx_graph *g, uint32_t seq)
{
    return &g->nblock[seq >> IR_NODE_SHIFT][seq & ((1u << IR_NODE_SHIFT) - 1)];
}
static inline ir_use *ir_use_at(const cfx_graph *g, uint32_t id)
{
    return &g->ublock[id >> IR_USE_SHIFT][id & ((1u << IR_USE_SHIFT) - 1)];
}
/* The node a graph-order link names: a node's seq or the sentinel's. */
static inline cfx_node *ir_link(cfx_graph *g, uint32_t seq)
{
    return seq == CFX_NODE_ROOT_SEQ ? &g->root : ir_node_at(g, seq);
}
/* cfx_node_next / cfx_node_prev within g (lint walks g's list even when a corrupt node
 * claims another graph). */
static inline cfx_node *ir_next_in(cfx_graph *g, const cfx_node *n)
{
    uint32_t s = n->next;
    while (s != CFX_NODE_ROOT_SEQ) {
        cfx_node *p = ir_node_at(g, s);
        if (!(p->flags & CFX_NODE_ERASED))
            return p;
        s = p->next;
    }
    return NULL;
}
static inline cfx_node *ir_prev_in(cfx_graph *g, const cfx_node *n)
{
    uint32_t s = n->prev;
    while (s != CFX_NODE_ROOT_SEQ) {
        cfx_node *p = ir_node_at(g, s);
        if (!(p->flags & CFX_NODE_ERASED))
            return p;
        s = p->prev;
    }
    return NULL;
}
/* A node's target record. */
static inline const cfx_target_info *ir_target_of(const cfx_node *n)
{
    return cfx_node_graph(n)->targets[n->target_id];
}
static inline cfx_node *ir_ref(const cfx_graph *g, uint32_t ref)
{
    return ref & IR_EXT ? g->ext[ref & ~IR_EXT] : ir_node_at(g, ref);
}
/* cfx_node_input, inlined for the ir/ loops. */
static inline cfx_node *ir_input(const cfx_node *n, uint32_t i)
{
    cfx_graph *g = cfx_node_graph(n);
    return ir_ref(g, ir_use_at(g, n->inputs + i)->producer);
}
/* The graph's nodes, their order, args, users or sites changed (an interpreter's program is stale). */
static inline void ir_graph_changed(cfx_graph *g) { g->version++; }
/* Splices x (not in the list) in at insertion point p: before p.at, or after it. */
static inline void ir_list_insert(cfx_graph *g, cfx_insert_point p, cfx_node *x)
{
    ir_graph_changed(g);
    cfx_node *at = p.after ? ir_link(g, p.at->next) : p.at;
    uint32_t prev = at->prev;
    ir_link(g, prev)->next = x->seq;
    x->prev = prev;
    x->next = at->seq;
    at->prev = x->seq;
}
/* Takes x out of the list; x keeps its own links (an iterator standing on it moves on). */
static inline void ir_list_unlink(cfx_graph *g, cfx_node *x)
{
    ir_graph_changed(g);
    ir_link(g, x->prev)->next = x->next;
    ir_link(g, x->next)->prev = x->prev;
}

/* cfx_graph_lint that, if order is non-NULL and the graph is well formed, also returns the
 * live nodes in graph order (malloc'd, cfx_graph_num_nodes entries; NULL when empty). */
int ir_lint_collect(cfx_graph *g, cfx_node ***order);

/* Copies n sizes then n strides to d, for meta's dims (a 0-dim tensor's may be NULL). */
static inline void ir_put_dims(int64_t *d, const int64_t *sizes, const int64_t *strides, int32_t n)
{
    if (n) {
        memcpy(d, sizes, (size_t)n * sizeof *d);
        memcpy(d + n, strides, (size_t)n * sizeof *d);
    }
}

/* The graph's shared meta records (meta_intern.c). A key names the slots of a record: k's
 * parts may be the caller's structs, dims and site (all copied into a new record); val is a
 * tensor val; when tm_derived_format is set, tm's memory_format is ignored and the record
 * computes it from the dims. */
typedef struct ir_meta_key {
    const cfx_site *site;      /* or NULL */
    const cfx_meta_val *val;   /* a tensor val, or NULL */
    const cfx_tensor_meta *tm; /* or NULL */
    bool tm_derived_format;
    /* nonzero: val is of a fake tensor whose metadata record (dispatch/fake_meta.c) has this
     * id, so its dims and storage offset are those of any record keyed by the same id */
    uint64_t val_id;
} ir_meta_key;
/* The meta record a node whose record is m (NULL for none) has after change c, where each
 * non-NULL part of c replaces its slot (NULL + error on OOM): m itself, changed in place, if it
 * is private (ir_meta_set_private, meta.c); else the one shared record with m's slots so
 * changed, found in the table or made on first use. */
cfx_meta *ir_meta_change(cfx_graph *g, cfx_meta *m, const ir_meta_key *c);
cfx_meta *ir_meta_set_private(cfx_graph *g, cfx_meta *m, const ir_meta_key *c);
/* Frees the record table (records live in the arena). */
void ir_meta_free(cfx_graph *g);

/* The target table's hash of (kind, ptr). */
static inline uint32_t ir_target_hash(uint32_t kind, const void *ptr)
{
    uint64_t x = ((uint64_t)(uintptr_t)ptr ^ kind) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32);
}
/* The graph's record of target (kind, ptr) (ptr: the op, the fn, or the interned string), or
 * NULL if it has none yet: the table's probe, inline for create_node. */
static inline cfx_target_info *ir_target_find(const cfx_graph *g, uint32_t kind, const void *ptr)
{
    if (!g->tinfo_cap)
        return NULL;
    uint32_t mask = g->tinfo_cap - 1;
    for (uint32_t j = ir_target_hash(kind, ptr) & mask; g->tinfo[j]; j = (j + 1) & mask)
        if (g->tinfo[j]->ptr == ptr && g->tinfo[j]->kind == kind)
            return g->tinfo[j];
    return NULL;
}
/* The graph's record for a target, made on first use (per-target facts computed once: the
 * printed form, the naming candidate, the side-effect key). NULL + error on OOM / bad target.
 * An operator or function target a graph has met is found here; a string target is interned
 * first, and a new target gets its record, in ir_target_info_slow (target.c). */
cfx_target_info *ir_target_info_slow(cfx_graph *g, cfx_target t);
static inline cfx_target_info *ir_target_info(cfx_graph *g, cfx_target t)
{
    cfx_target_info *r = t.kind != CFX_TARGET_STRING ? ir_target_find(g, t.kind, t.u.op) : NULL;
    return r ? r : ir_target_info_slow(g, t);
}
/* Frees the target table (records live in the arena). */
void ir_target_table_free(cfx_graph *g);

/* Deep-copies values already copied into arena memory: strings and nested lists/tuples get
 * arena copies; node references go through map (if non-NULL) and are counted in *refs (if
 * non-NULL). Iterative. Returns CFX_OK, CFX_ERR_NOMEM (error set), or CFX_ERR without a
 * message when a node reference is NULL. */
int ir_fixup_values(cfx_graph *g, cfx_value *vals, uint32_t n, cfx_node_map_fn map, void *ctx, uint32_t *refs);
/* A node's argument block: n_args values then n_kwargs kwargs in one arena allocation (not
 * initialized), after a 16-byte prefix holding n_kwargs when that is CFX_NODE_KWARGS_OUT or
 * more; NULL when both are 0, when a count is over its limit or on OOM (error set: check
 * *rc). */
cfx_value *ir_args_block(cfx_graph *g, uint32_t n_args, uint32_t n_kwargs, int *rc);
/* node_copy's arg_transform: a node reference's replacement, fn(node, ctx). */
typedef struct ir_arg_map {
    cfx_node_map_fn fn;
    void *ctx;
} ir_arg_map;
/* Sets n's args and kwargs (FX's __update_args_kwargs): copies them into a new argument block
 * of g, n's graph (values deep-copied, node references passed through map if non-NULL, kwarg
 * names interned) and relinks n's inputs. On error n may be left with the new args and part
 * of its inputs. */
int ir_node_set_args(cfx_graph *g, cfx_node *n, const cfx_value *args, uint32_t n_args,
                     const cfx_kwarg *kwargs, uint32_t n_kwargs, const ir_arg_map *map);
/* A node's kwargs, writable (ir/ only). */
static inline cfx_kwarg *ir_kwargs(const cfx_node *n) { return (cfx_kwarg *)cfx_node_kwargs(n); }
/* Sets n's args and its counts. args must come from ir_args_block(n_args, n_kwargs) (which
 * checked the counts and wrote a count that does not fit the flags in front of the block),
 * or be NULL when both are 0. */
static inline void ir_set_args(cfx_node *n, cfx_value *args, uint32_t n_args, uint32_t n_kwargs)
{
    uint32_t k = n_kwargs < CFX_NODE_KWARGS_OUT ? n_kwargs : CFX_NODE_KWARGS_OUT;
    n->args = args;
    n->n_args = (uint16_t)n_args;
    n->flags = (uint8_t)((n->flags & CFX_NODE_ERASED) | k << CFX_NODE_KWARGS_SHIFT);
}

/* Walks over node references: fn is called on every node reference slot of the values, args
 * then kwargs, nested lists and tuples depth first (FX's map_arg order), duplicates
 * included; it may rewrite the slot, and stops the walk by returning false. The walks return
 * false when fn stopped them or when a nested walk ran out of memory (then with the error
 * set). The top level is a loop here, inline, so that a node's few flat args are walked
 * without a call; nested lists and tuples go to ir_walk_nested (args.c), whose explicit stack
 * bounds nothing by the nesting depth. */
typedef bool (*ir_ref_fn)(cfx_value *slot, void *ctx);
bool ir_walk_nested(cfx_value *container, ir_ref_fn fn, void *ctx);
static inline bool ir_walk_values(cfx_value *vals, uint32_t n, size_t stride, ir_ref_fn fn, void *ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        cfx_value *v = (cfx_value *)(void *)((char *)vals + i * stride);
        if (v->kind == CFX_V_NODE) {
            if (!fn(v, ctx))
                return false;
        } else if (cfx_value_is_container(*v) && v->len && !ir_walk_nested(v, fn, ctx)) {
            return false;
        }
    }
    return true;
}
static inline bool ir_walk_refs(cfx_node *n, ir_ref_fn fn, void *ctx)
{
    uint32_t nk = cfx_node_num_kwargs(n);
    return ir_walk_values(n->args, n->n_args, sizeof(cfx_value), fn, ctx) &&
           (!nk || ir_walk_values(&ir_kwargs(n)->value, nk, sizeof(cfx_kwarg), fn, ctx));
}

/* Reserves count consecutive use ids (their records not initialized); 0 on OOM, error set.
 * A run of at most a block's records lies in one block, so ir_use_at(g, first) + i addresses
 * its records (the ids skipped to get there are never used). Most runs are a node's few
 * inputs and fit in the current block, whose records exist once any block does (the block of
 * n_uses - 1 was allocated with it): those are a bump of n_uses, here; a run that needs a new
 * block (or the graph's first) goes to ir_use_alloc_run (uses.c). */
uint32_t ir_use_alloc_run(cfx_graph *g, uint32_t count);
static inline uint32_t ir_use_alloc(cfx_graph *g, uint32_t count)
{
    uint32_t first = g->n_uses, off = first & ((1u << IR_USE_SHIFT) - 1);
    if (g->ublock_cap && off && count < (1u << IR_USE_SHIFT) - off) {
        g->n_uses = first + count;
        return first;
    }
    return ir_use_alloc_run(g, count);
}

/* uses.c. Recomputes n's input nodes (n of g) from its args and kwargs: n leaves all old
 * producers' users and is appended to each new producer's users (FX's _update_args_kwargs).
 * ir_link_inputs does it knowing that its args hold `refs` node references (duplicates
 * included); ir_rebuild_inputs counts them first. */
int ir_link_inputs(cfx_graph *g, cfx_node *n, uint32_t refs);
int ir_rebuild_inputs(cfx_node *n);
/* insert_arg: adds the producers of *v that are not inputs yet, after the existing ones. */
int ir_add_inputs_from(cfx_node *n, cfx_value *v);
/* Drops all of n's uses. */
void ir_unlink_inputs(cfx_node *n);

/* Printing (print.c). A name printer replaces node names (python_code's own name space). */
typedef struct ir_name_printer {
    void (*fn)(const cfx_node *n, cfx_buf *b, void *ctx);
    void *ctx;
} ir_name_printer;
/* vals[0..n) as a tuple or list in the given style (containers nested iteratively). */
void ir_print_values(const cfx_value *vals, uint32_t n, bool as_tuple, cfx_arg_style style,
                     const ir_name_printer *np, cfx_buf *b);
void ir_print_value(const cfx_value *v, cfx_arg_style style, const ir_name_printer *np, cfx_buf *b);
/* v as an item of a container (str() of a container reprs its items: strings quoted). */
void ir_print_nested_value(const cfx_value *v, cfx_arg_style style, const ir_name_printer *np, cfx_buf *b);
/* python_code's statement form of a builtin function (pycode.c). */
uint8_t ir_pycode_form(const cfx_builtin_fn *fn);

/* Node rendered into a message: str(node) = its name. */
void ir_print_name(const cfx_node *n, cfx_buf *b);

#endif
