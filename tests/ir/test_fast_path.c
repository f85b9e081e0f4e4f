/* test_fast_path.c - the tracing hot path gives what the general path gives.
 *
 * create_node takes a fast path for flat args (ir/args_flat.h), names by create_name's common
 * case inline (ir/istr.h), and cfx_node_set_result_meta keeps a per-site cache; each falls
 * back to the general code when its preconditions fail. These tests build the same things
 * both ways and compare everything observable (printed graph, users and inputs in order, use
 * record ids, names, meta records), and drive every fallback. */
#include <criterion/criterion.h>

#include "ir/internal.h"
#include "ir/meta.h"
#include "ir/rodata.h"
#include "tests/ir/ir_test_util.h"

/* Both renderings of g, concatenated. */
static char *render(cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    graph_render_into(g, &b);
    return cfx_buf_take(&b);
}

/* One node built two ways: fast (args at creation) or general (created bare, args set after:
 * ir_copy_args_kwargs + ir_rebuild_inputs). */
static cfx_node *call(cfx_graph *g, bool general, const char *qn, const cfx_value *args, uint32_t n)
{
    const cfx_op *op = test_op(qn);
    if (!general)
        return cfx_graph_call_op(g, op, args, n, NULL, 0);
    cfx_node *node = cfx_graph_call_op(g, op, NULL, 0, NULL, 0);
    cr_assert(node);
    cr_assert_eq(cfx_node_set_args(node, args, n), CFX_OK);
    return node;
}

/* A graph exercising duplicates, scalars of every flat kind, producers with and without
 * users, and enough distinct inputs per node that use runs straddle the 512-record blocks. */
static cfx_graph *build(bool general)
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
            n = call(g, general, "aten::add.Tensor", VALS(NV(prev), NV(x)), 2);
            break;
        case 1: /* duplicates, scalars between them */
            n = call(g, general, "aten::foo", VALS(NV(prev), cfx_int(3), NV(prev), cfx_double(0.5), NV(x), NV(prev)), 6);
            break;
        case 2: /* three distinct inputs: runs of 3 cross block boundaries */
            n = call(g, general, "aten::addcmul", VALS(NV(prev), NV(y), NV(z), cfx_bool(true)), 4);
            break;
        case 3:
            n = call(g, general, "aten::to",
                     VALS(NV(prev), cfx_dtype_value(CFX_FLOAT64), cfx_device_value(cfx_device_make(CFX_DEVICE_CPU)),
                          cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT), cfx_layout_value(0), cfx_none()),
                     6);
            break;
        default: /* no node at all, then the same node as every arg */
            call(g, general, "aten::scalar_tensor", VALS(cfx_double(1.0)), 1);
            n = call(g, general, "aten::relu", VALS(NV(prev), NV(prev), NV(prev)), 3);
            break;
        }
        cr_assert(n);
        prev = n;
    }
    cfx_graph_output(g, NV(prev));
    return g;
}

Test(ir_fast_path, same_graph_both_ways)
{
    cfx_graph *fast = build(false), *general = build(true);
    char *a = render(fast), *b = render(general);
    cr_expect_str_eq(a, b);
    cr_expect_eq(cfx_graph_lint(fast), CFX_OK);
    cr_expect_eq(fast->n_uses, general->n_uses);
    /* runs never straddle a block of use records, and some skipped to the next one */
    int straddling = 0, at_block_start = 0;
    for (cfx_node *n = cfx_graph_first(fast); n; n = cfx_node_next(n)) {
        uint32_t low = n->inputs & ((1u << IR_USE_SHIFT) - 1);
        straddling += n->n_inputs && low + n->n_inputs > (1u << IR_USE_SHIFT);
        at_block_start += n->n_inputs && low == 0;
    }
    cr_expect_eq(straddling, 0);
    cr_expect_gt(at_block_start, 0);
    free(a);
    free(b);
    cfx_graph_free(fast);
    cfx_graph_free(general);
}

