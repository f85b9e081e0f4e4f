/* test_compact.c - the compact graph records and what they rely on.
 *
 * Nodes are 64 bytes: graph order is kept as 32-bit seqs (the sentinel's is
 * CFX_NODE_ROOT_SEQ), the target as an id into the graph's record table, the graph in the head
 * of the node's block, n_args in 16 bits, n_kwargs in the flags byte (or in front of the
 * argument block). A node's input records are one run of ids inside one block of the use
 * table. Node creation stores no zeros because arena memory is zero-filled, and a refused
 * node's record is zeroed again. Used name suffixes are a bitset with an overflow set. These
 * tests walk each of those representations through the operations that change it and compare
 * with what a naive model says. */
#include <criterion/criterion.h>

#include "ir/internal.h"
#include "ir/json.h"
#include "tests/ir/ir_test_util.h"

_Static_assert(sizeof(cfx_node) == 64, "the node record is 64 bytes");

/* Names of the live nodes, forward, then backward, as one string. */
static char *order(cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        cfx_node_print_name(n, &b);
        cfx_buf_putc(&b, ' ');
    }
    cfx_buf_puts(&b, "|");
    for (cfx_node *n = cfx_graph_last(g); n; n = cfx_node_prev(n)) {
        cfx_buf_putc(&b, ' ');
        cfx_node_print_name(n, &b);
    }
    return cfx_buf_take(&b);
}

static void expect_order(cfx_graph *g, const char *want)
{
    char *got = order(g);
    cr_expect_str_eq(got, want);
    free(got);
}

Test(ir_compact, links_through_seqs)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    expect_order(g, "x relu cos | cos relu x");
    /* inserting before / after a node, and at both ends */
    cfx_insert_point old = cfx_graph_inserting_before(g, b);
    cfx_node *c = OP(g, "aten::sin", NV(a));
    cfx_graph_inserting_after(g, x);
    cfx_node *d = OP(g, "aten::neg", NV(x));
    cfx_node *e = OP(g, "aten::exp", NV(x)); /* after x: before neg */
    cfx_graph_inserting_before(g, NULL);      /* the start of the graph */
    cfx_node *p = cfx_graph_placeholder(g, "p");
    cfx_graph_set_insert_point(g, old);
    cfx_node *o = cfx_graph_output(g, NV(b));
    expect_order(g, "p x exp neg relu sin cos output | output cos sin relu neg exp x p");
    /* moves, including to the ends */
    cr_assert_eq(cfx_node_prepend(x, o), CFX_OK);
    expect_order(g, "p output x exp neg relu sin cos | cos sin relu neg exp x output p");
    cr_assert_eq(cfx_node_append(b, o), CFX_OK);
    cr_assert_eq(cfx_node_append(x, p), CFX_OK);
    expect_order(g, "x p exp neg relu sin cos output | output cos sin relu neg exp p x");
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* an erased node keeps its links: a walk standing on it goes on */
    cr_assert_eq(cfx_graph_erase_node(g, c), CFX_OK);
    cr_assert_eq(cfx_graph_erase_node(g, d), CFX_OK);
    cr_expect_eq(cfx_node_next(c), b);
    cr_expect_eq(cfx_node_prev(c), a);
    cr_expect_eq(cfx_node_next(d), a);
    cr_expect_eq(cfx_node_prev(d), e);
    expect_order(g, "x p exp relu cos output | output cos relu exp p x");
    cr_expect_eq(cfx_graph_find_node(g, "cos"), b);
    cr_expect_null(cfx_graph_find_node(g, "sin"));
    cr_expect_eq(cfx_graph_output_node(g), o);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
}

/* Hundreds of nodes (several node-table blocks), moved across blocks and erased: the order
 * both ways matches an array model. */
