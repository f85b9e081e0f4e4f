/* make_fx.c - trace a C function into a graph module (proxy_tensor.make_fx, PyTorch 2.13).
 *
 * The steps are _MakefxTracer.trace's, in its order:
 *  1. the signature is parsed as a schema (a bare "(Tensor x) -> Tensor" gets a name) and
 *     the C function is wrapped in a libffi adapter built from it, with the module as an
 *     extra leading argument when there is one;
 *  2. fake tracing takes the fake mode of a fake argument if there is one (detect_fake_mode:
 *     a trace inside a fake trace shares its mode), else a fresh one, and converts every real
 *     tensor argument with its from_tensor;
 *  3. one placeholder per argument, named as make_fx names concrete arguments (`x` ->
 *     `x_1`), tensors bound to theirs with their meta (val, tensor_meta); other arguments get
 *     a placeholder too but are passed to the function as they are, so the graph has their
 *     values burnt in;
 *  4. the fake mode is entered and the proxy mode pushed (stashing the proxy mode of an
 *     enclosing trace), the function runs, and everything it calls is recorded (proxy.c);
 *  5. the output node is built from the C return value: a tensor is its node (an untracked
 *     one becomes a get_attr, as Tracer.create_arg does), several returns a tuple, scalars
 *     and None literals.
 * Everything the trace creates lives in one autorelease scope that ends with the trace, so
 * the model never frees intermediates. Modes are popped and the scope ended on every path,
 * errors included; the first error recorded is the one reported (an operator failing inside
 * the model carries the model's file:line, set by the op wrapper).
 *
 * What cfx's make_fx is, in 2.13's terms: make_fx(f, tracing_mode=..., _allow_non_fake_inputs=
 * True, record_stack_traces=options->record_stack_traces). Deviations, each for a reason:
 *  - fake tracing converts the real tensors the model uses that are not inputs (its
 *    parameters, constants) where make_fx's default refuses them: a C model's parameters are
 *    real tensors its caller holds, and 2.13 has _allow_non_fake_inputs for such callers;
 *  - Tensor[] arguments, which would need FX's pytree codegen, are refused;
 *  - cfx has no ShapeEnv (no symbolic sizes): make_fx's fake mode has one, with which item()
 *    and nonzero produce unbacked symbols; cfx's fake mode raises, as a FakeTensorMode
 *    without a ShapeEnv does (DataDependentOutputException / DynamicOutputShapeException);
 *  - meta["eager_input_vals"], which 2.13 records on calls to operators outside aten/prims
 *    (an Inductor layout hint: the argument nodes' own vals, as (args, kwargs) with a dict),
 *    is not recorded: cfx has no Inductor and a meta value holds no dict;
 *  - the dead-code elimination dispatch_trace runs after tracing only ever removes symbolic
 *    size accessors (sym_size, ...), which cfx never records; it is not run;
 *  - make_fx's decomposition_table (and pre_dispatch, record_module_stack) have no
 *    counterpart: an operator with a CompositeImplicitAutograd kernel decomposes in the
 *    dispatcher before the proxy mode sees it, which is make_fx's default behaviour. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/effects.h"
#include "dispatch/fake.h"
#include "dispatch/functional.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"
#include "ir/graph.h"
#include "tracer/make_fx.h"
#include "tracer/proxy.h"

enum { MAX_VALUES = 64 };

/* The per-trace state that cleanup needs. */
typedef struct trace {
    cfx_schema *schema;
    cfx_adapter *adapter;
    cfx_graph_module *gm;
    cfx_fake_mode *fake;
    bool fake_borrowed; /* the fake mode of a fake argument, not this trace's to free */
    cfx_proxy_mode *pm;
    bool fake_entered, proxy_pushed, scope_open;
    cfx_scope scope;
    cfx_tensor **untrack; /* tensors that may outlive the trace: their bindings are cleared */
    int n_untrack, cap_untrack;
} trace;

