/* test_io.c - output errors are never reported as success, and files are replaced atomically.
 *
 * The driver's subcommands writing to /dev/full (ENOSPC at the flush) or to a closed stdout
 * must exit non-zero with a "cfx: error writing stdout" line. The library's writers, made to
 * fail part-way (a file size limit, in a child process), must leave the previous file byte for
 * byte and no temporary beside it; a device path is written in place and never unlinked;
 * every error, NULL arguments included, records a message. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfx.h"
#include "tests/test_util.h"
#include "tools/models/models.h"
#include "tracer/make_fx.h"

/* Runs the driver with args and a shell redirection of its stdout; exit status, *out = stderr. */
static int run_redirected(const char *args, const char *redirect, char **out)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1 %s", bin, args, redirect);
    int status = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return status;
}

/* The graph file the print and opt commands read. */
static void make_input(void)
{
    char *out;
    cr_assert_eq(run_redirected("trace mlp --format json -o build/test_io_mlp.json", "", &out), 0, "%s", out);
    free(out);
}

static const char *const commands[] = {
    "models",
    "ops --list",
    "ops --dump aten::relu",
    "trace chain",
    "trace mlp --format code",
    "trace mlp --format json",
    "trace mutate --mode fake --format graph",
    "print build/test_io_mlp.json",
    "print build/test_io_mlp.json --format tabular",
    "opt build/test_io_mlp.json --passes=dce",
    "--help",
    "trace --help",
};

/* Every command with its stdout redirected so writing fails: non-zero, and it says so. */
static void expect_write_errors(const char *redirect)
{
    make_input();
    for (int i = 0; i < COUNT_OF(commands); i++) {
        char *out;
        int st = run_redirected(commands[i], redirect, &out); /* stderr goes to the pipe first */
        cr_expect_neq(st, 0, "cfx %s %s exited 0", commands[i], redirect);
        cr_expect(strstr(out, "cfx: error writing stdout"), "cfx %s %s said: %s", commands[i], redirect, out);
        free(out);
    }
}

Test(io, driver_reports_a_full_device)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no writable /dev/full");
    expect_write_errors("> /dev/full");
}

Test(io, driver_reports_a_closed_stdout) { expect_write_errors(">&-"); }

static cfx_graph_module *example(void)
{
    const cfx_model *m = cfx_model_find("mlp");
    cr_assert(m);
    cfx_scope scope = cfx_scope_begin();
    cfx_value args[CFX_MODEL_MAX_ARGS];
    cfx_module *module = NULL;
    int n = m->setup(&module, args);
    cr_assert_geq(n, 0, "%s", cfx_error_message());
    cfx_make_fx_options opts = {CFX_TRACE_FAKE, module, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, args, n, &opts);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_module_free(module);
    cfx_scope_end(scope);
    return gm;
}

/* The names in dir other than . and .. (at most 8, joined by spaces). */
static int dir_entries(const char *dir, char *names, size_t n)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    int count = 0;
    names[0] = '\0';
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            count++;
            strncat(names, e->d_name, n - strlen(names) - 2);
            strcat(names, " ");
        }
    closedir(d);
    return count;
}

/* In a child limited to `limit` bytes per file: writes the example with `write` and exits 0
 * if it failed with a message, 3 if it succeeded, 4 if it failed silently. */
static int write_limited(int (*write)(const cfx_graph_module *, const char *), const char *path, rlim_t limit)
{
    cfx_graph_module *gm = example(); /* loaded here: Criterion's asserts hang in a child */
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN); /* the write then fails with EFBIG */
        struct rlimit rl = {limit, limit};
        setrlimit(RLIMIT_FSIZE, &rl);
        int rc = write(gm, path);
        const char *msg = cfx_error_message();
        cfx_graph_module_free(gm);
        _exit(rc == CFX_OK ? 3 : msg && *msg ? 0 : 4);
    }
    int st;
    waitpid(pid, &st, 0);
    cfx_graph_module_free(gm);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_json(const cfx_graph_module *gm, const char *path) { return cfx_graph_module_to_json_file(gm, path, 0); }

static int write_weights(const cfx_graph_module *gm, const char *path)
{
    (void)gm;
    float data[256] = {0};
    int64_t size = 256;
    cfx_tensor *t = cfx_tensor_from_floats(data, &size, 1);
    const char *name = "w";
    int rc = cfx_safetensors_write_file(path, &name, &t, 1, NULL, 0);
    cfx_tensor_release(t);
    return rc;
}

static void failed_write_keeps_previous(int (*write)(const cfx_graph_module *, const char *), const char *file)
{
    char dir[64], path[128], names[512];
    snprintf(dir, sizeof dir, "/tmp/cfx-io-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/%s", dir, file);
    static const char previous[] = "the previous contents\n";
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(previous, f);
    fclose(f);
    cr_assert_eq(write_limited(write, path, 100), 0, "the write did not fail with a message");
    char *now = read_file(path);
    cr_expect(now && !strcmp(now, previous), "the previous file changed: %s", now ? now : "(gone)");
    free(now);
    cr_expect_eq(dir_entries(dir, names, sizeof names), 1, "left behind: %s", names);
    /* and without the limit the write replaces it */
    cr_assert_eq(write_limited(write, path, RLIM_INFINITY), 3);
    now = read_file(path);
    cr_expect(now && strcmp(now, previous), "not replaced");
    free(now);
    cr_expect_eq(dir_entries(dir, names, sizeof names), 1, "left behind: %s", names);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(io, failed_json_write_keeps_the_previous_file) { failed_write_keeps_previous(write_json, "g.json"); }

Test(io, failed_safetensors_write_keeps_the_previous_file)
{
    failed_write_keeps_previous(write_weights, "w.safetensors");
}

Test(io, a_device_is_written_in_place_and_never_removed)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("no writable /dev/full");
    cfx_graph_module *gm = example();
    cr_expect_neq(cfx_graph_module_to_json_file(gm, "/dev/full", 0), CFX_OK);
    cr_expect(cfx_error_message() && strstr(cfx_error_message(), "/dev/full"), "%s",
              cfx_error_message() ? cfx_error_message() : "(no message)");
    struct stat st;
    cr_expect(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full is gone");
    cr_expect_eq(cfx_graph_module_to_json_file(gm, "/dev/null", 0), CFX_OK, "%s", cfx_error_message());
    cr_expect(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode), "/dev/null was replaced");
    cfx_graph_module_free(gm);
}

Test(io, null_arguments_record_a_message)
{
    cfx_graph_module *gm = example();
    cfx_error_clear();
    cr_expect_neq(cfx_graph_module_to_json_file(gm, NULL, 0), CFX_OK);
    cr_expect(cfx_error_message(), "NULL path: no message");
    cfx_error_clear();
    cr_expect_neq(cfx_graph_module_to_json_file(NULL, "/tmp/x.json", 0), CFX_OK);
    cr_expect(cfx_error_message(), "NULL module: no message");
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json_file(NULL, "/tmp/x.json", 0), CFX_OK);
    cr_expect(cfx_error_message(), "NULL graph: no message");
    cfx_error_clear();
    cr_expect_neq(cfx_graph_module_save(gm, NULL, 0), CFX_OK);
    cr_expect(cfx_error_message(), "save, NULL path: no message");
    cfx_graph_module_free(gm);
}
