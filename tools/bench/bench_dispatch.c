/* bench_dispatch.c - the cost of calling an operator through the dispatcher.
 *
 * For a 1-element float32 tensor we time cfx_add (wrapper -> key set -> table slot -> kernel)
 * against calling the CPU kernel's C function directly; the difference is what the
 * dispatcher adds. Then cfx_add on meta tensors, which is pure shape computation plus a tensor
 * header. Results are autoreleased into a scope that is drained every BATCH calls, as model
 * code would do; both sides pay the same allocation and drain. */
#include <stdio.h>

#include "cfx.h"
#include "dispatch/operator_internal.h"
#include "tools/bench/bench.h"

enum { BATCH = 1000, BATCHES = 2000, REPS = 5 };

typedef cfx_tensor *(*add_fn)(cfx_tensor *, cfx_tensor *, cfx_value);

static double time_loop(int which, cfx_tensor *a, cfx_tensor *b, add_fn bare)
{
    double best = 1e300;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now_ns();
        for (int i = 0; i < BATCHES; i++) {
            cfx_scope s = cfx_scope_begin();
            for (int j = 0; j < BATCH; j++) {
                cfx_tensor *y = which ? bare(a, b, cfx_int(1)) : cfx_add(a, b);
                bench_keep(y);
            }
            cfx_scope_end(s);
        }
        double ns = (bench_now_ns() - t0) / ((double)BATCH * BATCHES);
        if (ns < best)
            best = ns;
    }
    return best;
}

void bench_dispatch(void)
{
    cfx_dispatcher_init();
    int64_t one[1] = {1};
    float va = 1.5f, vb = 2.25f;
    cfx_tensor *a = cfx_tensor_from_floats(&va, one, 1);
    cfx_tensor *b = cfx_tensor_from_floats(&vb, one, 1);
    cfx_tensor *ma = cfx_tensor_new(one, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
    cfx_tensor *mb = cfx_tensor_new(one, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
    cfx_op *op = cfx_op_find("aten::add.Tensor");
    if (!a || !b || !ma || !mb || !op) {
        fprintf(stderr, "bench: setup failed: %s\n", cfx_error_message() ? cfx_error_message() : "?");
        return;
    }
    const cfx_kernel *k = &op->table[cfx_key_table_index(CFX_KEY_CPU)];
    if (!k->unboxed) {
        fprintf(stderr, "bench: aten::add.Tensor has no unboxed CPU kernel\n");
        return;
    }
    add_fn bare = (add_fn)k->unboxed;

    double t_disp = time_loop(0, a, b, bare);
    double t_bare = time_loop(1, a, b, bare);
    double t_meta = time_loop(0, ma, mb, bare);
    printf("dispatch: cfx_add, 1-element float32 CPU       %7.1f ns/call\n", t_disp);
    printf("dispatch: bare CPU kernel (same work, direct)  %7.1f ns/call\n", t_bare);
    printf("dispatch: dispatcher overhead                  %7.1f ns/call   (target <= 25)\n", t_disp - t_bare);
    printf("dispatch: cfx_add on meta tensors              %7.1f ns/call   (target <= 60)\n", t_meta);
    cfx_tensor_release(a);
    cfx_tensor_release(b);
    cfx_tensor_release(ma);
    cfx_tensor_release(mb);
}
