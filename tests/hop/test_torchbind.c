/* test_torchbind.c - call_torchbind and the class registry, case by case against PyTorch 2.13
 * with its own _TorchScriptTesting::_TensorQueue (texts from tools/interop/gen_hop.py runs):
 * eager calls, bad uses, autograd_not_implemented's deferred error, tracing (placeholder, meta
 * val, the real-object warning, the real object mutated by a real trace), side effects. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "cfx.h"
#include "hop/torchbind.h"
#include "tests/hop/expect_text.h"
#include "tests/test_util.h"

static cfx_tensor *vec(float a, float b)
{
    float v[2] = {a, b};
    int64_t shape[1] = {2};
    return cfx_autorelease(cfx_tensor_from_floats(v, shape, 1));
}

static cfx_object *new_queue(void)
{
    int64_t zero[1] = {0};
    cfx_tensor *init = cfx_autorelease(cfx_tensor_new(zero, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)));
    cfx_object *q = cfx_tensor_queue_new(init);
    cr_assert_not_null(q, "%s", cfx_error_message());
    return q;
}

static void expect_error(int rc, const char *text)
{
    cr_assert_neq(rc, CFX_OK);
    cr_assert_str_eq(cfx_error_message(), text);
    cfx_error_clear();
}

static int64_t qsize(cfx_object *q)
{
    cfx_value out;
    cr_assert_eq(cfx_script_object_call(q, "size", NULL, 0, &out), CFX_OK);
    return out.u.i;
}

Test(torchbind, eager_calls_reach_the_c_methods)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *q = new_queue();
    cfx_value out, x = cfx_tensor_value(vec(1, 2));
    cr_assert_eq(cfx_call_torchbind(q, "push", &x, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_NONE);
    cr_assert_eq(cfx_call_torchbind(q, "size", NULL, 0, &out), CFX_OK);
    cr_assert_eq(out.kind, CFX_V_INT);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(cfx_call_torchbind(q, "float_size", NULL, 0, &out), CFX_OK);
    cr_assert_eq(out.kind, CFX_V_DOUBLE);
    cr_assert_eq(cfx_object_call_method(q, "pop", NULL, 0, &out), CFX_OK);
    cr_assert_eq(out.u.t, x.u.t);
    cr_assert_eq(cfx_call_torchbind(q, "is_empty", NULL, 0, &out), CFX_OK);
    cr_assert(out.u.b);
    /* __obj_flatten__: (("queue", [tensors]),) */
    cfx_call_torchbind(q, "push", &x, 1, &out);
    cfx_named_value flat[2];
    int n = 0;
    cr_assert_eq(cfx_object_flatten(q, flat, 2, &n), CFX_OK);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(flat[0].name, "queue");
    cr_assert_eq(flat[0].value.kind, CFX_V_LIST);
    cr_assert_eq(flat[0].value.len, 1);
    cr_assert_str_eq(cfx_object_qualname(q), "_TorchScriptTesting::_TensorQueue");
    cr_assert_str_eq(cfx_class_script_name(cfx_object_class(q)),
                     "__torch__.torch.classes._TorchScriptTesting._TensorQueue");
    cfx_object_release(q);
    cfx_scope_end(s);
}

