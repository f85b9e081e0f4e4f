/* test_models.c - the built-in models traced by cfx against PyTorch's make_fx.
 *
 * The goldens (tests/data/model_*.txt) are printed by PyTorch 2.13's make_fx for the PyTorch
 * twins of the models (tools/interop/gen_models.py). Both tracing modes must print the same
 * graph and code, and both fill meta['val'] and meta['tensor_meta'] as make_fx does. The
 * driver is exercised end to end through CFX_BIN. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cfx.h"
#include "ir/graph_module.h"
#include "ir/passes/dce.h"
#include "tools/models/models.h"
#include "tracer/make_fx.h"
#include "tests/json_round_trip.h"
#include "tests/test_util.h"

/* A golden of tests/data without its header line. */
static char *slurp(const char *path)
{
    char *s = read_golden(path);
    cr_assert(s, "cannot open %s (or it has no golden header)", path);
    return s;
}

/* Traces a model (its module in training mode when train); the caller frees the module and
 * ends the scope. */
static cfx_graph_module *trace_as(const char *name, cfx_tracing_mode mode, cfx_module **module, bool train)
{
    const cfx_model *m = cfx_model_find(name);
    cr_assert(m, "no model %s", name);
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n = m->setup(module, args);
    cr_assert_geq(n, 0, "%s", cfx_error_message());
    cfx_module_train(*module, train);
    cfx_make_fx_options opts = {mode, *module, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, args, n, &opts);
    cr_assert(gm, "tracing %s failed: %s", name, cfx_error_message());
    return gm;
}

static cfx_graph_module *trace(const char *name, cfx_tracing_mode mode, cfx_module **module)
{
    return trace_as(name, mode, module, false);
}

/* model_<model><suffix>.{graph,code}.txt; suffix "_train": traced in training mode */
static void expect_golden_as(const char *model, cfx_tracing_mode mode, const char *suffix)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_graph_module *gm = trace_as(model, mode, &module, suffix[0] != '\0');
    char path[256];
    snprintf(path, sizeof path, "tests/data/model_%s%s.graph.txt", model, suffix);
    char *want = slurp(path);
    char *got = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect_str_eq(got, want, "graph of %s (%s mode)", model, mode ? "fake" : "real");
    free(want);
    free(got);
    snprintf(path, sizeof path, "tests/data/model_%s%s.code.txt", model, suffix);
    want = slurp(path);
    got = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
    cr_expect_str_eq(got, want, "code of %s (%s mode)", model, mode ? "fake" : "real");
    free(want);
    free(got);
    expect_module_json_round_trip(gm, path);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}

static void expect_golden(const char *model, cfx_tracing_mode mode) { expect_golden_as(model, mode, ""); }

Test(models, mlp_matches_make_fx) { expect_golden("mlp", CFX_TRACE_REAL); expect_golden("mlp", CFX_TRACE_FAKE); }
Test(models, chain_matches_make_fx) { expect_golden("chain", CFX_TRACE_REAL); expect_golden("chain", CFX_TRACE_FAKE); }
Test(models, mutate_matches_make_fx) { expect_golden("mutate", CFX_TRACE_REAL); expect_golden("mutate", CFX_TRACE_FAKE); }
Test(models, cnn_matches_make_fx) { expect_golden("cnn", CFX_TRACE_REAL); expect_golden("cnn", CFX_TRACE_FAKE); }
Test(models, transformer_matches_make_fx)
{
    expect_golden("transformer", CFX_TRACE_REAL);
    expect_golden("transformer", CFX_TRACE_FAKE);
}
/* `cfx trace --train`: batch norm on batch statistics and dropout's bernoulli_ mask recorded as
 * 2.13's make_fx records the twins in training mode; models without either trace as in eval */
Test(models, train_mode_matches_make_fx)
{
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        expect_golden_as("cnn", (cfx_tracing_mode)mode, "_train");
        expect_golden_as("transformer", (cfx_tracing_mode)mode, "_train");
    }
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_graph_module *gm = trace_as("mlp", CFX_TRACE_FAKE, &module, true);
    char *want = slurp("tests/data/model_mlp.graph.txt"), *got = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect_str_eq(got, want, "mlp has no mode-dependent op");
    cr_expect(cfx_module_training(module));
    free(want);
    free(got);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}

Test(models, classifier_matches_make_fx)
{
    expect_golden("classifier", CFX_TRACE_REAL);
    expect_golden("classifier", CFX_TRACE_FAKE);
}

static char removed[256];

static void on_removed(const cfx_node *n, void *ctx)
{
    (void)ctx;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_node_print_name(n, &b);
    strncat(removed, b.data, sizeof removed - strlen(removed) - 2);
    strcat(removed, " ");
    cfx_buf_free(&b);
}