Test(ir_fast_path, duplicates_and_order)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node *a = OP(g, "aten::foo", NV(y), cfx_int(1), NV(x), NV(y), NV(x), cfx_none(), NV(y));
    cr_assert(a);
    cr_expect_eq(cfx_node_num_args(a), 7);
    cr_expect_eq(cfx_node_num_inputs(a), 2);
    cr_expect_eq(cfx_node_input(a, 0), y);
    cr_expect_eq(cfx_node_input(a, 1), x);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_node_num_users(y), 1);
    cr_expect_eq(cfx_node_arg(a, 1).u.i, 1);
    cfx_node *b = OP(g, "aten::foo", NV(x), NV(y));
    cfx_user_iter it;
    cr_expect_eq(cfx_node_first_user(x, &it), a);
    cr_expect_eq(cfx_node_next_user(&it), b);
    cr_expect_null(cfx_node_next_user(&it));
    /* args of the fast path are the node's own copy */
    cfx_value args[2] = {NV(x), NV(y)};
    cfx_node *c = cfx_graph_call_op(g, test_op("aten::foo"), args, 2, NULL, 0);
    args[0] = cfx_int(7);
    cr_expect_eq(cfx_node_arg(c, 0).u.node, x);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* erasing a fast-path node drops its uses */
    cr_assert_eq(cfx_graph_erase_node(g, c), CFX_OK);
    cr_assert_eq(cfx_graph_erase_node(g, b), CFX_OK);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cfx_graph_free(g);
}

/* Node references into another graph are cross-graph uses: the general path's business. */
Test(ir_fast_path, foreign_nodes_fall_back)
{
    cfx_graph *g1 = cfx_graph_new(), *g2 = cfx_graph_new();
    cfx_node *p = cfx_graph_placeholder(g1, "p");
    cfx_node *q = cfx_graph_placeholder(g2, "q");
    cfx_node *a = OP(g2, "aten::add.Tensor", NV(q), NV(p));
    cr_assert(a);
    cr_expect(g2->has_foreign_uses);
    cr_expect_eq(cfx_node_num_inputs(a), 2);
    cr_expect_eq(cfx_node_input(a, 0), q);
    cr_expect_eq(cfx_node_input(a, 1), p);
    cfx_user_iter it;
    cr_expect_eq(cfx_node_first_user(p, &it), a);
    cr_expect_eq(cfx_node_num_users(p), 1);
    cr_expect_eq(cfx_node_num_users(q), 1);
    cfx_graph_free(g2); /* takes its use out of p's users */
    cr_expect_eq(cfx_node_num_users(p), 0);
    cfx_graph_free(g1);
}

/* Strings, lists, tuples, kwargs, NULL nodes: each takes the general path and gives what it
 * always gave; 20 flat args take the fast path (test_compact.c compares counts up to a use
 * block's worth with the general path). */
Test(ir_fast_path, non_flat_args_fall_back)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    char s[] = "mode";
    cfx_node *a = OP(g, "aten::foo", NV(x), cfx_string(s), LIST(NV(y), NV(x)), TUPLE(), NV(y));
    cr_assert(a);
    s[0] = 'X';
    cr_expect_str_eq(cfx_node_arg(a, 1).u.s, "mode");
    cr_expect_eq(cfx_node_num_inputs(a), 2);
    cr_expect_eq(cfx_node_input(a, 0), x);
    cr_expect_eq(cfx_node_input(a, 1), y);
    cfx_kwarg kw[] = {KW("other", NV(y))};
    cfx_node *b = OPK(g, "aten::foo", kw, 1, NV(x));
    cr_expect_eq(cfx_node_num_inputs(b), 2);
    cr_expect_eq(cfx_node_num_kwargs(b), 1);
    cr_expect_eq(cfx_node_kwarg(b, "other")->u.node, y);
    cfx_value many[20];
    for (int i = 0; i < 20; i++)
        many[i] = i % 3 ? NV(i % 2 ? x : y) : cfx_int(i);
    cfx_node *c = cfx_graph_call_op(g, test_op("aten::foo"), many, 20, NULL, 0);
    cr_assert(c);
    cr_expect_eq(cfx_node_num_args(c), 20);
    cr_expect_eq(cfx_node_num_inputs(c), 2);
    cr_expect_eq(cfx_node_input(c, 0), x);
    cr_expect_eq(cfx_node_input(c, 1), y);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* a NULL node: an earlier call failed; no node, no new message, the slot is reused */
    uint32_t made = cfx_graph_num_created(g);
    cfx_error_clear();
    cr_expect_null(OP(g, "aten::foo", NV(x), cfx_node_value(NULL)));
    cr_expect_null(cfx_error_message());
    cr_expect_eq(cfx_graph_num_created(g), made);
    cr_expect_eq(cfx_node_num_users(x), 3);
    cfx_node *d = OP(g, "aten::foo", NV(x));
    cr_expect_eq(cfx_graph_num_created(g), made + 1);
    cr_expect_eq(cfx_node_num_users(x), 4);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    (void)d;
    cfx_graph_free(g);
}

