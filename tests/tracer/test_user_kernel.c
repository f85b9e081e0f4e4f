/* test_user_kernel.c - a user kernel launched over a grid (tracer/user_kernel.h) recorded as
 * PyTorch 2.13 records a Triton launch: triton_kernel_wrapper_mutation with the side-table
 * index, the grid and the kernel's arguments in a dict, and under functionalization
 * triton_kernel_wrapper_functional + getitem + copy_. Goldens: tools/interop/gen_user_kernel.py.
 * The kernel runs eagerly and in the interpreter, never under fake tracing; Dynamo's grid
 * errors keep their texts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tracer/user_kernel.h"
#include "tests/test_golden.h"
#include "tests/test_util.h"

enum { BLOCK = 2 };

/* out_ptr[i] = in_ptr0[i] + 10 for the BLOCK elements of program pid.x (the golden's kernel) */
static int add_kernel(const cfx_kernel_program *p)
{
    const float *x = cfx_tensor_data(p->tensors[0]);
    float *out = cfx_tensor_data(p->tensors[1]);
    int64_t n = p->args[0];
    for (int64_t i = p->pid[0] * BLOCK; i < (p->pid[0] + 1) * BLOCK && i < n; i++)
        out[i] = x[i] + 10.0f;
    return CFX_OK;
}

static int failing_kernel(const cfx_kernel_program *p)
{
    return p->pid[0] == 1 ? cfx_error_set(CFX_ERR, NULL, "program 1 failed") : CFX_OK;
}

static const char *const add_names[] = {"in_ptr0", "out_ptr", "n_elements"};
static int K;

static cfx_tensor *prog(cfx_tensor *x)
{
    cfx_tensor *out = cfx_empty_like(x, cfx_none(), cfx_none(), cfx_none(), cfx_bool(false)); /* torch.empty_like */
    cfx_tensor *ts[2] = {x, out};
    int64_t n = cfx_tensor_numel(x);
    cfx_grid grid = {3, 1, 1}; /* cdiv(5, BLOCK) programs */
    return cfx_user_kernel_launch(K, &grid, 1, ts, 2, &n, 1) == CFX_OK ? out : NULL;
}

static cfx_tensor *five(void)
{
    float d[5] = {0, 1, 2, 3, 4};
    int64_t n[1] = {5};
    return cfx_tensor_from_floats(d, n, 1);
}

static void expect_out(cfx_value out)
{
    cr_assert_eq(out.kind, CFX_V_TENSOR);
    for (int i = 0; i < 5; i++) /* [10.0, 11.0, 12.0, 13.0, 14.0] (user_kernel.out.txt) */
        cr_expect_float_eq(cfx_tensor_get_double(out.u.t, i), 10.0 + i, 1e-6);
}

static void setup(void)
{
    K = cfx_kernel_side_table_add("add_kernel", add_kernel, add_names, 3);
    cr_assert_eq(K, 0, "%s", cfx_error_message());
}

