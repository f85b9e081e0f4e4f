/* test_library.c - library lifetimes and the rules that have no PyTorch Python counterpart.
 *
 * PyTorch's own texts are compared in test_dispatch_golden.c. Here: what the C API adds
 * (debug strings from the C call site, NULL propagation, kind/key validation, the libffi
 * adapter of a C kernel following the def), and that freeing libraries leaves the registry
 * exactly as it was. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/operator_internal.h"
#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

static int noop_boxed(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks, (void)stack;
    return CFX_OK;
}

static cfx_tensor *identity(cfx_tensor *x) { return x; }

static cfx_op *find_any(const char *name)
{
    cfx_op *op = cfx_op_find(name);
    if (op)
        return op;
    cfx_op *d[64];
    int n = cfx_op_list_dangling(d, 64);
    for (int i = 0; i < n && i < 64; i++)
        if (strcmp(cfx_op_name(d[i]), name) == 0)
            return d[i];
    return NULL;
}

Test(library, def_fills_namespace_and_records_the_c_call_site)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "ns1");
    int line = __LINE__ + 1;
    cr_assert_eq(cfx_library_def(lib, "foo.bar(Tensor x, *, float scale=1.0) -> Tensor"), CFX_OK, "%s",
                 cfx_error_message());
    cfx_op *op = cfx_op_find("ns1::foo.bar");
    cr_assert(op);
    cr_expect_null(cfx_op_find("ns1::foo"));
    char want[512];
    snprintf(want, sizeof want,
             "name: ns1::foo.bar\nschema: ns1::foo.bar(Tensor x, *, float scale=1.) -> Tensor\n"
             "debug: registered at %s:%d\nalias analysis kind: FROM_SCHEMA\n",
             __FILE__, line);
    char *dump = cfx_op_dump_state(op);
    cr_expect_str_eq(dump, want);
    free(dump);
    cfx_library_free(lib);
    cr_expect_null(find_any("ns1::foo.bar"));
}

Test(library, impl_only_ops_are_invisible_until_def)
{
    cfx_library *impl = cfx_library_new(CFX_LIB_IMPL, "ns2", CFX_KEY_CPU, "/dev/null", 1);
    cr_assert_eq(cfx_library_impl_at(impl, "f", CFX_KEY_Undefined, (cfx_fnptr)identity, "/dev/null", 1), CFX_OK);
    cr_expect_null(cfx_op_find("ns2::f"));
    cfx_op *dang = find_any("ns2::f");
    cr_assert(dang);
    /* no schema yet: the C function has no boxed entry and no inferred schema */
    char *dump = cfx_op_dump_state(dang);
    cr_expect_str_eq(dump, "name: ns2::f\nschema: (none)\nCPU: registered at /dev/null:1 :: (none) [ unboxed ]\n");
    free(dump);

    cfx_library *def = cfx_library_new(CFX_LIB_DEF, "ns2", CFX_KEY_Undefined, "/dev/null", 2);
    cr_assert_eq(cfx_library_def(def, "f(Tensor x) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cfx_op *op = cfx_op_find("ns2::f");
    cr_assert_eq(op, dang);
    dump = cfx_op_dump_state(op);
    cr_expect(strstr(dump, "CPU: registered at /dev/null:1 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"), "%s", dump);
    free(dump);
    const cfx_kernel *k = &op->table[cfx_key_table_index(CFX_KEY_CPU)];
    cr_expect(k->boxed && k->ctx && k->unboxed == (cfx_fnptr)identity);
    cr_expect_eq(cfx_op_check_invariants(op), CFX_OK);

    /* the call goes through the adapter built at def time */
    int64_t sz[1] = {2};
    cfx_tensor *t = cfx_tensor_new(sz, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_value stack[1] = {cfx_tensor_value(t)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(stack[0].u.t, t);
    cfx_tensor_release(t);

    /* the def goes, the adapter goes, the kernel stays */
    cfx_library_free(def);
    cr_expect_null(cfx_op_find("ns2::f"));
    dang = find_any("ns2::f");
    cr_assert(dang);
    k = &dang->table[cfx_key_table_index(CFX_KEY_CPU)];
    cr_expect(!k->boxed && !k->ctx && k->unboxed == (cfx_fnptr)identity);
    cr_expect_eq(cfx_op_check_invariants(dang), CFX_OK);
    cfx_library_free(impl);
    cr_expect_null(find_any("ns2::f"));
}

Test(library, freeing_everything_restores_the_registry)
{
    int ops_before = cfx_op_list(NULL, 0), dangling_before = cfx_op_list_dangling(NULL, 0);
    cfx_library *a = cfx_library_new(CFX_LIB_DEF, "ns3", CFX_KEY_Undefined, "/dev/null", 1);
    cfx_library *b = cfx_library_new(CFX_LIB_FRAGMENT, "ns3", CFX_KEY_Undefined, "/dev/null", 2);
    cfx_library *c = cfx_library_new(CFX_LIB_IMPL, "ns3", CFX_KEY_Meta, "/dev/null", 3);
    cfx_library *d = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, "/dev/null", 4);
    cr_assert(a && b && c && d);
    cr_expect_eq(cfx_library_def(a, "x(Tensor a) -> Tensor"), CFX_OK);
    cr_expect_eq(cfx_library_def(b, "y(Tensor a) -> Tensor"), CFX_OK);
    cr_expect_eq(cfx_library_impl_boxed_at(c, "x", CFX_KEY_Undefined, noop_boxed, NULL, "/dev/null", 3), CFX_OK);
    cr_expect_eq(cfx_library_impl_boxed_at(c, "ns3::z", CFX_KEY_Undefined, noop_boxed, NULL, "/dev/null", 3), CFX_OK);
    cr_expect_eq(cfx_library_impl_at(a, "y", CFX_KEY_CPU, (cfx_fnptr)identity, "/dev/null", 1), CFX_OK);
    /* a wildcard IMPL block takes explicitly namespaced names */
    cr_expect_eq(cfx_library_impl_boxed_at(d, "ns3::x", CFX_KEY_CUDA, noop_boxed, NULL, "/dev/null", 4), CFX_OK);
    cr_expect_eq(cfx_library_fallback_at(d, CFX_KEY_Tracer, noop_boxed, NULL, "/dev/null", 4), CFX_OK);
    cr_expect_eq(cfx_op_list(NULL, 0), ops_before + 2);
    cr_expect_eq(cfx_op_list_dangling(NULL, 0), dangling_before + 1);
    cr_expect(cfx_kernel_is_valid(cfx_dispatcher_backend_fallback(cfx_key_table_index(CFX_KEY_Tracer))));
    cr_expect_eq(cfx_dispatcher_check_all_invariants(), CFX_OK, "%s", cfx_error_message());
    /* in an order unlike creation */
    cfx_library_free(a);
    cfx_library_free(d);
    cfx_library_free(c);
    cfx_library_free(b);
    cr_expect_eq(cfx_op_list(NULL, 0), ops_before);
    cr_expect_eq(cfx_op_list_dangling(NULL, 0), dangling_before);
    cr_expect_not(cfx_kernel_is_valid(cfx_dispatcher_backend_fallback(cfx_key_table_index(CFX_KEY_Tracer))));
    /* and the namespace can be claimed again */
    a = cfx_library_new(CFX_LIB_DEF, "ns3", CFX_KEY_Undefined, "/dev/null", 5);
    cr_expect(a, "%s", cfx_error_message());
    cfx_library_free(a);
}

Test(library, null_propagation_and_validation)
{
    /* a failed library makes every later call fail without a second message */
    cfx_library *bad = cfx_library_new(CFX_LIB_DEF, "_", CFX_KEY_Undefined, "/dev/null", 7);
    cr_expect_null(bad);
    const char *first = "TORCH_LIBRARY: cannot define TORCH_LIBRARY with the wildcard namespace _ (every TORCH_LIBRARY "
                        "defines operators for a distinct namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  "
                        "(Error occurred while processing TORCH_LIBRARY block at /dev/null:7)";
    cr_expect_str_eq(cfx_error_message(), first);
    cr_expect_eq(cfx_library_def(bad, "f(Tensor x) -> Tensor"), CFX_ERR);
    cr_expect_eq(CFX_IMPL(bad, "f", CFX_KEY_CPU, identity), CFX_ERR);
    cr_expect_eq(cfx_library_impl_fallthrough_at(bad, "f", CFX_KEY_CPU, "/dev/null", 1), CFX_ERR);
    cr_expect_eq(CFX_FALLBACK(bad, CFX_KEY_CPU, noop_boxed, NULL), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), first);
    cfx_library_free(NULL);
    cfx_error_clear();

    cr_expect_null(cfx_library_new((cfx_library_kind)7, "x", CFX_KEY_Undefined, "/dev/null", 1));
    cr_expect_str_eq(cfx_error_message(), "could not parse library kind 7");
    cfx_error_clear();
    cr_expect_null(cfx_library_new(CFX_LIB_IMPL, "x", CFX_KEY_StartOfDenseBackends, "/dev/null", 1));
    cfx_error_clear();
    cr_expect_null(cfx_library_new(CFX_LIB_DEF, "x", CFX_KEY_CPU, "/dev/null", 3));
    cr_expect_str_eq(cfx_error_message(), "TORCH_LIBRARY: a TORCH_LIBRARY block cannot have a dispatch key (CPU); use "
                                          "TORCH_LIBRARY_IMPL.  (Error occurred while processing TORCH_LIBRARY block "
                                          "at /dev/null:3)");
    cfx_error_clear();

    cfx_library *imp = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, "/dev/null", 9);
    cr_expect_eq(cfx_library_fallback_at(imp, CFX_KEY_Undefined, NULL, NULL, "/dev/null", 9), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "fallback(...): no dispatch key: give one or declare the block with one.  "
                                          "(Error occurred while processing TORCH_LIBRARY_IMPL block at /dev/null:9)");
    cfx_error_clear();
    cr_expect_eq(cfx_library_impl_boxed_at(imp, "f", CFX_KEY_CPU, noop_boxed, NULL, "/dev/null", 9), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "impl(\"f\", ...): an operator name needs its namespace in a block for every "
                                          "namespace (_).  (Error occurred while processing TORCH_LIBRARY_IMPL block "
                                          "at /dev/null:9)");
    cfx_error_clear();
    cr_expect_eq(cfx_library_impl_boxed_at(imp, "a::f", CFX_KEY_CPU, NULL, NULL, "/dev/null", 9), CFX_ERR);
    cfx_error_clear();
    cfx_library_free(imp);

    cfx_library *def = cfx_library_new(CFX_LIB_DEF, "ns4", CFX_KEY_Undefined, "/dev/null", 10);
    cr_expect_eq(cfx_library_def(def, "f(Tensr x) -> Tensor"), CFX_ERR_PARSE);
    cr_expect(strstr(cfx_error_message(), "unknown type specifier"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_eq(cfx_library_def_at(def, "f(Tensor x) -> Tensor", 9, "/dev/null", 10), CFX_ERR);
    cfx_error_clear();
    int kind = -5;
    cr_expect_eq(cfx_alias_analysis_parse("", &kind), CFX_OK);
    cr_expect_eq(kind, CFX_ALIAS_FROM_SCHEMA);
    cr_expect_eq(cfx_alias_analysis_parse("PURE_FUNCTION", &kind), CFX_OK);
    cr_expect_eq(kind, CFX_ALIAS_PURE_FUNCTION);
    cr_expect_eq(cfx_alias_analysis_parse("INTERNAL_SPECIAL_CASE", &kind), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "could not parse INTERNAL_SPECIAL_CASE");
    cfx_error_clear();
    cfx_library_free(def);
}

/* An alias-key fallback covers every runtime key of the alias, and its library owns them all. */
Test(library, alias_fallback_registers_every_runtime_key)
{
    cfx_dispatcher_drop_default_fallbacks();
    cfx_library *fb = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Autograd, "/dev/null", 12);
    cr_assert_eq(cfx_library_fallback_at(fb, CFX_KEY_Undefined, NULL, NULL, "/dev/null", 12), CFX_OK);
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    int n = cfx_key_expand(CFX_KEY_Autograd, keys, CFX_NUM_RUNTIME_ENTRIES);
    cr_expect_eq(n, 18); /* AutogradOther, the 16 Autograd<Backend> keys, AutogradNestedTensor */
    for (int i = 0; i < n; i++) {
        const cfx_kernel *k = cfx_dispatcher_backend_fallback(cfx_key_table_index(keys[i]));
        cr_expect(cfx_kernel_is_fallthrough(k), "%s", cfx_key_name(keys[i]));
        cr_expect_str_eq(k->debug, "registered at /dev/null:12");
    }
    /* a second one fails on the first key it covers and registers nothing */
    cfx_library *again = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, "/dev/null", 13);
    cr_expect_eq(cfx_library_fallback_at(again, CFX_KEY_Autograd, NULL, NULL, "/dev/null", 13), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "Tried to register multiple backend fallbacks for the same dispatch key "
                                          "AutogradOther; previous registration registered at /dev/null:12, new "
                                          "registration registered at /dev/null:13");
    cfx_error_clear();
    cfx_library_free(again);
    cfx_library_free(fb);
    for (int i = 0; i < n; i++)
        cr_expect_not(cfx_kernel_is_valid(cfx_dispatcher_backend_fallback(cfx_key_table_index(keys[i]))));
}