Test(torchbind, bad_uses_give_pytorchs_errors)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *q = new_queue();
    cfx_hop *h = cfx_call_torchbind_hop();
    cfx_key_guard g; /* below autograd, as PyTorch's case ran */
    cfx_exclude_keys_begin(&g, cfx_autograd_keyset());
    cfx_value out, args[3] = {cfx_int(1), cfx_string("push")};
    expect_error(cfx_hop_call(h, args, 2, &out), "Unsupported first arg type <class 'int'> for call_torchbind");
    args[0] = cfx_tensor_value(vec(1, 2));
    expect_error(cfx_hop_call(h, args, 2, &out), "Unsupported first arg type <class 'torch.Tensor'> for call_torchbind");
    args[0] = cfx_none();
    expect_error(cfx_hop_call(h, args, 2, &out), "Unsupported first arg type <class 'NoneType'> for call_torchbind");
    args[0] = cfx_string("s");
    expect_error(cfx_hop_call(h, args, 2, &out), "Unsupported first arg type <class 'str'> for call_torchbind");
    cfx_key_guard_end(&g);

    expect_error(cfx_call_torchbind(q, "nope", NULL, 0, &out),
                 "__torch__.torch.classes._TorchScriptTesting._TensorQueue (of Python compilation unit at: 0) does "
                 "not have a field with name 'nope'");
    cfx_value one = cfx_int(1);
    expect_error(cfx_call_torchbind(q, "push", &one, 1, &out),
                 "push() Expected a value of type 'Tensor' for argument '_1' but instead found type 'int'.\n"
                 "Position: 1\nValue: 1\nDeclaration: push(__torch__.torch.classes._TorchScriptTesting._TensorQueue "
                 "_0, Tensor _1) -> NoneType _0\nCast error details: Unable to cast 1 to Tensor");
    expect_error(cfx_call_torchbind(q, "push", NULL, 0, &out),
                 "push() is missing value for argument '_1'. Declaration: "
                 "push(__torch__.torch.classes._TorchScriptTesting._TensorQueue _0, Tensor _1) -> NoneType _0");
    cr_assert_eq(qsize(q), 0, "no failed call touched the queue");
    cfx_object_release(q);
    cfx_scope_end(s);
}

static int identity(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out);

Test(torchbind, autograd_not_implemented_defers_the_error)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *q = new_queue();
    cfx_tensor *x = vec(1, 1);
    cr_assert_eq(cfx_tensor_set_requires_grad(x, true), CFX_OK);
    cfx_value out, a = cfx_tensor_value(x);
    cr_assert_eq(cfx_call_torchbind(q, "push", &a, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_NONE);
    /* pop() has no tensor argument: nothing requires grad, the output is the queued tensor */
    cr_assert_eq(cfx_call_torchbind(q, "pop", NULL, 0, &out), CFX_OK);
    cr_assert_eq(out.u.t, x);
    cr_assert(cfx_tensor_requires_grad(out.u.t));
    cr_assert_null(cfx_tensor_delayed_error(out.u.t));

    /* a HOP whose argument requires grad: outputs fail on backward (deferred_error=True) */
    cfx_hop *h = cfx_hop_new("ident_hop", false);
    cfx_hop_autograd_not_implemented(h, true);
    cr_assert_eq(cfx_call_torchbind(q, "push", &a, 1, &out), CFX_OK);
    cfx_value args[3] = {cfx_object_value(q), cfx_string("top"), a};
    (void)h;
    /* top() takes no argument: through call_torchbind with x as an extra argument is an error */
    cfx_value r;
    cr_assert_neq(cfx_call_torchbind(q, "top", &a, 1, &r), CFX_OK);
    cfx_error_clear();
    (void)args;

    /* without deferral the call itself fails (after running below autograd, as PyTorch) */
    cfx_hop *strict = cfx_hop_new("strict_hop", false);
    cfx_hop_autograd_not_implemented(strict, false);
    cfx_hop_py_impl(strict, CFX_KEY_CompositeExplicitAutograd, identity, NULL);
    expect_error(cfx_hop_call(strict, &a, 1, &r), "Autograd not implemented for strict_hop");
    cfx_grad_mode_set(false); /* torch.no_grad(): no check */
    cr_assert_eq(cfx_hop_call(strict, &a, 1, &r), CFX_OK);
    cr_assert_eq(r.u.t, x);
    cfx_grad_mode_set(true);
    /* deferred: the forward succeeds, the output (an alias) fails on backward */
    cfx_hop *lazy = cfx_hop_new("lazy_hop", false);
    cfx_hop_autograd_not_implemented(lazy, true);
    cfx_hop_py_impl(lazy, CFX_KEY_CompositeExplicitAutograd, identity, NULL);
    cr_assert_eq(cfx_hop_call(lazy, &a, 1, &r), CFX_OK, "%s", cfx_error_message());
    cr_assert_neq(r.u.t, x);
    cr_assert(cfx_tensor_requires_grad(r.u.t));
    cr_assert_str_eq(cfx_tensor_delayed_error(r.u.t), "Autograd not implemented for lazy_hop");
    expect_error(cfx_backward(r.u.t), "Autograd not implemented for lazy_hop");
    cr_assert_null(cfx_tensor_delayed_error(x), "the input is not marked");
    expect_error(cfx_backward(vec(1, 2)), "element 0 of tensors does not require grad and does not have a grad_fn");
    cfx_grad_mode_set(true);
    cfx_object_release(q);
    cfx_scope_end(s);
}

