/* hop.h - higher-order operators (torch._ops.HigherOrderOperator in C).
 *
 * A higher-order operator (HOP) is an operator whose arguments may be functions and stateful
 * objects as well as tensors, so it has no fixed schema and no table of compiled kernels.
 * What it has instead, as in PyTorch 2.13, is three tables of implementations chosen at each
 * call:
 *  - per dispatch key (py_impl(DispatchKey.X)): CompositeExplicitAutograd for the plain
 *    computation, Autograd (see autograd.h), Functionalize, or any runtime key;
 *  - per mode type (py_impl(ProxyTorchDispatchMode)): the infrastructure slots of the mode
 *    stack (proxy, fake, functional) and user modes, identified by their vtable;
 *  - a functionalize implementation (py_functionalize_impl), registered at once for the
 *    Functionalize key and the functional mode; it receives a cfx_functionalize_ctx offering
 *    unwrap / wrap / redispatch-to-next, whose behaviour the functionalization layer installs
 *    (cfx_functionalize_set_ops).
 *
 * A call computes the key set as HigherOrderOperator.__call__ does (thread-local included
 * keys | keys of every tensor in the arguments, minus the excluded keys, masked by the HOP's
 * non-fallthrough keys) and dispatches on its highest key. At the Python key the top mode's
 * type picks the implementation, which runs with that mode popped (pushed back after, also
 * on error); a mode with no rule is PyTorch's "There was no rule registered for
 * HigherOrderOperator ..." error; with no mode, a fake tensor argument brings its fake mode's
 * rule. Any other key goes through resolve_key's alias resolution (CompositeExplicitAutograd-
 * NonFunctional, CompositeExplicitAutograd, CompositeImplicitAutograd, Autograd, backend
 * fallback) and a key with no implementation is PyTorch's "could not find kernel for
 * HigherOrderOperator ..." error. The keys PyTorch falls through by default (PythonDispatcher,
 * PythonTLSSnapshot, ADInplaceOrView, BackendSelect, AutocastCPU/CUDA/XPU) fall through.
 *
 * Arguments are boxed values: tensors, numbers, strings, lists/tuples, script objects and
 * callables (object.h: C functions and closures are cfx_object values). The result is one
 * value (a tuple for several results); tensors in it belong to the current scope (scope.h),
 * as operator results do, and a tuple's item array is scope memory too.
 *
 * A HOP is also a graph target: cfx_hop_target() is a builtin function descriptor printed
 * `torch.ops.higher_order.NAME` by str(graph) and python_code, named NAME by the graph name
 * space, registered for JSON loading and for the interpreter (which calls the HOP), and
 * side-effectful for every pass when the HOP is created so (call_torchbind).
 *
 * HOPs live for the process (PyTorch keeps them in a module-level dict): a name is taken
 * once, and registration functions are meant to run at start-up, not concurrently with calls. */
#ifndef CFX_HOP_HOP_H
#define CFX_HOP_HOP_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/keys.h"
#include "dispatch/mode.h"
#include "dispatch/value.h"
#include "ir/target.h"

typedef struct cfx_hop cfx_hop;
typedef struct cfx_functionalize_ctx cfx_functionalize_ctx;

/* An implementation: args[0..n_args) in, the result in *out (scope-owned tensors). mode is the
 * (popped) mode for a mode implementation, NULL for a key implementation; ctx is what was
 * given at registration. CFX_OK or a negative status with the error recorded. */
typedef int (*cfx_hop_impl_fn)(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n_args,
                               cfx_value *out);
/* A functionalize implementation (py_functionalize_impl): receives the context first. */
typedef int (*cfx_hop_functionalize_fn)(cfx_hop *hop, cfx_functionalize_ctx *fctx, void *ctx,
                                        const cfx_value *args, int n_args, cfx_value *out);

/* Creates HOP `name` (HigherOrderOperator.__init__): error "a higher-order operator named X
 * already exists" if the name is taken. side_effect marks its graph target impure (FX's
 * has_side_effect). NULL + error on failure. */
CFX_API cfx_hop *cfx_hop_new(const char *name, bool side_effect);
/* The HOP registered under name, or NULL (torch.ops.higher_order.NAME). */
CFX_API cfx_hop *cfx_hop_find(const char *name);
/* The HOP a graph target descriptor belongs to, or NULL. */
CFX_API cfx_hop *cfx_hop_from_target(const cfx_builtin_fn *fn);
CFX_API const char *cfx_hop_name(const cfx_hop *hop);
/* The graph target: qualified name "torch.ops.higher_order.NAME", __name__ NAME. */
CFX_API const cfx_builtin_fn *cfx_hop_target(const cfx_hop *hop);
/* The HOP as an argument value (CFX_V_HOP, as with_effects takes call_torchbind): printed
 * `call_torchbind` in graphs, `torch.ops.higher_order.call_torchbind` in code. */
CFX_API cfx_value cfx_hop_value(const cfx_hop *hop);
/* The HOP a CFX_V_HOP value names, else NULL. */
CFX_API cfx_hop *cfx_value_hop(cfx_value v);

/* py_impl(DispatchKey): k is a runtime or alias key. Python is refused ("Please register a
 * mode for the DispatchKey.Python key instead."), a second registration for k too ("Trying to
 * override a python impl for K on operator NAME"). The key stops falling through. */
