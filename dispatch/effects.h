/* effects.h - the effect registry and effect tokens (torch._library.effects and the token
 * half of torch._higher_order_ops.effects, PyTorch 2.13).
 *
 * An operator with an effect (printing, a call on a stateful object) must not be reordered
 * or removed by graph passes, yet a functional graph has no order but data flow. PyTorch's
 * answer, reproduced here: under functionalization each effectful op is rewritten as
 * `with_effects(token, op, *args) -> (new_token, *outs)`, and successive ops of one effect type
 * chain their tokens, so the order is data flow. The graph gets one token per effect type as
 * its leading input and the final token as its leading output.
 *
 * The registry maps an operator's qualified name ("aten::_print", or a higher-order
 * operator's name, "call_torchbind") to its effect. 2.13 pre-registers aten::_print and
 * aten::_linalg_check_errors as ORDERED; an op with no entry is ORDERED when one of its
 * arguments is a custom class (a script object), else it has no effect. has_effects also
 * requires the schema to have no alias annotations, so in-place ops never get tokens.
 *
 * A token is its own value kind, CFX_V_TOKEN (cfx_token_value), carried by a tensor as 2.13's
 * token is one (`torch.tensor([])`: float32, one dimension of size 0): tracers and
 * functionalization track and wrap it by that tensor like any, while graphs, passes, the
 * interpreter, JSON ({"token": ...} vals) and codegen tell it from data by the kind (a traced
 * node carrying a token gets a token val, CFX_MVAL_TOKEN). cfx_tensor_is_token tells a
 * token's tensor made here from other tensors. The rewrite itself (handle_effects, with_effects) is a higher-order operator and
 * lives in hop/effects.c, which installs it with cfx_effects_set_handler; the
 * functionalization kernel calls it for effectful ops while its functional mode threads
 * tokens (cfx_functional_mode_enable_tokens). */
#ifndef CFX_EFFECTS_H
#define CFX_EFFECTS_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/operator.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"

typedef enum cfx_effect_type {
    CFX_EFFECT_NONE = -1, /* "no effect" (None in Python), not an effect type */
    CFX_EFFECT_ORDERED = 0,
    CFX_EFFECT_NUM_TYPES = 1
} cfx_effect_type;

/* "EffectType.ORDERED" (str() of the Python enum, as messages print it); NULL if invalid. */
CFX_API const char *cfx_effect_type_name(cfx_effect_type e);

/* _register_effectful_op(op, effect): qualname "ns::name" (every overload) or a HOP name.
 * CFX_EFFECT_NONE removes an entry. Errors: NULL name, an invalid effect. */
CFX_API int cfx_register_effectful_op(const char *qualname, cfx_effect_type e);
/* A counter that changes whenever the registry does (caches of answers derived from it). */
CFX_API unsigned cfx_effects_version(void);
/* The effect registered for qualname, else CFX_EFFECT_NONE (no schema rule). */
CFX_API cfx_effect_type cfx_effect_of_name(const char *qualname);
/* _get_effect(op): the registry, else ORDERED for a custom-class argument, else NONE. */
CFX_API cfx_effect_type cfx_op_effect(const cfx_op *op);
/* has_effects(op): an effect and no alias annotation in the schema. */
CFX_API bool cfx_op_has_effects(const cfx_op *op);

/* new_token_tensor(): a fresh token's tensor (float32, size [0]), autoreleased into the current
 * scope; cfx_token_value(t) is the token as a value. */
CFX_API cfx_tensor *cfx_token_new(void);
/* Whether t is a token made by cfx_token_new (or a functional wrapper of one). */
CFX_API bool cfx_tensor_is_token(const cfx_tensor *t);
/* Marks t (e.g. a fake copy of a token) as a token. */
CFX_API int cfx_tensor_mark_token(cfx_tensor *t);

/* handle_effects for op on stack (all schema arguments in, the returns out), installed by the
 * HOP layer; it reads and replaces the functional mode's tokens (functional.h). */
struct cfx_functional_mode;
typedef int (*cfx_effects_handler)(const cfx_op *op, cfx_value *stack, struct cfx_functional_mode *mode);
CFX_API void cfx_effects_set_handler(cfx_effects_handler h);
CFX_API cfx_effects_handler cfx_effects_get_handler(void);

#endif
