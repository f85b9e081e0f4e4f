/* models.c - the zoo's table and its shared example-data helper. */
#include <string.h>

#include "dispatch/tensor.h"
#include "tools/models/models.h"

extern const cfx_model cfx_model_mlp, cfx_model_chain, cfx_model_mutate;
extern const cfx_model cfx_model_cnn, cfx_model_classifier, cfx_model_transformer, cfx_model_tensor_queue;

static const cfx_model *const zoo[] = {&cfx_model_mlp,        &cfx_model_chain,       &cfx_model_mutate,
                                       &cfx_model_cnn,        &cfx_model_classifier,  &cfx_model_transformer,
                                       &cfx_model_tensor_queue};

int cfx_model_count(void) { return (int)(sizeof zoo / sizeof zoo[0]); }

const cfx_model *cfx_model_at(int i) { return i >= 0 && i < cfx_model_count() ? zoo[i] : NULL; }

const cfx_model *cfx_model_find(const char *name)
{
    for (int i = 0; i < cfx_model_count(); i++)
        if (name && !strcmp(zoo[i]->name, name))
            return zoo[i];
    return NULL;
}

cfx_tensor *cfx_model_example_tensor(const int64_t *sizes, int ndim, int seed)
{
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    if (!t)
        return NULL;
    float *p = cfx_tensor_data(t);
    int64_t n = cfx_tensor_numel(t);
    /* values in [-1, 1) on a 1/16 grid: exact in float32, identical in PyTorch's twin */
    for (int64_t i = 0; i < n; i++)
        p[i] = (float)((i * 7 + seed * 13) % 32 - 16) / 16.0f;
    return t;
}