Test(ir_compact, links_across_blocks)
{
    enum { N = 700 };
    cfx_graph *g = cfx_graph_new();
    cfx_node *model[N];
    int m = 0;
    cfx_node *x = cfx_graph_placeholder(g, "x");
    model[m++] = x;
    for (int i = 1; i < N; i++)
        model[m++] = OP(g, "aten::relu", NV(x));
    /* move every 7th node to just after the node 300 places back (or the first) */
    for (int i = 7; i < N; i += 7) {
        cfx_node *mv = model[i];
        int at = i > 300 ? i - 300 : 0;
        cr_assert_eq(cfx_node_append(model[at], mv), CFX_OK);
        memmove(&model[at + 2], &model[at + 1], (size_t)(i - at - 1) * sizeof *model);
        model[at + 1] = mv;
    }
    /* erase every 5th (all are leaves but x) */
    int k = 0;
    for (int i = 0; i < m; i++) {
        if (i % 5 == 4) {
            cr_assert_eq(cfx_graph_erase_node(g, model[i]), CFX_OK);
            continue;
        }
        model[k++] = model[i];
    }
    m = k;
    cfx_node *n = cfx_graph_first(g);
    for (int i = 0; i < m; i++, n = cfx_node_next(n))
        cr_assert_eq(n, model[i], "forward %d", i);
    cr_expect_null(n);
    n = cfx_graph_last(g);
    for (int i = m - 1; i >= 0; i--, n = cfx_node_prev(n))
        cr_assert_eq(n, model[i], "backward %d", i);
    cr_expect_null(n);
    cr_expect_eq(cfx_graph_num_nodes(g), (uint32_t)m);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
}

/* Targets by id: the accessors, past the first table size, strings and callables. */
Test(ir_compact, target_ids)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *n[40];
    const cfx_op *ops[40];
    for (int i = 0; i < 40; i++) {
        char q[32];
        snprintf(q, sizeof q, "aten::op%d", i);
        ops[i] = test_op(q);
        n[i] = cfx_graph_call_op(g, ops[i], VALS(NV(x)), 1, NULL, 0);
        cr_assert(n[i]);
    }
    cfx_node *m = cfx_graph_call_method(g, "view", VALS(NV(x)), 1, NULL, 0);
    cfx_node *f = FN(g, &cfx_fn_getitem, NV(x), cfx_int(0));
    for (int i = 0; i < 40; i++) {
        cr_expect_eq(cfx_node_operator(n[i]), ops[i]);
        cr_expect_eq(cfx_node_target(n[i]).kind, CFX_TARGET_OP);
        cr_expect_null(cfx_node_target_str(n[i]));
        cr_expect_eq(cfx_node_target_info(n[i])->id, n[i]->target_id);
    }
    /* the same target: the same record */
    cr_expect_eq(cfx_node_target_info(cfx_graph_call_op(g, ops[3], VALS(NV(x)), 1, NULL, 0)),
                 cfx_node_target_info(n[3]));
    cr_expect_str_eq(cfx_node_target_str(m), "view");
    cr_expect_str_eq(cfx_node_target_str(x), "x");
    cr_expect_eq(cfx_target_info_fn(cfx_node_target_info(f)), &cfx_fn_getitem);
    cr_expect_null(cfx_node_operator(f));
    char *s = cfx_graph_to_string(g);
    cr_assert(s);
    cr_expect(strstr(s, "%op39 : [num_users=0] = call_function[target=torch.ops.aten.op39.default](args = (%x,), kwargs = {})"));
    cr_expect(strstr(s, "%getitem : [num_users=0] = call_function[target=operator.getitem](args = (%x, 0), kwargs = {})"));
    free(s);
    cfx_graph_free(g);
}

/* n_kwargs is 16 bits: more is refused with a message, wherever kwargs are set. */
Test(ir_compact, kwargs_limit)
{
    enum { MAX = CFX_NODE_MAX_KWARGS };
    cfx_kwarg *kw = malloc((MAX + 1) * sizeof *kw);
    cr_assert(kw);
    for (int i = 0; i <= MAX; i++)
        kw[i] = KW("k", cfx_int(i));
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_error_clear();
    cr_expect_null(OPK(g, "aten::foo", kw, MAX + 1, NV(x)));
    cr_expect_str_eq(cfx_error_message(), "a node takes at most 65535 kwargs, not 65536");
    cr_expect_eq(cfx_node_num_users(x), 0);
    cfx_error_clear();
    cfx_node *a = OPK(g, "aten::foo", kw, MAX, NV(x));
    cr_assert(a);
    cr_expect_eq(cfx_node_num_kwargs(a), MAX);
    cr_expect_eq(cfx_node_kwargs(a)[MAX - 1].value.u.i, MAX - 1);
    cr_expect_eq(cfx_node_update_kwarg(a, "other", cfx_int(1)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "a node takes at most 65535 kwargs, not 65536");
    cr_expect_eq(cfx_node_num_kwargs(a), MAX);
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_kwargs(a, kw, MAX + 1), CFX_ERR);
    cr_expect_eq(cfx_node_num_kwargs(a), MAX);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cfx_error_clear();
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
    free(kw);
}

