/* dot.c - a graph as Graphviz DOT, for looking at it (`cfx print FILE --format dot|svg|png`).
 *
 * One box per live node, in graph order, with the node's name as its Graphviz id (names are
 * unique in a graph, so the text is the same on every run and diffs line up with the graph),
 * and one edge per distinct input (all_input_nodes), so the whole walk is linear: nothing is
 * looked up by name. The label holds the name, the target as format_node prints it and the
 * fake value of meta `val` (dtype and shape, as "float32[4, 8]"), each escaped for a quoted
 * DOT string. Inputs (placeholders) are blue, attributes (get_attr) yellow, the output green;
 * a node FX would not remove when unused (Node.is_impure: in-place ops, asserts, registered
 * side effects) gets a red bold border and an "(impure)" line, since that is what a reader
 * looks for when a pass keeps or drops it. */
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"
#include "dispatch/dtype.h"
#include "dispatch/error.h"

/* Appends s to b escaped for a DOT double-quoted string; newlines become left-justified breaks.
 * Runs of plain characters (nearly everything: names, targets) are copied in one call. */
static void put_escaped(cfx_buf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c != '"' && c != '\\' && (unsigned char)c >= 0x20)
            continue;
        cfx_buf_putn(b, s + run, i - run);
        run = i + 1;
        if (c == '"' || c == '\\') {
            cfx_buf_putc(b, '\\');
            cfx_buf_putc(b, c);
        } else {
            cfx_buf_puts(b, c == '\n' ? "\\l" : " ");
        }
    }
    cfx_buf_putn(b, s + run, n - run);
}

/* A node's id: its name, quoted (names are identifiers, but "graph", "node" and "edge" are
 * DOT keywords, so ids are always quoted). */
static void put_id(cfx_buf *b, const cfx_node *n, cfx_buf *tmp)
{
    tmp->len = 0;
    cfx_node_print_name(n, tmp);
    cfx_buf_putc(b, '"');
    put_escaped(b, tmp->data ? tmp->data : "", tmp->len);
    cfx_buf_putc(b, '"');
}

/* "float32[4, 8]", "int", "(float32[2], float32[2])": the val as the label shows it. The walk
 * over tuple items is iterative (explicit stack of positions) because vals may nest. */
static void put_val(cfx_buf *b, const cfx_meta_val *v)
{
    enum { DEPTH = 32 };
    const cfx_meta_val *stack[DEPTH];
    int32_t pos[DEPTH];
    int sp = 0;
    for (;;) {
        switch ((cfx_meta_val_kind)v->kind) {
        case CFX_MVAL_TENSOR: {
            const char *dt = cfx_dtype_name((cfx_dtype)v->dtype);
            cfx_buf_puts(b, dt ? dt : "?");
            cfx_buf_putc(b, '[');
            for (int32_t i = 0; i < v->n; i++)
                cfx_buf_printf(b, "%s%lld", i ? ", " : "", (long long)v->sizes[i]);
            cfx_buf_putc(b, ']');
            if (v->device.type != CFX_DEVICE_CPU) {
                char dev[32];
                cfx_buf_printf(b, " %s", cfx_device_format(v->device, dev, sizeof dev));
            }
            break;
        }
        case CFX_MVAL_INT: cfx_buf_puts(b, "int"); break;
        case CFX_MVAL_DOUBLE: cfx_buf_puts(b, "float"); break;
        case CFX_MVAL_BOOL: cfx_buf_puts(b, "bool"); break;
        case CFX_MVAL_OBJECT: cfx_buf_puts(b, v->u.class_name ? v->u.class_name : "object"); break;
        case CFX_MVAL_TOKEN: cfx_buf_puts(b, "token"); break; /* an effect token, not data */
        case CFX_MVAL_TUPLE:
        case CFX_MVAL_LIST:
            cfx_buf_putc(b, v->kind == CFX_MVAL_TUPLE ? '(' : '[');
            if (v->n > 0 && sp < DEPTH) {
                stack[sp] = v;
                pos[sp++] = 0;
                v = &v->u.items[0];
                continue;
            }
            if (v->n > 0)
                cfx_buf_puts(b, "..."); /* nested deeper than the label is worth */
            cfx_buf_putc(b, v->kind == CFX_MVAL_TUPLE ? ')' : ']');
            break;
        default: cfx_buf_puts(b, "None"); break;
        }
        /* close finished containers, step to the next item */
        while (sp > 0 && pos[sp - 1] + 1 >= stack[sp - 1]->n) {
            sp--;
            cfx_buf_putc(b, stack[sp]->kind == CFX_MVAL_TUPLE ? ')' : ']');
        }
        if (sp == 0)
            return;
        cfx_buf_puts(b, ", ");
        v = &stack[sp - 1]->u.items[++pos[sp - 1]];
    }
}

