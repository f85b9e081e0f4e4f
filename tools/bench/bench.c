/* bench.c - `make bench` entry point: runs every benchmark and prints its figures.
 * `cfx-bench --trace-child N` is the fresh process bench_trace runs for one chain size;
 * `cfx-bench interp` runs the interpreter benchmark alone, `cfx-bench json [N]` the JSON and
 * safetensors one (for an N-node graph, default 1M). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/bench.h"

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--trace-child"))
        return bench_trace_child(atol(argv[2]));
    if (argc == 2 && !strcmp(argv[1], "interp")) { /* the interpreter's figure alone */
        bench_interp();
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "json")) {
        bench_json(argc >= 3 ? atol(argv[2]) : 1000000);
        return 0;
    }
    bench_dispatch();
    bench_trace("/proc/self/exe");
    bench_ir();
    bench_interp();
    bench_json(1000000);
    return 0;
}
