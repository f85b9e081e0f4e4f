/* test_cli.c - `cfx run` and `cfx print` end to end through the driver (CFX_BIN).
 *
 * print --format tabular of a traced model must equal PyTorch 2.13's print_tabular of the
 * model's twin (tests/data/model_<name>.tabular.txt, tools/interop/gen_tabular.py); run must
 * give what the interpreter gives, read inputs from safetensors and write outputs to it; every
 * user error exits 1 with one "cfx: ..." line, bad usage 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfx.h"
#include "tests/test_util.h"

static int run(const char *args, char **out)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    int status = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return status;
}

/* A fresh directory for one test's files. */
static void tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/cfx-cli-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void rmdir_all(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* One line: "cfx: ...\n", nothing else. */
static void expect_one_error_line(const char *out, const char *needle)
{
    cr_expect(!strncmp(out, "cfx: ", 5), "%s", out);
    const char *nl = strchr(out, '\n');
    cr_expect(nl && nl[1] == '\0', "one line expected: %s", out);
    cr_expect(strstr(out, needle), "'%s' not in: %s", needle, out);
}

Test(cli, print_tabular_matches_print_tabular_of_make_fx)
{
    char dir[64], args[512], *out;
    tmpdir(dir, sizeof dir);
    static const char *const models[] = {"mlp", "chain", "mutate"};
    for (int i = 0; i < COUNT_OF(models); i++) {
        snprintf(args, sizeof args, "trace %s --mode fake --format json -o %s/m.json", models[i], dir);
        cr_assert_eq(run(args, &out), 0, "%s", out);
        free(out);
        snprintf(args, sizeof args, "print %s/m.json --format tabular", dir);
        cr_assert_eq(run(args, &out), 0, "%s", out);
        char path[128];
        snprintf(path, sizeof path, "tests/data/model_%s.tabular.txt", models[i]);
        char *want = read_golden(path);
        cr_assert(want, "%s", path);
        size_t wl = strlen(want);
        cr_expect(strlen(out) == wl + 1 && !strncmp(out, want, wl) && out[wl] == '\n', "%s:\n%s\nwant:\n%s",
                  models[i], out, want);
        free(want);
        free(out);
    }
    rmdir_all(dir);
}

Test(cli, print_formats_and_stdin)
{
    char dir[64], args[512], *out, *want;
    tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args, "trace mlp --format json -o %s/mlp.json", dir);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    free(out);
    /* graph and code as `cfx trace` prints them */
    static const char *const formats[] = {"graph", "code"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "trace mlp --format %s", formats[i]);
        cr_assert_eq(run(args, &want), 0);
        snprintf(args, sizeof args, "print - --format %s < %s/mlp.json", formats[i], dir);
        cr_expect_eq(run(args, &out), 0, "%s", out);
        cr_expect_str_eq(out, want, "%s", formats[i]);
        free(out);
        free(want);
    }
    /* json: the canonical dump is the file itself (dump -> load -> dump) */
    snprintf(args, sizeof args, "%s/mlp.json", dir);
    want = read_file(args);
    cr_assert(want);
    snprintf(args, sizeof args, "print %s/mlp.json --format json", dir);
    cr_expect_eq(run(args, &out), 0);
    cr_expect_str_eq(out, want);
    free(out);
    /* -o with json: saved with the weights beside */
    snprintf(args, sizeof args, "print %s/mlp.json --format json -o %s/saved.json", dir, dir);
    cr_expect_eq(run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "%s/saved.safetensors", dir);
    cr_expect_eq(access(args, R_OK), 0, "weights beside the saved document");
    snprintf(args, sizeof args, "print %s/saved.json --format json", dir);
    cr_expect_eq(run(args, &out), 0, "%s", out);
    cr_expect_str_eq(out, want, "saved and reloaded, the canonical dump is unchanged");
    free(out);
    free(want);
    rmdir_all(dir);
}

