/* test_make_fx.c - make_fx graphs, code and meta against PyTorch 2.13's make_fx.
 *
 * Each program of tracer_programs.h is traced in real and in fake mode; str(graph) and
 * python_code must equal the goldens tools/interop/gen_make_fx.py wrote from its Python twin
 * (the same in both modes, which the script checks). Meta is compared node by node with the
 * golden of each mode (which keys are set, val and tensor_meta), the nodes that carry a
 * stack_trace when make_fx records them with tracer_stack_traces.tsv and their sites with the
 * lines of tracer_programs.h, and attributes against the tensors the program used. */
#include <criterion/criterion.h>

#include "dispatch/fake.h"
#include "tests/tracer/tracer_programs.h"

static void setup(void)
{
    cfx_error_clear();
    C3 = cfx_tensor_from_floats((const float[]){1, 2, 3}, (const int64_t[]){3}, 1);
    G1 = cfx_tensor_from_floats((const float[]){5}, (const int64_t[]){1}, 1);
}

static void teardown(void)
{
    cfx_tensor_release(C3);
    cfx_tensor_release(G1);
    C3 = G1 = NULL;
}

TestSuite(make_fx, .init = setup, .fini = teardown);

static void check_program(const char *name)
{
    const program *p = find_program(name);
    cr_assert(p, "no program %s", name);
    char *want_graph = golden(name, "graph");
    char *want_code = golden(name, "code");
    cr_assert(want_graph && want_code, "missing goldens for %s (run tools/interop/gen_make_fx.py)", name);
    cfx_module *mlp = make_mlp();
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        const char *mname = mode == CFX_TRACE_FAKE ? "fake" : "real";
        cfx_graph_module *gm = trace_program(p, (cfx_tracing_mode)mode, mlp);
        cr_assert(gm, "%s (%s): %s", name, mname, cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s (%s): lint: %s", name, mname, cfx_error_message());
        char *graph = cfx_graph_to_string(g);
        char *code = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(graph, want_graph, "%s (%s) graph", name, mname);
        cr_expect_str_eq(code, want_code, "%s (%s) code", name, mname);
        free(graph);
        free(code);
        if (p->meta) {
            char *want = golden(name, mode == CFX_TRACE_FAKE ? "meta_fake" : "meta_real");
            cr_assert(want, "missing meta golden for %s", name);
            char *got = meta_text(g);
            cr_expect_str_eq(got, want, "%s (%s) meta", name, mname);
            free(got);
            free(want);
        }
        cr_expect_eq(cfx_mode_stack_len(), 0, "%s (%s): modes left on the stack", name, mname);
        cfx_graph_module_free(gm);
        cr_expect_eq(cfx_tensor_live_count(), live0, "%s (%s): tensors leaked", name, mname);
    }
    cfx_module_free(mlp);
    free(want_graph);
    free(want_code);
}

