/* args_flat.h - create_node's fast path for flat arguments.
 *
 * What a tracer passes almost always: a few values that are node references and scalars, no
 * strings, lists, tuples or kwargs, every node in the graph being built. For such args the
 * general path (args.c: copy, fix up, walk with a stack, collect into scratch, link use by
 * use) does nothing that one pass cannot: the inputs are found by a linear dedupe into a
 * local array, the values are copied as they are, and the use records are one contiguous
 * run linked straight onto the producers' users lists. The result is the same records, in
 * the same order, with the same ids as ir_copy_args_kwargs + ir_rebuild_inputs give.
 *
 * Inline in create_node (graph.c, its only user): it is the whole hot path of tracing a node,
 * and a call with its register saves costs a tenth of it. */
#ifndef CFX_IR_ARGS_FLAT_H
#define CFX_IR_ARGS_FLAT_H

#include "ir/internal.h"

enum { IR_FLAT_MAX = 16, IR_NOT_FLAT = 1 };

/* Value kinds copied as they are (no arena copy, no node reference). */
#define IR_FLAT_SCALARS                                                                         \
    (1u << CFX_V_NONE | 1u << CFX_V_BOOL | 1u << CFX_V_INT | 1u << CFX_V_DOUBLE |              \
     1u << CFX_V_TENSOR | 1u << CFX_V_DTYPE | 1u << CFX_V_DEVICE | 1u << CFX_V_MEMORY_FORMAT | \
     1u << CFX_V_LAYOUT | 1u << CFX_V_OBJECT)
_Static_assert(CFX_V_KIND_COUNT <= 32, "value kinds must fit IR_FLAT_SCALARS");

/* Sets args, n_args, n_kwargs (0), inputs and n_inputs of a fresh node n (no users of its
 * inputs yet) when its args are flat: at most IR_FLAT_MAX values, each a scalar kind or a
 * non-NULL node of n's graph. Returns CFX_OK, a negative status (OOM, error set; n has no
 * inputs), or IR_NOT_FLAT with n untouched when a precondition fails: the caller then takes
 * the general path. */
static IR_ALWAYS_INLINE int ir_set_flat_args(cfx_node *n, const cfx_value *args, uint32_t n_args)
{
    if (n_args > IR_FLAT_MAX || (n_args && !args))
        return IR_NOT_FLAT;
    cfx_graph *g = n->graph;
    /* inputs: distinct node references in first-seen order, as args.c's collect() finds them */
    cfx_node *ins[IR_FLAT_MAX];
    uint32_t count = 0;
    for (uint32_t i = 0; i < n_args; i++) {
        uint32_t k = args[i].kind;
        if (k == CFX_V_NODE) {
            cfx_node *p = args[i].u.node;
            if (!p || p->graph != g)
                return IR_NOT_FLAT;
            uint32_t j = 0;
            while (j < count && ins[j] != p)
                j++;
            if (j == count)
                ins[count++] = p;
        } else if (k >= 32 || !(IR_FLAT_SCALARS >> k & 1)) {
            return IR_NOT_FLAT;
        }
    }
    cfx_value *a = NULL;
    if (n_args) {
        a = cfx_arena_alloc(&g->arena, (size_t)n_args * sizeof *a);
        if (!a)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; i < n_args; i++)
            a[i] = args[i];
    }
    n->args = a;
    n->n_args = n_args;
    n->n_kwargs = 0;
    uint32_t first = 0;
    if (count && !(first = ir_use_reserve(g, count))) {
        n->n_inputs = 0;
        return CFX_ERR_NOMEM;
    }
    n->inputs = first;
    n->n_inputs = count;
    if (!count)
        return CFX_OK;
    /* append each record to its producer's users (the head's prev is the tail); the run is
     * in one block (ir_use_reserve), walked by pointer */
    ir_use *u = ir_use_at(g, first);
    for (uint32_t i = 0; i < count; i++, u++) {
        uint32_t id = first + i;
        cfx_node *p = ins[i];
        u->user = n->seq;
        u->producer = p->seq;
        u->next = 0;
        uint32_t head = p->users_head;
        if (!head) {
            u->prev = id;
            p->users_head = id;
        } else {
            ir_use *h = ir_use_at(g, head);
            ir_use_at(g, h->prev)->next = id;
            u->prev = h->prev;
            h->prev = id;
        }
        p->n_users++;
    }
    return CFX_OK;
}

#endif