/* The graph a node belongs to is its node-table block's: nodes of two graphs made in turn
 * across several blocks each, erased ones, and the sentinels all name their own graph. */
Test(ir_compact, graph_from_block)
{
    enum { N = 700 };
    cfx_graph *g = cfx_graph_new(), *h = cfx_graph_new();
    cr_expect_eq(cfx_node_graph(&g->root), g);
    cr_expect_eq(cfx_node_graph(&h->root), h);
    static cfx_node *ng[N], *nh[N];
    ng[0] = cfx_graph_placeholder(g, "x");
    nh[0] = cfx_graph_placeholder(h, "y");
    for (int i = 1; i < N; i++) {
        ng[i] = OP(g, "aten::relu", NV(ng[i - 1]));
        nh[i] = OP(h, "aten::cos", NV(nh[i - 1]));
        cr_assert(ng[i] && nh[i]);
    }
    for (int i = 0; i < N; i++) {
        cr_assert_eq(cfx_node_graph(ng[i]), g, "g node %d", i);
        cr_assert_eq(cfx_node_graph(nh[i]), h, "h node %d", i);
        cr_assert_eq(ng[i]->seq, (uint32_t)i);
        cr_assert_eq((uintptr_t)ng[i] % 64, 0, "a record is one cache line");
        /* the block's head follows its last record */
        cr_assert_eq(((cfx_node_block_head *)(void *)(ng[i] - i % CFX_NODE_BLOCK + CFX_NODE_BLOCK))->graph, g);
    }
    /* an erased node still names its graph (it stays readable) */
    cr_assert_eq(cfx_graph_erase_node(g, ng[N - 1]), CFX_OK);
    cr_expect_eq(cfx_node_graph(ng[N - 1]), g);
    /* what the graph lookup decides: a use across graphs, moves within one, insertion points */
    cfx_node *m = OP(g, "aten::add.Tensor", NV(ng[300]), NV(nh[300]));
    cr_assert(m);
    cr_expect_eq(cfx_node_num_users(nh[300]), 2);
    cr_expect_eq(cfx_node_input(m, 1), nh[300]);
    cr_expect_eq(cfx_node_prepend(ng[5], nh[5]), CFX_ERR);
    cr_expect_eq(cfx_node_prepend(ng[5], m), CFX_OK);
    cfx_graph_inserting_before(g, nh[200]);
    cfx_error_clear();
    cr_expect_null(OP(g, "aten::neg", NV(ng[0])));
    cr_expect_str_eq(cfx_error_message(), "Node to insert before is not in graph.");
    cfx_graph_inserting_before(g, NULL);
    cfx_error_clear();
    cr_expect_eq(cfx_graph_erase_node(h, ng[10]), CFX_ERR);
    cr_expect_eq(cfx_graph_lint(h), CFX_OK);
    cfx_graph_free(g); /* takes its use out of nh[300]'s users */
    cr_expect_eq(cfx_node_num_users(nh[300]), 1);
    cr_expect_eq(cfx_graph_lint(h), CFX_OK);
    cfx_graph_free(h);
    cfx_error_clear();
}

/* n_args is 16 bits: more is refused with a message wherever args are set, and nothing
 * changes (no node, no uses). */
