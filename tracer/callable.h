/* callable.h - the kinds of user callables a trace meets, given a C meaning (Dynamo's function
 * variables, torch/_dynamo/variables/functions.py).
 *
 * A cfx_callable is a C function plus its signature as a schema string ("scale(Tensor x,
 * float s=2.0) -> Tensor"), called with boxed positional and keyword arguments bound as
 * inspect.signature(f).bind(*args, **kwargs) binds them (then apply_defaults). What happens
 * at the call depends on the kind, each one a file of tracer/:
 *
 *   plain        (callable.c)          the function runs as C code: under make_fx its operators
 *                                      are recorded where it is called (UserFunctionVariable
 *                                      inlining)
 *   closure      (callable.c)          the same with a leading `void *env` argument (a Python
 *                                      closure's cells), as HOPs take functions (hop/object.h
 *                                      wraps a callable as an argument value)
 *   constant     (callable_constant.c) called at trace time on constant arguments, tracing
 *                                      off; its tensor result enters the graph as a get_attr
 *                                      constant (torch._dynamo.assume_constant_result)
 *   partial      (callable_partial.c)  bound positional and keyword arguments merged at call
 *                                      time (functools.partial), and a plain C function pointer
 *                                      for it (a libffi closure)
 *   context      (callable_context.c)  enter/exit hooks around the call, exit run on error too
 *                                      (a `with` block: no_grad, a dispatch-key guard)
 *   opaque       (callable_opaque.c)   kept as one call_function node (allow_in_graph): the
 *                                      function becomes an operator whose fake rule gives its
 *                                      output's metadata under fake tracing
 *
 * Callables are reference counted: a partial or a wrapper holds its inner callable. Errors
 * are recorded as everywhere in cfx (error.h): NULL or a negative status, first error kept. */
#ifndef CFX_TRACER_CALLABLE_H
#define CFX_TRACER_CALLABLE_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/keys.h"
#include "dispatch/schema.h"
#include "dispatch/value.h"
#include "ir/node.h"

typedef struct cfx_callable cfx_callable;

/* A call's keyword arguments are cfx_kwarg {name, value} (ir/node.h), as a node's are. */

/* A plain C function: fn has the signature's unboxed C types (boxing.h), e.g.
 * `cfx_tensor *scale(cfx_tensor *x, double s)` for "scale(Tensor x, float s=2.0) -> Tensor".
 * A signature without a name ("(Tensor x) -> Tensor") names the function "f". */
CFX_API cfx_callable *cfx_callable_new(cfx_fnptr fn, const char *signature);
/* A closure: fn takes env first, then the signature's C types (`ret fn(void *env, ...)`);
 * env_free (may be NULL) runs when the callable dies. Traced like a plain function. */
CFX_API cfx_callable *cfx_callable_closure_new(cfx_fnptr fn, const char *signature, void *env,
                                               void (*env_free)(void *env));
/* The C function of a plain callable (cfx_callable_new), which make_fx can trace by itself;
 * NULL for the other kinds. */
CFX_API cfx_fnptr cfx_callable_plain_fn(const cfx_callable *c);
CFX_API cfx_callable *cfx_callable_retain(cfx_callable *c); /* NULL-safe; returns c */
CFX_API void cfx_callable_release(cfx_callable *c);         /* NULL-safe */
CFX_API const char *cfx_callable_name(const cfx_callable *c);
/* The parameters a call binds (a partial's are what is left unbound). */
CFX_API const cfx_schema *cfx_callable_schema(const cfx_callable *c);

/* Calls c: args bound positionally, then kwargs by name, then defaults, with inspect's errors
 * ("missing a required argument: 'x'", "too many positional arguments", "multiple values for
 * argument 'x'", "got an unexpected keyword argument 'y'"). *out receives the return (None
 * for "-> ()", a tuple for several); tensors in it belong to the current scope. */
CFX_API int cfx_callable_call(cfx_callable *c, const cfx_value *args, int n_args, const cfx_kwarg *kwargs,
                              int n_kwargs, cfx_value *out);

/* ---- constant-marked (callable_constant.c) ------------------------------------------------ */

/* fn marked as torch._dynamo.assume_constant_result: under make_fx it is called at trace time
 * with tracing off (its operators are not recorded), on arguments that must be constants (no
 * tensor produced by the trace, unless tracing real tensors, where a traced tensor's real
 * value is used as Dynamo's get_real_value does); a tensor result enters the graph where it is
 * used, as a get_attr node (`_tensor_constantN`, as make_fx interns every constant). A fake
 * tensor argument (without a constant value) is
 * refused with Dynamo's "assume_constant_result argument conversion failed" graph break. */
CFX_API cfx_callable *cfx_callable_assume_constant(cfx_fnptr fn, const char *signature);

/* ---- partial (callable_partial.c) --------------------------------------------------------- */

/* functools.partial(fn, *args, **kwargs): the bound positional arguments come first at every
 * call, the bound keywords are overridden by the call's own (FunctoolsPartialVariable's merge).
 * Values are copied (tensors retained). */
CFX_API cfx_callable *cfx_partial_new(cfx_callable *fn, const cfx_value *args, int n_args, const cfx_kwarg *kwargs,
                                      int n_kwargs);
/* The partial as a plain C function of its unbound parameters, in order, with their C types
 * (Tensor, int, float, bool, str; the return: one Tensor, int, float or bool): a libffi closure
 * valid while p lives. A call through it that fails returns NULL / 0 with the error recorded. */
CFX_API cfx_fnptr cfx_partial_fnptr(cfx_callable *p);

/* ---- context-wrapped (callable_context.c) ------------------------------------------------- */

typedef struct cfx_context_hooks {
    /* Entered before the call: 0, or an error status (the call is then not made). *state
     * is handed to exit. */
    int (*enter)(void *ctx, void **state);
    /* Always run after a successful enter, whether the call failed or not. */
    void (*exit)(void *ctx, void *state);
} cfx_context_hooks;

/* fn called inside `with ctx:`; hooks is copied, ctx must outlive the callable. */
CFX_API cfx_callable *cfx_callable_with_context(cfx_callable *fn, const cfx_context_hooks *hooks, void *ctx);
/* A dispatch-key guard around fn: keys excluded from dispatch for the call
 * (ExcludeDispatchKeyGuard), the thread's sets restored afterwards, on error too. */
CFX_API cfx_callable *cfx_callable_exclude_keys(cfx_callable *fn, cfx_keyset keys);

/* ---- opaque, allow-in-graph (callable_opaque.c) ------------------------------------------- */

/* fn defined as the operator `qualname` ("mylib::fused", the signature's name ignored) with fn
 * as its CPU kernel and fake_rule (same C signature: it returns tensors of the output's shape,
 * dtype and strides for the given fake inputs, e.g. cfx_empty_like) as its Meta kernel. Under
 * make_fx a call is one call_function node `torch.ops.mylib.fused.default`, never its
 * insides. fake_rule NULL: fake tracing refuses the call with torch.library's "There was no
 * fake impl registered" text. The operator stays registered until the callable is freed. */
CFX_API cfx_callable *cfx_callable_allow_in_graph(cfx_fnptr fn, const char *qualname, const char *signature,
                                                  cfx_fnptr fake_rule);

#endif
