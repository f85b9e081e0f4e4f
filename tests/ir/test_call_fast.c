/* test_call_fast.c - cfx_graph_create_node's fast path (cfx_graph_call_target) against the
 * general path (cfx_graph_create_node_general), node for node.
 *
 * The fast path takes call_function nodes with flat args appended at the end; it checks
 * everything but the args before it changes anything, and takes back what it did when an
 * arg turns out not to be flat. Each test builds the same graph twice, once through
 * cfx_graph_create_node (fast whenever it can be) and once through the general path only,
 * and compares everything observable: printed graph, names, users and inputs in order with
 * their use record ids, node count, meta; then checks both with lint. The scripts mix what
 * the fast path takes with every reason it has to fall back. */
#include <criterion/criterion.h>

#include "ir/internal.h"
#include "ir/istr.h"
#include "ir/meta.h"
#include "tests/ir/ir_test_util.h"

/* create_node through the inline entry (fast when it can be) or the general path only. */
static cfx_node *mk(cfx_graph *g, bool general, cfx_node_op op, cfx_target t, const cfx_value *args, uint32_t n,
                    const cfx_kwarg *kw, uint32_t nk, const char *name)
{
    if (general)
        return cfx_graph_create_node_general(g, op, t, args, n, kw, nk, name);
    return cfx_graph_create_node(g, op, t, args, n, kw, nk, name);
}

static cfx_node *call(cfx_graph *g, bool general, const char *qn, const cfx_value *args, uint32_t n)
{
    return mk(g, general, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op(qn)), args, n, NULL, 0, NULL);
}

/* Printed graph, links with use ids, node counts, and every node's meta records. */
static char *render(cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    graph_render_into(g, &b);
    cfx_buf_printf(&b, "nodes=%u created=%u uses=%u\n", cfx_graph_num_nodes(g), cfx_graph_num_created(g),
                   g->n_uses);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        const cfx_tensor_meta *tm = cfx_node_tensor_meta(n);
        const cfx_meta_val *v = cfx_node_val(n);
        const cfx_site *s = cfx_node_stack_trace(n);
        cfx_node_print_name(n, &b);
        if (tm) {
            cfx_buf_puts(&b, " tm=");
            cfx_tensor_meta_print(tm, &b);
        }
        if (v)
            cfx_buf_printf(&b, " val(kind %d, n %d, off %lld)", v->kind, (int)v->n, (long long)v->storage_offset);
        if (s)
            cfx_buf_printf(&b, " site(%s:%d %s)", s->file, s->line, s->func ? s->func : "-");
        cfx_buf_putc(&b, '\n');
    }
    return cfx_buf_take(&b);
}