/* Default names (create_node's inline fast path) interleaved with explicit ones (the full
 * loop) must follow FX 2.x exactly: the counter never goes back, a taken next suffix is
 * skipped, reserved words get a suffix, suffixes far out live in the overflow set. The
 * expectation is the same sequence replayed through cfx_names_create, which the golden
 * tables pin to torch.fx. */
Test(ir_fast_path, names_match_create_name)
{
    const char *seq[] = {"add", "add", "add_3", "add", "add", "add_7", "add", "add_5", "add", "add",
                         "add", "add_900000", "add", "add", "sum", "sum", "sum_1", "sum", "relu_", "relu_",
                         NULL};
    cfx_graph *g = cfx_graph_new();
    cfx_names *ns = cfx_names_new(NULL);
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_name expect;
    cr_assert_eq(cfx_names_create(ns, "x", CFX_NAME_FOR_NONE, &expect), CFX_OK);
    for (int i = 0; seq[i]; i++) {
        const char *c = seq[i];
        bool explicit_name = strchr(c, '_') && c[strlen(c) - 1] != '_';
        /* a default name comes from the target: aten::<c> */
        char qn[64];
        snprintf(qn, sizeof qn, "aten::%s", explicit_name ? "add" : c);
        cfx_node *n = op_call(g, qn, explicit_name ? c : NULL, VALS(NV(x)), 1, NULL, 0);
        cr_assert(n, "%s", c);
        cr_assert_eq(cfx_names_create(ns, c, CFX_NAME_FOR_NONE, &expect), CFX_OK);
        char *got = nname(n), *want = cfx_name_to_string(expect);
        cr_expect_str_eq(got, want, "step %d (%s)", i, c);
        free(got);
        free(want);
    }
    cfx_names_free(ns);
    cfx_graph_free(g);
}

/* ---- cfx_node_set_result_meta ---------------------------------------------------------- */

static void tensor(cfx_tensor *t, const int64_t *sizes, const int64_t *strides, int nd, cfx_dtype dt, int64_t off)
{
    memset(t, 0, sizeof *t);
    t->dtype = (int8_t)dt;
    t->ndim = (int8_t)nd;
    t->device = cfx_device_make(CFX_DEVICE_CPU);
    t->storage_offset = off;
    t->sizes = t->dims_inline;
    t->strides = t->dims_inline + CFX_INLINE_DIMS;
    if (nd) {
        memcpy(t->sizes, sizes, nd * sizeof *sizes);
        memcpy(t->strides, strides, nd * sizeof *strides);
    }
}

/* set_result_meta(n, ...) and the three setters on m give the same meta. */
static void expect_same_meta(cfx_node *n, cfx_node *m)
{
    cr_expect_eq(cfx_node_val(n), cfx_node_val(m));
    cr_expect_eq(cfx_node_tensor_meta(n), cfx_node_tensor_meta(m));
    cr_expect_eq(cfx_node_stack_trace(n), cfx_node_stack_trace(m));
    cr_expect_eq(cfx_node_meta_count(n), cfx_node_meta_count(m));
}