Test(models, dce_keeps_in_place_ops_and_drops_the_unused_cos)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_graph_module *gm = trace("mutate", CFX_TRACE_FAKE, &module);
    cfx_graph *g = cfx_graph_module_graph(gm);
    removed[0] = '\0';
    bool changed = false;
    cfx_dce_options opts = {.on_removed = on_removed};
    cr_assert_eq(cfx_pass_eliminate_dead_code(g, &opts, &changed), CFX_OK);
    cr_expect(changed);
    cr_expect_str_eq(removed, "cos ");
    cr_expect(cfx_graph_find_node(g, "add__1"), "the input mutation must survive DCE");
    cr_expect(cfx_graph_find_node(g, "add_"));
    cr_expect_null(cfx_graph_find_node(g, "cos"));
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}

Test(models, meta_and_stack_traces)
{
    cfx_scope s = cfx_scope_begin();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_module *module = NULL;
        cfx_graph_module *gm = trace("mlp", (cfx_tracing_mode)mode, &module);
        cfx_node *relu = cfx_graph_find_node(cfx_graph_module_graph(gm), "relu");
        cr_assert(relu);
        cr_expect(cfx_node_val(relu), "make_fx sets meta['val'] in both modes");
        cr_expect(cfx_node_tensor_meta(relu), "make_fx sets meta['tensor_meta']");
        cr_expect_null(cfx_node_stack_trace(relu), "no stack_trace unless asked for (record_stack_traces)");
        cr_expect_eq(cfx_graph_module_get_attr(gm, "_param_constant0"), cfx_module_get(module, "fc1.weight"),
                     "parameters are graph-module attributes, interned as make_fx interns them");
        cfx_graph_module_free(gm);
        cfx_module_free(module);
    }
    /* asked for: every op node records its C call site */
    const cfx_model *m = cfx_model_find("mlp");
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n = m->setup(&module, args);
    cfx_make_fx_options opts = {CFX_TRACE_FAKE, module, NULL, true};
    cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, args, n, &opts);
    cr_assert(gm, "%s", cfx_error_message());
    const cfx_site *site = cfx_node_stack_trace(cfx_graph_find_node(cfx_graph_module_graph(gm), "relu"));
    cr_assert(site && site->file);
    cr_expect(strstr(site->file, "tools/models/mlp.c"), "%s", site->file);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}

static int run(const char *args, char **out)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    int status = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return status;
}

Test(models, driver_traces_and_reports_errors)
{
    char *out;
    cr_expect_eq(run("models", &out), 0);
    cr_expect(strstr(out, "mlp") && strstr(out, "chain") && strstr(out, "mutate"), "%s", out);
    free(out);

    cr_expect_eq(run("trace mlp --mode fake", &out), 0, "%s", out);
    char *want = slurp("tests/data/model_mlp.graph.txt");
    size_t wl = strlen(want);
    cr_expect(strncmp(out, want, wl) == 0 && strcmp(out + wl, "\n") == 0, "%s", out); /* printed with a newline */
    free(want);
    free(out);

    cr_expect_eq(run("trace cnn --train", &out), 0, "%s", out);
    want = slurp("tests/data/model_cnn_train.graph.txt");
    wl = strlen(want);
    cr_expect(strncmp(out, want, wl) == 0 && strcmp(out + wl, "\n") == 0, "%s", out);
    free(want);
    free(out);

    cr_expect_eq(run("trace mutate --dce", &out), 0, "%s", out);
    cr_expect(strstr(out, "cfx: dce removed cos") && !strstr(out, "%cos"), "%s", out);
    free(out);

    cr_expect_eq(run("trace mlp --format json", &out), 0, "%s", out);
    cr_expect(strstr(out, "\"format\"") && strstr(out, "cfx.graph") && strstr(out, "_param_constant0"), "%s", out);
    free(out);

    cr_expect_eq(run("trace nosuchmodel", &out), 1);
    cr_expect(strstr(out, "no built-in model named 'nosuchmodel'"), "%s", out);
    free(out);
    cr_expect_eq(run("trace mlp --mode symbolic", &out), 2);
    free(out);
    cr_expect_eq(run("trace mlp -o /nonexistent/dir/x.json", &out), 1);
    cr_expect(strstr(out, "cannot write"), "%s", out);
    free(out);
}

/* A stateful object input: each method call one call_torchbind node (PyTorch 2.13's make_fx
 * under enable_torchbind_tracing, tools/interop/gen_hop.py); dce and cse keep the unused ones. */
Test(models, tensor_queue_matches_make_fx_and_survives_dce_cse)
{
    expect_golden("tensor_queue", CFX_TRACE_REAL);
    expect_golden("tensor_queue", CFX_TRACE_FAKE);
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_graph_module *gm = trace("tensor_queue", CFX_TRACE_REAL, &module);
    bool changed = true;
    cr_assert_eq(cfx_pipeline_run_text("dce,cse", gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    cr_expect_not(changed);
    char *want = slurp("tests/data/model_tensor_queue_dce.graph.txt");
    char *got = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect_str_eq(got, want);
    free(want);
    free(got);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}
