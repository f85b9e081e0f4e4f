/* test_fake_tensor_prop.c - refreshing meta by running a graph on fake tensors
 * (ir/passes/fake_tensor_prop.h, FakeTensorProp).
 *
 * The oracle is make_fx itself: a traced graph's val and tensor_meta are what tracing
 * recorded; after they are wiped or corrupted, propagation must write the same thing back
 * (compared in their printed form, the graph's JSON node records). The one difference is
 * FakeTensorProp's: the output node gets a val too. */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "tools/models/models.h"
#include "tests/test_util.h"

/* The JSON node records of g (meta included), one per line, without the output node's. */
static char *node_lines(const cfx_graph *g)
{
    char *json = NULL;
    cr_assert_eq(cfx_graph_to_json(g, CFX_JSON_NO_DATA, &json), CFX_OK, "%s", cfx_error_message());
    cfx_buf b;
    cfx_buf_init(&b);
    for (char *line = strtok(json, "\n"); line; line = strtok(NULL, "\n"))
        if (strstr(line, "{\"name\": ") && strstr(line, "\"op\": ") && !strstr(line, "\"op\": \"output\"")) {
            cfx_buf_puts(&b, line);
            cfx_buf_putc(&b, '\n');
        }
    free(json);
    return cfx_buf_take(&b);
}

static cfx_graph_module *trace(const cfx_model *m, cfx_tracing_mode mode, cfx_module **module, cfx_value *args, int *n)
{
    *n = m->setup(module, args);
    cr_assert_geq(*n, 0);
    cfx_make_fx_options o = {mode, *module, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, args, *n, &o);
    cr_assert(gm, "%s: %s", m->name, cfx_error_message());
    return gm;
}

/* Wipes every node's meta, or gives it wrong val / tensor_meta, by turns. */
static void spoil(cfx_graph *g)
{
    const cfx_node *bare = cfx_graph_output_node(g); /* make_fx gives the output no meta */
    cr_assert(bare && !bare->meta);
    int64_t one = 1;
    cfx_tensor_meta tm = {.ndim = 1, .dtype = CFX_INT64, .memory_format = -1, .shape = &one, .stride = &one};
    cfx_meta_val v = {.kind = CFX_MVAL_INT, .u.i = 42};
    int i = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n), i++) {
        if (n == bare)
            continue;
        if (i % 2 == 0) {
            cr_assert_eq(cfx_node_meta_copy(n, bare), CFX_OK);
            cr_assert_null(cfx_node_val(n));
        } else {
            cr_assert_eq(cfx_node_set_val(n, &v), CFX_OK);
            if (cfx_node_tensor_meta(n))
                cr_assert_eq(cfx_node_set_tensor_meta(n, &tm), CFX_OK);
        }
    }
}

/* Models with a script-object input (tensor_queue): FakeTensorProp stores tensor and number
 * vals only, and a placeholder's val names the object's class rather than holding an object to
 * propagate from, so these two whole-zoo checks skip them. */

Test(fake_tensor_prop, restores_the_traced_meta_of_every_model)
{
    for (int k = 0; k < cfx_model_count(); k++) {
        for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
            const cfx_model *m = cfx_model_at(k);
            if (cfx_model_has_object_input(m))
                continue;
            cfx_scope s = cfx_scope_begin();
            cfx_module *module = NULL;
            cfx_value args[CFX_MODEL_MAX_ARGS];
            int n;
            cfx_graph_module *gm = trace(m, (cfx_tracing_mode)mode, &module, args, &n);
            cfx_graph *g = cfx_graph_module_graph(gm);
            char *want = node_lines(g);
            spoil(g);
            char *spoiled = node_lines(g);
            cr_assert(strcmp(spoiled, want) != 0);
            free(spoiled);

            int64_t live = cfx_tensor_live_count();
            cr_assert_eq(cfx_fake_tensor_prop(g, gm, args, n), CFX_OK, "%s: %s", m->name, cfx_error_message());
            cr_expect_eq(cfx_tensor_live_count(), live, "%s: propagation left tensors behind", m->name);
            char *got = node_lines(g);
            cr_expect_str_eq(got, want, "%s (%s trace)", m->name, mode ? "fake" : "real");
            free(got);
            /* FakeTensorProp gives the output node the returned structure's val */
            const cfx_meta_val *ov = cfx_node_val(cfx_graph_output_node(g));
            cr_expect(ov && ov->kind == CFX_MVAL_TENSOR, "%s: output val", m->name);
            free(want);
            cfx_graph_module_free(gm);
            cfx_module_free(module);
            cfx_scope_end(s);
        }
    }
}