Test(user_kernel, launch_is_triton_kernel_wrapper_mutation, .init = setup)
{
    cfx_scope s = cfx_scope_begin();
    cr_expect_eq(cfx_kernel_side_table_add("again", add_kernel, add_names, 3), K, "add_kernel dedups by identity");
    cr_expect_str_eq(cfx_kernel_side_table_name(K), "add_kernel");
    char *out_golden = read_golden("tests/data/user_kernel.out.txt");
    cr_assert(out_golden);
    cr_expect_str_eq(out_golden, "[10.0, 11.0, 12.0, 13.0, 14.0]\n");
    free(out_golden);
    cfx_value x = cfx_tensor_value(five());
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        const char *mname = mode == CFX_TRACE_FAKE ? "fake" : "real";
        cfx_make_fx_options o = {(cfx_tracing_mode)mode};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog, "(Tensor x) -> Tensor", &x, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        char *code = cfx_graph_python_code_string(g, "self"), name[64];
        snprintf(name, sizeof name, "user_kernel.%s.code.txt", mname);
        expect_golden(name, code);
        if (mode == CFX_TRACE_FAKE)
            expect_graph_goldens(g, "user_kernel.graph.txt", "user_kernel.tabular.txt");
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s", cfx_error_message());
        /* impure (a mutation with no users): DCE keeps the launch */
        bool changed;
        cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK, "%s", cfx_error_message());
        char *after = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(after, code);
        /* the interpreter runs the kernel (the HOP receives the node's kwargs as one dict) */
        cfx_value out;
        cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
        expect_out(out);
        /* through JSON: the same code, and it still runs */
        char *json;
        cr_assert_eq(cfx_graph_module_to_json(gm, 0, &json), CFX_OK, "%s", cfx_error_message());
        cr_expect(strstr(json, "\"target\": {\"fn\": \"torch.ops.higher_order.triton_kernel_wrapper_mutation\"}, "
                               "\"args\": [], \"kwargs\": [[\"kernel_idx\", 0]"),
                  "%s", json);
        cfx_graph_module *gm2 = cfx_graph_module_from_json(json, strlen(json));
        cr_assert(gm2, "%s", cfx_error_message());
        char *code2 = cfx_graph_python_code_string(cfx_graph_module_graph(gm2), "self");
        cr_expect_str_eq(code2, code);
        cr_assert_eq(cfx_graph_module_run(gm2, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
        expect_out(out);
        /* DOT: the launch is an impure node fed by both tensors */
        cfx_buf b;
        cfx_buf_init(&b);
        cr_assert_eq(cfx_graph_to_dot(g, "M", &b), CFX_OK, "%s", cfx_error_message());
        char *dot = cfx_buf_take(&b);
        cr_expect(strstr(dot, "\"x_1\" -> \"triton_kernel_wrapper_mutation_proxy\""), "%s", dot);
        cr_expect(strstr(dot, "\"empty_like\" -> \"triton_kernel_wrapper_mutation_proxy\""), "%s", dot);
        free(dot);
        free(code2);
        free(json);
        cfx_graph_module_free(gm2);
        free(code);
        free(after);
        cfx_graph_module_free(gm);
    }
    /* eagerly: the kernel runs */
    cfx_tensor *y = prog(x.u.t);
    cr_assert(y, "%s", cfx_error_message());
    expect_out(cfx_tensor_value(y));
    cr_expect_eq(cfx_mode_stack_len(), 0, "modes left on the stack");
    cfx_scope_end(s);
}

Test(user_kernel, functionalized_launch_is_triton_kernel_wrapper_functional, .init = setup)
{
    cfx_scope s = cfx_scope_begin();
    cfx_value x = cfx_tensor_value(five());
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false, .functionalize = true};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog, "(Tensor x) -> Tensor", &x, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        char *code = cfx_graph_python_code_string(g, "self");
        expect_golden("user_kernel_functional.code.txt", code);
        char *text = cfx_graph_to_string(g);
        expect_golden("user_kernel_functional.graph.txt", text);
        /* as C: the HOP through cfx_hop_call, its dict result read by key */
        cfx_buf cb;
        cfx_buf_init(&cb);
        cr_assert_eq(cfx_graph_to_c(g, "forward", &cb), CFX_OK, "%s", cfx_error_message());
        char *c = cfx_buf_take(&cb);
        cr_expect(strstr(c, "cfx_hop_call(cfx_hop_find(\"triton_kernel_wrapper_functional\"), hop_args, 1, &"), "%s", c);
        cr_expect(strstr(c, " = cfx_dict_get(v_triton_kernel_wrapper_functional_proxy, \"in_ptr0\");"), "%s", c);
        cr_expect(strstr(c, "return cfx_error_set(CFX_ERR, NULL, \"KeyError: %s\", \"'out_ptr'\");"), "%s", c);
        expect_c_compiles(c);
        free(c);
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s", cfx_error_message());
        /* the functional graph runs: the kernel on clones, x copied back unchanged */
        cfx_tensor *x2 = five();
        cfx_value a = cfx_tensor_value(x2), out;
        cr_assert_eq(cfx_graph_module_run(gm, &a, 1, &out), CFX_OK, "%s", cfx_error_message());
        expect_out(out);
        cr_expect_float_eq(cfx_tensor_get_double(x2, 4), 4.0, 1e-9);
        free(code);
        free(text);
        cfx_graph_module_free(gm);
    }
    cfx_scope_end(s);
}

