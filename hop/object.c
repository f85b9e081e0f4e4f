/* object.c - the object kind behind CFX_V_OBJECT values, and callables.
 *
 * Script objects, fake script objects and callables share one header so a HOP can take any
 * of them as an argument and a tracer can bind any of them to a graph node. Callables are C
 * functions called through the same libffi adapter kernels use (boxing.h), built once from
 * the signature when the callable is made; a closure passes its environment as the adapter's
 * leading pointer, so captured state needs no global. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fork_internal.h"
#include "dispatch/scope.h"
#include "hop/object_internal.h"
#include "tracer/callable_internal.h"

/* Bindings an object keeps: one per trace it took part in, the latest MAX_BINDINGS (traces
 * nest far less deeply than that). */
enum { MAX_BINDINGS = 8 };

/* One object may be an input of traces running on several threads at once (each tracer binds
 * it to its own placeholder), so its binding table is read and rewritten concurrently: a
 * process-wide leaf lock guards every object's table (bindings change once per placeholder,
 * not per op, so one lock costs nothing measurable). Found by `make tsan`. */
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void bind_lock_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &bind_lock); }

cfx_object *hop_object_alloc(cfx_object_kind kind)
{
    cfx_object *o = cfx_calloc(1, sizeof *o);
    if (!o) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    o->magic = CFX_OBJECT_MAGIC;
    o->kind = kind;
    atomic_init(&o->refcount, 1);
    return o;
}

cfx_object *cfx_object_retain(cfx_object *o)
{
    if (o)
        atomic_fetch_add(&o->refcount, 1);
    return o;
}

void cfx_object_release(cfx_object *o)
{
    if (!o || atomic_fetch_sub(&o->refcount, 1) != 1)
        return;
    if (o->kind == CFX_OBJECT_SCRIPT)
        hop_script_object_destroy(o);
    else if (o->kind == CFX_OBJECT_FAKE_SCRIPT)
        hop_fake_object_destroy(o);
    if (o->fake_cache && o->fake_cache->real == o)
        o->fake_cache->real = NULL; /* a fake copy that outlives its real object */
    cfx_object_release(o->fake_cache);
    cfx_callable_release(o->callable);
    cfx_free(o->bindings);
    o->magic = 0;
    cfx_free(o);
}

cfx_object_kind cfx_object_get_kind(const cfx_object *o) { return o ? (cfx_object_kind)o->kind : 0; }

cfx_object *cfx_value_object(cfx_value v) { return v.kind == CFX_V_OBJECT ? v.u.obj : NULL; }

struct cfx_node *hop_object_node(const cfx_object *o, uint64_t owner)
{
    struct cfx_node *n = NULL;
    pthread_mutex_lock(&bind_lock);
    for (uint32_t i = 0; o && i < o->n_bindings && !n; i++)
        if (o->bindings[i].owner == owner)
            n = o->bindings[i].node;
    pthread_mutex_unlock(&bind_lock);
    return n;
}

static int bind_locked(cfx_object *o, uint64_t owner, struct cfx_node *n)
{
    for (uint32_t i = 0; i < o->n_bindings; i++)
        if (o->bindings[i].owner == owner) {
            o->bindings[i].node = n;
            return CFX_OK;
        }
    if (o->n_bindings == MAX_BINDINGS) { /* tracers never say they are done: forget the oldest */
        memmove(o->bindings, o->bindings + 1, (MAX_BINDINGS - 1) * sizeof *o->bindings);
        o->n_bindings--;
    }
    if (o->n_bindings == o->cap_bindings) {
        uint32_t cap = o->cap_bindings ? o->cap_bindings * 2 : 2;
        hop_obj_binding *b = cfx_realloc(o->bindings, cap * sizeof *b);
        if (!b)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        o->bindings = b;
        o->cap_bindings = cap;
    }
    o->bindings[o->n_bindings++] = (hop_obj_binding){owner, n};
    return CFX_OK;
}

