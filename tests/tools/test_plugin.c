/* test_plugin.c - `cfx trace PLUGIN.so[:SYMBOL]` end to end through the driver (CFX_BIN).
 *
 * The example plugin (examples/plugin_mlp.c, built by the Makefile beside the driver) is the
 * zoo's mlp written outside the tree: its traced graph and code must be the built-in mlp's.
 * Broken plugins are compiled here with CFX_CC, one symbol per way of being broken; each must
 * exit 1 with one "cfx: ..." line naming what is wrong. `cfx trace --crossref` passes on every
 * built-in model and catches a plugin whose custom op's Meta kernel lies. */
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_util.h"

static int run(const char *args, char **out)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    int status = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return status;
}

static void build_dir(char *out, size_t n)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", bin);
    snprintf(out, n, "%s", dirname(tmp));
}

static void example_plugin(char *out, size_t n)
{
    char dir[512];
    build_dir(dir, sizeof dir);
    snprintf(out, n, "%s/examples/plugin_mlp.so", dir);
    FILE *f = fopen(out, "rb");
    cr_assert(f, "%s is missing (make test builds the examples)", out);
    fclose(f);
}

static void expect_one_error_line(const char *out, const char *needle)
{
    cr_expect(!strncmp(out, "cfx: ", 5), "%s", out);
    const char *nl = strchr(out, '\n');
    cr_expect(nl && nl[1] == '\0', "one line expected: %s", out);
    cr_expect(strstr(out, needle), "'%s' not in: %s", needle, out);
}

Test(plugin, example_traces_as_the_builtin_mlp)
{
    char so[600], args[1024], *got, *want;
    example_plugin(so, sizeof so);
    static const char *const variants[] = {"--mode fake", "--mode real --format code", "--mode fake --dce -o -"};
    for (int i = 0; i < COUNT_OF(variants); i++) {
        snprintf(args, sizeof args, "trace %s %s", so, variants[i]);
        cr_assert_eq(run(args, &got), 0, "%s", got);
        snprintf(args, sizeof args, "trace mlp %s", variants[i]);
        cr_assert_eq(run(args, &want), 0, "%s", want);
        cr_expect_str_eq(got, want, "%s", variants[i]);
        cr_expect(strstr(got, "mm") && strstr(got, "relu"), "%s", got);
        free(got);
        free(want);
    }
}

Test(plugin, reads_the_shared_object_from_stdin_and_names_a_symbol)
{
    char so[600], args[1400], *got, *want;
    example_plugin(so, sizeof so);
    snprintf(args, sizeof args, "trace - --mode fake --format json < %s", so);
    cr_assert_eq(run(args, &got), 0, "%s", got);
    snprintf(args, sizeof args, "trace %s:cfx_plugin_entry --mode fake --format json", so);
    cr_assert_eq(run(args, &want), 0, "%s", want);
    cr_expect_str_eq(got, want);
    cr_expect(strstr(got, "\"PluginMLP\""), "the class name is the model's: %s", got);
    free(got);
    free(want);
    cr_expect_eq(run("trace - < /dev/null", &got), 1, "%s", got);
    expect_one_error_line(got, "no plugin on stdin");
    free(got);
}

Test(plugin, time_goes_to_stderr)
{
    char so[600], args[1024], *out;
    example_plugin(so, sizeof so);
    snprintf(args, sizeof args, "trace %s --time", so);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "cfx: trace took ") && strstr(out, " ms\n"), "%s", out);
    free(out);
}

