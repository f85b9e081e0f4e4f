/* bench_ir.c - the IR's share of a traced node: create a call_function node on an operator
 * (cfx_graph_create_node) and set its meta for a [64, 64] result in one call
 * (cfx_node_set_result_meta: stack_trace, val, tensor_meta), as the tracer does, for a
 * 1M-node chain; then lint, CSE (nothing to merge: the cost of hashing every node) and DCE it. Subtracting this from the trace figure tells how much
 * of tracing is the graph and how much is dispatch. Prints ns/node per phase and arena bytes. */
#include <stdio.h>

#include "cfx.h"
#include "ir/graph.h"
#include "ir/passes/cse.h"
#include "ir/passes/dce.h"
#include "tools/bench/bench.h"

void bench_ir(void)
{
    const long nodes = 1000000;
    cfx_dispatcher_init();
    const cfx_op *ops[3] = {cfx_op_find("aten::add.Tensor"), cfx_op_find("aten::mul.Tensor"),
                            cfx_op_find("aten::relu")};
    int64_t sizes[2] = {64, 64}, strides[2] = {64, 1};
    cfx_tensor t = {0};
    t.dtype = CFX_FLOAT32;
    t.device = cfx_device_make(CFX_DEVICE_CPU);
    t.ndim = 2;
    t.sizes = sizes;
    t.strides = strides;
    static const cfx_site sites[3] = {{"models/chain.c", 10, "chain"}, {"models/chain.c", 11, "chain"},
                                      {"models/chain.c", 12, "chain"}};
    double t0 = bench_now_ns();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = x;
    for (long i = 0; i < nodes; i++) {
        cfx_value args[2] = {cfx_node_value(y), cfx_node_value(x)};
        cfx_node *n = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(ops[i % 3]), args,
                                            i % 3 == 2 ? 1 : 2, NULL, 0, NULL);
        if (cfx_node_set_result_meta(n, &sites[i % 3], &t, &t.device, false) != CFX_OK)
            break;
        y = n;
    }
    cfx_graph_output(g, cfx_node_value(y));
    double t1 = bench_now_ns();
    if (cfx_error_message()) {
        fprintf(stderr, "bench: ir: %s\n", cfx_error_message());
        cfx_graph_free(g);
        return;
    }
    double l0 = bench_now_ns();
    int rc = cfx_graph_lint(g);
    double l1 = bench_now_ns();
    bool changed;
    double c0 = bench_now_ns();
    rc |= cfx_pass_cse(g, &changed);
    double c1 = bench_now_ns();
    cfx_dce_options d = {0};
    double d0 = bench_now_ns();
    rc |= cfx_pass_eliminate_dead_code(g, &d, &changed);
    double d1 = bench_now_ns();
    printf("ir: 1M-node chain, graph only: build %6.1f ns/node  arena %6.1f B/node  lint %5.1f ns/node  cse %5.1f ns/node  dce %5.1f ns/node%s\n",
           (t1 - t0) / nodes, (double)cfx_graph_arena_bytes(g) / nodes, (l1 - l0) / nodes, (c1 - c0) / nodes,
           (d1 - d0) / nodes, rc ? "  (FAILED)" : "");
    cfx_graph_free(g);
}
