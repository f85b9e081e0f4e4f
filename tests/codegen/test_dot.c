/* test_dot.c - Graphviz DOT of a graph (codegen/dot.c) and `cfx print --format dot|svg|png`.
 *
 * For every built-in model: the text is the same on two runs, every node is one box whose id
 * is its name, every input is one edge, placeholders / the output / impure nodes have their
 * own look, and labels carry the dtype and shape of `val`. Labels are escaped; a 1M-node chain
 * is written in linear time. Through the driver: dot text equals the library's, svg and png
 * come from Graphviz when it is installed, and a clear error when it is not. */
#include <time.h>

#include <criterion/logging.h>

#include "tests/codegen/codegen_test_util.h"

static char *dot_of(const cfx_graph *g, const char *name)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_dot(g, name, &b), CFX_OK, "%s", cfx_error_message());
    return cfx_buf_take(&b);
}

/* Occurrences of needle in s, in one pass (strstr from each hit would be quadratic under ASan,
 * whose strstr measures the whole rest of the haystack on every call). */
static size_t count(const char *s, const char *needle)
{
    size_t k = 0, n = strlen(needle);
    for (const char *p = s; *p; p++)
        if (*p == needle[0] && strncmp(p, needle, n) == 0)
            k++;
    return k;
}

/* The line of node `name`'s box (its id opens the line). */
static const char *box_line(const char *dot, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "\n  \"%s\" [label=", name);
    const char *p = strstr(dot, key);
    cr_assert(p, "no box for %s in:\n%s", name, dot);
    return p + 1;
}

static bool line_has(const char *line, const char *needle)
{
    const char *nl = strchr(line, '\n');
    const char *p = strstr(line, needle);
    return p && (!nl || p < nl);
}

Test(codegen_dot, every_model_drawn_deterministically)
{
    for (int i = 0; i < cfx_model_count(); i++) {
        const cfx_model *m = cfx_model_at(i);
        cfx_scope s = cfx_scope_begin();
        cfx_module *module = NULL;
        cfx_value args[CFX_MODEL_MAX_ARGS];
        int n;
        cfx_graph_module *gm = cg_trace(m, &module, args, &n);
        const cfx_graph *g = cfx_graph_module_graph(gm);
        char *a = dot_of(g, m->name), *b = dot_of(g, m->name);
        cr_expect_str_eq(a, b, "%s: two runs differ", m->name);
        size_t edges = 0, boxes = 0;
        for (cfx_node *nd = cfx_graph_first(g); nd; nd = cfx_node_next(nd)) {
            char *name = cfx_node_name_string(nd);
            const char *line = box_line(a, name);
            boxes++;
            edges += cfx_node_num_inputs(nd);
            for (uint32_t k = 0; k < cfx_node_num_inputs(nd); k++) {
                char *in = cfx_node_name_string(cfx_node_input(nd, k)), edge[256];
                snprintf(edge, sizeof edge, "\n  \"%s\" -> \"%s\";\n", in, name);
                cr_expect(strstr(a, edge), "%s: no edge %s -> %s", m->name, in, name);
                free(in);
            }
            cfx_node_op op = cfx_node_opcode(nd);
            if (op == CFX_NODE_PLACEHOLDER)
                cr_expect(line_has(line, "invhouse") && line_has(line, "placeholder"), "%s", line);
            if (op == CFX_NODE_OUTPUT)
                cr_expect(line_has(line, "shape=house"), "%s", line);
            bool impure = op == CFX_NODE_CALL_FUNCTION && cfx_node_is_impure(nd);
            cr_expect_eq(line_has(line, "(impure)"), impure, "%s", line);
            cr_expect_eq(line_has(line, "penwidth"), impure, "%s", line);
            const cfx_meta_val *v = cfx_node_val(nd);
            if (v && v->kind == CFX_MVAL_TENSOR) {
                char shape[128];
                int len = snprintf(shape, sizeof shape, "\\l%s[", cfx_dtype_name((cfx_dtype)v->dtype));
                for (int d = 0; d < v->n; d++)
                    len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%lld", d ? ", " : "",
                                    (long long)v->sizes[d]);
                snprintf(shape + len, sizeof shape - (size_t)len, "]\\l");
                cr_expect(line_has(line, shape), "%s: want %s in %s", m->name, shape, line);
            }
            free(name);
        }
        cr_expect_eq(count(a, " [label="), boxes, "%s", m->name);
        cr_expect_eq(count(a, " -> "), edges, "%s", m->name);
        free(a);
        free(b);
        cfx_graph_module_free(gm);
        cfx_module_free(module);
        cfx_scope_end(s);
    }
}