/* The override warning (2.13: once per process, never for Meta or MTIA) names the first C
 * kernel ever registered as "previous kernel", even for another key, as c10's cpp_signature_
 * does; boxed-only kernels have no such debug. */
static char warned[2048];
static void keep_warning(const char *msg, void *ctx)
{
    (void)ctx;
    snprintf(warned, sizeof warned, "%s", msg);
}

Test(library, override_warning_previous_kernel_rule)
{
    cfx_set_warning_handler(keep_warning, NULL);
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "ns5", CFX_KEY_Undefined, "/dev/null", 20);
    cr_assert_eq(cfx_library_def_at(lib, "g.over(Tensor x) -> Tensor", CFX_ALIAS_FROM_SCHEMA, "/dev/null", 20), CFX_OK);
    /* Meta and MTIA overrides are silent and do not use up the one warning */
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "g.over", CFX_KEY_Meta, noop_boxed, NULL, "/dev/null", 20), CFX_OK);
    cr_assert_eq(cfx_library_impl_at(lib, "g.over", CFX_KEY_Meta, (cfx_fnptr)identity, "/dev/null", 21), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "g.over", CFX_KEY_MTIA, noop_boxed, NULL, "/dev/null", 21), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "g.over", CFX_KEY_MTIA, noop_boxed, NULL, "/dev/null", 21), CFX_OK);
    cr_expect_str_eq(warned, "");
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "g.over", CFX_KEY_CPU, noop_boxed, NULL, "/dev/null", 22), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "g.over", CFX_KEY_CPU, noop_boxed, NULL, "/dev/null", 23), CFX_OK);
    cr_expect_str_eq(warned, "Warning only once for all operators,  other operators may also be overridden.\n"
                             "  Overriding a previously registered kernel for the same operator and the same dispatch key\n"
                             "  operator: ns5::g.over(Tensor x) -> Tensor\n"
                             "    registered at /dev/null:20\n"
                             "  dispatch key: CPU\n"
                             "  previous kernel: registered at /dev/null:21\n"
                             "       new kernel: registered at /dev/null:23");
    /* once: the next override, on any operator, is silent */
    warned[0] = '\0';
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "g.over", CFX_KEY_CPU, noop_boxed, NULL, "/dev/null", 24), CFX_OK);
    cr_expect_str_eq(warned, "");
    cfx_set_warning_handler(NULL, NULL);
    cfx_library_free(lib);
}