static void expect_same(cfx_graph *fast, cfx_graph *general)
{
    char *a = render(fast), *b = render(general);
    cr_expect_str_eq(a, b);
    cr_expect_eq(cfx_graph_lint(fast), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(cfx_graph_lint(general), CFX_OK, "%s", cfx_error_message());
    free(a);
    free(b);
}

static void tensor(cfx_tensor *t, int64_t rows, int64_t cols, cfx_dtype dt)
{
    memset(t, 0, sizeof *t);
    t->dtype = (int8_t)dt;
    t->ndim = 2;
    t->device = cfx_device_make(CFX_DEVICE_CPU);
    t->sizes = t->dims_inline;
    t->strides = t->dims_inline + CFX_INLINE_DIMS;
    t->sizes[0] = rows;
    t->sizes[1] = cols;
    t->strides[0] = cols;
    t->strides[1] = 1;
}

/* A tracer's script with every kind of step: flat calls of 0 to 4 args (nodes, ints,
 * doubles, None, bools, dtypes, duplicates), calls whose args fail after some are linked
 * (a string, a list, a node of another graph, a NULL node), kwargs, explicit names that
 * take the next default name, a function target, other ops, an insertion point moved and
 * restored, and meta set on every result. */
static cfx_graph *script(bool general, cfx_graph *other)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = mk(g, general, CFX_NODE_PLACEHOLDER, cfx_target_str("x"), NULL, 0, NULL, 0, NULL);
    cfx_node *y = mk(g, general, CFX_NODE_PLACEHOLDER, cfx_target_str("y"), NULL, 0, NULL, 0, NULL);
    cfx_node *foreign = cfx_graph_placeholder(other, "f");
    cfx_tensor t2, t3;
    tensor(&t2, 4, 8, CFX_FLOAT32);
    tensor(&t3, 2, 3, CFX_FLOAT64);
    cfx_device meta_dev = cfx_device_make(CFX_DEVICE_META);
    static const cfx_site s1 = {"model.c", 1, "forward"}, s2 = {"model.c", 2, "forward"};
    cfx_node *prev = x;
    for (int i = 0; i < 700; i++) {
        cfx_node *n = NULL;
        switch (i % 14) {
        case 0:
            n = call(g, general, "aten::add.Tensor", VALS(NV(prev), NV(x)), 2);
            break;
        case 1:
            n = call(g, general, "aten::mul.Tensor", VALS(NV(prev), NV(y), cfx_int(2), NV(prev)), 4);
            break;
        case 2:
            n = call(g, general, "aten::relu", VALS(NV(prev)), 1);
            break;
        case 3: /* a string after two linked nodes: the fast path takes them back */
            n = call(g, general, "aten::div.Tensor_mode", VALS(NV(prev), NV(x), cfx_string("floor")), 3);
            break;
        case 4: /* a list: the same, the list's nodes then being inputs too */
            n = call(g, general, "aten::cat", VALS(NV(prev), LIST(NV(x), NV(y)), cfx_int(0)), 3);
            break;
        case 5: /* a node of another graph after one of this one (then replaced: lint refuses it) */
            n = call(g, general, "aten::add.Tensor", VALS(NV(prev), NV(foreign)), 2);
            cr_assert(n);
            cr_expect_eq(cfx_node_num_users(foreign), 1);
            cr_assert_eq(cfx_node_set_args(n, VALS(NV(prev), NV(y)), 2), CFX_OK);
            cr_expect_eq(cfx_node_num_users(foreign), 0);
            break;
        case 6: { /* a NULL node: refused, its name consumed, the slot reused */
            cfx_node *bad = call(g, general, "aten::add.Tensor", VALS(NV(prev), NV(x), cfx_node_value(NULL)), 3);
            cr_assert_null(bad);
            n = call(g, general, "aten::scalar_tensor", VALS(cfx_double(0.5), cfx_none(), cfx_bool(true)), 3);
            break;
        }
        case 7: { /* kwargs, then an explicit name that is the next default one */
            cfx_kwarg kw[] = {KW("alpha", cfx_int(2))};
            n = mk(g, general, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op("aten::add.Tensor")),
                   VALS(NV(prev), NV(y)), 2, kw, 1, NULL);
            char nm[32];
            snprintf(nm, sizeof nm, "relu_%d", i / 14 * 2 + 3);
            cr_assert(mk(g, general, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op("aten::relu")), VALS(NV(n)), 1,
                         NULL, 0, nm));
            break;
        }
        case 8: /* a function target; no args at all */
            n = mk(g, general, CFX_NODE_CALL_FUNCTION, cfx_target_fn(&cfx_fn_getitem), VALS(NV(prev), cfx_int(0)),
                   2, NULL, 0, NULL);
            cr_assert(call(g, general, "aten::empty_like_noargs", VALS(cfx_none()), 0));
            break;
        case 9: { /* inserted before the last node, then at the end again */
            cfx_insert_point old = cfx_graph_inserting_before(g, prev);
            cr_assert(call(g, general, "aten::neg", VALS(NV(x)), 1));
            cfx_graph_set_insert_point(g, old);
            n = call(g, general, "aten::neg", VALS(NV(prev)), 1);
            break;
        }
        case 10: /* call_method and get_attr: string targets */
            n = mk(g, general, CFX_NODE_CALL_METHOD, cfx_target_str("view"), VALS(NV(prev), cfx_int(-1)), 2, NULL, 0,
                   NULL);
            cr_assert(mk(g, general, CFX_NODE_GET_ATTR, cfx_target_str("weight"), NULL, 0, NULL, 0, NULL));
            break;
        case 11: /* the same node four times, scalar kinds between */
            n = call(g, general, "aten::where.self",
                     VALS(NV(prev), cfx_dtype_value(CFX_FLOAT64), NV(prev), cfx_device_value(meta_dev), NV(prev),
                          cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT), cfx_layout_value(0), NV(prev)),
                     8);
            break;
        case 12: /* many args: runs that need a new block of use records */
            n = call(g, general, "aten::stack_many",
                     VALS(NV(prev), NV(x), NV(y), cfx_int(1), cfx_int(2), cfx_int(3), cfx_int(4), cfx_int(5),
                          cfx_int(6), cfx_int(7), cfx_int(8), cfx_int(9), cfx_int(10), cfx_int(11)),
                     14);
            break;
        default:
            n = call(g, general, "aten::sigmoid", VALS(NV(prev)), 1);
            break;
        }
        cr_assert(n, "step %d: %s", i, cfx_error_message());
        /* meta as the tracer sets it: two sites, two shapes */
        cr_assert_eq(cfx_node_set_result_meta(n, i % 2 ? &s1 : &s2, i % 3 ? &t2 : &t3, i % 5 ? &meta_dev : NULL,
                                              false),
                     CFX_OK);
        prev = n;
    }
    cr_assert(mk(g, general, CFX_NODE_OUTPUT, cfx_target_str("output"), VALS(NV(prev)), 1, NULL, 0, NULL));
    return g;
}

