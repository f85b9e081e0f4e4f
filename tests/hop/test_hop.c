/* test_hop.c - the HOP framework: registration, dispatch by key and by mode, functionalize
 * context, callables, and a HOP as a graph target (printing, code, JSON, interpreter, passes).
 * Error texts are PyTorch 2.13's (tools/interop/gen_hop.py prints them; tests/data/hop_cases.txt). */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "hop/hop.h"
#include "hop/object.h"
#include "tests/test_util.h"

static cfx_tensor *ones(int64_t n)
{
    int64_t shape[1] = {n};
    cfx_tensor *t = cfx_tensor_new(shape, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    return cfx_autorelease(t);
}

static int cea_impl(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)ctx;
    (void)args;
    cr_assert_null(mode);
    *out = cfx_int(100 + n);
    return CFX_OK;
}

static void expect_error(int rc, const char *text)
{
    cr_assert_neq(rc, CFX_OK);
    cr_assert_str_eq(cfx_error_message(), text);
    cfx_error_clear();
}

static cfx_keyset autograd_keys(void)
{
    return cfx_keyset_or(cfx_keyset_or(cfx_keyset_of(CFX_KEY_AutogradCPU), cfx_keyset_of(CFX_KEY_AutogradOther)),
                         cfx_keyset_of(CFX_KEY_AutogradNestedTensor));
}

Test(hop, missing_kernels_follow_resolve_key)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *foo = cfx_hop_new("foo", false);
    cr_assert_not_null(foo);
    cr_assert_eq(cfx_hop_find("foo"), foo);
    cfx_value out, t = cfx_tensor_value(ones(2)), i = cfx_int(1);
    /* PyTorch 2.13: foo(torch.ones(2)) / foo(1) / foo() with no kernels */
    expect_error(cfx_hop_call(foo, &t, 1, &out), "could not find kernel for HigherOrderOperator foo at dispatch key "
                                                 "DispatchKey.AutogradCPU (resolved from DispatchKey.AutogradCPU)");
    expect_error(cfx_hop_call(foo, &i, 1, &out), "could not find kernel for foo at dispatch key DispatchKey.Undefined");
    expect_error(cfx_hop_call(foo, NULL, 0, &out), "could not find kernel for foo at dispatch key DispatchKey.Undefined");
    cr_assert_eq(cfx_hop_py_impl(foo, CFX_KEY_CompositeExplicitAutograd, cea_impl, NULL), CFX_OK);
    /* a CompositeExplicitAutograd kernel does not cover AutogradCPU */
    expect_error(cfx_hop_call(foo, &t, 1, &out), "could not find kernel for HigherOrderOperator foo at dispatch key "
                                                 "DispatchKey.AutogradCPU (resolved from DispatchKey.AutogradCPU)");
    cr_assert_eq(cfx_hop_call(foo, &i, 1, &out), CFX_OK);
    cr_assert_eq(out.kind, CFX_V_INT);
    cr_assert_eq(out.u.i, 101);
    cfx_key_guard g; /* _AutoDispatchBelowAutograd */
    cfx_exclude_keys_begin(&g, autograd_keys());
    cr_assert_eq(cfx_hop_dispatch_key(foo, &t, 1), CFX_KEY_CPU);
    cr_assert_eq(cfx_hop_call(foo, &t, 1, &out), CFX_OK);
    cr_assert_eq(out.u.i, 101);
    cfx_key_guard_end(&g);
    cfx_scope_end(s);
}

Test(hop, a_backend_kernel_serves_only_its_key)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *bar = cfx_hop_new("bar", false);
    cr_assert_eq(cfx_hop_py_impl(bar, CFX_KEY_CPU, cea_impl, NULL), CFX_OK);
    cfx_value out, t = cfx_tensor_value(ones(2)), i = cfx_int(1);
    expect_error(cfx_hop_call(bar, &t, 1, &out), "could not find kernel for HigherOrderOperator bar at dispatch key "
                                                 "DispatchKey.AutogradCPU (resolved from DispatchKey.AutogradCPU)");
    cfx_key_guard g;
    cfx_exclude_keys_begin(&g, autograd_keys());
    cr_assert_eq(cfx_hop_call(bar, &t, 1, &out), CFX_OK);
    cfx_key_guard_end(&g);
    expect_error(cfx_hop_call(bar, &i, 1, &out), "could not find kernel for bar at dispatch key DispatchKey.Undefined");
    cfx_scope_end(s);
}

