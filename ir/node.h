/* node.h - a graph node: one FX Node.
 *
 * A node is a call site (or a function input, an attribute fetch, the return) in a graph:
 * op kind, target, positional args, ordered kwargs, a unique name, meta, and the def-use
 * links FX keeps in `_input_nodes` and `users`. Args are cfx_values that may reference other
 * nodes (CFX_V_NODE), nested in lists and tuples; the graph deep-copies them into its arena.
 *
 * Def-use links are use records, one per (user, distinct input) pair, owned by the user in a
 * run of consecutive records (its `_input_nodes`, in args-then-kwargs order) and threaded into
 * the producer's doubly linked `users` list (insertion ordered). Records and nodes are named by
 * 32-bit ids into the graph's tables (internal.h), so a use costs 16 bytes, not 32. Adding or
 * dropping a use is O(1), so a node with a million users costs no more per use than one with
 * two. Exactly as in FX,
 * changing a node's args or kwargs removes the node from all its old producers' users and
 * re-appends it to each new producer's users.
 *
 * The record is public so accessors inline; mutate it only through the functions here and in
 * graph.h (the one exception is what lint exists to catch). Node memory belongs to the graph:
 * an erased node is a tombstone that stays readable until the graph is freed. */
#ifndef CFX_IR_NODE_H
#define CFX_IR_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/names.h"
#include "ir/target.h"

typedef struct cfx_graph cfx_graph;
typedef struct cfx_node cfx_node;
typedef struct cfx_meta cfx_meta;

/* FX's six opcodes (and the sentinel). Values index cfx_node_op_name(). */
typedef enum cfx_node_op {
    CFX_NODE_PLACEHOLDER = 0,
    CFX_NODE_GET_ATTR,
    CFX_NODE_CALL_FUNCTION,
    CFX_NODE_CALL_METHOD,
    CFX_NODE_CALL_MODULE,
    CFX_NODE_OUTPUT,
    CFX_NODE_OP_COUNT,
    CFX_NODE_ROOT = 255, /* the graph's list sentinel, never yielded */
} cfx_node_op;

/* "placeholder", "get_attr", "call_function", "call_method", "call_module", "output";
 * "root" for the sentinel, NULL for anything else. */
CFX_API const char *cfx_node_op_name(int op);
/* Inverse of cfx_node_op_name for the six opcodes; -1 if unknown. */
CFX_API int cfx_node_op_from_name(const char *s);

typedef struct cfx_kwarg {
    const char *name;
    cfx_value value;
} cfx_kwarg;

/* A walk over a node's users, in insertion order:
 *   cfx_user_iter it;
 *   for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) ...
 * The iterator has already stepped past the user it returned, so that user may drop its use
 * of n during the walk. */
typedef struct cfx_user_iter {
    const cfx_graph *graph;
    uint32_t use;
} cfx_user_iter;

/* Nodes live in arrays of the graph's node table (no per-record 16-byte rounding), so
 * every byte here is paid a million times in a million-node graph: the record is one 64-byte
 * cache line. The graph-order links and the target are 32-bit ids resolved through the graph
 * (cfx_node_next / cfx_node_prev, cfx_node_target_info); the graph itself is not stored but
 * found from the block the record sits in (cfx_node_graph); n_args is 16 bits (at most
 * CFX_NODE_MAX_ARGS) and n_kwargs, nearly always small, shares a byte with the flags. */