/* gen_user_kernel.py's functional(): the functional HOP called directly, its result read by key. */
static cfx_tensor *functional_prog(cfx_tensor *x)
{
    cfx_tensor *out = cfx_empty_like(x, cfx_none(), cfx_none(), cfx_none(), cfx_bool(false));
    cfx_value dims[3] = {cfx_int(3), cfx_int(1), cfx_int(1)}, grid = cfx_tuple(dims, 3);
    cfx_value kw[6] = {cfx_string("in_ptr0"), cfx_tensor_value(x), cfx_string("out_ptr"), cfx_tensor_value(out),
                       cfx_string("n_elements"), cfx_int(5)};
    cfx_value clone = cfx_string("out_ptr");
    cfx_value call[12] = {cfx_string("kernel_idx"), cfx_int(K), cfx_string("constant_args_idx"), cfx_int(0),
                          cfx_string("grid"), cfx_list(&grid, 1), cfx_string("tma_descriptor_metadata"),
                          cfx_dict(NULL, 0), cfx_string("kwargs"), cfx_dict(kw, 3), cfx_string("tensors_to_clone"),
                          cfx_list(&clone, 1)};
    cfx_value d = cfx_dict(call, 6), r;
    if (cfx_hop_call(cfx_triton_kernel_wrapper_functional_hop(), &d, 1, &r) != CFX_OK)
        return NULL;
    const cfx_value *o = cfx_dict_get(r, "out_ptr");
    return o && o->kind == CFX_V_TENSOR ? o->u.t : NULL;
}

Test(user_kernel, functional_hop_called_directly, .init = setup)
{
    cfx_scope s = cfx_scope_begin();
    cr_assert_eq(cfx_kernel_side_table_add_constant_args(NULL, NULL, 0), 0, "add_constant_args({})");
    cfx_value x = cfx_tensor_value(five());
    /* eagerly: the kernel writes a clone of out_ptr, returned */
    cfx_tensor *y = functional_prog(x.u.t);
    cr_assert(y, "%s", cfx_error_message());
    expect_out(cfx_tensor_value(y));
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL, false, .functionalize = true};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)functional_prog, "(Tensor x) -> Tensor", &x, 1, &o);
    cr_assert(gm, "%s", cfx_error_message());
    char *code = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
    expect_golden("user_kernel_functional_direct.code.txt", code);
    cfx_value out;
    cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
    expect_out(out);
    free(code);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

Test(user_kernel, grid_errors_are_dynamos, .init = setup)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *ts[2] = {five(), five()};
    int64_t n = 5;
    cfx_grid grids[2] = {{1, 1, 1}, {3, 1, 1}};
    cr_expect_lt(cfx_user_kernel_launch(K, NULL, 0, ts, 2, &n, 1), 0);
    cr_expect_str_eq(cfx_error_message(), "Triton kernel requires to be called with a grid");
    cfx_error_clear();
    cr_expect_lt(cfx_user_kernel_launch(K, grids, 2, ts, 2, &n, 1), 0);
    cr_expect_str_eq(cfx_error_message(), "Triton kernels should be called with only a single grid");
    cfx_error_clear();
    cr_expect_lt(cfx_user_kernel_launch(9999, grids, 1, ts, 2, &n, 1), 0);
    cr_expect_str_eq(cfx_error_message(), "no kernel at index 9999 of the kernel side table");
    cfx_error_clear();
    cr_expect_lt(cfx_user_kernel_launch(K, grids, 1, ts, 2, NULL, 0), 0);
    cr_expect_str_eq(cfx_error_message(), "add_kernel() takes 3 positional arguments but 2 were given");
    cfx_error_clear();
    static const char *const two[] = {"a", "b"};
    int f = cfx_kernel_side_table_add("failing", failing_kernel, two, 2);
    cr_expect_lt(cfx_user_kernel_launch(f, &grids[1], 1, ts, 2, NULL, 0), 0);
    cr_expect(strstr(cfx_error_message(), "program 1 failed"), "%s", cfx_error_message());
    cfx_error_clear();
    static const char *const dup[] = {"a", "a"};
    cr_expect_lt(cfx_kernel_side_table_add("dup", add_kernel, dup, 2), 0);
    cr_expect_str_eq(cfx_error_message(), "duplicate argument 'a' in function definition");
    cfx_error_clear();
    /* one program of BLOCK 2 covers two elements */
    cr_assert_eq(cfx_user_kernel_launch(K, grids, 1, ts, 2, &n, 1), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(ts[1], 1), 11.0, 1e-6);
    cr_expect_float_eq(cfx_tensor_get_double(ts[1], 4), 4.0, 1e-6);
    cfx_scope_end(s);
}

