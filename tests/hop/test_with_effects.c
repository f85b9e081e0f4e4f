/* test_with_effects.c - the with_effects HOP and handle_effects against PyTorch 2.13
 * (goldens: tests/data/effects.txt, tools/interop/gen_effects.py): make_fx with
 * functionalization and effect tokens turns each aten::_print into with_effects, chaining the
 * tokens, in real and fake tracing; with_effects' own checks and dense result; DCE; the same
 * for call_torchbind on _TorchScriptTesting::_TensorQueue (with_effects taking a HOP). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "tests/dispatch/effects_programs.h"
#include "tests/hop/expect_text.h"

static cfx_tensor *mutate_print(cfx_tensor *x, cfx_tensor *y)
{
    if (!cfx_add_(x, y) || effects_print("after add_") != CFX_OK)
        return NULL;
    return cfx_sin(x);
}

static cfx_graph_module *trace(cfx_fnptr fn, int mode)
{
    cfx_hop_init();
    return effects_trace(fn, mode, true);
}

static void check_golden(const char *name, cfx_fnptr fn)
{
    char *want_graph = effects_block(name, "graph"), *want_code = effects_block(name, "code");
    cr_assert(want_graph && want_code);
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace(fn, mode);
        cr_assert(gm, "%s", cfx_error_message());
        expect_graph_and_code(gm, want_graph, want_code, mode);
        cfx_graph_module_free(gm);
        cr_expect_eq(cfx_mode_stack_len(), 0);
    }
    free(want_graph);
    free(want_code);
}

Test(with_effects, prints_golden) { check_golden("prints", (cfx_fnptr)effects_prints); }

Test(with_effects, mutate_print_golden) { check_golden("mutate_print", (cfx_fnptr)mutate_print); }

/* eliminate_dead_code: the getitems of the None results go; with_effects is not itself
 * side-effectful in 2.13, its token chain to the output is what keeps it. */
Test(with_effects, dce_keeps_the_token_chain)
{
    char *want = effects_block("prints_dce", "graph");
    cr_assert(want);
    cfx_graph_module *gm = trace((cfx_fnptr)effects_prints, CFX_TRACE_FAKE);
    cr_assert(gm, "%s", cfx_error_message());
    bool changed = false;
    cr_assert_eq(cfx_pass_eliminate_dead_code(cfx_graph_module_graph(gm), NULL, &changed), CFX_OK);
    cr_expect(changed);
    char *got = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect_str_eq(got, want);
    free(got);
    cfx_graph_module_free(gm);
    free(want);
}

/* with_effects(torch.tensor([]), aten._print.default, "hi") is (float32 [0] token, None), the
 * token a token value; an op with alias annotations is refused with 2.13's text. */
Test(with_effects, dense_and_aliasing)
{
    cfx_hop_init();
    char *want_dense = effects_block("dense", "result"), *want_alias = effects_block("aliasing", "error");
    cr_assert(want_dense && want_alias);
    cfx_scope sc = cfx_scope_begin();
    cfx_value hi = cfx_string("hi"), out;
    cr_assert_eq(cfx_with_effects(cfx_token_new(), cfx_op_find("aten::_print"), &hi, 1, &out), CFX_OK, "%s",
                 cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_TUPLE);
    cr_assert_eq(out.len, 2);
    cr_assert_eq(out.u.items[0].kind, CFX_V_TOKEN);
    cfx_tensor *tok = out.u.items[0].u.t;
    cr_expect_eq(tok->ndim, 1);
    cr_expect_eq(tok->sizes[0], 0);
    cr_expect_eq(cfx_tensor_dtype(tok), CFX_FLOAT32);
    cr_expect(cfx_tensor_is_token(tok));
    cr_expect_eq(out.u.items[1].kind, CFX_V_NONE);
    cr_expect(strstr(want_dense, "2 (0,) torch.float32 None"), "%s", want_dense);
    cfx_tensor *x = cfx_tensor_from_floats((const float[]){1, 2}, (const int64_t[]){2}, 1);
    cfx_value xy[2] = {cfx_tensor_value(x), cfx_tensor_value(x)};
    cr_expect_neq(cfx_with_effects(cfx_token_new(), cfx_op_find("aten::add_.Tensor"), xy, 2, &out), CFX_OK);
    cr_expect_str_eq(cfx_error_message(), want_alias);
    cfx_error_clear();
    cfx_tensor_release(x);
    cfx_scope_end(sc);
    free(want_dense);
    free(want_alias);
}


