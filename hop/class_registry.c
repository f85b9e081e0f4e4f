/* class_registry.c - registered C classes, their methods, and script object instances.
 *
 * c10 keeps custom classes in a process-wide map from `__torch__.torch.classes.ns.Cls` to a
 * ClassType whose methods are boxed functions; calling a method binds the arguments to its
 * schema. Here a method is a libffi adapter built once from its schema with the object as the
 * leading C argument, so a method is an ordinary C function taking `cfx_object *self`.
 * Classes live for the process (as c10's do). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "hop/class.h"
#include "hop/class_internal.h"
#include "hop/object_internal.h"

typedef struct method {
    char *name;
    cfx_schema *schema;
    cfx_adapter *adapter;
} method;

struct cfx_class {
    char *qualname;    /* ns::Cls */
    char *script_name; /* __torch__.torch.classes.ns.Cls */
    void (*state_free)(void *);
    cfx_class_flatten_fn flatten;
    method *methods;
    int n_methods, cap_methods;
    cfx_class *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(cfx_class *) classes;

static cfx_class *lookup(const char *qualname)
{
    for (cfx_class *c = atomic_load(&classes); c; c = c->next)
        if (strcmp(c->qualname, qualname) == 0)
            return c;
    return NULL;
}

/* "ns::Cls" with both parts identifiers. */
static bool valid_qualname(const char *q)
{
    const char *sep = q ? strstr(q, "::") : NULL;
    if (!sep || sep == q || !sep[2] || strstr(sep + 2, "::"))
        return false;
    for (const char *p = q; *p; p++)
        if (p != sep && p != sep + 1 && !(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                                          (*p >= 'A' && *p <= 'Z')))
            return false;
    return true;
}

