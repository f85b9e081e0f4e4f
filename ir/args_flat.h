/* args_flat.h - create_node's fast path for flat arguments.
 *
 * What a tracer passes almost always: a few values that are node references and scalars, no
 * strings, lists, tuples or kwargs, every node in the graph being built. For such args the
 * general path (args.c: copy, fix up, walk with a stack, collect into scratch, link use by
 * use) does nothing that one pass cannot: each value is copied as it is and, if it names a
 * node, that node's use record is filled and appended to its users list right away, in a run
 * reserved for at most n_args records in the current block of the use table. A node already
 * seen in this call is recognized by its users list's tail: it is one of this run's records
 * (ids from `first` on are all this call's). The result is the same records, in the same
 * order, with the same ids as ir_copy_args_kwargs + ir_rebuild_inputs give.
 *
 * Inline in create_node (graph.c, its only user). cfx_graph_call_target (graph.c), the
 * tracer's path, links flat args with the same loop written into its own body; the two must
 * hand out the same records (tests/ir/test_call_fast.c compares them). */
#ifndef CFX_IR_ARGS_FLAT_H
#define CFX_IR_ARGS_FLAT_H

#include "ir/internal.h"

enum { IR_NOT_FLAT = 1 };
_Static_assert((1u << IR_USE_SHIFT) <= CFX_NODE_MAX_ARGS, "a flat run's n_args fits the node");

/* Value kinds copied as they are (no arena copy, no node reference). */
#define IR_FLAT_SCALARS                                                                         \
    (1u << CFX_V_NONE | 1u << CFX_V_BOOL | 1u << CFX_V_INT | 1u << CFX_V_DOUBLE |              \
     1u << CFX_V_TENSOR | 1u << CFX_V_DTYPE | 1u << CFX_V_DEVICE | 1u << CFX_V_MEMORY_FORMAT | \
     1u << CFX_V_LAYOUT | 1u << CFX_V_OBJECT)
_Static_assert(CFX_V_KIND_COUNT <= 32, "value kinds must fit IR_FLAT_SCALARS");

/* Takes back what a flat pass did before it met a value it cannot take: the k records
 * linked so far (each its producer's tail), the reserved run, the argument block. */
IR_COLD void ir_flat_undo(cfx_graph *g, uint32_t first, uint32_t k, void *block, size_t size);

/* Sets args, n_args, inputs and n_inputs of a fresh node n of g (zero-filled but for what
 * create_node set; no users of its inputs yet) when its args are flat: each a scalar kind or
 * a non-NULL node of g, with a run of n_args use records free in the current block (so at
 * most a block's worth, well below CFX_NODE_MAX_ARGS).
 * Returns CFX_OK, or IR_NOT_FLAT with n's links untouched when a precondition fails: the
 * caller then takes the general path (which also handles what needs memory). */
static IR_ALWAYS_INLINE int ir_set_flat_args(cfx_graph *g, cfx_node *n, const cfx_value *args,
                                             uint32_t n_args)
{
    if (!n_args)
        return CFX_OK; /* a fresh node has no args and no inputs */
    uint32_t first = g->n_uses;
    size_t size = (size_t)n_args * sizeof(cfx_value);
    cfx_value *a;
    if (!args || (uint64_t)first + n_args > g->use_limit || !(a = cfx_arena_alloc(&g->arena, size)))
        return IR_NOT_FLAT;
    uint32_t seq = n->seq, count = 0;
    ir_use *u = ir_use_at(g, first);
    for (uint32_t i = 0; i < n_args; i++) {
        cfx_value v = args[i];
        a[i] = v;
        if (v.kind != CFX_V_NODE) {
            if (v.kind >= 32 || !(IR_FLAT_SCALARS >> v.kind & 1))
                goto not_flat;
            continue;
        }
        cfx_node *p = v.u.node;
        if (!p || cfx_node_graph(p) != g)
            goto not_flat;
        if (!ir_use_link(g, p, u, first + count, first, seq))
            continue;
        u++;
        count++;
    }
    g->n_uses = first + count;
    g->ucur += count;
    n->args = a;
    n->n_args = (uint16_t)n_args; /* n_kwargs: 0 in a fresh node */
    n->n_inputs = count;
    n->inputs = first; /* only read for the n_inputs records */
    return CFX_OK;
not_flat:
    ir_flat_undo(g, first, count, a, size);
    return IR_NOT_FLAT;
}

#endif
