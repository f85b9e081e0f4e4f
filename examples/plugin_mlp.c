/* plugin_mlp.c - a model shipped as a plugin: the zoo's mlp written as a user would write it
 * outside cfx's tree, against the installed headers only.
 *
 *     cc -shared -fPIC $(pkg-config --cflags cfx) -o plugin_mlp.so plugin_mlp.c
 *     cfx trace ./plugin_mlp.so
 *
 * The object exports one `const cfx_plugin_model` under the default name; `cfx trace` opens
 * it, makes the parameters and the example input it describes, and traces `forward` through
 * libffi exactly as it traces a built-in model. It links no cfx library: the operators it
 * calls are the driver's. */
#include <cfx.h>

static cfx_tensor *linear(cfx_module *m, cfx_tensor *x, const char *weight, const char *bias)
{
    return cfx_add(cfx_mm(x, cfx_t(cfx_module_get(m, weight))), cfx_module_get(m, bias));
}

/* The module comes first, then the signature's arguments as their C types. */
static cfx_tensor *forward(cfx_module *m, cfx_tensor *x)
{
    return linear(m, cfx_relu(linear(m, x, "fc1.weight", "fc1.bias")), "fc2.weight", "fc2.bias");
}

/* An initialiser of one's own: zeros for the last bias (NULL elsewhere: cfx's example values). */
static int zeros(cfx_tensor *t)
{
    float *p = cfx_tensor_data(t);
    for (int64_t i = 0; i < cfx_tensor_numel(t); i++)
        p[i] = 0.0f;
    return 0;
}

static const cfx_plugin_tensor params[] = {
    {"fc1.weight", 2, {16, 8}},
    {"fc1.bias", 1, {16}},
    {"fc2.weight", 2, {4, 16}},
    {"fc2.bias", 1, {4}, CFX_FLOAT32, zeros},
};

static const cfx_plugin_tensor inputs[] = {{"x", 2, {4, 8}}};

CFX_PLUGIN_EXPORT const cfx_plugin_model cfx_plugin_entry = {
    .abi_version = CFX_PLUGIN_ABI_VERSION,
    .name = "PluginMLP",
    .description = "two linear layers with relu, from a shared object",
    .signature = "(Tensor x) -> Tensor",
    .forward = (cfx_fnptr)forward,
    .params = params,
    .n_params = 4,
    .inputs = inputs,
    .n_inputs = 1,
};