static const char *const op_style[CFX_NODE_OP_COUNT] = {
    [CFX_NODE_PLACEHOLDER] = "shape=invhouse, style=filled, fillcolor=\"#cfe2ff\"",
    [CFX_NODE_GET_ATTR] = "shape=box, style=filled, fillcolor=\"#fff3cd\"",
    [CFX_NODE_CALL_FUNCTION] = "shape=box, style=\"rounded,filled\", fillcolor=white",
    [CFX_NODE_CALL_METHOD] = "shape=box, style=\"rounded,filled\", fillcolor=\"#e2e3e5\"",
    [CFX_NODE_CALL_MODULE] = "shape=box3d, style=filled, fillcolor=\"#e2e3e5\"",
    [CFX_NODE_OUTPUT] = "shape=house, style=filled, fillcolor=\"#d1e7dd\"",
};

static void put_node(cfx_buf *b, const cfx_node *n, cfx_buf *tmp)
{
    cfx_node_op op = cfx_node_opcode(n);
    cfx_buf_puts(b, "  ");
    put_id(b, n, tmp);
    cfx_buf_puts(b, " [label=\"");
    tmp->len = 0;
    cfx_node_print_name(n, tmp);
    put_escaped(b, tmp->data ? tmp->data : "", tmp->len);
    cfx_buf_puts(b, "\\l");
    if (op == CFX_NODE_PLACEHOLDER || op == CFX_NODE_OUTPUT) {
        cfx_buf_puts(b, cfx_node_op_name(op));
    } else {
        tmp->len = 0;
        cfx_node_print_target(n, tmp);
        if (op != CFX_NODE_CALL_FUNCTION) {
            const char *kind = cfx_node_op_name(op);
            cfx_buf_printf(b, "%s ", kind ? kind : "?");
        }
        put_escaped(b, tmp->data ? tmp->data : "", tmp->len);
    }
    cfx_buf_puts(b, "\\l");
    const cfx_meta_val *v = cfx_node_val(n);
    if (v) {
        tmp->len = 0;
        put_val(tmp, v);
        put_escaped(b, tmp->data ? tmp->data : "", tmp->len);
        cfx_buf_puts(b, "\\l");
    }
    bool impure = op != CFX_NODE_PLACEHOLDER && op != CFX_NODE_OUTPUT && cfx_node_is_impure(n);
    if (impure)
        cfx_buf_puts(b, "(impure)\\l");
    cfx_buf_puts(b, "\", ");
    cfx_buf_puts(b, op < CFX_NODE_OP_COUNT ? op_style[op] : "shape=box");
    if (impure)
        cfx_buf_puts(b, ", color=\"#dc3545\", penwidth=2.5");
    cfx_buf_puts(b, "];\n");
}

int cfx_graph_to_dot(const cfx_graph *g, const char *name, cfx_buf *b)
{
    if (!g || !b)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_to_dot: NULL argument");
    cfx_buf tmp;
    cfx_buf_init(&tmp);
    cfx_buf_puts(b, "digraph \"");
    const char *gname = name ? name : "graph";
    put_escaped(b, gname, strlen(gname));
    cfx_buf_puts(b, "\" {\n  rankdir=TB;\n"
                    "  node [fontname=\"monospace\", fontsize=10, margin=\"0.15,0.05\"];\n"
                    "  edge [arrowsize=0.6];\n");
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        put_node(b, n, &tmp);
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        for (uint32_t i = 0; i < cfx_node_num_inputs(n); i++) {
            cfx_buf_puts(b, "  ");
            put_id(b, cfx_node_input(n, i), &tmp);
            cfx_buf_puts(b, " -> ");
            put_id(b, n, &tmp);
            cfx_buf_puts(b, ";\n");
        }
    }
    cfx_buf_puts(b, "}\n");
    bool oom = tmp.oom || b->oom;
    cfx_buf_free(&tmp);
    return oom ? cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory writing DOT") : CFX_OK;
}
