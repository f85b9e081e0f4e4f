/* object.h - objects a boxed value can hold besides tensors: script objects and callables.
 *
 * value.h leaves `cfx_object` (CFX_V_OBJECT) to this layer. A higher-order operator takes
 * functions and stateful objects as arguments, so one reference-counted object type carries:
 *  - script objects (torch.ScriptObject): an instance of a registered C class (class.h) with
 *    its state; methods are called by name;
 *  - fake script objects (FakeScriptObject): what a real object becomes under a fake trace
 *    (fake_class.h), with a fake class's state and the real object's copy;
 *  - callables: a plain C function with a schema-described signature (called through libffi
 *    like a kernel, boxing.h's C types), or a closure (the same with a leading `void *env`
 *    argument: `ret fn(void *env, args...)`), as Python passes functions to HOPs.
 * Objects are created with a reference count of 1; values do not own them (value.h), so whoever
 * puts one in a value keeps it alive while the value is used. */
#ifndef CFX_HOP_OBJECT_H
#define CFX_HOP_OBJECT_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/schema.h"
#include "dispatch/value.h"

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

/* A callable from a C function. signature: "(Tensor x, int n) -> Tensor" (a name before the
 * parenthesis is allowed and ignored); name is what messages and printed graphs call it.
 * NULL + error on a bad signature or a type with no C mapping. */
CFX_API cfx_object *cfx_function_new(const char *name, const char *signature, cfx_fnptr fn);
/* A closure: fn receives env first. env_free (may be NULL) runs when the closure dies. */
CFX_API cfx_object *cfx_function_closure_new(const char *name, const char *signature, cfx_fnptr fn, void *env,
                                    void (*env_free)(void *env));
/* Calls a callable with args[0..n): the count and kinds are checked against its signature
 * (torch.ops' binding texts). The result: None for no returns, the value for one, a tuple
 * (scope memory) for several; tensors are the function's (scope-owned when it made them with
 * operators). */
CFX_API int cfx_function_call(cfx_object *c, const cfx_value *args, int n, cfx_value *out);
CFX_API const char *cfx_function_name(const cfx_object *c);          /* NULL if not a callable */
CFX_API const cfx_schema *cfx_function_schema(const cfx_object *c);  /* NULL if not a callable */

#endif
