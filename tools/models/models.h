/* models.h - the built-in model zoo the driver traces (`cfx models`, `cfx trace NAME`).
 *
 * A model is a plain C function over cfx operators, its signature as a schema string (what
 * make_fx needs to call it through libffi), and a setup function that makes its parameters
 * and example inputs. Each model here has a PyTorch twin in tools/interop/gen_models.py, so
 * tests can compare cfx's traced graphs with PyTorch 2.13 make_fx's. */
#ifndef CFX_MODELS_H
#define CFX_MODELS_H

#include <stdbool.h>
#include <string.h>

#include "dispatch/kernel.h"
#include "dispatch/value.h"
#include "tracer/module.h"

enum { CFX_MODEL_MAX_ARGS = 8 };

typedef struct cfx_model {
    const char *name;
    const char *description;
    const char *signature; /* "(Tensor x) -> Tensor"; the module, if any, is an extra first C argument */
    cfx_fnptr forward;
    /* Makes the parameters (into *module, NULL if the model has none) and the example
     * arguments; tensors are owned by the caller's scope. Returns the argument count or < 0. */
    int (*setup)(cfx_module **module, cfx_value *args);
} cfx_model;

const cfx_model *cfx_model_find(const char *name);
/* Whether the model takes a script object (tensor_queue): whole-zoo checks that feed tensors
 * only (FakeTensorProp, the code generators' runs) skip those; hop/'s tests cover them. */
static inline bool cfx_model_has_object_input(const cfx_model *m)
{
    return strstr(m->signature, "__torch__.torch.classes.") != NULL;
}
int cfx_model_count(void);
const cfx_model *cfx_model_at(int i);

/* Deterministic example data: a float32 CPU tensor filled with small distinct values. */
cfx_tensor *cfx_model_example_tensor(const int64_t *sizes, int ndim, int seed);

#endif