#define GRAPH_TEST(name) \
    Test(make_fx, name) { check_program(#name); }

GRAPH_TEST(basic)
GRAPH_TEST(view_inplace)
GRAPH_TEST(max_dim)
GRAPH_TEST(layer_norm)
GRAPH_TEST(constants)
GRAPH_TEST(mlp)
GRAPH_TEST(outputs)
GRAPH_TEST(scalar)
GRAPH_TEST(nothing)
GRAPH_TEST(kwargs)
GRAPH_TEST(inplace_input)
GRAPH_TEST(dup_input)
GRAPH_TEST(passthrough)
GRAPH_TEST(literal_item)
GRAPH_TEST(literal_max)
GRAPH_TEST(global_item)
GRAPH_TEST(literal_inplace)
GRAPH_TEST(offset_input)
GRAPH_TEST(embedding_bag_last)

Test(make_fx, every_program_has_a_test)
{
    /* the list above and the table must not drift apart */
    cr_expect_eq(N_PROGRAMS, 19);
}

/* ---- attributes --------------------------------------------------------------------------------- */

Test(make_fx, constants_are_interned_once_per_tensor)
{
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace_program(find_program("constants"), (cfx_tracing_mode)mode, NULL);
        cr_assert(gm, "%s", cfx_error_message());
        /* three get_attr nodes, one attribute holding the very tensor the model used */
        cr_expect_eq(cfx_graph_module_n_attrs(gm), 1);
        cr_expect_str_eq(cfx_graph_module_attr_name(gm, 0), "_tensor_constant0");
        cr_expect_eq(cfx_graph_module_attr(gm, 0), C3);
        cr_expect_eq(cfx_graph_module_get_attr(gm, "_tensor_constant0"), C3);
        cr_expect_str_eq(cfx_graph_module_name(gm), "f");
        cfx_graph_module_free(gm);
    }
}

Test(make_fx, parameters_are_interned_as_param_constants)
{
    /* make_fx traces a function: its root is empty, and a parameter it reads becomes
     * `_param_constantN`, in the order of first use */
    cfx_module *mlp = make_mlp();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace_program(find_program("mlp"), (cfx_tracing_mode)mode, mlp);
        cr_assert(gm, "%s", cfx_error_message());
        cr_expect_str_eq(cfx_graph_module_name(gm), "MLP");
        cr_assert_eq(cfx_graph_module_n_attrs(gm), 4);
        const char *order[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
        for (int i = 0; i < 4; i++) {
            char name[32];
            snprintf(name, sizeof name, "_param_constant%d", i);
            cr_expect_str_eq(cfx_graph_module_attr_name(gm, i), name);
            cr_expect_eq(cfx_graph_module_attr(gm, i), cfx_module_get(mlp, order[i]));
        }
        /* a get_attr node gets val (PythonKeyTracer.create_node), no tensor_meta */
        cfx_node *w = cfx_graph_find_node(cfx_graph_module_graph(gm), "_param_constant0");
        cr_assert(w);
        cr_expect_not_null(cfx_node_val(w));
        cr_expect_null(cfx_node_tensor_meta(w));
        cfx_graph_module_free(gm);
    }
    cfx_module_free(mlp);
}

Test(make_fx, literal_is_interned_and_lift_fresh_copied)
{
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace_program(find_program("view_inplace"), (cfx_tracing_mode)mode, NULL);
        cr_assert(gm, "%s", cfx_error_message());
        cr_assert_eq(cfx_graph_module_n_attrs(gm), 1);
        cfx_tensor *c = cfx_graph_module_get_attr(gm, "_tensor_constant0");
        cr_assert(c);
        /* the stored constant is the real literal, untouched by the program */
        cr_expect_not(cfx_tensor_is_fake(c));
        cr_expect_eq(cfx_tensor_numel(c), 6);
        for (int i = 0; i < 6; i++)
            cr_expect_eq(cfx_tensor_get_double(c, i), (double)(i + 1));
        cfx_graph_module_free(gm);
    }
}

Test(make_fx, graph_module_name_option_and_named_signature)
{
    cfx_tensor *x = test_tensor(2, 3, 0);
    cfx_value a = cfx_tensor_value(x);
    cfx_make_fx_options o = {CFX_TRACE_REAL, NULL, "Chain"};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog_scalar, "(Tensor x) -> int", &a, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    cr_expect_str_eq(cfx_graph_module_name(gm), "Chain");
    cfx_graph_module_free(gm);
    gm = cfx_make_fx((cfx_fnptr)prog_scalar, "three(Tensor x) -> int", &a, 1, NULL);
    cr_assert(gm, "%s", cfx_error_message());
    cr_expect_str_eq(cfx_graph_module_name(gm), "three");
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
}

/* ---- meta details -------------------------------------------------------------------------------- */

Test(make_fx, scalar_results_and_fake_devices)
{
    /* a fake node's val shows the fake device (cpu), never meta */
    cfx_graph_module *gm = trace_program(find_program("basic"), CFX_TRACE_FAKE, NULL);
    cr_assert(gm);
    for (cfx_node *n = cfx_graph_first(cfx_graph_module_graph(gm)); n; n = cfx_node_next(n)) {
        const cfx_meta_val *v = cfx_node_val(n);
        if (v)
            cr_expect_eq(v->device.type, CFX_DEVICE_CPU);
    }
    cfx_graph_module_free(gm);
}

