/* print_tabular.c - Graph.print_tabular(): tabulate's "simple" table of the nodes.
 *
 * Two walks over the nodes. The first renders each cell into a scratch buffer to measure its
 * width (code points, after stripping whitespace as tabulate does); the second renders the
 * cells again and pads them to the column widths. Rendering twice costs less than keeping
 * 5 strings per node for a million-node graph, and both walks use the same cell function,
 * so the widths cannot disagree with what is written. Between the walks the table's size is
 * known: one too large to print (see print_tabular.h) is refused before anything is written. */
#include <stdint.h>
#include <string.h>

#include "dispatch/error.h"
#include "ir/internal.h"
#include "ir/print.h"
#include "ir/print_tabular.h"
#include "ir/printbuf.h"

enum { N_COLS = 5 };

static const char *const headers[N_COLS] = {"opcode", "name", "target", "args", "kwargs"};

/* str(node.target): the OpOverload's str drops "torch.ops."; builtin functions print as
 * Python's builtins do (see print_tabular.h for the functions whose str has an address). */
static void put_target(const cfx_node *n, cfx_buf *b)
{
    const cfx_target_info *t = ir_target_of(n);
    const cfx_builtin_fn *fn = cfx_target_info_fn(t);
    if (fn) {
        const char *q = fn->qualified_name;
        static const char hop[] = "torch.ops.higher_order.";
        if (!strncmp(q, "operator.", 9) || !strncmp(q, "builtins.", 9) || !strncmp(q, "math.", 5)) {
            PB_LIT(b, "<built-in function ");
            cfx_buf_puts(b, fn->name);
            cfx_buf_putc(b, '>');
        } else if (!strncmp(q, hop, sizeof hop - 1)) {
            cfx_buf_puts(b, q + sizeof hop - 1);
        } else {
            PB_LIT(b, "<function ");
            cfx_buf_puts(b, fn->name);
            cfx_buf_putc(b, '>');
        }
        return;
    }
    const char *s = t->printed;
    size_t len = cfx_istr_len(s);
    static const char ops[] = "torch.ops.";
    if (t->kind == CFX_TARGET_OP && len >= sizeof ops - 1 && !strncmp(s, ops, sizeof ops - 1)) {
        s += sizeof ops - 1;
        len -= sizeof ops - 1;
    }
    cfx_buf_putn(b, s, len);
}

/* str(node.kwargs): a dict, keys and values repr'd. */
static void put_kwargs(const cfx_node *n, cfx_buf *b)
{
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    cfx_buf_putc(b, '{');
    for (uint32_t i = 0, nk = cfx_node_num_kwargs(n); i < nk; i++) {
        if (i)
            PB_LIT(b, ", ");
        cfx_ir_print_py_string(kw[i].name, cfx_istr_len(kw[i].name), b);
        PB_LIT(b, ": ");
        ir_print_nested_value(&kw[i].value, CFX_ARG_STR, NULL, b);
    }
    cfx_buf_putc(b, '}');
}

/* Column col of n's row, stripped, into b (emptied first); returns the cell. */
static const char *cell(const cfx_node *n, int col, cfx_buf *b, size_t *len)
{
    b->len = 0;
    switch (col) {
    case 0: {
        const char *op = cfx_node_op_name(n->op);
        cfx_buf_puts(b, op ? op : "?");
        break;
    }
    case 1:
        cfx_name_print(cfx_node_name(n), b);
        break;
    case 2:
        put_target(n, b);
        break;
    case 3:
        ir_print_values(n->args, n->n_args, true, CFX_ARG_STR, NULL, b);
        break;
    default:
        put_kwargs(n, b);
        break;
    }
    const char *s = b->data ? b->data : "";
    size_t end = b->oom ? 0 : b->len, start = 0;
    static const char ws[] = " \t\n\r\v\f";
    while (start < end && strchr(ws, s[start]) && s[start])
        start++;
    while (end > start && strchr(ws, s[end - 1]) && s[end - 1])
        end--;
    *len = end - start;
    return s + start;
}

static size_t width(const char *s, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

static void pad(cfx_buf *b, size_t n)
{
    static const char spaces[] = "                                ";
    while (n) {
        size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
        cfx_buf_putn(b, spaces, k);
        n -= k;
    }
}

/* One line: cells padded to their widths, two spaces apart, trailing spaces dropped (the
 * last cell is written unpadded; the line never ends in spaces since cells are stripped). */
static void put_row(cfx_buf *b, const char *const *cells, const size_t *lens, const size_t *widths)
{
    size_t pending = 0; /* spaces owed before the next non-empty text */
    for (int c = 0; c < N_COLS; c++) {
        if (c)
            pending += 2;
        if (lens[c]) {
            pad(b, pending);
            cfx_buf_putn(b, cells[c], lens[c]);
            pending = 0;
        }
        pending += widths[c] - width(cells[c], lens[c]);
    }
}

int cfx_graph_print_tabular(const cfx_graph *g, cfx_buf *b)
{
    size_t widths[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        widths[c] = strlen(headers[c]) + 2; /* tabulate's MIN_PADDING */
    cfx_buf scratch;
    cfx_buf_init(&scratch);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        for (int c = 0; c < N_COLS; c++) {
            size_t len;
            const char *s = cell(n, c, &scratch, &len);
            size_t w = width(s, len);
            if (w > widths[c])
                widths[c] = w;
        }
    /* tabulate pads every row to the widest cell of each column: one long cell (a node
     * taking a million arguments) makes every row that long, a table quadratic in the graph */
    size_t rows = 2 + (size_t)cfx_graph_num_nodes(g), row_bytes = 2 * (N_COLS - 1) + 1;
    for (int c = 0; c < N_COLS; c++)
        row_bytes += widths[c];
    if (row_bytes > CFX_PRINT_TABULAR_MAX_BYTES / rows) {
        cfx_buf_free(&scratch);
        return cfx_error_set(CFX_ERR, NULL,
                             "print_tabular: the table would take about %zu rows of %zu characters (tabulate pads "
                             "every row to the widest cell of each column), more than the limit of %llu bytes",
                             rows, row_bytes, (unsigned long long)CFX_PRINT_TABULAR_MAX_BYTES);
    }
    size_t lens[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        lens[c] = strlen(headers[c]);
    put_row(b, headers, lens, widths);
    cfx_buf_putc(b, '\n');
    for (int c = 0; c < N_COLS; c++) {
        if (c)
            PB_LIT(b, "  ");
        for (size_t i = 0; i < widths[c]; i++)
            cfx_buf_putc(b, '-');
    }
    /* a row's cells share one scratch buffer: render each, then copy it out */
    cfx_buf row[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        cfx_buf_init(&row[c]);
    for (cfx_node *n = cfx_graph_first(g); n && !b->oom; n = cfx_node_next(n)) {
        const char *cells[N_COLS];
        for (int c = 0; c < N_COLS; c++)
            cells[c] = cell(n, c, &row[c], &lens[c]);
        cfx_buf_putc(b, '\n');
        put_row(b, cells, lens, widths);
    }
    bool oom = b->oom || scratch.oom;
    for (int c = 0; c < N_COLS; c++) {
        oom = oom || row[c].oom;
        cfx_buf_free(&row[c]);
    }
    cfx_buf_free(&scratch);
    if (oom) {
        b->oom = true;
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory printing the graph's table");
    }
    return CFX_OK;
}