/* The HOP called directly, as the interpreter and generated C code call it: its binding errors
 * and the side tables' lookups. */
Test(user_kernel, hop_keywords_are_checked, .init = setup)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *h = cfx_triton_kernel_wrapper_mutation_hop();
    cr_assert(h);
    cfx_tensor *x = five(), *y = five();
    cfx_value dims[3] = {cfx_int(3), cfx_int(1), cfx_int(1)}, grid = cfx_tuple(dims, 3);
    cfx_value kw[6] = {cfx_string("in_ptr0"), cfx_tensor_value(x), cfx_string("out_ptr"), cfx_tensor_value(y),
                       cfx_string("n_elements"), cfx_int(5)};
    cfx_value call[10] = {cfx_string("kernel_idx"), cfx_int(K), cfx_string("constant_args_idx"), cfx_int(77),
                          cfx_string("grid"), cfx_list(&grid, 1), cfx_string("tma_descriptor_metadata"),
                          cfx_dict(NULL, 0), cfx_string("kwargs"), cfx_dict(kw, 3)};
    cfx_value d = cfx_dict(call, 5), out;
    cr_expect_lt(cfx_hop_call(h, &d, 1, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "Constant args index 77 not found in constant_args");
    cfx_error_clear();
    int c = cfx_kernel_side_table_add_constant_args(NULL, NULL, 0);
    cr_assert_geq(c, 0);
    call[3] = cfx_int(c);
    call[1] = cfx_int(4000);
    cr_expect_lt(cfx_hop_call(h, &d, 1, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "Kernel index 4000 not found in id_to_kernel");
    cfx_error_clear();
    call[1] = cfx_int(K);
    d = cfx_dict(call, 4);
    cr_expect_lt(cfx_hop_call(h, &d, 1, &out), 0);
    cr_expect_str_eq(cfx_error_message(),
                     "TritonKernelWrapperMutation.__call__() missing 1 required positional argument: 'kwargs'");
    cfx_error_clear();
    call[8] = cfx_string("grid");
    d = cfx_dict(call, 5);
    cr_expect_lt(cfx_hop_call(h, &d, 1, &out), 0);
    cr_expect_str_eq(cfx_error_message(),
                     "TritonKernelWrapperMutation.__call__() got multiple values for argument 'grid'");
    cfx_error_clear();
    call[8] = cfx_string("kwargs");
    kw[4] = cfx_string("n");
    d = cfx_dict(call, 5);
    cr_expect_lt(cfx_hop_call(h, &d, 1, &out), 0);
    cr_expect_str_eq(cfx_error_message(), "add_kernel() got an unexpected keyword argument 'n'");
    cfx_error_clear();
    kw[4] = cfx_string("n_elements");
    cr_assert_eq(cfx_hop_call(h, &d, 1, &out), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(out.kind, CFX_V_NONE);
    cr_expect_float_eq(cfx_tensor_get_double(y, 2), 12.0, 1e-6);
    cfx_scope_end(s);
}
