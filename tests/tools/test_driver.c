/* test_driver.c - the driver's own surface (CFX_BIN): help for the driver and for every
 * subcommand, `-` as stdin and `-o -` as stdout across subcommands, --time, and the bash
 * completion script (tools/cli/cfx.bash-completion) run in a real bash. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_util.h"

static const char *bin(void)
{
    const char *b = getenv("CFX_BIN");
    cr_assert(b, "CFX_BIN is not set (make test sets it)");
    return b;
}

/* cmd with every "@" replaced by the driver's path; stdout (and stderr with 2>&1 in cmd). */
static int sh(const char *cmd, char **out)
{
    char full[4096];
    size_t k = 0;
    for (const char *p = cmd; *p && k + 600 < sizeof full; p++)
        k += (size_t)(*p == '@' ? snprintf(full + k, sizeof full - k, "%s", bin()) : (full[k] = *p, 1));
    full[k] = '\0';
    int status = test_run_command(full, out);
    cr_assert(*out, "cannot run %s", full);
    return status;
}

static const char *const commands[] = {"ops", "models", "trace", "run", "print", "opt"};

Test(driver, help_lists_every_command_with_examples)
{
    char *out;
    cr_assert_eq(sh("@ --help", &out), 0, "%s", out);
    for (int i = 0; i < COUNT_OF(commands); i++) {
        char line[32];
        snprintf(line, sizeof line, "\n  %s ", commands[i]);
        cr_expect(strstr(out, line), "%s missing from:\n%s", commands[i], out);
    }
    cr_expect(strstr(out, "examples:\n  cfx "), "%s", out);
    free(out);
    cr_expect_eq(sh("@ 2>&1", &out), 2, "no command is bad usage");
    free(out);
}

Test(driver, every_subcommand_has_help_with_examples)
{
    for (int i = 0; i < COUNT_OF(commands); i++) {
        char cmd[128], *out, *again;
        snprintf(cmd, sizeof cmd, "@ %s --help", commands[i]);
        cr_expect_eq(sh(cmd, &out), 0, "%s: %s", commands[i], out);
        cr_expect(!strncmp(out, "usage: cfx ", 11), "%s: %s", commands[i], out);
        cr_expect(strstr(out, "examples:\n  cfx "), "%s has no examples:\n%s", commands[i], out);
        snprintf(cmd, sizeof cmd, "@ help %s", commands[i]);
        cr_expect_eq(sh(cmd, &again), 0, "%s", again);
        cr_expect_str_eq(again, out, "cfx help %s is cfx %s --help", commands[i], commands[i]);
        free(out);
        free(again);
    }
}

/* One pipeline through every subcommand that reads a file, each reading stdin and writing
 * stdout: trace | opt - -o - | print - -o -, and trace | run - ; run -o - | run --inputs -. */
Test(driver, dash_is_stdin_and_dash_o_dash_is_stdout)
{
    char *out, *want;
    cr_assert_eq(sh("@ trace mlp --format json -o - | @ opt - --passes=dce -o - | @ print - --format code -o -", &out),
                 0, "%s", out);
    cr_assert_eq(sh("@ trace mlp --format code", &want), 0, "%s", want);
    cr_expect_str_eq(out, want);
    free(out);
    free(want);
    cr_assert_eq(sh("@ trace mlp --format json | @ run - --seed 3", &out), 0, "%s", out);
    cr_expect(strstr(out, "output: shape [4, 4], dtype torch.float32"), "%s", out);
    free(out);
    /* the outputs of one run as the inputs of the next: a graph with one placeholder x_1 */
    char dir[] = "/tmp/cfx-driver-XXXXXX", cmd[1024];
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "@ trace chain --format json -o %s/chain.json && "
             "@ run %s/chain.json --seed 1 -o - | python3 -c 'import sys; d=sys.stdin.buffer.read(); "
             "print(len(d) > 8 and b\"\\\"output\\\"\" in d)'",
             dir, dir);
    cr_assert_eq(sh(cmd, &out), 0, "%s", out);
    cr_expect_str_eq(out, "True\n");
    free(out);
    snprintf(cmd, sizeof cmd, "@ run %s/chain.json --inputs - < /dev/null 2>&1", dir);
    cr_expect_eq(sh(cmd, &out), 1, "%s", out);
    cr_expect(!strncmp(out, "cfx: ", 5), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "@ run - --inputs - < %s/chain.json 2>&1", dir);
    cr_expect_eq(sh(cmd, &out), 2, "%s", out);
    cr_expect(strstr(out, "cannot both be read from stdin"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(driver, time_on_long_commands)
{
    char *out;
    cr_assert_eq(sh("@ trace mlp --format json --time 2>/dev/null | @ opt - --passes=cse --time 2>&1 >/dev/null", &out),
                 0, "%s", out);
    cr_expect(!strncmp(out, "cfx: opt took ", 14) && strstr(out, " ms\n"), "%s", out);
    free(out);
    cr_assert_eq(sh("@ trace mlp --format json | @ run - --time 2>&1 >/dev/null", &out), 0, "%s", out);
    cr_expect(!strncmp(out, "cfx: run took ", 14), "%s", out);
    free(out);
    cr_assert_eq(sh("@ trace chain --time 2>&1 >/dev/null", &out), 0, "%s", out);
    cr_expect(!strncmp(out, "cfx: trace took ", 16), "%s", out);
    free(out);
}

/* COMP_WORDS as bash fills them, then the completion function's COMPREPLY, one per line. */
static char *complete(const char *words, int cword)
{
    char cmd[2048], *out;
    snprintf(cmd, sizeof cmd,
             "bash -c 'source tools/cli/cfx.bash-completion && COMP_WORDS=(%s %s) && COMP_CWORD=%d && _cfx && "
             "printf \"%%s\\n\" \"${COMPREPLY[@]}\"'",
             bin(), words, cword);
    cr_assert_eq(test_run_command(cmd, &out), 0, "%s", cmd);
    return out;
}

Test(driver, bash_completion_lists_the_subcommands_and_their_options)
{
    char *out = complete("\"\"", 1);
    for (int i = 0; i < COUNT_OF(commands); i++) {
        char line[32];
        snprintf(line, sizeof line, "%s\n", commands[i]);
        cr_expect(strstr(out, line), "%s missing from the completions:\n%s", commands[i], out);
    }
    cr_expect(strstr(out, "help\n"), "%s", out);
    free(out);
    out = complete("tr", 1);
    cr_expect_str_eq(out, "trace\n");
    free(out);
    out = complete("trace --mo", 2);
    cr_expect_str_eq(out, "--mode\n");
    free(out);
    out = complete("trace --mode f", 3);
    cr_expect_str_eq(out, "fake\n");
    free(out);
    out = complete("trace m", 2);
    cr_expect(strstr(out, "mlp\n") && strstr(out, "mutate\n"), "%s", out);
    free(out);
    out = complete("print x.json --format t", 4);
    cr_expect_str_eq(out, "tabular\n");
    free(out);
}
