/* object.h - objects a boxed value can hold besides tensors: script objects and callables.
 *
 * value.h leaves `cfx_object` (CFX_V_OBJECT) to this layer. A higher-order operator takes
 * functions and stateful objects as arguments, so one reference-counted object type carries:
 *  - script objects (torch.ScriptObject): an instance of a registered C class (class.h) with
 *    its state; methods are called by name;
 *  - fake script objects (FakeScriptObject): what a real object becomes under a fake trace
 *    (fake_class.h), with a fake class's state and the real object's copy;
 *  - callables: the tracer's cfx_callable (tracer/callable.h: a C function with a signature,
 *    or a closure with a leading `void *env`, called through libffi), wrapped so that a HOP
 *    can take one as an argument, as Python passes functions to HOPs.
 * Objects are created with a reference count of 1; values do not own them (value.h), so whoever
 * puts one in a value keeps it alive while the value is used. */
#ifndef CFX_HOP_OBJECT_H
#define CFX_HOP_OBJECT_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/schema.h"
#include "dispatch/value.h"
#include "tracer/callable.h"

typedef enum cfx_object_kind {
    CFX_OBJECT_SCRIPT = 1,
    CFX_OBJECT_FAKE_SCRIPT = 2,
    CFX_OBJECT_CALLABLE = 3,
} cfx_object_kind;

CFX_API cfx_object *cfx_object_retain(cfx_object *o); /* NULL-safe; returns o */
CFX_API void cfx_object_release(cfx_object *o);       /* NULL-safe */
CFX_API cfx_object_kind cfx_object_get_kind(const cfx_object *o);
/* The object a value holds (kind OBJECT), else NULL. */
CFX_API cfx_object *cfx_value_object(cfx_value v);

/* A callable as an argument value (a HOP's fn): the object takes over the caller's reference
 * to c (released with the object; on failure too). NULL + error if c is NULL (its creation
 * failed: that error is kept) or out of memory. */
CFX_API cfx_object *cfx_callable_object(cfx_callable *c);
/* The callable an object wraps, else NULL. */
CFX_API cfx_callable *cfx_object_callable(const cfx_object *o);

#endif
