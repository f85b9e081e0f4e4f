/* cnn.c - a small convolutional classifier: conv2d (3 -> 8 channels, 3x3, padding 1), batch
 * norm in inference, relu, 2x2 max pooling, flatten, linear (128 -> 10), on a [2, 3, 8, 8]
 * input. Batch norm is native_batch_norm called directly (as the PyTorch twin does), with
 * training = the module's mode (`cfx trace cnn --train`: batch statistics, and the running
 * statistics updated in place). */
#include "cfx.h"
#include "tools/models/models.h"

static cfx_tensor *cnn_forward(cfx_module *m, cfx_tensor *x)
{
    cfx_tensor *h = cfx_conv2d(x, cfx_module_get(m, "conv.weight"), cfx_module_get(m, "conv.bias"), CFX_INTS(1, 1),
                               CFX_INTS(1, 1));
    h = cfx_native_batch_norm(h, cfx_module_get(m, "bn.weight"), cfx_module_get(m, "bn.bias"),
                              cfx_module_get(m, "bn.running_mean"), cfx_module_get(m, "bn.running_var"),
                              cfx_module_training(m), 0.1,
                              1e-5)
            .out;
    h = cfx_max_pool2d(cfx_relu(h), CFX_INTS(2, 2));
    return cfx_linear(cfx_flatten(h, 1), cfx_module_get(m, "fc.weight"), cfx_module_get(m, "fc.bias"));
}

static int cnn_setup(cfx_module **module, cfx_value *args)
{
    cfx_module *m = cfx_module_new("CNN");
    if (!m)
        return -1;
    static const int64_t cw[4] = {8, 3, 3, 3}, c8[1] = {8}, fw[2] = {10, 128}, fb[1] = {10}, x[4] = {2, 3, 8, 8};
    cfx_tensor *var = cfx_tensor_new(c8, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    for (int i = 0; var && i < 8; i++) /* a variance is positive: 0.5, 0.75, ... */
        ((float *)cfx_tensor_data(var))[i] = 0.5f + 0.25f * (float)i;
    int rc = var ? 0 : -1;
    rc |= cfx_module_add(m, "conv.weight", cfx_model_example_tensor(cw, 4, 1));
    rc |= cfx_module_add(m, "conv.bias", cfx_model_example_tensor(c8, 1, 2));
    rc |= cfx_module_add(m, "bn.weight", cfx_model_example_tensor(c8, 1, 3));
    rc |= cfx_module_add(m, "bn.bias", cfx_model_example_tensor(c8, 1, 4));
    rc |= cfx_module_add(m, "bn.running_mean", cfx_model_example_tensor(c8, 1, 5));
    rc |= cfx_module_add(m, "bn.running_var", var);
    rc |= cfx_module_add(m, "fc.weight", cfx_model_example_tensor(fw, 2, 6));
    rc |= cfx_module_add(m, "fc.bias", cfx_model_example_tensor(fb, 1, 7));
    cfx_tensor *input = cfx_model_example_tensor(x, 4, 0);
    if (rc || !input) {
        cfx_module_free(m);
        return -1;
    }
    *module = m;
    args[0] = cfx_tensor_value(input);
    return 1;
}

const cfx_model cfx_model_cnn = {
    "cnn", "conv2d, batch norm (eval), relu, max_pool2d, flatten, linear on [2, 3, 8, 8]",
    "(Tensor x) -> Tensor", (cfx_fnptr)cnn_forward, cnn_setup,
};