static int identity(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop, (void)mode, (void)ctx, (void)n;
    *out = args[0];
    return CFX_OK;
}

static char warned[4][512];
static int n_warned;
static void capture(const char *msg, void *ctx)
{
    (void)ctx;
    if (n_warned < 4)
        snprintf(warned[n_warned], sizeof warned[0], "%s", msg);
    n_warned++;
}

static cfx_tensor *traced(const cfx_value *tq, cfx_tensor *x)
{
    cfx_object *q = cfx_value_object(*tq);
    cfx_value a = cfx_tensor_value(cfx_cos(x)), none, size, y;
    cfx_object_call_method(q, "push", &a, 1, &none);
    cfx_object_call_method(q, "size", NULL, 0, &size);
    cfx_object_call_method(q, "pop", NULL, 0, &y);
    return y.kind == CFX_V_TENSOR ? y.u.t : NULL;
}

Test(torchbind, real_trace_records_call_torchbind_and_mutates_the_real_object)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *q = new_queue();
    cfx_value none, pre = cfx_tensor_value(vec(5, 5));
    cfx_script_object_call(q, "push", &pre, 1, &none); /* so pop returns the older tensor */
    cfx_set_warning_handler(capture, NULL);
    bool was = cfx_torchbind_tracing_set(true);
    cfx_value args[2] = {cfx_object_value(q), cfx_tensor_value(vec(1, 2))};
    cfx_make_fx_options o = {CFX_TRACE_REAL, NULL, NULL, false};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)traced,
                                       "(__torch__.torch.classes._TorchScriptTesting._TensorQueue tq, Tensor x) -> Tensor",
                                       args, 2, &o);
    cfx_torchbind_tracing_set(was);
    cfx_set_warning_handler(NULL, NULL);
    cr_assert_not_null(gm, "%s", cfx_error_message());
    cr_assert_eq(n_warned, 3);
    cr_assert_str_eq(warned[0], "Tracing torchbind method _TensorQueue.push with real ScriptObject. This may cause "
                                "the original object being mutated. If this is not intended, You can register a fake "
                                "class with torch._library.register_fake_class(\"_TorchScriptTesting::_TensorQueue\").");
    cfx_graph *g = cfx_graph_module_graph(gm);
    char *text = cfx_graph_to_string(g);
    cr_assert_str_eq(text,
                     "graph():\n"
                     "    %tq_1 : [num_users=3] = placeholder[target=tq_1]\n"
                     "    %x_1 : [num_users=1] = placeholder[target=x_1]\n"
                     "    %cos : [num_users=1] = call_function[target=torch.ops.aten.cos.default](args = (%x_1,), kwargs = {})\n"
                     "    %call_torchbind : [num_users=0] = call_function[target=torch.ops.higher_order.call_torchbind](args = (%tq_1, push, %cos), kwargs = {})\n"
                     "    %call_torchbind_1 : [num_users=0] = call_function[target=torch.ops.higher_order.call_torchbind](args = (%tq_1, size), kwargs = {})\n"
                     "    %call_torchbind_2 : [num_users=1] = call_function[target=torch.ops.higher_order.call_torchbind](args = (%tq_1, pop), kwargs = {})\n"
                     "    return call_torchbind_2");
    free(text);
    /* meta val: None for push, the int for size (PyTorch: call_torchbind val None, 1) */
    const cfx_meta_val *v = cfx_node_val(cfx_graph_find_node(g, "call_torchbind"));
    cr_assert(v && v->kind == CFX_MVAL_NONE);
    v = cfx_node_val(cfx_graph_find_node(g, "call_torchbind_1"));
    cr_assert(v && v->kind == CFX_MVAL_INT && v->u.i == 2);
    /* a real trace runs the real methods: one push, one pop */
    cr_assert_eq(qsize(q), 1);
    /* cse never merges, dce never removes call_torchbind */
    bool changed = true;
    cr_assert_eq(cfx_pipeline_run_text("dce,cse", gm, NULL, &changed), CFX_OK);
    cr_assert_not(changed);
    cr_assert_eq(cfx_graph_num_nodes(cfx_graph_module_graph(gm)), 7);
    cfx_graph_module_free(gm);
    cfx_object_release(q);
    cfx_scope_end(s);
}

