/* mutate.c - the DCE hazards in one model: a result nobody uses (cos) and two in-place adds,
 * one on an intermediate (its result is used through the rebound tensor) and one on an input
 * whose result is never read again. Dead-code elimination must drop the cos and keep both
 * add_ nodes, because their schemas write to an argument (Tensor(a!)). */
#include "cfx.h"
#include "tools/models/models.h"

static cfx_tensor *mutate_forward(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *a = cfx_sin(x);
    (void)cfx_cos(y); /* unused result */
    cfx_add_(a, y);   /* a now refers to the add_ node */
    cfx_add_(x, y);   /* mutates an input; the result is not used */
    return cfx_mul(a, y);
}

static int mutate_setup(cfx_module **module, cfx_value *args)
{
    static const int64_t shape[2] = {2, 3};
    cfx_tensor *x = cfx_model_example_tensor(shape, 2, 0);
    cfx_tensor *y = cfx_model_example_tensor(shape, 2, 5);
    if (!x || !y)
        return -1;
    *module = NULL;
    args[0] = cfx_tensor_value(x);
    args[1] = cfx_tensor_value(y);
    return 2;
}

const cfx_model cfx_model_mutate = {
    "mutate", "an unused result (cos) and in-place add_ on an intermediate and on an input",
    "(Tensor x, Tensor y) -> Tensor", (cfx_fnptr)mutate_forward, mutate_setup,
};