Test(cli, run_is_deterministic_and_round_trips_safetensors)
{
    char dir[64], args[512], *a, *b;
    tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args, "trace mlp --format json -o %s/mlp.json", dir);
    cr_assert_eq(run(args, &a), 0, "%s", a);
    free(a);
    snprintf(args, sizeof args, "run %s/mlp.json --seed 7", dir);
    cr_assert_eq(run(args, &a), 0, "%s", a);
    cr_assert_eq(run(args, &b), 0, "%s", b);
    cr_expect_str_eq(a, b, "one seed, one result");
    cr_expect(!strncmp(a, "output: shape [4, 4], dtype torch.float32\ntensor([[", 50), "%s", a);
    free(b);
    snprintf(args, sizeof args, "run %s/mlp.json --seed 8", dir);
    cr_assert_eq(run(args, &b), 0, "%s", b);
    cr_expect_str_neq(a, b, "another seed, other inputs");
    free(a);
    free(b);

    /* zeros: the output is the bias path only; write it, feed an input file back */
    snprintf(args, sizeof args, "run %s/mlp.json --inputs zeros -o %s/out.safetensors", dir, dir);
    cr_assert_eq(run(args, &a), 0, "%s", a);
    cr_expect_str_eq(a, "");
    free(a);
    snprintf(args, sizeof args, "%s/out.safetensors", dir);
    cfx_scope s = cfx_scope_begin();
    cfx_safetensors *st = cfx_safetensors_read_file(args);
    cr_assert(st, "%s", cfx_error_message());
    cr_assert_eq(cfx_safetensors_count(st), 1);
    cr_expect_str_eq(cfx_safetensors_name(st, 0), "output");
    cfx_tensor *out = cfx_safetensors_tensor(st, 0);
    cr_expect_eq(out->ndim, 2);
    cr_expect_eq(out->sizes[0], 4);
    cr_expect_eq(out->sizes[1], 4);

    int64_t shape[2] = {4, 8};
    cfx_tensor *x = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    memset(cfx_tensor_data(x), 0, 32 * sizeof(float));
    const char *names[1] = {"x_1"};
    snprintf(args, sizeof args, "%s/x.safetensors", dir);
    cr_assert_eq(cfx_safetensors_write_file(args, names, &x, 1, NULL, 0), CFX_OK);
    snprintf(args, sizeof args, "run %s/mlp.json --inputs %s/x.safetensors -o %s/out2.safetensors", dir, dir, dir);
    cr_assert_eq(run(args, &a), 0, "%s", a);
    free(a);
    snprintf(args, sizeof args, "%s/out2.safetensors", dir);
    cfx_safetensors *st2 = cfx_safetensors_read_file(args);
    cr_assert(st2);
    cr_expect_eq(memcmp(cfx_tensor_data(cfx_safetensors_tensor(st2, 0)), cfx_tensor_data(out), 16 * sizeof(float)),
                 0, "zeros from a file give what --inputs zeros gives");
    cfx_safetensors_free(st2);
    cfx_safetensors_free(st);

    /* a wrong shape, a stray tensor */
    int64_t bad[2] = {4, 7};
    cfx_tensor *y = cfx_tensor_new(bad, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    memset(cfx_tensor_data(y), 0, 28 * sizeof(float));
    snprintf(args, sizeof args, "%s/bad.safetensors", dir);
    cr_assert_eq(cfx_safetensors_write_file(args, names, &y, 1, NULL, 0), CFX_OK);
    snprintf(args, sizeof args, "run %s/mlp.json --inputs %s/bad.safetensors", dir, dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "input 'x_1' is torch.float32 [4, 7] but the placeholder's val is torch.float32 [4, 8]");
    free(a);
    const char *two[2] = {"x_1", "z"};
    cfx_tensor *xs[2] = {x, x};
    snprintf(args, sizeof args, "%s/two.safetensors", dir);
    cr_assert_eq(cfx_safetensors_write_file(args, two, xs, 2, NULL, 0), CFX_OK);
    snprintf(args, sizeof args, "run %s/mlp.json --inputs %s/two.safetensors", dir, dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "tensor 'z' of");
    free(a);
    cfx_scope_end(s);
    rmdir_all(dir);
}

