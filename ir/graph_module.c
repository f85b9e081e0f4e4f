/* graph_module.c - a graph with the tensors its get_attr nodes name (torch.fx.GraphModule).
 *
 * FX's GraphModule copies, from the tracer's root, every attribute a get_attr node names and
 * registers tensor constants as buffers. Here the tracer registers each one as it creates the
 * node, so the module is just the graph plus an ordered table of (qualified name, tensor),
 * the same table a cfx_module keeps its parameters in (dispatch/tensor_table.h), and a table of
 * opaque attributes (script objects, generators) that are no tensors. The module holds one
 * reference on each tensor and opaque value and owns the graph. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/generator.h"
#include "dispatch/tensor_table.h"
#include "ir/graph_module.h"
#include "ir/graph_module_internal.h"

/* An opaque attribute: a script object (CFX_V_OBJECT) or a generator (CFX_V_GENERATOR). */
typedef struct object_attr {
    char *name;
    cfx_value v;
} object_attr;

struct cfx_graph_module {
    cfx_graph *g;
    char *name;
    cfx_tensor_table attrs;
    object_attr *objects;
    int n_objects, cap_objects;
};

/* Script objects are hop/'s (reference counted there); it installs retain / release. */
static cfx_object *(*object_retain)(cfx_object *);
static void (*object_release)(cfx_object *);

void ir_graph_module_set_object_refcount(cfx_object *(*retain)(cfx_object *), void (*release)(cfx_object *))
{
    object_retain = retain;
    object_release = release;
}

cfx_graph_module *cfx_graph_module_new(cfx_graph *g, const char *name)
{
    if (!g)
        return NULL;
    cfx_graph_module *gm = cfx_calloc(1, sizeof *gm);
    char *nm = cfx_strdup(name ? name : "GraphModule");
    if (!gm || !nm) {
        cfx_free(gm);
        cfx_free(nm);
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
    for (int i = 0; i < gm->n_objects; i++) {
        if (gm->objects[i].v.kind == CFX_V_GENERATOR)
            cfx_generator_free(gm->objects[i].v.u.gen);
        else
            object_release(gm->objects[i].v.u.obj);
        cfx_free(gm->objects[i].name);
    }
    cfx_free(gm->objects);
    cfx_free(gm->name);
    cfx_graph_free(gm->g);
    cfx_free(gm);
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

int cfx_graph_module_set_attr_object(cfx_graph_module *gm, const char *qualname, cfx_object *obj)
{
    if (!gm || !qualname || !obj)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_module_set_attr_object: NULL argument");
    return cfx_graph_module_set_attr_opaque(gm, qualname, cfx_object_value(obj));
}

int cfx_graph_module_set_attr_opaque(cfx_graph_module *gm, const char *qualname, cfx_value v)
{
    bool gen = v.kind == CFX_V_GENERATOR;
    if (!gm || !qualname || !(gen || v.kind == CFX_V_OBJECT) || !v.u.obj)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_module_set_attr_opaque: NULL argument, or a value that is "
                                            "neither a script object nor a generator");
    if (!gen && !object_retain)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_module_set_attr_object: call cfx_hop_init() first");
    if (cfx_graph_module_get_attr(gm, qualname) || cfx_graph_module_get_attr_opaque(gm, qualname).kind != CFX_V_NONE)
        return cfx_error_set(CFX_ERR, NULL, "attribute '%s' already exists", qualname);
    if (gm->n_objects == gm->cap_objects) {
        int cap = gm->cap_objects ? 2 * gm->cap_objects : 4;
        object_attr *o = cfx_realloc(gm->objects, (size_t)cap * sizeof *o);
        if (!o)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        gm->objects = o;
        gm->cap_objects = cap;
    }
    char *nm = cfx_strdup(qualname);
    if (!nm)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (gen)
        cfx_generator_retain(v.u.gen);
    else
        object_retain(v.u.obj);
    gm->objects[gm->n_objects++] = (object_attr){nm, v};
    return CFX_OK;
}

cfx_value cfx_graph_module_get_attr_opaque(const cfx_graph_module *gm, const char *qualname)
{
    for (int i = 0; gm && qualname && i < gm->n_objects; i++)
        if (!strcmp(gm->objects[i].name, qualname))
            return gm->objects[i].v;
    return cfx_none();
}

cfx_object *cfx_graph_module_get_attr_object(const cfx_graph_module *gm, const char *qualname)
{
    cfx_value v = cfx_graph_module_get_attr_opaque(gm, qualname);
    return v.kind == CFX_V_OBJECT ? v.u.obj : NULL;
}

int cfx_graph_module_n_object_attrs(const cfx_graph_module *gm) { return gm ? gm->n_objects : 0; }

const char *cfx_graph_module_object_attr_name(const cfx_graph_module *gm, int i)
{
    return gm && i >= 0 && i < gm->n_objects ? gm->objects[i].name : NULL;
}

cfx_value cfx_graph_module_opaque_attr(const cfx_graph_module *gm, int i)
{
    return gm && i >= 0 && i < gm->n_objects ? gm->objects[i].v : cfx_none();
}

cfx_object *cfx_graph_module_object_attr(const cfx_graph_module *gm, int i)
{
    cfx_value v = cfx_graph_module_opaque_attr(gm, i);
    return v.kind == CFX_V_OBJECT ? v.u.obj : NULL;
}
