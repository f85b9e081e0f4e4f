/* test_ops_boxed.c - the compiled boxed entries of the built-in kernels (cfx_kfn_boxed_<id>).
 *
 * Built-in C kernels are registered with a boxed entry generated from ops.def instead of a
 * libffi adapter. It must be indistinguishable from the adapter it replaces: same acceptance,
 * same normalisation, same error text. The adapter is the reference here: for every built-in
 * op's CPU and Meta kernel, stacks of mixed good and bad values (seeded, each with a string
 * somewhere, which no built-in parameter accepts, so no kernel runs) go through both, and the
 * recorded errors must match byte for byte. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/boxing.h"
#include "dispatch/operator_internal.h"
#include "dispatch/ops.h"

static const cfx_value int_items[3] = {{CFX_V_INT, 0, {.i = 2}}, {CFX_V_INT, 0, {.i = 3}}, {CFX_V_INT, 0, {.i = -1}}};
static const cfx_value mixed_items[2] = {{CFX_V_INT, 0, {.i = 2}}, {CFX_V_DOUBLE, 0, {.d = 1.5}}};

/* One value from a pool covering every marker's good and bad kinds. */
static cfx_value pool_value(unsigned r, cfx_tensor *t)
{
    switch (r % 12) {
    case 0: return cfx_tensor_value(t);
    case 1: return cfx_none();
    case 2: return cfx_int(3);
    case 3: return cfx_double(0.5);
    case 4: return cfx_bool(true);
    case 5: return cfx_list(int_items, 3);
    case 6: return cfx_list(mixed_items, 2);
    case 7: return cfx_list(int_items, 0);
    case 8: return cfx_dtype_value(CFX_FLOAT32);
    case 9: return cfx_device_value((cfx_device){CFX_DEVICE_META, -1});
    case 10: return cfx_memory_format_value((cfx_memory_format)0);
    default: return cfx_tensor_value(t);
    }
}

Test(ops_boxed, builtin_kernels_have_compiled_boxed_entries)
{
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK);
    int checked = 0;
    for (int id = 0; id < CFX_OPID_COUNT; id++) {
        cfx_op *op = cfx_builtin_op((cfx_opid)id);
        cr_assert(op);
        const cfx_dispatch_key keys[] = {CFX_KEY_CPU, CFX_KEY_Meta};
        for (int j = 0; j < 2; j++) {
            const cfx_kernel *k = cfx_op_kernel_for(op, cfx_keyset_of(keys[j]));
            if (!cfx_kernel_is_valid(k) || !k->unboxed)
                continue;
            cr_expect(k->boxed && k->boxed != cfx_adapter_call_boxed, "%s: boxed entry is an adapter",
                      op->qualified_name);
            cr_expect(k->inferred_schema, "%s: no inferred schema", op->qualified_name);
            checked++;
        }
    }
    cr_expect_geq(checked, 30, "only %d kernels checked", checked);
}

Test(ops_boxed, conversion_errors_match_the_adapter)
{
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK);
    static const int64_t sizes[2] = {2, 3};
    const cfx_device cpu = {CFX_DEVICE_CPU, -1};
    cfx_tensor *t = cfx_empty(cfx_ints(sizes, 2), cfx_dtype_value(CFX_FLOAT32), cfx_none(), cfx_device_value(cpu));
    cr_assert(t);
    unsigned seed = 12345;
    int compared = 0;
    for (int id = 0; id < CFX_OPID_COUNT; id++) {
        cfx_op *op = cfx_builtin_op((cfx_opid)id);
        const cfx_dispatch_key keys[] = {CFX_KEY_CPU, CFX_KEY_Meta};
        for (int kk = 0; kk < 2; kk++) {
            const cfx_kernel *k = cfx_op_kernel_for(op, cfx_keyset_of(keys[kk]));
            if (!cfx_kernel_is_valid(k) || !k->unboxed)
                continue;
            cfx_adapter *a = cfx_adapter_new(op->schema, k->unboxed);
            cr_assert(a, "%s: %s", op->qualified_name, cfx_error_message());
            int n = op->schema->n_args;
            enum { STACK = 16 }; /* convolution has 9 arguments */
            cr_assert_leq(n, STACK, "%s: %d arguments", op->qualified_name, n);
            for (int iter = 0; iter < 300; iter++) {
                cfx_value s1[STACK], s2[STACK];
                int bad = (int)(seed % (unsigned)n);
                for (int i = 0; i < n; i++) {
                    seed = seed * 1103515245u + 12345u;
                    s1[i] = i == bad ? cfx_string("s") : pool_value(seed >> 16, t);
                }
                /* a string is no conversion error for a str argument (gelu_backward's meta
                 * function takes any approximation) */
                if (op->schema->args[bad].type->kind == CFX_TYPE_STR)
                    continue;
                memcpy(s2, s1, sizeof s1);
                cfx_error_clear();
                int rc1 = k->boxed(k->ctx, op, cfx_keyset_of(keys[kk]), s1);
                char *m1 = strdup(cfx_error_message() ? cfx_error_message() : "");
                cfx_error_clear();
                int rc2 = cfx_adapter_call_boxed(a, op, cfx_keyset_of(keys[kk]), s2);
                const char *m2 = cfx_error_message() ? cfx_error_message() : "";
                cr_expect_eq(rc1, rc2, "%s: status %d vs adapter %d", op->qualified_name, rc1, rc2);
                cr_expect_neq(rc1, CFX_OK, "%s: a string was accepted", op->qualified_name);
                cr_expect_str_eq(m1, m2, "%s", op->qualified_name);
                free(m1);
                cfx_error_clear();
                compared++;
            }
            cfx_adapter_free(a);
        }
    }
    cfx_tensor_release(t);
    cr_expect_geq(compared, 30 * 300);
}