Test(ir_call_fast, mixed_script_same_both_ways)
{
    cfx_graph *o1 = cfx_graph_new(), *o2 = cfx_graph_new();
    cfx_graph *fast = script(false, o1), *general = script(true, o2);
    expect_same(fast, general);
    cr_expect_gt(cfx_graph_num_created(fast), 900);
    cfx_graph_free(fast);
    cfx_graph_free(general);
    cfx_graph_free(o1);
    cfx_graph_free(o2);
}

/* Node blocks (128), use blocks (512) and arena chunks end in the middle of a run of fast
 * nodes: each boundary takes the general path once and the fast path again after it. */
Test(ir_call_fast, block_boundaries)
{
    cfx_graph *g[2];
    for (int k = 0; k < 2; k++) {
        g[k] = cfx_graph_new();
        cfx_node *x = cfx_graph_placeholder(g[k], "x"), *prev = x;
        for (int i = 0; i < 5000; i++) {
            uint32_t n = (uint32_t)(i % 7);
            cfx_value a[7];
            for (uint32_t j = 0; j < n; j++)
                a[j] = j % 2 ? NV(x) : cfx_int(j);
            if (n)
                a[0] = NV(prev);
            prev = call(g[k], k == 1, i % 2 ? "aten::add.Tensor" : "aten::relu", a, n);
            cr_assert(prev);
        }
    }
    expect_same(g[0], g[1]);
    cfx_graph_free(g[0]);
    cfx_graph_free(g[1]);
}

/* The first node of a graph (nothing to link after) and a graph whose last node was erased. */
Test(ir_call_fast, empty_graph_and_erased_tail)
{
    cfx_graph *g[2];
    for (int k = 0; k < 2; k++) {
        g[k] = cfx_graph_new();
        cfx_node *a = call(g[k], k, "aten::ones", VALS(cfx_int(3)), 1);
        cfx_node *b = call(g[k], k, "aten::relu", VALS(NV(a)), 1);
        cfx_node *c = call(g[k], k, "aten::relu", VALS(NV(b)), 1);
        cr_assert_eq(cfx_graph_erase_node(g[k], c), CFX_OK);
        cr_assert(call(g[k], k, "aten::relu", VALS(NV(b), NV(a)), 2));
        cr_assert(call(g[k], k, "aten::relu", VALS(NV(a)), 1));
    }
    expect_same(g[0], g[1]);
    cfx_graph_free(g[0]);
    cfx_graph_free(g[1]);
}

/* A target without a kind is refused with a message, not taken for the target cache's empty
 * record (whose pointer is NULL and kind NONE too), on every entry and whatever the cache
 * holds; so are other malformed targets. */
Test(ir_call_fast, target_without_kind)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_target none = {CFX_TARGET_NONE, {.op = NULL}};
    for (int round = 0; round < 2; round++) {
        cfx_error_clear();
        cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, none, VALS(NV(x)), 1, NULL, 0, NULL));
        cr_expect_str_eq(cfx_error_message(), "node target has no kind");
        cfx_error_clear();
        cr_expect_null(cfx_graph_call_target(g, none, NULL, 0));
        cr_expect_str_eq(cfx_error_message(), "node target has no kind");
        cfx_error_clear();
        cr_expect_null(cfx_graph_create_node_general(g, CFX_NODE_CALL_FUNCTION, none, NULL, 0, NULL, 0, NULL));
        cr_expect_str_eq(cfx_error_message(), "node target has no kind");
        cfx_error_clear();
        cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, (cfx_target){99, {.op = NULL}}, NULL, 0,
                                             NULL, 0, NULL));
        cr_expect_str_eq(cfx_error_message(), "node target has no kind");
        /* fill the cache for the second round */
        for (int i = 0; i < 40; i++) {
            char qn[32];
            snprintf(qn, sizeof qn, "aten::op%d", i);
            cr_assert(OP(g, qn, NV(x)));
        }
    }
    /* a string target on call_function: FX's error, from the general path */
    cfx_error_clear();
    cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_str("relu"), NULL, 0, NULL, 0, NULL));
    cr_expect(cfx_error_message() && strstr(cfx_error_message(), "but a Callable is expected"));
    /* no graph, no args where there are some */
    cr_expect_null(cfx_graph_call_target(NULL, cfx_target_op(test_op("aten::relu")), NULL, 0));
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cr_expect_eq(cfx_node_num_users(x), 80);
    cfx_graph_free(g);
}

