/* mlp.c - two linear layers with a relu between, written with mm / t / add as make_fx
 * records nn.Linear after decomposition: y = relu(x @ W1^T + b1) @ W2^T + b2.
 * The weights live in the model's module under nn.Module-style names (fc1.weight, ...); the
 * traced graph reads them with get_attr nodes named as make_fx interns the parameters a
 * function reads (_param_constant0 for fc1.weight, in order of first use). */
#include "cfx.h"
#include "tools/models/models.h"

static cfx_tensor *linear(cfx_module *m, cfx_tensor *x, const char *weight, const char *bias)
{
    return cfx_add(cfx_mm(x, cfx_t(cfx_module_get(m, weight))), cfx_module_get(m, bias));
}

static cfx_tensor *mlp_forward(cfx_module *m, cfx_tensor *x)
{
    cfx_tensor *h = cfx_relu(linear(m, x, "fc1.weight", "fc1.bias"));
    return linear(m, h, "fc2.weight", "fc2.bias");
}

static int mlp_setup(cfx_module **module, cfx_value *args)
{
    cfx_module *m = cfx_module_new("MLP");
    if (!m)
        return -1;
    static const int64_t w1[2] = {16, 8}, b1[1] = {16}, w2[2] = {4, 16}, b2[1] = {4}, x[2] = {4, 8};
    int rc = 0;
    rc |= cfx_module_add(m, "fc1.weight", cfx_model_example_tensor(w1, 2, 1));
    rc |= cfx_module_add(m, "fc1.bias", cfx_model_example_tensor(b1, 1, 2));
    rc |= cfx_module_add(m, "fc2.weight", cfx_model_example_tensor(w2, 2, 3));
    rc |= cfx_module_add(m, "fc2.bias", cfx_model_example_tensor(b2, 1, 4));
    cfx_tensor *input = cfx_model_example_tensor(x, 2, 0);
    if (rc || !input) {
        cfx_module_free(m);
        return -1;
    }
    *module = m;
    args[0] = cfx_tensor_value(input);
    return 1;
}

const cfx_model cfx_model_mlp = {
    "mlp", "two linear layers (mm, t, add) with relu; weights as get_attr _param_constant0 ...",
    "(Tensor x) -> Tensor", (cfx_fnptr)mlp_forward, mlp_setup,
};
