/* proxy_attrs.c - Tracer.create_arg for a tensor bound to no node (PyTorch 2.13).
 *
 * make_fx traces a function, so its root module is empty: a parameter (a tensor of the
 * cfx_module the model reads) is interned as `_param_constantN`, any other tensor as
 * `_tensor_constantN` (one attribute per tensor, named by Tracer.get_fresh_qualname, found
 * again by address). Like FX, every USE creates its own get_attr node (`_tensor_constant0_1`
 * the second time), placed just before the node that uses it, with meta["val"] only.
 *
 * Kept apart from the handler (proxy.c): a tensor the trace has not seen is the rare case,
 * and the handler's argument mapping only asks the tensor's binding first. */
#include <string.h>

#include "dispatch/hash.h"
#include "ir/graph.h"
#include "tracer/proxy_internal.h"

static const char *const qual_prefix[QUAL_COUNT] = {"_param_constant", "_tensor_constant"};

static int grow_consts(cfx_proxy_mode *pm)
{
    uint32_t cap = pm->const_cap ? pm->const_cap * 2 : 16;
    const_entry *nc = cfx_calloc(cap, sizeof *nc);
    if (!nc)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (uint32_t i = 0; i < pm->const_cap; i++) {
        if (!pm->consts[i].t)
            continue;
        uint32_t j = (uint32_t)cfx_hash_ptr(pm->consts[i].t) & (cap - 1);
        while (nc[j].t)
            j = (j + 1) & (cap - 1);
        nc[j] = pm->consts[i];
    }
    cfx_free(pm->consts);
    pm->consts = nc;
    pm->const_cap = cap;
    return CFX_OK;
}

static const_entry *const_slot(const cfx_proxy_mode *pm, const cfx_tensor *t)
{
    uint32_t mask = pm->const_cap - 1;
    uint32_t i = (uint32_t)cfx_hash_ptr(t) & mask;
    while (pm->consts[i].t && pm->consts[i].t != t)
        i = (i + 1) & mask;
    return &pm->consts[i];
}

/* The attribute name t is interned under, registering t the first time: the first
 * `<prefix>N` the graph module does not have, N counting on from the last one given
 * (Tracer.get_fresh_qualname; the root holds nothing but interned tensors). */
static const char *interned_name(cfx_proxy_mode *pm, cfx_tensor *t, int kind)
{
    if (pm->const_cap && const_slot(pm, t)->t)
        return const_slot(pm, t)->name;
    if (2 * (pm->n_consts + 1) > pm->const_cap && grow_consts(pm) != CFX_OK)
        return NULL;
    const char *prefix = qual_prefix[kind];
    size_t plen = strlen(prefix);
    char name[32];
    memcpy(name, prefix, plen);
    for (;; pm->qual_next[kind]++) {
        name[plen + cfx_fmt_u64(pm->qual_next[kind], name + plen)] = '\0';
        if (!cfx_graph_module_get_attr(pm->gm, name))
            break;
    }
    pm->qual_next[kind]++;
    if (cfx_graph_module_set_attr(pm->gm, name, t) != CFX_OK)
        return NULL;
    const char *stored = cfx_graph_module_attr_name(pm->gm, cfx_graph_module_n_attrs(pm->gm) - 1);
    *const_slot(pm, t) = (const_entry){t, stored};
    pm->n_consts++;
    return stored;
}

/* A get_attr node with meta["val"] (PythonKeyTracer.create_node) and the stack trace if
 * recorded. */
cfx_node *cfx_proxy_attr_node(cfx_proxy_mode *pm, cfx_tensor *t)
{
    const char *name = interned_name(pm, t, cfx_module_name_of(pm->module, t) ? QUAL_PARAM : QUAL_TENSOR);
    cfx_node *n = name ? cfx_graph_get_attr(pm->g, name) : NULL;
    if (!n)
        return NULL;
    cfx_meta_val v = cfx_proxy_tensor_val(t);
    const cfx_site *site = cfx_proxy_site_to_record(pm);
    if (cfx_node_set_val(n, &v) != CFX_OK || (site && cfx_node_set_stack_trace(n, site) != CFX_OK))
        return NULL;
    return n;
}