Test(hop, registration_errors)
{
    cfx_hop *foo = cfx_hop_new("reg_foo", false);
    cr_assert_eq(cfx_hop_py_impl(foo, CFX_KEY_CompositeExplicitAutograd, cea_impl, NULL), CFX_OK);
    expect_error(cfx_hop_py_impl(foo, CFX_KEY_CompositeExplicitAutograd, cea_impl, NULL),
                 "Trying to override a python impl for DispatchKey.CompositeExplicitAutograd on operator reg_foo");
    expect_error(cfx_hop_py_impl(foo, CFX_KEY_Python, cea_impl, NULL),
                 "Please register a mode for the DispatchKey.Python key instead.");
    cr_assert_eq(cfx_hop_py_impl_mode(foo, CFX_MODE_PROXY, cea_impl, NULL), CFX_OK);
    expect_error(cfx_hop_py_impl_mode(foo, CFX_MODE_PROXY, cea_impl, NULL),
                 "<class 'torch.fx.experimental.proxy_tensor.ProxyTorchDispatchMode'> already registered in "
                 "python_key_table");
    cr_assert_null(cfx_hop_new("reg_foo", false));
    cr_assert_str_eq(cfx_error_message(), "a higher-order operator named reg_foo already exists");
    cfx_error_clear();
    cr_assert_null(cfx_hop_new("bad name", false));
    cfx_error_clear();
}

/* ---- modes ------------------------------------------------------------------------------- */

typedef struct {
    cfx_mode base;
    int seen;
} user_mode;

static int user_dispatch(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    ((user_mode *)m)->seen++;
    (void)ks;
    return cfx_mode_redispatch(op, stack);
}
static const cfx_mode_vtable user_vt = {"__main__.M", user_dispatch, NULL};
static const cfx_mode_vtable other_vt = {"__main__.Other", user_dispatch, NULL};

static int user_rule(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)args;
    (void)n;
    cr_assert_not_null(mode);
    cr_assert_neq(cfx_mode_top(), mode, "the mode is popped while its rule runs");
    *(int *)ctx += 1;
    *out = cfx_string("user");
    return CFX_OK;
}

Test(hop, mode_type_picks_the_rule)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *h = cfx_hop_new("moded", false);
    int calls = 0;
    cr_assert_eq(cfx_hop_py_impl_user_mode(h, &user_vt, user_rule, &calls), CFX_OK);
    user_mode m;
    cfx_mode_init(&m.base, &user_vt, CFX_MODE_USER);
    cfx_value out, t = cfx_tensor_value(ones(2));
    cr_assert_eq(cfx_mode_push(&m.base), CFX_OK);
    /* a mode sets Python; AutogradCPU still wins over it, so go below autograd as a rule would */
    cfx_key_guard g;
    cfx_exclude_keys_begin(&g, autograd_keys());
    cr_assert_eq(cfx_hop_dispatch_key(h, &t, 1), CFX_KEY_Python);
    cr_assert_eq(cfx_hop_call(h, &t, 1, &out), CFX_OK);
    cr_assert_eq(calls, 1);
    cr_assert_eq(cfx_mode_top(), &m.base, "pushed back after the rule");
    cr_assert_str_eq(out.u.s, "user");
    /* no tensors at all: the mode's Python key still routes the call */
    cr_assert_eq(cfx_hop_call(h, NULL, 0, &out), CFX_OK);
    cr_assert_eq(calls, 2);
    cfx_key_guard_end(&g);
    cfx_mode_exit(&m.base);

    user_mode o;
    cfx_mode_init(&o.base, &other_vt, CFX_MODE_USER);
    cfx_mode_push(&o.base);
    expect_error(cfx_hop_call(h, NULL, 0, &out),
                 "There was no rule registered for HigherOrderOperator moded and mode <__main__.Other object>.Hint: "
                 "set <__main__.Other object>'s supports_higher_order_operators to True. This causes all higher "
                 "order operators to pass through <__main__.Other object>'s __torch_dispatch__, so handle them "
                 "accordingly by adding support for HigerOrderOperators (in this case, moded) in "
                 "<__main__.Other object>.__torch_dispatch__ or returning NotImplemented when not supported.");
    cr_assert_eq(cfx_mode_top(), &o.base);
    cfx_mode_exit(&o.base);
    cfx_scope_end(s);
}

