/* normalize_args.h - one spelling for every operator call: arguments bound by the schema.
 *
 * The same call can be written many ways in a graph built by hand or loaded from JSON:
 * add(x, other=y, alpha=1), add(x, y, alpha=1), add(x, y). This pass rewrites every
 * call_function node on an operator with a schema to the form make_fx records, the one
 * PyTorch 2.13's C++ -> Python hand-over produces (parseIValuesToPyArgsKwargs): the call is
 * bound to the schema (kwargs to their positions, omitted arguments from their defaults),
 * then
 *   - positional (not keyword-only) arguments are passed positionally, cut after the last one
 *     that differs from its default;
 *   - keyword-only arguments stay kwargs, in schema order, and are dropped when equal to their
 *     default.
 * Equality is IValue's ==: it compares the kind, so alpha=1.0 is not the default alpha=1 and
 * stays. A node whose call does not bind (an unknown or repeated keyword, a missing required
 * argument, too many arguments) or whose schema has varargs is left as it is, as FX's
 * normalize_function gives up on it; so are nodes of other kinds and builtin targets.
 *
 * Not torch.fx.experimental.normalize.NormalizeArgs: with normalize_to_only_use_kwargs=False
 * that keeps the given positional arguments and moves every other one, defaults included,
 * to kwargs (add(x, other=y) becomes add(x, other=y, alpha=1)), which is neither make_fx's
 * spelling nor shorter. cfx's spelling is make_fx's, so a normalized graph prints exactly as
 * PyTorch prints the make_fx trace of the same calls. Node meta, names and order are kept.
 *
 * ctx is unused (NULL). *changed: some node's args or kwargs were rewritten. */
#ifndef CFX_IR_PASSES_NORMALIZE_ARGS_H
#define CFX_IR_PASSES_NORMALIZE_ARGS_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/graph_module.h"

CFX_API int cfx_pass_normalize_args(cfx_graph_module *gm, void *ctx, bool *changed);

#endif
