/* cli.h - the cfx driver's subcommands.
 *
 * Each subcommand is a function taking the arguments after its name and returning the
 * process exit status: 0 on success, 1 on a user error (message already printed to stderr),
 * 2 on a usage error. */
#ifndef CFX_CLI_H
#define CFX_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/passes/manager.h"
#include "tracer/decompose.h"

int cfx_cmd_ops(int argc, char **argv);
int cfx_cmd_models(int argc, char **argv);
int cfx_cmd_trace(int argc, char **argv);
int cfx_cmd_run(int argc, char **argv);
int cfx_cmd_print(int argc, char **argv);
int cfx_cmd_opt(int argc, char **argv);

/* --passes=P,... and the pass manager's flags (--verify-each, --print-after-all,
 * --print-after=P, --print-changed, --time-passes), shared by opt and trace (pass_flags.c). */
typedef struct cli_passes {
    const char *pipeline; /* NULL: no --passes */
    char print_after[512]; /* --print-after values joined by commas */
    cfx_pipeline_options opts;
} cli_passes;
/* The decompose pass's keep-list (--decompose-keep=OP,...): main.c registers the pass with it
 * as its context, the flags fill it before any pass runs. */
extern cfx_decompose_options cli_decompose_options;
/* Consumes argv[*i] (and its value) if it is one of those flags: 1; not one: 0; a flag with a
 * bad or missing value: -1 (message printed). */
int cli_parse_pass_flag(int argc, char **argv, int *i, cli_passes *p);
/* The flags' lines for a subcommand's --help. */
void cli_print_pass_flags_help(FILE *f);
/* Parses the pipeline up front (unknown pass: message printed, NULL; *err set to 1). */
cfx_pipeline *cli_parse_pipeline(const cli_passes *p, int *err);
/* Runs the parsed pipeline (NULL: nothing to run) over gm: 0, or 1 with the error printed. */
int cli_run_pipeline(const cfx_pipeline *pl, const cli_passes *p, cfx_graph_module *gm);

/* --time: a monotonic clock in seconds, and "cfx: <what> took N ms" on stderr (timing.c). */
double cli_now(void);
void cli_report_time(const char *what, double start);

/* Prints "cfx: <message>" for the thread's recorded error (or fallback text) to stderr. */
void cli_report_error(const char *fallback);
/* The graph module of FILE.json (weights beside it) or of stdin for `-`; NULL + error. */
struct cfx_graph_module *cli_load_module(const char *path);
/* All of stdin, malloc'd and NUL-terminated (*len without the NUL); NULL + error naming what. */
char *cli_read_stdin(size_t *len, const char *what);

/* io.c: re-occupies closed standard descriptors (at start); closes stdout at exit, turning a
 * write error into a message and status 1 (returns rc otherwise); writes text (newline added
 * if missing) to path atomically, or to stdout when path is NULL: 0, or 1 with the message. */
void cli_io_init(void);
int cli_io_finish(int rc);
int cli_write_text(const char *text, const char *path);

#endif
