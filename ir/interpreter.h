/* interpreter.h - run a graph node by node on real values (torch.fx.Interpreter).
 *
 * The interpreter walks the graph in order and gives every node a value: a placeholder takes
 * the next input (or its default), a get_attr the graph module's attribute, a call_function
 * on an operator calls it through the dispatcher with the node's args and kwargs bound by the
 * operator's schema (kwargs to their positions, skipped defaults filled in: torch.ops' own
 * binding, with its error texts), a call_function on operator.getitem indexes the tuple an
 * operator with several returns gave (or the list of a Tensor[] return), and the output node
 * returns its argument with every node replaced by its value. As FX's Interpreter does, each
 * value is dropped right after its last use (worked out once, when the graph is compiled),
 * so a long chain holds only the tensors still needed; a value nobody uses is dropped as
 * soon as it is made.
 *
 * Errors name the node as FX does: the failing call's message, then
 *     \n\nWhile executing %add : [num_users=1] = call_function[...](args = (...), kwargs = {})
 *     \nOriginal traceback:\n  File "model.c", line 12, in forward      (or None)
 * and the call returns a negative status with nothing leaked. While a node runs, the current
 * call site (error.h) is the node's recorded stack_trace, so errors carry the model's file and
 * line when the graph was traced with record_stack_traces.
 *
 * C-native choices: the results belong to the caller's innermost scope (scope.h), which must
 * be open: its tensors are autoreleased there and the item arrays of tuples and lists are
 * scope blocks (cfx_scope_alloc). Strings in the result may point into the graph. More inputs
 * than the graph's placeholders take is an error (FX ignores the extra ones). call_method and
 * call_module nodes cannot run (cfx graphs have no Python objects to call them on); of the
 * builtin functions, getitem, torch._assert and the operator module's arithmetic and
 * comparisons on int, float and bool run with Python's semantics. */
#ifndef CFX_IR_INTERPRETER_H
#define CFX_IR_INTERPRETER_H

#include "dispatch/export.h"
#include "dispatch/value.h"
#include "ir/graph.h"
#include "ir/graph_module.h"

/* Called after each node has run, with its value (borrowed: valid until the node's last user
 * has run), as a subclass of FX's Interpreter overrides run_node. A non-OK return (with an
 * error recorded) stops the run; the error is reported as the node's. */
typedef int (*cfx_interp_node_fn)(cfx_node *n, cfx_value value, void *ctx);

typedef struct cfx_interp_options {
    const cfx_graph_module *module; /* where get_attr nodes find their tensors (NULL: none) */
    cfx_interp_node_fn on_node;     /* NULL: none */
    void *on_node_ctx;
} cfx_interp_options;

/* FX's Interpreter object: made for a graph once and run any number of times. Making it
 * compiles the graph (every node's arguments bound, each value's last user found, as FX's
 * __init__ finds user_to_last_uses), so a run does only the calls and the bookkeeping of its
 * values; a run after the graph changed compiles it again first. A node that cannot run (a
 * binding error, an input without a value at that point) fails when the run reaches it, as in
 * FX. The interpreter keeps g and opts->module (not copied): they must outlive it. One run at a
 * time: a run inside its own on_node callback is refused, and so is an on_node callback that
 * changes the graph. cfx_interpreter_new returns NULL (error recorded) only for a NULL graph or
 * on running out of memory. */
typedef struct cfx_interpreter cfx_interpreter;
CFX_API cfx_interpreter *cfx_interpreter_new(const cfx_graph *g, const cfx_interp_options *opts);
/* One run, as cfx_interpret below. */
CFX_API int cfx_interpreter_run(cfx_interpreter *ip, const cfx_value *args, int n_args, cfx_value *out);
CFX_API void cfx_interpreter_free(cfx_interpreter *ip);

/* Runs g on args[0..n_args) (boxed, in placeholder order). On success *out is the output
 * node's value (None for a graph without one) and the status CFX_OK; otherwise *out is None
 * and the error is recorded. If an error is pending when it is called, it returns at once and
 * keeps that error (call cfx_error_clear() first). opts may be NULL. A run of a new
 * cfx_interpreter, freed after it. */
CFX_API int cfx_interpret(const cfx_graph *g, const cfx_value *args, int n_args, const cfx_interp_options *opts,
                          cfx_value *out);

/* GraphModule.__call__ through the interpreter: cfx_interpret of gm's graph with gm's
 * attributes. */
CFX_API int cfx_graph_module_run(const cfx_graph_module *gm, const cfx_value *args, int n_args, cfx_value *out);

/* Builtin functions defined by later layers (a higher-order operator's graph target): how the
 * interpreter calls a call_function node whose target is fn. call gets the node's argument
 * values and writes the result to *out (tensors owned by the current scope, which the
 * interpreter opens around the call). Process-wide; registering fn again replaces its call. */
typedef int (*cfx_builtin_call_fn)(const cfx_builtin_fn *fn, void *ctx, const cfx_value *args, uint32_t n,
                                   cfx_value *out);
CFX_API int cfx_interp_register_builtin(const cfx_builtin_fn *fn, cfx_builtin_call_fn call, void *ctx);

#endif