struct cfx_node {
    cfx_value *args;                /* n_args values then n_kwargs cfx_kwargs (names interned),
                                       one arena block: a node pays one pointer for both */
    const char *name_base;          /* name = cfx_name{name_base, name_suffix} */
    cfx_meta *meta;                 /* NULL until some meta is set; may be shared */
    uint32_t prev, next;            /* graph order: neighbours' seqs (circular through the
                                       graph's sentinel, whose seq is CFX_NODE_ROOT_SEQ) */
    uint32_t target_id;             /* index of the graph's target record */
    int32_t name_suffix;
    uint32_t n_users;
    uint32_t users_head;            /* first use id of the users list, 0 = none */
    uint32_t n_inputs;
    uint32_t inputs;                /* use id of the first of n_inputs consecutive records */
    uint32_t seq;                   /* creation index, dense and unique in the graph: its id */
    uint16_t n_args;
    uint8_t op;                     /* cfx_node_op */
    uint8_t flags;                  /* CFX_NODE_ERASED, and n_kwargs in the bits above it:
                                       CFX_NODE_KWARGS_OUT means the count is in the 4 bytes
                                       before args (cfx_node_num_kwargs) */
};

_Static_assert(sizeof(struct cfx_node) == 64, "cfx_node is one 64-byte cache line");

enum {
    CFX_NODE_ERASED = 1 << 0,
    CFX_NODE_KWARGS_SHIFT = 1,
    CFX_NODE_KWARGS_OUT = 0x7f, /* flags >> CFX_NODE_KWARGS_SHIFT: the count is out of line */
};

enum {
    CFX_NODE_MAX_ARGS = UINT16_MAX,
    CFX_NODE_MAX_KWARGS = UINT16_MAX,
};

/* Node records sit in blocks of CFX_NODE_BLOCK, in seq order, each block followed by a
 * header that names the graph: a node's position in its block is the low bits of its seq, so
 * the header is found from the node alone (cfx_node_graph). The graph's sentinel has a header
 * of its own right after it and a seq whose low bits say "last in its block". */
enum { CFX_NODE_BLOCK_SHIFT = 7, CFX_NODE_BLOCK = 1 << CFX_NODE_BLOCK_SHIFT };
typedef struct cfx_node_block_head {
    cfx_graph *graph;
} cfx_node_block_head;
#define CFX_NODE_ROOT_SEQ UINT32_MAX

/* ---- reading ---------------------------------------------------------------------------- */

static inline cfx_node_op cfx_node_opcode(const cfx_node *n) { return (cfx_node_op)n->op; }
static inline cfx_graph *cfx_node_graph(const cfx_node *n)
{
    /* the records after n's in its block (seq's low bits, inverted), then the header */
    const cfx_node *last = n + (~n->seq & (CFX_NODE_BLOCK - 1));
    return ((const cfx_node_block_head *)(const void *)(last + 1))->graph;
}
static inline cfx_name cfx_node_name(const cfx_node *n) { cfx_name r = {n->name_base, n->name_suffix}; return r; }
static inline bool cfx_node_is_erased(const cfx_node *n) { return (n->flags & CFX_NODE_ERASED) != 0; }
static inline uint32_t cfx_node_num_args(const cfx_node *n) { return n->n_args; }
static inline const cfx_value *cfx_node_args(const cfx_node *n) { return n->args; }
static inline cfx_value cfx_node_arg(const cfx_node *n, uint32_t i) { return n->args[i]; }
static inline uint32_t cfx_node_num_kwargs(const cfx_node *n)
{
    uint32_t k = (uint32_t)n->flags >> CFX_NODE_KWARGS_SHIFT;
    return k != CFX_NODE_KWARGS_OUT ? k : ((const uint32_t *)(const void *)n->args)[-1];
}
static inline const cfx_kwarg *cfx_node_kwargs(const cfx_node *n)
{
    return n->flags >> CFX_NODE_KWARGS_SHIFT ? (const cfx_kwarg *)(const void *)(n->args + n->n_args) : NULL;
}
static inline uint32_t cfx_node_num_users(const cfx_node *n) { return n->n_users; }
/* Users in insertion order (see cfx_user_iter); NULL after the last. */
CFX_API cfx_node *cfx_node_first_user(const cfx_node *n, cfx_user_iter *it);
CFX_API cfx_node *cfx_node_next_user(cfx_user_iter *it);
/* all_input_nodes: distinct node references of args then kwargs, first occurrence order. */
static inline uint32_t cfx_node_num_inputs(const cfx_node *n) { return n->n_inputs; }
CFX_API cfx_node *cfx_node_input(const cfx_node *n, uint32_t i);
/* The graph's record of the node's target (out of line: the record table is the graph's). */
CFX_API const cfx_target_info *cfx_node_target_info(const cfx_node *n);
CFX_API cfx_target cfx_node_target(const cfx_node *n);
/* The operator of a call_function node with an operator target, else NULL. */
CFX_API const cfx_op *cfx_node_operator(const cfx_node *n);
/* The string target of placeholder / get_attr / call_method / call_module / output, else NULL. */
CFX_API const char *cfx_node_target_str(const cfx_node *n);
/* The value of kwarg `name`, or NULL. */
CFX_API const cfx_value *cfx_node_kwarg(const cfx_node *n, const char *name);

