/* with_effects.h - the with_effects higher-order operator (torch.ops.higher_order.with_effects,
 * PyTorch 2.13): with_effects(token, op, *args) -> (new_token, *outs). See dispatch/effects.h
 * for the registry and tokens; cfx_hop_init installs handle_effects, the rewrite that
 * functionalization with tokens applies to effectful ops. */
#ifndef CFX_HOP_WITH_EFFECTS_H
#define CFX_HOP_WITH_EFFECTS_H

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"
#include "hop/hop.h"

/* The HOP (creating the HOPs on first use). NULL + error if it could not be created. */
CFX_API cfx_hop *cfx_with_effects_hop(void);
/* with_effects(token, op, *args): *out is the tuple (new_token, out) or (new_token, *outs)
 * (scope-owned). Errors: an op with alias annotations ("Ops with aliasing is not supported"). */
CFX_API int cfx_with_effects(cfx_tensor *token, const cfx_op *op, const cfx_value *args, int n, cfx_value *out);

#endif
