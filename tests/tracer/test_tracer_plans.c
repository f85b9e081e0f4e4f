/* test_tracer_plans.c - the proxy mode's per-operator shortcuts against what they stand for.
 *
 *  - Defaults: the args/kwargs split (parseIValuesToPyArgsKwargs) decides int-for-int and
 *    None-for-None inline, kwarg-only defaults that are all ints or None in a leaf check, and
 *    everything else in the general comparison. A reference written here from the rule
 *    (IValue ==: kinds must agree, int-like enums compare as ints, an undefined Tensor is None,
 *    default lists are flat) must give the same split for every mix of values on an op with a
 *    default of each kind and on one with int and None kwarg defaults only, in real and in fake
 *    tracing, with and without a user mode above the proxy mode.
 *  - Plan slots: the slot of an op's plan is remembered in the op entry, a hint shared by every
 *    proxy mode. Two modes tracing the same ops in turn (each overwriting the other's hint), a
 *    plan table that grows (moving every plan) and a nested trace must all record exactly the
 *    calls made.
 *  - Bindings: a tensor bound by the mode in its first binding slot maps to its node inline;
 *    one whose first slot belongs to another proxy mode (nested traces) takes the general
 *    lookup, and an unbound one becomes a get_attr: the graphs must not tell them apart.
 *  - The general path's own cases still work: in-place ops rebinding their input, several
 *    outputs with getitem nodes, data-dependent errors, failing kernels. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/boxing_internal.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/library.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "ir/graph.h"
#include "ir/graph_module.h"
#include "ir/print.h"
#include "tracer/proxy.h"
#include "tests/test_util.h"

enum { N_MANY = 40 };

static cfx_library *lib;

static int clone_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks;
    cfx_tensor *r = cfx_op_clone(NULL, stack[0].u.t, cfx_none());
    if (!r)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(r);
    return CFX_OK;
}

static int failing_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)ks, (void)stack;
    return cfx_error_set(CFX_ERR, cfx_op_name(op), "the kernel of %s failed", cfx_op_name(op));
}

static const char DFLT_SCHEMA[] =
    "dflt(Tensor x, int a=1, float b=1., Tensor? y=None, *, Scalar alpha=1, ScalarType? dtype=None, "
    "int[] l=[1, 2], bool flag=False, str s=\"x\", MemoryFormat? mf=None, float? f=None) -> Tensor";
enum { DFLT_ARGS = 11 };
/* kwarg-only defaults that are all ints or None (the proxy mode's leaf check decides these) */
static const char KWD_SCHEMA[] =
    "kwd(Tensor x, *, int a=1, Scalar alpha=1, ScalarType? dtype=None, Tensor? t=None, int? req) -> Tensor";
enum { KWD_ARGS = 6 };
/* for each argument of kwd, the dflt argument whose candidate values it takes (11: req's) */
static const int KWD_LIKE[KWD_ARGS] = {0, 1, 4, 5, 3, 11};

static void setup(void)
{
    cfx_error_clear();
    cfx_dispatcher_init();
    lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxplan");
    cr_assert(lib, "%s", cfx_error_message());
    cfx_dispatch_key cea = CFX_KEY_CompositeExplicitAutograd;
    cr_assert_eq(cfx_library_def(lib, DFLT_SCHEMA), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL_BOXED(lib, "dflt", cea, clone_kernel, NULL), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, KWD_SCHEMA), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL_BOXED(lib, "kwd", cea, clone_kernel, NULL), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "fails(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "fails", cea, failing_kernel, NULL), CFX_OK);
    for (int i = 0; i < N_MANY; i++) {
        char schema[64], name[16];
        snprintf(name, sizeof name, "op%d", i);
        snprintf(schema, sizeof schema, "%s(Tensor x) -> Tensor", name);
        cr_assert_eq(cfx_library_def(lib, schema), CFX_OK, "%s", cfx_error_message());
        cr_assert_eq(CFX_IMPL_BOXED(lib, name, cea, clone_kernel, NULL), CFX_OK);
    }
}

static void teardown(void) { cfx_library_free(lib); }

TestSuite(tracer_plans, .init = setup, .fini = teardown);

/* ------------------------------------------------------------------ a hand-made trace */