static bool is_identifier(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static cfx_schema *parse_signature(const char *sig, const char *name)
{
    const char *p = sig;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    char *text = NULL;
    if (*p == '(') {
        /* "(Tensor x) -> Tensor": the schema grammar wants an operator name first */
        const char *nm = is_identifier(name) ? name : "f";
        size_t a = strlen(nm), b = strlen(p);
        text = cfx_malloc(a + b + 1);
        if (!text) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        memcpy(text, nm, a);
        memcpy(text + a, p, b + 1);
    }
    char *err = NULL;
    cfx_schema *s = cfx_schema_parse(text ? text : sig, &err);
    cfx_free(text);
    if (!s) {
        cfx_error_set_text(CFX_ERR_PARSE, NULL, err ? err : "make_fx: cannot parse the signature");
        cfx_free(err);
    }
    return s;
}

static bool is_tensor_type(const cfx_type *t, bool *optional)
{
    *optional = t->kind == CFX_TYPE_OPTIONAL;
    if (*optional)
        t = t->elems[0];
    return t->kind == CFX_TYPE_TENSOR;
}

static bool holds_tensors(const cfx_type *t)
{
    while ((t->kind == CFX_TYPE_OPTIONAL || t->kind == CFX_TYPE_LIST) && t->n_elems > 0) {
        t = t->elems[0];
        if (t->kind == CFX_TYPE_TENSOR)
            return true;
    }
    return false;
}

/* Tracer.create_args_for_root's count check, then the argument kinds the adapter would only
 * find after the placeholders were made. */
static int check_args(const cfx_schema *s, const char *name, const cfx_value *args, int n_args)
{
    if (n_args != s->n_args)
        return cfx_error_set(CFX_ERR, NULL, "Tracing expected %d arguments but got %d concrete arguments",
                             s->n_args, n_args);
    if (n_args > MAX_VALUES || s->n_returns > MAX_VALUES)
        return cfx_error_set(CFX_ERR, NULL, "make_fx: at most %d arguments and returns are supported", MAX_VALUES);
    for (int i = 0; i < n_args; i++) {
        bool optional;
        const cfx_type *t = s->args[i].type;
        if (is_tensor_type(t, &optional)) {
            bool ok = (args[i].kind == CFX_V_TENSOR && args[i].u.t) || (optional && args[i].kind == CFX_V_NONE);
            if (!ok)
                return cfx_argument_type_error(s, name, i, args[i]);
        } else if (holds_tensors(t)) {
            return cfx_error_set(CFX_ERR, NULL,
                                 "make_fx: argument '%s' is a list of tensors; pytree inputs are not supported",
                                 s->args[i].name);
        }
    }
    return CFX_OK;
}

static int remember(trace *tr, cfx_tensor *t)
{
    if (tr->n_untrack == tr->cap_untrack) {
        int cap = tr->cap_untrack ? tr->cap_untrack * 2 : 16;
        cfx_tensor **a = cfx_realloc(tr->untrack, (size_t)cap * sizeof *a);
        if (!a)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        tr->untrack = a;
        tr->cap_untrack = cap;
    }
    tr->untrack[tr->n_untrack++] = t;
    return CFX_OK;
}

static _Atomic(cfx_make_fx_object_hook) object_hook;

void cfx_make_fx_set_object_hook(cfx_make_fx_object_hook hook) { atomic_store(&object_hook, hook); }

/* Placeholders named `<arg>_1`, tensors bound to theirs, objects handed to the hook. */
static int make_placeholders(trace *tr, cfx_value *stack)
{
    cfx_graph *g = cfx_graph_module_graph(tr->gm);
    for (int i = 0; i < tr->schema->n_args; i++) {
        const char *an = tr->schema->args[i].name;
        size_t n = strlen(an);
        char small[64];
        char *ph = n + 3 <= sizeof small ? small : cfx_malloc(n + 3);
        if (!ph)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        memcpy(ph, an, n);
        memcpy(ph + n, "_1", 3);
        cfx_node *node = cfx_graph_placeholder(g, ph);
        if (ph != small)
            cfx_free(ph);
        if (!node)
            return CFX_ERR;
        cfx_make_fx_object_hook hook = atomic_load(&object_hook);
        if (stack[i].kind == CFX_V_OBJECT && hook) {
            int rc = hook(cfx_proxy_mode_base(tr->pm), tr->fake ? cfx_fake_mode_base(tr->fake) : NULL, &stack[i], node);
            if (rc != CFX_OK)
                return rc;
        }
        if (stack[i].kind == CFX_V_TENSOR) {
            int rc = cfx_proxy_track(tr->pm, stack[i].u.t, node);
            if (rc == CFX_OK)
                rc = remember(tr, stack[i].u.t);
            if (rc != CFX_OK)
                return rc;
        }
    }
    return CFX_OK;
}

/* Makes room for need items in a growable array of cap items of size elem. */
static bool reserve(void *arrp, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return true;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void **arr = arrp;
    void *na = cfx_realloc(*arr, (size_t)nc * elem);
    if (!na) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return false;
    }
    *arr = na;
    *cap = nc;
    return true;
}

