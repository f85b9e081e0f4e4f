/* bench_eager.c - eager throughput of four CPU ops, cfx against PyTorch 2.13 in one run.
 *
 * add 64x64, mm 256x256, softmax 64x1024 (last dim) and conv2d (1x64x56x56 input, 64 output
 * channels, 3x3, padding 1, no bias), all float32, one thread on each side (cfx links serial
 * OpenBLAS; tools/bench/torch_eager.py calls torch.set_num_threads(1)). Each side times a loop
 * of K calls and divides by K, median of REPS loops. The machine may be shared, so the two
 * sides run alternately for ROUNDS rounds (the order flips each round) and the printed ratio is
 * the median of the per-round ratios: noise that hits one round hits both sides near equally.
 * Each result goes to a scope drained right after the call, so its memory is reused as PyTorch's
 * caching allocator reuses a freed result's block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/bench/bench.h"

enum { NOPS = 4, REPS = 5, ROUNDS = 5 };

static const char *const op_names[NOPS] = {"add", "mm", "softmax", "conv2d"};
static const int op_calls[NOPS] = {2000, 50, 200, 5}; /* K: one loop ~10-50 ms; as torch_eager.py */

typedef struct {
    cfx_tensor *a, *b, *m1, *m2, *s, *x, *w;
} eager_inputs;

/* Deterministic values in [-1, 1); the ops' cost does not depend on them. */
static cfx_tensor *filled(const int64_t *sizes, int ndim, uint32_t seed)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= sizes[i];
    float *buf = malloc((size_t)n * sizeof *buf);
    if (!buf)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        buf[i] = (float)(seed >> 8) / (float)(1u << 23) - 1.0f;
    }
    cfx_tensor *t = cfx_tensor_from_floats(buf, sizes, ndim);
    free(buf);
    return t;
}

static cfx_tensor *run_op(int op, const eager_inputs *in)
{
    switch (op) {
    case 0: return cfx_add(in->a, in->b);
    case 1: return cfx_mm(in->m1, in->m2);
    case 2: return cfx_softmax(in->s, -1);
    default: return cfx_conv2d(in->x, in->w, NULL, CFX_INTS(1, 1), CFX_INTS(1, 1));
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* Median microseconds per call of `op`, or a negative value if the op failed. */
static double time_cfx(int op, const eager_inputs *in)
{
    double us[REPS];
    for (int i = 0; i < 3; i++) { /* warm-up: allocator, page faults */
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *y = run_op(op, in);
        cfx_scope_end(s);
        if (!y)
            return -1;
    }
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now_ns();
        for (int k = 0; k < op_calls[op]; k++) {
            cfx_scope s = cfx_scope_begin();
            bench_keep(run_op(op, in));
            cfx_scope_end(s);
        }
        us[r] = (bench_now_ns() - t0) / op_calls[op] / 1e3;
    }
    return median(us, REPS);
}

/* Runs the PyTorch script once; fills us[0..NOPS-1] per op and us[NOPS] with its per-call floor
 * (negative where missing). 0 on success. */
static int time_torch(const char *script, double us[NOPS + 1])
{
    for (int i = 0; i <= NOPS; i++)
        us[i] = -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 '%s' %d 2>&1", script, REPS);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512], name[64];
    double v;
    int got = 0;
    while (fgets(line, sizeof line, p)) {
        if (sscanf(line, "%63s %lf", name, &v) == 2 && strcmp(name, "floor")) {
            for (int i = 0; i < NOPS; i++)
                if (!strcmp(name, op_names[i])) {
                    us[i] = v;
                    got++;
                }
        } else if (sscanf(line, "floor %lf", &v) == 1) {
            us[NOPS] = v;
        } else if (!got) {
            fprintf(stderr, "eager: %s", line); /* the script's error (e.g. no torch) */
        }
    }
    int rc = pclose(p);
    return (rc == 0 && got == NOPS) ? 0 : -1;
}

void bench_eager(const char *torch_script)
{
    cfx_dispatcher_init();
    eager_inputs in = {
        filled((const int64_t[]){64, 64}, 2, 1), filled((const int64_t[]){64, 64}, 2, 2),
        filled((const int64_t[]){256, 256}, 2, 3), filled((const int64_t[]){256, 256}, 2, 4),
        filled((const int64_t[]){64, 1024}, 2, 5), filled((const int64_t[]){1, 64, 56, 56}, 4, 6),
        filled((const int64_t[]){64, 64, 3, 3}, 4, 7),
    };
    double cfx_us[ROUNDS][NOPS], torch_us[ROUNDS][NOPS + 1];
    int torch_ok = 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int half = 0; half < 2; half++) {
            if ((half == 0) == (r % 2 == 0)) { /* cfx first in even rounds, torch first in odd */
                for (int op = 0; op < NOPS; op++)
                    cfx_us[r][op] = time_cfx(op, &in);
            } else if (torch_ok && time_torch(torch_script, torch_us[r]) != 0) {
                fprintf(stderr, "eager: PyTorch side unavailable (%s); cfx figures only\n", torch_script);
                torch_ok = 0;
            }
        }
    }
    for (int op = 0; op < NOPS; op++) {
        double c[ROUNDS], t[ROUNDS], q[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            c[r] = cfx_us[r][op];
            t[r] = torch_ok ? torch_us[r][op] : -1;
            q[r] = c[r] / t[r];
        }
        double mc = median(c, ROUNDS);
        if (mc < 0) {
            printf("eager: %-8s cfx failed: %s\n", op_names[op], cfx_error_message() ? cfx_error_message() : "?");
            continue;
        }
        if (!torch_ok) {
            printf("eager: %-8s cfx %9.1f us\n", op_names[op], mc);
            continue;
        }
        printf("eager: %-8s cfx %9.1f us  torch %9.1f us  ratio %5.2f (target <= 1.5)\n", op_names[op], mc,
               median(t, ROUNDS), median(q, ROUNDS));
    }
    if (torch_ok) {
        double f[ROUNDS];
        for (int r = 0; r < ROUNDS; r++)
            f[r] = torch_us[r][NOPS];
        printf("eager: (torch's per-call floor, a 1-element add from Python: %.1f us, included in its figures)\n",
               median(f, ROUNDS));
    }
    cfx_tensor_release(in.a);
    cfx_tensor_release(in.b);
    cfx_tensor_release(in.m1);
    cfx_tensor_release(in.m2);
    cfx_tensor_release(in.s);
    cfx_tensor_release(in.x);
    cfx_tensor_release(in.w);
}
