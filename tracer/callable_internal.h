/* callable_internal.h - what the callable kinds (tracer/callable*.c) share; not public.
 *
 * A callable is a kind (its call and destroy), a schema (the parameters a call binds), a C
 * function and the kind's data. cfx_callable_call binds the arguments into a stack in
 * schema order (callable.c) and hands it to the kind. */
#ifndef CFX_TRACER_CALLABLE_INTERNAL_H
#define CFX_TRACER_CALLABLE_INTERNAL_H

#include "dispatch/boxing.h"
#include "tracer/callable.h"

enum { CALLABLE_MAX_ARGS = 32 };

typedef struct callable_kind {
    /* stack: the bound arguments, schema order (CALLABLE_MAX_ARGS slots, scratch beyond). */
    int (*call)(cfx_callable *c, cfx_value *stack, cfx_value *out);
    void (*destroy)(cfx_callable *c); /* the kind's data; NULL: nothing to free */
    /* When set, replaces binding to c->schema: the kind binds the raw call (a partial merges
     * its own arguments first). */
    int (*call_args)(cfx_callable *c, const cfx_value *args, int n_args, const cfx_kwarg *kwargs, int n_kwargs,
                     cfx_value *out);
} callable_kind;

struct cfx_callable {
    int refs;
    const callable_kind *kind;
    cfx_schema *schema; /* owned */
    cfx_fnptr fn;
    cfx_adapter *adapter; /* fn's, built on first call */
    void *data;
};

/* A callable of kind k over fn with signature (named "f" when it has no name); NULL + error. */
cfx_callable *cfx_callable_make(const callable_kind *k, cfx_fnptr fn, const char *signature);
/* A callable of kind k taking ownership of schema s (freed on failure). */
cfx_callable *cfx_callable_make_schema(const callable_kind *k, cfx_fnptr fn, cfx_schema *s);
/* A fresh copy of s (printed and parsed back), NULL + error. */
cfx_schema *cfx_callable_copy_schema(const cfx_schema *s);
/* Calls c->fn on the bound stack through libffi; *out as cfx_callable_call gives it. */
int cfx_callable_call_fn(cfx_callable *c, cfx_value *stack, cfx_value *out);
/* The call's result from the returns at stack[0..s->n_returns): None, the value, or a tuple. */
int cfx_callable_result(const cfx_schema *s, const cfx_value *stack, cfx_value *out);
/* Binds args and kwargs to s as inspect's bind + apply_defaults into stack[0..s->n_args). */
int cfx_callable_bind(const cfx_schema *s, const cfx_value *args, int n_args, const cfx_kwarg *kwargs, int n_kwargs,
                      cfx_value *stack);

#endif
