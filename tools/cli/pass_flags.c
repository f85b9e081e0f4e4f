/* pass_flags.c - the pass-manager flags `cfx opt` and `cfx trace` share (LLVM opt's spelling):
 *
 *   --passes=dce,cse      the pipeline (also `--passes dce,cse`)
 *   --verify-each         lint after every pass
 *   --print-after-all     the graph after every pass, on stderr
 *   --print-after=PASS    the graph after PASS (repeatable, or comma-separated)
 *   --print-changed       the graph at the start and after each pass that changed it
 *   --time-passes         wall time per pass, on stderr
 *   --decompose-keep=OPS  operators the decompose pass leaves alone (repeatable, or comma-separated)
 *
 * Pass names (in --passes and --print-after) are checked before any work is done, so a typo
 * costs no load or trace. */
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

/* --decompose-keep's names, copied into one buffer (a process parses one command line). */
enum { MAX_KEEP = 64 };
static const char *keep_names[MAX_KEEP];
static char keep_buf[2048];
static size_t keep_used;
cfx_decompose_options cli_decompose_options = {keep_names, 0};

/* Adds the comma-separated operator names of v to the keep-list: 1, or -1 (message printed)
 * when they do not fit. */
static int add_keep(const char *v)
{
    size_t len = strlen(v);
    if (keep_used + len + 1 > sizeof keep_buf) {
        fprintf(stderr, "cfx: --decompose-keep: too many operators\n");
        return -1;
    }
    char *s = memcpy(keep_buf + keep_used, v, len + 1);
    keep_used += len + 1;
    for (char *save = NULL, *name = strtok_r(s, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (cli_decompose_options.n_keep == MAX_KEEP) {
            fprintf(stderr, "cfx: --decompose-keep: too many operators\n");
            return -1;
        }
        keep_names[cli_decompose_options.n_keep++] = name;
    }
    return 1;
}

/* "--name=value" or "--name value": the value, advancing *i for the second form; NULL if arg
 * is not --name. *missing is set when --name is given without a value. */
static const char *flag_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, n) != 0)
        return NULL;
    if (arg[n] == '=')
        return arg + n + 1;
    if (arg[n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

int cli_parse_pass_flag(int argc, char **argv, int *i, cli_passes *p)
{
    const char *arg = argv[*i];
    bool missing = false;
    const char *v;
    if (!strcmp(arg, "--verify-each"))
        p->opts.verify_each = true;
    else if (!strcmp(arg, "--print-after-all"))
        p->opts.print_after_all = true;
    else if (!strcmp(arg, "--print-changed"))
        p->opts.print_changed = true;
    else if (!strcmp(arg, "--time-passes"))
        p->opts.time_passes = true;
    else if ((v = flag_value(argc, argv, i, "--passes", &missing)))
        p->pipeline = v;
    else if ((v = flag_value(argc, argv, i, "--print-after", &missing))) {
        size_t have = strlen(p->print_after), add = strlen(v);
        if (have + add + 2 > sizeof p->print_after) {
            fprintf(stderr, "cfx: too many --print-after passes\n");
            return -1;
        }
        if (have)
            p->print_after[have++] = ',';
        memcpy(p->print_after + have, v, add + 1);
    } else if ((v = flag_value(argc, argv, i, "--decompose-keep", &missing))) {
        return add_keep(v);
    } else if (missing) {
        fprintf(stderr, "cfx: %s needs a value\n", arg);
        return -1;
    } else
        return 0;
    return 1;
}

void cli_print_pass_flags_help(FILE *f)
{
    fprintf(f, "  --passes=P1,P2,...   run these passes in order (see the list below)\n"
               "  --verify-each        check the graph (lint) after every pass; a failure names the pass\n"
               "  --print-after-all    print the graph (str(graph)) to stderr after every pass\n"
               "  --print-after=P      print the graph after pass P (repeatable, or P1,P2)\n"
               "  --print-changed      print the graph at the start and after each pass that changed it\n"
               "  --time-passes        print a table of wall time per pass to stderr\n"
               "  --decompose-keep=OPS operators decompose leaves alone: aten::foo.overload, or aten::foo\n"
               "                       for every overload (repeatable, or OP1,OP2)\n"
               "\npasses:\n");
    for (int i = 0; i < cfx_pass_count(); i++)
        fprintf(f, "  %-20s %s\n", cfx_pass_name(i), cfx_pass_description(i));
}

cfx_pipeline *cli_parse_pipeline(const cli_passes *p, int *err)
{
    *err = 0;
    if (cli_decompose_options.n_keep) {
        cfx_dispatcher_init();
        if (cfx_decompose_options_check(&cli_decompose_options) != CFX_OK) {
            cli_report_error("bad --decompose-keep");
            *err = 1;
            return NULL;
        }
    }
    if (p->print_after[0]) {
        /* validated by parsing it as a pipeline: same names, same message */
        cfx_pipeline *check = cfx_pipeline_parse(p->print_after);
        if (!check) {
            cli_report_error("bad --print-after");
            *err = 1;
            return NULL;
        }
        cfx_pipeline_free(check);
    }
    if (!p->pipeline)
        return NULL;
    cfx_pipeline *pl = cfx_pipeline_parse(p->pipeline);
    if (!pl) {
        cli_report_error("bad --passes");
        *err = 1;
    }
    return pl;
}

int cli_run_pipeline(const cfx_pipeline *pl, const cli_passes *p, cfx_graph_module *gm)
{
    if (!pl)
        return 0;
    cfx_pipeline_options opts = p->opts;
    opts.print_after = p->print_after[0] ? p->print_after : NULL;
    if (cfx_pipeline_run(pl, gm, &opts, NULL) != CFX_OK) {
        cli_report_error("pass pipeline failed");
        return 1;
    }
    return 0;
}
