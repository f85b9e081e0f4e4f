/* callable_partial.c - functools.partial over a callable, and a C function pointer for it.
 *
 * A call merges as FunctoolsPartialVariable.call_function does: the bound positional
 * arguments, then the call's; the bound keywords, overridden by the call's. The partial's
 * own schema (what cfx_callable_schema reports) is the inner one without the bound
 * parameters: a copy of the inner schema whose argument array is compacted in place.
 *
 * A C caller that expects a plain function pointer (a callback table, a model's forward) gets
 * a libffi closure with the unbound parameters' C types: the trampoline boxes its C arguments
 * into values, calls the partial, and unboxes the single return. Only the scalar C types have
 * a way back from C (Tensor, int, float, bool, str); anything else is refused when the
 * pointer is asked for, not when it is called. */
#include <ffi.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/tensor.h"
#include "tracer/callable_internal.h"

typedef struct partial {
    cfx_callable *inner;
    cfx_value args[CALLABLE_MAX_ARGS];
    int n_args;
    cfx_kwarg kwargs[CALLABLE_MAX_ARGS];
    int n_kwargs;
    /* the closure, built on demand */
    ffi_closure *closure;
    void *code;
    ffi_cif cif;
    ffi_type *types[CALLABLE_MAX_ARGS];
} partial;

static void release_value(cfx_value v)
{
    if (v.kind == CFX_V_TENSOR)
        cfx_tensor_release(v.u.t);
    else if (v.kind == CFX_V_STRING)
        cfx_free((char *)v.u.s);
}

/* A value the partial can keep: copied strings, retained tensors, scalars as they are. */
static int keep_value(const char *fn, cfx_value v, cfx_value *out)
{
    switch (v.kind) {
    case CFX_V_STRING: {
        char *s = cfx_strdup(v.u.s);
        if (!s)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        *out = v;
        out->u.s = s;
        return CFX_OK;
    }
    case CFX_V_TENSOR:
        *out = v;
        cfx_tensor_retain(v.u.t);
        return CFX_OK;
    case CFX_V_LIST:
    case CFX_V_TUPLE:
    case CFX_V_NODE:
    case CFX_V_OBJECT:
    case CFX_V_TOKEN:
    case CFX_V_GENERATOR:
        return cfx_error_set(CFX_ERR, NULL, "partial(%s): a bound %s argument is not supported (bind scalars, "
                             "strings and tensors)", fn, cfx_value_kind_name((cfx_value_kind)v.kind));
    default:
        *out = v;
        return CFX_OK;
    }
}

static void partial_destroy(cfx_callable *c)
{
    partial *p = c->data;
    if (!p)
        return;
    for (int i = 0; i < p->n_args; i++)
        release_value(p->args[i]);
    for (int i = 0; i < p->n_kwargs; i++) {
        release_value(p->kwargs[i].value);
        cfx_free((char *)p->kwargs[i].name);
    }
    if (p->closure)
        ffi_closure_free(p->closure);
    cfx_callable_release(p->inner);
    cfx_free(p);
}

static int partial_call_args(cfx_callable *c, const cfx_value *args, int n_args, const cfx_kwarg *kwargs,
                             int n_kwargs, cfx_value *out)
{
    partial *p = c->data;
    if (p->n_args + n_args > CALLABLE_MAX_ARGS || p->n_kwargs + n_kwargs > CALLABLE_MAX_ARGS)
        return cfx_error_set(CFX_ERR, NULL, "%s(): too many arguments", c->schema->name);
    cfx_value merged[CALLABLE_MAX_ARGS];
    memcpy(merged, p->args, (size_t)p->n_args * sizeof *merged);
    if (n_args) /* args may be NULL then */
        memcpy(merged + p->n_args, args, (size_t)n_args * sizeof *merged);
    /* {**self.keywords, **kwargs}: a call's keyword replaces the bound one in place */
    cfx_kwarg kw[2 * CALLABLE_MAX_ARGS];
    int nk = p->n_kwargs;
    memcpy(kw, p->kwargs, (size_t)nk * sizeof *kw);
    for (int i = 0; i < n_kwargs; i++) {
        int j = 0;
        while (j < nk && strcmp(kw[j].name, kwargs[i].name ? kwargs[i].name : ""))
            j++;
        kw[j] = kwargs[i];
        nk += j == nk;
    }
    return cfx_callable_call(p->inner, merged, p->n_args + n_args, kw, nk, out);
}