typedef struct tracer {
    cfx_graph_module *gm;
    cfx_proxy_mode *pm;
    cfx_fake_mode *fake;
    cfx_tensor *x; /* the input as the model sees it (a fake in fake mode) */
    cfx_scope scope;
} tracer;

static void tracer_begin(tracer *t, bool fake, cfx_tensor *real_x)
{
    memset(t, 0, sizeof *t);
    t->scope = cfx_scope_begin();
    t->gm = cfx_graph_module_new(cfx_graph_new(), "plans");
    cr_assert(t->gm);
    t->pm = cfx_proxy_mode_new(t->gm, NULL);
    cr_assert(t->pm);
    t->x = real_x;
    if (fake) {
        t->fake = cfx_fake_mode_new(NULL);
        cr_assert(t->fake);
        t->x = cfx_fake_from_tensor(t->fake, real_x);
        cr_assert(t->x, "%s", cfx_error_message());
        cr_assert_eq(cfx_fake_mode_enter(t->fake), CFX_OK, "%s", cfx_error_message());
    }
    cfx_node *ph = cfx_graph_placeholder(cfx_graph_module_graph(t->gm), "x_1");
    cr_assert(ph);
    cr_assert_eq(cfx_proxy_track(t->pm, t->x, ph), CFX_OK);
}

static void tracer_push(tracer *t) { cr_assert_eq(cfx_mode_push(cfx_proxy_mode_base(t->pm)), CFX_OK); }
static void tracer_pop(tracer *t) { cr_assert_eq(cfx_mode_exit(cfx_proxy_mode_base(t->pm)), CFX_OK); }

/* The graph's text; ends the trace. */
static char *tracer_end(tracer *t)
{
    if (t->fake)
        cfx_fake_mode_exit(t->fake);
    cfx_proxy_untrack(t->pm, t->x);
    for (int i = 0; i < cfx_graph_module_n_attrs(t->gm); i++)
        cfx_proxy_untrack(t->pm, cfx_graph_module_attr(t->gm, i));
    char *text = cfx_graph_to_string(cfx_graph_module_graph(t->gm));
    cfx_scope_end(t->scope);
    cfx_fake_mode_free(t->fake);
    cfx_mode_release(cfx_proxy_mode_base(t->pm));
    cfx_graph_module_free(t->gm);
    return text;
}

static cfx_tensor *input(void)
{
    float v[6] = {1, 2, 3, 4, 5, 6};
    cfx_tensor *x = cfx_tensor_from_floats(v, (const int64_t[]){2, 3}, 2);
    cr_assert(x);
    return x;
}

static cfx_tensor *call1(const char *name, cfx_tensor *x)
{
    cfx_op *op = cfx_op_find(name);
    cr_assert(op, "%s", name);
    cfx_value st[1] = {cfx_tensor_value(x)};
    if (cfx_op_call(op, st, 1, COUNT_OF(st)) != CFX_OK)
        return NULL;
    return st[0].u.t;
}

/* ------------------------------------------------------------------ the reference split */

static bool int_like(cfx_value v, int64_t *out)
{
    switch (v.kind) {
    case CFX_V_INT: *out = v.u.i; return true;
    case CFX_V_DTYPE: *out = (int64_t)v.u.dtype; return true;
    case CFX_V_LAYOUT: *out = v.u.layout; return true;
    case CFX_V_MEMORY_FORMAT: *out = v.u.memory_format; return true;
    default: return false;
    }
}

/* IValue == of a default with a value. */
static bool ref_equal(cfx_value d, cfx_value v)
{
    if (d.kind == CFX_V_LIST || d.kind == CFX_V_TUPLE) {
        if (v.kind != d.kind || v.len != d.len)
            return false;
        for (uint32_t i = 0; i < d.len; i++)
            if (!ref_equal(d.u.items[i], v.u.items[i]))
                return false;
        return true;
    }
    if (d.kind == CFX_V_NONE)
        return v.kind == CFX_V_NONE || (v.kind == CFX_V_TENSOR && !v.u.t);
    int64_t a, b = 0; /* b = 0: GCC's -O1 maybe-uninitialized false positive (TSan builds) */
    if (int_like(d, &a))
        return int_like(v, &b) && a == b;
    if (v.kind != d.kind)
        return false;
    switch (d.kind) {
    case CFX_V_BOOL: return v.u.b == d.u.b;
    case CFX_V_DOUBLE: return v.u.d == d.u.d;
    case CFX_V_STRING: return strcmp(v.u.s, d.u.s) == 0;
    default: return false;
    }
}

