/* test_effects.c - the effect registry, tokens and aten::_print against PyTorch 2.13
 * (goldens: tests/data/effects.txt, tools/interop/gen_effects.py).
 *
 * The with_effects rewrite itself belongs to the HOP layer (hop/effects.c); without it an
 * effectful op under functionalization with tokens is refused with a message, which is tested
 * here together with everything that does not need it: a token-threading trace of a program
 * without effects, _print traced as an ordinary node, and the registry's answers. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/dispatch/effects_programs.h"
#include "tests/test_util.h"

static cfx_tensor *no_effects(cfx_tensor *x, cfx_tensor *y) { return cfx_cos(cfx_mul(x, y)); }

Test(effects, registry)
{
    cfx_dispatcher_init();
    cr_expect_str_eq(cfx_effect_type_name(CFX_EFFECT_ORDERED), "EffectType.ORDERED");
    cr_expect_eq(cfx_op_effect(cfx_op_find("aten::_print")), CFX_EFFECT_ORDERED);
    cr_expect(cfx_op_has_effects(cfx_op_find("aten::_print")));
    cr_expect_eq(cfx_effect_of_name("call_torchbind"), CFX_EFFECT_ORDERED);
    cr_expect_eq(cfx_op_effect(cfx_op_find("aten::add.Tensor")), CFX_EFFECT_NONE);
    /* an op with aliasing never has effects, even when registered (has_aliasing) */
    cr_assert_eq(cfx_register_effectful_op("aten::add_", CFX_EFFECT_ORDERED), CFX_OK);
    cr_expect_eq(cfx_op_effect(cfx_op_find("aten::add_.Tensor")), CFX_EFFECT_ORDERED);
    cr_expect(!cfx_op_has_effects(cfx_op_find("aten::add_.Tensor")));
    cr_assert_eq(cfx_register_effectful_op("aten::add_", CFX_EFFECT_NONE), CFX_OK);
    cr_expect_eq(cfx_op_effect(cfx_op_find("aten::add_.Tensor")), CFX_EFFECT_NONE);
    cr_expect_neq(cfx_register_effectful_op("aten::add", (cfx_effect_type)7), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "invalid effect type"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_neq(cfx_register_effectful_op(NULL, CFX_EFFECT_ORDERED), CFX_OK);
    cfx_error_clear();
    /* _print has 2.13's schema and tags */
    char *schema = cfx_schema_to_string(cfx_op_schema(cfx_op_find("aten::_print")));
    cr_expect_str_eq(schema, "aten::_print(str s) -> ()");
    free(schema);
    cr_expect(cfx_op_has_tag(cfx_op_find("aten::_print"), CFX_TAG_pt2_compliant_tag));
}

/* with_effects' dense result in 2.13 is (torch.tensor([]), None): the token is float32 [0] */
Test(effects, tokens)
{
    char *want = effects_block("dense", "result");
    cr_assert(want);
    cr_expect(strstr(want, "(0,) torch.float32"), "%s", want);
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *t = cfx_token_new();
    cr_assert(t);
    cr_expect_eq(t->ndim, 1);
    cr_expect_eq(t->sizes[0], 0);
    cr_expect_eq(cfx_tensor_dtype(t), CFX_FLOAT32);
    cr_expect(cfx_tensor_is_token(t));
    cr_expect(cfx_tensor_is_token(cfx_functional_wrap(t)));
    cr_expect(!cfx_tensor_is_token(effects_t23(0)));
    cfx_scope_end(sc);
    free(want);
}

/* Without functionalization _print is an ordinary call_function node, as make_fx records it;
 * having an effect (ORDERED) it is impure, so dce keeps it unused, as 2.13's is_impure does. A
 * custom op gets the same once an effect is registered for it, and loses it again. */
Test(effects, print_traced_plainly)
{
    char *want = effects_block("prints_plain", "graph"), *want_dce = effects_block("prints_plain_dce", "graph");
    cr_assert(want && want_dce);
    cfx_graph_module *gm = effects_trace((cfx_fnptr)effects_prints, CFX_TRACE_REAL, false);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph *g = cfx_graph_module_graph(gm);
    char *got = cfx_graph_to_string(g);
    cr_expect_str_eq(got, want);
    free(got);
    cfx_node *p = cfx_graph_find_node(g, "_print");
    cr_assert(p);
    cr_expect(cfx_node_is_impure(p));
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, NULL), CFX_OK);
    got = cfx_graph_to_string(g);
    cr_expect_str_eq(got, want_dce);
    free(got);
    /* the effect is what makes it impure: without one (registry entry removed) dce drops it */
    cr_assert_eq(cfx_register_effectful_op("aten::_print", CFX_EFFECT_NONE), CFX_OK);
    cr_expect(!cfx_node_is_impure(p));
    cr_assert_eq(cfx_register_effectful_op("aten::_print", CFX_EFFECT_ORDERED), CFX_OK);
    cr_expect(cfx_node_is_impure(p));
    cfx_graph_module_free(gm);
    free(want);
    free(want_dce);
}

/* Token threading with no effectful op: the token goes straight from input to output. */
Test(effects, token_threads_through_a_program_without_effects)
{
    char *want_graph = effects_block("no_effects", "graph"), *want_code = effects_block("no_effects", "code");
    cr_assert(want_graph && want_code);
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = effects_trace((cfx_fnptr)no_effects, mode, true);
        cr_assert(gm, "%s", cfx_error_message());
        char *g = cfx_graph_to_string(cfx_graph_module_graph(gm));
        char *c = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
        cr_expect_str_eq(g, want_graph, "mode %d", mode);
        cr_expect_str_eq(c, want_code, "mode %d", mode);
        free(g);
        free(c);
        cfx_graph_module_free(gm);
        cr_expect_eq(cfx_mode_stack_len(), 0);
    }
    cr_expect_eq(cfx_tensor_live_count(), live0);
    free(want_graph);
    free(want_code);
}

/* An effectful op with tokens on needs the with_effects rewrite (hop/effects.c); without it
 * the trace fails with a message instead of recording the op unordered. */
Test(effects, effectful_op_without_the_hop_layer)
{
    if (cfx_effects_get_handler())
        return; /* the HOP layer is linked: hop's tests cover the rewrite */
    cfx_graph_module *gm = effects_trace((cfx_fnptr)effects_prints, CFX_TRACE_FAKE, true);
    cr_expect_null(gm);
    cr_expect_str_eq(cfx_error_message(), "aten::_print has an effect but with_effects is not available (hop/effects.c)");
    cfx_error_clear();
    cr_expect_eq(cfx_mode_stack_len(), 0);
    /* effect_tokens without functionalize is refused */
    cfx_tensor *x = effects_t23(0);
    cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(x)};
    cfx_make_fx_options o = {CFX_TRACE_REAL, NULL, NULL, false, .effect_tokens = true};
    cr_expect_null(cfx_make_fx((cfx_fnptr)no_effects, "(Tensor x, Tensor y) -> Tensor", args, 2, &o));
    cr_expect_str_eq(cfx_error_message(), "make_fx: effect_tokens needs functionalize");
    cfx_error_clear();
    cfx_tensor_release(x);
}