Test(torchbind, fake_trace_uses_a_fake_object_and_leaves_the_real_one_alone)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *q = new_queue();
    cfx_set_warning_handler(capture, NULL);
    bool was = cfx_torchbind_tracing_set(true);
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false};
    cfx_value args[2] = {cfx_object_value(q), cfx_tensor_value(vec(1, 2))};
    const char *sig = "(__torch__.torch.classes._TorchScriptTesting._TensorQueue tq, Tensor x) -> Tensor";
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)traced, sig, args, 2, &o);
    cr_assert_not_null(gm, "%s", cfx_error_message());
    /* the fake class lacks top (as PyTorch's FakeTensorQueue); no real-object warning */
    cr_assert_eq(n_warned, 1);
    cr_assert_str_eq(warned[0], "fake object of ScriptObject <__torch__.torch.classes._TorchScriptTesting._TensorQueue> "
                                "doesn't implement method top.");
    cr_assert_eq(qsize(q), 0, "a fake trace never mutates the real object");
    const cfx_meta_val *v = cfx_node_val(cfx_graph_find_node(cfx_graph_module_graph(gm), "tq_1"));
    cr_assert(v && v->kind == CFX_MVAL_OBJECT);
    cr_assert_str_eq(v->u.class_name, "__torch__.torch.classes._TorchScriptTesting._TensorQueue");
    cfx_graph_module_free(gm);

    /* without a fake class: PyTorch's error */
    cfx_deregister_fake_class("_TorchScriptTesting::_TensorQueue");
    cr_assert_not(cfx_has_fake_class("_TorchScriptTesting::_TensorQueue"));
    cfx_object *q2 = new_queue();
    args[0] = cfx_object_value(q2);
    gm = cfx_make_fx((cfx_fnptr)traced, sig, args, 2, &o);
    cfx_torchbind_tracing_set(was);
    cfx_set_warning_handler(NULL, NULL);
    cr_assert_null(gm);
    cr_assert_str_eq(cfx_error_message(),
                     " ScriptObject's __torch__.torch.classes._TorchScriptTesting._TensorQueue haven't registered a fake "
                     "class. Please use register_fake_class(_TorchScriptTesting::_TensorQueue) to annotate a fake class "
                     "for the script obj. Specifically, create a python class that implements a fake version for all "
                     "the methods that're used in the program and put annotated class in the program e.g. after "
                     "loading the library. The fake methods can be written in the same way as a meta kernel for an "
                     "operator but need to additionally simulate the object's states. Be sure to add a "
                     "__obj_unflatten__ classmethod to enable creating a fake obj from a real one.");
    cfx_error_clear();
    cfx_object_release(q2);
    cfx_object_release(q);
    cfx_scope_end(s);
}

/* A script object that is no input of the trace (a module attribute or a global). */
static cfx_object *attr_q;

/* def attr_f(x): Q.push(x); Q.push(x.cos()); return Q.pop() + Q.size() */
static cfx_tensor *attr_f(cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(x), b, none, top, size;
    if (cfx_object_call_method(attr_q, "push", &a, 1, &none) != CFX_OK)
        return NULL;
    b = cfx_tensor_value(cfx_cos(x));
    if (cfx_object_call_method(attr_q, "push", &b, 1, &none) != CFX_OK ||
        cfx_object_call_method(attr_q, "pop", NULL, 0, &top) != CFX_OK ||
        cfx_object_call_method(attr_q, "size", NULL, 0, &size) != CFX_OK)
        return NULL;
    return cfx_add(top.u.t, cfx_num(size.u.i));
}

static void quiet(const char *msg, void *ctx) { (void)msg, (void)ctx; }

/* make_fx interns it as the graph module attribute `_torchbind_obj0`, one get_attr node per
 * use (2.13: tools/interop/gen_hop.py trace_attr_object), in real and fake tracing; the
 * module holds the object, the interpreter runs the graph on it, JSON and the Python module
 * writer refuse it with a clear error. */