/* What a C function returned where its signature promises a tensor is no live tensor: C
 * cannot tell a function's real return type, so a signature that promises more than the
 * function returns (two tensors from a function returning one) shows up here, as a pointer
 * that is not a tensor's. */
static int returns_error(const trace *tr)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "make_fx: the function returned something that is not a live tensor where its signature "
                     "promises one; does the C function return what the signature says (");
    cfx_schema_print(tr->schema, &b);
    cfx_buf_puts(&b, ")?");
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, NULL, msg ? msg : "make_fx: the function returned no tensor");
    cfx_free(msg);
    return rc;
}

/* Tracer.create_arg on the returned value: tensors to nodes, containers copied, literals kept.
 * Walks nested lists with an explicit stack in the order FX visits them (so get_attr nodes
 * for untracked tensors come out in that order). The item arrays are malloc'd into *allocs. */
static int map_output(trace *tr, cfx_value in, cfx_value *out, cfx_value ***allocs, int *n_allocs)
{
    cfx_value **work = NULL;
    int n_work = 0, cap_work = 0, cap_allocs = 0;
    int rc = CFX_OK;
    *out = in;
    cfx_value *cur = out;
    for (;;) {
        if (cur->kind == CFX_V_TENSOR || cur->kind == CFX_V_TOKEN) { /* a token: its node */
            if (!cur->u.t) {
                *cur = cfx_none();
            } else if (!cfx_tensor_pointer_is_live(cur->u.t)) {
                rc = returns_error(tr);
                break;
            } else {
                cfx_tensor *t = cur->u.t;
                cfx_node *n = cfx_proxy_node_of(tr->pm, t);
                if (!n || remember(tr, t) != CFX_OK) {
                    rc = CFX_ERR;
                    break;
                }
                *cur = cfx_node_value(n);
            }
        } else if ((cur->kind == CFX_V_LIST || cur->kind == CFX_V_TUPLE) && cur->len > 0) {
            if (!reserve(allocs, &cap_allocs, *n_allocs + 1, sizeof **allocs) ||
                !reserve(&work, &cap_work, n_work + (int)cur->len, sizeof *work)) {
                rc = CFX_ERR_NOMEM;
                break;
            }
            cfx_value *items = cfx_malloc(cur->len * sizeof *items);
            if (!items) {
                rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
                break;
            }
            memcpy(items, cur->u.items, cur->len * sizeof *items);
            (*allocs)[(*n_allocs)++] = items;
            cur->u.items = items;
            for (uint32_t j = cur->len; j-- > 0;)
                work[n_work++] = &items[j];
        }
        if (!n_work)
            break;
        cur = work[--n_work];
    }
    cfx_free(work);
    return rc;
}

/* The output node; a final effect token (or NULL) goes first, as the graphs 2.13 traces with
 * FunctionalTensorMode tokens return (token, *outputs). */
static int build_output(trace *tr, const cfx_value *rets, cfx_tensor *token)
{
    int nr = tr->schema->n_returns;
    cfx_value with_token[MAX_VALUES + 1];
    if (token) {
        with_token[0] = cfx_token_value(token);
        memcpy(with_token + 1, rets, (size_t)nr * sizeof *rets);
        rets = with_token;
        nr++;
    }
    cfx_value in = nr == 0 ? cfx_none() : nr == 1 && !token ? rets[0] : cfx_tuple(rets, (uint32_t)nr);
    cfx_value out;
    cfx_value **allocs = NULL;
    int n_allocs = 0;
    int rc = map_output(tr, in, &out, &allocs, &n_allocs);
    if (rc == CFX_OK && !cfx_graph_output(cfx_graph_module_graph(tr->gm), out))
        rc = CFX_ERR;
    for (int i = 0; i < n_allocs; i++)
        cfx_free(allocs[i]);
    cfx_free(allocs);
    return rc;
}

