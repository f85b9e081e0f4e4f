/* test_op_call.c - the boxed call API as a new user meets it: looking an operator up by name
 * and calling it with a cfx_value stack. Each test pins a bug found by doing exactly that. */
#include <criterion/criterion.h>
#include <math.h>
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

/* fuzz/fuzz_op_call.c found aten::arange casting a NaN to int64 (undefined behaviour, UBSan).
 * Each case and text is what torch.ops.aten.arange.start_step(start, end, step, dtype=...,
 * device=...) raises in PyTorch 2.13. */
Test(op_call, arange_non_finite_numbers_fail_like_pytorch)
{
    static const struct {
        double start, end, step;
        bool int64, meta;
        const char *want;
    } cases[] = {
        {0, NAN, 1, false, false, "unsupported range: 0 -> nan"},
        {0, NAN, 1, true, false, "unsupported range: 0 -> nan"},
        {NAN, 3, 1, true, false, "unsupported range: nan -> 3"},
        {0, INFINITY, 1, false, false, "unsupported range: 0 -> inf"},
        {-INFINITY, 0, 1, true, false, "unsupported range: -inf -> 0"},
        {0, 3, NAN, false, false, "step must be nonzero"},
        {0, 3, NAN, true, false, "step must be nonzero"},
        {NAN, 3, NAN, true, false, "step must be nonzero"},
        {0, 3, -INFINITY, true, false, "upper bound and lower bound inconsistent with step sign"},
        {0, 3, INFINITY, true, false, "value cannot be converted to type int64_t without overflow"},
        {0, 1e300, 1, true, false, "value cannot be converted to type int64_t without overflow"},
        {-1e300, 0, 1, true, false, "value cannot be converted to type int64_t without overflow"},
        {0, 3, INFINITY, true, true, "step must be finite but got inf"},
        {0, 3, NAN, false, true, "step must be finite but got nan"},
        {0, NAN, 1, true, true, "upper bound and lower bound inconsistent with step sign"},
        {0, INFINITY, 1, false, true, "unsupported range: 0 -> inf"},
    };
    cfx_op *op = cfx_op_find("aten::arange.start_step");
    cr_assert(op);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfx_scope s = cfx_scope_begin();
        cfx_value stack[8] = {cfx_double(cases[i].start), cfx_double(cases[i].end), cfx_double(cases[i].step),
                              cases[i].int64 ? cfx_dtype_value(CFX_INT64) : cfx_none(), cfx_none(),
                              cases[i].meta ? cfx_device_value((cfx_device){CFX_DEVICE_META, -1}) : cfx_none()};
        cr_expect_eq(cfx_op_call(op, stack, 6, 8), CFX_ERR, "case %zu ran", i);
        cr_expect_str_eq(cfx_error_message() ? cfx_error_message() : "(none)", cases[i].want, "case %zu", i);
        cfx_error_clear();
        cfx_scope_end(s);
    }
    /* a step past the range still makes one element, as torch.arange(0, 3, 1e300) does */
    cfx_scope s = cfx_scope_begin();
    cfx_value ok[8] = {cfx_int(0), cfx_int(3), cfx_double(1e300)};
    cr_expect_eq(cfx_op_call(op, ok, 3, 8), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(ok[0].u.t->sizes[0], 1);
    cfx_scope_end(s);
}

/* fuzz/fuzz_op_call.c found integer aten::pow casting libm's inf (0 ** -1) to int64. PyTorch
 * 2.13: torch.pow(tensor([0, 1, -1, 2, -2, 3, 0, 7, -3]), tensor([-1, -3, -3, -1, -2, 40, 0, 3, 3]))
 * is [0, 1, -1, 0, 0, -6289078614652622815, 1, 343, -27] (int32: 3 ** 40 is 689956897). */
