/* internal.h - what the ir/ sources share and nobody else may touch.
 *
 * The graph record, the target cache, and the helpers that copy and walk argument values.
 * Only files under ir/ include this header; the public surface is graph.h. */
#ifndef CFX_IR_INTERNAL_H
#define CFX_IR_INTERNAL_H

#include "ir/arena.h"
#include "ir/graph.h"

/* For the few hot-path helpers GCC would otherwise leave out of line. */
#if defined(__GNUC__)
#define IR_ALWAYS_INLINE inline __attribute__((always_inline))
#define IR_NOINLINE __attribute__((noinline))
#define IR_COLD __attribute__((noinline, cold))
/* No interprocedural changes to the function's arguments (GCC's IPA-SRA would pass loaded
 * fields instead of a pointer, keeping them live in the caller). */
#if defined(__clang__)
#define IR_NOIPA
#else
#define IR_NOIPA __attribute__((noipa))
#endif
#define IR_LIKELY(x) __builtin_expect(!!(x), 1)
#define IR_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Values read from memory before this point are read again after it: for a hot loop whose
 * callers' values would otherwise be held in callee-saved registers through it. */
#define IR_RELOAD_BARRIER() __asm__ volatile("" ::: "memory")
/* For a hot function of scattered scalar stores: GCC's SLP vectorizer packs them through
 * SSE registers, which takes more instructions than the stores (GCC only). */
#if defined(__clang__)
#define IR_NO_SLP
#else
#define IR_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))
#endif
#else
#define IR_NO_SLP
#define IR_NOIPA
#define IR_RELOAD_BARRIER() ((void)0)
#define IR_LIKELY(x) (x)
#define IR_UNLIKELY(x) (x)
#define IR_ALWAYS_INLINE inline
#define IR_NOINLINE
#define IR_COLD
#endif

/* An open-addressing set of arena records, for hash-consing (meta.c). */
typedef struct ir_hcons {
    struct ir_hcons_slot { uint32_t hash; const void *rec; } *slots;
    uint32_t cap, count;
} ir_hcons;

/* A call site as a caller last passed it, and the interned record its contents equal
 * (meta.c's site caches). */
typedef struct ir_site_memo {
    const cfx_site *src;     /* the caller's cfx_site */
    const char *file, *func; /* its strings as last seen */
    int line;
    bool fixed;              /* both strings are read-only literals (rodata.c): equal addresses
                                mean equal bytes, no need to compare them */
    const cfx_site *rec;     /* NULL: empty */
} ir_site_memo;

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
    cfx_target_info **tinfo;    /* target cache: open addressing on (kind, ptr) */
    uint32_t tinfo_cap, tinfo_count;
    cfx_target_info **targets;  /* the same records by id (cfx_node.target_id) */
    uint32_t targets_cap;
    cfx_node **scratch;         /* reusable node array (input collection) */
    uint32_t scratch_cap;
    cfx_node **hset;            /* reusable pointer set for deduplicating many inputs */
    uint32_t hset_cap;
    cfx_node **nblock;          /* node table: node seq -> nblock[seq >> IR_NODE_SHIFT][low bits];
                                   each block's records are followed by a cfx_node_block_head */
    ir_use **ublock;            /* use table, the same way (id 0 is never handed out) */
    uint32_t nblock_cap, ublock_cap;
    uint32_t n_uses;            /* next use id (from 1: id 0 means none) */
    uint32_t use_limit;         /* use ids below this have a record in an allocated block */
    ir_use *ucur;               /* the record of id n_uses when n_uses < use_limit (else
                                   unspecified): the fast path's run starts here */
    cfx_node *nslot, *nslot_end; /* the next node record (seq n_created) and the end of its block */
    cfx_node *tail_hint;        /* the node cfx_graph_call_target appended last (or the
                                   sentinel): the list's last node when its seq is
                                   root.prev (a record's seq never changes) */
    cfx_node *nslot_fast_end;   /* nslot_end when nodes go to the end of a non-empty list, else
                                   NULL: cfx_graph_call_target's three conditions in one
                                   compare (ir_fast_end_update keeps it) */
    cfx_target_info *tcache[8]; /* recent non-string targets, direct-mapped on the pointer */
    uint32_t n_ext, ext_cap;
    cfx_node **ext;             /* nodes of other graphs named by IR_EXT refs */
    bool has_foreign_uses;      /* some use links a node of another graph */
    bool names_unchecked;       /* cfx_node_set_name_unchecked was used: lint checks names */
    cfx_module_impure_fn module_impure;
    void *module_impure_ctx;
    /* meta.c: hash-consed tensor metadata (dims arrays, val records, tensor_meta records,
     * meta records without free-form entries)
     * and interned stack-trace sites, with a cache keyed by the caller's site pointer */
    ir_hcons hc_dims, hc_val, hc_tm, hc_site, hc_meta;
    ir_site_memo site_cache[16];
    /* cfx_node_set_result_meta: per call-site slot, the last result's key and meta record */
    struct ir_rmeta {
        const cfx_site *fast;       /* site.src if its strings are literals (or there is no
                                       site): the inline check compares addresses only; else
                                       a pointer no caller passes */
        uint16_t dn;                /* the key (meta.c's rmeta_same_key): dtype and rank as
                                       the tensor holds them, */
        bool rg;                    /* requires_grad, */
        uint32_t dev;               /* 0x10000 | val's device, or 0 for no val */
        int64_t storage_offset;
        const int64_t *dims;        /* interned sizes then strides; NULL for rank 0 */
        cfx_meta *meta;
        ir_site_memo site;          /* src NULL: no site */
        char pad[48];               /* 128 bytes: the slot's offset is a shift */
    } rmeta[16];
    /* recent moves between shared meta records: (from, slot, slot value) -> to */
    struct { const cfx_meta *from; const void *p; cfx_meta *to; } meta_step[64];
    const void *last_dims, *last_val, *last_tm; /* the records interned last */
};

