/* cli.h - the cfx driver's subcommands.
 *
 * Each subcommand is a function taking the arguments after its name and returning the
 * process exit status: 0 on success, 1 on a user error (message already printed to stderr),
 * 2 on a usage error. */
#ifndef CFX_CLI_H
#define CFX_CLI_H

int cfx_cmd_ops(int argc, char **argv);
int cfx_cmd_models(int argc, char **argv);
int cfx_cmd_trace(int argc, char **argv);
int cfx_cmd_run(int argc, char **argv);
int cfx_cmd_print(int argc, char **argv);

/* Prints "cfx: <message>" for the thread's recorded error (or fallback text) to stderr. */
void cli_report_error(const char *fallback);
/* The graph module of FILE.json (weights beside it) or of stdin for `-`; NULL + error. */
struct cfx_graph_module *cli_load_module(const char *path);

#endif
