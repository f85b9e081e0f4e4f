/* graph_module.c - a graph with the tensors its get_attr nodes name (torch.fx.GraphModule).
 *
 * FX's GraphModule copies, from the tracer's root, every attribute a get_attr node names and
 * registers tensor constants as buffers. Here the tracer registers each one as it creates the
 * node, so the module is just the graph plus an ordered table of (qualified name, tensor),
 * the same table a cfx_module keeps its parameters in (dispatch/tensor_table.h). The module
 * holds one reference on each tensor and owns the graph. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/tensor_table.h"
#include "ir/graph_module.h"

struct cfx_graph_module {
    cfx_graph *g;
    char *name;
    cfx_tensor_table attrs;
};

cfx_graph_module *cfx_graph_module_new(cfx_graph *g, const char *name)
{
    if (!g)
        return NULL;
    cfx_graph_module *gm = calloc(1, sizeof *gm);
    char *nm = strdup(name ? name : "GraphModule");
    if (!gm || !nm) {
        free(gm);
        free(nm);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    gm->g = g;
    gm->name = nm;
    return gm;
}

void cfx_graph_module_free(cfx_graph_module *gm)
{
    if (!gm)
        return;
    cfx_tensor_table_clear(&gm->attrs);
    free(gm->name);
    cfx_graph_free(gm->g);
    free(gm);
}

cfx_graph *cfx_graph_module_graph(const cfx_graph_module *gm) { return gm ? gm->g : NULL; }
const char *cfx_graph_module_name(const cfx_graph_module *gm) { return gm ? gm->name : NULL; }

int cfx_graph_module_set_attr(cfx_graph_module *gm, const char *qualname, cfx_tensor *t)
{
    if (!gm || !qualname || !t)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_module_set_attr: NULL argument");
    return cfx_tensor_table_put(&gm->attrs, qualname, t);
}

cfx_tensor *cfx_graph_module_get_attr(const cfx_graph_module *gm, const char *qualname)
{
    if (!gm)
        return NULL;
    return cfx_tensor_table_tensor_at(&gm->attrs, cfx_tensor_table_find(&gm->attrs, qualname));
}

int cfx_graph_module_n_attrs(const cfx_graph_module *gm) { return gm ? cfx_tensor_table_count(&gm->attrs) : 0; }

const char *cfx_graph_module_attr_name(const cfx_graph_module *gm, int i)
{
    return gm ? cfx_tensor_table_name_at(&gm->attrs, i) : NULL;
}

cfx_tensor *cfx_graph_module_attr(const cfx_graph_module *gm, int i)
{
    return gm ? cfx_tensor_table_tensor_at(&gm->attrs, i) : NULL;
}

bool cfx_graph_module_has_path(const cfx_graph_module *gm, const char *path)
{
    return gm && path && cfx_tensor_table_has_prefix(&gm->attrs, path, strlen(path));
}
