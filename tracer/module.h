/* module.h - a model's parameters: named tensors the traced code reads (nn.Module's state).
 *
 * A C model receives its cfx_module as the first C argument (make_fx passes it) and fetches
 * weights by qualified name. When traced, a parameter used by an op becomes a get_attr node
 * `_param_constantN` (numbered in order of first use), as PyTorch 2.13's make_fx interns the
 * nn.Parameters a traced function reads (it traces a function, whose root module is empty);
 * a tensor that is no parameter is a `_tensor_constantN`. The tracer asks the module which
 * tensors are its parameters; the graph module holds them under the interned names.
 *
 *     static cfx_tensor *forward(cfx_module *m, cfx_tensor *x) {
 *         return cfx_add(cfx_mm(x, cfx_t(cfx_module_get(m, "fc1.weight"))), cfx_module_get(m, "fc1.bias"));
 *     }
 */
#ifndef CFX_TRACER_MODULE_H
#define CFX_TRACER_MODULE_H

#include "dispatch/export.h"
#include "dispatch/tensor.h"

typedef struct cfx_module cfx_module;

CFX_API cfx_module *cfx_module_new(const char *class_name); /* "MLP"; NULL-safe name */
CFX_API void cfx_module_free(cfx_module *m);
CFX_API const char *cfx_module_class_name(const cfx_module *m);
/* Registers (retains) t as a parameter; error on a duplicate or malformed name. */
CFX_API int cfx_module_add(cfx_module *m, const char *qualname, cfx_tensor *t);
/* The parameter, or NULL with an error naming the missing attribute (as nn.Module's
 * "'MLP' object has no attribute 'fc3'"). */
CFX_API cfx_tensor *cfx_module_get(const cfx_module *m, const char *qualname);
/* The qualified name under which t is registered, or NULL (pointer identity). */
CFX_API const char *cfx_module_name_of(const cfx_module *m, const cfx_tensor *t);
CFX_API int cfx_module_count(const cfx_module *m);
CFX_API const char *cfx_module_name_at(const cfx_module *m, int i);
CFX_API cfx_tensor *cfx_module_tensor_at(const cfx_module *m, int i);
/* nn.Module.train(mode) / .training: a flag the model's code reads to pick training-mode
 * behaviour (batch norm with batch statistics, dropout); a new module is in eval mode, which
 * is what the built-in models were written for (PyTorch's default is training). NULL-safe. */
CFX_API void cfx_module_train(cfx_module *m, bool mode);
CFX_API bool cfx_module_training(const cfx_module *m);

#endif
