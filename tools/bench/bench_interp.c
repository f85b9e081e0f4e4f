/* bench_interp.c - the interpreter's overhead per node: a 100k-node add / mul / relu chain on
 * 1-element float32 tensors run by an interpreter made once (cfx_interpreter_run, as FX's
 * Interpreter object is made once and run), against the same 100k operator calls made directly
 * from C (each step in its own scope, so both free as they go). The ratio is the figure to
 * watch (issue target: <= 1.2x direct calls). The one-shot cfx_interpret, which compiles the
 * graph for every run, is shown beside it.
 *
 * For instruction counts (callgrind at two sizes, differenced), CFX_BENCH_INTERP_NODES sets the
 * chain's length, CFX_BENCH_INTERP_ONLY=direct|boxed|interp runs that one way once, and
 * CFX_BENCH_INTERP_REPS the repetitions (more, of a shorter chain, on a busy machine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/bench/bench.h"

enum { DEFAULT_NODES = 100000, REPS = 3 };

static long n_nodes = DEFAULT_NODES; /* the chain's length */

static double direct(cfx_tensor *x)
{
    double t0 = bench_now_ns();
    cfx_tensor *y = cfx_tensor_retain(x);
    for (long i = 0; i < n_nodes; i += 3) {
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *z = cfx_tensor_retain(cfx_relu(cfx_mul(cfx_add(y, x), x)));
        cfx_scope_end(s);
        cfx_tensor_release(y);
        y = z;
    }
    double t1 = bench_now_ns();
    cfx_tensor_release(y);
    return t1 - t0;
}

/* The same calls boxed (cfx_op_call), as the interpreter makes them: what is left of the
 * difference after this is the interpreter's own. */
static double boxed(cfx_op *const ops[3], cfx_tensor *x)
{
    double t0 = bench_now_ns();
    cfx_tensor *y = cfx_tensor_retain(x);
    for (long i = 0; i < n_nodes; i++) {
        cfx_value st[3] = {cfx_tensor_value(y), cfx_tensor_value(x), cfx_int(1)};
        cfx_scope s = cfx_scope_begin();
        if (cfx_op_call(ops[i % 3], st, i % 3 == 2 ? 1 : 2, 3) != CFX_OK)
            break;
        cfx_tensor *z = cfx_tensor_retain(st[0].u.t);
        cfx_scope_end(s);
        cfx_tensor_release(y);
        y = z;
    }
    double t1 = bench_now_ns();
    cfx_tensor_release(y);
    return t1 - t0;
}

void bench_interp(void)
{
    const char *size = getenv("CFX_BENCH_INTERP_NODES"), *only = getenv("CFX_BENCH_INTERP_ONLY"),
               *reps_env = getenv("CFX_BENCH_INTERP_REPS");
    n_nodes = size && atol(size) > 0 ? atol(size) : DEFAULT_NODES;
    int reps = reps_env && atoi(reps_env) > 0 ? atoi(reps_env) : only ? 1 : REPS;
    bool run_d = !only || !strcmp(only, "direct"), run_b = !only || !strcmp(only, "boxed"),
         run_i = !only || !strcmp(only, "interp"), run_o = !only || !strcmp(only, "once");
    cfx_dispatcher_init();
    cfx_op *ops[3] = {cfx_op_find("aten::add.Tensor"), cfx_op_find("aten::mul.Tensor"), cfx_op_find("aten::relu")};
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x"), *y = x;
    for (long i = 0; i < n_nodes; i++) {
        cfx_value args[2] = {cfx_node_value(y), cfx_node_value(x)};
        y = cfx_graph_call_op(g, ops[i % 3], args, i % 3 == 2 ? 1 : 2, NULL, 0);
    }
    cfx_graph_output(g, cfx_node_value(y));
    int64_t one = 1;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *in = cfx_tensor_new(&one, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_interpreter *ip = cfx_interpreter_new(g, NULL);
    double best_d = 1e300, best_b = 1e300, best_i = 1e300, best_o = 1e300;
    for (int r = 0; r < reps && in && ip; r++) {
        double d = run_d ? direct(in) : 1, b = run_b ? boxed(ops, in) : 1;
        cfx_scope rs = cfx_scope_begin();
        cfx_value arg = cfx_tensor_value(in), out;
        double t0 = bench_now_ns();
        int rc = run_i ? cfx_interpreter_run(ip, &arg, 1, &out) : CFX_OK;
        double t1 = bench_now_ns();
        if (rc == CFX_OK && run_o)
            rc = cfx_interpret(g, &arg, 1, NULL, &out);
        double t2 = bench_now_ns();
        cfx_scope_end(rs);
        if (rc != CFX_OK)
            break;
        best_d = d < best_d ? d : best_d;
        best_b = b < best_b ? b : best_b;
        best_i = t1 - t0 < best_i ? t1 - t0 : best_i;
        best_o = t2 - t1 < best_o ? t2 - t1 : best_o;
    }
    if (cfx_error_occurred())
        fprintf(stderr, "bench: interp: %s\n", cfx_error_message());
    else
        printf("interp: %ldk-node chain, 1-element tensors: direct %6.1f ns/op  boxed (cfx_op_call) %6.1f ns/op  "
               "interpreted %6.1f ns/node  ratio %.2fx direct (target <= 1.2), %.2fx boxed; one-shot cfx_interpret "
               "(compiling each run) %6.1f ns/node, %.2fx direct\n",
               n_nodes / 1000, best_d / n_nodes, best_b / n_nodes, best_i / n_nodes, best_i / best_d, best_i / best_b,
               best_o / n_nodes, best_o / best_d);
    cfx_interpreter_free(ip);
    cfx_scope_end(s);
    cfx_graph_free(g);
}