CFX_API int cfx_hop_py_impl(cfx_hop *hop, cfx_dispatch_key k, cfx_hop_impl_fn fn, void *ctx);
/* py_impl(ModeType) for an infrastructure slot (FAKE, PROXY, FUNCTIONAL): the rule for every
 * mode in that slot. A second registration: "<class 'TYPE'> already registered in
 * python_key_table". */
CFX_API int cfx_hop_py_impl_mode(cfx_hop *hop, cfx_mode_key slot, cfx_hop_impl_fn fn, void *ctx);
/* py_impl(UserModeType): the rule for user modes with this vtable. */
CFX_API int cfx_hop_py_impl_user_mode(cfx_hop *hop, const cfx_mode_vtable *type, cfx_hop_impl_fn fn, void *ctx);
/* py_functionalize_impl: registers fn for the Functionalize key and the functional mode. */
CFX_API int cfx_hop_py_functionalize_impl(cfx_hop *hop, cfx_hop_functionalize_fn fn, void *ctx);
/* fallthrough(k): k is skipped when the HOP computes its dispatch key. */
CFX_API void cfx_hop_fallthrough(cfx_hop *hop, cfx_dispatch_key k);
/* Whether an implementation is registered for key k / the slot (has_kernel_for_dispatch_key). */
CFX_API bool cfx_hop_has_impl(const cfx_hop *hop, cfx_dispatch_key k);
CFX_API bool cfx_hop_has_mode_impl(const cfx_hop *hop, cfx_mode_key slot);

/* hop(*args): computes the dispatch key and dispatches (see above). */
CFX_API int cfx_hop_call(cfx_hop *hop, const cfx_value *args, int n_args, cfx_value *out);
/* hop.dispatch(k, *args): dispatches at key k as if it had been computed. */
CFX_API int cfx_hop_dispatch(cfx_hop *hop, cfx_dispatch_key k, const cfx_value *args, int n_args, cfx_value *out);
/* The key cfx_hop_call would dispatch on for these arguments (Undefined when none). */
CFX_API cfx_dispatch_key cfx_hop_dispatch_key(const cfx_hop *hop, const cfx_value *args, int n_args);

/* ---- the functionalize context -------------------------------------------------------------
 * PyTorch's BaseFunctionalizeAPI: unwrap_tensors, wrap_tensors, redispatch_to_next. The
 * functionalization layer installs the operations for each route; until it does, unwrap and
 * wrap copy values as they are and redispatch-to-next excludes the Functionalize key (the key
 * route) or does nothing (the mode route: the functional mode is already popped). */
typedef enum cfx_functionalize_route {
    CFX_FUNCTIONALIZE_KEY = 0,  /* DispatchKey.Functionalize: CppFunctionalizeAPI */
    CFX_FUNCTIONALIZE_MODE = 1, /* the functional mode: PythonFunctionalizeAPI(mode) */
} cfx_functionalize_route;

typedef struct cfx_functionalize_ops {
    /* out[0..n) from in[0..n): functional tensors to the tensors they wrap (recursing into
     * lists and tuples; the container arrays are scope memory), other values unchanged. */
    int (*unwrap)(cfx_functionalize_ctx *c, const cfx_value *in, int n, cfx_value *out);
    /* The reverse: tensors produced below functionalization wrapped as functional tensors. */
    int (*wrap)(cfx_functionalize_ctx *c, const cfx_value *in, int n, cfx_value *out);
    /* redispatch_to_next(): begin makes calls go below functionalization until end. */
    int (*redispatch_begin)(cfx_functionalize_ctx *c);
    void (*redispatch_end)(cfx_functionalize_ctx *c);
} cfx_functionalize_ops;

struct cfx_functionalize_ctx {
    cfx_functionalize_route route;
    cfx_mode *mode;                  /* the functional mode (popped) on the mode route, else NULL */
    const cfx_functionalize_ops *ops;
    cfx_key_guard guard;             /* the default redispatch's exclusion guard */
    void *state;                     /* free for the installed ops between begin and end */
};

/* Installs ops for a route (NULL restores the defaults). Process-wide. */
CFX_API void cfx_functionalize_set_ops(cfx_functionalize_route route, const cfx_functionalize_ops *ops);
CFX_API int cfx_functionalize_unwrap(cfx_functionalize_ctx *c, const cfx_value *in, int n, cfx_value *out);
CFX_API int cfx_functionalize_wrap(cfx_functionalize_ctx *c, const cfx_value *in, int n, cfx_value *out);
CFX_API int cfx_functionalize_redispatch_begin(cfx_functionalize_ctx *c);
CFX_API void cfx_functionalize_redispatch_end(cfx_functionalize_ctx *c);

/* ---- helpers for implementations -------------------------------------------------------- */

/* Python's qualified class name of a mode type, as PyTorch's messages print it:
 * "torch.fx.experimental.proxy_tensor.ProxyTorchDispatchMode" for the proxy slot,
 * "torch._subclasses.fake_tensor.FakeTensorMode", "torch._subclasses.functional_tensor.
 * FunctionalTensorMode"; a user mode's vtable name. */
CFX_API const char *cfx_hop_mode_type_name(const cfx_mode *m);

#endif