/* def torchbind(q, x, y): q.push(x); q.push(y.cos()); return q.pop() + q.size() */
static cfx_tensor *torchbind_prog(const cfx_value *qv, cfx_tensor *x, cfx_tensor *y)
{
    cfx_object *q = cfx_value_object(*qv);
    cfx_value a = cfx_tensor_value(x), b, none, top, size;
    if (cfx_object_call_method(q, "push", &a, 1, &none) != CFX_OK || !(b.u.t = cfx_cos(y)))
        return NULL;
    b.kind = CFX_V_TENSOR;
    if (cfx_object_call_method(q, "push", &b, 1, &none) != CFX_OK ||
        cfx_object_call_method(q, "pop", NULL, 0, &top) != CFX_OK ||
        cfx_object_call_method(q, "size", NULL, 0, &size) != CFX_OK)
        return NULL;
    return cfx_add(top.u.t, cfx_num(size.u.i));
}

static cfx_graph_module *trace_torchbind(cfx_object *q, int mode)
{
    cfx_tensor *x = effects_t23(0), *y = effects_t23(1);
    cfx_value args[3] = {cfx_object_value(q), cfx_tensor_value(x), cfx_tensor_value(y)};
    cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false, .functionalize = true, .effect_tokens = true};
    bool was = cfx_torchbind_tracing_set(true);
    cfx_graph_module *gm = cfx_make_fx(
        (cfx_fnptr)torchbind_prog,
        "(__torch__.torch.classes._TorchScriptTesting._TensorQueue q, Tensor x, Tensor y) -> Tensor", args, 3, &o);
    cfx_torchbind_tracing_set(was);
    cfx_tensor_release(x);
    cfx_tensor_release(y);
    return gm;
}

static void ignore_warning(const char *msg, void *ctx) { (void)msg, (void)ctx; }

/* call_torchbind is ORDERED: under functionalization with tokens each method call becomes
 * with_effects(token, call_torchbind, q, method, *args), tokens chained (2.13's handle_effects),
 * in real and fake tracing; dce keeps the chain and drops the unused getitems. */
Test(with_effects, call_torchbind_through_handle_effects)
{
    cfx_hop_init();
    char *want_graph = effects_block("torchbind", "graph"), *want_code = effects_block("torchbind", "code");
    char *want_dce = effects_block("torchbind_dce", "graph");
    cr_assert(want_graph && want_code && want_dce);
    cfx_set_warning_handler(ignore_warning, NULL);
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_scope sc = cfx_scope_begin();
        cfx_tensor *init = cfx_autorelease(cfx_tensor_new((const int64_t[]){0}, 1, CFX_FLOAT32,
                                                          cfx_device_make(CFX_DEVICE_CPU)));
        cfx_object *q = cfx_tensor_queue_new(init);
        cr_assert(q);
        cfx_graph_module *gm = trace_torchbind(q, mode);
        cr_assert(gm, "mode %d: %s", mode, cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        expect_graph_and_code(gm, want_graph, want_code, mode);
        bool changed = false;
        cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK);
        char *got = cfx_graph_to_string(g);
        cr_expect_str_eq(got, want_dce, "mode %d\n%s", mode, got);
        /* a real trace ran the real methods (two pushes, one pop), a fake one left q alone */
        cfx_value size;
        cr_assert_eq(cfx_script_object_call(q, "size", NULL, 0, &size), CFX_OK);
        cr_expect_eq(size.u.i, mode == CFX_TRACE_REAL ? 1 : 0);
        free(got);
        cfx_graph_module_free(gm);
        cfx_object_release(q);
        cfx_scope_end(sc);
        cr_expect_eq(cfx_mode_stack_len(), 0);
    }
    cfx_set_warning_handler(NULL, NULL);
    free(want_graph);
    free(want_code);
    free(want_dce);
}