static const callable_kind partial_kind = {NULL, partial_destroy, partial_call_args};

/* The inner schema without the parameters the partial binds. */
static cfx_schema *remaining_schema(const cfx_callable *inner, const partial *p)
{
    cfx_schema *s = cfx_callable_copy_schema(inner->schema);
    if (!s)
        return NULL;
    int kept = 0;
    uint64_t mask = 0;
    for (int i = 0; i < s->n_args; i++) {
        bool bound = i < p->n_args;
        for (int k = 0; k < p->n_kwargs && !bound; k++)
            bound = !strcmp(p->kwargs[k].name, s->args[i].name);
        if (bound)
            continue;
        if (s->tensor_arg_mask >> i & 1)
            mask |= 1ull << kept;
        s->args[kept++] = s->args[i];
    }
    s->n_args = (uint16_t)kept;
    s->tensor_arg_mask = mask;
    return s;
}

cfx_callable *cfx_partial_new(cfx_callable *fn, const cfx_value *args, int n_args, const cfx_kwarg *kwargs,
                              int n_kwargs)
{
    if (!fn || n_args < 0 || n_kwargs < 0 || (n_args && !args) || (n_kwargs && !kwargs)) {
        cfx_error_set(CFX_ERR, NULL, "cfx_partial_new: NULL function or arguments");
        return NULL;
    }
    const char *name = fn->schema->name;
    if (n_args > CALLABLE_MAX_ARGS || n_kwargs > CALLABLE_MAX_ARGS) {
        cfx_error_set(CFX_ERR, NULL, "partial(%s): too many bound arguments", name);
        return NULL;
    }
    partial *p = cfx_calloc(1, sizeof *p);
    if (!p) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    p->inner = cfx_callable_retain(fn);
    int rc = CFX_OK;
    for (int i = 0; i < n_args && rc == CFX_OK; i++)
        if ((rc = keep_value(name, args[i], &p->args[i])) == CFX_OK)
            p->n_args++;
    for (int i = 0; i < n_kwargs && rc == CFX_OK; i++) {
        char *kname = kwargs[i].name ? cfx_strdup(kwargs[i].name) : NULL;
        if (!kname)
            rc = cfx_error_set(CFX_ERR, NULL, "partial(%s): a keyword argument without a name", name);
        else if ((rc = keep_value(name, kwargs[i].value, &p->kwargs[i].value)) == CFX_OK)
            p->kwargs[p->n_kwargs++].name = kname;
        else
            cfx_free(kname);
    }
    cfx_callable *c = NULL;
    if (rc == CFX_OK) {
        c = cfx_callable_make_schema(&partial_kind, NULL, remaining_schema(fn, p));
        if (c)
            c->data = p;
    }
    if (!c) {
        cfx_callable tmp = {.data = p};
        partial_destroy(&tmp);
    }
    return c;
}

/* ---- the C function pointer ---------------------------------------------------------------- */

static ffi_type *c_type(const cfx_type *t)
{
    switch (t->kind) {
    case CFX_TYPE_TENSOR:
    case CFX_TYPE_STR: return &ffi_type_pointer;
    case CFX_TYPE_INT:
    case CFX_TYPE_SYMINT: return &ffi_type_sint64;
    case CFX_TYPE_FLOAT: return &ffi_type_double;
    case CFX_TYPE_BOOL: return &ffi_type_uint8;
    default: return NULL;
    }
}

