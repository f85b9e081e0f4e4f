/* object_internal.h - the layout of cfx_object, shared by hop/'s files (not installed). */
#ifndef CFX_HOP_OBJECT_INTERNAL_H
#define CFX_HOP_OBJECT_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "hop/object.h"

#define CFX_OBJECT_MAGIC 0x4f424a31u /* "OBJ1" */

typedef struct cfx_class cfx_class;
typedef struct cfx_fake_class cfx_fake_class;

/* A tracer's binding of an object to the graph node standing for it (a placeholder or
 * get_attr), keyed like tensor bindings by the tracer's owner id. */
typedef struct hop_obj_binding {
    uint64_t owner;
    struct cfx_node *node;
} hop_obj_binding;

struct cfx_object {
    uint32_t magic;
    uint32_t kind; /* cfx_object_kind */
    atomic_int refcount;
    /* script object: its class and the state the class's constructor made */
    const cfx_class *cls;
    void *state;
    /* fake script object: the fake class, its state (named values), the real object it was
     * made from (wrapped_obj / real_obj) */
    const cfx_fake_class *fake_cls;
    cfx_value *fake_state;
    char **fake_names;
    uint32_t n_fake;
    cfx_object *real;
    cfx_object *fake_cache; /* real object: its latest fake copy (maybe_to_fake_obj) */
    uint64_t fake_cache_mode; /* the fake mode that made it, by the mode's unique owner id: a
                                 freed mode's address can come back as another mode's */
    /* callable: the tracer's callable (tracer/callable.h), one reference held */
    cfx_callable *callable;
    /* tracer bindings */
    hop_obj_binding *bindings;
    uint32_t n_bindings, cap_bindings;
};

cfx_object *hop_object_alloc(cfx_object_kind kind);
/* The node owner's tracer bound o to, or NULL; binding replaces an earlier one of owner. */
struct cfx_node *hop_object_node(const cfx_object *o, uint64_t owner);
int hop_object_bind(cfx_object *o, uint64_t owner, struct cfx_node *n);
void hop_object_unbind(cfx_object *o, uint64_t owner);
/* Frees the kind-specific parts (class.c, fake_class.c). */
void hop_script_object_destroy(cfx_object *o);
void hop_fake_object_destroy(cfx_object *o);
/* A fake object's method (fake_class.c). */
int hop_fake_object_call(cfx_object *obj, const char *name, const cfx_value *args, int n, cfx_value *out);
/* A schema from a signature "(Tensor x) -> Tensor" or "name(Tensor x) -> Tensor". */
cfx_schema *hop_parse_signature(const char *name, const char *sig);
/* Calls adapter a (a method: lead_ptr, the object, first) on args[0..n) by schema s,
 * arguments n.. taken from their defaults (the caller checked they have one); the returns
 * as one value, as a callable's (None, the value, or a scope tuple). */
int hop_call_adapter(cfx_adapter *a, void *lead_ptr, const cfx_schema *s, const cfx_value *args, int n, cfx_value *out);
/* Python's class name of a value's type, as "<class '...'>" messages print it ("torch.Tensor"). */
const char *hop_python_type_name(cfx_value v);

#endif