cfx_class *cfx_class_register(const char *qualname, void (*state_free)(void *state), cfx_class_flatten_fn flatten)
{
    if (!valid_qualname(qualname)) {
        cfx_error_set(CFX_ERR, NULL, "a class name must be 'namespace::ClassName' (got '%s')",
                      qualname ? qualname : "(null)");
        return NULL;
    }
    cfx_class *c = cfx_calloc(1, sizeof *c);
    if (!c || !(c->qualname = cfx_strdup(qualname))) {
        cfx_free(c);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_buf b;
    cfx_buf_init(&b);
    const char *sep = strstr(qualname, "::");
    cfx_buf_printf(&b, "__torch__.torch.classes.%.*s.%s", (int)(sep - qualname), qualname, sep + 2);
    c->script_name = cfx_buf_take(&b);
    c->state_free = state_free;
    c->flatten = flatten;
    pthread_mutex_lock(&lock);
    if (lookup(qualname)) {
        pthread_mutex_unlock(&lock);
        cfx_error_set(CFX_ERR, NULL, "Custom class with name %s is already registered. Ensure that registration "
                      "with torch::class_ is only called once.", c->script_name);
        cfx_free(c->script_name);
        cfx_free(c->qualname);
        cfx_free(c);
        return NULL;
    }
    if (!c->script_name) {
        pthread_mutex_unlock(&lock);
        cfx_free(c->qualname);
        cfx_free(c);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    c->next = atomic_load(&classes);
    atomic_store(&classes, c);
    pthread_mutex_unlock(&lock);
    return c;
}

static const method *find_method(const cfx_class *c, const char *name)
{
    for (int i = 0; c && name && i < c->n_methods; i++)
        if (strcmp(c->methods[i].name, name) == 0)
            return &c->methods[i];
    return NULL;
}

int cfx_class_def_method(cfx_class *c, const char *schema, cfx_fnptr fn)
{
    if (!c || !schema || !fn)
        return cfx_error_set(CFX_ERR, NULL, "cfx_class_def_method: NULL class, schema or function");
    cfx_schema *s = hop_parse_signature("method", schema);
    if (!s)
        return CFX_ERR;
    if (find_method(c, s->name) || strcmp(s->name, "__obj_flatten__") == 0) {
        int rc = cfx_error_set(CFX_ERR, NULL, "method '%s' of class %s is already defined", s->name, c->qualname);
        cfx_schema_free(s);
        return rc;
    }
    cfx_adapter *a = cfx_adapter_new_lead(s, fn);
    char *name = cfx_strdup(s->name);
    if (!a || !name || (c->n_methods == c->cap_methods && !(c->cap_methods = c->cap_methods ? c->cap_methods * 2 : 8,
                                                            c->methods = cfx_realloc(c->methods, (size_t)c->cap_methods * sizeof *c->methods)))) {
        cfx_adapter_free(a);
        cfx_free(name);
        cfx_schema_free(s);
        return cfx_error_occurred() ? CFX_ERR : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    c->methods[c->n_methods++] = (method){name, s, a};
    return CFX_OK;
}

cfx_class *cfx_class_find(const char *qualname)
{
    cfx_class *c = qualname ? lookup(qualname) : NULL;
    if (!c) {
        const char *sep = qualname ? strstr(qualname, "::") : NULL;
        cfx_error_set(CFX_ERR, NULL, "Tried to instantiate class '%.*s%s%s', but it does not exist! Ensure that it "
                      "is registered via torch::class_", sep ? (int)(sep - qualname) : 0, qualname ? qualname : "",
                      sep ? "." : "", sep ? sep + 2 : "");
    }
    return c;
}

const char *cfx_class_qualname(const cfx_class *c) { return c ? c->qualname : NULL; }
const char *cfx_class_script_name(const cfx_class *c) { return c ? c->script_name : NULL; }

bool cfx_class_has_method(const cfx_class *c, const char *m)
{
    return find_method(c, m) || (c && c->flatten && m && strcmp(m, "__obj_flatten__") == 0);
}

const char *cfx_class_method_name(const cfx_class *c, int i)
{
    if (!c || i < 0)
        return NULL;
    if (i < c->n_methods)
        return c->methods[i].name;
    return i == c->n_methods && c->flatten ? "__obj_flatten__" : NULL;
}

/* TorchScript's inferred schema for a bound C function: arguments named _0 (self), _1, ...,
 * returns "NoneType _0" / "T _0" / "(T0 _0, T1 _1)". */
char *cfx_class_method_schema(const cfx_class *c, const char *name)
{
    const method *m = find_method(c, name);
    if (!m)
        return NULL;
    const cfx_schema *s = m->schema;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s(%s _0", m->name, c->script_name);
    for (int i = 0; i < s->n_args; i++) {
        cfx_buf_puts(&b, ", ");
        cfx_type_print(s->args[i].type, &b);
        cfx_buf_printf(&b, " _%d", i + 1);
    }
    cfx_buf_puts(&b, ") -> ");
    if (s->n_returns == 0) {
        cfx_buf_puts(&b, "NoneType _0");
    } else if (s->n_returns == 1) {
        cfx_type_print(s->returns[0].type, &b);
        cfx_buf_puts(&b, " _0");
    } else {
        cfx_buf_putc(&b, '(');
        for (int i = 0; i < s->n_returns; i++) {
            if (i)
                cfx_buf_puts(&b, ", ");
            cfx_type_print(s->returns[i].type, &b);
            cfx_buf_printf(&b, " _%d", i);
        }
        cfx_buf_putc(&b, ')');
    }
    return cfx_buf_take(&b);
}

/* Whether v binds to a simple schema type as TorchScript's argument binding allows. */
static bool binds(const cfx_type *t, cfx_value v)
{
    switch (t->kind) {
    case CFX_TYPE_TENSOR: return v.kind == CFX_V_TENSOR && v.u.t;
    case CFX_TYPE_INT: return v.kind == CFX_V_INT;
    case CFX_TYPE_FLOAT: return v.kind == CFX_V_DOUBLE || v.kind == CFX_V_INT;
    case CFX_TYPE_BOOL: return v.kind == CFX_V_BOOL;
    case CFX_TYPE_STR: return v.kind == CFX_V_STRING;
    default: return true; /* the adapter checks the rest */
    }
}

static int binding_error(const cfx_object *obj, const method *m, int i, cfx_value v)
{
    char *decl = cfx_class_method_schema(obj->cls, m->name);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s() Expected a value of type '", m->name);
    cfx_type_print(m->schema->args[i].type, &b);
    cfx_buf_printf(&b, "' for argument '_%d' but instead found type '%s'.\nPosition: %d\nValue: ", i + 1,
                   hop_python_type_name(v), i + 1);
    cfx_value_print(v, CFX_STYLE_PYTHON, &b);
    cfx_buf_printf(&b, "\nDeclaration: %s\nCast error details: Unable to cast ", decl ? decl : m->name);
    cfx_value_print(v, CFX_STYLE_PYTHON, &b);
    cfx_buf_puts(&b, " to ");
    cfx_type_print(m->schema->args[i].type, &b);
    cfx_free(decl);
    char *text = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, NULL, text ? text : "argument type mismatch");
    cfx_free(text);
    return rc;
}

/* ---- instances ---------------------------------------------------------------------------- */

cfx_object *cfx_script_object_new(const cfx_class *c, void *state)
{
    if (!c) {
        cfx_error_set(CFX_ERR, NULL, "cfx_script_object_new: NULL class");
        return NULL;
    }
    cfx_object *o = hop_object_alloc(CFX_OBJECT_SCRIPT);
    if (!o)
        return NULL;
    o->cls = c;
    o->state = state;
    return o;
}

void hop_script_object_destroy(cfx_object *o)
{
    if (o->cls && o->cls->state_free && o->state)
        o->cls->state_free(o->state);
    o->state = NULL;
}

const cfx_class *cfx_object_class(const cfx_object *o)
{
    return o && o->kind == CFX_OBJECT_SCRIPT ? o->cls : NULL;
}

void *cfx_script_object_state(const cfx_object *o)
{
    return o && (o->kind == CFX_OBJECT_SCRIPT || o->kind == CFX_OBJECT_FAKE_SCRIPT) ? o->state : NULL;
}

const char *cfx_object_qualname(const cfx_object *o)
{
    if (o && o->kind == CFX_OBJECT_SCRIPT)
        return o->cls->qualname;
    if (o && o->kind == CFX_OBJECT_FAKE_SCRIPT)
        return o->cls->qualname;
    return NULL;
}

int cfx_object_flatten(const cfx_object *obj, cfx_named_value *out, int cap, int *n)
{
    *n = 0;
    if (!obj || obj->kind != CFX_OBJECT_SCRIPT)
        return cfx_error_set(CFX_ERR, NULL, "__obj_flatten__: not a script object");
    if (!obj->cls->flatten)
        return cfx_error_set(CFX_ERR, NULL, "%s (of Python compilation unit at: 0) does not have a field with name "
                             "'__obj_flatten__'", obj->cls->script_name);
    return obj->cls->flatten(obj->state, out, cap, n);
}

int hop_no_such_method(const cfx_object *obj, const char *name)
{
    return cfx_error_set(CFX_ERR, NULL, "%s (of Python compilation unit at: 0) does not have a field with name '%s'",
                         obj->cls ? obj->cls->script_name : "object", name ? name : "(null)");
}

int cfx_script_object_call(cfx_object *obj, const char *name, const cfx_value *args, int n, cfx_value *out)
{
    if (!obj || obj->kind != CFX_OBJECT_SCRIPT || !out || (n > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "cfx_script_object_call: not a script object");
    const method *m = find_method(obj->cls, name);
    if (!m)
        return hop_no_such_method(obj, name);
    const cfx_schema *s = m->schema;
    if (n > s->n_args) {
        char *decl = cfx_class_method_schema(obj->cls, name);
        int rc = cfx_error_set(CFX_ERR, NULL, "%s() expected at most %d argument(s) but received %d argument(s). "
                               "Declaration: %s", s->name, s->n_args + 1, n + 1, decl ? decl : s->name);
        cfx_free(decl);
        return rc;
    }
    for (int i = 0; i < n; i++)
        if (!binds(s->args[i].type, args[i]))
            return binding_error(obj, m, i, args[i]);
    for (int i = n; i < s->n_args; i++) {
        if (!s->args[i].has_default) {
            char *decl = cfx_class_method_schema(obj->cls, name);
            int rc = cfx_error_set(CFX_ERR, NULL, "%s() is missing value for argument '_%d'. Declaration: %s", s->name,
                                   i + 1, decl ? decl : s->name);
            cfx_free(decl);
            return rc;
        }
    }
    return hop_call_adapter(m->adapter, obj, s, args, n, out);
}

const cfx_schema *hop_class_method_schema(const cfx_class *c, const char *name)
{
    const method *m = find_method(c, name);
    return m ? m->schema : NULL;
}
