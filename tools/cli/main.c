/* main.c - the cfx driver: dispatches to a subcommand.
 *
 *   cfx ops --list | --dump NAME | --dump-table NAME | --dangling | --check
 *   cfx models
 *   cfx trace MODEL [--mode real|fake] [--format graph|code|json] [--dce] [-o FILE]
 *   cfx run FILE.json [--inputs random|zeros|FILE.safetensors] [--seed N] [-o OUT.safetensors]
 *   cfx print FILE.json [--format graph|code|json|tabular] [-o OUT]
 *   cfx opt FILE.json [--passes=P1,P2,...] [-o OUT.json] [pass manager flags]
 */
#include <stdio.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"ops", cfx_cmd_ops, "inspect the operator registry (--list, --dump, --dump-table, --dangling, --check)"},
    {"models", cfx_cmd_models, "list the built-in models"},
    {"trace", cfx_cmd_trace, "trace a built-in model: trace MODEL [--mode real|fake] [--format graph|code|json] [--dce] [-o FILE]"},
    {"run", cfx_cmd_run, "run a graph on inputs: run FILE.json [--inputs random|zeros|FILE.safetensors] [--seed N] [-o OUT]"},
    {"print", cfx_cmd_print, "print a graph: print FILE.json [--format graph|code|json|tabular] [-o OUT]"},
    {"opt", cfx_cmd_opt, "run passes over a graph dumped as JSON: opt FILE.json --passes=dce,cse [-o OUT.json]"},
};

static int usage(FILE *f)
{
    fprintf(f, "usage: cfx <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    return f == stdout ? 0 : 2;
}

void cli_report_error(const char *fallback)
{
    const char *msg = cfx_error_message();
    fprintf(stderr, "cfx: %s\n", msg ? msg : fallback);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
        return usage(stdout);
    /* The tracer's pass sits above ir/, whose pass manager holds only ir's own passes: the
     * driver registers it as any C user would. */
    if (cfx_pass_register("decompose", "CompositeImplicitAutograd operators replaced by their "
                          "decomposition, re-traced as make_fx does", cfx_pass_decompose, NULL) != CFX_OK) {
        cli_report_error("cannot register the decompose pass");
        return 1;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "cfx: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
