/* test_opt.c - `cfx opt` and `cfx trace --passes`, run through the driver binary (CFX_BIN):
 * graphs dumped by `cfx trace --format json` are loaded (from a file with its weights beside it,
 * or from stdin), transformed and written back; exit statuses follow LLVM opt's conventions
 * (0 success, 1 user error with one "cfx: ..." line, 2 bad usage). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfx.h"
#include "tests/test_util.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/cfx-opt-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Runs `sh -c "<command>"` with $CFX for the driver and $D for the temporary directory; stdout
 * and stderr together in *out (or stdout only when merge is false). Returns the exit status. */
static int sh(const char *command, bool merge, char **out)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "CFX='%s' D='%s'; %s%s", bin, dir, command, merge ? " 2>&1" : " 2>/dev/null");
    int status = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return status;
}

static bool one_error_line(const char *out)
{
    const char *nl = strchr(out, '\n');
    return !strncmp(out, "cfx: ", 5) && nl && nl[1] == '\0';
}

static bool exists(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

TestSuite(opt, .init = make_dir, .fini = remove_dir);

Test(opt, runs_a_pipeline_over_a_dumped_graph)
{
    char *out;
    cr_assert_eq(sh("$CFX trace mutate --mode fake --format json -o $D/mutate.json", true, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(sh("$CFX opt $D/mutate.json --passes=cse,dce,topo-sort,verify -o $D/out.json", true, &out), 0, "%s",
                 out);
    cr_expect_str_eq(out, "");
    free(out);
    cr_expect(exists("out.json"));
    /* the result prints without the dead cos; add_ (a mutation) survives */
    cr_assert_eq(sh("$CFX opt $D/out.json --passes=verify --print-after=verify -o /dev/null", true, &out), 0, "%s", out);
    cr_expect(strstr(out, "# *** IR Dump After verify ***\ngraph():\n"), "%s", out);
    cr_expect(!strstr(out, "%cos") && strstr(out, "%add__1"), "%s", out);
    free(out);
    /* stdin to stdout */
    cr_assert_eq(sh("$CFX opt - --passes=dce < $D/mutate.json > $D/piped.json", true, &out), 0, "%s", out);
    free(out);
    char path[128];
    snprintf(path, sizeof path, "%s/piped.json", dir);
    char *json = read_file(path);
    cr_assert(json);
    cr_expect(strstr(json, "\"format\": \"cfx.graph\"") && !strstr(json, "\"cos\""), "%.400s", json);
    free(json);
    /* `-o -` is stdout too; without --passes the graph only round-trips */
    cr_assert_eq(sh("$CFX opt $D/mutate.json -o - | $CFX opt - --print-changed --passes=dce -o /dev/null", true, &out),
                 0, "%s", out);
    cr_expect(strstr(out, "# *** IR Dump At Start ***") && strstr(out, "# *** IR Dump After dce ***"), "%s", out);
    free(out);
}

Test(opt, weights_travel_beside_the_json)
{
    char *out;
    cr_assert_eq(sh("$CFX trace mlp --format json -o $D/mlp.json", true, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(sh("$CFX opt $D/mlp.json --passes=cse -o $D/mlp2.json", true, &out), 0, "%s", out);
    free(out);
    cr_expect(exists("mlp2.safetensors"), "the attributes' data is saved beside the JSON");
    cr_assert_eq(sh("$CFX opt $D/mlp2.json --passes=fake-tensor-prop,dce", false, &out), 0, "%s", out);
    cr_expect(strstr(out, "_param_constant0") && strstr(out, "\"data\""), "inline data on stdout: %.400s", out);
    free(out);
}

Test(opt, instrumentation_flags)
{
    char *out;
    cr_assert_eq(sh("$CFX trace mlp --format json -o $D/mlp.json", true, &out), 0, "%s", out);
    free(out);
    cr_assert_eq(sh("$CFX opt $D/mlp.json --passes=dce,cse --verify-each --print-after-all --time-passes -o /dev/null",
                    true, &out), 0, "%s", out);
    cr_expect(strstr(out, "# *** IR Dump After dce ***") && strstr(out, "# *** IR Dump After cse ***"), "%s", out);
    cr_expect(strstr(out, "... Pass execution timing report ...") && strstr(out, "(verify-each)") &&
              strstr(out, "(100.0%)  Total"), "%s", out);
    free(out);
    cr_assert_eq(sh("$CFX opt $D/mlp.json --passes dce --print-after cse -o /dev/null", true, &out), 0, "%s", out);
    cr_expect_str_eq(out, "", "cse did not run: nothing printed");
    free(out);
}

Test(opt, errors_and_usage)
{
    char *out;
    cr_assert_eq(sh("$CFX trace mlp --format json -o $D/mlp.json", true, &out), 0, "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/mlp.json --passes=dce,nope", true, &out), 1);
    cr_expect(one_error_line(out) && strstr(out, "unknown pass 'nope' in pipeline 'dce,nope' (known passes: dce, cse"),
              "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/mlp.json --passes=dce --print-after=nope", true, &out), 1);
    cr_expect(one_error_line(out) && strstr(out, "unknown pass 'nope' in pipeline"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/missing.json --passes=dce", true, &out), 1);
    cr_expect(one_error_line(out) && strstr(out, "missing.json"), "%s", out);
    free(out);
    cr_expect_eq(sh("echo '{\"format\": ' | $CFX opt - --passes=dce", true, &out), 1);
    cr_expect(one_error_line(out), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/mlp.json -o $D/no/such/dir/x.json", true, &out), 1);
    cr_expect(one_error_line(out), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt", true, &out), 2);
    cr_expect(strstr(out, "usage: cfx opt FILE.json"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/mlp.json --frobnicate", true, &out), 2);
    cr_expect(strstr(out, "unknown option '--frobnicate'"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/mlp.json --passes", true, &out), 2);
    free(out);
    cr_expect_eq(sh("$CFX opt a.json b.json", true, &out), 2);
    free(out);
    cr_expect_eq(sh("$CFX opt --help", true, &out), 0);
    cr_expect(strstr(out, "examples:") && strstr(out, "strip-asserts") && strstr(out, "--time-passes"), "%s", out);
    free(out);
}

Test(opt, trace_runs_passes)
{
    char *out;
    cr_expect_eq(sh("$CFX trace mutate --passes=cse,dce", false, &out), 0);
    cr_expect(strstr(out, "%add__1") && !strstr(out, "%cos"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX trace mutate --dce --passes=verify --print-after-all", true, &out), 0);
    cr_expect(strstr(out, "cfx: dce removed cos") && strstr(out, "# *** IR Dump After verify ***"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX trace mlp --passes=bogus", true, &out), 1);
    cr_expect(one_error_line(out) && strstr(out, "unknown pass 'bogus'"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX trace --help", true, &out), 0);
    cr_expect(strstr(out, "examples:") && strstr(out, "--passes=P1,P2"), "%s", out);
    free(out);
}

/* x @ w.T flattened: aten::linear and aten::flatten.using_ints are CompositeImplicitAutograd. */
static const char linear_json[] =
    "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 1}, \"name\": \"Lin\", \"nodes\": [\n"
    "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": [], \"meta\": {\"val\": "
    "{\"tensor\": {\"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [2, 3], \"stride\": [3, 1], "
    "\"storage_offset\": 0}}}},\n"
    "{\"name\": \"w\", \"op\": \"placeholder\", \"target\": \"w\", \"args\": [], \"kwargs\": [], \"meta\": {\"val\": "
    "{\"tensor\": {\"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [4, 3], \"stride\": [3, 1], "
    "\"storage_offset\": 0}}}},\n"
    "{\"name\": \"linear\", \"op\": \"call_function\", \"target\": {\"op\": \"aten::linear\"}, \"args\": [{\"node\": \"x\"}, "
    "{\"node\": \"w\"}], \"kwargs\": []},\n"
    "{\"name\": \"flatten\", \"op\": \"call_function\", \"target\": {\"op\": \"aten::flatten.using_ints\"}, \"args\": "
    "[{\"node\": \"linear\"}], \"kwargs\": []},\n"
    "{\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", \"args\": [{\"node\": \"flatten\"}], \"kwargs\": []}\n"
    "]}\n";

/* The decompose pass's keep-list from the command line: by overload or by packet, repeatable or
 * comma-separated; an operator nobody registered is a user error naming it. */
Test(opt, decompose_keep_list)
{
    char path[128];
    snprintf(path, sizeof path, "%s/lin.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(linear_json, f);
    fclose(f);
    char *out;
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=decompose | $CFX print -", false, &out), 0);
    cr_expect(strstr(out, "aten.t.default") && strstr(out, "aten.mm.default") && strstr(out, "aten.view.default") &&
              !strstr(out, "linear") && !strstr(out, "flatten"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=fake-tensor-prop,decompose --decompose-keep=aten::linear "
                    "| $CFX print -", false, &out), 0);
    cr_expect(strstr(out, "aten.linear.default") && strstr(out, "aten.view.default") && !strstr(out, "flatten"),
              "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=fake-tensor-prop,decompose --decompose-keep aten::flatten "
                    "--decompose-keep=aten::linear | $CFX print -", false, &out), 0);
    cr_expect(strstr(out, "aten.linear.default") && strstr(out, "aten.flatten.using_ints"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=fake-tensor-prop,decompose --decompose-keep=aten::flatten.using_ints,"
                    "aten::linear | $CFX print -", false, &out), 0);
    cr_expect(strstr(out, "aten.linear.default") && strstr(out, "aten.flatten.using_ints"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=fake-tensor-prop,decompose --decompose-keep=aten::linear.default "
                    "| $CFX print -", false, &out), 0);
    cr_expect(strstr(out, "aten.linear.default") && !strstr(out, "flatten"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=decompose --decompose-keep=aten::lineer", true, &out), 1);
    cr_expect(one_error_line(out) && strstr(out, "cfx: --decompose-keep: unknown operator 'aten::lineer'"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX trace mlp --passes=decompose --decompose-keep=aten::nope.x", true, &out), 1);
    cr_expect(one_error_line(out) && strstr(out, "unknown operator 'aten::nope.x'"), "%s", out);
    free(out);
    cr_expect_eq(sh("$CFX opt $D/lin.json --passes=decompose --decompose-keep", true, &out), 2);
    free(out);
    cr_expect_eq(sh("$CFX opt --help", true, &out), 0);
    cr_expect(strstr(out, "--decompose-keep=OPS"), "%s", out);
    free(out);
}
