/* trace_cmd.c - `cfx models` and `cfx trace MODEL`: trace a built-in model or a plugin with
 * make_fx and print its graph as torch.fx prints it, as FX's Python code, or as cfx's JSON.
 *
 *   cfx trace MODEL|PLUGIN.so[:SYMBOL]|- [--mode real|fake] [--format graph|code|json] [--dce]
 *             [--functionalize] [--crossref-functionalize] [--crossref] [--effect-tokens] [--train]
 *             [--passes=P,...] [--time] [-o FILE|-]
 *
 * MODEL names a built-in model; an argument with a '/' or a ".so" is a plugin (tracer/plugin.h)
 * and `-` reads a plugin's shared object from stdin (copied to a temporary file, since dlopen
 * needs a path, and unlinked once opened).
 *
 * --dce runs dead-code elimination before printing and reports each removed node on stderr; it
 * stays as the alias of a first `dce` pass that names what it removed. --passes runs a pipeline
 * of the pass manager over the traced graph (after --dce), with the flags `cfx opt` takes.
 * --crossref runs the traced graph once more on the example inputs under CrossRefFakeMode
 * (dispatch/opcheck.h): every op on fakes and for real, the first mismatch an error, exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "ir/json.h"
#include "hop/hop.h"
#include "ir/passes/dce.h"
#include "tools/cli/cli.h"
#include "tools/models/models.h"
#include "tracer/make_fx.h"

int cfx_cmd_models(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
        fputs("usage: cfx models\n\nLists the built-in models: name, signature, description. A model of\n"
              "one's own is a plugin (cfx trace --help).\n\nexamples:\n  cfx models\n  cfx trace chain\n",
              stdout);
        return 0;
    }
    if (argc) {
        fprintf(stderr, "usage: cfx models\n");
        return 2;
    }
    /* name and description in aligned columns, the signature (make_fx's schema) below */
    int w = 0;
    for (int i = 0; i < cfx_model_count(); i++) {
        int n = (int)strlen(cfx_model_at(i)->name);
        w = n > w ? n : w;
    }
    for (int i = 0; i < cfx_model_count(); i++) {
        const cfx_model *m = cfx_model_at(i);
        printf("%-*s  %s\n%-*s  %s\n", w, m->name, m->description, w, "", m->signature);
    }
    return 0;
}

static const char trace_usage_line[] =
    "usage: cfx trace MODEL|PLUGIN.so[:SYMBOL]|- [--mode real|fake] [--format graph|code|json] [--dce]\n"
    "                 [--functionalize] [--crossref-functionalize] [--crossref] [--effect-tokens] [--train]\n"
    "                 [--passes=P,...] [--time] [-o FILE|-]\n";

static int trace_usage(void)
{
    fprintf(stderr, "%s  MODEL is one of `cfx models` (cfx trace --help for the options)\n", trace_usage_line);
    return 2;
}

static int trace_help(void)
{
    fputs(trace_usage_line, stdout);
    fputs("\nTraces a built-in model (`cfx models`) or a plugin model (a shared object exporting a\n"
          "cfx_plugin_model, see <cfx/tracer/plugin.h>; `-` reads one from stdin) with make_fx and prints\n"
          "its graph as torch.fx prints it (graph), as FX's Python code (code) or as cfx's JSON (json),\n"
          "to stdout or FILE.\n"
          "\noptions:\n"
          "  --mode real|fake     trace on real tensors (default) or on fake ones\n"
          "  --format F           graph (default), code or json\n"
          "  --dce                dead-code elimination first, naming each removed node on stderr\n"
          "  --functionalize      trace make_fx(torch.func.functionalize(model)): no in-place ops\n"
          "  --crossref-functionalize  functionalize, checking each op's Meta kernel against its result\n"
          "  --effect-tokens      functionalize with effect tokens: effectful ops (call_torchbind, aten::_print)\n"
          "                       become with_effects calls chained by a token, the leading input and output\n"
          "  --crossref           then run the graph on the example inputs, every op both on fakes and for\n"
          "                       real (CrossRefFakeMode); the first mismatch fails with its message\n"
          "  --time               print the time taken on stderr\n"
          "  --train              the model in training mode (batch norm on batch statistics, dropout)\n"
          "  -o FILE              write to FILE instead of stdout (`-o -` is stdout)\n",
          stdout);
    cli_print_pass_flags_help(stdout);
    fputs("\nexamples:\n"
          "  cfx trace mlp\n"
          "  cfx trace mutate --dce --format code\n"
          "  cfx trace mlp --mode fake --passes=cse,dce,topo-sort --print-changed\n"
          "  cfx trace chain --format json --passes=dce --time-passes -o chain.json\n"
          "  cfx trace ./build/examples/plugin_mlp.so --mode fake --time\n"
          "  cfx trace my_models.so:resnet_block --format code -o -\n"
          "  cat plugin_mlp.so | cfx trace - --format json > mlp.json\n",
          stdout);
    return 0;
}