int hop_object_bind(cfx_object *o, uint64_t owner, struct cfx_node *n)
{
    pthread_mutex_lock(&bind_lock);
    int rc = bind_locked(o, owner, n);
    pthread_mutex_unlock(&bind_lock);
    return rc;
}

void hop_object_unbind(cfx_object *o, uint64_t owner)
{
    for (uint32_t i = 0; o && i < o->n_bindings; i++)
        if (o->bindings[i].owner == owner) {
            o->bindings[i] = o->bindings[--o->n_bindings];
            return;
        }
}

cfx_schema *hop_parse_signature(const char *name, const char *sig)
{
    if (!sig) {
        cfx_error_set(CFX_ERR, NULL, "NULL signature");
        return NULL;
    }
    const char *p = sig + strspn(sig, " \t\n");
    cfx_buf b;
    cfx_buf_init(&b);
    if (*p == '(')
        cfx_buf_puts(&b, name && *name ? name : "f");
    cfx_buf_puts(&b, p);
    if (b.oom) {
        cfx_buf_free(&b);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    char *err = NULL;
    cfx_schema *s = cfx_schema_parse(b.data, &err);
    cfx_buf_free(&b);
    if (!s) {
        cfx_error_set_text(CFX_ERR_PARSE, NULL, err ? err : "cannot parse the signature");
        cfx_free(err);
    }
    return s;
}

int hop_call_adapter(cfx_adapter *a, void *lead_ptr, const cfx_schema *s, const cfx_value *args, int n, cfx_value *out)
{
    int width = s->n_args > s->n_returns ? s->n_args : s->n_returns;
    cfx_value small[16];
    cfx_value *stack = width <= 16 ? small : cfx_malloc((size_t)width * sizeof *stack);
    if (!stack)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (n > 0)
        memcpy(stack, args, (size_t)n * sizeof *stack);
    for (int i = n; i < s->n_args; i++)
        stack[i] = s->args[i].default_value;
    int rc = cfx_adapter_call_lead(a, lead_ptr, stack);
    if (rc == CFX_OK)
        rc = cfx_callable_result(s, stack, out);
    if (stack != small)
        cfx_free(stack);
    return rc;
}

cfx_object *cfx_callable_object(cfx_callable *c)
{
    if (!c) {
        if (!cfx_error_occurred())
            cfx_error_set(CFX_ERR, NULL, "cfx_callable_object: NULL callable");
        return NULL;
    }
    cfx_object *o = hop_object_alloc(CFX_OBJECT_CALLABLE);
    if (!o) {
        cfx_callable_release(c);
        return NULL;
    }
    o->callable = c;
    return o;
}

cfx_callable *cfx_object_callable(const cfx_object *o)
{
    return o && o->kind == CFX_OBJECT_CALLABLE ? o->callable : NULL;
}

const char *hop_python_type_name(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_NONE: return "NoneType";
    case CFX_V_BOOL: return "bool";
    case CFX_V_INT: return "int";
    case CFX_V_DOUBLE: return "float";
    case CFX_V_STRING: return "str";
    case CFX_V_TENSOR: return v.u.t ? "torch.Tensor" : "NoneType";
    case CFX_V_TOKEN: return "torch.Tensor"; /* 2.13's token is a tensor */
    case CFX_V_LIST: return "list";
    case CFX_V_TUPLE: return "tuple";
    case CFX_V_DTYPE: return "torch.dtype";
    case CFX_V_DEVICE: return "torch.device";
    case CFX_V_GENERATOR: return "torch.Generator";
    case CFX_V_OBJECT:
        return v.u.obj && v.u.obj->kind == CFX_OBJECT_CALLABLE       ? "function"
               : v.u.obj && v.u.obj->kind == CFX_OBJECT_FAKE_SCRIPT ? "torch._library.fake_class_registry.FakeScriptObject"
                                                                     : "torch.ScriptObject";
    default: return "object";
    }
}
