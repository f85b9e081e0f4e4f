/* trace_cmd.c - `cfx models` and `cfx trace MODEL`: trace a built-in model with make_fx and
 * print its graph as torch.fx prints it, as FX's Python code, or as cfx's JSON.
 *
 *   cfx trace MODEL [--mode real|fake] [--format graph|code|json] [--dce] [-o FILE]
 *
 * --dce runs dead-code elimination before printing and reports each removed node on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "ir/json.h"
#include "ir/passes/dce.h"
#include "tools/cli/cli.h"
#include "tools/models/models.h"
#include "tracer/make_fx.h"

int cfx_cmd_models(int argc, char **argv)
{
    (void)argv;
    if (argc) {
        fprintf(stderr, "usage: cfx models\n");
        return 2;
    }
    for (int i = 0; i < cfx_model_count(); i++) {
        const cfx_model *m = cfx_model_at(i);
        printf("%-8s %-32s %s\n", m->name, m->signature, m->description);
    }
    return 0;
}

static int trace_usage(void)
{
    fprintf(stderr, "usage: cfx trace MODEL [--mode real|fake] [--format graph|code|json] [--dce] [-o FILE]\n"
                    "  MODEL is one of `cfx models`\n");
    return 2;
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
    cfx_tracing_mode mode;
    const char *format, *out;
    bool dce;
} trace_args;

static int parse_trace_args(int argc, char **argv, trace_args *a)
{
    *a = (trace_args){NULL, CFX_TRACE_REAL, "graph", NULL, false};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--mode") && val) {
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
        } else if (arg[0] != '-' && !a->model) {
            a->model = cfx_model_find(arg);
            if (!a->model) {
                fprintf(stderr, "cfx: no built-in model named '%s' (see: cfx models)\n", arg);
                return 1;
            }
        } else {
            return trace_usage();
        }
    }
    return a->model ? 0 : trace_usage();
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

static int write_text(const char *text, const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "cfx: cannot write '%s'\n", path);
        return 1;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && (n == 0 || text[n - 1] == '\n' || fputc('\n', f) != EOF);
    if (path)
        ok = fclose(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "cfx: error writing '%s'\n", path ? path : "stdout");
        return 1;
    }
    return 0;
}

int cfx_cmd_trace(int argc, char **argv)
{
    trace_args a;
    int rc = parse_trace_args(argc, argv, &a);
    if (rc)
        return rc;
    cfx_dispatcher_init();
    cfx_scope scope = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n = a.model->setup(&module, args);
    cfx_graph_module *gm = NULL;
    if (n >= 0) {
        cfx_make_fx_options opts = {a.mode, module, NULL};
        gm = cfx_make_fx(a.model->forward, a.model->signature, args, n, &opts);
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
    if (gm)
        text = render(gm, a.format);
    rc = 0;
    if (!text) {
        cli_report_error("tracing failed");
        rc = 1;
    } else {
        rc = write_text(text, a.out);
    }
    free(text);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(scope);
    return rc;
}
