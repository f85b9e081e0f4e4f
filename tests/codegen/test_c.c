/* test_c.c - generated C (codegen/c.c) built against the installed library and run.
 *
 * The library is installed into a scratch prefix (`make install PREFIX=...`, with the build
 * directory of the tests' driver), and for every built-in model the generated function plus a
 * small main (tests/data/codegen_user/main.c) is compiled with `pkg-config --cflags --libs cfx`
 * (and CFX_CC / CFX_USER_CFLAGS / CFX_USER_LIBS, as the API boundary test), run on fresh
 * example inputs, and its outputs must be the interpreter's, byte for byte (the same kernels
 * run: the safetensors files of both are identical). The generated code calls the typed
 * entry points cfx_op_<id> of the built-in table; an operator outside it is called boxed. */
#include <libgen.h>
#include <unistd.h>

#include "tests/codegen/codegen_test_util.h"

static char *c_of(const cfx_graph *g, const char *fn)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_c(g, fn, &b), CFX_OK, "%s", cfx_error_message());
    return cfx_buf_take(&b);
}

static int sh(const char *cmd, char **out)
{
    int st = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return st;
}

/* make install into dir/prefix, from the build directory the tests' driver is in. */
static void install(const char *dir)
{
    char bin[512], cmd[2048], *out;
    snprintf(bin, sizeof bin, "%s", cg_bin());
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s install PREFIX=%s/prefix BUILD=%s "
             ">/dev/null 2>%s/install.log; st=$?; cat %s/install.log; exit $st",
             dir, dirname(bin), dir, dir);
    cr_assert_eq(sh(cmd, &out), 0, "make install failed:\n%s", out);
    free(out);
}

/* Compiles code (the function fn) with the user main against the installed library in dir,
 * runs it on dir/NAME.json and NAME.in.safetensors, and compares its outputs with
 * NAME.want.safetensors byte for byte. */
static void build_and_run(const char *dir, const char *name, const char *fn, const char *code)
{
    const char *cc = getenv("CFX_CC"), *cflags = getenv("CFX_USER_CFLAGS"), *libs = getenv("CFX_USER_LIBS");
    cr_assert(cc && cflags && libs, "CFX_CC / CFX_USER_CFLAGS / CFX_USER_LIBS are not set (make test sets them)");
    char cmd[4096], path[512], *out;
    snprintf(path, sizeof path, "%s/%s.c", dir, name);
    cg_write_text(path, code);
    snprintf(cmd, sizeof cmd,
             "export PKG_CONFIG_PATH=%s/prefix/lib/pkgconfig; %s %s -std=c11 -Wall -Wextra -Werror -DFORWARD=%s "
             "%s/%s.c tests/data/codegen_user/main.c -o %s/%s.user $(pkg-config --cflags cfx) "
             "$(pkg-config --libs cfx) -Wl,-rpath,%s/prefix/lib %s 2>&1",
             dir, cc, cflags, fn, dir, name, dir, name, dir, libs);
    cr_assert_eq(sh(cmd, &out), 0, "%s: the generated C does not build:\n%s\n%s\n%s", name, cmd, out, code);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/%s.user %s/%s.json %s/%s.in.safetensors %s/%s.got.safetensors 2>&1", dir, name,
             dir, name, dir, name, dir, name);
    cr_assert_eq(sh(cmd, &out), 0, "%s: running the generated C failed:\n%s", name, out);
    free(out);
    snprintf(cmd, sizeof cmd, "cmp -s %s/%s.got.safetensors %s/%s.want.safetensors", dir, name, dir, name);
    cr_expect_eq(system(cmd), 0, "%s: the generated C's outputs differ from the interpreter's", name);
}

/* What the models do not exercise: kwargs and defaults, a boxed call (max.dim has two returns)
 * read through getitem, a tuple output, a placeholder with a default. */
