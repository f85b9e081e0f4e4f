/* callable.c - a user C function with a signature, called from boxed arguments (callable.h),
 * and the plain kind: Dynamo inlines a user function into the frame it traces, which in C is
 * simply calling it while the proxy mode is on the stack, so each operator it calls becomes a
 * node where the call happens, and no node stands for the function itself.
 *
 * Binding follows inspect.Signature.bind: positional arguments fill the parameters in order
 * (never a kwarg-only one), keywords by name, then defaults; its TypeError texts are kept so a
 * caller reads what Python would have told it. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "tracer/callable_internal.h"

static const callable_kind plain_kind = {cfx_callable_call_fn, NULL};

typedef struct closure_env {
    void *env;
    void (*env_free)(void *);
} closure_env;

/* A closure's call: fn(env, args...) through an adapter with a leading pointer. */
static int closure_call(cfx_callable *c, cfx_value *stack, cfx_value *out)
{
    if (!c->adapter && !(c->adapter = cfx_adapter_new_lead(c->schema, c->fn)))
        return cfx_error_status();
    int rc = cfx_adapter_call_lead(c->adapter, ((closure_env *)c->data)->env, stack);
    return rc != CFX_OK ? rc : cfx_callable_result(c->schema, stack, out);
}

static void closure_destroy(cfx_callable *c)
{
    closure_env *e = c->data;
    if (e && e->env_free)
        e->env_free(e->env);
    cfx_free(e);
}

static const callable_kind closure_kind = {closure_call, closure_destroy};

static bool is_identifier_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

cfx_callable *cfx_callable_make_schema(const callable_kind *k, cfx_fnptr fn, cfx_schema *s)
{
    if (s && s->n_args > CALLABLE_MAX_ARGS) {
        cfx_error_set(CFX_ERR, NULL, "%s: a callable takes at most %d arguments", s->name, (int)CALLABLE_MAX_ARGS);
        cfx_schema_free(s);
        return NULL;
    }
    cfx_callable *c = s ? cfx_calloc(1, sizeof *c) : NULL;
    if (!c) {
        if (s)
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        cfx_schema_free(s);
        return NULL;
    }
    *c = (cfx_callable){1, k, s, fn, NULL, NULL};
    return c;
}

cfx_callable *cfx_callable_make(const callable_kind *k, cfx_fnptr fn, const char *signature)
{
    if (!signature) {
        cfx_error_set(CFX_ERR, NULL, "a callable needs a signature");
        return NULL;
    }
    const char *p = signature + strspn(signature, " \t\n");
    cfx_buf b;
    cfx_buf_init(&b);
    if (!is_identifier_start(*p))
        cfx_buf_puts(&b, "f"); /* "(Tensor x) -> Tensor": the grammar wants a name first */
    cfx_buf_puts(&b, p);
    char *err = NULL;
    cfx_schema *s = b.oom ? NULL : cfx_schema_parse(b.data, &err);
    cfx_buf_free(&b);
    if (!s) {
        cfx_error_set_text(CFX_ERR_PARSE, NULL, err ? err : "out of memory");
        cfx_free(err);
        return NULL;
    }
    return cfx_callable_make_schema(k, fn, s);
}

cfx_schema *cfx_callable_copy_schema(const cfx_schema *s)
{
    char *text = cfx_schema_to_string(s), *err = NULL;
    cfx_schema *copy = text ? cfx_schema_parse(text, &err) : NULL;
    cfx_free(text);
    cfx_free(err);
    if (!copy)
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return copy;
}

cfx_callable *cfx_callable_new(cfx_fnptr fn, const char *signature)
{
    if (!fn) {
        cfx_error_set(CFX_ERR, NULL, "cfx_callable_new: NULL function");
        return NULL;
    }
    return cfx_callable_make(&plain_kind, fn, signature);
}

cfx_callable *cfx_callable_closure_new(cfx_fnptr fn, const char *signature, void *env, void (*env_free)(void *env))
{
    closure_env *e = fn ? cfx_malloc(sizeof *e) : NULL;
    if (!e) {
        cfx_error_set(fn ? CFX_ERR_NOMEM : CFX_ERR, NULL, fn ? "out of memory" : "cfx_callable_closure_new: NULL function");
        return NULL;
    }
    cfx_callable *c = cfx_callable_make(&closure_kind, fn, signature);
    if (!c) {
        cfx_free(e);
        return NULL;
    }
    *e = (closure_env){env, env_free};
    c->data = e;
    return c;
}

