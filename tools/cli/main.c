/* main.c - the cfx driver: dispatches to a subcommand.
 *
 *   cfx ops --list | --dump NAME | --dump-table NAME | --dangling | --check
 *   cfx models
 *   cfx trace MODEL|PLUGIN.so[:SYMBOL]|- [--mode real|fake] [--format graph|code|json] [--dce] [-o FILE]
 *   cfx run FILE.json [--inputs random|zeros|FILE.safetensors] [--seed N] [-o OUT.safetensors]
 *   cfx print FILE.json [--format graph|code|json|tabular] [-o OUT]
 *   cfx opt FILE.json [--passes=P1,P2,...] [-o OUT.json] [pass manager flags]
 *   cfx help [COMMAND]
 *
 * Every subcommand takes -h / --help (usage, options, examples); `cfx help COMMAND` is the same.
 * The completion script for bash (tools/cli/cfx.bash-completion) reads the command list from
 * `cfx --commands`, so it never goes stale. */
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
    {"trace", cfx_cmd_trace, "trace a built-in model or a plugin: trace MODEL|PLUGIN.so[:SYMBOL]|- [--mode real|fake] [--format graph|code|json] [-o FILE]"},
    {"run", cfx_cmd_run, "run a graph on inputs: run FILE.json [--inputs random|zeros|FILE.safetensors] [--seed N] [-o OUT]"},
    {"print", cfx_cmd_print, "print a graph: print FILE.json [--format graph|code|json|tabular] [-o OUT]"},
    {"opt", cfx_cmd_opt, "run passes over a graph dumped as JSON: opt FILE.json --passes=dce,cse [-o OUT.json]"},
};

enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static int usage(FILE *f)
{
    fprintf(f, "usage: cfx <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
    fputs("  help     help COMMAND: a command's options and examples (same as: cfx COMMAND --help)\n"
          "\nA FILE argument `-` reads stdin and `-o -` writes to stdout; trace, run and opt take --time.\n"
          "Exit status: 0 on success, 1 on a user error (one `cfx: ...` line on stderr), 2 on bad usage.\n"
          "\nexamples:\n"
          "  cfx models\n"
          "  cfx trace mlp --mode fake\n"
          "  cfx trace mlp --format json -o mlp.json && cfx run mlp.json --seed 7\n"
          "  cfx trace ./build/examples/plugin_mlp.so --format code\n"
          "  cfx trace chain --format json | cfx opt - --passes=cse,dce --time | cfx print - --format tabular\n"
          "  cfx ops --dump aten::add.Tensor\n",
          f);
    return f == stdout ? 0 : 2;
}

static int run_command(const char *name, int argc, char **argv)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].run(argc, argv);
    fprintf(stderr, "cfx: unknown command '%s'\n", name);
    return usage(stderr);
}

static int run(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || (!strcmp(argv[1], "help") && argc == 2))
        return usage(stdout);
    if (!strcmp(argv[1], "--commands")) { /* for shell completion: one name per line */
        for (size_t i = 0; i < N_COMMANDS; i++)
            puts(commands[i].name);
        puts("help");
        return 0;
    }
    cfx_hop_init(); /* the HOPs, their passes and built-in classes: graphs calling them load and run */
    /* The tracer's pass sits above ir/, whose pass manager holds only ir's own passes: the
     * driver registers it as any C user would. */
    if (cfx_pass_register("decompose", "CompositeImplicitAutograd operators replaced by their "
                          "decomposition, re-traced as make_fx does (not those of --decompose-keep)", cfx_pass_decompose,
                          &cli_decompose_options) != CFX_OK) {
        cli_report_error("cannot register the decompose pass");
        return 1;
    }
    if (!strcmp(argv[1], "help")) {
        char help[] = "--help";
        char *args[] = {help, NULL};
        return run_command(argv[2], 1, args);
    }
    return run_command(argv[1], argc - 2, argv + 2);
}

int main(int argc, char **argv)
{
    cli_io_init();
    return cli_io_finish(run(argc, argv));
}
