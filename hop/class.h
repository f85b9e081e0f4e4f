/* class.h - C classes whose instances are script objects (torch::class_ / torch.classes).
 *
 * PyTorch binds C++ classes with torch::class_<T>("ns", "Cls").def("method", ...); Python
 * then holds instances as torch.ScriptObject and calls their methods by name. cfx does the
 * same for C: a class is registered under "ns::Cls" (its script name is
 * `__torch__.torch.classes.ns.Cls`, as ScriptObject._type().qualified_name() prints it), with
 *  - methods: plain C functions `ret fn(cfx_object *self, args...)` described by a schema
 *    without self ("push(Tensor x) -> ()"), called through libffi like kernels (boxing.h's C
 *    types for the arguments and returns);
 *  - state: a pointer the class owns (freed by state_free with the object);
 *  - __obj_flatten__: flatten(state) lists the state as (name, value) pairs, which is what a
 *    fake class rebuilds a fake object from (fake_class.h) and what printing shows.
 * Method calls from traced code go through torchbind.h's cfx_object_call_method, which
 * becomes the call_torchbind HOP when torchbind tracing is on or the object is fake. Registration is process-wide and meant for start-up. */
#ifndef CFX_HOP_CLASS_H
#define CFX_HOP_CLASS_H

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "hop/object.h"

typedef struct cfx_class cfx_class;

typedef struct cfx_named_value {
    const char *name;
    cfx_value value;
} cfx_named_value;

/* __obj_flatten__: writes up to cap pairs to out (values borrowed from the state) and their
 * count to *n. CFX_OK or an error recorded. */
typedef int (*cfx_class_flatten_fn)(void *state, cfx_named_value *out, int cap, int *n);

/* torch::class_<T>(ns, Cls): qualname "ns::Cls". Re-registering a name is c10's error
 * ("Custom class with name __torch__.torch.classes.ns.Cls is already registered. ...").
 * flatten may be NULL (no __obj_flatten__). */
CFX_API cfx_class *cfx_class_register(const char *qualname, void (*state_free)(void *state),
                                      cfx_class_flatten_fn flatten);
/* .def(name, fn): schema "name(args) -> returns" without self. A second method of the same
 * name is an error. */
CFX_API int cfx_class_def_method(cfx_class *c, const char *schema, cfx_fnptr fn);
/* torch.classes.ns.Cls lookup; NULL + error "Tried to instantiate class 'ns.Cls', but it does
 * not exist! Ensure that it is registered via torch::class_" when missing. */
CFX_API cfx_class *cfx_class_find(const char *qualname);
CFX_API const char *cfx_class_qualname(const cfx_class *c);    /* "ns::Cls" */
CFX_API const char *cfx_class_script_name(const cfx_class *c); /* "__torch__.torch.classes.ns.Cls" */
CFX_API bool cfx_class_has_method(const cfx_class *c, const char *method);
/* Method names in definition order (i < count), NULL past the end; __obj_flatten__ counts
 * as a method when the class has one. */
CFX_API const char *cfx_class_method_name(const cfx_class *c, int i);
/* The method's declaration as TorchScript prints it, with self:
 * "push(__torch__.torch.classes.ns.Cls _0, Tensor x) -> NoneType _0" style (malloc'd). */
CFX_API char *cfx_class_method_schema(const cfx_class *c, const char *method);

/* A new instance owning state (freed with state_free when the object dies). */
CFX_API cfx_object *cfx_script_object_new(const cfx_class *c, void *state);
/* The class of a script object (NULL for other objects) and its state (a fake object's state
 * for a fake script object, so methods shared with a fake class read it the same way). */
CFX_API const cfx_class *cfx_object_class(const cfx_object *o);
CFX_API void *cfx_script_object_state(const cfx_object *o);
/* The class name a script or fake script object reports ("ns::Cls"), else NULL. */
CFX_API const char *cfx_object_qualname(const cfx_object *o);

/* The C method itself, never traced (call_torchbind's CompositeExplicitAutograd rule). */
CFX_API int cfx_script_object_call(cfx_object *obj, const char *method, const cfx_value *args, int n,
                                   cfx_value *out);
/* __obj_flatten__ of a script object. */
CFX_API int cfx_object_flatten(const cfx_object *obj, cfx_named_value *out, int cap, int *n);

#endif