typedef struct split {
    int n_pos;
    int n_kw;
    int kw[DFLT_ARGS]; /* argument index of each kwarg */
} split;

static split ref_split(const cfx_schema *s, const cfx_value *stack)
{
    split r = {0};
    int kwarg_start = s->n_args;
    while (kwarg_start > 0 && s->args[kwarg_start - 1].kwarg_only)
        kwarg_start--;
    r.n_pos = kwarg_start;
    while (r.n_pos > 0 && s->args[r.n_pos - 1].has_default &&
           ref_equal(s->args[r.n_pos - 1].default_value, stack[r.n_pos - 1]))
        r.n_pos--;
    for (int i = kwarg_start; i < s->n_args; i++)
        if (!(s->args[i].has_default && ref_equal(s->args[i].default_value, stack[i])))
            r.kw[r.n_kw++] = i;
    return r;
}

/* The value kind a node argument must have for stack value v of argument i: tensors become
 * nodes, ints given for enum arguments become the enum. */
static uint32_t recorded_kind(const cfx_schema *s, int i, cfx_value v)
{
    if (v.kind == CFX_V_TENSOR)
        return v.u.t ? CFX_V_NODE : CFX_V_NONE;
    if (v.kind == CFX_V_INT) {
        const cfx_type *t = s->args[i].type;
        if (t->kind == CFX_TYPE_OPTIONAL)
            t = t->elems[0];
        if (t->kind == CFX_TYPE_SCALAR_TYPE)
            return CFX_V_DTYPE;
        if (t->kind == CFX_TYPE_MEMORY_FORMAT)
            return CFX_V_MEMORY_FORMAT;
    }
    return v.kind;
}

/* ------------------------------------------------------------------ defaults */

/* A user mode above the proxy mode hands each call on; the proxy mode records the same. */
typedef struct pass_mode {
    cfx_mode base;
    int calls;
} pass_mode;

static int pass_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    ((pass_mode *)self)->calls++;
    return cfx_mode_redispatch(op, stack);
}

static const cfx_mode_vtable pass_vt = {"PassMode", pass_dispatch, NULL};


static const cfx_value L12[2] = {{CFX_V_INT, 0, {.i = 1}}, {CFX_V_INT, 0, {.i = 2}}};
static const cfx_value L21[2] = {{CFX_V_INT, 0, {.i = 2}}, {CFX_V_INT, 0, {.i = 1}}};

/* Candidate values for argument i (1..10) of dflt: the default, equal-looking values of other
 * kinds the binding accepts and plainly different ones. */
static int candidates(int i, cfx_tensor *x, cfx_value *out)
{
    int n = 0;
    switch (i) {
    case 1: /* int a=1 */
        out[n++] = cfx_int(1), out[n++] = cfx_int(2), out[n++] = cfx_int(-1);
        break;
    case 2: /* float b=1. */
        out[n++] = cfx_double(1.0), out[n++] = cfx_double(2.5), out[n++] = cfx_int(1);
        break;
    case 3: /* Tensor? y=None */
        out[n++] = cfx_none(), out[n++] = cfx_tensor_value(NULL), out[n++] = cfx_tensor_value(x);
        break;
    case 4: /* Scalar alpha=1 */
        out[n++] = cfx_int(1), out[n++] = cfx_int(3), out[n++] = cfx_double(1.0), out[n++] = cfx_bool(true);
        break;
    case 5: /* ScalarType? dtype=None */
        out[n++] = cfx_none(), out[n++] = cfx_dtype_value(CFX_FLOAT64), out[n++] = cfx_int(6), out[n++] = cfx_int(0);
        break;
    case 6: /* int[] l=[1, 2] */
        out[n++] = cfx_list(L12, 2), out[n++] = cfx_list(L12, 1), out[n++] = cfx_list(L21, 2);
        out[n++] = cfx_tuple(L12, 2);
        break;
    case 7: /* bool flag=False */
        out[n++] = cfx_bool(false), out[n++] = cfx_bool(true);
        break;
    case 8: /* str s="x" */
        out[n++] = cfx_string("x"), out[n++] = cfx_string("y"), out[n++] = cfx_string("xx");
        break;
    case 9: /* MemoryFormat? mf=None */
        out[n++] = cfx_none(), out[n++] = cfx_memory_format_value((cfx_memory_format)1), out[n++] = cfx_int(1);
        break;
    case 10: /* float? f=None */
        out[n++] = cfx_none(), out[n++] = cfx_double(0.5), out[n++] = cfx_int(0);
        break;
    case 11: /* kwd's int? req, no default: always a kwarg, None included */
        out[n++] = cfx_none(), out[n++] = cfx_int(1);
        break;
    }
    return n;
}