static void three_setters(cfx_node *m, const cfx_site *site, const cfx_tensor *t, const cfx_device *dev, bool rg)
{
    if (site)
        cr_assert_eq(cfx_node_set_stack_trace(m, site), CFX_OK);
    if (dev) {
        cfx_meta_val v = {.kind = CFX_MVAL_TENSOR, .dtype = t->dtype, .device = *dev, .n = t->ndim,
                          .sizes = t->sizes, .strides = t->strides, .storage_offset = t->storage_offset};
        cr_assert_eq(cfx_node_set_val(m, &v), CFX_OK);
    }
    cr_assert_eq(cfx_node_set_tensor_meta_from_tensor(m, t, rg), CFX_OK);
}

Test(ir_fast_path, result_meta_equals_three_setters)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t s2[2] = {64, 64}, st2[2] = {64, 1}, s4[4] = {2, 3, 4, 5}, st4[4] = {60, 1, 15, 3};
    cfx_tensor t2, t4, t0;
    tensor(&t2, s2, st2, 2, CFX_FLOAT32, 0);
    tensor(&t4, s4, st4, 4, CFX_FLOAT64, 7);
    tensor(&t0, NULL, NULL, 0, CFX_INT64, 0);
    cfx_device meta_dev = cfx_device_make(CFX_DEVICE_META), cpu = cfx_device_make(CFX_DEVICE_CPU);
    static const cfx_site s1 = {"model.c", 10, "forward"}, s2b = {"model.c", 11, "forward"};
    struct {
        const cfx_site *site;
        const cfx_tensor *t;
        const cfx_device *dev;
        bool rg;
    } cases[] = {
        {&s1, &t2, &meta_dev, false}, {&s1, &t2, &meta_dev, false}, /* the second one hits */
        {&s1, &t4, &meta_dev, false}, {&s1, &t2, &cpu, false},      /* same site, other key */
        {&s1, &t2, &meta_dev, true},  {&s1, &t2, NULL, false},      /* requires_grad; no val */
        {&s2b, &t2, &meta_dev, false}, {NULL, &t2, &meta_dev, false}, {NULL, &t2, &meta_dev, false},
        {&s1, &t0, &meta_dev, false}, {&s1, &t0, &meta_dev, false}, /* rank 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfx_node *n = OP(g, "aten::relu", NV(x));
        cfx_node *m = OP(g, "aten::relu", NV(x));
        cr_assert_eq(cfx_node_set_result_meta(n, cases[i].site, cases[i].t, cases[i].dev, cases[i].rg), CFX_OK);
        three_setters(m, cases[i].site, cases[i].t, cases[i].dev, cases[i].rg);
        expect_same_meta(n, m);
        cr_expect_eq(cfx_node_val(n) != NULL, cases[i].dev != NULL);
        cr_expect_eq(cfx_node_stack_trace(n) != NULL, cases[i].site != NULL);
        cr_expect_eq(cfx_node_tensor_meta(n)->requires_grad, cases[i].rg);
    }
    /* a changed shape in the same tensor header is seen */
    cfx_node *n = OP(g, "aten::relu", NV(x));
    t2.sizes[1] = 32;
    t2.strides[0] = 32;
    cr_assert_eq(cfx_node_set_result_meta(n, &s1, &t2, &meta_dev, false), CFX_OK);
    cr_expect_eq(cfx_node_val(n)->sizes[1], 32);
    cr_expect_eq(cfx_node_tensor_meta(n)->stride[0], 32);
    t2.storage_offset = 5;
    cr_assert_eq(cfx_node_set_result_meta(n = OP(g, "aten::relu", NV(x)), &s1, &t2, &meta_dev, false), CFX_OK);
    cr_expect_eq(cfx_node_val(n)->storage_offset, 5);
    cfx_graph_free(g);
}

