/* bench.h - tiny benchmark harness for `make bench`.
 *
 * Figures are printed, never asserted: machines are noisy, so compare ratios printed by one
 * run. Each benchmark takes the best of several repetitions (least disturbed by the rest of
 * the machine). */
#ifndef CFX_BENCH_H
#define CFX_BENCH_H

#include <stdint.h>
#include <time.h>

#include "cfx.h"

static inline double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the compiler from deleting a computation. */
static inline void bench_keep(const void *p) { __asm__ volatile("" : : "g"(p) : "memory"); }

void bench_dispatch(void);
void bench_trace(const char *self);
void bench_ir(void);
void bench_interp(void);
void bench_json(long nodes);
/* cfx vs PyTorch eager op throughput; torch_script is tools/bench/torch_eager.py. */
void bench_eager(const char *torch_script);
int bench_trace_child(long nodes);
/* make_fx (fake mode) of a chain of `nodes` ops alternating add, mul and relu on x. */
cfx_graph_module *bench_trace_chain(cfx_tensor *x, long nodes);

#endif