/* Without effect tokens, functionalizing a call_torchbind has no token: 2.13's assertion. */
Test(with_effects, call_torchbind_without_a_token)
{
    cfx_hop_init();
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *init = cfx_autorelease(cfx_tensor_new((const int64_t[]){0}, 1, CFX_FLOAT32,
                                                      cfx_device_make(CFX_DEVICE_CPU)));
    cfx_object *q = cfx_tensor_queue_new(init);
    cfx_tensor *x = effects_t23(0), *y = effects_t23(1);
    cfx_value args[3] = {cfx_object_value(q), cfx_tensor_value(x), cfx_tensor_value(y)};
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false, .functionalize = true};
    cfx_set_warning_handler(ignore_warning, NULL);
    bool was = cfx_torchbind_tracing_set(true);
    cfx_graph_module *gm = cfx_make_fx(
        (cfx_fnptr)torchbind_prog,
        "(__torch__.torch.classes._TorchScriptTesting._TensorQueue q, Tensor x, Tensor y) -> Tensor", args, 3, &o);
    cfx_torchbind_tracing_set(was);
    cfx_set_warning_handler(NULL, NULL);
    cr_expect_null(gm);
    cr_expect(strstr(cfx_error_message(),
                     "Could not find a token for effect EffectType.ORDERED which came from the function call_torchbind"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
    cfx_tensor_release(y);
    cfx_object_release(q);
    cfx_scope_end(sc);
}

/* ---- JSON: with_effects' operator and HOP arguments ------------------------------------------ */

/* dump -> load -> dump of gm gives the same bytes; the loaded module (returned) prints as gm. */
static cfx_graph_module *json_round_trip(const cfx_graph_module *gm, const char *must_contain)
{
    char *text = NULL, *again = NULL;
    cr_assert_eq(cfx_graph_module_to_json(gm, 0, &text), CFX_OK, "%s", cfx_error_message());
    cr_expect(strstr(text, must_contain), "%s", text);
    cfx_graph_module *back = cfx_graph_module_from_json(text, strlen(text));
    cr_assert(back, "%s", cfx_error_message());
    cr_assert_eq(cfx_graph_module_to_json(back, 0, &again), CFX_OK, "%s", cfx_error_message());
    cr_expect_str_eq(again, text);
    char *g0 = cfx_graph_to_string(cfx_graph_module_graph(gm)), *g1 = cfx_graph_to_string(cfx_graph_module_graph(back));
    cr_expect_str_eq(g1, g0);
    free(g0);
    free(g1);
    free(text);
    free(again);
    return back;
}

/* Generated C names the operator or HOP argument by its registry name. */
static void expect_c_has(const cfx_graph_module *gm, const char *want)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_c(cfx_graph_module_graph(gm), "f", &b), CFX_OK, "%s", cfx_error_message());
    cr_expect(b.data && strstr(b.data, want), "%s", b.data);
    cfx_buf_free(&b);
}

static void expect_floats(const cfx_tensor *t, const cfx_tensor *want)
{
    cr_assert(t && want);
    cr_assert_eq(cfx_tensor_numel(t), cfx_tensor_numel(want));
    const float *a = cfx_tensor_data(t), *b = cfx_tensor_data(want);
    for (int64_t i = 0; i < cfx_tensor_numel(want); i++)
        cr_expect_float_eq(a[i], b[i], 1e-6, "item %lld", (long long)i);
}

/* A graph with with_effects(token, aten._print.default, s) saves {"op": "aten::_print"} with its
 * schema, loads back byte for byte, and the loaded graph runs: (new token, relu(x + y)). */