/* Pops the modes, clears bindings on tensors that may outlive the trace, ends the scope and
 * frees the trace's state (not the graph module). */
static void finish(trace *tr, const cfx_make_fx_options *o)
{
    if (tr->proxy_pushed)
        cfx_proxy_mode_exit(tr->pm);
    if (tr->fake_entered)
        cfx_fake_mode_exit(tr->fake);
    if (tr->pm) {
        for (int i = 0; i < tr->n_untrack; i++)
            cfx_proxy_untrack(tr->pm, tr->untrack[i]);
        for (int i = 0; i < cfx_module_count(o->module); i++)
            cfx_proxy_untrack(tr->pm, cfx_module_tensor_at(o->module, i));
        for (int i = 0; tr->gm && i < cfx_graph_module_n_attrs(tr->gm); i++)
            cfx_proxy_untrack(tr->pm, cfx_graph_module_attr(tr->gm, i));
    }
    if (tr->scope_open)
        cfx_scope_end(tr->scope);
    if (!tr->fake_borrowed)
        cfx_fake_mode_free(tr->fake);
    if (tr->pm)
        cfx_mode_release(cfx_proxy_mode_base(tr->pm));
    cfx_adapter_free(tr->adapter);
    cfx_schema_free(tr->schema);
    cfx_free(tr->untrack);
}