static cfx_graph_module *kwargs_graph(void)
{
    cfx_dispatcher_init();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *k = cfx_graph_placeholder_default(g, "k", cfx_int(2));
    (void)k;
    cfx_value a[2] = {cfx_node_value(x), cfx_node_value(x)};
    cfx_kwarg alpha = {"alpha", cfx_int(3)};
    cfx_node *add = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"), a, 2, &alpha, 1);
    cfx_value ma[2] = {cfx_node_value(add), cfx_int(1)};
    cfx_node *mx = cfx_graph_call_op(g, cfx_op_find("aten::max.dim"), ma, 2, NULL, 0);
    cr_assert(add && mx, "%s", cfx_error_message());
    cfx_value gi[2] = {cfx_node_value(mx), cfx_int(1)};
    cfx_node *idx = cfx_graph_call_fn(g, &cfx_fn_getitem, gi, 2, NULL, 0);
    /* a Tensor[] result (boxed) indexed, and a Tensor[] / int[] argument (typed) */
    cfx_value sizes[2] = {cfx_int(1), cfx_int(2)};
    cfx_value sa[2] = {cfx_node_value(add), cfx_list(sizes, 2)};
    cfx_node *sp = cfx_graph_call_op(g, cfx_op_find("aten::split_with_sizes"), sa, 2, NULL, 0);
    cfx_value g0[2] = {cfx_node_value(sp), cfx_int(0)}, g1[2] = {cfx_node_value(sp), cfx_int(1)};
    cfx_node *p0 = cfx_graph_call_fn(g, &cfx_fn_getitem, g0, 2, NULL, 0);
    cfx_node *p1 = cfx_graph_call_fn(g, &cfx_fn_getitem, g1, 2, NULL, 0);
    cfx_value parts[2] = {cfx_node_value(p1), cfx_node_value(p0)};
    cfx_value ca[2] = {cfx_list(parts, 2), cfx_int(0)};
    cfx_node *cat = cfx_graph_call_op(g, cfx_op_find("aten::cat"), ca, 2, NULL, 0);
    cr_assert(sp && cat, "%s", cfx_error_message());
    cfx_value outs[3] = {cfx_node_value(add), cfx_node_value(idx), cfx_node_value(cat)};
    cfx_graph_output(g, cfx_tuple(outs, 3));
    return cfx_graph_module_new(g, "G");
}

Test(codegen_c, every_model_compiles_and_matches_the_interpreter, .timeout = 280)
{
    char dir[64], path[512];
    cg_tmpdir(dir, sizeof dir);
    install(dir);
    for (int i = 0; i < cfx_model_count(); i++) {
        const cfx_model *m = cfx_model_at(i);
        if (cfx_model_has_object_input(m))
            continue; /* script objects have no weights-file or C-API form yet */
        cfx_scope s = cfx_scope_begin();
        cfx_module *module = NULL;
        cfx_graph_module *gm = cg_prepare(m, dir, &module);
        char fn[64];
        snprintf(fn, sizeof fn, "%s_forward", m->name);
        char *code = c_of(cfx_graph_module_graph(gm), fn);
        /* every op of the models is a built-in one: typed calls only, but for the operators with
         * several returns, which the generator calls boxed */
        for (const char *p = code; (p = strstr(p, "cfx_op_call(cfx_op_find(\"")); p++) {
            char name[128];
            const char *q = p + strlen("cfx_op_call(cfx_op_find(\"");
            snprintf(name, sizeof name, "%.*s", (int)strcspn(q, "\""), q);
            const cfx_op *op = cfx_op_find(name);
            cr_expect(op && cfx_op_schema(op)->n_returns > 1, "%s: a boxed call of %s:\n%s", m->name, name, code);
        }
        cr_expect(strstr(code, "cfx_op_"), "%s", code);
        build_and_run(dir, m->name, fn, code);
        free(code);
        cfx_graph_module_free(gm);
        cfx_module_free(module);
        cfx_scope_end(s);
    }
    /* the boxed path, kwargs, defaults and a tuple output, run */
    cfx_scope s = cfx_scope_begin();
    cfx_graph_module *gm = kwargs_graph();
    snprintf(path, sizeof path, "%s/kw.json", dir);
    cr_assert_eq(cfx_graph_module_save(gm, path, 0), CFX_OK, "%s", cfx_error_message());
    static const int64_t shape[2] = {3, 4};
    cfx_tensor *x = cfx_model_example_tensor(shape, 2, 7);
    snprintf(path, sizeof path, "%s/kw.in.safetensors", dir);
    cg_save_tensors(path, &x, 1);
    cfx_value arg = cfx_tensor_value(x), out;
    cr_assert_eq(cfx_graph_module_run(gm, &arg, 1, &out), CFX_OK, "%s", cfx_error_message());
    cfx_tensor *outs[3];
    cr_assert_eq(cg_flatten(out, outs, 3), 3);
    snprintf(path, sizeof path, "%s/kw.want.safetensors", dir);
    cg_save_tensors(path, outs, 3);
    char *code = c_of(cfx_graph_module_graph(gm), "kw_forward");
    build_and_run(dir, "kw", "kw_forward", code);
    free(code);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    cg_rmdir(dir);
}