Test(with_effects, json_round_trip_of_an_operator_argument)
{
    cfx_graph_module *gm = trace((cfx_fnptr)effects_prints, CFX_TRACE_FAKE);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph_module *back = json_round_trip(gm, "{\"op\": \"aten::_print\"}");
    expect_c_has(back, "cfx_op_value(cfx_op_find(\"aten::_print\"))");
    char *text = NULL;
    cr_assert_eq(cfx_graph_module_to_json(back, 0, &text), CFX_OK);
    cr_expect(strstr(text, "\"aten::_print\": \"aten::_print(str s) -> ()\""), "%s", text);
    free(text);
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *x = cfx_autorelease(effects_t23(0)), *y = cfx_autorelease(effects_t23(1));
    cfx_value args[3] = {cfx_token_value(cfx_token_new()), cfx_tensor_value(x), cfx_tensor_value(y)}, out;
    cr_assert_eq(cfx_graph_module_run(back, args, 3, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_TUPLE);
    cr_assert_eq(out.len, 2);
    cr_expect_eq(out.u.items[0].kind, CFX_V_TOKEN);
    cr_assert_eq(out.u.items[1].kind, CFX_V_TENSOR);
    expect_floats(out.u.items[1].u.t, cfx_relu(cfx_add(x, y)));
    cfx_scope_end(sc);
    cfx_graph_module_free(back);
    cfx_graph_module_free(gm);
}

/* with_effects(token, call_torchbind, q, method, *args): the HOP saves as
 * {"hop": "torch.ops.higher_order.call_torchbind"}; the loaded graph runs on a fresh queue. */
Test(with_effects, json_round_trip_of_a_hop_argument)
{
    cfx_hop_init();
    cfx_set_warning_handler(ignore_warning, NULL);
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *init = cfx_autorelease(cfx_tensor_new((const int64_t[]){0}, 1, CFX_FLOAT32,
                                                      cfx_device_make(CFX_DEVICE_CPU)));
    cfx_object *q = cfx_tensor_queue_new(init);
    cr_assert(q);
    cfx_graph_module *gm = trace_torchbind(q, CFX_TRACE_FAKE);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph_module *back = json_round_trip(gm, "{\"hop\": \"torch.ops.higher_order.call_torchbind\"}");
    expect_c_has(back, "cfx_hop_value(cfx_hop_find(\"call_torchbind\"))");
    /* the program pushes x and cos(y), pops x, and adds the size left (1) */
    cfx_tensor *x = cfx_autorelease(effects_t23(0)), *y = cfx_autorelease(effects_t23(1));
    cfx_value args[4] = {cfx_token_value(cfx_token_new()), cfx_object_value(q), cfx_tensor_value(x),
                         cfx_tensor_value(y)}, out;
    cr_assert_eq(cfx_graph_module_run(back, args, 4, &out), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(out.kind, CFX_V_TUPLE);
    cr_expect_eq(out.u.items[0].kind, CFX_V_TOKEN);
    expect_floats(out.u.items[1].u.t, cfx_add(x, cfx_num(1)));
    cfx_scope_end(sc);
    cfx_set_warning_handler(NULL, NULL);
    cfx_object_release(q);
    cfx_graph_module_free(back);
    cfx_graph_module_free(gm);
}

/* Operator and HOP values the registries do not know, or spelled wrong, are refused. */
Test(with_effects, json_unknown_operator_values)
{
    cfx_hop_init();
    static const char *const cases[][2] = {
        {"{\"op\": \"aten::no_such_op\"}", "unknown operator 'aten::no_such_op': nothing registered defines it"},
        {"{\"hop\": \"torch.ops.higher_order.no_such_hop\"}",
         "unknown higher-order operator 'torch.ops.higher_order.no_such_hop': nothing defines it"},
        {"{\"hop\": \"call_torchbind\"}",
         "a higher-order operator value must be named \"torch.ops.higher_order.NAME\" (got \"call_torchbind\")"},
        {"{\"hop\": \"torch.ops.higher_order.\"}", "a higher-order operator value must be named"},
        {"{\"hop\": 3}", "{\"hop\": ...} needs a string"},
        {"{\"op\": null}", "{\"op\": ...} needs a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 1}, \"name\": null, "
                 "\"schemas\": {}, \"nodes\": [\n"
                 "{\"name\": \"t\", \"op\": \"placeholder\", \"target\": \"t\", \"args\": [], \"kwargs\": []},\n"
                 "{\"name\": \"with_effects\", \"op\": \"call_function\", \"target\": {\"fn\": "
                 "\"torch.ops.higher_order.with_effects\"}, \"args\": [{\"node\": \"t\"}, %s, \"s\"], \"kwargs\": []},\n"
                 "{\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", \"args\": [{\"node\": "
                 "\"with_effects\"}], \"kwargs\": []}\n]}\n",
                 cases[i][0]);
        cfx_graph *g = cfx_graph_from_json(doc, strlen(doc));
        cr_expect_null(g, "case %zu", i);
        cr_expect(cfx_error_message() && strstr(cfx_error_message(), cases[i][1]), "case %zu: %s", i,
                  cfx_error_message());
        cr_expect(cfx_error_message() && strstr(cfx_error_message(), "$.nodes[1].args[1]"), "case %zu: %s", i,
                  cfx_error_message());
        cfx_error_clear();
        cfx_graph_free(g);
    }
}

/* ---- tokens are their own value kind ---------------------------------------------------------- */

/* Every node that carries a token (the token_1 placeholder, the getitem of each with_effects'
 * item 0) has a token val with the tensor metadata of 2.13's FakeTensor(size=(0,)); a
 * with_effects val is (token, None); JSON writes {"token": {...}}; DOT labels it `token`. */
Test(with_effects, token_nodes_have_token_vals)
{
    static const char *const token_nodes[] = {"token_1", "getitem", "getitem_2"};
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace((cfx_fnptr)effects_prints, mode);
        cr_assert(gm, "%s", cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        for (size_t i = 0; i < sizeof token_nodes / sizeof *token_nodes; i++) {
            const cfx_node *n = cfx_graph_find_node(g, token_nodes[i]);
            cr_assert(n, "%s", token_nodes[i]);
            const cfx_meta_val *v = cfx_node_val(n);
            cr_assert(v, "%s", token_nodes[i]);
            cr_expect_eq(v->kind, CFX_MVAL_TOKEN, "mode %d %s", mode, token_nodes[i]);
            cr_expect_eq(v->dtype, CFX_FLOAT32);
            cr_expect_eq(v->n, 1);
            cr_expect_eq(v->sizes[0], 0);
            cr_expect_eq(v->strides[0], 1);
        }
        const cfx_meta_val *we = cfx_node_val(cfx_graph_find_node(g, "with_effects"));
        cr_assert(we && we->kind == CFX_MVAL_TUPLE && we->n == 2);
        cr_expect_eq(we->u.items[0].kind, CFX_MVAL_TOKEN);
        cr_expect_eq(we->u.items[1].kind, CFX_MVAL_NONE);
        /* data nodes keep tensor vals */
        cr_expect_eq(cfx_node_val(cfx_graph_find_node(g, "relu"))->kind, CFX_MVAL_TENSOR);
        char *text = NULL;
        cr_assert_eq(cfx_graph_module_to_json(gm, 0, &text), CFX_OK, "%s", cfx_error_message());
        cr_expect(strstr(text, "{\"name\": \"token_1\", \"op\": \"placeholder\", \"target\": \"token_1\", \"args\": [], "
                               "\"kwargs\": [], \"meta\": {\"val\": {\"token\": {\"dtype\": \"torch.float32\", "
                               "\"device\": \"cpu\", \"shape\": [0], \"stride\": [1], \"storage_offset\": 0}}"),
                  "%s", text);
        cfx_graph_module *back = cfx_graph_module_from_json(text, strlen(text));
        cr_assert(back, "%s", cfx_error_message());
        cr_expect_eq(cfx_node_val(cfx_graph_find_node(cfx_graph_module_graph(back), "token_1"))->kind, CFX_MVAL_TOKEN);
        free(text);
        cfx_buf b;
        cfx_buf_init(&b);
        cr_assert_eq(cfx_graph_to_dot(g, "prints", &b), CFX_OK, "%s", cfx_error_message());
        cr_expect(strstr(b.data, "[label=\"token_1\\lplaceholder\\ltoken\\l\""), "%s", b.data);
        cr_expect(strstr(b.data, "with_effects\\ltorch.ops.higher_order.with_effects\\l(token, None)\\l"), "%s",
                  b.data);
        cfx_buf_free(&b);
        cfx_graph_module_free(back);
        cfx_graph_module_free(gm);
    }
}

/* The interpreter and generated C hand a token placeholder a token value; anything else is
 * refused with a clear message (with_effects takes only tokens, cfx's rule). */
Test(with_effects, a_token_input_must_be_a_token)
{
    cfx_graph_module *gm = trace((cfx_fnptr)effects_prints, CFX_TRACE_FAKE);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *x = cfx_autorelease(effects_t23(0)), *y = cfx_autorelease(effects_t23(1));
    cfx_value args[3] = {cfx_tensor_value(cfx_token_new()), cfx_tensor_value(x), cfx_tensor_value(y)}, out;
    cr_expect_neq(cfx_graph_module_run(gm, args, 3, &out), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "with_effects: the token argument must be an effect token (a token value), "
                                          "got tensor"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_c(cfx_graph_module_graph(gm), "f", &b), CFX_OK, "%s", cfx_error_message());
    cr_expect(strstr(b.data, "if (a0.kind != CFX_V_TOKEN || !a0.u.t)"), "%s", b.data);
    cr_expect(strstr(b.data, "forward(): argument 'token_1' must be an effect token, not %s"), "%s", b.data);
    cfx_buf_free(&b);
    cfx_scope_end(sc);
    cfx_graph_module_free(gm);
}

/* s with every whole-word `from` replaced by `to` (a malloc'd copy). */
static char *replace_word(const char *s, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to), n = 0;
    char *out = malloc(strlen(s) * (nt > nf ? nt : 1) + 1);
    cr_assert(out);
    for (const char *p = s; *p;) {
        bool start = p == s || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'));
        char e = p[nf];
        if (start && strncmp(p, from, nf) == 0 && !(e == '_' || (e >= 'a' && e <= 'z') || (e >= '0' && e <= '9'))) {
            memcpy(out + n, to, nt);
            n += nt;
            p += nf;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = 0;
    return out;
}

/* The reference: torch.export of the same program (ep.run_decompositions()). After
 * dce cfx's graph is export's but for the placeholders' names (make_fx names them after the
 * parameters with _1: token_1, x_1; export token, x); and the token kind gives export's graph
 * signature: TOKEN for the placeholders and outputs whose val is a token. */
Test(with_effects, same_graph_and_token_signature_as_export)
{
    char *want = effects_block("prints_export", "graph"), *want_sig = effects_block("prints_export", "signature");
    cr_assert(want && want_sig);
    cfx_graph_module *gm = trace((cfx_fnptr)effects_prints, CFX_TRACE_FAKE);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph *g = cfx_graph_module_graph(gm);
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, NULL), CFX_OK);
    char *got = cfx_graph_to_string(g), *a = replace_word(got, "token_1", "token"), *b = replace_word(a, "x_1", "x"),
         *c = replace_word(b, "y_1", "y");
    cr_expect_str_eq(c, want);
    cfx_buf sig;
    cfx_buf_init(&sig);
    cfx_buf_puts(&sig, "\n# inputs\n");
    const cfx_node *out = NULL;
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) == CFX_NODE_OUTPUT)
            out = n;
        if (cfx_node_opcode(n) != CFX_NODE_PLACEHOLDER)
            continue;
        char *name = cfx_node_name_string(n);
        cfx_buf_printf(&sig, "%s: %s\n", name[0] == 't' ? "token" : name[0] == 'x' ? "x" : "y",
                       cfx_node_val(n)->kind == CFX_MVAL_TOKEN ? "TOKEN" : "USER_INPUT");
        free(name);
    }
    cfx_buf_puts(&sig, "\n# outputs\n");
    cr_assert(out && cfx_node_arg(out, 0).kind == CFX_V_TUPLE);
    cfx_value outs = cfx_node_arg(out, 0);
    for (uint32_t i = 0; i < outs.len; i++) {
        const cfx_node *n = outs.u.items[i].u.node;
        char *name = cfx_node_name_string(n);
        cfx_buf_printf(&sig, "%s: %s\n", name, cfx_node_val(n)->kind == CFX_MVAL_TOKEN ? "TOKEN" : "USER_OUTPUT");
        free(name);
    }
    cr_expect_str_eq(sig.data, want_sig);
    cfx_buf_free(&sig);
    free(got);
    free(a);
    free(b);
    free(c);
    free(want);
    free(want_sig);
    cfx_graph_module_free(gm);
}

