/* test_python.c - generated Python (codegen/python.c) and the Python loader
 * (tools/interop/cfx_load.py) run in PyTorch 2.13 and give what cfx's interpreter gives.
 *
 * For every built-in model: the module's forward is the model's FX python_code (the golden
 * PyTorch's make_fx printed, tests/data/model_*.code.txt, indented into the class); the module,
 * run by python3 with the weights file cfx_graph_module_save wrote, and the GraphModule the
 * loader rebuilds from the JSON, both match the interpreter's outputs to 1e-5
 * (tools/interop/check_codegen.py, one python3 for all cases). The driver's `--format python`
 * writes a module with its weights beside it. */
#include "tests/codegen/codegen_test_util.h"

static char *python_of(const cfx_graph_module *gm, const char *weights)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_module_to_python(gm, weights, &b), CFX_OK, "%s", cfx_error_message());
    return cfx_buf_take(&b);
}

/* The golden python_code body, each line indented by 4 more (blank lines dropped). */
static char *golden_in_class(const char *model)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/model_%s.code.txt", model);
    char *code = read_golden(path);
    cr_assert(code, "%s", path);
    cfx_buf b;
    cfx_buf_init(&b);
    for (char *p = code; *p;) {
        char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strspn(p, " ") < len) {
            cfx_buf_puts(&b, "    ");
            cfx_buf_putn(&b, p, len);
            cfx_buf_putc(&b, '\n');
        }
        p += len + (nl != NULL);
    }
    free(code);
    return cfx_buf_take(&b);
}

Test(codegen_python, every_model_runs_in_pytorch, .timeout = 240)
{
    char dir[64];
    cg_tmpdir(dir, sizeof dir);
    cfx_buf cmd;
    cfx_buf_init(&cmd);
    cfx_buf_puts(&cmd, "python3 tools/interop/check_codegen.py");
    for (int i = 0; i < cfx_model_count(); i++) {
        const cfx_model *m = cfx_model_at(i);
        if (cfx_model_has_object_input(m))
            continue; /* script objects have no weights-file or C-API form yet */
        cfx_scope s = cfx_scope_begin();
        cfx_module *module = NULL;
        cfx_graph_module *gm = cg_prepare(m, dir, &module);
        char weights[128], path[512];
        snprintf(weights, sizeof weights, "%s.safetensors", m->name);
        char *py = python_of(gm, weights);
        char *want = golden_in_class(m->name);
        cr_expect(strstr(py, want), "%s: the forward is not FX's python_code:\n%s\nwant:\n%s", m->name, py, want);
        cr_expect(strstr(py, "\nclass "), "%s", py);
        free(want);
        snprintf(path, sizeof path, "%s/%s.py", dir, m->name);
        cg_write_text(path, py);
        free(py);
        cfx_buf_printf(&cmd, " module %s/%s.py %s/%s.in.safetensors %s/%s.want.safetensors", dir, m->name, dir,
                       m->name, dir, m->name);
        cfx_buf_printf(&cmd, " loader %s/%s.json %s/%s.in.safetensors %s/%s.want.safetensors", dir, m->name, dir,
                       m->name, dir, m->name);
        cfx_graph_module_free(gm);
        cfx_module_free(module);
        cfx_scope_end(s);
    }
    cfx_buf_puts(&cmd, " 2>&1");
    char *out;
    int st = test_run_command(cmd.data, &out);
    cr_expect_eq(st, 0, "%s\n%s", cmd.data, out ? out : "(no output)");
    cr_log_info("%s", out ? out : "");
    free(out);
    cfx_buf_free(&cmd);
    cg_rmdir(dir);
}