enum { N_CALLS = 300 };

/* Traces N_CALLS calls of dflt with pseudo-random argument mixes and checks every node. */
static void check_defaults(bool fake, bool user_mode_above, bool kwd)
{
    cfx_tensor *real = input();
    tracer t;
    tracer_begin(&t, fake, real);
    cfx_op *op = cfx_op_find(kwd ? "cfxplan::kwd" : "cfxplan::dflt");
    cr_assert(op);
    const cfx_schema *s = cfx_op_schema(op);
    int n_args = kwd ? KWD_ARGS : DFLT_ARGS;
    cr_assert_eq(s->n_args, n_args);
    static split want[N_CALLS];
    static cfx_value given[N_CALLS][DFLT_ARGS];
    uint64_t r = 0x9E3779B97F4A7C15ull;
    pass_mode user = {0};
    cfx_mode_init(&user.base, &pass_vt, CFX_MODE_USER);
    tracer_push(&t);
    if (user_mode_above)
        cr_assert_eq(cfx_mode_push(&user.base), CFX_OK);
    for (int k = 0; k < N_CALLS; k++) {
        cfx_value st[DFLT_ARGS];
        st[0] = cfx_tensor_value(t.x);
        for (int i = 1; i < n_args; i++) {
            cfx_value c[8];
            int n = candidates(kwd ? KWD_LIKE[i] : i, t.x, c);
            test_rand(&r);
            /* every third call keeps every default, so trimming runs all the way */
            st[i] = k % 3 == 0 ? c[0] : c[(r >> 11) % (uint64_t)n];
        }
        /* what the modes see: the binding's values (an int for a float becomes a float) */
        cfx_box_step steps[DFLT_ARGS];
        for (int i = 0; i < n_args; i++)
            steps[i] = cfx_box_arg_step(&s->args[i]);
        cr_assert_eq(cfx_box_check_args(s, steps, cfx_op_name(op), st, n_args), CFX_OK, "%s", cfx_error_message());
        memcpy(given[k], st, (size_t)n_args * sizeof *st);
        want[k] = ref_split(s, st);
        cr_assert_eq(cfx_op_call(op, st, n_args, COUNT_OF(st)), CFX_OK, "call %d: %s", k, cfx_error_message());
    }
    if (user_mode_above) {
        cr_assert_eq(cfx_mode_exit(&user.base), CFX_OK);
        cr_expect_geq(user.calls, N_CALLS);
    }
    tracer_pop(&t);
    /* the nodes, in call order after the placeholder */
    cfx_graph *g = cfx_graph_module_graph(t.gm);
    int k = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
            continue;
        cr_assert_lt(k, N_CALLS);
        cr_assert_eq(cfx_node_operator(n), op, "call %d", k);
        cr_assert_eq((int)cfx_node_num_args(n), want[k].n_pos, "call %d: positional count", k);
        cr_assert_eq((int)cfx_node_num_kwargs(n), want[k].n_kw, "call %d: kwarg count", k);
        for (int i = 0; i < want[k].n_pos; i++)
            cr_assert_eq(cfx_node_arg(n, (uint32_t)i).kind, recorded_kind(s, i, given[k][i]), "call %d arg %d", k,
                         i);
        const cfx_kwarg *kw = cfx_node_kwargs(n);
        for (int j = 0; j < want[k].n_kw; j++) {
            int i = want[k].kw[j];
            cr_assert_str_eq(kw[j].name, s->args[i].name, "call %d kwarg %d", k, j);
            cr_assert_eq(kw[j].value.kind, recorded_kind(s, i, given[k][i]), "call %d kwarg %s", k, kw[j].name);
        }
        k++;
    }
    cr_assert_eq(k, N_CALLS);
    free(tracer_end(&t));
    cfx_tensor_release(real);
}

