/* topo_sort.c - stable topological sort (see topo_sort.h).
 *
 * Kahn's algorithm: a node's in-degree is its number of distinct input nodes; emitting a node
 * decrements each user's. The order of emission is what makes it stable: a cursor walks the
 * nodes in their current order and emits each one that is ready; one that is not waits, and is
 * emitted as soon as its last input is (a FIFO of such late nodes is drained after every
 * emission). Already sorted, every node is ready when the cursor reaches it, so the order is
 * the identity and nothing moves. Each node is emitted once and each use decremented once:
 * O(nodes + uses). Nodes left over after the walk lie on or behind a cycle; following unemitted
 * inputs from one of them must revisit a node, which gives the cycle the error names.
 *
 * Per-node state lives in arrays indexed by the node's seq (dense creation index). */
#include <stdlib.h>

#include "ir/passes/topo_sort.h"

enum { NOT_LIVE = UINT32_MAX };

typedef struct sorter {
    uint32_t *pos;     /* by seq: position in the current order, NOT_LIVE for other nodes */
    uint32_t *indeg;   /* by seq: inputs not emitted yet */
    cfx_node **order;  /* current order */
    cfx_node **out;    /* emitted order */
    cfx_node **late;   /* FIFO of waiting nodes that became ready */
    uint32_t n_out, late_head, late_tail, cursor;
} sorter;

static void emit(sorter *s, cfx_node *n)
{
    s->out[s->n_out++] = n;
    s->indeg[n->seq] = NOT_LIVE; /* emitted */
    cfx_user_iter it;
    for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
        uint32_t p = s->pos[u->seq];
        if (p == NOT_LIVE || s->indeg[u->seq] == NOT_LIVE)
            continue;
        if (--s->indeg[u->seq] == 0 && p < s->cursor)
            s->late[s->late_tail++] = u;
    }
}

/* Names the nodes of one cycle among the unemitted ones. */
static int report_cycle(sorter *s, uint32_t count)
{
    cfx_node *start = NULL;
    for (uint32_t i = 0; i < count && !start; i++)
        if (s->indeg[s->order[i]->seq] != NOT_LIVE)
            start = s->order[i];
    /* walk unemitted inputs, marking the step at which each node was seen (in pos) */
    for (uint32_t i = 0; i < count; i++)
        s->pos[s->order[i]->seq] = NOT_LIVE;
    cfx_node *n = start;
    uint32_t step = 0;
    while (s->pos[n->seq] == NOT_LIVE) {
        s->pos[n->seq] = step;
        s->out[step++] = n;
        cfx_node *next = NULL;
        for (uint32_t i = 0; i < cfx_node_num_inputs(n) && !next; i++) {
            cfx_node *in = cfx_node_input(n, i);
            if (s->indeg[in->seq] != NOT_LIVE)
                next = in;
        }
        n = next;
    }
    /* out[first .. step) is the cycle, each node an input of the one before it: print it in
     * data-flow order (producer first), back to where it started */
    cfx_buf b;
    cfx_buf_init(&b);
    uint32_t first = s->pos[n->seq], len = step - first;
    for (uint32_t j = 0; j < len; j++) {
        if (j == 8 && len > 9) {
            cfx_buf_printf(&b, " -> ... (%u more)", len - 8);
            break;
        }
        if (j)
            cfx_buf_puts(&b, " -> ");
        cfx_node_print_name(s->out[step - 1 - j], &b);
    }
    cfx_buf_puts(&b, " -> ");
    cfx_node_print_name(s->out[step - 1], &b);
    int rc = cfx_error_set(CFX_ERR, NULL, "topo-sort: the graph has a cycle: %s", b.data ? b.data : "?");
    cfx_buf_free(&b);
    return rc;
}

int cfx_pass_topo_sort(cfx_graph *g, bool *changed)
{
    if (changed)
        *changed = false;
    if (!g)
        return CFX_ERR;
    uint32_t count = cfx_graph_num_nodes(g), created = cfx_graph_num_created(g);
    if (count == 0)
        return CFX_OK;
    sorter s = {0};
    s.pos = cfx_malloc(created * sizeof *s.pos);
    s.indeg = cfx_malloc(created * sizeof *s.indeg);
    s.order = cfx_malloc(count * sizeof *s.order);
    s.out = cfx_malloc(count * sizeof *s.out);
    s.late = cfx_malloc(count * sizeof *s.late);
    int rc = CFX_OK;
    if (!s.pos || !s.indeg || !s.order || !s.out || !s.late) {
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "topo-sort: out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < created; i++)
        s.pos[i] = NOT_LIVE;
    uint32_t i = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        s.order[i] = n;
        s.pos[n->seq] = i++;
    }
    for (i = 0; i < count; i++) {
        cfx_node *n = s.order[i];
        uint32_t deg = cfx_node_num_inputs(n);
        for (uint32_t k = 0; k < deg; k++)
            if (cfx_node_graph(cfx_node_input(n, k)) != g) {
                char *name = cfx_node_name_string(n);
                rc = cfx_error_set(CFX_ERR, NULL, "topo-sort: an argument of node '%s' does not belong to this graph",
                                   name ? name : "?");
                cfx_free(name);
                goto done;
            }
        s.indeg[n->seq] = deg;
    }
    for (s.cursor = 0; s.cursor < count; s.cursor++) {
        cfx_node *n = s.order[s.cursor];
        if (s.indeg[n->seq] != 0)
            continue; /* waits for an input; emitted from the FIFO, or part of a cycle */
        emit(&s, n);
        while (s.late_head < s.late_tail)
            emit(&s, s.late[s.late_head++]);
    }
    if (s.n_out < count) {
        rc = report_cycle(&s, count);
        goto done;
    }
    bool moved = false;
    if (s.out[0] != cfx_graph_first(g)) {
        rc = cfx_node_prepend(cfx_graph_first(g), s.out[0]);
        moved = true;
    }
    for (i = 1; i < count && rc == CFX_OK; i++)
        if (cfx_node_next(s.out[i - 1]) != s.out[i]) {
            rc = cfx_node_append(s.out[i - 1], s.out[i]);
            moved = true;
        }
    if (changed)
        *changed = moved;
done:
    cfx_free(s.pos);
    cfx_free(s.indeg);
    cfx_free(s.order);
    cfx_free(s.out);
    cfx_free(s.late);
    return rc;
}
