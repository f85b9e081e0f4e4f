/* fake_class.c - fake classes and fake script objects (see fake_class.h).
 *
 * Follows 2.13's torch/_library/fake_class_registry.py: register_fake_class keyed by the
 * script name, maybe_to_fake_obj (flatten with the tensors made fake, unflatten through the
 * fake class, warn about methods the fake class lacks), and a fake object whose methods are the
 * fake class's. A fake object has the real object's class (so it reports the same names) and
 * points at the real object (weakly: the real one holds its cached fake copy) instead of
 * PyTorch's deep copy: nothing here ever calls
 * a real method through a fake object, which is what the copy protects against. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/scope.h"
#include "hop/class_internal.h"
#include "hop/fake_class.h"
#include "hop/hop_internal.h"
#include "hop/object_internal.h"

enum { MAX_FLAT = 64 };

typedef struct fake_method {
    char *name;
    cfx_adapter *adapter;
} fake_method;

struct cfx_fake_class {
    const cfx_class *real;
    cfx_fake_unflatten_fn unflatten;
    void (*state_free)(void *);
    fake_method *methods;
    int n_methods, cap_methods;
    bool dead; /* deregistered: kept allocated for fake objects that still point here */
    cfx_fake_class *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cfx_fake_class *registry;

static cfx_fake_class *find_live(const cfx_class *c)
{
    for (cfx_fake_class *f = registry; f; f = f->next)
        if (f->real == c && !f->dead)
            return f;
    return NULL;
}

cfx_fake_class *cfx_fake_class_register(const char *qualname, cfx_fake_unflatten_fn unflatten,
                                        void (*state_free)(void *state))
{
    cfx_class *c = cfx_class_find(qualname);
    if (!c)
        return NULL;
    if (!unflatten) { /* the fake class has no __obj_unflatten__ */
        cfx_error_set(CFX_ERR, NULL, "fake class of %s doesn't define a classmethod __obj_unflatten__.", qualname);
        return NULL;
    }
    cfx_fake_class *f = cfx_calloc(1, sizeof *f);
    if (!f) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    f->real = c;
    f->unflatten = unflatten;
    f->state_free = state_free;
    pthread_mutex_lock(&lock);
    cfx_fake_class *old = find_live(c);
    if (old) {
        old->dead = true;
        cfx_warn("%s is already registered. Previous fake class is overridden with  the new one.",
                 cfx_class_script_name(c));
    }
    f->next = registry;
    registry = f;
    pthread_mutex_unlock(&lock);
    return f;
}

static const fake_method *find_method(const cfx_fake_class *f, const char *name)
{
    for (int i = 0; f && name && i < f->n_methods; i++)
        if (strcmp(f->methods[i].name, name) == 0)
            return &f->methods[i];
    return NULL;
}