_Static_assert(sizeof(struct ir_rmeta) == 128, "a result cache slot is 128 bytes");
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
/* The next node record (seq g->n_created) when g->nslot is at the end of its block:
 * zero-filled; NULL + error on OOM. Taken by ir_node_commit once the node is made. */
cfx_node *ir_node_slot_slow(cfx_graph *g);
static inline void ir_node_commit(cfx_graph *g)
{
    g->nslot++;
    g->n_created++;
}

/* Whether nodes go to the end of the list (insert is {&root, before}): the tracer's case. */
static inline bool ir_inserts_at_end(const cfx_graph *g) { return g->insert.at == &g->root && !g->insert.after; }

/* Sets nslot_fast_end after a change to the insertion point, the list's emptiness or the
 * current node block. */
static inline void ir_fast_end_update(cfx_graph *g)
{
    g->nslot_fast_end = ir_inserts_at_end(g) && g->root.prev != CFX_NODE_ROOT_SEQ ? g->nslot_end : NULL;
}

/* cfx_graph_lint that, if order is non-NULL and the graph is well formed, also returns the
 * live nodes in graph order (malloc'd, cfx_graph_num_nodes entries; NULL when empty). */
int ir_lint_collect(cfx_graph *g, cfx_node ***order);

/* Sets up meta.c's part of a new graph (zero-filled before). */
void ir_meta_init(cfx_graph *g);
/* Frees meta.c's side tables (records live in the arena). */
void ir_meta_free(cfx_graph *g);

/* The graph's record for a target (created on first use). NULL + error on OOM / bad target.
 * Operators and function descriptors are named by pointer, so a tracer's few recent ones are
 * found by one compare in tcache; strings must be interned (their bytes may have changed)
 * and always take the hash table. */
cfx_target_info *ir_target_info_slow(cfx_graph *g, cfx_target t);
static inline uint32_t ir_tcache_slot(const void *ptr)
{
    return (uint32_t)(((uint64_t)(uintptr_t)ptr * 0x9E3779B97F4A7C15ull) >> 61);
}
/* What an unused tcache slot holds: ptr NULL, kind NONE, never a target's record. */
extern cfx_target_info ir_tcache_empty;
static inline cfx_target_info *ir_target_info(cfx_graph *g, cfx_target t)
{
    /* not kind NONE: {NONE, NULL} would find ir_tcache_empty; the slow path refuses it */
    if (t.kind > CFX_TARGET_STRING) {
        cfx_target_info *c = g->tcache[ir_tcache_slot(t.u.op)];
        if (c->ptr == (const void *)t.u.op && c->kind == t.kind)
            return c;
    }
    return ir_target_info_slow(g, t);
}
/* Frees the target cache's side tables (records live in the arena). */
void ir_target_cache_free(cfx_graph *g);