Test(codegen_dot, mutate_marks_in_place_ops_impure)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    int n;
    cfx_graph_module *gm = cg_trace(cfx_model_find("mutate"), &module, args, &n);
    char *dot = dot_of(cfx_graph_module_graph(gm), "mutate");
    cr_expect(line_has(box_line(dot, "add_"), "(impure)"));
    cr_expect(line_has(box_line(dot, "add__1"), "(impure)"));
    cr_expect(!line_has(box_line(dot, "cos"), "(impure)"));
    cr_expect(line_has(box_line(dot, "x_1"), "float32[2, 3]"));
    cr_expect(line_has(box_line(dot, "sin"), "torch.ops.aten.sin.default"));
    free(dot);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
}

Test(codegen_dot, labels_and_names_escaped)
{
    cfx_dispatcher_init();
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_value a[2] = {cfx_node_value(x), cfx_node_value(x)};
    cfx_node *y = cfx_graph_call_op(g, cfx_op_find("aten::add.Tensor"), a, 2, NULL, 0);
    cfx_graph_output(g, cfx_node_value(y));
    cr_assert_eq(cfx_node_set_name_unchecked(y, "we\"ird\\name"), CFX_OK);
    char *dot = dot_of(g, "a \"quoted\" graph");
    cr_expect(strstr(dot, "digraph \"a \\\"quoted\\\" graph\" {\n"), "%s", dot);
    cr_expect(strstr(dot, "\n  \"we\\\"ird\\\\name\" [label=\"we\\\"ird\\\\name\\l"), "%s", dot);
    cr_expect(strstr(dot, "\n  \"x\" -> \"we\\\"ird\\\\name\";\n"), "%s", dot);
    free(dot);
    cfx_graph_free(g);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

Test(codegen_dot, million_node_chain_linear, .timeout = 300)
{
    enum { N = 1000000 };
    cfx_dispatcher_init();
    const cfx_op *add = cfx_op_find("aten::add.Tensor"), *relu = cfx_op_find("aten::relu");
    cr_assert(add && relu);
    cfx_graph *g = cfx_graph_new();
    cfx_node *prev = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < N && prev; i++) {
        cfx_value a[2] = {cfx_node_value(prev), cfx_node_value(prev)};
        prev = cfx_graph_call_op(g, i % 2 ? relu : add, a, i % 2 ? 1 : 2, NULL, 0);
    }
    cr_assert(prev);
    cfx_graph_output(g, cfx_node_value(prev));
    double t0 = now();
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_dot(g, "chain", &b), CFX_OK);
    double t = now() - t0;
    cr_log_info("1M-node chain to DOT: %.1f ns/node, %zu bytes", t * 1e9 / N, b.len);
    cr_expect_eq(count(b.data, " -> "), (size_t)N + 1);
    cr_expect(strstr(b.data, "\n  \"relu_499999\" -> \"output\";\n}\n"));
    cfx_buf_free(&b);
    cfx_graph_free(g);
}

static int run(const char *args, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", cg_bin(), args);
    int status = test_run_command(cmd, out);
    cr_assert(*out, "cannot run %s", cmd);
    return status;
}

Test(codegen_dot, driver_dot_svg_png)
{
    char dir[64], args[512], *out;
    cg_tmpdir(dir, sizeof dir);
    snprintf(args, sizeof args, "trace mlp --mode fake --format json -o %s/mlp.json", dir);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    free(out);
    snprintf(args, sizeof args, "print %s/mlp.json --format dot", dir);
    cr_assert_eq(run(args, &out), 0, "%s", out);
    cr_expect(!strncmp(out, "digraph \"", 9), "%s", out);
    cr_expect(strstr(out, "\"_param_constant0\" -> \"t\";"), "%s", out);
    free(out);
    if (cg_have("dot")) {
        snprintf(args, sizeof args, "print %s/mlp.json --format svg", dir);
        cr_assert_eq(run(args, &out), 0, "%s", out);
        cr_expect(strstr(out, "<svg") && strstr(out, "_param_constant0"), "%.300s", out);
        free(out);
        snprintf(args, sizeof args, "print %s/mlp.json --format png -o %s/mlp.png", dir, dir);
        cr_assert_eq(run(args, &out), 0, "%s", out);
        free(out);
        snprintf(args, sizeof args, "%s/mlp.png", dir);
        char *png = read_file(args);
        cr_expect(png && !memcmp(png, "\x89PNG", 4), "not a PNG");
        free(png);
    } else {
        cr_log_warn("Graphviz's dot is not installed: svg/png rendering not checked");
    }
    /* without Graphviz: one clear line, status 1 */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "PATH=/nonexistent %s print %s/mlp.json --format svg 2>&1", cg_bin(), dir);
    int st = test_run_command(cmd, &out);
    cr_expect_eq(st, 1, "%s", out);
    cr_expect(strstr(out, "cfx: --format svg needs Graphviz's `dot` program"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "print %s/mlp.json --format jpeg", dir);
    cr_expect_eq(run(args, &out), 2, "%s", out);
    free(out);
    cg_rmdir(dir);
}
