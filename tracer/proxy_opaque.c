/* proxy_opaque.c - Tracer.create_arg for opaque values that are no graph inputs: script
 * objects and torch.Generators, interned as attributes of the graph module.
 *
 * PyTorch 2.13's Tracer.create_arg stows such a value away in a fresh attribute of the root
 * the first time it meets it (get_fresh_qualname: `_torchbind_obj0` for a ScriptObject,
 * `_opaque_obj0` for an opaque reference type, which Generator is since 2.13 registers it in
 * torch/_prims/rng_prims.py), remembers it by identity (tensor_attrs), and makes one get_attr
 * node per USE (`_opaque_obj0_1` the second time), without meta. The graph module holds a
 * reference on the value, and it is the same object, not a copy: running the graph advances
 * the generator the traced program was given. */
#include <stdio.h>
#include <string.h>

#include "dispatch/error.h"
#include "tracer/proxy.h"

cfx_node *cfx_proxy_opaque_attr_node(cfx_proxy_mode *pm, cfx_value v, const char *base)
{
    cfx_graph_module *gm = cfx_proxy_mode_graph_module(pm);
    if (!gm || !base)
        return NULL;
    const char *name = NULL;
    for (int i = 0; !name && i < cfx_graph_module_n_object_attrs(gm); i++) {
        cfx_value a = cfx_graph_module_opaque_attr(gm, i);
        if (a.kind == v.kind && a.u.obj == v.u.obj)
            name = cfx_graph_module_object_attr_name(gm, i);
    }
    if (!name) {
        char fresh[64];
        for (int i = 0;; i++) {
            snprintf(fresh, sizeof fresh, "%.40s%d", base, i);
            if (!cfx_graph_module_get_attr(gm, fresh) && cfx_graph_module_get_attr_opaque(gm, fresh).kind == CFX_V_NONE)
                break;
        }
        if (cfx_graph_module_set_attr_opaque(gm, fresh, v) != CFX_OK)
            return NULL;
        name = cfx_graph_module_object_attr_name(gm, cfx_graph_module_n_object_attrs(gm) - 1);
    }
    return cfx_graph_get_attr(cfx_proxy_mode_graph(pm), name);
}