int cfx_fake_class_def_method(cfx_fake_class *f, const char *name, cfx_fnptr fn)
{
    if (!f || !name || !fn)
        return cfx_error_set(CFX_ERR, NULL, "cfx_fake_class_def_method: NULL fake class, name or function");
    const cfx_schema *s = hop_class_method_schema(f->real, name);
    if (!s)
        return cfx_error_set(CFX_ERR, NULL, "%s has no method '%s' to fake", cfx_class_qualname(f->real), name);
    if (find_method(f, name))
        return cfx_error_set(CFX_ERR, NULL, "fake method '%s' of %s is already defined", name,
                             cfx_class_qualname(f->real));
    cfx_adapter *a = cfx_adapter_new_lead(s, fn);
    char *nm = cfx_strdup(name);
    if (f->n_methods == f->cap_methods) {
        int cap = f->cap_methods ? f->cap_methods * 2 : 8;
        fake_method *m = cfx_realloc(f->methods, (size_t)cap * sizeof *m);
        if (m) {
            f->methods = m;
            f->cap_methods = cap;
        }
    }
    if (!a || !nm || f->n_methods == f->cap_methods) {
        cfx_adapter_free(a);
        cfx_free(nm);
        return cfx_error_occurred() ? CFX_ERR : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    f->methods[f->n_methods++] = (fake_method){nm, a};
    return CFX_OK;
}

bool cfx_has_fake_class(const char *qualname)
{
    cfx_class *c = NULL;
    if (qualname) {
        c = cfx_class_find(qualname);
        if (!c)
            cfx_error_clear();
    }
    pthread_mutex_lock(&lock);
    bool has = c && find_live(c);
    pthread_mutex_unlock(&lock);
    return has;
}

void cfx_deregister_fake_class(const char *qualname)
{
    cfx_class *c = qualname ? cfx_class_find(qualname) : NULL;
    if (!c) {
        cfx_error_clear();
        return;
    }
    pthread_mutex_lock(&lock);
    cfx_fake_class *f = find_live(c);
    if (f)
        f->dead = true;
    pthread_mutex_unlock(&lock);
}

/* ---- fake objects -------------------------------------------------------------------- */

static cfx_tensor *fake_tensor(cfx_tensor *t, void *fm)
{
    return cfx_tensor_fake_mode(t) ? t : cfx_fake_from_tensor(fm, t);
}

static int missing_fake_class(const cfx_class *c)
{
    return cfx_error_set(CFX_ERR, NULL,
                         " ScriptObject's %s haven't registered a fake class. Please use register_fake_class(%s) to "
                         "annotate a fake class for the script obj. Specifically, create a python class that "
                         "implements a fake version for all the methods that're used in the program and put annotated "
                         "class in the program e.g. after loading the library. The fake methods can be written in the "
                         "same way as a meta kernel for an operator but need to additionally simulate the object's "
                         "states. Be sure to add a __obj_unflatten__ classmethod to enable creating a fake obj from a "
                         "real one.",
                         cfx_class_script_name(c), cfx_class_qualname(c));
}

int hop_missing_fake_class(const cfx_class *c) { return missing_fake_class(c); }

cfx_object *cfx_to_fake_obj(cfx_fake_mode *fm, cfx_object *obj)
{
    if (!obj || (obj->kind != CFX_OBJECT_SCRIPT && obj->kind != CFX_OBJECT_FAKE_SCRIPT)) {
        cfx_error_set(CFX_ERR, NULL, "maybe_to_fake_obj: not a script object");
        return NULL;
    }
    if (!fm && obj->kind == CFX_OBJECT_SCRIPT) {
        cfx_error_set(CFX_ERR, NULL, "maybe_to_fake_obj: no fake mode");
        return NULL;
    }
    if (obj->kind == CFX_OBJECT_FAKE_SCRIPT)
        return cfx_object_retain(obj);
    if (obj->fake_cache && obj->fake_cache_mode == fm->const_owner)
        return cfx_object_retain(obj->fake_cache);
    pthread_mutex_lock(&lock);
    cfx_fake_class *f = find_live(obj->cls);
    pthread_mutex_unlock(&lock);
    if (!f) {
        missing_fake_class(obj->cls);
        return NULL;
    }
    cfx_named_value flat[MAX_FLAT];
    int n = 0;
    if (cfx_object_flatten(obj, flat, MAX_FLAT, &n) != CFX_OK)
        return NULL;
    cfx_scope s = cfx_scope_begin();
    for (int i = 0; i < n; i++) {
        cfx_value v = flat[i].value;
        if (hop_map_tensors(&v, 1, &flat[i].value, fake_tensor, fm) != CFX_OK) {
            cfx_scope_end(s);
            return NULL;
        }
    }
    void *state = f->unflatten(flat, n);
    cfx_scope_end(s);
    if (!state)
        return NULL;
    cfx_object *o = hop_object_alloc(CFX_OBJECT_FAKE_SCRIPT);
    if (!o) {
        if (f->state_free)
            f->state_free(state);
        return NULL;
    }
    o->cls = obj->cls;
    o->fake_cls = f;
    o->state = state;
    o->real = obj; /* weak: the real object clears it when it dies (object.c) */
    for (int i = 0; cfx_class_method_name(obj->cls, i); i++) {
        const char *m = cfx_class_method_name(obj->cls, i);
        if (!find_method(f, m) && strcmp(m, "__obj_flatten__") != 0)
            cfx_warn("fake object of ScriptObject <%s> doesn't implement method %s.", cfx_class_script_name(obj->cls), m);
    }
    /* cache: the real object keeps its latest fake copy (released with it) */
    if (obj->fake_cache)
        obj->fake_cache->real = NULL; /* the replaced copy no longer hears of obj's death */
    cfx_object_release(obj->fake_cache);
    obj->fake_cache = cfx_object_retain(o);
    obj->fake_cache_mode = fm->const_owner;
    return o;
}

cfx_object *cfx_fake_obj_real(const cfx_object *fake)
{
    return fake && fake->kind == CFX_OBJECT_FAKE_SCRIPT ? fake->real : NULL;
}

void hop_fake_object_destroy(cfx_object *o)
{
    if (o->fake_cls && o->fake_cls->state_free && o->state)
        o->fake_cls->state_free(o->state);
    o->state = NULL;
    if (o->real && o->real->fake_cache == o)
        o->real->fake_cache = NULL;
}

int hop_fake_object_call(cfx_object *obj, const char *name, const cfx_value *args, int n, cfx_value *out)
{
    const fake_method *m = find_method(obj->fake_cls, name);
    if (!m)
        return cfx_error_set(CFX_ERR, NULL, "fake object of ScriptObject <%s> has no attribute '%s'",
                             cfx_class_script_name(obj->cls), name ? name : "(null)");
    const cfx_schema *s = hop_class_method_schema(obj->cls, name);
    if (n != s->n_args)
        return cfx_error_set(CFX_ERR, NULL, "%s() takes %d positional argument%s but %d %s given", name, s->n_args + 1,
                             s->n_args ? "s" : "", n + 1, n ? "were" : "was");
    return hop_call_adapter(m->adapter, obj, s, args, n, out);
}
