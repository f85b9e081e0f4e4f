/* ir_test_util.h - helpers shared by the tests of ir/.
 *
 * Operator targets are hand-made cfx_op records (the IR reads only qualified_name and schema),
 * so these tests do not depend on the dispatcher's operator table. Graph builders mirror the
 * Python in tools/interop/gen_fx.py line for line. */
#ifndef CFX_TESTS_IR_UTIL_H
#define CFX_TESTS_IR_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/operator_internal.h"
#include "dispatch/schema.h"
#include "ir/graph.h"
#include "tests/test_util.h"

/* A pool of fake operators, looked up by name; a schema is parsed when given. */
typedef struct test_op_rec {
    cfx_op op;
    char name[96];
} test_op_rec;

static test_op_rec test_ops[64];
static int n_test_ops;

static inline const cfx_op *test_op_schema(const char *qn, const char *schema)
{
    for (int i = 0; i < n_test_ops; i++)
        if (strcmp(test_ops[i].name, qn) == 0)
            return &test_ops[i].op;
    if (n_test_ops == 64)
        return NULL;
    test_op_rec *t = &test_ops[n_test_ops++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", qn);
    t->op.qualified_name = t->name;
    if (schema)
        t->op.schema = cfx_schema_parse(schema, NULL);
    return &t->op;
}

static inline const cfx_op *test_op(const char *qn) { return test_op_schema(qn, NULL); }

/* Frees parsed schemas (call at the end of a test that used test_op_schema). */
static inline void test_ops_free(void)
{
    for (int i = 0; i < n_test_ops; i++)
        cfx_schema_free((cfx_schema *)test_ops[i].op.schema);
    n_test_ops = 0;
}

#define NV(n) cfx_node_value(n)
#define VALS(...) ((cfx_value[]){__VA_ARGS__})
#define NVALS(...) ((uint32_t)(sizeof((cfx_value[]){__VA_ARGS__}) / sizeof(cfx_value)))
#define LIST(...) cfx_list(VALS(__VA_ARGS__), NVALS(__VA_ARGS__))
#define TUPLE(...) cfx_tuple(VALS(__VA_ARGS__), NVALS(__VA_ARGS__))
#define KW(k, v) ((cfx_kwarg){(k), (v)})

/* call_function on an operator with make_fx's default name (or `name`). */
static inline cfx_node *op_call(cfx_graph *g, const char *qn, const char *name, const cfx_value *args,
                                uint32_t n, const cfx_kwarg *kw, uint32_t nk)
{
    return cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op(qn)), args, n, kw, nk, name);
}

#define OP(g, qn, ...) op_call((g), (qn), NULL, VALS(__VA_ARGS__), NVALS(__VA_ARGS__), NULL, 0)
#define OPN(g, qn, name, ...) op_call((g), (qn), (name), VALS(__VA_ARGS__), NVALS(__VA_ARGS__), NULL, 0)
#define OPK(g, qn, kw, nk, ...) op_call((g), (qn), NULL, VALS(__VA_ARGS__), NVALS(__VA_ARGS__), (kw), (nk))
#define FN(g, fn, ...) cfx_graph_call_fn((g), (fn), VALS(__VA_ARGS__), NVALS(__VA_ARGS__), NULL, 0)

/* tests/data/NAME, a golden of tools/interop/gen_fx.py, without its header line; the test
 * stops if it is missing. */
static inline char *ir_golden(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "tests/data/%s", name);
    char *s = read_golden(path);
    cr_assert(s, "missing %s, or it has no golden header", path);
    return s;
}

/* A node's name as a malloc'd string. */
static inline char *nname(const cfx_node *n) { return cfx_node_name_string(n); }

/* The node references of v, depth first, appended to refs (distinct ones only). */
static inline void value_refs(cfx_value v, cfx_node **refs, uint32_t *n, uint32_t cap)
{
    if (v.kind == CFX_V_NODE) {
        for (uint32_t i = 0; i < *n; i++)
            if (refs[i] == v.u.node)
                return;
        cr_assert_lt(*n, cap);
        refs[(*n)++] = v.u.node;
    } else if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) {
        for (uint32_t i = 0; i < v.len; i++)
            value_refs(v.u.items[i], refs, n, cap);
    }
}