Test(codegen_python, driver_writes_module_and_weights, .timeout = 120)
{
    char dir[64], cmd[1024], *out;
    cg_tmpdir(dir, sizeof dir);
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_graph_module *gm = cg_prepare(cfx_model_find("mlp"), dir, &module);
    /* -o elsewhere: the weights are written beside the module, as OUT.safetensors */
    snprintf(cmd, sizeof cmd, "mkdir %s/out && %s print %s/mlp.json --format python -o %s/out/net.py 2>&1", dir,
             cg_bin(), dir, dir);
    cr_assert_eq(test_run_command(cmd, &out), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/out/net.py", dir);
    char *py = read_file(cmd);
    cr_assert(py);
    char *want = python_of(gm, "net.safetensors");
    cr_expect_str_eq(py, want);
    free(want);
    free(py);
    snprintf(cmd, sizeof cmd,
             "python3 tools/interop/check_codegen.py module %s/out/net.py %s/mlp.in.safetensors "
             "%s/mlp.want.safetensors 2>&1",
             dir, dir, dir);
    cr_expect_eq(test_run_command(cmd, &out), 0, "%s", out);
    free(out);
    /* on stdout: the weights are the input's (mlp.safetensors) */
    snprintf(cmd, sizeof cmd, "%s print %s/mlp.json --format python 2>&1", cg_bin(), dir);
    cr_assert_eq(test_run_command(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "\nWEIGHTS = 'mlp.safetensors'\n"), "%s", out);
    free(out);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
    cg_rmdir(dir);
}

Test(codegen_python, call_module_refused)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value a = cfx_node_value(x);
    cfx_node *y = cfx_graph_call_module(g, "sub.linear", &a, 1, NULL, 0);
    cfx_graph_output(g, cfx_node_value(y));
    cfx_graph_module *gm = cfx_graph_module_new(g, "M");
    cfx_buf b;
    cfx_buf_init(&b);
    cr_expect_eq(cfx_graph_module_to_python(gm, NULL, &b), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "cannot generate Python for node 'sub_linear': a call_module node"), "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_buf_free(&b);
    cfx_graph_module_free(gm);
}

/* A meta attribute has no data in the weights file: the module makes it empty on the meta
 * device with its dtype, shape and strides; a dotted name becomes a submodule. */
Test(codegen_python, meta_and_nested_attributes, .timeout = 120)
{
    char dir[64], path[512], cmd[1024], *out;
    cg_tmpdir(dir, sizeof dir);
    cfx_scope s = cfx_scope_begin();
    cfx_graph *g = cfx_graph_new();
    cfx_node *w = cfx_graph_get_attr(g, "fc.weight");
    cfx_node *m = cfx_graph_get_attr(g, "stats");
    cfx_value outs[2] = {cfx_node_value(w), cfx_node_value(m)};
    cfx_graph_output(g, cfx_tuple(outs, 2));
    cfx_graph_module *gm = cfx_graph_module_new(g, "Holder");
    static const int64_t ws[2] = {2, 3}, ms[2] = {4, 5}, mst[2] = {1, 4};
    cfx_device meta = {CFX_DEVICE_META, -1};
    cr_assert_eq(cfx_graph_module_set_attr(gm, "fc.weight", cfx_model_example_tensor(ws, 2, 1)), CFX_OK);
    cr_assert_eq(cfx_graph_module_set_attr(gm, "stats", cfx_tensor_new_strided(ms, mst, 2, CFX_FLOAT64, meta)), CFX_OK,
                 "%s", cfx_error_message());
    snprintf(path, sizeof path, "%s/holder.json", dir);
    cr_assert_eq(cfx_graph_module_save(gm, path, 0), CFX_OK, "%s", cfx_error_message());
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_module_to_python(gm, "holder.safetensors", &b), CFX_OK, "%s", cfx_error_message());
    cr_expect(strstr(b.data, "\nMETA_ATTRIBUTES = {'stats': (torch.float64, [4, 5], [1, 4])}\n"), "%s", b.data);
    snprintf(path, sizeof path, "%s/holder.py", dir);
    cg_write_text(path, b.data);
    cfx_buf_free(&b);
    snprintf(cmd, sizeof cmd,
             "cd %s && python3 -c \"import holder; w, m = holder.Holder()(); "
             "print(w.shape, w.dtype, m.device, m.dtype, m.stride(), w[1, 2].item() == holder.load_safetensors("
             "'holder.safetensors')['fc.weight'][1, 2].item())\" 2>&1",
             dir);
    cr_assert_eq(test_run_command(cmd, &out), 0, "%s", out);
    cr_expect_str_eq(out, "torch.Size([2, 3]) torch.float32 meta torch.float64 (1, 4) True\n");
    free(out);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    cg_rmdir(dir);
}
