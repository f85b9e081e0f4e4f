/* test_big.c - million-node graphs: nothing recurses, nothing goes quadratic.
 *
 * A 1M-node chain is built, printed (str and python_code), dead-code eliminated in one pass
 * and freed; a value nested a million lists deep is copied, printed and walked. Timings are
 * logged (cr_log_info) but not asserted, so sanitizer builds do not flake; the bounds asserted
 * are on sizes and results. A 1M-node graph with meta dumps, loads and dumps to the same JSON. */
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "dispatch/dispatcher.h"
#include "dispatch/scope.h"
#include "ir/graph_module.h"
#include "ir/json.h"
#include "ir/passes/dce.h"
#include "tests/ir/ir_test_util.h"

enum { CHAIN = 1000000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static cfx_graph *build_chain(int n, cfx_node **x_out, cfx_node **last_out)
{
    const cfx_op *add = test_op("aten::add.Tensor"), *mul = test_op("aten::mul.Tensor"), *relu = test_op("aten::relu");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *prev = x;
    for (int i = 0; i < n; i++) {
        cfx_value args[2] = {NV(prev), NV(prev)};
        const cfx_op *op = i % 3 == 0 ? add : i % 3 == 1 ? mul : relu;
        prev = cfx_graph_call_op(g, op, args, op == relu ? 1 : 2, NULL, 0);
        if (!prev)
            break;
    }
    *x_out = x;
    *last_out = prev;
    return g;
}

Test(ir_big, million_node_chain, .timeout = 60)
{
    double t0 = now();
    cfx_node *x, *last;
    cfx_graph *g = build_chain(CHAIN, &x, &last);
    double t1 = now();
    cr_assert(last);
    cr_expect_eq(cfx_graph_num_nodes(g), CHAIN + 1);
    cr_expect(cfx_node_name_is(last, "add_333333"));
    cfx_graph_output(g, NV(last));

    cfx_buf b;
    cfx_buf_init(&b);
    cfx_graph_print(g, &b);
    double t2 = now();
    cr_assert(!b.oom);
    cr_expect(strstr(b.data + b.len - 200, "return add_333333"));
    size_t str_len = b.len;
    cfx_buf_free(&b);
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_python_code(g, "self", &b), CFX_OK);
    double t3 = now();
    cr_expect(strstr(b.data, "    add = torch.ops.aten.add.Tensor(x, x);  x = None\n"));
    cfx_buf_free(&b);

    /* make the whole chain dead: the output returns x; one DCE pass removes 1M nodes */
    cr_assert_eq(cfx_node_set_args(cfx_graph_output_node(g), VALS(NV(x)), 1), CFX_OK);
    bool changed = false;
    double t4 = now();
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    double t5 = now();
    cr_expect(changed);
    cr_expect_eq(cfx_graph_num_nodes(g), 2);
    cr_expect_eq(cfx_node_num_users(x), 1);
    size_t arena = cfx_graph_arena_bytes(g);
    cfx_graph_free(g);
    double t6 = now();
    cr_log_info("1M chain: build %.1f ns/node, str %.1f ns/node (%zu bytes), python_code %.1f ns/node, "
                "dce %.1f ns/node, free %.1f ms, arena %.1f MB",
                (t1 - t0) * 1e9 / CHAIN, (t2 - t1) * 1e9 / CHAIN, str_len, (t3 - t2) * 1e9 / CHAIN,
                (t5 - t4) * 1e9 / CHAIN, (t6 - t5) * 1e3, arena / 1048576.0);
    cr_expect_lt(arena, (size_t)CHAIN * 256, "arena should stay near 200 bytes per node");
}

Test(ir_big, million_deep_nesting, .timeout = 60)
{
    /* [[[[...[x]...]]]] a million lists deep, as one argument */
    enum { DEPTH = 1000000 };
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value *chain = malloc(DEPTH * sizeof *chain);
    cr_assert(chain);
    cfx_value inner = NV(x);
    chain[DEPTH - 1] = cfx_list(&inner, 1);
    for (int i = DEPTH - 2; i >= 0; i--)
        chain[i] = cfx_list(&chain[i + 1], 1);
    cfx_node *n = OP(g, "aten::stack", chain[0]);
    free(chain); /* the graph has its own copy */
    cr_assert(n);
    cr_expect_eq(cfx_node_num_inputs(n), 1);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cfx_node *out = cfx_graph_output(g, NV(n));
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_graph_print(g, &b);
    cr_assert(!b.oom);
    cr_expect(strstr(b.data, "[[[[%x]]]]"));
    cfx_buf_free(&b);
    char *code = cfx_graph_python_code_string(g, "self");
    cr_assert(code);
    cr_expect(strstr(code, "[[[[x]]]]]"));
    free(code);
    /* rewriting and erasing walk the same depth */
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cr_expect_eq(cfx_node_replace_all_uses_with(x, y, NULL, NULL, NULL), 1);
    cr_expect_eq(cfx_node_num_users(y), 1);
    cr_assert_eq(cfx_graph_erase_node(g, out), CFX_OK);
    cr_assert_eq(cfx_graph_erase_node(g, n), CFX_OK);
    cr_expect_eq(cfx_node_num_users(y), 0);
    cfx_graph_free(g);
}