Test(tracer_plans, defaults_match_the_reference_real)
{
    check_defaults(false, false, false);
    check_defaults(false, false, true);
}
Test(tracer_plans, defaults_match_the_reference_fake)
{
    check_defaults(true, false, false);
    check_defaults(true, false, true);
}
Test(tracer_plans, defaults_match_the_reference_under_a_user_mode)
{
    check_defaults(true, true, false);
    check_defaults(true, true, true);
}

/* One step of the chain the tests below trace: a custom op (40 of them in turn), and every
 * fifth step a mul and an add of built-ins. */
static cfx_tensor *chain_step(cfx_tensor *y, cfx_tensor *x, int i)
{
    char name[32];
    snprintf(name, sizeof name, "cfxplan::op%d", (i * 7) % N_MANY);
    y = call1(name, y);
    if (y && i % 5 == 4)
        y = cfx_mul(y, cfx_add(y, x));
    return y;
}

/* Every custom op once, in reverse: a trace that starts with this has its plans elsewhere. */
static void warm_up(cfx_tensor *x)
{
    for (int i = N_MANY - 1; i >= 0; i--) {
        char name[32];
        snprintf(name, sizeof name, "cfxplan::op%d", i);
        cr_assert(call1(name, x), "%s", cfx_error_message());
    }
}

static char *trace_chain(bool fake, bool user_above, int n_ops, bool warm)
{
    cfx_tensor *real = input();
    tracer t;
    tracer_begin(&t, fake, real);
    pass_mode u = {0};
    cfx_mode_init(&u.base, &pass_vt, CFX_MODE_USER);
    tracer_push(&t);
    if (user_above)
        cr_assert_eq(cfx_mode_push(&u.base), CFX_OK);
    if (warm)
        warm_up(t.x);
    cfx_tensor *y = t.x;
    for (int i = 0; i < n_ops && y; i++)
        y = chain_step(y, t.x, i);
    cr_assert(y, "%s", cfx_error_message());
    if (user_above) {
        cr_assert_eq(cfx_mode_exit(&u.base), CFX_OK);
        cr_expect_gt(u.calls, n_ops);
    }
    tracer_pop(&t);
    char *text = tracer_end(&t);
    cfx_tensor_release(real);
    return text;
}

Test(tracer_plans, a_user_mode_above_changes_nothing)
{
    for (int fake = 0; fake < 2; fake++) {
        char *a = trace_chain(fake, false, 60, false), *b = trace_chain(fake, true, 60, false);
        cr_expect_str_eq(a, b);
        free(a);
        free(b);
    }
}

/* ------------------------------------------------------------------ plan slots */

/* Two proxy modes take turns on the same ops (each overwrites the other's hints), both plan
 * tables growing past their first size, b's laid out differently (it saw the ops in another
 * order first): each graph must be the one traced alone. */
Test(tracer_plans, modes_taking_turns_record_their_own_calls)
{
    for (int fake = 0; fake < 2; fake++) {
        char *alone_a = trace_chain(fake, false, 3 * N_MANY, false);
        char *alone_b = trace_chain(fake, false, 3 * N_MANY, true);
        cfx_tensor *ra = input(), *rb = input();
        tracer a, b;
        tracer_begin(&a, fake, ra);
        if (fake)
            cfx_fake_mode_exit(a.fake);
        tracer_begin(&b, fake, rb);
        if (fake)
            cfx_fake_mode_exit(b.fake);
        cfx_tensor *ya = a.x, *yb = b.x;
        for (int i = 0; i < 3 * N_MANY; i++) {
            for (int w = 0; w < 2; w++) {
                tracer *t = w ? &b : &a;
                cfx_tensor **y = w ? &yb : &ya;
                if (fake)
                    cr_assert_eq(cfx_fake_mode_enter(t->fake), CFX_OK);
                tracer_push(t);
                if (w && i == 0)
                    warm_up(t->x);
                *y = chain_step(*y, t->x, i);
                cr_assert(*y, "%s", cfx_error_message());
                tracer_pop(t);
                if (fake)
                    cfx_fake_mode_exit(t->fake);
            }
        }
        if (fake)
            cr_assert_eq(cfx_fake_mode_enter(b.fake), CFX_OK); /* tracer_end exits it */
        char *tb = tracer_end(&b);
        if (fake)
            cr_assert_eq(cfx_fake_mode_enter(a.fake), CFX_OK);
        char *ta = tracer_end(&a);
        cr_expect_str_eq(ta, alone_a);
        cr_expect_str_eq(tb, alone_b);
        free(ta);
        free(tb);
        free(alone_a);
        free(alone_b);
        cfx_tensor_release(ra);
        cfx_tensor_release(rb);
    }
}

