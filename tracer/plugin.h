/* plugin.h - a model shipped as a shared object: what it exports and how cfx loads it.
 *
 * A plugin is a C file compiled with `cc -shared -fPIC $(pkg-config --cflags cfx)` that
 * defines one `const cfx_plugin_model` (by default named `cfx_plugin_entry`, the name
 * CFX_PLUGIN_SYMBOL spells). The struct is the whole contract: the model's name, its
 * signature as a schema string (what make_fx needs to call the forward function through
 * libffi), the forward function itself (it receives the model's cfx_module first, as the
 * built-in models do), its parameters (qualified name, shape, dtype, initialiser) and one
 * example input per tensor argument. The plugin does not link libcfx: the cfx operators it
 * calls are resolved, when the plugin is opened, against the program that opens it (the
 * `cfx` driver exports its API for that), so plugin and driver share one operator registry.
 *
 *     static cfx_tensor *forward(cfx_module *m, cfx_tensor *x) {
 *         return cfx_relu(cfx_add(cfx_mm(x, cfx_t(cfx_module_get(m, "fc.weight"))),
 *                                 cfx_module_get(m, "fc.bias")));
 *     }
 *     static const cfx_plugin_tensor params[] = {{"fc.weight", 2, {4, 8}}, {"fc.bias", 1, {4}}};
 *     static const cfx_plugin_tensor inputs[] = {{"x", 2, {2, 8}}};
 *     CFX_PLUGIN_EXPORT const cfx_plugin_model cfx_plugin_entry = {
 *         CFX_PLUGIN_ABI_VERSION, "tiny", "one linear layer", "(Tensor x) -> Tensor",
 *         (cfx_fnptr)forward, params, 2, inputs, 1};
 *
 * The struct is versioned: abi_version is checked before any other field is read, and a
 * change to the layout bumps CFX_PLUGIN_ABI_VERSION (a plugin built for another version is
 * refused with both numbers named, never misread). */
#ifndef CFX_TRACER_PLUGIN_H
#define CFX_TRACER_PLUGIN_H

#include <stdint.h>

#include "dispatch/dtype.h"
#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"
#include "tracer/module.h"

#define CFX_PLUGIN_ABI_VERSION 1u
#define CFX_PLUGIN_SYMBOL "cfx_plugin_entry"
#define CFX_PLUGIN_EXPORT __attribute__((visibility("default")))
enum { CFX_PLUGIN_MAX_DIMS = 8 };

/* A parameter or an example input. dtype 0 (zero-initialised) means float32. */
typedef struct cfx_plugin_tensor {
    const char *name;  /* "fc1.weight" (parameter) or the schema argument's name (input) */
    int ndim;
    int64_t sizes[CFX_PLUGIN_MAX_DIMS];
    cfx_dtype dtype;
    /* Fills t's (contiguous) data; returns 0, or non-zero to fail the load. NULL: cfx's
     * deterministic example values (the built-in zoo's: small distinct multiples of 1/16). */
    int (*init)(cfx_tensor *t);
} cfx_plugin_tensor;

typedef struct cfx_plugin_model {
    uint32_t abi_version;    /* CFX_PLUGIN_ABI_VERSION */
    const char *name;        /* the graph module's class name */
    const char *description;
    const char *signature;   /* "(Tensor x) -> Tensor"; tensor arguments only, or with defaults */
    cfx_fnptr forward;       /* cfx_tensor *(*)(cfx_module *, <the signature's C types>) */
    const cfx_plugin_tensor *params;
    int n_params;
    const cfx_plugin_tensor *inputs; /* one per tensor argument, matched by name */
    int n_inputs;
} cfx_plugin_model;

typedef struct cfx_plugin cfx_plugin;

/* Opens "path/to/model.so" or "path/to/model.so:symbol" (default symbol CFX_PLUGIN_SYMBOL)
 * and checks the description: ABI version, name, forward function, signature (it must parse
 * and every argument must be a tensor with an example input or have a default), the
 * parameters' and inputs' shapes. NULL with the error recorded: a missing file, a missing
 * symbol, an ABI mismatch and a bad signature each say which. */
CFX_API cfx_plugin *cfx_plugin_open(const char *spec);
/* dlcloses the object: call it only after every graph or tensor it made is gone. NULL-safe. */
CFX_API void cfx_plugin_close(cfx_plugin *p);
CFX_API const cfx_plugin_model *cfx_plugin_model_of(const cfx_plugin *p);
/* Makes the model's module (its parameters, initialised) and its example arguments, boxed in
 * schema order into args[0..max) (tensors owned by the caller's scope). Returns the argument
 * count, or < 0 with the error recorded. */
CFX_API int cfx_plugin_setup(const cfx_plugin *p, cfx_module **module, cfx_value *args, int max);

#endif
