/* callable_opaque.c - a function kept whole in the graph (allow_in_graph).
 *
 * Dynamo puts an allow_in_graph function into the graph as one call_function node and runs it
 * on fake tensors to learn its output; make_fx cannot put a C function pointer into a graph
 * (a graph must print, dump and reload), so cfx does what torch.library.custom_op does for the
 * same need: the function becomes an operator `ns::name` (its CPU kernel), whose Meta kernel is
 * the user's fake rule. The proxy mode then records a call as one node targeting the operator,
 * like any other, and a fake trace runs the rule instead of the body. Without a rule a fake
 * trace fails with custom_op's own text, naming the registration to add. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/library.h"
#include "tracer/callable_internal.h"

typedef struct opaque {
    cfx_library *lib;
    cfx_op *op;
    char *qualname; /* "mylib::fused" */
    char *fn_name;  /* the C function's name in the signature, for the missing-rule message */
} opaque;

static int opaque_call(cfx_callable *c, cfx_value *stack, cfx_value *out)
{
    opaque *o = c->data;
    enum { CAP = CALLABLE_MAX_ARGS + 8 };
    int rc = cfx_op_call(o->op, stack, c->schema->n_args, CAP);
    return rc != CFX_OK ? rc : cfx_callable_result(c->schema, stack, out);
}

static void opaque_destroy(cfx_callable *c)
{
    opaque *o = c->data;
    if (!o)
        return;
    cfx_library_free(o->lib);
    cfx_free(o->qualname);
    cfx_free(o->fn_name);
    cfx_free(o);
}

static const callable_kind opaque_kind = {opaque_call, opaque_destroy, NULL};

/* The Meta kernel of an operator without a fake rule. */
static int no_fake_rule(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op;
    (void)ks;
    (void)stack;
    const opaque *o = ctx;
    return cfx_error_set(CFX_ERR, o->qualname,
                         "There was no fake impl registered for <CustomOpDef(%s)>. This is necessary for "
                         "torch.compile/export/fx tracing to work. Please use `%s.register_fake` to add an fake impl.",
                         o->qualname, o->fn_name);
}

/* "f(Tensor x) -> Tensor" printed under the operator's name "ns::name(Tensor x) -> Tensor". */
static char *op_schema_text(const cfx_schema *s, const char *qualname)
{
    char *text = cfx_schema_to_string(s);
    if (!text)
        return NULL;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, qualname);
    cfx_buf_puts(&b, strchr(text, '('));
    cfx_free(text);
    return cfx_buf_take(&b);
}

static int define(opaque *o, const cfx_schema *sig, cfx_fnptr fn, cfx_fnptr fake_rule)
{
    const char *sep = strstr(o->qualname, "::");
    if (!sep || sep == o->qualname || !sep[2] || strchr(sep + 2, '.') || strchr(sep + 2, ':'))
        return cfx_error_set(CFX_ERR, NULL, "allow_in_graph: '%s' is no operator name of the form ns::name",
                             o->qualname);
    char *ns = cfx_strndup(o->qualname, (size_t)(sep - o->qualname));
    char *text = op_schema_text(sig, o->qualname);
    int rc = ns && text ? CFX_OK : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (rc == CFX_OK && !(o->lib = CFX_LIBRARY(CFX_LIB_FRAGMENT, ns)))
        rc = cfx_error_status();
    if (rc == CFX_OK)
        rc = cfx_library_def(o->lib, text);
    if (rc == CFX_OK)
        rc = CFX_IMPL(o->lib, sep + 2, CFX_KEY_CPU, fn);
    if (rc == CFX_OK)
        rc = fake_rule ? CFX_IMPL(o->lib, sep + 2, CFX_KEY_Meta, fake_rule)
                       : CFX_IMPL_BOXED(o->lib, sep + 2, CFX_KEY_Meta, no_fake_rule, o);
    if (rc == CFX_OK && !(o->op = cfx_op_find(o->qualname)))
        rc = cfx_error_status();
    cfx_free(ns);
    cfx_free(text);
    return rc;
}

cfx_callable *cfx_callable_allow_in_graph(cfx_fnptr fn, const char *qualname, const char *signature,
                                          cfx_fnptr fake_rule)
{
    if (!fn || !qualname) {
        cfx_error_set(CFX_ERR, NULL, "cfx_callable_allow_in_graph: NULL function or operator name");
        return NULL;
    }
    /* parsed as a plain callable first: the signature's checks and its function name */
    cfx_callable *sig = cfx_callable_make(&opaque_kind, fn, signature);
    if (!sig)
        return NULL;
    opaque *o = cfx_calloc(1, sizeof *o);
    if (o) {
        o->qualname = cfx_strdup(qualname);
        o->fn_name = cfx_strdup(sig->schema->name);
    }
    int rc = o && o->qualname && o->fn_name ? CFX_OK : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (rc == CFX_OK)
        rc = define(o, sig->schema, fn, fake_rule);
    cfx_callable *c = NULL;
    if (rc == CFX_OK) {
        char *text = op_schema_text(sig->schema, qualname), *err = NULL;
        c = cfx_callable_make_schema(&opaque_kind, fn, text ? cfx_schema_parse(text, &err) : NULL);
        cfx_free(text);
        cfx_free(err);
        if (!c && !cfx_error_occurred())
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_callable_release(sig); /* data NULL: nothing of o freed */
    if (c)
        c->data = o;
    else {
        cfx_callable tmp = {.data = o};
        opaque_destroy(&tmp);
    }
    return c;
}
