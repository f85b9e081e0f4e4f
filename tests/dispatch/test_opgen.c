/* test_opgen.c - the op table generator on a table of its own (ops_test.def): schemas the
 * built-in table does not have yet (64 arguments, Tensor?[], Tensor[] in and out, int / bool /
 * Scalar / no returns, several returns of mixed types, every kind of default), each called
 * through its generated entry point, its convenience macro, and boxed through cfx_op_call, so
 * the generated boxed entry runs too. */
#include <criterion/criterion.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/ops.h"
#include "dispatch/ops_table.h"
#include "dispatch/scope.h"
#include "tests/dispatch/ops_test_gen_kernels.h"

static cfx_tensor *vec(int64_t n, double v)
{
    cfx_tensor *t = cfx_tensor_new((int64_t[]){n}, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    for (int64_t i = 0; t && i < n; i++)
        ((float *)cfx_tensor_data(t))[i] = (float)v;
    return cfx_autorelease(t);
}

/* ---- kernels ------------------------------------------------------------------------------ */

static int64_t wide_sum; /* what the last cfxtest_wide call saw */
static double wide_last;

cfx_tensor *kernel_wide(cfx_tensor *x, int64_t a1, int64_t a2, int64_t a3, int64_t a4, int64_t a5, int64_t a6,
                         int64_t a7, int64_t a8, int64_t a9, int64_t a10, int64_t a11, int64_t a12, int64_t a13,
                         int64_t a14, int64_t a15, int64_t a16, int64_t a17, int64_t a18, int64_t a19, int64_t a20,
                         int64_t a21, int64_t a22, int64_t a23, int64_t a24, int64_t a25, int64_t a26, int64_t a27,
                         int64_t a28, int64_t a29, int64_t a30, int64_t a31, int64_t a32, int64_t a33, int64_t a34,
                         int64_t a35, int64_t a36, int64_t a37, int64_t a38, int64_t a39, int64_t a40, int64_t a41,
                         int64_t a42, int64_t a43, int64_t a44, int64_t a45, int64_t a46, int64_t a47, int64_t a48,
                         int64_t a49, int64_t a50, int64_t a51, int64_t a52, int64_t a53, int64_t a54, int64_t a55,
                         int64_t a56, int64_t a57, int64_t a58, int64_t a59, int64_t a60, int64_t a61, int64_t a62,
                         double last)
{
    /* a weighted sum: an argument in the wrong slot changes it */
    int64_t a[] = {a1,  a2,  a3,  a4,  a5,  a6,  a7,  a8,  a9,  a10, a11, a12, a13, a14, a15, a16,
                   a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32,
                   a33, a34, a35, a36, a37, a38, a39, a40, a41, a42, a43, a44, a45, a46, a47, a48,
                   a49, a50, a51, a52, a53, a54, a55, a56, a57, a58, a59, a60, a61, a62};
    wide_sum = 0;
    for (int i = 0; i < 62; i++)
        wide_sum += (i + 1) * a[i];
    wide_last = last;
    return cfx_autorelease(cfx_tensor_retain(x));
}

/* How many indices are given (None entries are NULL). */
cfx_tensor *kernel_pick(cfx_tensor *x, cfx_tensor_list indices)
{
    int64_t given = 0;
    for (int64_t i = 0; i < indices.len; i++)
        given += indices.data[i] != NULL;
    return cfx_tensor_is_meta(x) ? cfx_autorelease(cfx_tensor_new((int64_t[]){given}, 1, CFX_FLOAT32,
                                                                  cfx_device_make(CFX_DEVICE_META)))
                                 : vec(given, (double)indices.len);
}

/* The tensors back in reverse order (dim is added to nothing; it must arrive). */
cfx_tensor_list kernel_unbind(cfx_tensor_list xs, int64_t dim)
{
    cfx_tensor **out = cfx_scope_alloc((size_t)(xs.len + 1) * sizeof *out);
    for (int64_t i = 0; out && i < xs.len; i++)
        out[i] = xs.data[xs.len - 1 - i];
    if (out)
        out[xs.len] = vec(1, (double)dim);
    return (cfx_tensor_list){out, out ? xs.len + 1 : 0};
}

int64_t kernel_count(cfx_tensor *x) { return cfx_tensor_numel(x); }
bool kernel_is_empty(cfx_tensor *x) { return cfx_tensor_numel(x) == 0; }

cfx_value kernel_first(cfx_tensor *x)
{
    if (cfx_tensor_numel(x) == 0) {
        cfx_error_set(CFX_ERR, "cfxtest::first", "first() of an empty tensor");
        return cfx_none();
    }
    return cfx_double(cfx_tensor_get_double(x, 0));
}

void kernel_touch(cfx_tensor *x) { cfx_tensor_bump_version(x); }

static struct {
    bool flag;
    char mode[8];
    cfx_value scale;
    int64_t stride[4], n_stride, sizes[4], n_sizes;
    cfx_dtype dtype;
    cfx_tensor *w;
} pair_saw;

cfxtest_pair_result kernel_pair(cfx_tensor *x, bool flag, const char *mode, cfx_value scale, cfx_int_list stride,
                                 cfx_dtype dtype, cfx_int_list sizes, cfx_tensor *w)
{
    pair_saw.flag = flag;
    snprintf(pair_saw.mode, sizeof pair_saw.mode, "%s", mode);
    pair_saw.scale = scale;
    pair_saw.n_stride = stride.len;
    memcpy(pair_saw.stride, stride.data, (size_t)stride.len * sizeof *stride.data);
    pair_saw.n_sizes = sizes.len;
    memcpy(pair_saw.sizes, sizes.data, (size_t)sizes.len * sizeof *sizes.data);
    pair_saw.dtype = dtype;
    pair_saw.w = w;
    return (cfxtest_pair_result){cfx_autorelease(cfx_tensor_retain(x)), cfx_tensor_numel(x) + (flag ? 100 : 0)};
}

cfxtest_triple_result kernel_triple(cfx_tensor *x)
{
    (void)x;
    return (cfxtest_triple_result){{vec(1, 1), vec(2, 2), vec(3, 3)}};
}

cfx_tensor *kernel_twice(cfx_tensor *x) { return cfx_add(x, x); }

/* ---- tests -------------------------------------------------------------------------------- */

static void setup(void) { cr_assert_eq(cfx_op_table_register(&cfxtest_ops_table), CFX_OK, "%s", cfx_error_message()); }

TestSuite(opgen, .init = setup);

Test(opgen, registers_schemas_kernels_and_tags)
{
    cfx_op *first = cfx_op_find("cfxtest::first");
    cr_assert(first);
    cr_expect(cfx_op_has_tag(first, CFX_TAG_data_dependent_output));
    cr_expect(!cfx_op_has_tag(cfx_op_find("cfxtest::count"), CFX_TAG_data_dependent_output));
    cfx_op *twice = cfx_op_find("cfxtest::twice");
    cr_expect(cfx_op_has_tag(twice, CFX_TAG_pointwise) && cfx_op_has_tag(twice, CFX_TAG_core));
    char *dump = cfx_op_dump_state(cfx_op_find("cfxtest::pick"));
    cr_expect(strstr(dump, "CPU: registered at tests/dispatch/ops_test.def:"), "%s", dump);
    cr_expect(strstr(dump, "Meta: registered at tests/dispatch/ops_test.def:"), "%s", dump);
    cr_expect(strstr(dump, ":: (Tensor _0, Tensor?[] _1) -> Tensor _0 [ boxed unboxed ]"), "%s", dump);
    free(dump);
}

Test(opgen, sixty_four_arguments)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = vec(2, 1);
    /* the macro with 63 arguments: `last` takes its default */
    cfx_tensor *r = cfxtest_wide(x, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                                 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
                                 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62);
    cr_assert_eq(r, x, "%s", cfx_error_message());
    int64_t want = 0;
    for (int i = 1; i <= 62; i++)
        want += (int64_t)i * i;
    cr_expect_eq(wide_sum, want);
    cr_expect_eq(wide_last, 0.5);
    /* boxed: all 64, through the compiled boxed entry */
    cfx_value stack[64];
    stack[0] = cfx_tensor_value(x);
    for (int i = 1; i <= 62; i++)
        stack[i] = cfx_int(2 * i);
    stack[63] = cfx_int(3); /* an int for a float: converted, as torch.ops does */
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::wide"), stack, 64, 64), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(stack[0].u.t, x);
    cr_expect_eq(wide_sum, 2 * want);
    cr_expect_eq(wide_last, 3.0);
    cfx_scope_end(s);
}

