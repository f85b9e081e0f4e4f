/* test_op_call.c - the boxed call API as a new user meets it: looking an operator up by name
 * and calling it with a cfx_value stack. Each test pins a bug found by doing exactly that. */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }

TestSuite(op_call, .init = setup);

static cfx_tensor *ones(int64_t n)
{
    float d[4] = {1, 1, 1, 1};
    return cfx_tensor_from_floats(d, &n, 1);
}

/* torch.ops.aten.sine does not exist; cfx_op_find says so in c10's words, and calling the
 * NULL it returned keeps that error instead of failing without a message. */
Test(op_call, unknown_operator_keeps_its_error)
{
    cr_assert_null(cfx_op_find("aten::sine"));
    cr_assert_str_eq(cfx_error_message(), "Could not find schema for aten::sine.");
    cfx_value stack[1] = {cfx_none()};
    cr_expect_eq(cfx_op_call(NULL, stack, 0, 1), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "Could not find schema for aten::sine.");
    cfx_error_clear();
    /* an overload that does not exist (c10 prints name "." overload: the dot above is the
     * empty overload's), and a lookup that only asks */
    cr_assert_null(cfx_op_find("aten::add.Sine"));
    cr_expect_str_eq(cfx_error_message(), "Could not find schema for aten::add.Sine");
    cfx_error_clear();
    cr_expect_null(cfx_op_lookup("aten::sine"));
    cr_expect_not(cfx_error_occurred());
}

/* A model that calls an unknown operator: make_fx reports the lookup's error, not "returned
 * NULL without an error". */
static cfx_tensor *sine_model(cfx_tensor *x)
{
    cfx_value stack[1] = {cfx_tensor_value(x)};
    if (cfx_op_call(cfx_op_find("aten::sine"), stack, 1, 1) != CFX_OK)
        return NULL;
    return stack[0].u.t;
}

Test(op_call, unknown_operator_under_make_fx)
{
    cfx_scope s = cfx_scope_begin();
    cfx_value a = cfx_tensor_value(ones(3));
    cfx_make_fx_options o = {CFX_TRACE_FAKE, NULL, NULL};
    cr_expect_null(cfx_make_fx((cfx_fnptr)sine_model, "(Tensor x) -> Tensor", &a, 1, &o));
    cr_expect(strstr(cfx_error_message(), "Could not find schema for aten::sine.") != NULL, "%s",
              cfx_error_message());
    cfx_scope_end(s);
}

/* add.Tensor has three arguments: a two-slot stack cannot hold the default alpha, so the call
 * is refused before anything is written (under make asan, a write past the array would be a
 * stack-buffer-overflow). */
Test(op_call, stack_capacity_is_checked)
{
    cfx_scope s = cfx_scope_begin();
    cfx_op *add = cfx_op_find("aten::add.Tensor");
    cr_assert(add);
    cfx_value *stack = malloc(2 * sizeof *stack); /* heap: ASan sees the exact bounds */
    cr_assert(stack);
    stack[0] = cfx_tensor_value(ones(2));
    stack[1] = cfx_tensor_value(ones(2));
    cr_expect_eq(cfx_op_call(add, stack, 2, 2), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "aten::add.Tensor") != NULL, "%s", cfx_error_message());
    cr_expect(strstr(cfx_error_message(), "3") != NULL, "%s", cfx_error_message());
    cfx_error_clear();
    /* room for the default: the call runs and the result lands in stack[0] */
    cfx_value big[3] = {stack[0], stack[1]};
    cr_expect_eq(cfx_op_call(add, big, 2, 3), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(cfx_tensor_get_double(big[0].u.t, 1), 2.0);
    free(stack);
    cfx_scope_end(s);
}

/* torch.ops.aten.add.Tensor(torch.ones(2), 'a') in PyTorch 2.13. */
Test(op_call, string_for_a_tensor)
{
    cfx_scope s = cfx_scope_begin();
    cfx_op *add = cfx_op_find("aten::add.Tensor");
    cfx_value stack[3] = {cfx_tensor_value(ones(2)), cfx_string("a")};
    cr_expect_eq(cfx_op_call(add, stack, 2, 3), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(),
                     "aten::add() Expected a value of type 'Tensor' for argument 'other' but instead found type "
                     "'str'.\nPosition: 1\nValue: 'a'\nDeclaration: aten::add.Tensor(Tensor self, Tensor other, *, "
                     "Scalar alpha=1) -> Tensor\nCast error details: Unable to cast a to Tensor");
    cfx_error_clear();
    /* torch.ops.aten.add.Tensor(None, torch.ones(2)) */
    cfx_value st2[3] = {cfx_none(), cfx_tensor_value(ones(2))};
    cr_expect_eq(cfx_op_call(add, st2, 2, 3), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(),
                     "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'self'");
    cfx_scope_end(s);
}

/* A SymInt[] is cast item by item, so pybind names the first wrong item's class; an int[] is
 * cast whole and names the list's. torch.ops.aten.view(x, [1, 0.5]) and
 * torch.ops.aten.sum.dim_IntList(x, [0, 1.5]) in PyTorch 2.13. */
Test(op_call, wrong_item_in_an_int_list)
{
    cfx_scope s = cfx_scope_begin();
    cfx_value bad[] = {cfx_int(1), cfx_double(0.5)};
    cfx_value stack[2] = {cfx_tensor_value(ones(2)), cfx_list(bad, 2)};
    cr_expect_eq(cfx_op_call(cfx_op_find("aten::view"), stack, 2, 2), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(),
                     "aten::view() Expected a value of type 'List[int]' for argument 'size' but instead found "
                     "type 'list'.\nPosition: 1\nValue: [1, 0.5]\nDeclaration: aten::view(Tensor(a) self, "
                     "SymInt[] size) -> Tensor(a)\nCast error details: Unable to cast Python instance of type "
                     "<class 'float'> to C++ type '?' (#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in "
                     "debug mode for details)");
    cfx_error_clear();
    cfx_value bad2[] = {cfx_int(0), cfx_double(1.5)};
    cfx_value st2[4] = {cfx_tensor_value(ones(2)), cfx_list(bad2, 2)};
    cr_expect_eq(cfx_op_call(cfx_op_find("aten::sum.dim_IntList"), st2, 2, 4), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "Cast error details: Unable to cast Python instance of type "
                                          "<class 'list'> to C++ type '?'") != NULL,
              "%s", cfx_error_message());
    cfx_scope_end(s);
}