/* Meta already on the node: only the slots given change, in place for a private record. */
Test(ir_fast_path, result_meta_on_existing_meta)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t s[2] = {2, 3}, st[2] = {3, 1};
    cfx_tensor t;
    tensor(&t, s, st, 2, CFX_FLOAT32, 0);
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    static const cfx_site a = {"a.c", 1, "f"}, b = {"b.c", 2, "g"};
    /* shared record: the site stays when none is given */
    cfx_node *n = OP(g, "aten::relu", NV(x)), *m = OP(g, "aten::relu", NV(x));
    cr_assert_eq(cfx_node_set_stack_trace(n, &a), CFX_OK);
    cr_assert_eq(cfx_node_set_stack_trace(m, &a), CFX_OK);
    cr_assert_eq(cfx_node_set_result_meta(n, NULL, &t, &dev, false), CFX_OK);
    three_setters(m, NULL, &t, &dev, false);
    expect_same_meta(n, m);
    cr_expect_str_eq(cfx_node_stack_trace(n)->file, "a.c");
    /* private record (a free-form entry): slots set in place, the entry kept */
    cr_assert_eq(cfx_node_meta_set(n, "k", cfx_int(1)), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(m, "k", cfx_int(1)), CFX_OK);
    cr_assert_eq(cfx_node_set_result_meta(n, &b, &t, NULL, true), CFX_OK);
    three_setters(m, &b, &t, NULL, true);
    expect_same_meta(n, m);
    cr_expect_str_eq(cfx_node_stack_trace(n)->file, "b.c");
    cr_expect_eq(cfx_node_meta_get(n, "k")->u.i, 1);
    cr_expect(cfx_node_tensor_meta(n)->requires_grad);
    /* errors set nothing */
    cfx_tensor bad = t;
    bad.ndim = -1;
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_result_meta(n, &a, &bad, &dev, false), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "val: bad tensor rank -1");
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_result_meta(n, &a, &bad, NULL, false), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "tensor_meta: bad rank -1");
    cfx_error_clear();
    cr_expect_str_eq(cfx_node_stack_trace(n)->file, "b.c");
    cr_expect_eq(cfx_node_set_result_meta(NULL, &a, &t, NULL, false), CFX_ERR);
    cr_expect_eq(cfx_node_set_result_meta(n, &a, NULL, NULL, false), CFX_ERR);
    cfx_graph_free(g);
}

/* A site whose strings live in a buffer the caller rewrites: same pointers, new contents. The
 * cache must compare such strings by content (literals it may compare by address). */
Test(ir_fast_path, result_meta_site_buffer_rewritten)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t s[2] = {2, 3}, st[2] = {3, 1};
    cfx_tensor t;
    tensor(&t, s, st, 2, CFX_FLOAT32, 0);
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    char file[16] = "first.c", func[16] = "f";
    cfx_site site = {file, 3, func};
    cr_expect(!ir_str_is_readonly(file));
    cfx_node *a = OP(g, "aten::relu", NV(x)), *b = OP(g, "aten::relu", NV(x)), *c = OP(g, "aten::relu", NV(x));
    cfx_node *d = OP(g, "aten::relu", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(a, &site, &t, &dev, false), CFX_OK);
    cr_assert_eq(cfx_node_set_result_meta(b, &site, &t, &dev, false), CFX_OK);
    cr_expect_eq(cfx_node_stack_trace(b), cfx_node_stack_trace(a));
    memcpy(file, "other.c", 8);
    cr_assert_eq(cfx_node_set_result_meta(c, &site, &t, &dev, false), CFX_OK);
    cr_expect_str_eq(cfx_node_stack_trace(c)->file, "other.c");
    cr_expect_str_eq(cfx_node_stack_trace(a)->file, "first.c");
    func[0] = 'g';
    cr_assert_eq(cfx_node_set_result_meta(d, &site, &t, &dev, false), CFX_OK);
    cr_expect_str_eq(cfx_node_stack_trace(d)->func, "g");
    cr_expect_eq(cfx_node_val(d), cfx_node_val(a));
    cfx_graph_free(g);
}