/* ---- functionalize ----------------------------------------------------------------------- */

static int func_rule(cfx_hop *hop, cfx_functionalize_ctx *c, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    *(int *)ctx = c->route == CFX_FUNCTIONALIZE_KEY ? 1 : 2;
    cfx_value un[4];
    cr_assert_eq(cfx_functionalize_unwrap(c, args, n, un), CFX_OK);
    cr_assert_eq(cfx_functionalize_redispatch_begin(c), CFX_OK);
    if (c->route == CFX_FUNCTIONALIZE_KEY)
        cr_assert(cfx_keyset_has(cfx_local_keys_get().excluded, CFX_KEY_Functionalize));
    cfx_functionalize_redispatch_end(c);
    cr_assert_not(cfx_keyset_has(cfx_local_keys_get().excluded, CFX_KEY_Functionalize));
    return cfx_functionalize_wrap(c, un, 1, out);
}

Test(hop, functionalize_impl_serves_key_and_mode)
{
    cfx_hop *h = cfx_hop_new("funced", false);
    int route = 0;
    cr_assert_eq(cfx_hop_py_functionalize_impl(h, func_rule, &route), CFX_OK);
    cr_assert(cfx_hop_has_impl(h, CFX_KEY_Functionalize));
    cr_assert(cfx_hop_has_mode_impl(h, CFX_MODE_FUNCTIONAL));
    cfx_value out, a = cfx_int(7);
    cr_assert_eq(cfx_hop_dispatch(h, CFX_KEY_Functionalize, &a, 1, &out), CFX_OK);
    cr_assert_eq(route, 1);
    cr_assert_eq(out.u.i, 7);
    expect_error(cfx_hop_py_functionalize_impl(h, func_rule, &route),
                 "Trying to override a python impl for DispatchKey.Functionalize on operator funced");
}

/* ---- callables and graph targets ----------------------------------------------------------- */

static cfx_tensor *scaled(void *env, cfx_tensor *x) { return cfx_mul(x, cfx_autorelease(cfx_tensor_scalar_double(*(double *)env, CFX_FLOAT32))); }

static int apply_impl(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)mode;
    (void)ctx;
    cfx_object *fn = cfx_value_object(args[0]);
    if (!fn || cfx_object_get_kind(fn) != CFX_OBJECT_CALLABLE)
        return cfx_error_set(CFX_ERR, NULL, "apply: the first argument must be a callable");
    return cfx_callable_call(cfx_object_callable(fn), args + 1, n - 1, NULL, 0, out);
}

Test(hop, callable_arguments_and_closures)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *h = cfx_hop_new("apply_fn", false);
    cfx_hop_py_impl(h, CFX_KEY_CompositeExplicitAutograd, apply_impl, NULL);
    cfx_hop_py_impl(h, CFX_KEY_AutogradCPU, apply_impl, NULL);
    double k = 3.0;
    cfx_object *c = cfx_callable_object(cfx_callable_closure_new((cfx_fnptr)scaled, "scaled(Tensor x) -> Tensor", &k, NULL));
    cr_assert_not_null(c, "%s", cfx_error_message());
    float v[2] = {1, 2};
    int64_t shape[1] = {2};
    cfx_value args[2] = {cfx_object_value(c), cfx_tensor_value(cfx_autorelease(cfx_tensor_from_floats(v, shape, 1)))};
    cfx_value out;
    cr_assert_eq(cfx_hop_call(h, args, 2, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_TENSOR);
    cr_assert_float_eq(((float *)cfx_tensor_data(out.u.t))[1], 6.0f, 1e-6);
    /* a wrong argument count is the callable's error (inspect.Signature.bind's), not a crash */
    expect_error(cfx_hop_call(h, args, 1, &out), "scaled(): missing a required argument: 'x'");
    cfx_object_release(c);
    cr_assert_null(cfx_callable_object(cfx_callable_new((cfx_fnptr)scaled, "bad(Tensor x -> Tensor")));
    cfx_error_clear();
    cfx_scope_end(s);
}

