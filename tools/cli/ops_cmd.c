/* ops_cmd.c - `cfx ops`: look into the operator registry.
 *
 * The dumps are PyTorch's own formats (torch._C._dispatch_dump and _dispatch_dump_table), so
 * a registration can be compared line by line with what PyTorch prints for the same operator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

static const char ops_usage_line[] = "usage: cfx ops --list | --dump NAME | --dump-table NAME | --dangling | --check\n";

static int ops_usage(void)
{
    fprintf(stderr, "%s  NAME is an operator name such as aten::add.Tensor (cfx ops --help for more)\n",
            ops_usage_line);
    return 2;
}

static int ops_help(void)
{
    fputs(ops_usage_line, stdout);
    fputs("\nLooks into the operator registry. The dumps are PyTorch's own formats, so a registration\n"
          "compares line by line with what PyTorch prints for the same operator.\n"
          "\noptions:\n"
          "  --list             every defined operator's schema\n"
          "  --dump NAME        torch._C._dispatch_dump(NAME): the registrations of an operator\n"
          "  --dump-table NAME  torch._C._dispatch_dump_table(NAME): its computed dispatch table\n"
          "  --dangling         kernels registered for operators nobody defined\n"
          "  --check            the dispatcher's invariant check on every operator\n"
          "\nexamples:\n"
          "  cfx ops --list | grep '^aten::add'\n"
          "  cfx ops --dump aten::add.Tensor\n"
          "  cfx ops --dump-table aten::mm\n",
          stdout);
    return 0;
}

static cfx_op **all_ops(int (*list)(cfx_op **, int), int *n)
{
    *n = list(NULL, 0);
    cfx_op **ops = cfx_calloc((size_t)*n + 1, sizeof *ops);
    if (ops)
        *n = list(ops, *n);
    return ops;
}

static int list_ops(void)
{
    int n;
    cfx_op **ops = all_ops(cfx_op_list, &n);
    if (!ops)
        return 1;
    for (int i = 0; i < n; i++) {
        char *s = cfx_schema_to_string(cfx_op_schema(ops[i]));
        printf("%s\n", s ? s : cfx_op_name(ops[i]));
        cfx_free(s);
    }
    cfx_free(ops);
    return 0;
}

static int dump(const char *name, char *(*dumper)(const cfx_op *))
{
    cfx_op *op = cfx_op_lookup(name);
    if (!op) {
        fprintf(stderr, "cfx: no operator named '%s' (try: cfx ops --list)\n", name);
        return 1;
    }
    char *s = dumper(op);
    if (!s) {
        cli_report_error("out of memory");
        return 1;
    }
    fputs(s, stdout);
    cfx_free(s);
    return 0;
}

static int dangling(void)
{
    int n;
    cfx_op **ops = all_ops(cfx_op_list_dangling, &n);
    if (!ops)
        return 1;
    for (int i = 0; i < n; i++) {
        char *s = cfx_op_dump_state(ops[i]);
        if (s)
            fputs(s, stdout);
        cfx_free(s);
    }
    cfx_free(ops);
    return 0;
}

int cfx_cmd_ops(int argc, char **argv)
{
    if (argc == 1 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")))
        return ops_help();
    cfx_dispatcher_init();
    if (argc == 1 && !strcmp(argv[0], "--list"))
        return list_ops();
    if (argc == 2 && !strcmp(argv[0], "--dump"))
        return dump(argv[1], cfx_op_dump_state);
    if (argc == 2 && !strcmp(argv[0], "--dump-table"))
        return dump(argv[1], cfx_op_dump_computed_table);
    if (argc == 1 && !strcmp(argv[0], "--dangling"))
        return dangling();
    if (argc == 1 && !strcmp(argv[0], "--check")) {
        if (cfx_dispatcher_check_all_invariants() != CFX_OK) {
            cli_report_error("invariant check failed");
            return 1;
        }
        printf("all operators consistent\n");
        return 0;
    }
    return ops_usage();
}