Test(torchbind, an_object_that_is_no_input_is_a_get_attr)
{
    char *want_graph = read_golden("tests/data/hop_torchbind_attr.graph.txt");
    char *want_code = read_golden("tests/data/hop_torchbind_attr.code.txt");
    cr_assert(want_graph && want_code);
    cfx_set_warning_handler(quiet, NULL);
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_scope s = cfx_scope_begin();
        attr_q = new_queue();
        cfx_value x = cfx_tensor_value(vec(1, 2));
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        bool was = cfx_torchbind_tracing_set(true);
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)attr_f, "(Tensor x) -> Tensor", &x, 1, &o);
        cfx_torchbind_tracing_set(was);
        cr_assert_not_null(gm, "%s", cfx_error_message());
        expect_graph_and_code(gm, want_graph, want_code, mode);
        cr_assert_eq(cfx_graph_module_n_object_attrs(gm), 1);
        cr_expect_str_eq(cfx_graph_module_object_attr_name(gm, 0), "_torchbind_obj0");
        cr_expect_eq(cfx_graph_module_get_attr_object(gm, "_torchbind_obj0"), attr_q);
        cr_expect_eq(qsize(attr_q), mode == CFX_TRACE_REAL ? 1 : 0, "a fake trace leaves the object alone");
        /* the interpreter reads the attribute: two pushes, a pop of the oldest, + the size the
         * trace saw (1, a constant in the graph) */
        int64_t before = qsize(attr_q);
        cfx_value out;
        cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
        cr_assert_eq(out.kind, CFX_V_TENSOR);
        cr_expect_eq(qsize(attr_q), before + 1);
        const float *d = cfx_tensor_data(out.u.t);
        /* the real trace left its cos(x) behind, so the run pops that one */
        float want = (before ? cosf(2.0f) : 2.0f) + 1.0f;
        cr_expect_float_eq(d[1], want, 1e-5, "%f", d[1]);
        cfx_tensor_release(out.u.t);
        char *json = NULL;
        cr_expect_neq(cfx_graph_module_to_json(gm, 0, &json), CFX_OK);
        cr_expect(strstr(cfx_error_message(), "attribute '_torchbind_obj0' is a script object"), "%s",
                  cfx_error_message());
        cfx_error_clear();
        free(json);
        cfx_buf py;
        cfx_buf_init(&py);
        cr_expect_neq(cfx_graph_module_to_python(gm, "w.safetensors", &py), CFX_OK);
        cr_expect(strstr(cfx_error_message(), "attribute '_torchbind_obj0': it is a script object"), "%s",
                  cfx_error_message());
        cfx_error_clear();
        cfx_buf_free(&py);
        cfx_graph_module_free(gm); /* drops the module's reference */
        cfx_object_release(attr_q);
        cfx_scope_end(s);
    }
    cfx_set_warning_handler(NULL, NULL);
    free(want_graph);
    free(want_code);
}

/* A real object keeps its latest fake copy for the fake mode that made it. A mode freed and
 * the next one made are usually at the same address (the allocator hands the block back), so
 * the copy is keyed by the mode's unique id: the new mode gets a copy of its own, not the dead
 * mode's (whose fake tensors belong to a freed mode). Found by failalloc, where a copy made in
 * a failing run came back in the next one. */
Test(torchbind, a_new_fake_mode_gets_its_own_fake_copy)
{
    cfx_scope s = cfx_scope_begin();
    cfx_object *q = new_queue();
    cfx_fake_mode *a = cfx_fake_mode_new(NULL);
    cfx_object *fa = cfx_to_fake_obj(a, q);
    cr_assert_not_null(fa, "%s", cfx_error_message());
    cfx_object *again = cfx_to_fake_obj(a, q);
    cr_expect_eq(again, fa, "one mode, one copy");
    cfx_object_release(again);
    cfx_object_release(fa);
    cfx_fake_mode_free(a);
    cfx_fake_mode *b = cfx_fake_mode_new(NULL);
    cfx_object *fb = cfx_to_fake_obj(b, q);
    cr_assert_not_null(fb, "%s", cfx_error_message());
    cr_expect_neq(fb, fa, "a copy of the freed mode came back (mode %s)", (void *)b == (void *)a ? "at the same address" : "elsewhere");
    cr_expect_null(cfx_to_fake_obj(NULL, q));
    cr_expect(strstr(cfx_error_message(), "no fake mode"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_object_release(fb);
    cfx_fake_mode_free(b);
    cfx_object_release(q);
    cfx_scope_end(s);
}