Test(ir_compact, args_limit)
{
    enum { MAX = CFX_NODE_MAX_ARGS };
    cfx_value *v = malloc((MAX + 1) * sizeof *v);
    cr_assert(v);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    v[0] = NV(x);
    for (int i = 1; i <= MAX; i++)
        v[i] = cfx_int(i);
    uint32_t made = cfx_graph_num_created(g);
    cfx_error_clear();
    cr_expect_null(cfx_graph_call_op(g, test_op("aten::foo"), v, MAX + 1, NULL, 0));
    cr_expect_str_eq(cfx_error_message(), "a node takes at most 65535 args, not 65536");
    cr_expect_eq(cfx_graph_num_created(g), made);
    cr_expect_eq(cfx_graph_num_nodes(g), 1);
    cr_expect_eq(cfx_node_num_users(x), 0);
    cfx_error_clear();
    cfx_node *a = cfx_graph_call_op(g, test_op("aten::foo"), v, MAX, NULL, 0);
    cr_assert(a);
    cr_expect_eq(cfx_node_num_args(a), MAX);
    cr_expect_eq(cfx_node_arg(a, MAX - 1).u.i, MAX - 1);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_node_insert_arg(a, 0, cfx_int(-1)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "a node takes at most 65535 args, not 65536");
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_args(a, v, MAX + 1), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "a node takes at most 65535 args, not 65536");
    cfx_error_clear();
    cr_expect_eq(cfx_node_num_args(a), MAX);
    cr_expect_eq(cfx_node_arg(a, 0).u.node, x);
    cr_expect_eq(cfx_node_num_users(x), 1);
    /* kwargs on top of the most args */
    cr_expect_eq(cfx_node_update_kwarg(a, "k", NV(x)), CFX_OK);
    cr_expect_eq(cfx_node_num_args(a), MAX);
    cr_expect_eq(cfx_node_num_kwargs(a), 1);
    cr_expect_eq(cfx_node_kwargs(a)[0].value.u.node, x);
    /* and back down */
    cr_expect_eq(cfx_node_set_args(a, v, 2), CFX_OK);
    cr_expect_eq(cfx_node_num_args(a), 2);
    cr_expect_eq(cfx_node_num_kwargs(a), 1);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
    free(v);
}

/* The printed kwargs of n: what print and JSON must show. */
static char *kwargs_text(const cfx_node *n)
{
    cfx_buf b;
    cfx_buf_init(&b);
    const cfx_kwarg *k = cfx_node_kwargs(n);
    for (uint32_t i = 0; i < cfx_node_num_kwargs(n); i++)
        cfx_buf_printf(&b, "%s%s: %lld", i ? ", " : "", k[i].name, (long long)k[i].value.u.i);
    return cfx_buf_take(&b);
}

/* A node's kwargs count sits in its flags byte below CFX_NODE_KWARGS_OUT and in front of the
 * argument block from there on: counts on both sides and changes across the line read
 * back the same through every accessor, printing, JSON and node_copy; erasing keeps it. */