cfx_graph_module *cfx_make_fx(cfx_fnptr fn, const char *signature, const cfx_value *args, int n_args,
                              const cfx_make_fx_options *options)
{
    /* the first error of a context wins: a pending one would hide the model's */
    if (cfx_error_occurred())
        return NULL;
    cfx_make_fx_options o = options ? *options : (cfx_make_fx_options){CFX_TRACE_REAL, NULL, NULL, false, false};
    if (!fn || !signature || (n_args > 0 && !args)) {
        cfx_error_set(CFX_ERR, NULL, "cfx_make_fx: NULL function, signature or arguments");
        return NULL;
    }
    if (o.mode != CFX_TRACE_REAL && o.mode != CFX_TRACE_FAKE) {
        /* make_fx's check (its tracing_mode is a string; cfx's an enum value) */
        cfx_error_set(CFX_ERR, NULL, "tracing_mode must be real/fake/symbolic, got %d", (int)o.mode);
        return NULL;
    }
    trace tr = {0};
    const char *name = o.name ? o.name : o.module ? cfx_module_class_name(o.module) : NULL;
    tr.schema = parse_signature(signature, name ? name : "f");
    if (!tr.schema)
        goto fail;
    if (!name) /* a signature given with its name: f.__name__ */
        name = signature[strspn(signature, " \t\n")] == '(' ? "f" : tr.schema->name;
    if (check_args(tr.schema, tr.schema->name, args, n_args) != CFX_OK)
        goto fail;
    tr.adapter = o.module ? cfx_adapter_new_lead(tr.schema, fn) : cfx_adapter_new(tr.schema, fn);
    if (!tr.adapter)
        goto fail;
    cfx_graph *g = cfx_graph_new();
    if (!g)
        goto fail;
    tr.gm = cfx_graph_module_new(g, name);
    if (!tr.gm) {
        cfx_graph_free(g);
        goto fail;
    }
    if (o.mode == CFX_TRACE_FAKE) {
        for (int i = 0; i < n_args && !tr.fake; i++)
            if (args[i].kind == CFX_V_TENSOR)
                tr.fake = cfx_tensor_fake_mode(args[i].u.t);
        tr.fake_borrowed = tr.fake != NULL;
        if (!tr.fake) {
            cfx_fake_mode_options fo = {.allow_non_fake_inputs = true, .allow_fallback_kernels = true};
            tr.fake = cfx_fake_mode_new(&fo);
            if (!tr.fake)
                goto fail;
        }
    }
    tr.pm = cfx_proxy_mode_new(tr.gm, o.module);
    if (!tr.pm)
        goto fail;
    cfx_proxy_mode_set_record_stack_traces(tr.pm, o.record_stack_traces);
    tr.scope = cfx_scope_begin();
    tr.scope_open = true;

    cfx_value stack[MAX_VALUES];
    memcpy(stack, args, (size_t)n_args * sizeof *stack);
    for (int i = 0; tr.fake && i < n_args; i++) {
        if (stack[i].kind != CFX_V_TENSOR)
            continue;
        stack[i].u.t = cfx_fake_from_tensor(tr.fake, stack[i].u.t);
        if (!stack[i].u.t)
            goto fail;
    }
    /* the effect token comes first: make_fx of f(token, *args) under a functional mode that
     * threads it (tools/interop/gen_effects.py) */
    cfx_tensor *token = NULL;
    if (o.effect_tokens) {
        if (!o.functionalize) {
            cfx_error_set(CFX_ERR, NULL, "make_fx: effect_tokens needs functionalize");
            goto fail;
        }
        token = cfx_token_new();
        if (token && tr.fake && (!(token = cfx_fake_from_tensor(tr.fake, token)) || cfx_tensor_mark_token(token) != CFX_OK))
            token = NULL;
        cfx_node *tn = token ? cfx_graph_placeholder(cfx_graph_module_graph(tr.gm), "token_1") : NULL;
        if (!tn || cfx_proxy_track_token(tr.pm, token, tn) != CFX_OK || remember(&tr, token) != CFX_OK)
            goto fail;
    }
    if (make_placeholders(&tr, stack) != CFX_OK)
        goto fail;
    if (tr.fake) {
        if (cfx_fake_mode_enter(tr.fake) != CFX_OK)
            goto fail;
        tr.fake_entered = true;
    }
    if (cfx_proxy_mode_enter(tr.pm) != CFX_OK)
        goto fail;
    tr.proxy_pushed = true;

    /* make_fx(functionalize(f)): the wrapper runs inside the trace, so placeholders are the
     * plain inputs and the trailing copy_ into mutated inputs is recorded */
    cfx_functionalize_call fc;
    if (o.functionalize && cfx_functionalize_begin(&fc, stack, n_args) != CFX_OK) {
        cfx_functionalize_end(&fc, stack, 0, false);
        goto fail;
    }
    if (token) {
        cfx_tensor *wrapped = cfx_functional_wrap(token);
        cfx_functional_mode_enable_tokens(fc.mode, false);
        if (!wrapped || cfx_functional_mode_set_token(fc.mode, CFX_EFFECT_ORDERED, wrapped) != CFX_OK) {
            cfx_functionalize_end(&fc, stack, 0, false);
            goto fail;
        }
    }
    int rc = o.module ? cfx_adapter_call_lead(tr.adapter, o.module, stack)
                      : cfx_adapter_call_boxed(tr.adapter, NULL, cfx_keyset_empty(), stack);
    cfx_value final_token = cfx_tensor_value(token ? cfx_functional_mode_token(fc.mode, CFX_EFFECT_ORDERED) : NULL);
    cfx_tensor_retain(final_token.u.t); /* the mode, which holds it, goes at the end of the call */
    if (o.functionalize && cfx_functionalize_end(&fc, stack, tr.schema->n_returns, rc == CFX_OK) != CFX_OK)
        rc = CFX_ERR;
    if (rc == CFX_OK && final_token.u.t && (cfx_functional_sync(final_token.u.t) != CFX_OK))
        rc = CFX_ERR;
    cfx_tensor *out_token = final_token.u.t ? cfx_functional_value(final_token.u.t) : NULL;
    if (rc == CFX_OK)
        rc = build_output(&tr, stack, out_token);
    cfx_tensor_release(final_token.u.t);
    if (rc != CFX_OK)
        goto fail;
    finish(&tr, &o);
    return tr.gm;

fail:
    finish(&tr, &o);
    cfx_graph_module_free(tr.gm);
    return NULL;
}