/* Appends "tag name users=[...] inputs=[...]" for n: its users and inputs in order. */
static inline void show_node(cfx_buf *b, const char *tag, const cfx_node *n)
{
    cfx_buf_printf(b, "%s ", tag);
    cfx_node_print_name(n, b);
    cfx_buf_puts(b, " users=[");
    cfx_user_iter it;
    for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
        cfx_node_print_name(u, b);
        if (it.use)
            cfx_buf_puts(b, ", ");
    }
    cfx_buf_puts(b, "] inputs=[");
    for (uint32_t i = 0; i < cfx_node_num_inputs(n); i++) {
        if (i)
            cfx_buf_puts(b, ", ");
        cfx_node_print_name(cfx_node_input(n, i), b);
    }
    cfx_buf_puts(b, "]\n");
}

/* The def-use links of every live node against what its args say, computed the slow way:
 * inputs are the distinct node references of args then kwargs in first-occurrence order; a
 * node's users are exactly the live nodes that have it as an input, each once, and n_users
 * counts them. (Producers in other graphs are checked from the user's side only.) */
static inline void expect_links_consistent(cfx_graph *g)
{
    enum { CAP = 4096 };
    static cfx_node *refs[CAP];
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        uint32_t nr = 0;
        for (uint32_t i = 0; i < cfx_node_num_args(n); i++)
            value_refs(cfx_node_arg(n, i), refs, &nr, CAP);
        for (uint32_t i = 0; i < cfx_node_num_kwargs(n); i++)
            value_refs(cfx_node_kwargs(n)[i].value, refs, &nr, CAP);
        cr_assert_eq(cfx_node_num_inputs(n), nr, "inputs of a node");
        for (uint32_t i = 0; i < nr; i++)
            cr_assert_eq(cfx_node_input(n, i), refs[i], "input %u of a node", i);
        uint32_t users = 0;
        cfx_user_iter it;
        for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
            users++;
            bool uses = false;
            for (uint32_t i = 0; i < cfx_node_num_inputs(u) && !uses; i++)
                uses = cfx_node_input(u, i) == n;
            cr_assert(uses, "a user that does not use the node");
            cr_assert(!cfx_node_is_erased(u), "an erased user");
        }
        cr_assert_eq(cfx_node_num_users(n), users);
    }
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        for (uint32_t i = 0; i < cfx_node_num_inputs(n); i++) {
            cfx_node *p = cfx_node_input(n, i);
            uint32_t seen = 0;
            cfx_user_iter it;
            for (cfx_node *u = cfx_node_first_user(p, &it); u; u = cfx_node_next_user(&it))
                seen += u == n;
            cr_assert_eq(seen, 1, "a node is its input's user exactly once");
        }
}

/* Users then inputs of every node, in order, with the use ids. */
static inline char *graph_links(cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        cfx_node_print_name(n, &b);
        cfx_buf_puts(&b, ": users=[");
        cfx_user_iter it;
        for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
            cfx_node_print_name(u, &b);
            cfx_buf_putc(&b, ' ');
        }
        cfx_buf_printf(&b, "] n_users=%u inputs@%u=[", cfx_node_num_users(n), cfx_node_num_inputs(n) ? n->inputs : 0);
        for (uint32_t i = 0; i < cfx_node_num_inputs(n); i++) {
            cfx_node_print_name(cfx_node_input(n, i), &b);
            cfx_buf_putc(&b, ' ');
        }
        cfx_buf_puts(&b, "]\n");
    }
    return cfx_buf_take(&b);
}

/* str(graph) then graph_links: what two ways of building one graph must agree on. */
static inline void graph_render_into(cfx_graph *g, cfx_buf *b)
{
    char *p = cfx_graph_to_string(g), *l = graph_links(g);
    cr_assert(p && l);
    cfx_buf_puts(b, p);
    cfx_buf_puts(b, l);
    free(p);
    free(l);
}

#endif
