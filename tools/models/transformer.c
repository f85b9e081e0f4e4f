/* transformer.c - one pre-norm transformer block on x [2, 4, 8] (batch, sequence, width):
 *   h = layer_norm(x); attention with one head: softmax(q @ k^T / sqrt(8)) @ v (the scaling
 *   is a number operand, cfx_num, recorded as the literal), an output projection, dropout in
 *   eval (no node), residual; then layer_norm, a gelu MLP (8 -> 16 -> 8), dropout, residual.
 * Calls are sequenced statement by statement: C leaves the order in which a call's arguments
 * are evaluated unspecified, and the graph records calls in the order they run. */
#include "cfx.h"
#include "tools/models/models.h"

#define P(name) cfx_module_get(m, name)

static cfx_tensor *transformer_forward(cfx_module *m, cfx_tensor *x)
{
    cfx_tensor *h = cfx_layer_norm(x, CFX_INTS(8), P("ln1.weight"), P("ln1.bias"));
    cfx_tensor *q = cfx_linear(h, P("attn.q.weight"), P("attn.q.bias"));
    cfx_tensor *k = cfx_linear(h, P("attn.k.weight"), P("attn.k.bias"));
    cfx_tensor *v = cfx_linear(h, P("attn.v.weight"), P("attn.v.bias"));
    cfx_tensor *s = cfx_div(cfx_matmul(q, cfx_transpose(k, -2, -1)), cfx_num(2.8284271247461903));
    cfx_tensor *a = cfx_dropout(cfx_softmax(s, -1), 0.1, cfx_module_training(m));
    cfx_tensor *o = cfx_linear(cfx_matmul(a, v), P("attn.out.weight"), P("attn.out.bias"));
    x = cfx_add(x, cfx_dropout(o, 0.1, cfx_module_training(m)));
    h = cfx_layer_norm(x, CFX_INTS(8), P("ln2.weight"), P("ln2.bias"));
    cfx_tensor *f = cfx_gelu(cfx_linear(h, P("mlp.fc1.weight"), P("mlp.fc1.bias")));
    f = cfx_linear(f, P("mlp.fc2.weight"), P("mlp.fc2.bias"));
    return cfx_add(x, cfx_dropout(f, 0.1, cfx_module_training(m)));
}

static int transformer_setup(cfx_module **module, cfx_value *args)
{
    cfx_module *m = cfx_module_new("TransformerBlock");
    if (!m)
        return -1;
    static const struct {
        const char *name;
        int ndim;
        int64_t sizes[2];
    } params[] = {
        {"ln1.weight", 1, {8}},     {"ln1.bias", 1, {8}},       {"attn.q.weight", 2, {8, 8}},
        {"attn.q.bias", 1, {8}},    {"attn.k.weight", 2, {8, 8}}, {"attn.k.bias", 1, {8}},
        {"attn.v.weight", 2, {8, 8}}, {"attn.v.bias", 1, {8}},  {"attn.out.weight", 2, {8, 8}},
        {"attn.out.bias", 1, {8}},  {"ln2.weight", 1, {8}},     {"ln2.bias", 1, {8}},
        {"mlp.fc1.weight", 2, {16, 8}}, {"mlp.fc1.bias", 1, {16}}, {"mlp.fc2.weight", 2, {8, 16}},
        {"mlp.fc2.bias", 1, {8}},
    };
    int rc = 0;
    for (int i = 0; i < (int)(sizeof params / sizeof params[0]); i++)
        rc |= cfx_module_add(m, params[i].name, cfx_model_example_tensor(params[i].sizes, params[i].ndim, i + 1));
    static const int64_t xs[3] = {2, 4, 8};
    cfx_tensor *input = cfx_model_example_tensor(xs, 3, 0);
    if (rc || !input) {
        cfx_module_free(m);
        return -1;
    }
    *module = m;
    args[0] = cfx_tensor_value(input);
    return 1;
}

const cfx_model cfx_model_transformer = {
    "transformer", "a transformer block: layer_norm, attention (matmul, softmax, scaling), gelu MLP, residuals",
    "(Tensor x) -> Tensor", (cfx_fnptr)transformer_forward, transformer_setup,
};