Test(op_call, integer_pow_is_exact_and_wraps_like_pytorch)
{
    cfx_scope s = cfx_scope_begin();
    const int64_t base[] = {0, 1, -1, 2, -2, 3, 0, 7, -3}, expo[] = {-1, -3, -3, -1, -2, 40, 0, 3, 3};
    const int64_t want[] = {0, 1, -1, 0, 0, -6289078614652622815LL, 1, 343, -27};
    int64_t n = 9;
    cfx_tensor *b = cfx_tensor_new(&n, 1, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *e = cfx_tensor_new(&n, 1, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert(b && e);
    memcpy(cfx_tensor_data(b), base, sizeof base);
    memcpy(cfx_tensor_data(e), expo, sizeof expo);
    cfx_value stack[2] = {cfx_tensor_value(b), cfx_tensor_value(e)};
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::pow.Tensor_Tensor"), stack, 2, 2), CFX_OK, "%s", cfx_error_message());
    const int64_t *got = cfx_tensor_data(stack[0].u.t);
    for (int i = 0; i < 9; i++)
        cr_expect_eq(got[i], want[i], "element %d: %lld", i, (long long)got[i]);
    cfx_scope_end(s);
}

/* A CPU kernel that returns a fresh tensor, whatever it was given. */
static int fresh_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks;
    stack[0] = cfx_tensor_value(ones(1));
    return CFX_OK;
}

/* The boxed call checks arguments by rules the op keeps from its schema, computed once at
 * def. An operator defined again with another schema (the def's library freed while an impl
 * keeps the operator alive, then a new def) checks by the new schema. */
Test(op_call, redefined_operator_checks_by_its_new_schema)
{
    cfx_scope s = cfx_scope_begin();
    cfx_library *impl = cfx_library_new(CFX_LIB_IMPL, "redef", CFX_KEY_CPU, "/dev/null", 1);
    cr_assert_not_null(impl);
    cr_assert_eq(cfx_library_impl_boxed_at(impl, "f", CFX_KEY_Undefined, fresh_kernel, NULL, "/dev/null", 1), CFX_OK,
                 "%s", cfx_error_message());
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "redef", CFX_KEY_Undefined, "/dev/null", 2);
    cr_assert_not_null(lib);
    cr_assert_eq(cfx_library_def(lib, "f(Tensor x) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cfx_op *f = cfx_op_find("redef::f");
    cr_assert_not_null(f);
    cfx_value st[1] = {cfx_int(3)};
    cr_expect_eq(cfx_op_call(f, st, 1, 1), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "Expected a value of type 'Tensor' for argument 'x'") != NULL, "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_library_free(lib);

    lib = cfx_library_new(CFX_LIB_DEF, "redef", CFX_KEY_Undefined, "/dev/null", 3);
    cr_assert_not_null(lib);
    cr_assert_eq(cfx_library_def(lib, "f(Tensor x, int n) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_op_find("redef::f"), f, "the impl kept the operator entry");
    cfx_value st2[2] = {cfx_tensor_value(ones(2)), cfx_tensor_value(ones(2))};
    cr_expect_eq(cfx_op_call(f, st2, 2, 2), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "Expected a value of type 'int' for argument 'n'") != NULL, "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_value st3[2] = {cfx_tensor_value(ones(2)), cfx_int(3)};
    cr_expect_eq(cfx_op_call(f, st3, 2, 2), CFX_OK, "%s", cfx_error_message());
    cfx_library_free(lib);
    cfx_library_free(impl);
    cfx_scope_end(s);
}

/* cfx_op_call checks, dispatches and wraps numbers in one walk over the stack; what torch.ops
 * does in three steps must still come out the same. PyTorch 2.13:
 *   torch.ops.aten.add.Tensor(None, 'a')  -> the type error on 'other' (the binding checks every
 *                                            argument before dispatch refuses the None)
 *   torch.ops.aten.mul.Tensor(3, torch.ones(2))  -> tensor([3., 3.])
 *   torch.ops.aten.cat.default([meta(2), meta(1)])  -> a meta tensor of size (3,): the keys of
 *                                            a Tensor[]'s items choose the kernel */
Test(op_call, one_walk_binding_keeps_the_order_of_checks)
{
    cfx_scope s = cfx_scope_begin();
    cfx_value st[3] = {cfx_none(), cfx_string("a")};
    cr_expect_eq(cfx_op_call(cfx_op_find("aten::add.Tensor"), st, 2, 3), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "aten::add() Expected a value of type 'Tensor' for argument 'other' but "
                                          "instead found type 'str'.") == cfx_error_message(),
              "%s", cfx_error_message());
    cfx_error_clear();

    cfx_value mul[2] = {cfx_int(3), cfx_tensor_value(ones(2))};
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::mul.Tensor"), mul, 2, 2), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(mul[0].kind, CFX_V_TENSOR);
    cr_expect_eq(cfx_tensor_dtype(mul[0].u.t), CFX_FLOAT32);
    cr_expect_eq(cfx_tensor_numel(mul[0].u.t), 2);
    cr_expect_float_eq(cfx_tensor_get_double(mul[0].u.t, 0), 3.0, 0);
    cr_expect_float_eq(cfx_tensor_get_double(mul[0].u.t, 1), 3.0, 0);

    cfx_device meta = {CFX_DEVICE_META, -1};
    int64_t two = 2, one = 1;
    cfx_value items[2] = {cfx_tensor_value(cfx_autorelease(cfx_tensor_new(&two, 1, CFX_FLOAT32, meta))),
                          cfx_tensor_value(cfx_autorelease(cfx_tensor_new(&one, 1, CFX_FLOAT32, meta)))};
    cfx_value cat[2] = {cfx_list(items, 2)};
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::cat"), cat, 1, 2), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cat[0].kind, CFX_V_TENSOR);
    cr_expect(cfx_tensor_is_meta(cat[0].u.t));
    cr_expect_eq(cfx_tensor_numel(cat[0].u.t), 3);
    cfx_scope_end(s);
}

/* fuzz_op_call: batch norm in inference read a running_mean shorter than the channel count
 * past its end. 2.13's CPU kernel reads past it as well (its result is garbage); cfx refuses
 * with the text of batch_norm's own check, for each parameter the kernel reads per channel. */
Test(op_call, batch_norm_eval_refuses_a_parameter_shorter_than_the_channels)
{
    cfx_scope s = cfx_scope_begin();
    int64_t xs[3] = {2, 3, 2}, two = 2, three = 3;
    cfx_tensor *x = cfx_tensor_new(xs, 3, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *full = cfx_tensor_new(&three, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *shrt = cfx_tensor_new(&two, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_op *op = cfx_op_find("aten::_native_batch_norm_legit_no_training");
    cr_assert_not_null(op);
    static const char *const want[4] = {"weight should contain 3 elements not 2", "bias should contain 3 elements not 2",
                                        "running_mean should contain 3 elements not 2",
                                        "running_var should contain 3 elements not 2"};
    for (int i = 0; i < 4; i++) {
        cfx_value st[8] = {cfx_tensor_value(x),
                           cfx_tensor_value(i == 0 ? shrt : full),
                           cfx_tensor_value(i == 1 ? shrt : full),
                           cfx_tensor_value(i == 2 ? shrt : full),
                           cfx_tensor_value(i == 3 ? shrt : full),
                           cfx_double(0.1),
                           cfx_double(1e-5)};
        cfx_error_clear();
        cr_expect_eq(cfx_op_call(op, st, 7, 8), CFX_ERR, "parameter %d", i);
        cr_expect(strstr(cfx_error_message(), want[i]) != NULL, "parameter %d: %s", i, cfx_error_message());
    }
    cfx_scope_end(s);
}

/* What a kernel of asis::f saw: its key and the kinds of its arguments. */
static struct {
    cfx_dispatch_key key;
    cfx_value_kind kinds[4];
    double p;
} seen;

static int seeing_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op, (void)ks;
    seen.key = (cfx_dispatch_key)(intptr_t)ctx;
    for (int i = 0; i < 4; i++)
        seen.kinds[i] = stack[i].kind;
    seen.p = stack[1].kind == CFX_V_DOUBLE ? stack[1].u.d : -1;
    stack[0] = cfx_tensor_value(ones(1));
    return CFX_OK;
}

/* cfx_op_call takes the arguments an op takes as they are (a tensor for a Tensor, a number for
 * a Scalar, anything for Any, ...) with a bit test each and continues in the full rules from
 * the first other one: what the full rules do there must not depend on what came before.
 * PyTorch 2.13, x = torch.ones(2):
 *   torch.ops.aten.add.Tensor(x, x, alpha=x)    -> "aten::add() Expected a value of type
 *                     'number' for argument 'alpha' but instead found type 'Tensor'."
 *   torch.ops.aten.add.Tensor(x, None, alpha='a') -> the same for type 'str' (every argument
 *                     is checked before dispatch refuses the None)
 *   torch.ops.aten.add.Tensor(x, None)          -> "Expected a proper Tensor but got None (or an
 *                     undefined Tensor in C++) for argument #1 'other'"
 *   torch.ops.aten.mul.Tensor(torch.ones(2, device='meta'), 3) -> a meta tensor: the key set of
 *                     the tensor before the number counts */
Test(op_call, arguments_taken_as_they_are_then_the_full_rules)
{
    cfx_scope s = cfx_scope_begin();
    cfx_op *add = cfx_op_find("aten::add.Tensor");
    cfx_value x = cfx_tensor_value(ones(2));
    cfx_value st[3] = {x, x, x};
    cr_expect_eq(cfx_op_call(add, st, 3, 3), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "aten::add() Expected a value of type 'number' for argument 'alpha' but "
                                          "instead found type 'Tensor'.") == cfx_error_message(),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_value st2[3] = {x, cfx_none(), cfx_string("a")};
    cr_expect_eq(cfx_op_call(add, st2, 3, 3), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "aten::add() Expected a value of type 'number' for argument 'alpha' but "
                                          "instead found type 'str'.") == cfx_error_message(),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_value st3[3] = {x, cfx_tensor_value(NULL)};
    cr_expect_eq(cfx_op_call(add, st3, 2, 3), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(),
                     "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #1 'other'");
    cfx_error_clear();

    cfx_device meta = {CFX_DEVICE_META, -1};
    int64_t two = 2;
    cfx_tensor *m = cfx_autorelease(cfx_tensor_new(&two, 1, CFX_FLOAT32, meta));
    cfx_value mul[2] = {cfx_tensor_value(m), cfx_int(3)};
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::mul.Tensor"), mul, 2, 2), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(mul[0].kind, CFX_V_TENSOR);
    cr_expect(cfx_tensor_is_meta(mul[0].u.t));
    cr_expect_eq(cfx_tensor_numel(mul[0].u.t), 2);

    /* an int for a float after a tensor is still a float when the kernel sees it; a tensor given
     * for Any is taken as it is but chooses no kernel (only Tensor arguments dispatch) */
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "asis", CFX_KEY_Undefined, "/dev/null", 1);
    cr_assert_not_null(lib);
    cr_assert_eq(cfx_library_def(lib, "f(Tensor x, float p, Any a, Tensor? y) -> Tensor"), CFX_OK, "%s",
                 cfx_error_message());
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "f", CFX_KEY_CPU, seeing_kernel, (void *)(intptr_t)CFX_KEY_CPU,
                                           "/dev/null", 2),
                 CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "f", CFX_KEY_Meta, seeing_kernel, (void *)(intptr_t)CFX_KEY_Meta,
                                           "/dev/null", 3),
                 CFX_OK, "%s", cfx_error_message());
    cfx_op *f = cfx_op_find("asis::f");
    cr_assert_not_null(f);
    cfx_value fs[4] = {x, cfx_int(2), cfx_tensor_value(m), cfx_none()};
    cr_assert_eq(cfx_op_call(f, fs, 4, 4), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(seen.key, CFX_KEY_CPU);
    cr_expect_eq(seen.kinds[1], CFX_V_DOUBLE);
    cr_expect_float_eq(seen.p, 2.0, 0);
    cr_expect_eq(seen.kinds[2], CFX_V_TENSOR);
    cr_expect_eq(seen.kinds[3], CFX_V_NONE);
    /* the same with every argument taken as it is (a float for the float) */
    cfx_value fs1[4] = {x, cfx_double(2.5), cfx_tensor_value(m), cfx_none()};
    cr_assert_eq(cfx_op_call(f, fs1, 4, 4), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(seen.key, CFX_KEY_CPU);
    cr_expect_float_eq(seen.p, 2.5, 0);
    /* all taken as they are: the Tensor? given a meta tensor chooses Meta */
    cfx_value fs2[4] = {x, cfx_double(0.5), cfx_int(1), cfx_tensor_value(m)};
    cr_assert_eq(cfx_op_call(f, fs2, 4, 4), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(seen.key, CFX_KEY_Meta);
    cr_expect_float_eq(seen.p, 0.5, 0);
    /* a kind no value has is refused, not read as a bit past the kinds */
    cfx_value fs3[4] = {x, {(cfx_value_kind)77, 0, {.i = 0}}, cfx_int(1), cfx_none()};
    cr_expect_eq(cfx_op_call(f, fs3, 4, 4), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "for argument 'p' but instead found type 'unknown'") != NULL, "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_library_free(lib);
    cfx_scope_end(s);
}

/* The boxed call checks a list argument by its conversion's rules without copying it when
 * its items fit the conversion's scratch (256 ints, 128 tensors), and converts a longer one to
 * check it. Either way a wrong item is the same error; PyTorch 2.13:
 *   torch.ops.aten.sum.dim_IntList(x, [0] * 299 + ['a']) -> "aten::sum() Expected a value of
 *   type 'Optional[List[int]]' for argument 'dim' but instead found type 'list'."
 *   torch.ops.aten.cat.default(200 tensors, one of them None) -> "aten::cat() Expected a value of
 *   type 'List[Tensor]' for argument 'tensors' but instead found type 'list'." */
Test(op_call, list_arguments_short_and_long)
{
    cfx_scope s = cfx_scope_begin();
    cfx_value x = cfx_tensor_value(ones(2));
    static cfx_value ints[300], tensors[200];
    for (int j = 0; j < 300; j++)
        ints[j] = cfx_int(0);
    for (int j = 0; j < 200; j++)
        tensors[j] = x;
    cfx_op *sum = cfx_op_find("aten::sum.dim_IntList");
    cfx_value st[4] = {x, cfx_list(ints, 1)};
    cr_expect_eq(cfx_op_call(sum, st, 2, 4), CFX_OK, "%s", cfx_error_message());
    for (uint32_t n = 1; n <= 300; n += 299) { /* the bad item in a short list, then in a long one */
        ints[n - 1] = cfx_string("a");
        cfx_value bad[4] = {x, cfx_list(ints, n)};
        cr_expect_eq(cfx_op_call(sum, bad, 2, 4), CFX_ERR);
        cr_expect(strstr(cfx_error_message(), "aten::sum() Expected a value of type 'Optional[List[int]]' for "
                                              "argument 'dim' but instead found type 'list'.") == cfx_error_message(),
                  "%s", cfx_error_message());
        cfx_error_clear();
        ints[n - 1] = cfx_int(0);
    }
    /* cat of 200 tensors (longer than the scratch), then with a None among them */
    cfx_value cat[2] = {cfx_list(tensors, 200)};
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::cat"), cat, 1, 2), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(cfx_tensor_numel(cat[0].u.t), 400);
    tensors[150] = cfx_none();
    cfx_value cat2[2] = {cfx_list(tensors, 200)};
    cr_expect_eq(cfx_op_call(cfx_op_find("aten::cat"), cat2, 1, 2), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "aten::cat() Expected a value of type 'List[Tensor]' for argument 'tensors' "
                                          "but instead found type 'list'.") == cfx_error_message(),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_scope_end(s);
}