/* One object, one symbol per defect (and one good model under another name). */
static const char broken_src[] =
    "#include <cfx.h>\n"
    "static cfx_tensor *fwd(cfx_module *m, cfx_tensor *x, cfx_tensor *y) { (void)m; return cfx_add(x, y); }\n"
    "static const cfx_plugin_tensor xy[] = {{\"x\", 1, {3}}, {\"y\", 1, {3}}};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model cfx_plugin_entry = {CFX_PLUGIN_ABI_VERSION + 1, \"future\"};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model good = {CFX_PLUGIN_ABI_VERSION, \"Good\", \"x + y\",\n"
    "    \"(Tensor x, Tensor y) -> Tensor\", (cfx_fnptr)fwd, NULL, 0, xy, 2};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model unparsable = {CFX_PLUGIN_ABI_VERSION, \"U\", \"\",\n"
    "    \"(Tensor x, Tensor y -> Tensor\", (cfx_fnptr)fwd, NULL, 0, xy, 2};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model no_input = {CFX_PLUGIN_ABI_VERSION, \"N\", \"\",\n"
    "    \"(Tensor x, Tensor z) -> Tensor\", (cfx_fnptr)fwd, NULL, 0, xy, 2};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model scalar_arg = {CFX_PLUGIN_ABI_VERSION, \"S\", \"\",\n"
    "    \"(Tensor x, int n) -> Tensor\", (cfx_fnptr)fwd, NULL, 0, xy, 2};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model no_forward = {CFX_PLUGIN_ABI_VERSION, \"F\", \"\",\n"
    "    \"(Tensor x) -> Tensor\", NULL, NULL, 0, xy, 1};\n"
    "static const cfx_plugin_tensor neg[] = {{\"w\", 1, {-2}}};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model bad_param = {CFX_PLUGIN_ABI_VERSION, \"P\", \"\",\n"
    "    \"(Tensor x, Tensor y) -> Tensor\", (cfx_fnptr)fwd, neg, 1, xy, 2};\n";

static void build_plugin(const char *src, char *so, size_t n, char *dir);

static void build_broken(char *so, size_t n, char *dir) { build_plugin(broken_src, so, n, dir); }