/* A result without val, of dtype 0 and rank 0, with no site, in a fresh graph: the result
 * cache's empty slot must not pass for its record. */
Test(ir_call_fast, result_meta_empty_slot)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = 0;
    t.ndim = 0;
    t.sizes = t.strides = t.dims_inline;
    cfx_node *n = OP(g, "aten::sum", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(n, NULL, &t, NULL, false), CFX_OK);
    cr_assert(cfx_node_tensor_meta(n));
    cr_expect_eq(cfx_node_tensor_meta(n)->ndim, 0);
    cr_expect_eq(cfx_node_tensor_meta(n)->dtype, 0);
    cr_expect_null(cfx_node_val(n));
    /* and the second one hits the record the first one made */
    cfx_node *m = OP(g, "aten::sum", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(m, NULL, &t, NULL, false), CFX_OK);
    cr_expect_eq(cfx_node_tensor_meta(m), cfx_node_tensor_meta(n));
    cfx_graph_free(g);
}

/* nslot_fast_end (one compare for: nodes go to the end, the list is not empty, the node
 * block has room) says what those three say after every kind of change: the first node, the
 * list emptied by erasing and filled again, the insertion point moved and put back, node
 * blocks filled. And the graphs come out the same both ways. */
static void expect_fast_end(cfx_graph *g)
{
    cfx_node *want = ir_inserts_at_end(g) && g->root.prev != CFX_NODE_ROOT_SEQ ? g->nslot_end : NULL;
    cr_expect_eq(g->nslot_fast_end, want);
}

Test(ir_call_fast, fast_window_follows_list_and_insert_point)
{
    cfx_graph *g[2];
    for (int k = 0; k < 2; k++) {
        cfx_graph *h = g[k] = cfx_graph_new();
        expect_fast_end(h);
        cfx_node *nodes[400];
        int n = 0;
        for (int round = 0; round < 3; round++) {
            /* fill past a node block, checking as we go */
            for (int i = 0; i < 150; i++) {
                cfx_value a[2] = {n ? NV(nodes[n - 1]) : cfx_int(i), cfx_int(i)};
                cfx_node *x = call(h, k, i % 2 ? "aten::add.Tensor" : "aten::relu", a, 2);
                cr_assert(x);
                if (n < 400)
                    nodes[n++] = x;
                expect_fast_end(h);
            }
            /* nodes inserted elsewhere, then at the end again */
            cfx_insert_point old = cfx_graph_inserting_before(h, nodes[n / 2]);
            expect_fast_end(h);
            cr_assert(call(h, k, "aten::relu", VALS(cfx_int(1)), 1));
            cfx_graph_inserting_after(h, nodes[n / 3]);
            expect_fast_end(h);
            cr_assert(call(h, k, "aten::relu", VALS(cfx_int(2)), 1));
            cfx_graph_set_insert_point(h, old);
            expect_fast_end(h);
            /* empty the list (users first) */
            for (cfx_node *x = cfx_graph_last(h); x; x = cfx_graph_last(h)) {
                cr_assert_eq(cfx_graph_erase_node(h, x), CFX_OK);
                expect_fast_end(h);
            }
            n = 0;
        }
        cr_assert(call(h, k, "aten::relu", VALS(cfx_int(3)), 1));
        expect_fast_end(h);
    }
    expect_same(g[0], g[1]);
    cfx_graph_free(g[0]);
    cfx_graph_free(g[1]);
}

/* Targets whose default name the inline case may not give (a numeric suffix, a reserved
 * word) carry a fast_base that ir_names_next refuses: the fast entry names them through the
 * loop, as the general path does. */
Test(ir_call_fast, targets_not_named_inline)
{
    static const char *const qns[] = {"aten::foo_1", "aten::for", "aten::add.Tensor", "aten::bar_0", "aten::None"};
    cfx_graph *g[2];
    for (int k = 0; k < 2; k++) {
        g[k] = cfx_graph_new();
        cfx_node *x = cfx_graph_placeholder(g[k], "x");
        for (int i = 0; i < 60; i++)
            cr_assert(call(g[k], k, qns[i % 5], VALS(NV(x)), 1));
    }
    for (uint32_t i = 0; i < g[0]->tinfo_count; i++) {
        const cfx_target_info *t = g[0]->targets[i];
        if (ir_names_fast_candidate(&t->cand))
            cr_expect_eq(t->fast_base, t->cand.base);
        else
            cr_expect_eq(ir_istr_of(t->fast_base)->fast_num, 0);
    }
    expect_same(g[0], g[1]);
    cfx_graph_free(g[0]);
    cfx_graph_free(g[1]);
}