/* ---- stack traces ---------------------------------------------------------------------------------- */

/* The line of tracer_programs.h holding marker `@name`. */
static int marker_line(const char *marker)
{
    char *text = read_text(PROGRAMS_FILE);
    cr_assert(text, "cannot read %s", PROGRAMS_FILE);
    char *at = strstr(text, marker);
    cr_assert(at, "no marker %s", marker);
    int line = 1;
    for (char *p = text; p < at; p++)
        line += *p == '\n';
    free(text);
    return line;
}

static void expect_site(cfx_graph *g, const char *node, const char *marker)
{
    cfx_node *n = cfx_graph_find_node(g, node);
    cr_assert(n, "no node %s", node);
    const cfx_site *s = cfx_node_stack_trace(n);
    cr_assert(s, "%s has no stack_trace", node);
    /* __FILE__ of an included header is spelled through the include path ("./tests/...") */
    size_t fl = strlen(s->file), k = strlen(PROGRAMS_FILE);
    cr_expect(fl >= k && strcmp(s->file + fl - k, PROGRAMS_FILE) == 0, "%s: file %s", node, s->file);
    cr_expect_eq(s->line, marker_line(marker), "%s: line %d", node, s->line);
}

/* With record_stack_traces, every node but placeholders and the output carries one: the
 * nodes of tracer_stack_traces.tsv (make_fx(record_stack_traces=True) over the twins); without,
 * none does. */
Test(make_fx, stack_traces_on_the_nodes_make_fx_records_them_on)
{
    char *text = read_golden("tests/data/tracer_stack_traces.tsv");
    cr_assert(text, "missing tests/data/tracer_stack_traces.tsv");
    size_t n_lines;
    char **lines = split_lines(text, &n_lines);
    cr_assert(lines);
    cfx_module *mlp = make_mlp();
    size_t checked = 0;
    for (size_t i = 0; i < n_lines;) {
        char prog[32], mode[8];
        cr_assert_eq(sscanf(lines[i], "%31[^\t]\t%7[^\t]", prog, mode), 2, "bad line %s", lines[i]);
        cfx_tracing_mode tm = strcmp(mode, "fake") == 0 ? CFX_TRACE_FAKE : CFX_TRACE_REAL;
        cfx_graph_module *gm = trace_program_with(find_program(prog), tm, mlp, true);
        cfx_graph_module *plain = trace_program(find_program(prog), tm, mlp);
        cr_assert(gm && plain, "%s", cfx_error_message());
        cfx_node *n = cfx_graph_first(cfx_graph_module_graph(gm));
        for (; i < n_lines && strncmp(lines[i], prog, strlen(prog)) == 0 && lines[i][strlen(prog)] == '\t' &&
               strncmp(lines[i] + strlen(prog) + 1, mode, strlen(mode)) == 0;
             i++, n = cfx_node_next(n)) {
            char name[64];
            int has;
            cr_assert_eq(sscanf(lines[i], "%*[^\t]\t%*[^\t]\t%63[^\t]\t%d", name, &has), 2);
            cr_assert(n, "%s (%s): no node %s", prog, mode, name);
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_node_print_name(n, &b);
            cr_expect_str_eq(b.data, name, "%s (%s)", prog, mode);
            cfx_buf_free(&b);
            cr_expect_eq(cfx_node_stack_trace(n) != NULL, has != 0, "%s (%s): %s", prog, mode, name);
            checked++;
        }
        cr_expect_null(n, "%s (%s): more nodes than make_fx's", prog, mode);
        for (cfx_node *m = cfx_graph_first(cfx_graph_module_graph(plain)); m; m = cfx_node_next(m))
            cr_expect_null(cfx_node_stack_trace(m), "%s (%s): a stack trace without record_stack_traces", prog, mode);
        cfx_graph_module_free(gm);
        cfx_graph_module_free(plain);
    }
    cr_expect_gt(checked, 60);
    cfx_module_free(mlp);
    free(lines);
    free(text);
}