/* `cfx trace tensor_queue --effect-tokens`: the built-in stateful model functionalized with
 * tokens, as 2.13's make_fx of it under FunctionalTensorMode tokens; its JSON (a HOP argument
 * per with_effects, token vals) prints back the same graph. */
Test(with_effects, cli_effect_tokens)
{
    char *want = effects_block("tensor_queue_tokens", "graph"), *out = NULL, *back = NULL;
    cr_assert(want);
    cr_assert_eq(test_run_command("build/cfx trace tensor_queue --effect-tokens 2>/dev/null", &out), 0, "%s",
                 out ? out : "");
    size_t n = strlen(out);
    if (n && out[n - 1] == '\n')
        out[n - 1] = '\0';
    cr_expect_str_eq(out, want);
    cr_assert_eq(test_run_command("build/cfx trace tensor_queue --effect-tokens --mode fake --format json 2>/dev/null"
                                  " | build/cfx print -",
                                  &back),
                 0, "%s", back ? back : "");
    n = strlen(back);
    if (n && back[n - 1] == '\n')
        back[n - 1] = '\0';
    cr_expect_str_eq(back, want);
    free(out);
    free(back);
    free(want);
}

/* The JSON of a with_effects graph read by tools/interop/cfx_load.py in PyTorch 2.13: the
 * rebuilt torch.fx graph prints as make_fx's (golden `prints`) and runs there too. */