Test(opgen, optional_tensor_list)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = vec(3, 0), *i0 = vec(1, 0);
    cfx_tensor *r = cfxtest_pick(x, CFX_TENSORS(i0, NULL, i0));
    cr_assert(r, "%s", cfx_error_message());
    cr_expect_eq(r->sizes[0], 2); /* two given */
    cr_expect_eq(cfx_tensor_get_double(r, 0), 3.0);
    /* boxed: None items */
    cfx_value items[3] = {cfx_none(), cfx_tensor_value(i0), cfx_none()};
    cfx_value stack[2] = {cfx_tensor_value(x), cfx_list(items, 3)};
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::pick"), stack, 2, 2), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(stack[0].u.t->sizes[0], 1);
    /* a list item of the wrong kind is torch.ops' binding error */
    cfx_value bad[1] = {cfx_int(1)};
    cfx_value stack2[2] = {cfx_tensor_value(x), cfx_list(bad, 1)};
    cr_expect_neq(cfx_op_call(cfx_op_find("cfxtest::pick"), stack2, 2, 2), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "Expected a value of type 'List[Optional[Tensor]]' for argument 'indices'"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_scope_end(s);
}

Test(opgen, tensor_list_in_and_out)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = vec(1, 1), *b = vec(2, 2);
    cfx_tensor_list r = cfxtest_unbind(CFX_TENSORS(a, b), 7);
    cr_assert_eq(r.len, 3, "%s", cfx_error_message());
    cr_expect(r.data[0] == b && r.data[1] == a);
    cr_expect_eq(cfx_tensor_get_double(r.data[2], 0), 7.0);
    cfx_tensor_list d = cfxtest_unbind(CFX_TENSORS(a)); /* dim=0 */
    cr_assert_eq(d.len, 2);
    cr_expect_eq(cfx_tensor_get_double(d.data[1], 0), 0.0);
    /* boxed: the list comes back as a list value */
    cfx_value items[2] = {cfx_tensor_value(a), cfx_tensor_value(b)};
    cfx_value stack[2] = {cfx_list(items, 2)};
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::unbind"), stack, 1, 2), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(stack[0].kind, CFX_V_LIST);
    cr_assert_eq(stack[0].len, 3);
    cr_expect_eq(stack[0].u.items[0].u.t, b);
    cfx_scope_end(s);
}

