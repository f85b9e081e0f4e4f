/* fake_class.h - fake classes for script objects (torch._library.fake_class_registry).
 *
 * Under fake tracing a real script object must not see fake tensors, and a fake trace must
 * never mutate it. PyTorch therefore turns it into a FakeScriptObject: the real object's state
 * is flattened (__obj_flatten__), every tensor in it replaced by a fake tensor of the same
 * metadata, and the registered fake class rebuilds a fake instance from those pairs
 * (__obj_unflatten__); method calls on it go to the fake class's methods through
 * call_torchbind. cfx does the same with C:
 *  - cfx_fake_class_register("ns::Cls", unflatten, state_free): unflatten builds the fake
 *    state from the (name, value) pairs (tensors already fake; values borrowed: retain what
 *    you keep);
 *  - cfx_fake_class_def_method(fc, "method", fn): fn has the real method's C signature, with
 *    the fake object as self (cfx_script_object_state works on it). A fake class may reuse the
 *    real class's C functions when they are safe on fake tensors;
 *  - re-registering warns (PyTorch's "... is already registered. Previous fake class is
 *    overridden with ..."); a class with no fake class gives PyTorch's " ScriptObject's ...
 *    haven't registered a fake class. ..." when a fake trace meets it; methods the fake class
 *    lacks warn "fake object of ScriptObject <...> doesn't implement method NAME." when the
 *    fake object is made.
 * make_fx (fake mode) converts script object arguments; call_torchbind's fake rule converts a
 * real object it meets. The fake copy is cached on the real object per fake mode. */
#ifndef CFX_HOP_FAKE_CLASS_H
#define CFX_HOP_FAKE_CLASS_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/fake.h"
#include "hop/class.h"

typedef struct cfx_fake_class cfx_fake_class;

/* __obj_unflatten__: the fake state from pairs[0..n). NULL + error on failure. */
typedef void *(*cfx_fake_unflatten_fn)(const cfx_named_value *pairs, int n);

/* register_fake_class("ns::Cls"): the real class must exist (cfx_class_find's error). */
CFX_API cfx_fake_class *cfx_fake_class_register(const char *qualname, cfx_fake_unflatten_fn unflatten,
                                                void (*state_free)(void *state));
CFX_API int cfx_fake_class_def_method(cfx_fake_class *fc, const char *method, cfx_fnptr fn);
CFX_API bool cfx_has_fake_class(const char *qualname);
CFX_API void cfx_deregister_fake_class(const char *qualname);

/* maybe_to_fake_obj(fake_mode, obj): the fake object for a real one (a new reference), or obj
 * itself (retained) when it is already fake. NULL + error without a fake class. */
CFX_API cfx_object *cfx_to_fake_obj(cfx_fake_mode *fake_mode, cfx_object *obj);
/* The real object a fake one was made from, or NULL. */
CFX_API cfx_object *cfx_fake_obj_real(const cfx_object *fake);

/* Registers the built-in fake class of _TorchScriptTesting::_TensorQueue (as PyTorch's test
 * helpers do); called by cfx_hop_init. */
CFX_API int cfx_tensor_queue_register_fake(void);

#endif