/* src compiled to DIR/broken.so in a fresh DIR (removed by the caller) */
static void build_plugin(const char *src, char *so, size_t n, char *dir)
{
    const char *cc = getenv("CFX_CC"), *cflags = getenv("CFX_USER_CFLAGS");
    cr_assert(cc && cflags, "CFX_CC / CFX_USER_CFLAGS are not set (make test sets them)");
    char bdir[512], cmd[4096];
    build_dir(bdir, sizeof bdir);
    strcpy(dir, "/tmp/cfx-plugin-XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "%s/broken.c", dir);
    FILE *f = fopen(cmd, "w");
    cr_assert(f);
    fputs(src, f);
    fclose(f);
    snprintf(so, n, "%s/broken.so", dir);
    snprintf(cmd, sizeof cmd,
             "%s %s -std=c11 -Wall -Werror -shared -fPIC -I. -I%s/gen $(pkg-config --cflags libffi libcjson) "
             "%s/broken.c -o %s 2>&1",
             cc, cflags, bdir, dir, so);
    char *log;
    cr_assert_eq(test_run_command(cmd, &log), 0, "%s\n%s", cmd, log ? log : "");
    free(log);
}

Test(plugin, every_defect_is_named)
{
    char so[600], dir[64], args[1024], *out;
    build_broken(so, sizeof so, dir);
    static const struct {
        const char *symbol, *needle;
        int status;
    } cases[] = {
        {"", "was built for plugin ABI version 2, this cfx loads version 1", 1},
        {":nope", "has no symbol 'nope'", 1},
        {":unparsable", "bad signature '(Tensor x, Tensor y -> Tensor'", 1},
        {":no_input", "tensor argument 'z' has no example input", 1},
        {":scalar_arg", "argument 'n' is no Tensor and has no default", 1},
        {":no_forward", "model 'F' has no forward function", 1},
        {":bad_param", "parameter 0 of model 'P' has a negative size", 1},
    };
    for (int i = 0; i < COUNT_OF(cases); i++) {
        snprintf(args, sizeof args, "trace %s%s", so, cases[i].symbol);
        cr_expect_eq(run(args, &out), cases[i].status, "%s: %s", cases[i].symbol, out);
        if (strcmp(cases[i].symbol, ":unparsable"))
            expect_one_error_line(out, cases[i].needle);
        else /* the schema parser's text: the signature and a marker under the error */
            cr_expect(!strncmp(out, "cfx: ", 5) && strstr(out, cases[i].needle) && strstr(out, "<--- HERE"), "%s", out);
        free(out);
    }
    snprintf(args, sizeof args, "trace %s:good --mode fake --format code", so);
    cr_expect_eq(run(args, &out), 0, "%s", out);
    cr_expect(strstr(out, "torch.ops.aten.add.Tensor(x_1, y_1)"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
}

Test(plugin, missing_file)
{
    char *out;
    cr_expect_eq(run("trace /nonexistent/model.so", &out), 1, "%s", out);
    expect_one_error_line(out, "cannot load plugin '/nonexistent/model.so': ");
    free(out);
}

/* ---- cfx trace --crossref -------------------------------------------------------------------- */

Test(plugin, crossref_passes_on_every_builtin_model)
{
    static const char *const models[] = {"mlp", "chain", "mutate", "cnn", "classifier", "transformer", "tensor_queue"};
    char args[256], *out;
    for (int i = 0; i < COUNT_OF(models); i++)
        for (int fake = 0; fake < 2; fake++) {
            snprintf(args, sizeof args, "trace %s --crossref%s -o /dev/null", models[i], fake ? " --mode fake" : "");
            cr_expect_eq(run(args, &out), 0, "%s: %s", args, out);
            cr_expect(strstr(out, "op calls agree on fakes and for real"), "%s: %s", args, out);
            free(out);
        }
}

/* A plugin registering a custom op whose Meta kernel lies about strides, and using it. */
static const char liar_src[] =
    "#include <cfx.h>\n"
    "static cfx_tensor *cpu(cfx_tensor *x) {\n"
    "    cfx_tensor *r = cfx_tensor_new(x->sizes, x->ndim, CFX_FLOAT32, x->device);\n"
    "    for (int64_t i = 0; r && i < cfx_tensor_numel(x); i++)\n"
    "        ((float *)cfx_tensor_data(r))[i] = (float)cfx_tensor_get_double(x, i);\n"
    "    return r;\n"
    "}\n"
    "static cfx_tensor *meta(cfx_tensor *x) {\n"
    "    return cfx_tensor_new_strided(x->sizes, (const int64_t[]){1, x->sizes[0]}, 2, CFX_FLOAT32, x->device);\n"
    "}\n"
    "__attribute__((constructor)) static void define_liar(void) {\n"
    "    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, \"plugin_liar\");\n"
    "    cfx_library_def(lib, \"liar(Tensor x) -> Tensor\");\n"
    "    CFX_IMPL(lib, \"liar\", CFX_KEY_CPU, cpu);\n"
    "    CFX_IMPL(lib, \"liar\", CFX_KEY_Meta, meta);\n"
    "}\n"
    "static cfx_tensor *fwd(cfx_module *m, cfx_tensor *x) {\n"
    "    (void)m;\n"
    "    cfx_value s[1] = {cfx_tensor_value(cfx_relu(x))};\n"
    "    return cfx_op_call(cfx_op_find(\"plugin_liar::liar\"), s, 1, 1) == CFX_OK ? cfx_neg(s[0].u.t) : NULL;\n"
    "}\n"
    "static const cfx_plugin_tensor in[] = {{\"x\", 2, {2, 3}}};\n"
    "CFX_PLUGIN_EXPORT const cfx_plugin_model cfx_plugin_entry = {CFX_PLUGIN_ABI_VERSION, \"Liar\", \"\",\n"
    "    \"(Tensor x) -> Tensor\", (cfx_fnptr)fwd, NULL, 0, in, 1};\n";

Test(plugin, crossref_catches_a_lying_meta_kernel)
{
    char so[600], dir[64], args[1024], *out;
    build_plugin(liar_src, so, sizeof so, dir);
    snprintf(args, sizeof args, "trace %s -o /dev/null", so); /* unchecked, the lie goes unnoticed */
    cr_expect_eq(run(args, &out), 0, "%s", out);
    free(out);
    for (int fake = 0; fake < 2; fake++) {
        snprintf(args, sizeof args, "trace %s --crossref%s", so, fake ? " --mode fake" : "");
        cr_expect_eq(run(args, &out), 1, "%s", out);
        cr_expect(!strncmp(out, "cfx: plugin_liar::liar(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)) "
                                "output 0: strides (1, 2) != (3, 1) (mismatch at index 0)\n\nWhile executing %liar : ",
                           strlen("cfx: plugin_liar::liar(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)) "
                                  "output 0: strides (1, 2) != (3, 1) (mismatch at index 0)\n\nWhile executing %liar : ")),
                  "%s", out);
        cr_expect(!strstr(out, "def forward"), "nothing printed on a mismatch: %s", out);
        free(out);
    }
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    cr_expect_eq(system(args), 0);
}