Test(ir_compact, kwargs_count_in_and_out_of_line)
{
    static const uint32_t counts[] = {0, 1, CFX_NODE_KWARGS_OUT - 1, CFX_NODE_KWARGS_OUT,
                                      CFX_NODE_KWARGS_OUT + 1, 300};
    enum { NC = sizeof counts / sizeof *counts, MAXK = 300 };
    static char names[MAXK + 1][16];
    static cfx_kwarg kw[MAXK + 1];
    for (int i = 0; i <= MAXK; i++) {
        snprintf(names[i], sizeof names[i], "k%d", i);
        kw[i] = KW(names[i], cfx_int(i));
    }
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *n[NC];
    for (int c = 0; c < NC; c++) {
        for (int nargs = 0; nargs < 2; nargs++) {
            /* a method target: the JSON reader needs no operator for it */
            cfx_node *a = cfx_graph_call_method(g, "foo", VALS(NV(x)), (uint32_t)nargs, kw, counts[c]);
            cr_assert(a);
            cr_expect_eq(cfx_node_num_args(a), (uint32_t)nargs);
            cr_expect_eq(cfx_node_num_kwargs(a), counts[c]);
            cr_expect_eq(a->flags >> CFX_NODE_KWARGS_SHIFT == CFX_NODE_KWARGS_OUT,
                         counts[c] >= CFX_NODE_KWARGS_OUT);
            cr_expect_eq(cfx_node_kwargs(a) == NULL, counts[c] == 0);
            for (uint32_t i = 0; i < counts[c]; i++) {
                cr_assert_str_eq(cfx_node_kwargs(a)[i].name, names[i]);
                cr_assert_eq(cfx_node_kwargs(a)[i].value.u.i, i);
            }
            if (counts[c])
                cr_expect_eq(cfx_node_kwarg(a, names[counts[c] - 1])->u.i, counts[c] - 1);
            cr_expect_null(cfx_node_kwarg(a, "nope"));
            n[c] = a;
        }
    }
    /* printed: the kwargs as they were given */
    char *s = cfx_graph_to_string(g);
    cr_assert(s);
    for (int c = 0; c < NC; c++) {
        char *k = kwargs_text(n[c]);
        cr_assert(k);
        cr_expect(strstr(s, k), "%u kwargs", counts[c]);
        free(k);
    }
    /* JSON round trip and a copy into another graph print the same */
    char *j = NULL;
    cr_assert_eq(cfx_graph_to_json(g, 0, &j), CFX_OK);
    cfx_graph *back = cfx_graph_from_json(j, strlen(j));
    cr_assert(back, "%s", cfx_error_message());
    char *s2 = cfx_graph_to_string(back);
    cr_expect_str_eq(s2, s);
    cfx_graph *cp = cfx_graph_new();
    cfx_node *cx = cfx_graph_placeholder(cp, "x");
    cfx_node *c5 = cfx_graph_node_copy(cp, n[NC - 1], NULL, NULL);
    cr_assert(c5);
    cr_expect_eq(cfx_node_num_kwargs(c5), MAXK);
    cr_expect_eq(cfx_node_input(c5, 0), x); /* no map: the same producer, across graphs */
    (void)cx;
    /* across the line and back by update_kwarg (a new key) and set_kwargs */
    cfx_node *a = OPK(g, "aten::bar", kw, CFX_NODE_KWARGS_OUT - 1, cfx_int(0));
    cr_assert(a);
    for (uint32_t k = CFX_NODE_KWARGS_OUT - 1; k < CFX_NODE_KWARGS_OUT + 2; k++) {
        cr_assert_eq(cfx_node_update_kwarg(a, names[k], cfx_int(k)), CFX_OK);
        cr_expect_eq(cfx_node_num_kwargs(a), k + 1);
        cr_expect_eq(cfx_node_kwargs(a)[k].value.u.i, k);
        cr_expect_eq(cfx_node_kwargs(a)[0].value.u.i, 0);
    }
    cr_assert_eq(cfx_node_update_kwarg(a, names[3], NV(x)), CFX_OK); /* an existing key */
    cr_expect_eq(cfx_node_num_kwargs(a), CFX_NODE_KWARGS_OUT + 2);
    cr_expect_eq(cfx_node_num_inputs(a), 1);
    cr_assert_eq(cfx_node_insert_arg(a, 0, cfx_int(7)), CFX_OK);
    cr_expect_eq(cfx_node_num_args(a), 2);
    cr_expect_eq(cfx_node_num_kwargs(a), CFX_NODE_KWARGS_OUT + 2);
    cr_expect_eq(cfx_node_kwargs(a)[3].value.u.node, x);
    cr_assert_eq(cfx_node_set_kwargs(a, kw, 2), CFX_OK);
    cr_expect_eq(cfx_node_num_kwargs(a), 2);
    cr_expect_eq(cfx_node_num_inputs(a), 0);
    cr_assert_eq(cfx_node_set_kwargs(a, kw, MAXK), CFX_OK);
    cr_expect_eq(cfx_node_num_kwargs(a), MAXK);
    cr_expect_eq(cfx_node_kwargs(a)[MAXK - 1].value.u.i, MAXK - 1);
    /* erased: the flag and the count side by side */
    cr_assert_eq(cfx_graph_erase_node(g, a), CFX_OK);
    cr_expect(cfx_node_is_erased(a));
    cr_expect_eq(cfx_node_num_kwargs(a), MAXK);
    cr_expect_eq(cfx_node_kwargs(a)[MAXK - 1].value.u.i, MAXK - 1);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    free(s);
    free(s2);
    free(j);
    cfx_graph_free(cp);
    cfx_graph_free(back);
    cfx_graph_free(g);
}

static cfx_node *call(cfx_graph *g, const char *qn, const cfx_value *args, uint32_t n)
{
    return cfx_graph_call_op(g, test_op(qn), args, n, NULL, 0);
}

/* A graph exercising duplicates, scalars of every flat kind, producers with and without
 * users, and enough distinct inputs per node that use runs straddle the 512-record blocks. */
