/* print_cmd.c - `cfx print FILE.json`: a dumped graph in each of its text forms.
 *
 *   cfx print FILE.json|- [--format graph|code|json|tabular|dot|svg|png|python|c] [-o OUT|-]
 *
 * graph is str(graph), code is python_code's forward(), tabular is Graph.print_tabular(),
 * json is cfx's canonical dump of the loaded module: with -o OUT.json it is saved as
 * cfx_graph_module_save saves (the weights beside OUT), on stdout the tensors are inline.
 * dot is codegen's Graphviz text; svg and png pipe it through Graphviz's `dot` program, run
 * without a shell (posix_spawnp) so no file name is ever parsed as a command. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfx.h"
#include "tools/cli/cli.h"

extern char **environ;

static const char print_help[] =
    "usage: cfx print FILE.json|- [--format graph|code|json|tabular|dot|svg|png|python|c] [-o OUT|-]\n"
    "\n"
    "Prints a graph written by `cfx trace --format json` (or cfx_graph_module_save); FILE `-`\n"
    "reads the document from stdin (its tensors must then be inline).\n"
    "\n"
    "  --format graph    str(graph), as torch.fx prints it (the default)\n"
    "  --format code     the forward() of python_code\n"
    "  --format json     the canonical JSON dump (with -o: weights saved beside OUT)\n"
    "  --format tabular  Graph.print_tabular(): opcode, name, target, args, kwargs\n"
    "  --format dot      Graphviz DOT: one box per node (name, target, dtype and shape)\n"
    "  --format svg|png  the DOT rendered by Graphviz's `dot` program (must be installed)\n"
    "  --format python   a standalone PyTorch module (forward as FX's code); with -o OUT.py its\n"
    "                    weights are written beside it as OUT.safetensors\n"
    "  --format c        C source: int <name>_forward(self, args, n_args, out) calling cfx's\n"
    "                    operator API; build it with `pkg-config --cflags --libs cfx`\n"
    "  -o OUT            write to OUT instead of stdout (`-o -` is stdout)\n"
    "\n"
    "examples:\n"
    "  cfx trace mlp --format json -o mlp.json && cfx print mlp.json --format tabular\n"
    "  cfx print mlp.json --format code -o forward.py\n"
    "  cat mlp.json | cfx print - --format graph\n"
    "  cfx print mlp.json --format svg -o mlp.svg\n";

static const char *const formats[] = {"graph", "code", "json", "tabular", "dot", "svg", "png", "python", "c"};

static int usage(FILE *f)
{
    fputs(print_help, f);
    return f == stdout ? 0 : 2;
}

static int write_out(const char *text, const char *path) { return cli_write_text(text, path); }

/* Runs `dot -T<format> [-o out]` with the DOT text on its stdin (its output goes to ours when
 * out is NULL). 0, or 1 with a message: Graphviz missing, or dot failing. */
static int graphviz(const char *dot_text, const char *format, const char *out)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("cfx: pipe");
        return 1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char type[16];
    snprintf(type, sizeof type, "-T%s", format);
    char *argv[] = {"dot", type, out ? "-o" : NULL, (char *)out, NULL};
    pid_t pid;
    fflush(stdout);
    int err = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (err) {
        close(fds[1]);
        if (err == ENOENT)
            fprintf(stderr, "cfx: --format %s needs Graphviz's `dot` program, which is not installed (not found in "
                            "PATH): install Graphviz (e.g. apt-get install graphviz), or write --format dot and "
                            "render it elsewhere\n", format);
        else
            fprintf(stderr, "cfx: cannot run Graphviz's `dot`: %s\n", strerror(err));
        return 1;
    }
    size_t n = strlen(dot_text), done = 0;
    while (done < n) {
        ssize_t w = write(fds[1], dot_text + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* dot exited early: its status says why */
        done += (size_t)w;
    }
    close(fds[1]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "cfx: Graphviz's `dot -T%s` failed\n", format);
        return 1;
    }
    return 0;
}

/* "dir/net.safetensors" for "dir/net.py" (or "dir/net.json"): the weights file beside path. */
static char *weights_path(const char *path)
{
    size_t n = strlen(path);
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (dot && (!slash || dot > slash))
        n = (size_t)(dot - path);
    char *w = cfx_malloc(n + sizeof ".safetensors");
    if (w) {
        memcpy(w, path, n);
        strcpy(w + n, ".safetensors");
    }
    return w;
}