cfx_fnptr cfx_callable_plain_fn(const cfx_callable *c) { return c && c->kind == &plain_kind ? c->fn : NULL; }

cfx_callable *cfx_callable_retain(cfx_callable *c)
{
    if (c)
        c->refs++;
    return c;
}

void cfx_callable_release(cfx_callable *c)
{
    if (!c || --c->refs > 0)
        return;
    if (c->kind->destroy)
        c->kind->destroy(c);
    cfx_adapter_free(c->adapter);
    cfx_schema_free(c->schema);
    cfx_free(c);
}

const char *cfx_callable_name(const cfx_callable *c) { return c ? c->schema->name : NULL; }
const cfx_schema *cfx_callable_schema(const cfx_callable *c) { return c ? c->schema : NULL; }

int cfx_callable_bind(const cfx_schema *s, const cfx_value *args, int n_args, const cfx_kwarg *kwargs, int n_kwargs,
                      cfx_value *stack)
{
    bool set[CALLABLE_MAX_ARGS] = {0};
    int n_positional = 0;
    while (n_positional < s->n_args && !s->args[n_positional].kwarg_only)
        n_positional++;
    if (n_args > n_positional)
        return cfx_error_set(CFX_ERR, s->name, "%s(): too many positional arguments", s->name);
    for (int i = 0; i < n_args; i++) {
        stack[i] = args[i];
        set[i] = true;
    }
    for (int k = 0; k < n_kwargs; k++) {
        int i = kwargs[k].name ? cfx_schema_find_arg(s, kwargs[k].name) : -1;
        if (i < 0)
            return cfx_error_set(CFX_ERR, s->name, "%s(): got an unexpected keyword argument '%s'", s->name,
                                 kwargs[k].name ? kwargs[k].name : "");
        if (set[i])
            return cfx_error_set(CFX_ERR, s->name, "%s(): multiple values for argument '%s'", s->name, kwargs[k].name);
        stack[i] = kwargs[k].value;
        set[i] = true;
    }
    for (int i = 0; i < s->n_args; i++) {
        if (set[i])
            continue;
        if (!s->args[i].has_default)
            return cfx_error_set(CFX_ERR, s->name, "%s(): missing a required argument: '%s'", s->name,
                                 s->args[i].name);
        stack[i] = s->args[i].default_value;
    }
    return CFX_OK;
}

int cfx_callable_call_fn(cfx_callable *c, cfx_value *stack, cfx_value *out)
{
    if (!c->adapter && !(c->adapter = cfx_adapter_new(c->schema, c->fn)))
        return cfx_error_status();
    int rc = cfx_adapter_call_boxed(c->adapter, NULL, cfx_keyset_empty(), stack);
    return rc != CFX_OK ? rc : cfx_callable_result(c->schema, stack, out);
}

int cfx_callable_result(const cfx_schema *s, const cfx_value *stack, cfx_value *out)
{
    int n = s->n_returns;
    if (n == 0) {
        *out = cfx_none();
    } else if (n == 1) {
        *out = stack[0];
    } else {
        cfx_value *items = cfx_scope_alloc((size_t)n * sizeof *items);
        if (!items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        memcpy(items, stack, (size_t)n * sizeof *items);
        *out = cfx_tuple(items, (uint32_t)n);
    }
    return CFX_OK;
}

int cfx_callable_call(cfx_callable *c, const cfx_value *args, int n_args, const cfx_kwarg *kwargs, int n_kwargs,
                      cfx_value *out)
{
    if (!c || !out || (n_args && !args) || (n_kwargs && !kwargs) || n_args < 0 || n_kwargs < 0)
        return cfx_error_set(CFX_ERR, NULL, "cfx_callable_call: NULL or negative argument");
    if (cfx_error_occurred())
        return cfx_error_status(); /* NULL propagation: the first error stays */
    if (c->kind->call_args)
        return c->kind->call_args(c, args, n_args, kwargs, n_kwargs, out);
    cfx_value stack[CALLABLE_MAX_ARGS + 8];
    int rc = cfx_callable_bind(c->schema, args, n_args, kwargs, n_kwargs, stack);
    return rc != CFX_OK ? rc : c->kind->call(c, stack, out);
}
