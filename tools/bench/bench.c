/* bench.c - `make bench` entry point: runs every benchmark and prints its figures.
 * `cfx-bench --trace-child N` is the fresh process bench_trace runs for one chain size;
 * `cfx-bench interp` runs the interpreter benchmark alone, `cfx-bench ir` the graph-build one
 * (the "ir:" line), `cfx-bench json [N]` the JSON and safetensors one (for an N-node graph,
 * default 1M), `cfx-bench eager [SCRIPT]` the eager op throughput against PyTorch (SCRIPT
 * defaults to tools/bench/torch_eager.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

/* `make bench` runs from the repository root. */
#define EAGER_SCRIPT "tools/bench/torch_eager.py"

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--trace-child"))
        return bench_trace_child(atol(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "interp")) { /* the interpreter's figure alone */
        bench_interp();
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "ir")) { /* the graph-build figure alone */
        bench_ir();
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "json")) {
        bench_json(argc >= 3 ? atol(argv[2]) : 1000000);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "eager")) {
        bench_eager(argc >= 3 ? argv[2] : EAGER_SCRIPT);
        return 0;
    }
    bench_dispatch();
    bench_trace("/proc/self/exe");
    bench_ir();
    bench_interp();
    bench_json(1000000);
    bench_eager(EAGER_SCRIPT);
    return 0;
}