/* cfx's stack trace is the C call site of the op (PyTorch's the Python frames of forward). */
Test(make_fx, stack_trace_points_at_the_model)
{
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace_program_with(find_program("basic"), (cfx_tracing_mode)mode, NULL, true);
        cr_assert(gm);
        cfx_graph *g = cfx_graph_module_graph(gm);
        expect_site(g, "add", "@basic_add");
        expect_site(g, "mul", "@basic_mul_relu");
        expect_site(g, "relu", "@basic_mul_relu");
        const cfx_site *s = cfx_node_stack_trace(cfx_graph_find_node(g, "add"));
        cr_expect_str_eq(s->func, "prog_basic");
        cfx_graph_module_free(gm);

        gm = trace_program_with(find_program("max_dim"), (cfx_tracing_mode)mode, NULL, true);
        cr_assert(gm);
        g = cfx_graph_module_graph(gm);
        expect_site(g, "max_1", "@max_dim");
        expect_site(g, "getitem", "@max_dim");
        expect_site(g, "getitem_1", "@max_dim");
        cfx_graph_module_free(gm);

        gm = trace_program_with(find_program("view_inplace"), (cfx_tracing_mode)mode, NULL, true);
        cr_assert(gm);
        /* the literal's get_attr and lift_fresh are attributed to the cfx_tensor_literal call */
        expect_site(cfx_graph_module_graph(gm), "_tensor_constant0", "@literal");
        expect_site(cfx_graph_module_graph(gm), "lift_fresh_copy", "@literal");
        cfx_graph_module_free(gm);
    }
}

/* ---- constants, data-dependent ops, nested traces ----------------------------------------------- */

Test(make_fx, literal_constants_outlive_nothing)
{
    /* the constants bound to the literal's tensors go with them: nothing leaks, and item() of
     * a literal in a second trace is computed again */
    int64_t live0 = cfx_tensor_live_count();
    for (int round = 0; round < 2; round++)
        for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
            cfx_graph_module *gm = trace_program(find_program("literal_item"), (cfx_tracing_mode)mode, NULL);
            cr_assert(gm, "%s", cfx_error_message());
            char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
            cr_expect(strstr(text, "kwargs = {alpha: 4.0}"), "%s", text);
            free(text);
            cfx_graph_module_free(gm);
        }
    cr_expect_eq(cfx_tensor_live_count(), live0);
}

static int64_t inner_nodes;

static cfx_tensor *nested_model(cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(x);
    cfx_graph_module *inner = cfx_make_fx((cfx_fnptr)prog_offset_input, "(Tensor y) -> Tensor", &a, 1, NULL);
    if (!inner)
        return NULL;
    inner_nodes = cfx_graph_num_nodes(cfx_graph_module_graph(inner));
    char *text = cfx_graph_to_string(cfx_graph_module_graph(inner));
    cr_expect_str_eq(text, "graph():\n"
                           "    %y_1 : [num_users=1] = placeholder[target=y_1]\n"
                           "    %neg : [num_users=1] = call_function[target=torch.ops.aten.neg.default](args = (%y_1,), kwargs = {})\n"
                           "    return neg");
    free(text);
    cfx_graph_module_free(inner);
    return cfx_relu(x);
}

Test(make_fx, a_trace_inside_a_trace_records_into_its_own_graph)
{
    /* ProxyTorchDispatchMode.__enter__ stashes the outer proxy mode: the inner make_fx sees
     * the neg, the outer graph only its own relu (and in fake tracing, both share the fake
     * mode of the argument, detect_fake_mode) */
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        int64_t live0 = cfx_tensor_live_count();
        cfx_tensor *x = test_tensor(2, 3, 0);
        cfx_value a = cfx_tensor_value(x);
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        inner_nodes = 0;
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)nested_model, "(Tensor x) -> Tensor", &a, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        cr_expect_eq(inner_nodes, 3);
        char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
        cr_expect_str_eq(text, "graph():\n"
                               "    %x_1 : [num_users=1] = placeholder[target=x_1]\n"
                               "    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%x_1,), kwargs = {})\n"
                               "    return relu");
        free(text);
        cfx_graph_module_free(gm);
        cr_expect_eq(cfx_mode_stack_len(), 0);
        cfx_tensor_release(x);
        cr_expect_eq(cfx_tensor_live_count(), live0);
    }
}
