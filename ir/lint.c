/* lint.c - Graph.lint for graphs without an owning module.
 *
 * One forward walk, as FX's: each node's opcode and graph are checked, then each of its input
 * nodes must belong to this graph and must already have been seen (a bit per seq, set when
 * the walk passes the node). Names made by the name space are unique by construction;
 * only when some name was assigned around it (cfx_node_set_name_unchecked) does lint hash
 * the names to find a redefinition. The walk can also hand back the nodes it visited, in
 * order, so that a pass that lints first (DCE) need not chase the list a second time. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

static int fail(cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    int rc = cfx_error_set_text(CFX_ERR, NULL, msg ? msg : "graph lint failed");
    cfx_free(msg);
    return rc;
}

static int arg_error(cfx_graph *g, const cfx_node *arg, const cfx_node *n, const char *what)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "Argument '");
    ir_print_name(arg, &b);
    cfx_buf_puts(&b, "' of Node '");
    ir_print_name(n, &b);
    cfx_buf_puts(&b, "' ");
    cfx_buf_puts(&b, what);
    cfx_buf_putc(&b, '\n');
    cfx_graph_print(g, &b);
    return fail(&b);
}

static uint32_t name_hash(cfx_name k)
{
    uint64_t x = (uint64_t)(uintptr_t)k.base * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)k.suffix * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(x >> 32);
}

/* Records n's name; true if an earlier node had it. */
static bool seen_name(cfx_name *t, uint32_t cap, cfx_name k)
{
    uint32_t j = name_hash(k) & (cap - 1);
    while (t[j].base && !cfx_name_equal(t[j], k))
        j = (j + 1) & (cap - 1);
    if (t[j].base)
        return true;
    t[j] = k;
    return false;
}

static int check_node(cfx_graph *g, cfx_node *n, uint64_t *seen, cfx_name *names, uint32_t cap);

int cfx_graph_lint(cfx_graph *g) { return ir_lint_collect(g, NULL); }

int ir_lint_collect(cfx_graph *g, cfx_node ***order)
{
    if (order)
        *order = NULL;
    if (!g)
        return CFX_ERR;
    cfx_node **out = NULL;
    if (order && g->len) {
        out = cfx_malloc((size_t)g->len * sizeof *out);
        if (!out)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    uint64_t *seen = cfx_calloc(g->n_created / 64 + 1, sizeof *seen);
    cfx_name *names = NULL;
    uint32_t cap = 64;
    if (seen && g->names_unchecked) {
        while (cap < g->len * 2 + 2)
            cap *= 2;
        names = cfx_calloc(cap, sizeof *names);
    }
    if (!seen || (g->names_unchecked && !names)) {
        cfx_free(seen);
        cfx_free(out);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    int rc = CFX_OK;
    uint32_t k = 0;
    for (cfx_node *n = cfx_graph_first(g); n && rc == CFX_OK; n = ir_next_in(g, n)) {
        rc = check_node(g, n, seen, names, cap);
        if (out)
            out[k++] = n;
    }
    cfx_free(names);
    cfx_free(seen);
    if (rc != CFX_OK)
        cfx_free(out);
    else if (order)
        *order = out;
    return rc;
}

static int check_node(cfx_graph *g, cfx_node *n, uint64_t *seen, cfx_name *names, uint32_t cap)
{
    if (n->op >= CFX_NODE_OP_COUNT) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Node ");
        ir_print_name(n, &b);
        cfx_buf_printf(&b, " had unknown opcode %d!", n->op);
        return fail(&b);
    }
    if (cfx_node_graph(n) != g) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Node '");
        ir_print_name(n, &b);
        cfx_buf_puts(&b, "' does not belong to this Graph!");
        return fail(&b);
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const cfx_node *a = ir_input(n, i);
        if (cfx_node_graph(a) != g)
            return arg_error(g, a, n,
                             "does not belong to this Graph, but was used as an argument! If you are "
                             "copying nodes from another graph, make sure to use ``arg_transform`` on "
                             "node_copy() to remap values");
        if (!(seen[a->seq / 64] >> a->seq % 64 & 1))
            return arg_error(g, a, n,
                             "was used before it has been defined! Please check that Nodes in the graph "
                             "are topologically ordered");
    }
    seen[n->seq / 64] |= 1ull << n->seq % 64;
    if (names && seen_name(names, cap, cfx_node_name(n))) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Node redefined name ");
        ir_print_name(n, &b);
        cfx_buf_putc(&b, '!');
        return fail(&b);
    }
    return CFX_OK;
}