/* ------------------------------------------------------------------ bindings */

/* x bound first by another proxy mode (an outer trace): this mode's binding is not in the
 * first slot and takes the general lookup. An unbound tensor becomes a get_attr. */
Test(tracer_plans, bindings_in_any_slot_and_unbound_tensors)
{
    char *alone = trace_chain(false, false, 30, false);
    cfx_tensor *real = input();
    cfx_graph_module *outer_gm = cfx_graph_module_new(cfx_graph_new(), "outer");
    cfx_proxy_mode *outer = cfx_proxy_mode_new(outer_gm, NULL);
    cfx_node *oph = cfx_graph_placeholder(cfx_graph_module_graph(outer_gm), "outer_x");
    cr_assert_eq(cfx_proxy_track(outer, real, oph), CFX_OK);
    cr_assert_eq(real->ext.n_bindings, 1u);
    tracer t;
    tracer_begin(&t, false, real);
    cr_assert_eq(real->ext.n_bindings, 2u);
    cr_assert_neq(real->ext.bindings[0].owner, cfx_proxy_mode_owner(t.pm), "the inner binding is second");
    tracer_push(&t);
    cfx_tensor *y = t.x;
    for (int i = 0; i < 30 && y; i++)
        y = chain_step(y, t.x, i);
    cr_assert(y, "%s", cfx_error_message());
    tracer_pop(&t);
    char *text = tracer_end(&t);
    cr_expect_str_eq(text, alone);
    free(text);
    free(alone);
    cr_expect_eq(cfx_graph_first(cfx_graph_module_graph(outer_gm)), oph, "the outer graph saw nothing");
    cr_expect_null(cfx_node_next(oph));
    cfx_proxy_untrack(outer, real);
    cfx_mode_release(cfx_proxy_mode_base(outer));
    cfx_graph_module_free(outer_gm);

    /* an unbound tensor: a constant, the same one each time it is used */
    cfx_tensor *c = input();
    tracer_begin(&t, false, real);
    tracer_push(&t);
    cfx_tensor *z = cfx_add(cfx_mul(t.x, c), c);
    cr_assert(z, "%s", cfx_error_message());
    tracer_pop(&t);
    text = tracer_end(&t);
    cr_expect(strstr(text, "%_tensor_constant0 : [num_users=1] = get_attr[target=_tensor_constant0]"), "%s", text);
    cr_expect(strstr(text, "%_tensor_constant0_1 : [num_users=1] = get_attr[target=_tensor_constant0]"), "%s", text);
    cr_expect(!strstr(text, "_tensor_constant1"), "%s", text);
    free(text);
    cfx_tensor_release(c);
    cfx_tensor_release(real);
}

/* ------------------------------------------------------------------ the general cases */

