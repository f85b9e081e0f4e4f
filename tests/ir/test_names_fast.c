/* test_names_fast.c - ir_names_next (the tracer's naming fast path, ir/istr.h) names exactly
 * as create_name's full loop does, and its one-word summary (fast_num) always says what the
 * state it summarizes says.
 *
 * Two name spaces get the same candidates: one through cfx_names_create_prepared as it is
 * (fast path first), the other with the base's fast_num cleared before every call, so that
 * the loop (names.c) answers every time. The names must match; after every call, each
 * record's fast_num must equal what ir_istr_refresh computes from its state. */
#include <criterion/criterion.h>

#include "ir/internal.h"
#include "ir/istr.h"
#include "tests/ir/ir_test_util.h"

/* fast_num as ir_istr_refresh would set it now. */
static uint32_t summary_of(ir_istr *r)
{
    uint32_t was = r->fast_num;
    ir_istr_refresh(r);
    uint32_t want = r->fast_num;
    r->fast_num = was;
    return want;
}

static void check_summary(cfx_names *ns, const char *s)
{
    const char *in = cfx_names_find(ns, s, strlen(s));
    if (!in)
        return;
    ir_istr *r = ir_istr_of(in);
    cr_expect_eq(r->fast_num, summary_of(r), "fast_num of %s: %u, state says %u", s, r->fast_num, summary_of(r));
}

/* Creates c in both name spaces and compares. */
static void both(cfx_names *fast, cfx_names *loop, const char *c, int step)
{
    cfx_name_candidate cf, cl;
    cr_assert_eq(cfx_names_prepare(fast, c, strlen(c), &cf), CFX_OK);
    cr_assert_eq(cfx_names_prepare(loop, c, strlen(c), &cl), CFX_OK);
    ir_istr_of(cl.base)->fast_num = 0; /* the loop answers */
    cfx_name a, b;
    cr_assert_eq(cfx_names_create_prepared(fast, &cf, CFX_NAME_FOR_NONE, &a), CFX_OK);
    cr_assert_eq(cfx_names_create_prepared(loop, &cl, CFX_NAME_FOR_NONE, &b), CFX_OK);
    char *sa = cfx_name_to_string(a), *sb = cfx_name_to_string(b);
    cr_expect_str_eq(sa, sb, "step %d (%s)", step, c);
    free(sa);
    free(sb);
    check_summary(fast, cf.base);
    check_summary(fast, cf.whole);
    check_summary(fast, a.base);
}

Test(ir_names_fast, random_script_matches_loop)
{
    static const char *const pool[] = {"add", "add", "add", "add", "mul", "mul", "relu_", "sum", "add_1", "add_2",
                                       "add_7", "add_0", "mul_3", "sum_1", "for", "x", "x_1", "add_40", "mul_200",
                                       "_", "add_1_1"};
    const int n_pool = (int)(sizeof pool / sizeof *pool);
    cfx_names *fast = cfx_names_new(NULL), *loop = cfx_names_new(NULL);
    uint64_t s = 12345;
    for (int i = 0; i < 4000; i++) {
        both(fast, loop, pool[test_rand(&s) % (uint64_t)n_pool], i);
    }
    cfx_names_free(fast);
    cfx_names_free(loop);
}

/* Around the largest suffix a name keeps as a number: the fast path stops at it and the
 * loop interns the longer names. */
Test(ir_names_fast, largest_suffix)
{
    cfx_names *fast = cfx_names_new(NULL), *loop = cfx_names_new(NULL);
    const char *script[] = {"add", "add_999999997", "add", "add", "add", "add", "add_5", "add"};
    for (int i = 0; i < (int)(sizeof script / sizeof *script); i++)
        both(fast, loop, script[i], i);
    cfx_name n;
    cr_assert_eq(cfx_names_create(fast, "add", CFX_NAME_FOR_NONE, &n), CFX_OK);
    char *str = cfx_name_to_string(n);
    cr_expect_str_eq(str, "add_7"); /* FX: the explicit add_5 set the count back */
    free(str);
    cfx_names_free(fast);
    cfx_names_free(loop);
}

/* Graph level: nodes named by cfx_graph_call_target (fast) and by the general creator
 * (create_node, whose naming also tries ir_names_next first but the loop when the graph's
 * fast path is off: insertion point not at the end) give the same names, and a fallback after
 * naming (an arg that is not flat) takes the name back exactly. */
Test(ir_names_fast, graph_names_both_ways)
{
    for (int pass = 0; pass < 2; pass++) {
        cfx_graph *g = cfx_graph_new();
        cfx_names *ref = cfx_names_new(NULL);
        cfx_node *x = cfx_graph_placeholder(g, "x");
        cfx_name r;
        cr_assert_eq(cfx_names_create(ref, "x", CFX_NAME_FOR_NONE, &r), CFX_OK);
        for (int i = 0; i < 300; i++) {
            const cfx_op *op = test_op(i % 3 ? "aten::add.Tensor" : "aten::mul.Tensor");
            cfx_node *n;
            if (i % 7 == 3) /* a list arg: not flat, the fast path gives its name back */
                n = cfx_graph_call_op(g, op, VALS(NV(x), LIST(cfx_int(1))), 2, NULL, 0);
            else if (pass)
                n = cfx_graph_create_node_general(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(op), VALS(NV(x)), 1,
                                                  NULL, 0, NULL);
            else
                n = cfx_graph_call_op(g, op, VALS(NV(x)), 1, NULL, 0);
            cr_assert(n);
            cr_assert_eq(cfx_names_create(ref, i % 3 ? "add" : "mul", CFX_NAME_FOR_NONE, &r), CFX_OK);
            char *got = nname(n), *want = cfx_name_to_string(r);
            cr_expect_str_eq(got, want, "pass %d step %d", pass, i);
            free(got);
            free(want);
            if (i % 50 == 49) { /* an explicit name inside the run */
                char buf[32];
                snprintf(buf, sizeof buf, "add_%d", i + 3);
                cr_assert(op_call(g, "aten::add.Tensor", buf, VALS(NV(x)), 1, NULL, 0));
                cr_assert_eq(cfx_names_create(ref, buf, CFX_NAME_FOR_NONE, &r), CFX_OK);
            }
        }
        check_summary(cfx_graph_names(g), "add");
        check_summary(cfx_graph_names(g), "mul");
        cfx_names_free(ref);
        cfx_graph_free(g);
    }
}