Test(opgen, int_bool_scalar_and_no_returns)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = vec(4, 2.5), *e = vec(0, 0);
    cr_expect_eq(cfxtest_count(x), 4);
    cr_expect(!cfxtest_is_empty(x));
    cr_expect(cfxtest_is_empty(e));
    cfx_value v = cfxtest_first(x);
    cr_expect(v.kind == CFX_V_DOUBLE && v.u.d == 2.5);
    cr_expect(!cfx_error_occurred());
    v = cfxtest_first(e); /* a kernel that fails by recording an error */
    cr_expect_eq(v.kind, CFX_V_NONE);
    cr_expect_str_eq(cfx_error_message(), "first() of an empty tensor");
    cfx_error_clear();
    uint32_t ver = cfx_tensor_version(x);
    cr_expect_eq(cfxtest_touch(x), CFX_OK);
    cr_expect_eq(cfx_tensor_version(x), ver + 1);
    /* boxed */
    cfx_value stack[1] = {cfx_tensor_value(x)};
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::count"), stack, 1, 1), CFX_OK);
    cr_expect(stack[0].kind == CFX_V_INT && stack[0].u.i == 4);
    stack[0] = cfx_tensor_value(x);
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::is_empty"), stack, 1, 1), CFX_OK);
    cr_expect(stack[0].kind == CFX_V_BOOL && !stack[0].u.b);
    stack[0] = cfx_tensor_value(e);
    cr_expect_neq(cfx_op_call(cfx_op_find("cfxtest::first"), stack, 1, 1), CFX_OK);
    cfx_error_clear();
    stack[0] = cfx_tensor_value(x);
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::touch"), stack, 1, 1), CFX_OK);
    cr_expect_eq(cfx_tensor_version(x), ver + 2);
    cfx_scope_end(s);
}

