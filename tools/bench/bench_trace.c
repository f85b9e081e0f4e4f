/* bench_trace.c - tracing cost per node: make_fx in fake mode over a chain alternating add,
 * mul and relu on a [64, 64] tensor, at 10k, 100k and 1M nodes.
 *
 * Each size runs in a fresh process (the benchmark re-executes itself), so "cold" means what a
 * user's first trace costs: untouched heap, no warm caches, page faults included. Memory is
 * the growth of peak RSS over the process's RSS just before tracing, divided by nodes. At 1M
 * nodes the same process then times dead-code elimination (nothing is dead in a chain, so this
 * is the full reverse walk) and printing str(graph). The model code keeps one step's
 * intermediates in a scope of their own, as long-running C model code should, so only the
 * graph grows with the chain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfx.h"
#include "ir/passes/dce.h"
#include "tools/bench/bench.h"
#include "tracer/make_fx.h"

static long chain_ops; /* set before tracing; the traced function reads it */

static cfx_tensor *chain(cfx_tensor *x)
{
    cfx_tensor *y = cfx_tensor_retain(x);
    for (long i = 0; i < chain_ops && y; i++) {
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *z = i % 3 == 0 ? cfx_add(y, x) : i % 3 == 1 ? cfx_mul(y, x) : cfx_relu(y);
        cfx_tensor_retain(z);
        cfx_scope_end(s);
        cfx_tensor_release(y);
        y = z;
    }
    return cfx_autorelease(y);
}

static long rss_kb(void)
{
    /* current RSS from /proc: the baseline the peak is compared with */
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* The child: trace `nodes` ops and print one result line. */
int bench_trace_child(long nodes)
{
    cfx_dispatcher_init();
    cfx_scope s = cfx_scope_begin();
    int64_t shape[2] = {64, 64};
    cfx_tensor *x = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_value arg = cfx_tensor_value(x);
    cfx_make_fx_options opts = {CFX_TRACE_FAKE, NULL, "chain"};
    chain_ops = nodes;
    long base = rss_kb();
    double t0 = bench_now_ns();
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)chain, "(Tensor x) -> Tensor", &arg, 1, &opts);
    double t1 = bench_now_ns();
    if (!gm) {
        fprintf(stderr, "bench: trace failed: %s\n", cfx_error_message());
        return 1;
    }
    long grown = peak_kb() - base;
    printf("trace: %8ld nodes  %7.1f ns/node  %6.1f B/node\n", nodes, (t1 - t0) / nodes,
           grown * 1024.0 / nodes);
    if (nodes >= 1000000) {
        cfx_graph *g = cfx_graph_module_graph(gm);
        double p0 = bench_now_ns();
        char *text = cfx_graph_to_string(g);
        double p1 = bench_now_ns();
        bench_keep(text);
        free(text);
        bool changed;
        cfx_dce_options d = {0};
        double d0 = bench_now_ns();
        cfx_pass_eliminate_dead_code(g, &d, &changed);
        double d1 = bench_now_ns();
        printf("trace: print str(graph) at 1M  %7.1f ns/node   (target <= 200)\n", (p1 - p0) / nodes);
        printf("trace: DCE at 1M               %7.1f ns/node   (target <= 50)\n", (d1 - d0) / nodes);
    }
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    return 0;
}

void bench_trace(const char *self)
{
    static const long sizes[] = {10000, 100000, 1000000};
    printf("trace: fake-mode make_fx of an add/mul/relu chain on [64, 64], cold process per size\n");
    printf("       (targets: <= 150 ns/node, 1M within 1.25x of 10k, <= 160 B/node)\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            char n[32];
            snprintf(n, sizeof n, "%ld", sizes[i]);
            execl(self, self, "--trace-child", n, (char *)NULL);
            _exit(127);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status))
            printf("trace: %ld nodes: child failed\n", sizes[i]);
    }
}