/* dump -> load -> dump of a 1M-node graph: the same bytes, with meta (val, tensor_meta, a stack
 * trace) on every 1000th node, a module attribute behind a get_attr, and the loaded graph printing
 * as the original. The operators are the registered ones (a file names them; loading finds them). */
Test(ir_big, million_node_json_round_trip, .timeout = 120)
{
    cfx_dispatcher_init();
    const cfx_op *ops[3] = {cfx_op_find("aten::add.Tensor"), cfx_op_find("aten::mul.Tensor"), cfx_op_find("aten::relu")};
    cr_assert(ops[0] && ops[1] && ops[2]);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *w = cfx_graph_get_attr(g, "fc.weight");
    cfx_node *prev = x;
    for (int i = 0; i < CHAIN; i++) {
        cfx_value args[2] = {NV(prev), NV(i % 2 ? w : x)};
        prev = cfx_graph_call_op(g, ops[i % 3], args, i % 3 == 2 ? 1 : 2, NULL, 0);
        cr_assert(prev);
    }
    cfx_graph_output(g, TUPLE(NV(prev), NV(w)));
    int64_t sz[2] = {2, 3}, st[2] = {3, 1};
    cfx_meta_val tv = {.kind = CFX_MVAL_TENSOR, .dtype = CFX_FLOAT32, .device = {CFX_DEVICE_CPU, -1},
                       .n = 2, .sizes = sz, .strides = st};
    cfx_tensor_meta tm = {.ndim = 2, .dtype = CFX_FLOAT32, .memory_format = CFX_CONTIGUOUS_FORMAT, .shape = sz,
                          .stride = st};
    int k = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n), k++)
        if (k % 1000 == 0) {
            cr_assert_eq(cfx_node_set_val(n, &tv), CFX_OK);
            cr_assert_eq(cfx_node_set_tensor_meta(n, &tm), CFX_OK);
            cr_assert_eq(cfx_node_set_stack_trace(n, &(cfx_site){"model.c", k, "forward"}), CFX_OK);
        }
    cfx_graph_module *gm = cfx_graph_module_new(g, "Big");
    cfx_scope s = cfx_scope_begin();
    float wd[6] = {1, 2, 3, 4, 5, 6};
    cfx_graph_module_set_attr(gm, "fc.weight", cfx_tensor_from_floats(wd, (int64_t[]){2, 3}, 2));
    cfx_scope_end(s);

    double t0 = now();
    char *j1 = NULL;
    cr_assert_eq(cfx_graph_module_to_json(gm, 0, &j1), CFX_OK, "%s", cfx_error_message());
    double t1 = now();
    size_t len = strlen(j1);
    cfx_graph_module *gm2 = cfx_graph_module_from_json(j1, len);
    double t2 = now();
    cr_assert(gm2, "%s", cfx_error_message());
    cfx_graph *g2 = cfx_graph_module_graph(gm2);
    cr_expect_eq(cfx_graph_num_nodes(g2), CHAIN + 3);
    char *j2 = NULL;
    cr_assert_eq(cfx_graph_module_to_json(gm2, 0, &j2), CFX_OK, "%s", cfx_error_message());
    size_t d = 0;
    while (j1[d] && j1[d] == j2[d])
        d++;
    cr_expect(j1[d] == j2[d], "the second dump differs from the first at byte %zu: ...%.200s... vs ...%.200s...", d,
              j1 + (d > 100 ? d - 100 : 0), j2 + (d > 100 ? d - 100 : 0));
    char *s1 = cfx_graph_to_string(g), *s2 = cfx_graph_to_string(g2);
    cr_expect(s1 && s2 && strcmp(s1, s2) == 0, "the loaded graph prints differently");
    cr_log_info("1M chain JSON: %zu bytes, dump %.1f ns/node (%.0f MB/s), load %.1f ns/node (%.0f MB/s)", len,
                (t1 - t0) * 1e9 / CHAIN, len / 1e6 / (t1 - t0), (t2 - t1) * 1e9 / CHAIN, len / 1e6 / (t2 - t1));
    free(s1);
    free(s2);
    free(j1);
    free(j2);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
}