Test(fake_tensor_prop, from_meta_after_a_json_round_trip)
{
    for (int k = 0; k < cfx_model_count(); k++) {
        const cfx_model *m = cfx_model_at(k);
        if (cfx_model_has_object_input(m))
            continue;
        cfx_scope s = cfx_scope_begin();
        cfx_module *module = NULL;
        cfx_value args[CFX_MODEL_MAX_ARGS];
        int n;
        cfx_graph_module *gm = trace(m, CFX_TRACE_FAKE, &module, args, &n);
        char *want = node_lines(cfx_graph_module_graph(gm)), *json = NULL;
        cr_assert_eq(cfx_graph_module_to_json(gm, 0, &json), CFX_OK);
        cfx_graph_module *loaded = cfx_graph_module_from_json(json, strlen(json));
        cr_assert(loaded, "%s", cfx_error_message());
        free(json);
        cfx_graph *g = cfx_graph_module_graph(loaded);
        const cfx_node *bare = cfx_graph_output_node(g);
        for (cfx_node *nd = cfx_graph_first(g); nd; nd = cfx_node_next(nd))
            if (cfx_node_opcode(nd) != CFX_NODE_PLACEHOLDER)
                cr_assert_eq(cfx_node_meta_copy(nd, bare), CFX_OK);
        cr_assert_eq(cfx_fake_tensor_prop_from_meta(g, loaded), CFX_OK, "%s: %s", m->name, cfx_error_message());
        char *got = node_lines(g);
        cr_expect_str_eq(got, want, "%s", m->name);
        free(got);
        free(want);
        cfx_graph_module_free(loaded);
        cfx_graph_module_free(gm);
        cfx_module_free(module);
        cfx_scope_end(s);
    }
}

Test(fake_tensor_prop, new_input_shapes_flow_through)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n;
    cfx_graph_module *gm = trace(cfx_model_find("chain"), CFX_TRACE_FAKE, &module, args, &n);
    cfx_graph *g = cfx_graph_module_graph(gm);
    int64_t shape[3] = {3, 1, 5};
    cfx_value x = cfx_tensor_value(cfx_model_example_tensor(shape, 3, 0));
    cr_assert_eq(cfx_fake_tensor_prop(g, gm, &x, 1), CFX_OK, "%s", cfx_error_message());
    for (cfx_node *nd = cfx_graph_first(g); nd; nd = cfx_node_next(nd)) {
        const cfx_meta_val *v = cfx_node_val(nd);
        const cfx_tensor_meta *tm = cfx_node_tensor_meta(nd);
        cr_assert(v && v->kind == CFX_MVAL_TENSOR && v->n == 3 && v->sizes[2] == 5 && v->strides[0] == 5);
        if (cfx_node_opcode(nd) != CFX_NODE_OUTPUT)
            cr_assert(tm && tm->ndim == 3 && tm->shape[0] == 3 && tm->memory_format == CFX_CONTIGUOUS_FORMAT);
    }
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}

static cfx_tensor *multi_model(cfx_tensor *x)
{
    cfx_max_dim_result m = cfx_max_dim(x, 0);
    return cfx_add(m.values, m.indices);
}

Test(fake_tensor_prop, tuples_and_getitem)
{
    cfx_scope s = cfx_scope_begin();
    int64_t shape[2] = {3, 4};
    cfx_value a = cfx_tensor_value(cfx_model_example_tensor(shape, 2, 0));
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)multi_model, "(Tensor x) -> Tensor", &a, 1, NULL);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph *g = cfx_graph_module_graph(gm);
    char *want = node_lines(g);
    spoil(g);
    cr_assert_eq(cfx_fake_tensor_prop(g, gm, &a, 1), CFX_OK, "%s", cfx_error_message());
    char *got = node_lines(g);
    cr_expect_str_eq(got, want);
    const cfx_meta_val *v = cfx_node_val(cfx_graph_find_node(g, "max_1"));
    cr_expect(v && v->kind == CFX_MVAL_TUPLE && v->n == 2 && v->u.items[1].dtype == CFX_INT64);
    free(got);
    free(want);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

Test(fake_tensor_prop, errors)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n;
    cfx_graph_module *gm = trace(cfx_model_find("mlp"), CFX_TRACE_FAKE, &module, args, &n);
    cfx_graph *g = cfx_graph_module_graph(gm);
    int64_t bad[2] = {4, 7};
    cfx_value x = cfx_tensor_value(cfx_model_example_tensor(bad, 2, 0));
    int64_t live = cfx_tensor_live_count();
    cr_expect_lt(cfx_fake_tensor_prop(g, gm, &x, 1), 0);
    cr_expect_eq(cfx_tensor_live_count(), live);
    const char *msg = cfx_error_message();
    cr_expect(msg && strstr(msg, "\n\nWhile executing %mm : [num_users=1] = call_function[target=torch.ops.aten.mm.default]"),
              "%s", msg);
    cfx_error_clear();
    /* the placeholder was refreshed before the failure */
    cr_expect_eq(cfx_node_val(cfx_graph_find_node(g, "x_1"))->sizes[1], 7);

    cfx_node *ph = cfx_graph_find_node(g, "x_1");
    cr_assert_eq(cfx_node_meta_copy(ph, cfx_graph_output_node(g)), CFX_OK);
    cr_expect_lt(cfx_fake_tensor_prop_from_meta(g, gm), 0);
    cr_expect_str_eq(cfx_error_message(), "cannot propagate from meta: placeholder x_1 has no meta['val']");
    cfx_error_clear();
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}
