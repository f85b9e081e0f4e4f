/* fuzz_cli.c - libFuzzer target: the driver's argument parsers, in process.
 *
 * The input is split at NUL bytes into argv; a word of one byte below 0x40 is taken from a
 * vocabulary of the driver's commands, options and values (so short inputs reach deep into
 * each parser), any other word is used as is. argv[0] picks the subcommand (cfx_cmd_*, as
 * main.c's table does). Every command must end with a status, never a crash, leak or hang.
 * Kept harmless: the process runs in a fresh temporary directory, stdin and stdout are
 * /dev/null, a word after "-o" is always /dev/null, and words may not start with "-o",
 * "--out" or hold a '/' (so no file outside the directory is written or a plugin loaded). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "tools/cli/cli.h"

static int (*const commands[])(int, char **) = {cfx_cmd_ops, cfx_cmd_models, cfx_cmd_trace,
                                                cfx_cmd_run, cfx_cmd_print, cfx_cmd_opt};
enum { N_COMMANDS = sizeof commands / sizeof commands[0], MAX_ARGS = 16 };

static const char *const vocab[] = {
    "-o", "/dev/null", "-", "-h", "--help", "--list", "--dump", "--dump-table", "--dangling", "--check",
    "--mode", "real", "fake", "--format", "graph", "code", "json", "tabular", "dot", "--dce", "--time",
    "--inputs", "random", "zeros", "--seed", "7", "-1", "99999999999999999999", "--passes=dce,cse",
    "--passes=", "--passes=nope", "--passes", "dce", "mlp", "chain", "cnn", "g.json", "w.safetensors",
    "aten::add.Tensor", "aten::nope", "mlp.json", "--verify", "--print-after=dce", "--max-iterations=2",
    "--", "", "x", "--mode=fake", "--format=json", "--inputs=zeros", "nope.json", "--passes=decompose",
    "transformer", "classifier", "mutate", "tensor_queue", "--dump=aten::relu", "aten::relu", "models", "ops", "0",
};
enum { N_VOCAB = sizeof vocab / sizeof vocab[0] };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char dir[] = "/tmp/cfx-fuzz-cli-XXXXXX";
    if (!mkdtemp(dir) || chdir(dir) != 0 || !freopen("/dev/null", "r", stdin) ||
        !freopen("/dev/null", "w", stdout)) {
        perror("fuzz_cli: setup");
        abort();
    }
    cfx_hop_init();
    if (cfx_pass_register("decompose", "decomposition", cfx_pass_decompose, NULL) != CFX_OK)
        abort();
    /* files the commands can read: a graph and (if run writes it) its weights */
    char *trace[] = {"mlp", "--format", "json", "-o", "mlp.json", NULL};
    char *run[] = {"mlp.json", "-o", "w.safetensors", NULL};
    if (cfx_cmd_trace(5, trace) != 0 || cfx_cmd_run(3, run) != 0)
        abort();
    FILE *f = fopen("g.json", "w");
    if (!f || fputs("{\"nodes\": []}", f) < 0 || fclose(f) != 0)
        abort();
    return 0;
}

static bool forbidden(const char *w)
{
    return !strncmp(w, "-o", 2) || !strncmp(w, "--out", 5) || strchr(w, '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    unsigned cmd = (unsigned char)copy[0] % N_COMMANDS;
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (size_t at = 1; at <= size && argc < MAX_ARGS;) {
        char *w = copy + at;
        size_t len = strlen(w);
        at += len + 1;
        if (len == 1 && (unsigned char)w[0] < 0x40)
            argv[argc] = (char *)vocab[(unsigned char)w[0] % N_VOCAB];
        else if (forbidden(w))
            continue;
        else
            argv[argc] = w;
        if (argc > 0 && !strcmp(argv[argc - 1], "-o"))
            argv[argc] = "/dev/null";
        argc++;
    }
    argv[argc] = NULL;
    /* a "-o" word (from the vocabulary) always has its /dev/null */
    if (argc > 0 && !strcmp(argv[argc - 1], "-o"))
        argv[argc - 1] = "--time";
    commands[cmd](argc, argv);
    cfx_error_clear();
    clearerr(stdout);
    free(copy);
    return 0;
}