static void trampoline(ffi_cif *cif, void *ret, void **argv, void *data)
{
    (void)cif;
    cfx_callable *c = data;
    const cfx_schema *s = c->schema;
    /* by name: an unbound parameter may follow one bound by keyword */
    cfx_kwarg args[CALLABLE_MAX_ARGS];
    for (int i = 0; i < s->n_args; i++) {
        args[i].name = s->args[i].name;
        switch (s->args[i].type->kind) {
        case CFX_TYPE_TENSOR: args[i].value = cfx_tensor_value(*(cfx_tensor **)argv[i]); break;
        case CFX_TYPE_STR: {
            const char *str = *(const char **)argv[i];
            args[i].value = str ? cfx_string(str) : cfx_none();
            break;
        }
        case CFX_TYPE_FLOAT: args[i].value = cfx_double(*(double *)argv[i]); break;
        case CFX_TYPE_BOOL: args[i].value = cfx_bool(*(uint8_t *)argv[i] != 0); break;
        default: args[i].value = cfx_int(*(int64_t *)argv[i]); break;
        }
    }
    cfx_value out = cfx_none();
    int rc = cfx_callable_call(c, NULL, 0, args, s->n_args, &out);
    switch (s->returns[0].type->kind) {
    case CFX_TYPE_TENSOR: *(cfx_tensor **)ret = rc == CFX_OK && out.kind == CFX_V_TENSOR ? out.u.t : NULL; break;
    case CFX_TYPE_FLOAT: *(double *)ret = rc == CFX_OK ? cfx_value_to_double(out) : 0.0; break;
    case CFX_TYPE_BOOL: *(ffi_arg *)ret = rc == CFX_OK && out.kind == CFX_V_BOOL && out.u.b; break;
    default: *(int64_t *)ret = rc == CFX_OK && out.kind == CFX_V_INT ? out.u.i : 0; break;
    }
}

cfx_fnptr cfx_partial_fnptr(cfx_callable *c)
{
    if (!c || c->kind != &partial_kind) {
        cfx_error_set(CFX_ERR, NULL, "cfx_partial_fnptr: not a partial");
        return NULL;
    }
    partial *p = c->data;
    if (p->code)
        return (cfx_fnptr)p->code;
    const cfx_schema *s = c->schema;
    ffi_type *rtype = s->n_returns == 1 && s->returns[0].type->kind != CFX_TYPE_STR ? c_type(s->returns[0].type) : NULL;
    if (!rtype) {
        cfx_error_set(CFX_ERR, NULL, "partial(%s): a C function pointer returns one Tensor, int, float or bool",
                      s->name);
        return NULL;
    }
    for (int i = 0; i < s->n_args; i++)
        if (!(p->types[i] = c_type(s->args[i].type))) {
            cfx_error_set(CFX_ERR, NULL, "partial(%s): parameter '%s' has no C type a function pointer can take "
                          "(Tensor, int, float, bool, str)", s->name, s->args[i].name);
            return NULL;
        }
    if (ffi_prep_cif(&p->cif, FFI_DEFAULT_ABI, (unsigned)s->n_args, rtype, p->types) != FFI_OK) {
        cfx_error_set(CFX_ERR, NULL, "partial(%s): libffi cannot describe the call", s->name);
        return NULL;
    }
    p->closure = ffi_closure_alloc(sizeof(ffi_closure), &p->code);
    if (!p->closure || ffi_prep_closure_loc(p->closure, &p->cif, trampoline, c, p->code) != FFI_OK) {
        if (p->closure)
            ffi_closure_free(p->closure);
        p->closure = NULL;
        p->code = NULL;
        cfx_error_set(CFX_ERR_NOMEM, NULL, "partial(%s): cannot allocate a libffi closure", s->name);
        return NULL;
    }
    return (cfx_fnptr)p->code;
}
