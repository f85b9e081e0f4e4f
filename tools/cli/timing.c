/* timing.c - `--time` on the long subcommands (trace, opt, run): the wall-clock time of the
 * whole command, from argument parsing to the last byte written, on stderr so that it never
 * mixes with a result written to stdout. */
#include <stdio.h>
#include <time.h>

#include "tools/cli/cli.h"

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_report_time(const char *what, double start)
{
    fprintf(stderr, "cfx: %s took %.3f ms\n", what, (cli_now() - start) * 1e3);
}
