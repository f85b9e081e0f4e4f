/* make_fx.h - trace a C function into an FX graph (torch.fx.experimental.proxy_tensor.make_fx).
 *
 * The function is an ordinary C function; its signature is given as a schema string such as
 * "(Tensor x, Tensor w) -> Tensor" or "(Tensor x, int n, float s) -> (Tensor, Tensor)", and
 * it is called through libffi with the example arguments. If a module is given, it is passed
 * as an extra FIRST C argument (not part of the schema): `cfx_tensor *f(cfx_module *, ...)`.
 * While it runs, a proxy mode sits on the dispatch mode stack (above a fake mode in fake
 * tracing) and records one call_function node per operator call; placeholders are named from
 * the schema's argument names as make_fx names them (`x` -> `x_1`); the returned tensors,
 * tuples or scalars become the output node. As in PyTorch 2.13's make_fx, which traces a
 * function whose root module is empty, the module's tensors (its parameters) are interned as
 * `_param_constantN` get_attr nodes and any other tensor the function uses without it being
 * an input as `_tensor_constantN` (a literal is then lift_fresh_copy'd).
 *
 * Tracing is thread-local: two threads may trace at the same time. */
#ifndef CFX_TRACER_MAKE_FX_H
#define CFX_TRACER_MAKE_FX_H

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/mode.h"
#include "dispatch/value.h"
#include "ir/graph_module.h"
#include "tracer/module.h"

typedef enum cfx_tracing_mode { CFX_TRACE_REAL = 0, CFX_TRACE_FAKE = 1 } cfx_tracing_mode;

typedef struct cfx_make_fx_options {
    cfx_tracing_mode mode;
    cfx_module *module;       /* passed as the first C argument when non-NULL */
    const char *name;         /* graph module class name; default: the module's class or "f" */
    bool record_stack_traces; /* make_fx's flag: meta["stack_trace"] = the op's C call site */
    bool functionalize;       /* make_fx(torch.func.functionalize(f)): dispatch/functional.h */
    bool effect_tokens;       /* with functionalize: effectful ops through with_effects, the token
                               * as leading placeholder `token_1` and leading output (effects.h) */
} cfx_make_fx_options;

/* Traces fn called with args (boxed, in schema order). Returns the graph module or NULL with
 * the error recorded (an error raised by the model itself is reported with the model's C
 * file:line). In fake mode real tensor arguments are converted with from_tensor.
 *
 * Details (see tracer/make_fx.c and tracer/proxy.c for the PyTorch rules they follow):
 *  - signature: "(Tensor x, int n) -> Tensor" (the function is named "f" for messages) or a
 *    named schema "mlp(Tensor x) -> Tensor"; the class name is options->name, else the
 *    module's class name, else the schema's name, else "f". Tensor[] arguments (pytree
 *    inputs) are refused. A C function returning several values returns a struct of their
 *    C types (boxing.h), e.g. cfx_tensor2 for "-> (Tensor, Tensor)"; "-> ()" is void.
 *  - every argument gets a placeholder `<name>_1`; non-tensor values are passed to fn as
 *    given and appear in the graph as literals (make_fx specialises them).
 *  - errors: argument count ("Tracing expected 2 arguments but got 1 concrete arguments"),
 *    argument kinds (torch.ops' binding text), the model's own failures. If an error is
 *    already pending when make_fx is called, it returns NULL at once and keeps that error
 *    (call cfx_error_clear() first).
 *  - fake mode: tensors that are not inputs (module parameters, constants) are converted to
 *    fake tensors (make_fx's _allow_non_fake_inputs=True); the graph module keeps the real
 *    tensors. A fake argument's fake mode is the trace's (a trace inside a fake trace).
 *  - meta: val and tensor_meta as make_fx's set_meta writes them; stack_trace (the op's C
 *    file:line and function) on every node but placeholders and the output when
 *    record_stack_traces is set. Errors carry the model's call site either way.
 *  - a trace inside a traced function records into its own graph (the outer proxy mode is
 *    stashed meanwhile), as nested make_fx calls do.
 *  - tensors that outlive the trace (inputs, parameters, constants, returned tensors) carry
 *    no binding of the finished tracer. */
/* Arguments of kinds this layer does not know (script objects, CFX_V_OBJECT, defined by hop/):
 * after an object argument's placeholder is made, the hook (if set) may bind the object to
 * it for the proxy mode and replace the argument (a fake object under fake tracing). Set
 * once by hop/'s cfx_hop_init; process-wide. */
typedef int (*cfx_make_fx_object_hook)(cfx_mode *proxy_mode, cfx_mode *fake_mode, cfx_value *arg,
                                       struct cfx_node *placeholder);
CFX_API void cfx_make_fx_set_object_hook(cfx_make_fx_object_hook hook);

CFX_API cfx_graph_module *cfx_make_fx(cfx_fnptr fn, const char *signature, const cfx_value *args, int n_args,
                                      const cfx_make_fx_options *options);

#endif
