/* codegen_test_util.h - what the codegen suites share: tracing a built-in model, a scratch
 * directory, the driver, and running a command with its output for the failure message. */
#ifndef CFX_TESTS_CODEGEN_UTIL_H
#define CFX_TESTS_CODEGEN_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/models/models.h"
#include "tests/test_util.h"

/* Traces a built-in model (fake mode: every node gets its `val`). The caller frees the graph
 * module and the module and ends its scope. args receives the example inputs (n in *n_args). */
static inline cfx_graph_module *cg_trace(const cfx_model *m, cfx_module **module, cfx_value *args, int *n_args)
{
    int n = m->setup(module, args);
    cr_assert_geq(n, 0, "%s", cfx_error_message());
    cfx_make_fx_options opts = {CFX_TRACE_FAKE, *module, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, args, n, &opts);
    cr_assert(gm, "tracing %s failed: %s", m->name, cfx_error_message());
    *n_args = n;
    return gm;
}

static inline void cg_tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/cfx-codegen-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static inline void cg_rmdir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static inline void cg_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* The driver the tests were built with (make test sets CFX_BIN). */
static inline const char *cg_bin(void)
{
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    return bin;
}

/* Whether a program is on PATH. */
static inline bool cg_have(const char *prog)
{
    char cmd[256], *out;
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    int st = test_run_command(cmd, &out);
    free(out);
    return st == 0;
}

/* Writes tensors t[0..n) to path as safetensors under the names "0", "1", .... */
static inline void cg_save_tensors(const char *path, cfx_tensor *const *t, int n)
{
    char names_buf[16][12];
    const char *names[16];
    cr_assert_leq(n, 16);
    for (int i = 0; i < n; i++) {
        snprintf(names_buf[i], sizeof names_buf[i], "%d", i);
        names[i] = names_buf[i];
    }
    cr_assert_eq(cfx_safetensors_write_file(path, names, t, n, NULL, 0), CFX_OK, "%s", cfx_error_message());
}

/* The tensors of an output value, flattened (a tensor, or a tuple / list of them); returns n. */
static inline int cg_flatten(cfx_value v, cfx_tensor **out, int cap)
{
    if (v.kind == CFX_V_TENSOR) {
        cr_assert_gt(cap, 0);
        out[0] = v.u.t;
        return 1;
    }
    cr_assert(v.kind == CFX_V_TUPLE || v.kind == CFX_V_LIST, "output of kind %s", cfx_value_kind_name(v.kind));
    int n = 0;
    for (uint32_t i = 0; i < v.len; i++)
        n += cg_flatten(v.u.items[i], out + n, cap - n);
    return n;
}

/* For one built-in model in dir: NAME.json (+ weights, cfx_graph_module_save), NAME.in.safetensors
 * (fresh example inputs) and NAME.want.safetensors (what the interpreter gives on other fresh
 * copies of them: a model may write to its inputs). Returns the traced graph module; the
 * caller frees it and *module and ends the scope it opened. */
static inline cfx_graph_module *cg_prepare(const cfx_model *m, const char *dir, cfx_module **module)
{
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n;
    cfx_graph_module *gm = cg_trace(m, module, args, &n);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", dir, m->name);
    cr_assert_eq(cfx_graph_module_save(gm, path, 0), CFX_OK, "%s", cfx_error_message());

    cfx_module *fresh = NULL;
    cfx_value in[CFX_MODEL_MAX_ARGS];
    cr_assert_eq(m->setup(&fresh, in), n);
    cfx_module_free(fresh);
    cfx_tensor *t[CFX_MODEL_MAX_ARGS];
    for (int i = 0; i < n; i++) {
        cr_assert_eq(in[i].kind, CFX_V_TENSOR, "%s: argument %d is not a tensor", m->name, i);
        t[i] = in[i].u.t;
    }
    snprintf(path, sizeof path, "%s/%s.in.safetensors", dir, m->name);
    cg_save_tensors(path, t, n);

    cr_assert_eq(m->setup(&fresh, in), n);
    cfx_module_free(fresh);
    cfx_value out;
    cr_assert_eq(cfx_graph_module_run(gm, in, n, &out), CFX_OK, "%s: %s", m->name, cfx_error_message());
    cfx_tensor *outs[16];
    int n_out = cg_flatten(out, outs, 16);
    snprintf(path, sizeof path, "%s/%s.want.safetensors", dir, m->name);
    cg_save_tensors(path, outs, n_out);
    return gm;
}

#endif
