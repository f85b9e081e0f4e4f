/* bench_trace.c - tracing cost per node: make_fx in fake mode over a chain alternating add,
 * mul and relu on a [64, 64] tensor, at 10k, 100k and 1M nodes.
 *
 * Each size runs in fresh processes (the benchmark re-executes itself), so "cold" means what a
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

cfx_graph_module *bench_trace_chain(cfx_tensor *x, long nodes)
{
    cfx_value arg = cfx_tensor_value(x);
    cfx_make_fx_options opts = {CFX_TRACE_FAKE, NULL, "chain"};
    chain_ops = nodes;
    return cfx_make_fx((cfx_fnptr)chain, "(Tensor x) -> Tensor", &arg, 1, &opts);
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

/* The child: trace `nodes` ops and print one line for the parent: ns/node, B/node, and at 1M
 * the print and DCE ns/node (0 otherwise). */
int bench_trace_child(long nodes)
{
    cfx_dispatcher_init();
    cfx_scope s = cfx_scope_begin();
    int64_t shape[2] = {64, 64};
    cfx_tensor *x = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    long base = rss_kb();
    double t0 = bench_now_ns();
    cfx_graph_module *gm = bench_trace_chain(x, nodes);
    double t1 = bench_now_ns();
    if (!gm) {
        fprintf(stderr, "bench: trace failed: %s\n", cfx_error_message());
        return 1;
    }
    long grown = peak_kb() - base;
    double print_ns = 0, dce_ns = 0;
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
        print_ns = (p1 - p0) / nodes;
        dce_ns = (d1 - d0) / nodes;
    }
    printf("%.1f %.1f %.1f %.1f\n", (t1 - t0) / nodes, grown * 1024.0 / nodes, print_ns, dce_ns);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    return 0;
}

/* One cold child for `nodes`; false if it failed. */
static bool run_child(const char *self, long nodes, double out[4])
{
    int fd[2];
    if (pipe(fd) != 0)
        return false;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        char n[32];
        snprintf(n, sizeof n, "%ld", nodes);
        execl(self, self, "--trace-child", n, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    int got = f ? fscanf(f, "%lf %lf %lf %lf", &out[0], &out[1], &out[2], &out[3]) : 0;
    if (f)
        fclose(f);
    else
        close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return pid > 0 && got == 4 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The machine this runs on is shared: one cold run can take twice as long as the next. Each
 * size therefore runs in REPS fresh processes; the median is the figure, the minimum is what
 * the code costs with the least disturbance. */
enum { REPS = 5 };

void bench_trace(const char *self)
{
    static const long sizes[] = {10000, 100000, 1000000};
    printf("trace: fake-mode make_fx of an add/mul/relu chain on [64, 64], %d cold processes per size\n", REPS);
    printf("       (targets: <= 150 ns/node, 1M within 1.25x of 10k, <= 160 B/node)\n");
    double median_ns[3] = {0};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double ns[REPS], bytes[REPS], print_ns[REPS], dce_ns[REPS];
        int ok = 0;
        for (int r = 0; r < REPS; r++) {
            double o[4];
            if (!run_child(self, sizes[i], o))
                continue;
            ns[ok] = o[0], bytes[ok] = o[1], print_ns[ok] = o[2], dce_ns[ok] = o[3];
            ok++;
        }
        if (ok == 0) {
            printf("trace: %ld nodes: child failed\n", sizes[i]);
            continue;
        }
        qsort(ns, ok, sizeof *ns, cmp_double);
        qsort(bytes, ok, sizeof *bytes, cmp_double);
        qsort(print_ns, ok, sizeof *print_ns, cmp_double);
        qsort(dce_ns, ok, sizeof *dce_ns, cmp_double);
        median_ns[i] = ns[ok / 2];
        printf("trace: %8ld nodes  %7.1f ns/node (min %6.1f)  %6.1f B/node\n", sizes[i], ns[ok / 2], ns[0],
               bytes[ok / 2]);
        if (sizes[i] >= 1000000) {
            printf("trace: print str(graph) at 1M  %7.1f ns/node   (target <= 200)\n", print_ns[ok / 2]);
            printf("trace: DCE at 1M               %7.1f ns/node   (target <= 50)\n", dce_ns[ok / 2]);
        }
    }
    if (median_ns[0] > 0 && median_ns[2] > 0)
        printf("trace: 1M / 10k per-node ratio  %5.2f   (target <= 1.25)\n", median_ns[2] / median_ns[0]);
}