/* The generated module and, with -o, its weights beside it (the module's CPU attributes):
 * the module names the weights by file name, found next to itself. Without -o the module
 * refers to the weights beside the input document, as cfx_graph_module_save named them. */
static char *render_python(const cfx_graph_module *gm, const char *file, const char *out)
{
    const char *ref = out ? out : strcmp(file, "-") ? file : NULL;
    char *weights = ref ? weights_path(ref) : NULL;
    if (ref && !weights)
        return NULL;
    if (out && cfx_graph_module_n_attrs(gm) > 0) {
        int n = cfx_graph_module_n_attrs(gm), k = 0;
        const char **names = cfx_malloc((size_t)n * sizeof *names);
        cfx_tensor **tensors = cfx_malloc((size_t)n * sizeof *tensors);
        for (int i = 0; names && tensors && i < n; i++) {
            cfx_tensor *t = cfx_graph_module_attr(gm, i);
            if (t && t->device.type == CFX_DEVICE_CPU) {
                names[k] = cfx_graph_module_attr_name(gm, i);
                tensors[k++] = t;
            }
        }
        int rc = names && tensors ? cfx_safetensors_write_file(weights, names, tensors, k, NULL, 0)
                                  : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        cfx_free(names);
        cfx_free(tensors);
        if (rc != CFX_OK) {
            cfx_free(weights);
            return NULL;
        }
    }
    const char *base = weights ? strrchr(weights, '/') : NULL;
    cfx_buf b;
    cfx_buf_init(&b);
    int rc = cfx_graph_module_to_python(gm, base ? base + 1 : weights, &b);
    cfx_free(weights);
    if (rc != CFX_OK) {
        cfx_buf_free(&b);
        return NULL;
    }
    return cfx_buf_take(&b);
}

static char *render(const cfx_graph_module *gm, const char *format)
{
    const cfx_graph *g = cfx_graph_module_graph(gm);
    if (!strcmp(format, "graph"))
        return cfx_graph_to_string(g);
    if (!strcmp(format, "code"))
        return cfx_graph_python_code_string(g, "self");
    if (!strcmp(format, "dot") || !strcmp(format, "svg") || !strcmp(format, "png")) {
        cfx_buf b;
        cfx_buf_init(&b);
        if (cfx_graph_to_dot(g, cfx_graph_module_name(gm), &b) != CFX_OK) {
            cfx_buf_free(&b);
            return NULL;
        }
        return cfx_buf_take(&b);
    }
    if (!strcmp(format, "c")) {
        /* <module name>_forward, lower-cased, as a C identifier */
        const char *name = cfx_graph_module_name(gm);
        char fn[128];
        size_t k = 0;
        for (const char *p = name ? name : "graph"; *p && k < sizeof fn - 16; p++)
            fn[k++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
        if (k == 0 || isdigit((unsigned char)fn[0]))
            fn[k++] = 'g';
        strcpy(fn + k, "_forward");
        cfx_buf b;
        cfx_buf_init(&b);
        if (cfx_graph_to_c(g, fn, &b) != CFX_OK) {
            cfx_buf_free(&b);
            return NULL;
        }
        return cfx_buf_take(&b);
    }
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
            size_t k = 0;
            while (k < sizeof formats / sizeof formats[0] && strcmp(val, formats[k]))
                k++;
            if (k == sizeof formats / sizeof formats[0]) {
                fprintf(stderr, "cfx: unknown format '%s' (graph, code, json, tabular, dot, svg, png, python or c)\n",
                        val);
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
    if (out && !strcmp(out, "-"))
        out = NULL;
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
        char *text = !strcmp(format, "python") ? render_python(gm, file, out) : render(gm, format);
        if (!text) {
            cli_report_error("cannot print the graph");
            rc = 1;
        } else if (!strcmp(format, "svg") || !strcmp(format, "png")) {
            rc = graphviz(text, format, out);
        } else {
            rc = write_out(text, out);
        }
        cfx_free(text);
    }
    cfx_graph_module_free(gm);
    cfx_scope_end(scope);
    return rc;
}