Test(codegen_c, kwargs_defaults_boxed_calls_and_tuples)
{
    cfx_graph_module *gm = kwargs_graph();
    const cfx_graph *g = cfx_graph_module_graph(gm);
    char *code = c_of(g, "f");
    /* x has no val: it is kept boxed and unboxed where a Tensor is wanted */
    cr_expect(strstr(code, "cfx_tensor *v_add = cfx_op_add_Tensor(CFX_HERE, v_x.u.t, v_x.u.t, cfx_int(INT64_C(3)));"),
              "%s", code);
    cr_expect(strstr(code, "cfx_value a1 = 1 < n_args ? args[1] : cfx_int(INT64_C(2));"), "%s", code);
    cr_expect(strstr(code, "if (n_args < 1 || n_args > 2)"), "%s", code);
    /* max.dim has a result struct: called boxed by name, its tuple indexed */
    cr_expect(strstr(code, "cfx_op_call(cfx_op_find(\"aten::max.dim\"), stack, 3, 3)"), "%s", code);
    cr_expect(strstr(code, "cfx_value v_getitem = v_max_1.u.items[1];"), "%s", code);
    cr_expect(strstr(code, "*out = cfx_tuple(o0, 3);"), "%s", code);
    cr_expect(strstr(code, "cfx_op_call(cfx_op_find(\"aten::split_with_sizes\"), stack, 3, 3)"), "%s", code);
    cr_expect(strstr(code, "cfx_tensor *v_cat = cfx_op_cat(CFX_HERE, (cfx_tensor_list){(cfx_tensor *const[]){"
                           "v_getitem_2.u.t, v_getitem_1.u.t}, 2}, INT64_C(0));"),
              "%s", code);
    free(code);
    cfx_graph_module_free(gm);
}

Test(codegen_c, unsupported_nodes_refused)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value a[2] = {cfx_node_value(x), cfx_int(1)};
    cfx_node *y = cfx_graph_call_fn(g, &cfx_fn_add, a, 2, NULL, 0);
    cfx_graph_output(g, cfx_node_value(y));
    cfx_buf b;
    cfx_buf_init(&b);
    cr_expect_eq(cfx_graph_to_c(g, "f", &b), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "cannot generate C for node 'add': this builtin function has no C form"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_eq(cfx_graph_to_c(g, "not an identifier", &b), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "is not a C identifier"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_buf_free(&b);
    cfx_graph_free(g);
}

Test(codegen_c, driver_format_c)
{
    char dir[64], cmd[1024], *out;
    cg_tmpdir(dir, sizeof dir);
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_graph_module *gm = cg_prepare(cfx_model_find("mlp"), dir, &module);
    snprintf(cmd, sizeof cmd, "%s print %s/mlp.json --format c 2>&1", cg_bin(), dir);
    cr_assert_eq(sh(cmd, &out), 0, "%s", out);
    /* named after the module (MLP): mlp_forward, the same text the library gives */
    char *want = c_of(cfx_graph_module_graph(gm), "mlp_forward");
    cr_expect_str_eq(out, want);
    free(want);
    free(out);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
    cg_rmdir(dir);
}