static void report_removed(const cfx_node *n, void *ctx)
{
    (void)ctx;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_node_print_name(n, &b);
    fprintf(stderr, "cfx: dce removed %s\n", b.data ? b.data : "?");
    cfx_buf_free(&b);
}

typedef struct trace_args {
    const cfx_model *model;
    const char *plugin; /* PATH[:SYMBOL] or "-" */
    cfx_tracing_mode mode;
    const char *format, *out;
    bool dce, time;
    cli_passes passes;
    bool functionalize, crossref;
    bool effect_tokens;
    bool crossref_fake; /* --crossref */
    bool train;         /* --train: the module in training mode (nn.Module.train()) */
} trace_args;

static bool is_plugin_spec(const char *arg)
{
    return !strcmp(arg, "-") || (arg[0] != '-' && (strchr(arg, '/') || strstr(arg, ".so")));
}

static int parse_trace_args(int argc, char **argv, trace_args *a)
{
    *a = (trace_args){NULL, NULL, CFX_TRACE_REAL, "graph", NULL, false};
    for (int i = 0; i < argc; i++) {
        int r = cli_parse_pass_flag(argc, argv, &i, &a->passes);
        if (r < 0)
            return trace_usage();
        if (r > 0)
            continue;
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            trace_help();
            return -1;
        } else if (!strcmp(arg, "--mode") && val) {
            if (!strcmp(val, "real"))
                a->mode = CFX_TRACE_REAL;
            else if (!strcmp(val, "fake"))
                a->mode = CFX_TRACE_FAKE;
            else {
                fprintf(stderr, "cfx: unknown tracing mode '%s' (real or fake)\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(arg, "--format") && val) {
            if (strcmp(val, "graph") && strcmp(val, "code") && strcmp(val, "json")) {
                fprintf(stderr, "cfx: unknown format '%s' (graph, code or json)\n", val);
                return 2;
            }
            a->format = val;
            i++;
        } else if (!strcmp(arg, "-o") && val) {
            a->out = val;
            i++;
        } else if (!strcmp(arg, "--dce")) {
            a->dce = true;
        } else if (!strcmp(arg, "--functionalize")) {
            a->functionalize = true;
        } else if (!strcmp(arg, "--effect-tokens")) {
            a->functionalize = a->effect_tokens = true;
        } else if (!strcmp(arg, "--crossref-functionalize")) {
            a->functionalize = a->crossref = true;
        } else if (!strcmp(arg, "--crossref")) {
            a->crossref_fake = true;
        } else if (!strcmp(arg, "--time")) {
            a->time = true;
        } else if (!strcmp(arg, "--train")) {
            a->train = true;
        } else if (!a->model && !a->plugin && is_plugin_spec(arg)) {
            a->plugin = arg;
        } else if (arg[0] != '-' && !a->model && !a->plugin) {
            a->model = cfx_model_find(arg);
            if (!a->model) {
                fprintf(stderr, "cfx: no built-in model named '%s' (see: cfx models)\n", arg);
                return 1;
            }
        } else {
            return trace_usage();
        }
    }
    return a->model || a->plugin ? 0 : trace_usage();
}

/* The shared object on stdin, opened from a temporary copy (unlinked at once: the mapping
 * keeps it alive). */
static cfx_plugin *open_stdin_plugin(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/cfx-plugin-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        cfx_error_set(CFX_ERR, NULL, "cannot create a temporary file for the plugin on stdin");
        return NULL;
    }
    FILE *f = fdopen(fd, "wb");
    char chunk[1 << 16];
    size_t n, total = 0;
    bool ok = f != NULL;
    while (ok && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        ok = fwrite(chunk, 1, n, f) == n;
        total += n;
    }
    ok = ok && !ferror(stdin);
    if (f)
        ok = fclose(f) == 0 && ok;
    else
        close(fd);
    cfx_plugin *p = NULL;
    if (!ok)
        cfx_error_set(CFX_ERR, NULL, "cannot copy the plugin on stdin to '%s'", path);
    else if (!total)
        cfx_error_set(CFX_ERR, NULL, "no plugin on stdin (`cfx trace -` reads a shared object)");
    else
        p = cfx_plugin_open(path);
    unlink(path);
    return p;
}

/* The model to trace: its forward, signature, module and example arguments. */
static int setup_model(const trace_args *a, cfx_plugin **plugin, cfx_module **module, cfx_value *args,
                       cfx_fnptr *forward, const char **signature)
{
    if (a->model) {
        *forward = a->model->forward;
        *signature = a->model->signature;
        int n = a->model->setup(module, args);
        cfx_module_train(*module, a->train);
        return n;
    }
    *plugin = strcmp(a->plugin, "-") ? cfx_plugin_open(a->plugin) : open_stdin_plugin();
    if (!*plugin)
        return -1;
    const cfx_plugin_model *m = cfx_plugin_model_of(*plugin);
    *forward = m->forward;
    *signature = m->signature;
    int n = cfx_plugin_setup(*plugin, module, args, CFX_MODEL_MAX_ARGS);
    cfx_module_train(*module, a->train);
    return n;
}

