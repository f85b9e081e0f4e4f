/* test_tensor_table.c - the named, retained tensor table behind cfx_module and
 * cfx_graph_module: order, replacement, lookups by name and by address, index growth. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "dispatch/error.h"
#include "dispatch/tensor_table.h"

static cfx_tensor *scalar(double v) { return cfx_tensor_scalar_double(v, CFX_FLOAT32); }

Test(tensor_table, order_find_and_growth)
{
    cfx_tensor_table tt = {0};
    cfx_tensor *ts[40];
    char name[32];
    for (int i = 0; i < 40; i++) { /* past the first index size (16) twice */
        ts[i] = scalar(i);
        snprintf(name, sizeof name, "layers.%d.weight", i);
        cr_assert_eq(cfx_tensor_table_put(&tt, name, ts[i]), CFX_OK);
        cfx_tensor_release(ts[i]); /* the table keeps it alive */
    }
    cr_assert_eq(cfx_tensor_table_count(&tt), 40);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "layers.%d.weight", i);
        cr_assert_str_eq(cfx_tensor_table_name_at(&tt, i), name);
        cr_assert_eq(cfx_tensor_table_tensor_at(&tt, i), ts[i]);
        cr_assert_eq(cfx_tensor_table_find(&tt, name), i);
        cr_assert_eq(cfx_tensor_table_find_tensor(&tt, ts[i]), i);
    }
    cr_assert_eq(cfx_tensor_table_find(&tt, "layers.40.weight"), -1);
    cr_assert_null(cfx_tensor_table_name_at(&tt, 40));
    cr_assert_null(cfx_tensor_table_tensor_at(&tt, -1));
    cr_assert(cfx_tensor_table_has_prefix(&tt, "layers", 6));
    cr_assert(cfx_tensor_table_has_prefix(&tt, "layers.3", 8));
    cr_assert(cfx_tensor_table_has_prefix(&tt, "layers.3.weight", 15));
    cr_assert_not(cfx_tensor_table_has_prefix(&tt, "layer", 5));
    cr_assert_not(cfx_tensor_table_has_prefix(&tt, "layers.3.w", 10));
    cfx_tensor_table_clear(&tt);
    cr_assert_eq(cfx_tensor_table_count(&tt), 0);
    cr_assert_eq(cfx_tensor_table_find(&tt, "layers.0.weight"), -1);
    cfx_tensor_table_clear(&tt); /* clearing an empty table is fine */
}

Test(tensor_table, replace_keeps_position_and_address_index)
{
    cfx_tensor_table tt = {0};
    cfx_tensor *a = scalar(1), *b = scalar(2), *c = scalar(3);
    cr_assert_eq(cfx_tensor_table_put(&tt, "a", a), CFX_OK);
    cr_assert_eq(cfx_tensor_table_put(&tt, "shared", a), CFX_OK); /* same tensor, second name */
    cr_assert_eq(cfx_tensor_table_put(&tt, "b", b), CFX_OK);
    cr_assert_eq(cfx_tensor_table_find_tensor(&tt, a), 0); /* the first name wins */

    cr_assert_eq(cfx_tensor_table_put(&tt, "a", c), CFX_OK); /* replace: position 0 kept */
    cr_assert_eq(cfx_tensor_table_count(&tt), 3);
    cr_assert_eq(cfx_tensor_table_tensor_at(&tt, 0), c);
    cr_assert_eq(cfx_tensor_table_find_tensor(&tt, c), 0);
    cr_assert_eq(cfx_tensor_table_find_tensor(&tt, a), 1); /* still registered as "shared" */
    cr_assert_eq(cfx_tensor_table_put(&tt, "a", c), CFX_OK); /* same tensor again: no-op */
    cr_assert_eq(cfx_tensor_table_put(&tt, "b", a), CFX_OK);
    cr_assert_eq(cfx_tensor_table_find_tensor(&tt, b), -1); /* b is no longer in the table */
    cr_assert_eq(cfx_tensor_table_find_tensor(&tt, a), 1);
    cfx_tensor_release(a);
    cfx_tensor_release(b);
    cfx_tensor_release(c);
    cfx_tensor_table_clear(&tt); /* LeakSanitizer checks each reference is dropped once */
}
