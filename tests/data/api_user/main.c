/* A program written against the installed API only: <cfx.h> from the public headers, linked
 * with libcfx.so. tests/tools/test_api_boundary.c compiles and runs it; it prints the traced
 * graph and exits 0 when every check passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

static cfx_tensor *f(cfx_tensor *x, cfx_tensor *y) { return cfx_relu(cfx_add(x, cfx_mul(x, y))); }

#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "check failed: %s (%s)\n", #c,                        \
                    cfx_error_message() ? cfx_error_message() : "no error");      \
            return 1;                                                             \
        }                                                                         \
    } while (0)

int main(void)
{
    /* eager, boxed: torch.ops.aten.add.Tensor(a, b, alpha=2) */
    int64_t sizes[1] = {3};
    float ad[3] = {1, 2, 3}, bd[3] = {10, 20, 30};
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = cfx_tensor_from_floats(ad, sizes, 1), *b = cfx_tensor_from_floats(bd, sizes, 1);
    cfx_op *add = cfx_op_find("aten::add.Tensor");
    CHECK(add && strcmp(cfx_op_name(add), "aten::add.Tensor") == 0);
    cfx_value stack[3] = {cfx_tensor_value(a), cfx_tensor_value(b), cfx_int(2)};
    CHECK(cfx_op_call(add, stack, 3, 3) == CFX_OK && stack[0].kind == CFX_V_TENSOR);
    CHECK(cfx_tensor_get_double(stack[0].u.t, 2) == 63.0);

    /* an unknown operator is an error with PyTorch's text, never a crash */
    CHECK(!cfx_op_find("aten::sine"));
    CHECK(strcmp(cfx_error_message(), "Could not find schema for aten::sine.") == 0);
    cfx_error_clear();

    /* make_fx in fake mode */
    int64_t shape[2] = {2, 3};
    cfx_tensor *x = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *y = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
    cfx_make_fx_options opts = {.mode = CFX_TRACE_FAKE};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)f, "(Tensor x, Tensor y) -> Tensor", args, 2, &opts);
    CHECK(gm);
    char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
    CHECK(text);
    fputs(text, stdout);
    free(text);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    CHECK(!cfx_error_occurred());
    return 0;
}