static char *render(const cfx_graph_module *gm, const char *format)
{
    if (!strcmp(format, "graph"))
        return cfx_graph_to_string(cfx_graph_module_graph(gm));
    if (!strcmp(format, "code"))
        return cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
    char *json = NULL;
    return cfx_graph_module_to_json(gm, 0, &json) == CFX_OK ? json : NULL;
}

/* --crossref: the traced graph run on the example inputs under CrossRefFakeMode, so every op
 * of the trace runs on fakes and for real with the same arguments (opcheck.h). The interpreter
 * adds the node that failed to the message. */
static int hop_passthrough(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n_args,
                           cfx_value *out)
{
    (void)mode, (void)ctx;
    return cfx_hop_call(hop, args, n_args, out); /* the mode is popped: the modes and keys below */
}

/* A higher-order operator reaching a user mode needs a rule for the mode's type (PyTorch's
 * CrossRefFakeMode has none either and raises): the HOPs of the graph pass through unchecked,
 * the operators their implementations call are checked as any other. */
static int let_hops_through(const cfx_graph_module *gm, const cfx_mode *m)
{
    for (cfx_node *n = cfx_graph_first(cfx_graph_module_graph(gm)); n; n = cfx_node_next(n)) {
        const cfx_builtin_fn *fn = cfx_target_info_fn(cfx_node_target_info(n));
        cfx_hop *hop = fn ? cfx_hop_from_target(fn) : NULL;
        if (hop && cfx_hop_py_impl_user_mode(hop, m->vt, hop_passthrough, NULL) != CFX_OK)
            cfx_error_clear(); /* already registered (the graph calls it twice) */
    }
    return CFX_OK;
}

static int run_crossref(const cfx_graph_module *gm, const cfx_value *args, int n)
{
    cfx_mode *m = cfx_crossref_fake_mode_new();
    if (!m)
        return CFX_ERR;
    let_hops_through(gm, m);
    cfx_scope s = cfx_scope_begin();
    int rc = cfx_mode_push(m);
    if (rc == CFX_OK) {
        cfx_value out;
        rc = cfx_graph_module_run(gm, args, n, &out);
        cfx_mode_exit(m);
    }
    cfx_scope_end(s);
    if (rc == CFX_OK)
        fprintf(stderr, "cfx: crossref: %ld op calls agree on fakes and for real\n", cfx_crossref_fake_mode_checked(m));
    cfx_mode_release(m);
    return rc;
}

/* `-o -` is stdout */
static int write_text(const char *text, const char *path)
{
    return cli_write_text(text, path && strcmp(path, "-") ? path : NULL);
}

int cfx_cmd_trace(int argc, char **argv)
{
    trace_args a;
    int rc = parse_trace_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc; /* -1: --help printed */
    cfx_pipeline *pipeline = cli_parse_pipeline(&a.passes, &rc);
    if (rc)
        return rc;
    double start = cli_now();
    cfx_dispatcher_init();
    cfx_scope scope = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_plugin *plugin = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    cfx_fnptr forward = NULL;
    const char *signature = NULL;
    int n = setup_model(&a, &plugin, &module, args, &forward, &signature);
    cfx_graph_module *gm = NULL;
    if (n >= 0) {
        cfx_make_fx_options opts = {a.mode, module, NULL, .functionalize = a.functionalize,
                                    .effect_tokens = a.effect_tokens};
        cfx_crossref_guard cg;
        if (a.crossref)
            cfx_crossref_functionalize_begin(&cg);
        gm = cfx_make_fx(forward, signature, args, n, &opts);
        if (a.crossref)
            cfx_crossref_functionalize_end(&cg);
    }
    char *text = NULL;
    if (gm && a.dce) {
        bool changed;
        cfx_dce_options d = {.on_removed = report_removed};
        if (cfx_pass_eliminate_dead_code(cfx_graph_module_graph(gm), &d, &changed) != CFX_OK) {
            cfx_graph_module_free(gm);
            gm = NULL;
        }
    }
    rc = 0;
    if (gm && a.crossref_fake && run_crossref(gm, args, n) != CFX_OK) {
        cli_report_error("crossref failed");
        rc = 1;
    } else if (gm && cli_run_pipeline(pipeline, &a.passes, gm) != 0)
        rc = 1; /* reported */
    else if (gm)
        text = render(gm, a.format);
    if (!rc && !text) {
        cli_report_error("tracing failed");
        rc = 1;
    } else if (!rc) {
        rc = write_text(text, a.out);
    }
    cfx_pipeline_free(pipeline);
    cfx_free(text);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(scope);
    cfx_plugin_close(plugin); /* last: the graph and tensors may point into the object */
    if (a.time)
        cli_report_time("trace", start);
    return rc;
}