Test(ir_fast_path, readonly_strings)
{
#if defined(__linux__) && defined(__GLIBC__)
    cr_expect(ir_str_is_readonly("a literal"));
    cr_expect(ir_str_is_readonly(__FILE__));
    cr_expect(ir_str_is_readonly(__func__));
#endif
    char buf[8] = "stack";
    cr_expect(!ir_str_is_readonly(buf));
    char *heap = strdup("heap");
    cr_expect(!ir_str_is_readonly(heap));
    free(heap);
    cr_expect(!ir_str_is_readonly(NULL));
}

/* The arena populates big chunks window by window: memory handed out far past the first
 * window, and by a dedicated chunk, is writable and keeps its contents. */
Test(ir_fast_path, arena_windows)
{
    cfx_arena a;
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

/* Misses of the inline check after the slot's site and key matched (other dims, another
 * storage offset: the slot goes to the full path), and ranks above 4 (the inline check leaves
 * them to the full path, which still finds the slot's record). Every result equals the three
 * setters', and equal results share one record. */
Test(ir_fast_path, result_meta_slot_misses)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    static const cfx_site s1 = {"model.c", 20, "forward"};
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    int64_t sa[2] = {4, 8}, sta[2] = {8, 1}, sb[2] = {4, 6}, stb[2] = {6, 1};
    int64_t s5[5] = {2, 3, 4, 5, 6}, st5[5] = {360, 120, 30, 6, 1};
    int64_t s6[6] = {1, 2, 3, 4, 5, 6}, st6[6] = {720, 360, 120, 30, 6, 1};
    cfx_tensor ta, tb, t5, t6;
    tensor(&ta, sa, sta, 2, CFX_FLOAT32, 0);
    tensor(&tb, sb, stb, 2, CFX_FLOAT32, 0);
    tensor(&t5, NULL, NULL, 0, CFX_FLOAT32, 0);
    t5.ndim = 5;
    t5.sizes = s5;
    t5.strides = st5;
    tensor(&t6, NULL, NULL, 0, CFX_FLOAT32, 0);
    t6.ndim = 6;
    t6.sizes = s6;
    t6.strides = st6;
    cfx_tensor ta_off = ta;
    ta_off.storage_offset = 3;
    const cfx_tensor *seq[] = {&ta, &tb, &ta, &ta_off, &ta, &t5, &t5, &t6, &t6, &t5, &ta};
    cfx_node *made[sizeof seq / sizeof *seq];
    for (int pass = 0; pass < 2; pass++) /* with a site, then without */
        for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
            const cfx_site *site = pass ? NULL : &s1;
            cfx_node *n = OP(g, "aten::relu", NV(x)), *m = OP(g, "aten::relu", NV(x));
            cr_assert_eq(cfx_node_set_result_meta(n, site, seq[i], &dev, false), CFX_OK);
            three_setters(m, site, seq[i], &dev, false);
            expect_same_meta(n, m);
            cr_expect_eq(n->meta, m->meta, "pass %d step %zu: one shared record", pass, i);
            if (!pass)
                made[i] = n;
        }
    cr_expect_eq(made[2]->meta, made[0]->meta);
    cr_expect_neq(made[1]->meta, made[0]->meta);
    cr_expect_neq(made[3]->meta, made[0]->meta);
    cr_expect_eq(cfx_node_val(made[3])->storage_offset, 3);
    cr_expect_eq(made[6]->meta, made[5]->meta);
    cr_expect_eq(made[9]->meta, made[5]->meta);
    cr_expect_neq(made[7]->meta, made[5]->meta);
    cr_expect_eq(cfx_node_val(made[8])->n, 6);
    cr_expect_eq(cfx_node_tensor_meta(made[8])->stride[0], 720);
    cr_expect_eq(made[10]->meta, made[0]->meta);
    /* a changed stride at rank 5 is seen by the full compare */
    st5[4] = 2;
    cfx_node *n = OP(g, "aten::relu", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(n, &s1, &t5, &dev, false), CFX_OK);
    cr_expect_neq(n->meta, made[5]->meta);
    cr_expect_eq(cfx_node_val(n)->strides[4], 2);
    cfx_graph_free(g);
}
