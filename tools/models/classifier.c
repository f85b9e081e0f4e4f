/* classifier.c - an embedding classifier with its loss: token embeddings (vocabulary 20,
 * width 8) summed over the sequence, a linear layer to 10 classes, and cross-entropy against
 * the targets (CompositeImplicit: _log_softmax + nll_loss_forward). Inputs: tokens [2, 5] and
 * targets [2], both int64 (values below 10, so `cfx run`'s random integers are valid too). */
#include "cfx.h"
#include "tools/models/models.h"

static cfx_tensor *classifier_forward(cfx_module *m, cfx_tensor *tokens, cfx_tensor *targets)
{
    cfx_tensor *e = cfx_embedding(cfx_module_get(m, "emb.weight"), tokens);
    cfx_tensor *logits = cfx_linear(cfx_sum(e, CFX_INTS(1)), cfx_module_get(m, "fc.weight"),
                                    cfx_module_get(m, "fc.bias"));
    return cfx_cross_entropy_loss(logits, targets);
}

static int classifier_setup(cfx_module **module, cfx_value *args)
{
    cfx_module *m = cfx_module_new("Classifier");
    if (!m)
        return -1;
    static const int64_t ew[2] = {20, 8}, fw[2] = {10, 8}, fb[1] = {10}, ts[2] = {2, 5}, tg[1] = {2};
    int64_t tok[10], tgt[2];
    for (int i = 0; i < 10; i++)
        tok[i] = (i * 7 + 3) % 20;
    tgt[0] = 3, tgt[1] = 7;
    int rc = 0;
    rc |= cfx_module_add(m, "emb.weight", cfx_model_example_tensor(ew, 2, 1));
    rc |= cfx_module_add(m, "fc.weight", cfx_model_example_tensor(fw, 2, 2));
    rc |= cfx_module_add(m, "fc.bias", cfx_model_example_tensor(fb, 1, 3));
    cfx_tensor *tokens = cfx_tensor_from_int64s(tok, ts, 2), *targets = cfx_tensor_from_int64s(tgt, tg, 1);
    if (rc || !tokens || !targets) {
        cfx_module_free(m);
        return -1;
    }
    *module = m;
    args[0] = cfx_tensor_value(tokens);
    args[1] = cfx_tensor_value(targets);
    return 2;
}

const cfx_model cfx_model_classifier = {
    "classifier", "embedding, sum, linear and cross-entropy loss on int64 tokens [2, 5], targets [2]",
    "(Tensor tokens, Tensor targets) -> Tensor", (cfx_fnptr)classifier_forward, classifier_setup,
};