Test(tracer_plans, inplace_multiple_outputs_and_errors)
{
    for (int fake = 0; fake < 2; fake++) {
        cfx_tensor *real = input();
        tracer t;
        tracer_begin(&t, fake, real);
        tracer_push(&t);
        cfx_tensor *v = cfx_relu(t.x);
        cr_assert(cfx_add_(v, t.x) == v, "add_ returns its input");
        cfx_tensor *w = cfx_mul(v, v); /* uses the add_ node */
        cfx_max_dim_result m = cfx_max_dim(w, 1, false);
        cr_assert(m.values && m.indices, "%s", cfx_error_message());
        cfx_tensor *u = cfx_relu(m.values);
        cr_assert(u);
        /* a failing kernel: NULL, the kernel's message, and the node recorded */
        cr_expect_null(call1("cfxplan::fails", u));
        cr_expect_str_eq(cfx_error_message(), "the kernel of cfxplan::fails failed");
        cfx_error_clear();
        /* a data-dependent op: refused before it runs on real tensors; recorded on fake
         * ones, whose mode then raises (no ShapeEnv) */
        cfx_op *dd = cfx_op_find("aten::_local_scalar_dense");
        cr_assert(dd);
        cfx_value st[1] = {cfx_tensor_value(u)};
        cr_expect_lt(cfx_op_call(dd, st, 1, COUNT_OF(st)), 0);
        if (fake)
            cr_expect_str_eq(cfx_error_message(), "aten._local_scalar_dense.default");
        else
            cr_expect(strstr(cfx_error_message(), "It appears that you're trying to get value out of a tracing tensor "
                                                  "with aten._local_scalar_dense.default"),
                      "%s", cfx_error_message());
        cfx_error_clear();
        tracer_pop(&t);
        char *text = tracer_end(&t);
        cr_expect(strstr(text, "aten.add_.Tensor](args = (%relu, %x_1), kwargs = {})"), "%s", text);
        cr_expect(strstr(text, "aten.mul.Tensor](args = (%add_, %add_), kwargs = {})"), "%s", text);
        cr_expect(strstr(text, "%getitem : [num_users=1] = call_function[target=operator.getitem](args = (%max_1, 0)"),
                  "%s", text);
        cr_expect(strstr(text, "%getitem_1 : [num_users=0] = call_function[target=operator.getitem](args = (%max_1, 1)"),
                  "%s", text);
        cr_expect(strstr(text, "aten.relu.default](args = (%getitem,), kwargs = {})"), "%s", text);
        cr_expect(strstr(text, "cfxplan.fails.default](args = (%relu_1,), kwargs = {})"), "%s", text);
        cr_expect(!strstr(text, "_local_scalar_dense") == !fake, "%s", text);
        free(text);
        cfx_tensor_release(real);
    }
}

/* The widest op the proxy takes (64 arguments, every one after x defaulted) traces, trimming
 * its defaults all the way; one more argument is refused with a message. */
Test(tracer_plans, sixty_four_arguments_and_one_more)
{
    for (int n_args = 64; n_args <= 65; n_args++) {
        char name[16], schema[2048];
        snprintf(name, sizeof name, "wide%d", n_args);
        int len = snprintf(schema, sizeof schema, "%s(Tensor x", name);
        for (int i = 1; i < n_args; i++)
            len += snprintf(schema + len, sizeof schema - (size_t)len, ", int a%d=0", i);
        snprintf(schema + len, sizeof schema - (size_t)len, ") -> Tensor");
        cr_assert_eq(cfx_library_def(lib, schema), CFX_OK, "%s", cfx_error_message());
        cr_assert_eq(CFX_IMPL_BOXED(lib, name, CFX_KEY_CompositeExplicitAutograd, clone_kernel, NULL), CFX_OK);
        cfx_op *op = cfx_op_find(n_args == 64 ? "cfxplan::wide64" : "cfxplan::wide65");
        cr_assert(op);
        cfx_tensor *real = input();
        tracer t;
        tracer_begin(&t, true, real);
        tracer_push(&t);
        cfx_value st[65];
        st[0] = cfx_tensor_value(t.x);
        for (int i = 1; i < n_args; i++)
            st[i] = cfx_int(i == 7 ? 3 : 0);
        int rc = cfx_op_call(op, st, n_args, COUNT_OF(st));
        tracer_pop(&t);
        if (n_args == 64) {
            cr_assert_eq(rc, CFX_OK, "%s", cfx_error_message());
        } else {
            cr_assert_neq(rc, CFX_OK);
            cr_expect_str_eq(cfx_error_message(),
                             "cannot trace cfxplan::wide65: it has 65 arguments, at most 64 are supported");
            cfx_error_clear();
        }
        char *text = tracer_end(&t);
        if (n_args == 64)
            cr_expect(strstr(text, "cfxplan.wide64.default](args = (%x_1, 0, 0, 0, 0, 0, 0, 3), kwargs = {})"),
                      "%s", text);
        free(text);
        cfx_tensor_release(real);
    }
}