Test(cli, run_prints_tuple_outputs)
{
    char dir[64], args[512], *a;
    tmpdir(dir, sizeof dir);
    /* native_layer_norm's three results, by hand: a graph whose output is a tuple */
    cfx_dispatcher_init();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_meta_val v = {CFX_MVAL_TENSOR, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU), 2,
                      (const int64_t[]){2, 3}, (const int64_t[]){3, 1}, 0, {0}};
    cr_assert_eq(cfx_node_set_val(x, &v), CFX_OK);
    cfx_value items[2] = {cfx_node_value(x), cfx_int(3)};
    cfx_value out = cfx_tuple(items, 2);
    cr_assert(cfx_graph_output(g, out));
    cfx_graph_module *gm = cfx_graph_module_new(g, NULL);
    snprintf(args, sizeof args, "%s/t.json", dir);
    cr_assert_eq(cfx_graph_module_save(gm, args, 0), CFX_OK, "%s", cfx_error_message());
    cfx_graph_module_free(gm);
    snprintf(args, sizeof args, "run %s/t.json --inputs zeros", dir);
    cr_expect_eq(run(args, &a), 0, "%s", a);
    cr_expect_str_eq(a, "output[0]: shape [2, 3], dtype torch.float32\n"
                        "tensor([[0., 0., 0.],\n        [0., 0., 0.]])\n"
                        "output[1]: 3\n");
    free(a);
    snprintf(args, sizeof args, "run %s/t.json -o %s/o.safetensors", dir, dir);
    cr_expect_eq(run(args, &a), 0, "%s", a);
    free(a);
    snprintf(args, sizeof args, "%s/o.safetensors", dir);
    cfx_safetensors *st = cfx_safetensors_read_file(args);
    cr_assert(st);
    cr_expect_str_eq(cfx_safetensors_name(st, 0), "output.0");
    cr_assert_eq(cfx_safetensors_n_metadata(st), 1);
    cr_expect_str_eq(cfx_safetensors_metadata_key(st, 0), "output.1");
    cr_expect_str_eq(cfx_safetensors_metadata_value(st, 0), "3");
    cfx_safetensors_free(st);
    rmdir_all(dir);
}

Test(cli, errors_and_usage)
{
    char dir[64], args[512], *a;
    tmpdir(dir, sizeof dir);
    /* user errors: exit 1, one line */
    snprintf(args, sizeof args, "print %s/missing.json", dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "missing.json");
    free(a);
    snprintf(args, sizeof args, "run %s/missing.json", dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "missing.json");
    free(a);
    cr_expect_eq(run("print - < /dev/null", &a), 1, "%s", a);
    expect_one_error_line(a, "cfx: ");
    free(a);
    snprintf(args, sizeof args, "echo '{\"format\": \"cfx.graph\", \"major\": 1' > %s/trunc.json", dir);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "run %s/trunc.json", dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "cfx: ");
    free(a);
    snprintf(args, sizeof args, "trace mlp --format json -o %s/mlp.json", dir);
    cr_assert_eq(run(args, &a), 0);
    free(a);
    snprintf(args, sizeof args, "run %s/mlp.json --inputs %s/none.safetensors", dir, dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "none.safetensors");
    free(a);
    snprintf(args, sizeof args, "print %s/mlp.json -o %s/no/such/dir.txt", dir, dir);
    cr_expect_eq(run(args, &a), 1, "%s", a);
    expect_one_error_line(a, "cannot write");
    free(a);
    /* bad usage: exit 2 */
    static const char *const bad[] = {"print", "run", "print x.json --format jpeg", "run x.json --seed -1",
                                      "run x.json --seed 12abc", "print a.json b.json", "run x.json --bogus",
                                      "run x.json --inputs"};
    for (int i = 0; i < COUNT_OF(bad); i++) {
        cr_expect_eq(run(bad[i], &a), 2, "%s: %s", bad[i], a);
        free(a);
    }
    /* help: exit 0, with examples */
    cr_expect_eq(run("print --help", &a), 0);
    cr_expect(strstr(a, "usage: cfx print") && strstr(a, "examples:") && strstr(a, "tabular"), "%s", a);
    free(a);
    cr_expect_eq(run("run --help", &a), 0);
    cr_expect(strstr(a, "usage: cfx run") && strstr(a, "examples:") && strstr(a, "--seed"), "%s", a);
    free(a);
    cr_expect_eq(run("--help", &a), 0);
    cr_expect(strstr(a, "  run ") && strstr(a, "  print "), "%s", a);
    free(a);
    rmdir_all(dir);
}
