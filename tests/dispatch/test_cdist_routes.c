/* test_cdist_routes.c - the routes of the CompositeImplicitAutograd cdist, as make_fx records
 * them in 2.13 (python3: make_fx(lambda x, y: torch.ops.aten.cdist.default(x, y, p, mode)),
 * real and fake): _cdist_forward off the matrix-product route; on it (p = 2 with compute_mode
 * 1, or None/0 and more than 25 rows) expand, contiguous (a clone when the expand is not
 * contiguous), view of both inputs, then _euclidean_dist (of the inputs themselves for one
 * batch element) and a view to [*batch, r1, r2]. Values and errors: ops_breadth_cases.json. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "cfx.h"

static void clear_error(void) { cfx_error_clear(); }

TestSuite(cdist_routes, .init = clear_error);

static double route_p;
static cfx_value route_mode;

static cfx_tensor *cdist_prog(cfx_tensor *x, cfx_tensor *y) { return cfx_cdist(x, y, route_p, route_mode); }

static cfx_tensor *randn(const int64_t *sizes, int nd)
{
    cfx_int_list size = {sizes, nd};
    cfx_tensor *t = cfx_randn(size);
    cr_assert_not_null(t, "%s", cfx_error_message());
    return t;
}

/* the graph of cdist(x [a], y [b], p, mode) in both tracing modes, against want */
static void expect_graph(const int64_t *a, int na, const int64_t *b, int nb, double p, cfx_value mode,
                         const char *want)
{
    route_p = p;
    route_mode = mode;
    cfx_value args[2] = {cfx_tensor_value(randn(a, na)), cfx_tensor_value(randn(b, nb))};
    for (int m = CFX_TRACE_REAL; m <= CFX_TRACE_FAKE; m++) {
        cfx_make_fx_options o = {(cfx_tracing_mode)m};
        cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)cdist_prog, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
        cr_assert(gm, "%s", cfx_error_message());
        char *code = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
        cr_expect_str_eq(code, want, "mode %d", m);
        free(code);
        cfx_graph_module_free(gm);
    }
}

#define HEAD "\n\n\ndef forward(self, x_1, y_1):\n"
#define TAIL "    return view_2\n    "

Test(cdist_routes, cdist_forward_off_the_matrix_product_route)
{
    cfx_scope s = cfx_scope_begin();
    expect_graph((int64_t[]){3, 4}, 2, (int64_t[]){5, 4}, 2, 2.0, cfx_none(),
                 HEAD "    _cdist_forward = torch.ops.aten._cdist_forward.default(x_1, y_1, 2.0, None);  "
                      "x_1 = y_1 = None\n    return _cdist_forward\n    ");
    expect_graph((int64_t[]){30, 4}, 2, (int64_t[]){5, 4}, 2, 2.0, cfx_int(2),
                 HEAD "    _cdist_forward = torch.ops.aten._cdist_forward.default(x_1, y_1, 2.0, 2);  "
                      "x_1 = y_1 = None\n    return _cdist_forward\n    ");
    expect_graph((int64_t[]){30, 4}, 2, (int64_t[]){5, 4}, 2, 1.0, cfx_none(),
                 HEAD "    _cdist_forward = torch.ops.aten._cdist_forward.default(x_1, y_1, 1.0, None);  "
                      "x_1 = y_1 = None\n    return _cdist_forward\n    ");
    expect_graph((int64_t[]){0, 4}, 2, (int64_t[]){5, 4}, 2, 2.0, cfx_int(1), /* empty: always _cdist_forward */
                 HEAD "    _cdist_forward = torch.ops.aten._cdist_forward.default(x_1, y_1, 2.0, 1);  "
                      "x_1 = y_1 = None\n    return _cdist_forward\n    ");
    cfx_scope_end(s);
}

