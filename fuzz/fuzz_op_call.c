/* fuzz_op_call.c - libFuzzer target: the boxed call path, random values against random schemas.
 *
 * The input picks one registered operator (cfx_op_list order), a number of positional
 * arguments (up to two past the schema's) and, for each, a value of a random kind: None, bool,
 * small int, double (NaN and infinities included), string, dtype, device, a small CPU or meta
 * tensor, or a list of ints or tensors. cfx_op_call must check it all against the schema and
 * either run or return an error with a message: never crash, leak or hang. Ints stay small
 * (-4..11) so factory ops are not asked for gigabytes: an out-of-memory there is not a bug.
 * Items of int lists stay within -1..4, so the largest size list (eight 4s) makes 65536
 * elements: with items up to 6 (1.7M elements) randn under ASan took over a second on a busy
 * machine, a timeout that is the harness's size choice, not a bug. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

enum { MAX_OPS = 8192, CAP = 64, MAX_ITEMS = 8 };

static cfx_op *ops[MAX_OPS];
static int n_ops;

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static unsigned next(input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static cfx_tensor *make_tensor(input *in)
{
    static const cfx_dtype dtypes[] = {CFX_FLOAT32, CFX_INT64, CFX_BOOL, CFX_FLOAT64};
    unsigned b = next(in);
    int ndim = b % 4;
    int64_t sizes[3];
    for (int i = 0; i < ndim; i++)
        sizes[i] = next(in) % 4;
    cfx_device dev = {(b >> 2) & 1 ? CFX_DEVICE_META : CFX_DEVICE_CPU, -1};
    return cfx_tensor_new(sizes, ndim, dtypes[(b >> 3) % 4], dev);
}

/* One value; list items live in pool (room for MAX_ITEMS per argument). */
static cfx_value make_value(input *in, cfx_value *pool)
{
    static const double doubles[] = {0.0, -1.5, 2.0, 1e300, -0.0, NAN, INFINITY, -INFINITY};
    static const char *strings[] = {"", "a", "mean", "none", "tanh", "trunc", "floor", "sum"};
    unsigned k = next(in), b = next(in);
    switch (k % 11) {
    case 0: return cfx_none();
    case 1: return cfx_bool(b & 1);
    case 2: return cfx_int((int64_t)(b % 16) - 4);
    case 3: return cfx_double(doubles[b % 8]);
    case 4: return cfx_string(strings[b % 8]);
    case 5: return cfx_dtype_value((cfx_dtype)(b % 12));
    case 6: return cfx_device_value((cfx_device){(int8_t)(b % 2), -1});
    case 7:
    case 8: {
        cfx_tensor *t = make_tensor(in);
        return t ? cfx_tensor_value(t) : cfx_none();
    }
    case 9: {
        unsigned n = b % (MAX_ITEMS + 1);
        for (unsigned i = 0; i < n; i++)
            pool[i] = cfx_int((int64_t)(next(in) % 6) - 1);
        return cfx_list(pool, n);
    }
    default: {
        unsigned n = b % 4;
        for (unsigned i = 0; i < n; i++) {
            cfx_tensor *t = make_tensor(in);
            pool[i] = t ? cfx_tensor_value(t) : cfx_none();
        }
        return cfx_list(pool, n);
    }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    n_ops = cfx_op_list(ops, MAX_OPS);
    if (n_ops <= 0 || n_ops > MAX_OPS) {
        fprintf(stderr, "fuzz_op_call: cfx_op_list gave %d\n", n_ops);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    unsigned pick = next(&in) << 8;
    pick |= next(&in);
    cfx_op *op = ops[pick % (unsigned)n_ops];
    const cfx_schema *s = cfx_op_schema(op);
    int n = (int)(next(&in) % (unsigned)(s->n_args + 3));
    if (n > CAP)
        n = CAP;
    static cfx_value pool[CAP][MAX_ITEMS];
    cfx_value stack[CAP];
    cfx_scope scope = cfx_scope_begin();
    for (int i = 0; i < n; i++)
        stack[i] = make_value(&in, pool[i]);
    int rc = cfx_op_call(op, stack, n, CAP);
    if (rc != CFX_OK && !cfx_error_message()) {
        fprintf(stderr, "%s failed with no message\n", cfx_op_name(op));
        abort(); /* every error records a message */
    }
    cfx_error_clear();
    cfx_scope_end(scope);
    return 0;
}
