/* bench_json.c - a traced graph to JSON and back, and weights through safetensors.
 *
 * JSON: the fake-mode make_fx trace of a 1M-node add/mul/relu chain on [64, 64] (every node
 * with its val and tensor_meta, as a traced graph has them) dumped to a string and loaded
 * back from it, in MB/s of JSON text and ns/node (targets: dump >= 200 MB/s, load >= 100 MB/s).
 * Safetensors: 64 MiB of float32 weights in 16 tensors written to a new file and read back, in
 * GB/s (target: memory-copy speed, >= 1 GB/s; the file stays in the page cache). Writing over
 * an existing file is timed too and printed beside it: the atomic replace renames the new file
 * over the old one, and on ext4 (auto_da_alloc) that rename starts writing the new file's
 * blocks to disk, which is disk work, not the writer's copying. Each figure is the best of REPS
 * runs. `cfx-bench json N` runs this alone for an N-node chain (for a
 * profiler: `valgrind --tool=callgrind build-bench/cfx-bench json 50000`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "tools/bench/bench.h"
#include "tracer/make_fx.h"

enum { REPS = 3 };

static void bench_graph_json(long nodes)
{
    cfx_scope s = cfx_scope_begin();
    int64_t shape[2] = {64, 64};
    cfx_tensor *x = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_graph_module *gm = bench_trace_chain(x, nodes);
    if (!gm) {
        fprintf(stderr, "bench: json: trace failed: %s\n", cfx_error_message());
        cfx_scope_end(s);
        return;
    }
    double dump = 1e30, load = 1e30;
    size_t len = 0;
    bool ok = true;
    for (int r = 0; r < REPS && ok; r++) {
        char *json = NULL;
        double t0 = bench_now_ns();
        ok = cfx_graph_module_to_json(gm, 0, &json) == CFX_OK;
        double t1 = bench_now_ns();
        if (!ok)
            break;
        len = strlen(json);
        double t2 = bench_now_ns();
        cfx_graph_module *back = cfx_graph_module_from_json(json, len);
        double t3 = bench_now_ns();
        ok = back != NULL;
        cfx_graph_module_free(back);
        free(json);
        dump = t1 - t0 < dump ? t1 - t0 : dump;
        load = t3 - t2 < load ? t3 - t2 : load;
    }
    if (!ok)
        fprintf(stderr, "bench: json: %s\n", cfx_error_message());
    else
        printf("json: %ld-node traced chain, %.1f MB of JSON: dump %6.1f MB/s %6.1f ns/node   load %6.1f MB/s "
               "%6.1f ns/node   (targets: dump >= 200, load >= 100 MB/s)\n",
               nodes, len / 1e6, len / 1e6 / (dump / 1e9), dump / nodes, len / 1e6 / (load / 1e9), load / nodes);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

static void bench_safetensors(void)
{
    enum { N = 16 };
    const int64_t per = (64 << 20) / N / 4; /* floats per tensor: 64 MiB in all */
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *ts[N];
    char namebuf[N][16];
    const char *names[N];
    for (int i = 0; i < N; i++) {
        ts[i] = cfx_tensor_new(&per, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
        if (!ts[i]) {
            cfx_scope_end(s);
            return;
        }
        memset(cfx_tensor_data(ts[i]), i, (size_t)per * 4);
        snprintf(namebuf[i], sizeof namebuf[i], "layer%d.weight", i);
        names[i] = namebuf[i];
    }
    char path[] = "/tmp/cfx-bench-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        cfx_scope_end(s);
        return;
    }
    close(fd);
    double wr = 1e30, rd = 1e30, ow = 1e30, bytes = (double)per * 4 * N;
    bool ok = true;
    for (int r = 0; r < REPS && ok; r++) {
        unlink(path); /* the timed write creates the file */
        double t0 = bench_now_ns();
        ok = cfx_safetensors_write_file(path, names, ts, N, NULL, 0) == CFX_OK;
        double t1 = bench_now_ns();
        cfx_safetensors *st = ok ? cfx_safetensors_read_file(path) : NULL;
        double t2 = bench_now_ns();
        ok = ok && st != NULL && cfx_safetensors_write_file(path, names, ts, N, NULL, 0) == CFX_OK;
        double t3 = bench_now_ns();
        cfx_safetensors_free(st);
        wr = t1 - t0 < wr ? t1 - t0 : wr;
        rd = t2 - t1 < rd ? t2 - t1 : rd;
        ow = t3 - t2 < ow ? t3 - t2 : ow;
    }
    unlink(path);
    if (!ok)
        fprintf(stderr, "bench: safetensors: %s\n", cfx_error_message());
    else
        printf("safetensors: 64 MiB in %d float32 tensors: write %5.2f GB/s  read %5.2f GB/s   (target >= 1 GB/s)  "
               "write over an existing file %5.2f GB/s\n",
               N, bytes / wr, bytes / rd, bytes / ow);
    cfx_scope_end(s);
}

void bench_json(long nodes)
{
    cfx_dispatcher_init();
    bench_graph_json(nodes);
    bench_safetensors();
}
