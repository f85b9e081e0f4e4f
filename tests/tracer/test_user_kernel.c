/* test_user_kernel.c - a user kernel launched over a grid (tracer/user_kernel.h): one node
 * cfx::user_kernel_mutation with the kernel's side-table index and the grid, the kernel run
 * eagerly, by the interpreter and never under fake tracing; Dynamo's grid errors. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tracer/user_kernel.h"
#include "tests/test_util.h"

/* out[i] = x[i] + args[0] for the BLOCK elements of program pid.x (Triton's add kernel) */
static int add_kernel(const cfx_kernel_program *p)
{
    const float *x = cfx_tensor_data(p->tensors[0]);
    float *out = cfx_tensor_data(p->tensors[1]);
    int64_t n = cfx_tensor_numel(p->tensors[0]), block = p->args[1];
    for (int64_t i = p->pid[0] * block; i < (p->pid[0] + 1) * block && i < n; i++)
        out[i] = x[i] + (float)p->args[0];
    return CFX_OK;
}

static int failing_kernel(const cfx_kernel_program *p)
{
    return p->pid[0] == 1 ? cfx_error_set(CFX_ERR, NULL, "program 1 failed") : CFX_OK;
}

static int K;

static cfx_tensor *prog(cfx_tensor *x)
{
    cfx_tensor *out = cfx_empty_like(x);
    cfx_tensor *ts[2] = {x, out};
    int64_t args[2] = {10, 2}; /* add 10, BLOCK = 2 */
    cfx_grid grid = {3, 1, 1};  /* cdiv(5, BLOCK) programs */
    return cfx_user_kernel_launch(K, &grid, 1, ts, 2, args, 2) == CFX_OK ? out : NULL;
}

static cfx_tensor *five(void)
{
    float d[5] = {0, 1, 2, 3, 4};
    int64_t n[1] = {5};
    return cfx_tensor_from_floats(d, n, 1);
}

Test(user_kernel, launch_is_one_node_with_the_side_table_index_and_grid)
{
    cfx_scope s = cfx_scope_begin();
    K = cfx_kernel_side_table_add("add_kernel", add_kernel);
    cr_assert_geq(K, 0, "%s", cfx_error_message());
    cr_expect_eq(cfx_kernel_side_table_add("again", add_kernel), K, "add_kernel dedups by identity");
    cr_expect_str_eq(cfx_kernel_side_table_name(K), "add_kernel");
    cfx_value x = cfx_tensor_value(five());
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_make_fx_options o = {(cfx_tracing_mode)mode};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)prog, "(Tensor x) -> Tensor", &x, 1, &o);
        cr_assert(gm, "%s", cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        char *code = cfx_graph_python_code_string(g, "self");
        char want[256];
        snprintf(want, sizeof want,
                 "    user_kernel_mutation = torch.ops.cfx.user_kernel_mutation.default(%d, [3, 1, 1], "
                 "[x_1, empty_like], [10, 2]);  x_1 = user_kernel_mutation = None\n",
                 K);
        cr_expect(strstr(code, want), "%s\nwant line:\n%s", code, want);
        cr_expect(strstr(code, "return empty_like"), "the written tensor is still the empty_like node:\n%s", code);
        /* a mutation: DCE keeps the launch */
        bool changed;
        cr_assert_eq(cfx_pass_eliminate_dead_code(g, NULL, &changed), CFX_OK, "%s", cfx_error_message());
        char *after = cfx_graph_python_code_string(g, "self");
        cr_expect(strstr(after, "user_kernel_mutation"), "%s", after);
        /* the interpreter runs the kernel */
        cfx_value out;
        cr_assert_eq(cfx_graph_module_run(gm, &x, 1, &out), CFX_OK, "%s", cfx_error_message());
        for (int i = 0; i < 5; i++)
            cr_expect_float_eq(cfx_tensor_get_double(out.u.t, i), 10.0 + i, 1e-6);
        free(code);
        free(after);
        cfx_graph_module_free(gm);
    }
    cfx_scope_end(s);
}

Test(user_kernel, grid_errors_are_dynamos)
{
    cfx_scope s = cfx_scope_begin();
    int k = cfx_kernel_side_table_add("add_kernel", add_kernel);
    cfx_tensor *ts[2] = {five(), five()};
    int64_t args[2] = {1, 8};
    cfx_grid grids[2] = {{1, 1, 1}, {2, 1, 1}};
    cr_expect_lt(cfx_user_kernel_launch(k, NULL, 0, ts, 2, args, 2), 0);
    cr_expect_str_eq(cfx_error_message(), "Triton kernel requires to be called with a grid");
    cfx_error_clear();
    cr_expect_lt(cfx_user_kernel_launch(k, grids, 2, ts, 2, args, 2), 0);
    cr_expect_str_eq(cfx_error_message(), "Triton kernels should be called with only a single grid");
    cfx_error_clear();
    cr_expect_lt(cfx_user_kernel_launch(9999, grids, 1, ts, 2, args, 2), 0);
    cr_expect_str_eq(cfx_error_message(), "no kernel at index 9999 of the kernel side table");
    cfx_error_clear();
    int f = cfx_kernel_side_table_add("failing", failing_kernel);
    cr_expect_lt(cfx_user_kernel_launch(f, &grids[1], 1, ts, 2, args, 2), 0);
    cr_expect(strstr(cfx_error_message(), "program 1 failed"), "%s", cfx_error_message());
    cfx_error_clear();
    /* eagerly the kernel runs: one program of BLOCK 8 covers the five elements */
    cr_assert_eq(cfx_user_kernel_launch(k, grids, 1, ts, 2, args, 2), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(ts[1], 4), 5.0, 1e-6);
    cfx_scope_end(s);
}