static cfx_graph *build(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node *z = cfx_graph_placeholder(g, "z");
    cfx_node *prev = x;
    for (int i = 0; i < 2000; i++) {
        cfx_node *n;
        switch (i % 5) {
        case 0:
            n = call(g, "aten::add.Tensor", VALS(NV(prev), NV(x)), 2);
            break;
        case 1: /* duplicates, scalars between them */
            n = call(g, "aten::foo", VALS(NV(prev), cfx_int(3), NV(prev), cfx_double(0.5), NV(x), NV(prev)), 6);
            break;
        case 2: /* three distinct inputs: runs of 3 cross block boundaries */
            n = call(g, "aten::addcmul", VALS(NV(prev), NV(y), NV(z), cfx_bool(true)), 4);
            break;
        case 3:
            n = call(g, "aten::to",
                     VALS(NV(prev), cfx_dtype_value(CFX_FLOAT64), cfx_device_value(cfx_device_make(CFX_DEVICE_CPU)),
                          cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT), cfx_layout_value(0), cfx_none()),
                     6);
            break;
        default: /* no node at all, then the same node as every arg */
            call(g, "aten::scalar_tensor", VALS(cfx_double(1.0)), 1);
            n = call(g, "aten::relu", VALS(NV(prev), NV(prev), NV(prev)), 3);
            break;
        }
        cr_assert(n);
        prev = n;
    }
    cfx_graph_output(g, NV(prev));
    return g;
}

/* Runs never straddle a block of use records (some skip to the next one); the links are
 * what the args say. */
Test(ir_compact, use_runs_within_blocks)
{
    cfx_graph *g = build();
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    expect_links_consistent(g);
    int straddling = 0, at_block_start = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        uint32_t low = n->inputs & ((1u << IR_USE_SHIFT) - 1);
        straddling += n->n_inputs && low + n->n_inputs > (1u << IR_USE_SHIFT);
        at_block_start += n->n_inputs && low == 0;
    }
    cr_expect_eq(straddling, 0);
    cr_expect_gt(at_block_start, 0);
    cfx_graph_free(g);
}

/* Args of any count, up to and beyond a block of use records, with duplicates and a list
 * among them; set at creation and set again; chains of 5000 nodes of 0 to 6 args through
 * node blocks, use blocks and arena chunks. */
Test(ir_compact, args_of_any_count)
{
    cfx_graph *g = cfx_graph_new();
    static const char *const nm[8] = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"};
    cfx_node *ph[8];
    for (int i = 0; i < 8; i++)
        ph[i] = cfx_graph_placeholder(g, nm[i]);
    static cfx_value v[700];
    cfx_value items[2];
    for (int round = 0; round < 30; round++) {
        uint32_t n = round % 3 == 0 ? 40 : round % 3 == 1 ? 600 : 5;
        for (uint32_t i = 0; i < n; i++)
            v[i] = i % 4 == 3 ? cfx_int(i) : NV(ph[(i * 5 + (uint32_t)round) % 8]);
        if (round % 5 == 4) {
            items[0] = NV(ph[round % 8]);
            items[1] = cfx_int(1);
            v[n - 1] = cfx_list(items, 2);
        }
        cfx_node *node = call(g, "aten::foo", v, n);
        cr_assert(node);
        if (round % 2)
            cr_assert_eq(cfx_node_set_args(node, v, n), CFX_OK);
        ph[round % 8] = node;
    }
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    expect_links_consistent(g);
    cfx_node *x = cfx_graph_placeholder(g, "x"), *prev = x;
    for (int i = 0; i < 5000; i++) {
        uint32_t n = (uint32_t)(i % 7);
        cfx_value a[7];
        for (uint32_t j = 0; j < n; j++)
            a[j] = j % 2 ? NV(x) : cfx_int(j);
        if (n)
            a[0] = NV(prev);
        prev = call(g, i % 2 ? "aten::add.Tensor" : "aten::relu", a, n);
        cr_assert(prev);
    }
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    expect_links_consistent(g);
    cfx_graph_free(g);
}

/* A refused node (a NULL node reference: CFX_ERR with no new message) was linked in and had
 * uses; it leaves the graph as it was and a zero slot for the next node. */
