/* graph_module.h - a graph plus the attributes its get_attr nodes name (torch.fx.GraphModule).
 *
 * make_fx returns one: the traced graph, the class name codegen uses (`forward` belongs to a
 * class named after the traced function), and the tensors behind get_attr nodes: model
 * parameters under their qualified names ("fc1.weight") and interned constants
 * ("_tensor_constant0"), and script objects ("_torchbind_obj0"). The module holds a reference
 * on each tensor and object. */
#ifndef CFX_IR_GRAPH_MODULE_H
#define CFX_IR_GRAPH_MODULE_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"
#include "ir/graph.h"

typedef struct cfx_graph_module cfx_graph_module;

/* Takes ownership of g. name may be NULL ("GraphModule"). */
CFX_API cfx_graph_module *cfx_graph_module_new(cfx_graph *g, const char *name);
CFX_API void cfx_graph_module_free(cfx_graph_module *gm); /* NULL-safe; frees the graph */

CFX_API cfx_graph *cfx_graph_module_graph(const cfx_graph_module *gm);
CFX_API const char *cfx_graph_module_name(const cfx_graph_module *gm);

/* Registers (retains) t under a dotted qualified name; replaces an existing entry. */
CFX_API int cfx_graph_module_set_attr(cfx_graph_module *gm, const char *qualname, cfx_tensor *t);
CFX_API cfx_tensor *cfx_graph_module_get_attr(const cfx_graph_module *gm, const char *qualname);
/* Attributes in registration order: returns the count; name/tensor of entry i. */
CFX_API int cfx_graph_module_n_attrs(const cfx_graph_module *gm);
CFX_API const char *cfx_graph_module_attr_name(const cfx_graph_module *gm, int i);
CFX_API cfx_tensor *cfx_graph_module_attr(const cfx_graph_module *gm, int i);
/* Opaque attributes: the values its get_attr nodes read that are no tensors, as make_fx
 * interns them when they are not graph inputs: script objects (`_torchbind_obj0`) and
 * torch.Generators (`_opaque_obj0`, 2.13 registers Generator as an opaque reference type).
 * The module holds a reference on each (for script objects hop/ installs the reference
 * counting: cfx_hop_init must have run). Errors: a name already used by a tensor or an opaque
 * attribute, a NULL argument, a value of another kind. */
CFX_API int cfx_graph_module_set_attr_opaque(cfx_graph_module *gm, const char *qualname, cfx_value v);
/* The opaque attribute named qualname (a CFX_V_OBJECT or CFX_V_GENERATOR value), or None. */
CFX_API cfx_value cfx_graph_module_get_attr_opaque(const cfx_graph_module *gm, const char *qualname);
/* The same for script objects only. */
CFX_API int cfx_graph_module_set_attr_object(cfx_graph_module *gm, const char *qualname, cfx_object *obj);
/* The script object attribute named qualname, or NULL (also for a generator). */
CFX_API cfx_object *cfx_graph_module_get_attr_object(const cfx_graph_module *gm, const char *qualname);
/* Opaque attributes in registration order: the count; name / value of entry i; the script
 * object of entry i (NULL for a generator). */
CFX_API int cfx_graph_module_n_object_attrs(const cfx_graph_module *gm);
CFX_API const char *cfx_graph_module_object_attr_name(const cfx_graph_module *gm, int i);
CFX_API cfx_value cfx_graph_module_opaque_attr(const cfx_graph_module *gm, int i);
CFX_API cfx_object *cfx_graph_module_object_attr(const cfx_graph_module *gm, int i);
/* hasattr(gm, path): path is an attribute or a prefix module of one ("fc1" when "fc1.weight"
 * is registered). Linear in the number of attributes. */
CFX_API bool cfx_graph_module_has_path(const cfx_graph_module *gm, const char *path);

#endif
