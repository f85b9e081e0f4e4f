/* print_cmd.c - `cfx print FILE.json`: a dumped graph in each of its text forms.
 *
 *   cfx print FILE.json [--format graph|code|json|tabular] [-o OUT]
 *
 * graph is str(graph), code is python_code's forward(), tabular is Graph.print_tabular(),
 * json is cfx's canonical dump of the loaded module: with -o OUT.json it is saved as
 * cfx_graph_module_save saves (the weights beside OUT), on stdout the tensors are inline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

static const char print_help[] =
    "usage: cfx print FILE.json [--format graph|code|json|tabular] [-o OUT]\n"
    "\n"
    "Prints a graph written by `cfx trace --format json` (or cfx_graph_module_save); FILE `-`\n"
    "reads the document from stdin (its tensors must then be inline).\n"
    "\n"
    "  --format graph    str(graph), as torch.fx prints it (the default)\n"
    "  --format code     the forward() of python_code\n"
    "  --format json     the canonical JSON dump (with -o: weights saved beside OUT)\n"
    "  --format tabular  Graph.print_tabular(): opcode, name, target, args, kwargs\n"
    "  -o OUT            write to OUT instead of stdout\n"
    "\n"
    "examples:\n"
    "  cfx trace mlp --format json -o mlp.json && cfx print mlp.json --format tabular\n"
    "  cfx print mlp.json --format code -o forward.py\n"
    "  cat mlp.json | cfx print - --format graph\n";

static int usage(FILE *f)
{
    fputs(print_help, f);
    return f == stdout ? 0 : 2;
}

static int write_out(const char *text, const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "cfx: cannot write '%s'\n", path);
        return 1;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && (n == 0 || text[n - 1] == '\n' || fputc('\n', f) != EOF);
    ok = (path ? fclose(f) : fflush(f)) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "cfx: error writing '%s'\n", path ? path : "stdout");
        return 1;
    }
    return 0;
}

static char *render(const cfx_graph_module *gm, const char *format)
{
    const cfx_graph *g = cfx_graph_module_graph(gm);
    if (!strcmp(format, "graph"))
        return cfx_graph_to_string(g);
    if (!strcmp(format, "code"))
        return cfx_graph_python_code_string(g, "self");
    if (!strcmp(format, "json")) {
        char *json = NULL;
        return cfx_graph_module_to_json(gm, 0, &json) == CFX_OK ? json : NULL;
    }
    cfx_buf b;
    cfx_buf_init(&b);
    if (cfx_graph_print_tabular(g, &b) != CFX_OK) {
        cfx_buf_free(&b);
        return NULL;
    }
    return cfx_buf_take(&b);
}

int cfx_cmd_print(int argc, char **argv)
{
    const char *file = NULL, *format = "graph", *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return usage(stdout);
        if (!strcmp(arg, "--format") && val) {
            if (strcmp(val, "graph") && strcmp(val, "code") && strcmp(val, "json") && strcmp(val, "tabular")) {
                fprintf(stderr, "cfx: unknown format '%s' (graph, code, json or tabular)\n", val);
                return 2;
            }
            format = val;
            i++;
        } else if (!strcmp(arg, "-o") && val) {
            out = val;
            i++;
        } else if ((arg[0] != '-' || !strcmp(arg, "-")) && !file) {
            file = arg;
        } else {
            return usage(stderr);
        }
    }
    if (!file)
        return usage(stderr);
    cfx_dispatcher_init();
    cfx_scope scope = cfx_scope_begin();
    int rc = 0;
    cfx_graph_module *gm = cli_load_module(file);
    if (!gm) {
        cli_report_error("cannot load the graph");
        rc = 1;
    } else if (out && !strcmp(format, "json")) {
        if (cfx_graph_module_save(gm, out, 0) != CFX_OK) {
            cli_report_error("cannot save the graph");
            rc = 1;
        }
    } else {
        char *text = render(gm, format);
        if (!text) {
            cli_report_error("cannot print the graph");
            rc = 1;
        } else {
            rc = write_out(text, out);
        }
        free(text);
    }
    cfx_graph_module_free(gm);
    cfx_scope_end(scope);
    return rc;
}
