/* test_make_fx.c - make_fx graphs, code and meta against PyTorch 1.13's make_fx.
 *
 * Each program of tracer_programs.h is traced in real and in fake mode; str(graph) and
 * python_code must equal the goldens tools/interop/make_fx_goldens.py wrote from its Python
 * twin (1.13 text carried to 2.x as the IR prints it). The graph text does not depend on the
 * mode; for the two programs 1.13 refuses to trace in fake mode (real tensors that are not
 * inputs), cfx's fake trace must give the real-mode golden. Meta is compared node by node
 * (which of val / tensor_meta are set and their contents), stack traces against the lines of
 * tracer_programs.h, and attributes against the tensors the program used. */
#include <criterion/criterion.h>

#include "dispatch/fake.h"
#include "tests/tracer/tracer_programs.h"

static void setup(void)
{
    cfx_error_clear();
    C3 = cfx_tensor_from_floats((const float[]){1, 2, 3}, (const int64_t[]){3}, 1);
}

static void teardown(void)
{
    cfx_tensor_release(C3);
    C3 = NULL;
}

TestSuite(make_fx, .init = setup, .fini = teardown);

static void put_dims(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_putc(b, '(');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, i ? ", %lld" : "%lld", (long long)d[i]);
    cfx_buf_puts(b, n == 1 ? ",)" : ")");
}

/* The line make_fx_goldens.py's meta_text writes for a node. */
static void meta_line(const cfx_node *n, cfx_buf *b)
{
    cfx_node_print_name(n, b);
    const cfx_meta_val *v = cfx_node_val(n);
    const cfx_tensor_meta *tm = cfx_node_tensor_meta(n);
    cfx_buf_puts(b, tm && v ? "|tensor_meta,val|" : tm ? "|tensor_meta|" : v ? "|val|" : "|-|");
    if (!v) {
        cfx_buf_putc(b, '-');
    } else if (v->kind == CFX_MVAL_TENSOR) {
        char dev[16];
        cfx_buf_puts(b, "Tensor(size=");
        put_dims(b, v->sizes, v->n);
        cfx_buf_puts(b, ", stride=");
        put_dims(b, v->strides, v->n);
        cfx_buf_printf(b, ", dtype=%s, device=%s, storage_offset=%lld)", cfx_dtype_torch_name((cfx_dtype)v->dtype),
                       cfx_device_format(v->device, dev, sizeof dev), (long long)v->storage_offset);
    } else if (v->kind == CFX_MVAL_INT) {
        cfx_buf_printf(b, "%lld", (long long)v->u.i);
    } else {
        cfx_buf_puts(b, "?");
    }
    cfx_buf_putc(b, '|');
    if (tm)
        cfx_tensor_meta_print(tm, b);
    else
        cfx_buf_putc(b, '-');
    cfx_buf_putc(b, '\n');
}

static char *meta_text(const cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        meta_line(n, &b);
    return cfx_buf_take(&b);
}

static void check_program(const char *name)
{
    const program *p = find_program(name);
    cr_assert(p, "no program %s", name);
    char *want_graph = golden(name, "graph");
    char *want_code = golden(name, "code");
    cr_assert(want_graph && want_code, "missing goldens for %s (run tools/interop/make_fx_goldens.py)", name);
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

Test(make_fx, every_program_has_a_test)
{
    /* the list above and the table must not drift apart */
    cr_expect_eq(N_PROGRAMS, 13);
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

Test(make_fx, parameters_are_attributes_by_qualified_name)
{
    cfx_module *mlp = make_mlp();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace_program(find_program("mlp"), (cfx_tracing_mode)mode, mlp);
        cr_assert(gm, "%s", cfx_error_message());
        cr_expect_str_eq(cfx_graph_module_name(gm), "MLP");
        cr_assert_eq(cfx_graph_module_n_attrs(gm), 4);
        const char *order[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
        for (int i = 0; i < 4; i++) {
            cr_expect_str_eq(cfx_graph_module_attr_name(gm, i), order[i]);
            cr_expect_eq(cfx_graph_module_attr(gm, i), cfx_module_get(mlp, order[i]));
        }
        /* get_attr nodes carry no meta (FX creates them in create_arg, not through a proxy) */
        cfx_node *w = cfx_graph_find_node(cfx_graph_module_graph(gm), "fc1_weight");
        cr_assert(w);
        cr_expect_null(cfx_node_val(w));
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

Test(make_fx, stack_trace_points_at_the_model)
{
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_graph_module *gm = trace_program(find_program("basic"), (cfx_tracing_mode)mode, NULL);
        cr_assert(gm);
        cfx_graph *g = cfx_graph_module_graph(gm);
        expect_site(g, "add", "@basic_add");
        expect_site(g, "mul", "@basic_mul_relu");
        expect_site(g, "relu", "@basic_mul_relu");
        cfx_node *ph = cfx_graph_find_node(g, "x_1");
        cr_expect_null(cfx_node_stack_trace(ph), "placeholders have no stack trace");
        const cfx_site *s = cfx_node_stack_trace(cfx_graph_find_node(g, "add"));
        cr_expect_str_eq(s->func, "prog_basic");
        cfx_graph_module_free(gm);

        gm = trace_program(find_program("max_dim"), (cfx_tracing_mode)mode, NULL);
        cr_assert(gm);
        g = cfx_graph_module_graph(gm);
        expect_site(g, "max_1", "@max_dim");
        expect_site(g, "getitem", "@max_dim");
        expect_site(g, "getitem_1", "@max_dim");
        cfx_graph_module_free(gm);

        gm = trace_program(find_program("view_inplace"), (cfx_tracing_mode)mode, NULL);
        cr_assert(gm);
        /* the literal's lift_fresh is attributed to the cfx_tensor_literal call */
        expect_site(cfx_graph_module_graph(gm), "lift_fresh_copy", "@literal");
        cfx_graph_module_free(gm);
    }
}