Test(cdist_routes, euclidean_dist_on_the_matrix_product_route)
{
    cfx_scope s = cfx_scope_begin();
    /* one batch element: the expanded views are recorded, unused */
    expect_graph((int64_t[]){30, 4}, 2, (int64_t[]){5, 4}, 2, 2.0, cfx_none(),
                 HEAD "    expand = torch.ops.aten.expand.default(x_1, [30, 4])\n"
                      "    view = torch.ops.aten.view.default(expand, [1, 30, 4]);  expand = view = None\n"
                      "    expand_1 = torch.ops.aten.expand.default(y_1, [5, 4])\n"
                      "    view_1 = torch.ops.aten.view.default(expand_1, [1, 5, 4]);  expand_1 = view_1 = None\n"
                      "    _euclidean_dist = torch.ops.aten._euclidean_dist.default(x_1, y_1);  x_1 = y_1 = None\n"
                      "    view_2 = torch.ops.aten.view.default(_euclidean_dist, [30, 5]);  _euclidean_dist = None\n"
                      TAIL);
    expect_graph((int64_t[]){3, 4}, 2, (int64_t[]){5, 4}, 2, 2.0, cfx_int(1),
                 HEAD "    expand = torch.ops.aten.expand.default(x_1, [3, 4])\n"
                      "    view = torch.ops.aten.view.default(expand, [1, 3, 4]);  expand = view = None\n"
                      "    expand_1 = torch.ops.aten.expand.default(y_1, [5, 4])\n"
                      "    view_1 = torch.ops.aten.view.default(expand_1, [1, 5, 4]);  expand_1 = view_1 = None\n"
                      "    _euclidean_dist = torch.ops.aten._euclidean_dist.default(x_1, y_1);  x_1 = y_1 = None\n"
                      "    view_2 = torch.ops.aten.view.default(_euclidean_dist, [3, 5]);  _euclidean_dist = None\n"
                      TAIL);
    /* broadcast batches: a clone where the expand is not contiguous */
    expect_graph((int64_t[]){2, 1, 30, 4}, 4, (int64_t[]){3, 5, 4}, 3, 2.0, cfx_none(),
                 HEAD "    expand = torch.ops.aten.expand.default(x_1, [2, 3, 30, 4]);  x_1 = None\n"
                      "    clone = torch.ops.aten.clone.default(expand, memory_format = torch.contiguous_format);  "
                      "expand = None\n"
                      "    view = torch.ops.aten.view.default(clone, [6, 30, 4]);  clone = None\n"
                      "    expand_1 = torch.ops.aten.expand.default(y_1, [2, 3, 5, 4]);  y_1 = None\n"
                      "    clone_1 = torch.ops.aten.clone.default(expand_1, memory_format = torch.contiguous_format);  "
                      "expand_1 = None\n"
                      "    view_1 = torch.ops.aten.view.default(clone_1, [6, 5, 4]);  clone_1 = None\n"
                      "    _euclidean_dist = torch.ops.aten._euclidean_dist.default(view, view_1);  view = view_1 = None\n"
                      "    view_2 = torch.ops.aten.view.default(_euclidean_dist, [2, 3, 30, 5]);  _euclidean_dist = None\n"
                      TAIL);
    expect_graph((int64_t[]){2, 30, 4}, 3, (int64_t[]){5, 4}, 2, 2.0, cfx_none(),
                 HEAD "    expand = torch.ops.aten.expand.default(x_1, [2, 30, 4]);  x_1 = None\n"
                      "    view = torch.ops.aten.view.default(expand, [2, 30, 4]);  expand = None\n"
                      "    expand_1 = torch.ops.aten.expand.default(y_1, [2, 5, 4]);  y_1 = None\n"
                      "    clone = torch.ops.aten.clone.default(expand_1, memory_format = torch.contiguous_format);  "
                      "expand_1 = None\n"
                      "    view_1 = torch.ops.aten.view.default(clone, [2, 5, 4]);  clone = None\n"
                      "    _euclidean_dist = torch.ops.aten._euclidean_dist.default(view, view_1);  view = view_1 = None\n"
                      "    view_2 = torch.ops.aten.view.default(_euclidean_dist, [2, 30, 5]);  _euclidean_dist = None\n"
                      TAIL);
    cfx_scope_end(s);
}
