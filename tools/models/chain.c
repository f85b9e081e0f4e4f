/* chain.c - a straight chain alternating add, mul and relu on a [64, 64] input: the shape of
 * graph the tracing benchmark scales to a million nodes. */
#include "cfx.h"
#include "tools/models/models.h"

enum { ROUNDS = 3 };

static cfx_tensor *chain_forward(cfx_tensor *x)
{
    cfx_tensor *y = x;
    for (int i = 0; i < ROUNDS; i++)
        y = cfx_relu(cfx_mul(cfx_add(y, x), x));
    return y;
}

static int chain_setup(cfx_module **module, cfx_value *args)
{
    static const int64_t shape[2] = {64, 64};
    cfx_tensor *x = cfx_model_example_tensor(shape, 2, 0);
    if (!x)
        return -1;
    *module = NULL;
    args[0] = cfx_tensor_value(x);
    return 1;
}

const cfx_model cfx_model_chain = {
    "chain", "add / mul / relu chain on a [64, 64] tensor (3 rounds)",
    "(Tensor x) -> Tensor", (cfx_fnptr)chain_forward, chain_setup,
};