Test(ir_compact, refused_node_leaves_clean_slot)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(a));
    cfx_insert_point old = cfx_graph_inserting_before(g, b);
    char *before = graph_links(g);
    uint32_t made = cfx_graph_num_created(g), nu = g->n_uses;
    cfx_error_clear();
    cr_expect_null(OP(g, "aten::foo", NV(x), NV(a), cfx_node_value(NULL)));
    cr_expect_null(OP(g, "aten::foo", NV(x), LIST(NV(a), cfx_node_value(NULL))));
    cr_expect_null(cfx_error_message());
    cr_expect_eq(cfx_graph_num_created(g), made);
    char *after = graph_links(g);
    cr_expect_str_eq(after, before);
    expect_order(g, "x relu cos | cos relu x");
    (void)nu;
    /* the slot the refused nodes had: zero but for what the next node sets */
    cfx_node *c = OP(g, "aten::sin", cfx_int(1));
    cr_assert(c);
    cr_expect_eq(c->seq, made);
    cr_expect_null(c->meta);
    cr_expect_eq(c->n_users, 0);
    cr_expect_eq(c->users_head, 0);
    cr_expect_eq(c->flags, 0);
    cr_expect_eq(cfx_node_num_kwargs(c), 0);
    cr_expect_eq(c->n_inputs, 0);
    cr_expect_eq(cfx_node_num_args(c), 1);
    expect_order(g, "x relu sin cos | cos sin relu x");
    cfx_graph_set_insert_point(g, old);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    free(before);
    free(after);
    cfx_graph_free(g);
}

/* Arena memory comes zero-filled; an empty arena's bump pointer is not NULL; memory handed out
 * far past the first chunks, and by a dedicated chunk, is writable and keeps its contents. */
Test(ir_compact, arena)
{
    cfx_arena a;
    cfx_arena_init(&a);
    cr_expect_not_null(cfx_arena_alloc(&a, 0));
    size_t total = 0;
    for (int i = 0; total < 6u * 1024 * 1024; i++) {
        size_t sz = (size_t)(i * 37 % 5000) + 1;
        unsigned char *p = cfx_arena_alloc(&a, sz);
        cr_assert(p);
        for (size_t k = 0; k < sz; k++)
            cr_assert_eq(p[k], 0, "alloc %d byte %zu", i, k);
        memset(p, 0xa5, sz);
        total += sz;
    }
    cfx_arena_free(&a);
    cfx_arena_init(&a);
    enum { N = 200000 };
    uint64_t **p = malloc(N * sizeof *p);
    cr_assert(p);
    for (int i = 0; i < N; i++) { /* 200k x 48 bytes: through the 1, 2 and 4 MiB chunks */
        p[i] = cfx_arena_alloc(&a, 48);
        cr_assert(p[i]);
        for (int k = 0; k < 6; k++)
            p[i][k] = (uint64_t)i * 6 + k;
    }
    char *big = cfx_arena_alloc(&a, 3 * 1024 * 1024);
    cr_assert(big);
    memset(big, 0x5a, 3 * 1024 * 1024);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 6; k++)
            cr_assert_eq(p[i][k], (uint64_t)i * 6 + k);
    cr_expect_eq(big[3 * 1024 * 1024 - 1], 0x5a);
    free(p);
    cfx_arena_free(&a);
}

/* ---- used names ------------------------------------------------------------------------- */

/* The used set as plain strings (an open-addressing hash set): what the bitset / overflow
 * representation must say. */
typedef struct name_model {
    char **s;
    int n, cap; /* cap: power of two */
} name_model;

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static bool model_has(const name_model *m, const char *s)
{
    for (uint32_t j = str_hash(s) & (uint32_t)(m->cap - 1); m->s[j]; j = (j + 1) & (uint32_t)(m->cap - 1))
        if (strcmp(m->s[j], s) == 0)
            return true;
    return false;
}

static void model_add(name_model *m, char *s)
{
    cr_assert_lt(m->n * 2, m->cap);
    uint32_t j = str_hash(s) & (uint32_t)(m->cap - 1);
    while (m->s[j])
        j = (j + 1) & (uint32_t)(m->cap - 1);
    m->s[j] = s;
    m->n++;
}

/* Random candidates, defaults in bursts, explicit suffixes near, inside and far beyond the
 * counted ones (the overflow set): every name made is new, and the name space's used set is
 * exactly the names made. */