static int double_impl(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop;
    (void)mode;
    (void)ctx;
    (void)n;
    cfx_tensor *r = cfx_add(args[0].u.t, args[0].u.t);
    if (!r)
        return CFX_ERR;
    *out = cfx_tensor_value(r);
    return CFX_OK;
}

Test(hop, a_hop_is_a_graph_target)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *pure = cfx_hop_new("twice", false);
    cfx_hop *impure = cfx_hop_new("noisy", true);
    cfx_hop_py_impl(pure, CFX_KEY_CompositeExplicitAutograd, double_impl, NULL);
    cfx_hop_py_impl(pure, CFX_KEY_Autograd, double_impl, NULL);
    cfx_hop_py_impl(impure, CFX_KEY_CompositeExplicitAutograd, double_impl, NULL);
    cfx_hop_py_impl(impure, CFX_KEY_Autograd, double_impl, NULL);
    cr_assert_eq(cfx_hop_from_target(cfx_hop_target(pure)), pure);

    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value a = cfx_node_value(x);
    cfx_node *t = cfx_graph_call_fn(g, cfx_hop_target(pure), &a, 1, NULL, 0);
    cfx_graph_call_fn(g, cfx_hop_target(impure), &a, 1, NULL, 0); /* unused, but impure */
    cfx_graph_call_fn(g, cfx_hop_target(pure), &a, 1, NULL, 0);   /* unused and pure */
    cfx_graph_output(g, cfx_node_value(t));
    char *text = cfx_graph_to_string(g);
    cr_assert_str_eq(text,
                     "graph():\n"
                     "    %x : [num_users=3] = placeholder[target=x]\n"
                     "    %twice : [num_users=1] = call_function[target=torch.ops.higher_order.twice](args = (%x,), kwargs = {})\n"
                     "    %noisy : [num_users=0] = call_function[target=torch.ops.higher_order.noisy](args = (%x,), kwargs = {})\n"
                     "    %twice_1 : [num_users=0] = call_function[target=torch.ops.higher_order.twice](args = (%x,), kwargs = {})\n"
                     "    return twice");
    free(text);
    char *code = cfx_graph_python_code_string(g, "self");
    cr_assert(strstr(code, "    twice = torch.ops.higher_order.twice(x)\n"), "%s", code);
    cr_assert(strstr(code, "    noisy = torch.ops.higher_order.noisy(x);  noisy = None\n"), "%s", code);
    free(code);

    /* JSON round trip finds the HOP by its qualified name */
    char *json = NULL;
    cr_assert_eq(cfx_graph_to_json(g, 0, &json), CFX_OK, "%s", cfx_error_message());
    cfx_graph *back = cfx_graph_from_json(json, strlen(json));
    cr_assert_not_null(back, "%s", cfx_error_message());
    cr_assert_eq(cfx_node_target_info(cfx_graph_find_node(back, "noisy"))->ptr, cfx_hop_target(impure));
    free(json);

    /* the interpreter calls the HOP */
    float v[2] = {1, 2};
    int64_t shape[1] = {2};
    cfx_value in = cfx_tensor_value(cfx_autorelease(cfx_tensor_from_floats(v, shape, 1))), out;
    cr_assert_eq(cfx_interpret(back, &in, 1, NULL, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_float_eq(((float *)cfx_tensor_data(out.u.t))[1], 4.0f, 1e-6);
    cfx_tensor_release(out.u.t);

    /* dce keeps the impure HOP and drops the unused pure one */
    bool changed = false;
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
    cr_assert(changed);
    cr_assert_not_null(cfx_graph_find_node(g, "noisy"));
    cr_assert_null(cfx_graph_find_node(g, "twice_1"));
    cfx_graph_free(back);
    cfx_graph_free(g);
    cfx_scope_end(s);
}
