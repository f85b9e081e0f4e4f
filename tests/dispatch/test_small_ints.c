/* test_small_ints.c - uint8, int8 and int16 end to end: names and codes, promotion through an
 * operator (uint8 + int8 is int16, PyTorch's answer), wrapping arithmetic in the dtype,
 * conversions, printing as torch prints them, and safetensors' names. The full promotion table
 * against PyTorch is tests/data/value_promote.txt (test_value.c). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(small_ints, .init = setup);

Test(small_ints, names_and_codes)
{
    cr_assert_eq(CFX_UINT8, 0);
    cr_assert_eq(CFX_INT8, 1);
    cr_assert_eq(CFX_INT16, 2);
    cr_assert_str_eq(cfx_dtype_torch_name(CFX_UINT8), "torch.uint8");
    cfx_dtype d;
    cr_assert(cfx_dtype_parse("torch.int16", &d) && d == CFX_INT16);
    cr_assert(cfx_dtype_parse("short", &d) && d == CFX_INT16);
    cr_assert_eq(cfx_dtype_size(CFX_INT16), 2);
    cr_assert_str_eq(cfx_safetensors_dtype_name(CFX_UINT8), "U8");
    cr_assert_str_eq(cfx_safetensors_dtype_name(CFX_INT8), "I8");
    cr_assert_str_eq(cfx_safetensors_dtype_name(CFX_INT16), "I16");
}

Test(small_ints, arithmetic_and_printing)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = cfx_full(CFX_INTS(2), cfx_int(250), cfx_dtype_value(CFX_UINT8));
    cfx_tensor *b = cfx_full(CFX_INTS(2), cfx_int(-2), cfx_dtype_value(CFX_INT8));
    cr_assert(a && b, "%s", cfx_error_message());
    cfx_tensor *sum = cfx_add(a, b); /* torch: int16 [248, 248] */
    cr_assert(sum, "%s", cfx_error_message());
    cr_assert_eq(sum->dtype, CFX_INT16);
    cr_assert_eq(cfx_tensor_get_double(sum, 0), 248);
    cfx_tensor *twice = cfx_add(a, a); /* uint8 wraps: 244 */
    cr_assert(twice && twice->dtype == CFX_UINT8, "%s", cfx_error_message());
    cr_assert_eq(cfx_tensor_get_double(twice, 1), 244);
    cfx_tensor *f = cfx_to(b, CFX_FLOAT32);
    cr_assert(f && cfx_tensor_get_double(f, 0) == -2.0, "%s", cfx_error_message());
    cfx_buf buf;
    cfx_buf_init(&buf);
    cfx_tensor_print(a, &buf);
    cr_assert_str_eq(buf.data, "tensor([250, 250], dtype=torch.uint8)");
    cfx_buf_free(&buf);
    cfx_scope_end(s);
}