Test(with_effects, json_loads_into_pytorch, .timeout = 120)
{
    char *want = effects_block("prints", "graph"), *out = NULL, path[] = "/tmp/cfx-effects-XXXXXX", cmd[1024];
    cr_assert(want);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cfx_graph_module *gm = trace((cfx_fnptr)effects_prints, CFX_TRACE_FAKE);
    cr_assert(gm, "%s", cfx_error_message());
    cr_assert_eq(cfx_graph_module_to_json_file(gm, path, 0), CFX_OK, "%s", cfx_error_message());
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import sys; sys.path.insert(0, 'tools/interop'); import cfx_load, torch; "
             "gm = cfx_load.load('%s'); print(gm.graph); x = torch.ones(2, 3); "
             "tok, r = gm(torch.tensor([]), x, -2 * x); print(tuple(tok.shape), r.sum().item())\" 2>&1",
             path);
    cr_assert_eq(test_run_command(cmd, &out), 0, "%s", out ? out : "");
    char *tail = strstr(out, "graph():");
    cr_assert(tail, "%s", out);
    cr_expect(strncmp(tail, want, strlen(want)) == 0, "%s", out);
    cr_expect(strstr(tail, "\nmoo\nmoo2\n(0,) 0.0\n"), "%s", out);
    unlink(path);
    free(out);
    free(want);
    cfx_graph_module_free(gm);
}