Test(opgen, defaults_and_mixed_returns)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = vec(3, 1);
    cfxtest_pair_result r = cfxtest_pair(x);
    cr_assert_eq(r.first, x, "%s", cfx_error_message());
    cr_expect_eq(r.count, 3);
    cr_expect(!pair_saw.flag);
    cr_expect_str_eq(pair_saw.mode, "a");
    cr_expect_eq(pair_saw.scale.kind, CFX_V_NONE);
    cr_expect(pair_saw.n_stride == 2 && pair_saw.stride[0] == 1 && pair_saw.stride[1] == 1); /* int[2] stride=1 */
    cr_expect(pair_saw.n_sizes == 2 && pair_saw.sizes[0] == 2 && pair_saw.sizes[1] == 3);
    cr_expect_eq(pair_saw.dtype, CFX_FLOAT32);
    cr_expect_null(pair_saw.w);
    r = cfxtest_pair(x, true, "bc", cfx_double(0.25), CFX_INTS(4, 5), CFX_INT64, CFX_INTS(7), x);
    cr_expect_eq(r.count, 103);
    cr_expect_str_eq(pair_saw.mode, "bc");
    cr_expect(pair_saw.scale.kind == CFX_V_DOUBLE && pair_saw.scale.u.d == 0.25);
    cr_expect(pair_saw.n_stride == 2 && pair_saw.stride[1] == 5);
    cr_expect_eq(pair_saw.dtype, CFX_INT64);
    cr_expect_eq(pair_saw.w, x);
    /* boxed, defaults filled in by the dispatcher, an int for a ScalarType normalised */
    cfx_value stack[8] = {cfx_tensor_value(x), cfx_bool(true)};
    cr_assert_eq(cfx_op_call(cfx_op_find("cfxtest::pair"), stack, 2, 8), CFX_OK, "%s", cfx_error_message());
    cr_expect(stack[0].kind == CFX_V_TENSOR && stack[0].u.t == x);
    cr_expect(stack[1].kind == CFX_V_INT && stack[1].u.i == 103);
    cr_expect(pair_saw.n_stride == 2 && pair_saw.stride[1] == 1); /* the default filled in boxed, too */
    cfxtest_triple_result t = cfxtest_triple(x);
    cr_expect_eq(t.lo->sizes[0], 1);
    cr_expect_eq(t.mid->sizes[0], 2);
    cr_expect_eq(t.hi->sizes[0], 3);
    cr_expect_eq(t.t[2], t.hi);
    cfx_scope_end(s);
}

Test(opgen, composite_kernel_and_renamed_macro)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = vec(2, 1.5);
    cfx_tensor *y = cfxtest_times_two(x);
    cr_assert(y, "%s", cfx_error_message());
    cr_expect_eq(cfx_tensor_get_double(y, 1), 3.0);
    cfx_tensor *m = cfx_autorelease(cfx_tensor_new((int64_t[]){2}, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META)));
    cfx_tensor *ym = cfxtest_times_two(m); /* CompositeExplicitAutograd serves Meta too */
    cr_assert(ym, "%s", cfx_error_message());
    cr_expect(cfx_tensor_is_meta(ym));
    cfx_scope_end(s);
}

Test(opgen, null_tensor_propagates)
{
    cr_expect_null(cfxtest_times_two(NULL));
    cr_expect_eq(cfxtest_count(NULL), 0);
    cr_expect(!cfx_error_occurred());
    cfxtest_pair_result r = cfxtest_pair(NULL);
    cr_expect(!r.first && r.count == 0);
}
