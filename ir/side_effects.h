/* side_effects.h - the one answer to "may this node be removed if nobody uses it?".
 *
 * FX's Node.is_impure(impure_random=True) (PyTorch 2.13): placeholder and output nodes are impure;
 * a call_function node is impure if its target's schema is mutable (some argument is written,
 * `Tensor(a!)`: every in-place and out= op), if impure_random and the target is registered
 * nondeterministic_seeded, or if the target is registered side-effectful; a call_module node
 * asks the owning module (cfx_graph_set_module_impure_fn); get_attr and call_method are pure.
 *
 * The registry is process-wide and keyed by name, so later layers can register targets that
 * do not exist yet: an operator by its name ("aten::_assert_async.msg", "aten::relu" for a
 * default overload), a builtin function by its qualified name ("torch._assert"). It starts
 * with 2.13's _side_effectful_functions. A builtin descriptor with side_effect = true is
 * impure without registration. Every pass asks through cfx_node_is_impure (or an override of
 * the cfx_impure_fn type, which DCE and friends accept, as eliminate_dead_code(is_impure_node)). */
#ifndef CFX_IR_SIDE_EFFECTS_H
#define CFX_IR_SIDE_EFFECTS_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "ir/node.h"
#include "ir/target.h"

/* has_side_effect(fn): registers a target. CFX_OK or CFX_ERR_NOMEM. */
CFX_API int cfx_side_effect_register(cfx_target t);
CFX_API int cfx_side_effect_register_name(const char *key);
/* Marks an operator nondeterministic_seeded (impure when impure_random). */
CFX_API int cfx_side_effect_register_nondeterministic(const char *key);
/* Whether a target is in the registry (or its builtin descriptor is flagged). */
CFX_API bool cfx_side_effect_is_registered(cfx_target t);
/* The registry key of a target ("aten::add.Tensor", "torch._assert"); NULL for strings. */
CFX_API const char *cfx_side_effect_key(cfx_target t);

CFX_API bool cfx_node_is_impure(const cfx_node *n);                       /* impure_random = true */
CFX_API bool cfx_node_is_impure_ex(const cfx_node *n, bool impure_random);

/* A caller's purity oracle (user_needs 1.3): returns true if n must be kept. */
typedef bool (*cfx_impure_fn)(const cfx_node *n, void *ctx);

#endif