/* The next / previous live node in graph order, skipping erased ones; NULL at the end. Safe
 * while the graph is being mutated: the current node may be erased (it keeps its links). */
CFX_API cfx_node *cfx_node_next(const cfx_node *n);
CFX_API cfx_node *cfx_node_prev(const cfx_node *n);

/* Node names: `add_1`. cfx_node_print_name is installed as cfx_value's node printer. */
CFX_API void cfx_node_print_name(const cfx_node *n, cfx_buf *b);
/* malloc'd name. */
CFX_API char *cfx_node_name_string(const cfx_node *n);
/* True if the node's rendered name equals s. */
CFX_API bool cfx_node_name_is(const cfx_node *n, const char *s);

/* ---- changing args (FX: node.args = ..., node.kwargs = ...) ------------------------------ */

/* All return CFX_OK or a negative status (error recorded). Values are deep-copied. A NULL
 * node reference in the values returns CFX_ERR without a new message (an earlier call failed). */
CFX_API int cfx_node_set_args(cfx_node *n, const cfx_value *args, uint32_t n_args);
CFX_API int cfx_node_set_kwargs(cfx_node *n, const cfx_kwarg *kwargs, uint32_t n_kwargs);
CFX_API int cfx_node_set_args_kwargs(cfx_node *n, const cfx_value *args, uint32_t n_args,
                                     const cfx_kwarg *kwargs, uint32_t n_kwargs);
/* node.update_arg(idx, v) / update_kwarg(key, v) (adds the key at the end if absent). */
CFX_API int cfx_node_update_arg(cfx_node *n, uint32_t idx, cfx_value v);
CFX_API int cfx_node_update_kwarg(cfx_node *n, const char *key, cfx_value v);
/* node.insert_arg(idx, v): as in FX, new input nodes are appended, existing uses stay put. */
CFX_API int cfx_node_insert_arg(cfx_node *n, uint32_t idx, cfx_value v);
/* node.replace_input_with(old, new). */
CFX_API int cfx_node_replace_input_with(cfx_node *n, cfx_node *old_input, cfx_node *new_input);

/* node.replace_all_uses_with(new, delete_user_cb): rewrites every user of `old` for which
 * filter (NULL = all) returns true, in users order. Returns the number of rewritten users
 * (negative status on error); if changed is non-NULL it receives a malloc'd array of them
 * (free() it; NULL when none). */
typedef bool (*cfx_node_filter_fn)(cfx_node *user, void *ctx);
CFX_API int64_t cfx_node_replace_all_uses_with(cfx_node *old, cfx_node *replacement, cfx_node_filter_fn filter,
                                               void *ctx, cfx_node ***changed);

/* ---- moving (FX: n.prepend(x), n.append(x)) ---------------------------------------------- */

/* Moves x to just before / after n (same graph). */
CFX_API int cfx_node_prepend(cfx_node *n, cfx_node *x);
CFX_API int cfx_node_append(cfx_node *n, cfx_node *x);

/* Sets the name without the name space, as assigning `node.name` in Python does: nothing
 * checks uniqueness (lint does). For tests and for passes that restore names. */
CFX_API int cfx_node_set_name_unchecked(cfx_node *n, const char *name);

#endif