Test(ir_compact, used_names_match_model)
{
    static const char *pool[] = {"add", "add_1", "add_5", "add_63", "add_64", "add_65", "add_130", "add_200",
                                 "add_900000", "add_900001", "add_0", "add_07", "relu", "relu_3", "sum",
                                 "sum_2", "x", "x_1"};
    enum { NPOOL = sizeof pool / sizeof *pool };
    cfx_names *ns = cfx_names_new(NULL);
    name_model made = {calloc(1 << 17, sizeof(char *)), 0, 1 << 17};
    cr_assert(made.s);
    uint64_t rng = 12345;
    for (int step = 0; step < 1500; step++) {
        int r = (int)(test_rand(&rng) >> 33);
        /* mostly default candidates, in bursts */
        const char *c = (r % 10 < 7) ? pool[(r >> 4) % 2 ? 0 : 12] : pool[(r >> 4) % NPOOL];
        int burst = r % 10 < 7 ? 1 + (r >> 8) % 40 : 1;
        for (int k = 0; k < burst; k++) {
            cfx_name nm;
            cr_assert_eq(cfx_names_create(ns, c, CFX_NAME_FOR_NONE, &nm), CFX_OK);
            char *s = cfx_name_to_string(nm);
            cr_assert(s);
            cr_assert(!model_has(&made, s), "step %d: %s made twice", step, s);
            model_add(&made, s);
        }
    }
    for (int i = 0; i < made.cap; i++)
        if (made.s[i])
            cr_assert(cfx_names_is_used_str(ns, made.s[i]), "%s", made.s[i]);
    /* probes around what was made */
    char probe[64];
    int unused = 0;
    for (int i = 0; i < 40000; i++) {
        snprintf(probe, sizeof probe, "add_%d", i);
        bool want = model_has(&made, probe);
        cr_assert_eq(cfx_names_is_used_str(ns, probe), want, "%s", probe);
        unused += !want;
        snprintf(probe, sizeof probe, "relu_%d", i);
        cr_assert_eq(cfx_names_is_used_str(ns, probe), model_has(&made, probe), "%s", probe);
    }
    cr_expect_gt(unused, 0);
    for (int i = 0; i < made.cap; i++)
        free(made.s[i]);
    free(made.s);
    cfx_names_free(ns);
}

/* Beyond the largest suffix a name key holds, names are bases of their own. */
Test(ir_compact, names_past_max_suffix)
{
    cfx_names *ns = cfx_names_new(NULL);
    const char *want[] = {"add", "add_999999998", "add_999999999", "add_1000000000", "add_1000000001"};
    const char *cand[] = {"add", "add_999999998", "add", "add", "add"};
    for (int i = 0; i < 5; i++) {
        cfx_name nm;
        cr_assert_eq(cfx_names_create(ns, cand[i], CFX_NAME_FOR_NONE, &nm), CFX_OK);
        char *s = cfx_name_to_string(nm);
        cr_expect_str_eq(s, want[i]);
        free(s);
        cr_expect(cfx_names_is_used_str(ns, want[i]));
        cr_expect_eq(nm.suffix >= 0, i == 1 || i == 2);
    }
    cfx_names_free(ns);
}

/* A graph's default names and an explicit one beyond them: the counter follows FX, the used
 * set keeps every name, the bitset grows with the names. */
Test(ir_compact, names_in_graph)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < 100; i++)
        cr_assert(OP(g, "aten::add.Tensor", NV(x), NV(x)));
    cfx_node *e = OPN(g, "aten::add.Tensor", "add_150", NV(x), NV(x));
    cr_assert(e);
    cfx_node *f = OP(g, "aten::add.Tensor", NV(x), NV(x));
    char *s = nname(f);
    cr_expect_str_eq(s, "add_151");
    free(s);
    cr_expect(cfx_names_is_used_str(cfx_graph_names(g), "add_50"));
    cr_expect(!cfx_names_is_used_str(cfx_graph_names(g), "add_120"));
    cfx_node *h = OPN(g, "aten::add.Tensor", "add_120", NV(x), NV(x));
    s = nname(h);
    cr_expect_str_eq(s, "add_120");
    free(s);
    s = nname(OP(g, "aten::add.Tensor", NV(x), NV(x)));
    cr_expect_str_eq(s, "add_121"); /* FX: the counter is 120 now */
    free(s);
    cfx_graph_free(g);
}