/* Deep-copies values already memcpy'd into arena memory: strings and nested lists/tuples
 * get arena copies; node references go through map (if non-NULL). Iterative. Returns CFX_OK,
 * CFX_ERR_NOMEM (error set), or CFX_ERR without a message when a node reference is NULL. */
int ir_fixup_values(cfx_graph *g, cfx_value *vals, uint32_t n, cfx_node_map_fn map, void *ctx);
/* A node's argument block: n_args values then n_kwargs kwargs in one arena allocation (not
 * initialized), after a 16-byte prefix holding n_kwargs when that is CFX_NODE_KWARGS_OUT or
 * more; NULL when both are 0, when a count is over its limit or on OOM (error set: check
 * *rc). */
cfx_value *ir_args_block(cfx_graph *g, uint32_t n_args, uint32_t n_kwargs, int *rc);
/* The arena copy of args and kwargs as one argument block (values deep-copied, kwarg names
 * interned); *out is NULL when both are empty. */
int ir_copy_args_kwargs(cfx_graph *g, const cfx_value *args, uint32_t n_args, const cfx_kwarg *kwargs,
                        uint32_t n_kwargs, cfx_node_map_fn map, void *ctx, cfx_value **out);
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

/* Calls fn on every node reference in args then kwargs, in order (duplicates included),
 * nested lists and tuples walked with an explicit stack. fn may rewrite the slot. Returns
 * false on OOM of the walk stack. */
typedef void (*ir_value_fn)(cfx_value *slot, void *ctx);
bool ir_walk_node_refs(cfx_value *vals, uint32_t n, ir_value_fn fn, void *ctx);

/* Reserves count consecutive use ids (records not initialized); 0 on OOM, error set. A run
 * of at most a block's records lies in one block, so ir_use_at(g, first) + i addresses its
 * records (the ids skipped to get there are never used). */
uint32_t ir_use_alloc(cfx_graph *g, uint32_t count);
static inline uint32_t ir_use_reserve(cfx_graph *g, uint32_t count)
{
    /* n_uses is in the last block taken (or at its end): a run that ends by use_limit fits */
    uint32_t first = g->n_uses;
    if ((uint64_t)first + count <= g->use_limit) {
        g->n_uses = first + count;
        g->ucur += count;
        return first;
    }
    return ir_use_alloc(g, count);
}

/* Records that the node seq uses p through the fresh record u (id), appending it to p's users
 * (the head's prev is the tail), unless the tail is already a record of this run (ids from
 * first on): p was an earlier argument of the same node. Returns whether u was taken. */
static inline bool ir_use_link(cfx_graph *g, cfx_node *p, ir_use *u, uint32_t id, uint32_t first, uint32_t seq)
{
    uint32_t head = p->users_head;
    if (!head) {
        p->users_head = id;
        u->prev = id;
    } else {
        ir_use *h = ir_use_at(g, head);
        uint32_t tail = h->prev;
        if (tail >= first)
            return false;
        ir_use_at(g, tail)->next = id;
        u->prev = tail;
        h->prev = id;
    }
    u->producer = p->seq;
    u->user = seq; /* next: 0 in a fresh record (arena.h) */
    p->n_users++;
    return true;
}

/* Recomputes n's input nodes from its args and kwargs: n leaves all old producers' users and
 * is appended to each new producer's users (FX's _update_args_kwargs). */
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
/* python_code's statement form of a builtin function (pycode.c). */
uint8_t ir_pycode_form(const cfx_builtin_fn *fn);

/* Node rendered into a message: str(node) = its name. */
void ir_print_name(const cfx_node *n, cfx_buf *b);

#endif
