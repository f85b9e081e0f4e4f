/* opt_cmd.c - `cfx opt`: run a pipeline of passes over a dumped graph (LLVM's opt for cfx).
 *
 *   cfx opt FILE.json [--passes=dce,cse] [-o OUT.json] [--verify-each] [--print-after-all]
 *           [--print-after=P] [--print-changed] [--time-passes]
 *
 * FILE is a graph module written by `cfx trace --format json`, cfx_graph_module_save or
 * cfx_graph_module_to_json_file; its weights file, if it names one, is read from beside it.
 * `-` reads the document from stdin (which then cannot name a weights file). The result goes to
 * stdout as one JSON document with the attributes' data inline, or with -o to OUT.json with the
 * weights beside it in a safetensors file (cfx_graph_module_save; `-o -` is stdout). Without
 * --passes the graph is only loaded and written back, which converts between the two forms.
 *
 * Exit status: 0 success, 1 user error (unknown pass, unreadable or invalid file, a pass that
 * failed), 2 bad usage. */
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

static const char usage_line[] = "usage: cfx opt FILE.json|- [--passes=P1,P2,...] [--time] [-o OUT.json|-] [options]\n";

static int opt_usage(void)
{
    fputs(usage_line, stderr);
    fputs("(cfx opt --help for the options and passes)\n", stderr);
    return 2;
}

static int opt_help(void)
{
    fputs(usage_line, stdout);
    fputs("\nLoads a graph module dumped as JSON (FILE `-` reads stdin), runs the passes over it in order\n"
          "and writes it back: to stdout as one JSON document, or with -o to OUT.json with its weights\n"
          "beside it in OUT.safetensors (`-o -` is stdout). Dumps and reports go to stderr.\n"
          "\noptions:\n"
          "  -o OUT.json          where to write the result (default: stdout)\n"
          "  --time               print the time taken on stderr\n",
          stdout);
    cli_print_pass_flags_help(stdout);
    fputs("\nexamples:\n"
          "  cfx trace mlp --format json -o mlp.json\n"
          "  cfx opt mlp.json --passes=dce,cse,topo-sort -o mlp.opt.json\n"
          "  cfx trace mutate --format json | cfx opt - --passes=cse,dce --print-changed > mutate.opt.json\n"
          "  cfx opt big.json --passes=cse,dce --verify-each --time-passes -o /dev/null\n",
          stdout);
    return 0;
}

static char *read_stdin(size_t *len)
{
    cfx_buf b;
    cfx_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        cfx_buf_putn(&b, chunk, n);
    if (ferror(stdin) || b.oom) {
        cfx_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    if (!b.data) /* empty input: an empty document, which the loader refuses with its message */
        return cfx_calloc(1, 1);
    return cfx_buf_take(&b);
}

static cfx_graph_module *load(const char *path)
{
    if (strcmp(path, "-") != 0)
        return cfx_graph_module_load(path);
    size_t len = 0;
    char *text = read_stdin(&len);
    if (!text) {
        cfx_error_set(CFX_ERR, NULL, "cannot read stdin");
        return NULL;
    }
    cfx_graph_module *gm = cfx_graph_module_from_json(text, len);
    cfx_free(text);
    return gm;
}

static int write_stdout(const cfx_graph_module *gm)
{
    char *json = NULL;
    if (cfx_graph_module_to_json(gm, 0, &json) != CFX_OK) {
        cli_report_error("cannot write the graph as JSON");
        return 1;
    }
    size_t n = strlen(json);
    bool ok = fwrite(json, 1, n, stdout) == n && fputc('\n', stdout) != EOF && fflush(stdout) == 0;
    cfx_free(json);
    if (!ok) {
        fprintf(stderr, "cfx: error writing stdout\n");
        return 1;
    }
    return 0;
}

int cfx_cmd_opt(int argc, char **argv)
{
    cli_passes passes = {0};
    const char *in = NULL, *out = NULL;
    bool time = false;
    double start = cli_now();
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int r = cli_parse_pass_flag(argc, argv, &i, &passes);
        if (r < 0)
            return opt_usage();
        if (r > 0)
            continue;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return opt_help();
        if (!strcmp(arg, "--time"))
            time = true;
        else if (!strcmp(arg, "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strncmp(arg, "-o", 2) && arg[2])
            out = arg + 2;
        else if ((arg[0] != '-' || !strcmp(arg, "-")) && !in)
            in = arg;
        else {
            if (arg[0] == '-' && strcmp(arg, "-o") != 0)
                fprintf(stderr, "cfx: opt: unknown option '%s'\n", arg);
            else if (!strcmp(arg, "-o"))
                fprintf(stderr, "cfx: opt: -o needs a file name\n");
            else
                fprintf(stderr, "cfx: opt: more than one input file ('%s' and '%s')\n", in, arg);
            return opt_usage();
        }
    }
    if (!in) {
        fprintf(stderr, "cfx: opt: no input file\n");
        return opt_usage();
    }
    int rc;
    cfx_pipeline *pl = cli_parse_pipeline(&passes, &rc);
    if (rc)
        return rc;
    cfx_dispatcher_init();
    cfx_scope scope = cfx_scope_begin();
    cfx_graph_module *gm = load(in);
    if (!gm) {
        cli_report_error("cannot load the graph");
        rc = 1;
    }
    if (!rc)
        rc = cli_run_pipeline(pl, &passes, gm);
    if (!rc) {
        if (!out || !strcmp(out, "-"))
            rc = write_stdout(gm);
        else if (cfx_graph_module_save(gm, out, 0) != CFX_OK) {
            cli_report_error("cannot write the result");
            rc = 1;
        }
    }
    cfx_graph_module_free(gm);
    cfx_pipeline_free(pl);
    cfx_scope_end(scope);
    if (time)
        cli_report_time("opt", start);
    return rc;
}
