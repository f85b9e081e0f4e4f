/* test_dispatcher.c - the call path, cfx's own default fallbacks, fallthrough masks,
 * redispatch, invariants and a custom C operator end to end.
 *
 * The byte-for-byte comparisons with PyTorch 2.13 are in test_dispatch_golden.c (which swaps
 * cfx's default fallbacks for 2.13's). Here the defaults stay, and the tests check what they
 * change: every row of a computed table that differs from 2.13's is a fallback row, and the
 * difference is exactly 2.13's own fallbacks versus cfx's (fallbacks.c). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/operator_internal.h"
#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

#define STARTS_WITH(s, lit) (strncmp((s), (lit), sizeof(lit) - 1) == 0)

static int identity_boxed(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op, (void)ks, (void)stack;
    if (ctx)
        ++*(int *)ctx;
    return CFX_OK;
}

static cfx_tensor *meta_tensor(void)
{
    int64_t sz[1] = {2};
    cfx_tensor *t = cfx_tensor_new(sz, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
    cr_assert(t, "%s", cfx_error_message());
    return t;
}

static cfx_tensor *cpu_tensor(void)
{
    float v[3] = {1.0f, -2.0f, 4.5f};
    int64_t sz[1] = {3};
    cfx_tensor *t = cfx_tensor_from_floats(v, sz, 1);
    cr_assert(t, "%s", cfx_error_message());
    return t;
}

/* ---- the custom-op-from-C example (library.h's comment, made real) ------------------------- */

static cfx_tensor *my_scale_cpu(cfx_tensor *x, double s)
{
    cfx_tensor *y = cfx_tensor_new(x->sizes, x->ndim, CFX_FLOAT32, x->device);
    if (!y)
        return NULL;
    const float *src = cfx_tensor_data(x);
    float *dst = cfx_tensor_data(y);
    for (int64_t i = 0; i < cfx_tensor_numel(x); i++)
        dst[i] = (float)(src[i] * s);
    return y; /* cfx_tensor_new already put it in the caller's scope */
}

Test(dispatcher, custom_op_from_c_in_a_few_lines)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "myns");
    cr_assert_eq(cfx_library_def(lib, "scale(Tensor x, float s) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL(lib, "scale", CFX_KEY_CPU, my_scale_cpu), CFX_OK, "%s", cfx_error_message());

    cfx_op *op = cfx_op_find("myns::scale");
    cr_assert(op);
    cfx_tensor *x = cpu_tensor(); /* made outside the scope: ours to release */
    cfx_scope sc = cfx_scope_begin();
    cfx_value stack[2] = {cfx_tensor_value(x), cfx_double(2.5)};
    cr_assert_eq(cfx_op_call(op, stack, 2, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(stack[0].kind, CFX_V_TENSOR);
    cfx_tensor *y = stack[0].u.t;
    cr_assert_neq(y, x);
    cr_expect_float_eq(cfx_tensor_get_double(y, 0), 2.5, 1e-6);
    cr_expect_float_eq(cfx_tensor_get_double(y, 1), -5.0, 1e-6);
    cr_expect_float_eq(cfx_tensor_get_double(y, 2), 11.25, 1e-6);

    /* the typed fast path hands back the C function itself */
    stack[0] = cfx_tensor_value(x);
    stack[1] = cfx_double(2.0);
    cfx_keyset ks;
    const cfx_kernel *k = cfx_dispatch_select(op, stack, &ks);
    cr_assert(k);
    cr_expect_eq(k->unboxed, (cfx_fnptr)my_scale_cpu);
    cr_expect_eq(cfx_keyset_highest_priority(ks), CFX_KEY_CPU);

    /* the dump shows the C kernel's inferred schema and both entry points */
    char *dump = cfx_op_dump_state(op);
    char want[256];
    snprintf(want, sizeof want, "CPU: registered at %s:", __FILE__);
    cr_expect(strstr(dump, want), "%s", dump);
    cr_expect(strstr(dump, ":: (Tensor _0, float _1) -> Tensor _0 [ boxed unboxed ]\n"), "%s", dump);
    free(dump);
    cfx_tensor_release(x);
    cfx_scope_end(sc);
    cfx_library_free(lib);
    cr_expect_null(cfx_op_find("myns::scale"));
}

Test(dispatcher, call_fills_defaults_and_checks_arity)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "dflt", CFX_KEY_Undefined, "/dev/null", 3);
    cr_assert_eq(cfx_library_def(lib, "scale(Tensor x, float s=2.0) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL(lib, "scale", CFX_KEY_CPU, my_scale_cpu), CFX_OK);
    cfx_op *op = cfx_op_find("dflt::scale");
    cfx_tensor *x = cpu_tensor();
    cfx_scope sc = cfx_scope_begin();
    cfx_value stack[3] = {cfx_tensor_value(x)};
    cr_assert_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(stack[0].u.t, 2), 9.0, 1e-6);

    /* PyTorch's argument-binding texts (torch.ops.ns.op(...)) */
    stack[0] = cfx_tensor_value(x);
    cr_expect_eq(cfx_op_call(op, stack, 3, COUNT_OF(stack)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "dflt::scale() expected at most 2 argument(s) but received 3 argument(s). "
                                          "Declaration: dflt::scale(Tensor x, float s=2.) -> Tensor");
    cfx_error_clear();
    cr_expect_eq(cfx_op_call(op, stack, 0, COUNT_OF(stack)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "dflt::scale() is missing value for argument 'x'. "
                                          "Declaration: dflt::scale(Tensor x, float s=2.) -> Tensor");
    cfx_error_clear();
    stack[0] = cfx_none();
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(),
                     "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #0 'x'");
    cfx_error_clear();
    /* the fast path lets a NULL from a failed call propagate without a new message */
    stack[0] = cfx_tensor_value(NULL);
    cfx_keyset ks;
    cr_expect_null(cfx_dispatch_select(op, stack, &ks));
    cr_expect_not(cfx_error_occurred());
    cfx_tensor_release(x);
    cfx_scope_end(sc);
    cfx_library_free(lib);
}

/* ---- cfx's own default fallbacks ----------------------------------------------------------- */

/* The computed table of a CPU-only op with cfx's defaults: the CPU kernel, then a row from
 * fallbacks.c for each key 2.13 has a fallback for (but Meta and the functionalities cfx does
 * not implement) and for the whole Autograd alias, in key order, and nothing else. */
Test(dispatcher, default_fallbacks_table)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "dfb", CFX_KEY_Undefined, "/dev/null", 4);
    cr_assert_eq(cfx_library_def(lib, "b(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "b", CFX_KEY_CPU, identity_boxed, NULL, "/dev/null", 4), CFX_OK);
    cfx_op *op = cfx_op_find("dfb::b");
    char *table = cfx_op_dump_computed_table(op);
    /* Python and PythonTLSSnapshot are real fallbacks (the mode stack), Functionalize the
     * functionalization kernel, Conjugate and Negative the math bits', the rest fall through */
    static const char *keys[] = {
        "BackendSelect", "Python", "Functionalize", "Conjugate", "Negative", "ADInplaceOrView", "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradHIP",
        "AutogradXLA", "AutogradMPS", "AutogradIPU", "AutogradXPU", "AutogradHPU", "AutogradVE", "AutogradLazy",
        "AutogradMTIA", "AutogradMAIA", "AutogradPrivateUse1", "AutogradPrivateUse2", "AutogradPrivateUse3",
        "AutogradMeta", "AutogradNestedTensor", "AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU",
        "AutocastMPS", "AutocastCUDA", "FuncTorchVmapMode", "VmapMode", "PythonTLSSnapshot", "PreDispatch",
        "PythonDispatcher"};
    cfx_buf want;
    cfx_buf_init(&want);
    cfx_buf_puts(&want, "CPU: registered at /dev/null:4 [kernel]\n");
    const char *p = strstr(table, "BackendSelect: ");
    cr_assert(p, "%s", table);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        /* the line number is whatever fallbacks.c has; read it from the row */
        bool through = strcmp(keys[i], "Python") && strcmp(keys[i], "PythonTLSSnapshot") &&
                       strcmp(keys[i], "Functionalize") && strcmp(keys[i], "Conjugate") &&
                       strcmp(keys[i], "Negative");
        char prefix[128];
        snprintf(prefix, sizeof prefix, "%s: %sregistered at dispatch/fallbacks.c:", keys[i],
                 through ? "fallthrough " : "");
        const char *row = strstr(table, prefix);
        cr_assert(row, "no %s row in\n%s", keys[i], table);
        int line = atoi(row + strlen(prefix));
        cfx_buf_printf(&want, "%s%d [backend fallback]\n", prefix, line);
    }
    char *w = cfx_buf_take(&want);
    char *got = table;
    table = NULL;
    cr_expect_str_eq(got, w);
    free(got);
    free(w);
    free(table);

    /* so a CPU-only op on a meta tensor stops at Meta: no kernel there (2.13's Meta fallback
     * would fail there too, asking for a fake impl; fallbacks.c says why cfx has none) */
    cfx_tensor *m = meta_tensor();
    cfx_value stack[1] = {cfx_tensor_value(m)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_ERR_NOTIMPL);
    cr_expect(STARTS_WITH(cfx_error_message(), "Could not run 'dfb::b' with arguments from the 'Meta' backend."),
              "%s", cfx_error_message());
    cr_expect(strstr(cfx_error_message(), "'dfb::b' is only available for these backends: [CPU, BackendSelect, "),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_tensor_release(m);
    cfx_library_free(lib);
}

Test(dispatcher, defaults_can_be_dropped_and_init_is_idempotent)
{
    cfx_dispatcher_init();
    cfx_dispatcher_init();
    int idx = cfx_key_table_index(CFX_KEY_AutogradMeta);
    cr_expect(cfx_kernel_is_fallthrough(cfx_dispatcher_backend_fallback(idx)));
    cfx_dispatcher_drop_default_fallbacks();
    cr_expect_not(cfx_kernel_is_valid(cfx_dispatcher_backend_fallback(idx)));
    cr_expect_not(cfx_kernel_is_valid(cfx_dispatcher_backend_fallback(cfx_key_table_index(CFX_KEY_BackendSelect))));
    cr_expect_null(cfx_dispatcher_backend_fallback(-1));
    cr_expect_null(cfx_dispatcher_backend_fallback(CFX_NUM_RUNTIME_ENTRIES));
}

/* ---- masks, fallthrough, redispatch ---------------------------------------------------------- */

/* A fallthrough on AutogradCPU only (a made-up layout: CPU and Meta then differ). The op's per-backend
 * masks then differ, a CPU call skips AutogradCPU and a Meta call stops at AutogradMeta (spec
 * 2.4). */
Test(dispatcher, per_backend_fallthrough_masks)
{
    cfx_dispatcher_drop_default_fallbacks();
    cfx_library *fb = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, "/dev/null", 1);
    cr_assert_eq(cfx_library_fallback_at(fb, CFX_KEY_AutogradCPU, NULL, NULL, "/dev/null", 1), CFX_OK);
    cr_assert_eq(cfx_library_fallback_at(fb, CFX_KEY_ADInplaceOrView, NULL, NULL, "/dev/null", 1), CFX_OK);
    cr_assert_eq(cfx_library_fallback_at(fb, CFX_KEY_BackendSelect, NULL, NULL, "/dev/null", 1), CFX_OK);
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "pbm", CFX_KEY_Undefined, "/dev/null", 2);
    cr_assert_eq(cfx_library_def(lib, "a(Tensor x) -> Tensor"), CFX_OK);
    int cpu_calls = 0, meta_calls = 0;
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_CPU, identity_boxed, &cpu_calls, "/dev/null", 2), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_Meta, identity_boxed, &meta_calls, "/dev/null", 2), CFX_OK);
    cfx_op *op = cfx_op_find("pbm::a");
    cr_expect(op->per_backend_masks_differ);
    cr_expect_not(cfx_keyset_has(op->non_fallthrough_per_backend[CFX_BACKEND_CPU - 1], CFX_KEY_AutogradCPU));
    cr_expect(cfx_keyset_has(op->non_fallthrough_per_backend[CFX_BACKEND_META - 1], CFX_KEY_AutogradMeta));

    cfx_tensor *c = cpu_tensor(), *m = meta_tensor();
    cfx_value stack[1] = {cfx_tensor_value(c)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(cpu_calls, 1);
    stack[0] = cfx_tensor_value(m);
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_ERR_NOTIMPL);
    cr_expect(strstr(cfx_error_message(), "from the 'AutogradMeta' backend"), "%s", cfx_error_message());
    cfx_error_clear();
    /* a per-op fallthrough on AutogradMeta changes only Meta's mask */
    cr_assert_eq(cfx_library_impl_fallthrough_at(lib, "a", CFX_KEY_AutogradMeta, "/dev/null", 2), CFX_OK);
    cr_expect_not(cfx_keyset_has(op->non_fallthrough_per_backend[CFX_BACKEND_META - 1], CFX_KEY_AutogradMeta));
    cr_expect(cfx_keyset_has(op->non_fallthrough_per_backend[CFX_BACKEND_CUDA - 1], CFX_KEY_AutogradCUDA));
    cr_expect(op->per_backend_masks_differ);
    stack[0] = cfx_tensor_value(m);
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(meta_calls, 1);
    cr_expect_eq(cfx_op_check_invariants(op), CFX_OK);
    cfx_tensor_release(c);
    cfx_tensor_release(m);
    cfx_library_free(lib);
    cfx_library_free(fb);
}

/* A key with neither kernel nor fallback stops the call; a per-op fallthrough unblocks it. */
Test(dispatcher, fallthrough_kernel_is_masked_not_called)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "ftk", CFX_KEY_Undefined, "/dev/null", 6);
    cr_assert_eq(cfx_library_def(lib, "a(Tensor x) -> Tensor"), CFX_OK);
    int calls = 0;
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_CPU, identity_boxed, &calls, "/dev/null", 6), CFX_OK);
    cfx_op *op = cfx_op_find("ftk::a");
    cfx_key_guard g;
    cfx_include_keys_begin(&g, cfx_keyset_of(CFX_KEY_Tracer));
    cfx_tensor *c = cpu_tensor();
    cfx_value stack[1] = {cfx_tensor_value(c)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_ERR_NOTIMPL);
    cr_expect(strstr(cfx_error_message(), "with arguments from the 'Tracer' backend"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_assert_eq(cfx_library_impl_fallthrough_at(lib, "a", CFX_KEY_Tracer, "/dev/null", 6), CFX_OK);
    stack[0] = cfx_tensor_value(c);
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(calls, 1);
    /* forcing the fallthrough kernel itself gives c10's message */
    const cfx_kernel *k = &op->table[cfx_key_table_index(CFX_KEY_Tracer)];
    cr_expect(cfx_kernel_is_fallthrough(k));
    cr_expect_eq(k->boxed(k->ctx, op, cfx_keyset_of(CFX_KEY_Tracer), stack), CFX_ERR);
    cr_expect(STARTS_WITH(cfx_error_message(), "fallthrough_kernel was executed but it should have been short-circuited"));
    cfx_error_clear();
    cfx_key_guard_end(&g);
    cfx_tensor_release(c);
    cfx_library_free(lib);
}

typedef struct redispatch_ctx {
    int autograd_calls, cpu_calls;
} redispatch_ctx;

static int autograd_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    ((redispatch_ctx *)ctx)->autograd_calls++;
    return cfx_op_redispatch(op, cfx_keyset_and(ks, cfx_keyset_full_after(CFX_KEY_AutogradCPU)), stack);
}

static int cpu_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op, (void)stack;
    cr_expect_not(cfx_keyset_has(ks, CFX_KEY_AutogradCPU));
    ((redispatch_ctx *)ctx)->cpu_calls++;
    return CFX_OK;
}

Test(dispatcher, kernel_redispatches_below_itself)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "rd", CFX_KEY_Undefined, "/dev/null", 7);
    cr_assert_eq(cfx_library_def(lib, "a(Tensor x) -> Tensor"), CFX_OK);
    redispatch_ctx rc = {0, 0};
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_Autograd, autograd_kernel, &rc, "/dev/null", 7), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_CPU, cpu_kernel, &rc, "/dev/null", 7), CFX_OK);
    cfx_op *op = cfx_op_find("rd::a");
    cfx_tensor *c = cpu_tensor();
    cfx_value stack[1] = {cfx_tensor_value(c)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(rc.autograd_calls, 1);
    cr_expect_eq(rc.cpu_calls, 1);
    cfx_tensor_release(c);
    cfx_library_free(lib);
}

/* CIA + SparseCPU: the AutogradOther slot is the ambiguity kernel, and calling it explains. */
Test(dispatcher, ambiguous_autogradother_call)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "amb", CFX_KEY_Undefined, "/dev/null", 8);
    cr_assert_eq(cfx_library_def(lib, "a(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_CompositeImplicitAutograd, identity_boxed, NULL, "/dev/null", 8),
                 CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_SparseCPU, identity_boxed, NULL, "/dev/null", 8), CFX_OK);
    cfx_op *op = cfx_op_find("amb::a");
    cfx_tensor *t = meta_tensor();
    t->keys = cfx_keyset_or(cfx_keyset_of(CFX_KEY_MkldnnCPU), cfx_keyset_of(CFX_KEY_AutogradOther)); /* an mkldnn tensor */
    cfx_value stack[1] = {cfx_tensor_value(t)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_ERR);
    cr_expect(STARTS_WITH(cfx_error_message(), "amb::a has kernels registered to both CompositeImplicitAutograd and a "
                                               "backend mapped to AutogradOther."),
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_tensor_release(t);
    cfx_library_free(lib);
}

/* A Tensor[] argument contributes its elements' keys; an empty list dispatches to Undefined,
 * which a CompositeExplicitAutograd kernel covers (spec 2.5). */
Test(dispatcher, tensor_list_arguments)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "tl", CFX_KEY_Undefined, "/dev/null", 9);
    cr_assert_eq(cfx_library_def(lib, "a(Tensor[] xs, Tensor? y=None) -> Tensor"), CFX_OK);
    int cea = 0, meta = 0;
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_CompositeExplicitAutograd, identity_boxed, &cea, "/dev/null", 9),
                 CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_Meta, identity_boxed, &meta, "/dev/null", 9), CFX_OK);
    cfx_op *op = cfx_op_find("tl::a");
    cfx_tensor *m = meta_tensor();
    cfx_value items[2] = {cfx_tensor_value(m), cfx_tensor_value(m)};
    cfx_value stack[2] = {cfx_list(items, 2)};
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(meta, 1);
    stack[0] = cfx_list(items, 0);
    cr_expect_eq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK, "%s", cfx_error_message());
    cr_expect_eq(cea, 1);
    cfx_keyset ks;
    stack[0] = cfx_list(items, 0);
    stack[1] = cfx_tensor_value(m); /* the optional tensor counts too */
    const cfx_kernel *k = cfx_dispatch_select(op, stack, &ks);
    cr_assert(k);
    cr_expect_eq(k->ctx, &meta);
    cfx_tensor_release(m);
    cfx_library_free(lib);
}

/* ---- invariants ------------------------------------------------------------------------------ */

Test(dispatcher, broken_table_reports_canonical_state)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "inv", CFX_KEY_Undefined, "/dev/null", 10);
    cr_assert_eq(cfx_library_def(lib, "a(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(lib, "a", CFX_KEY_CPU, identity_boxed, NULL, "/dev/null", 10), CFX_OK);
    cfx_op *op = cfx_op_find("inv::a");
    cr_expect_eq(cfx_op_check_invariants(op), CFX_OK);
    int idx = cfx_key_table_index(CFX_KEY_CPU);
    cfx_kernel saved = op->table[idx];
    op->table[idx] = (cfx_kernel){0};
    cr_expect_eq(cfx_op_check_invariants(op), CFX_ERR);
    char *state = cfx_op_dump_state(op), *table = cfx_op_dump_computed_table(op);
    char want[8192];
    snprintf(want, sizeof want, "Canonical state\n~~~~~~~~~~~\n%s\n\nComputed table:\n~~~~~~~~~~~\n%s", state, table);
    cr_expect_str_eq(cfx_error_message(), want);
    cfx_error_clear();
    /* reportError checks invariants first: a missing-kernel error on a broken op says so */
    cfx_tensor *c = cpu_tensor();
    cfx_value stack[1] = {cfx_tensor_value(c)};
    cr_expect_neq(cfx_op_call(op, stack, 1, COUNT_OF(stack)), CFX_OK);
    cr_expect_str_eq(cfx_error_message(), want);
    cfx_error_clear();
    op->table[idx] = saved;
    cr_expect_eq(cfx_dispatcher_check_all_invariants(), CFX_OK);
    free(state);
    free(table);
    cfx_tensor_release(c);
    cfx_library_free(lib);
}

/* ---- threads --------------------------------------------------------------------------------- */

static void *register_many(void *arg)
{
    char ns[16];
    snprintf(ns, sizeof ns, "thr%d", *(int *)arg);
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, ns, CFX_KEY_Undefined, "/dev/null", 11);
    for (int i = 0; i < 200; i++) {
        char schema[64];
        snprintf(schema, sizeof schema, "op%d(Tensor x) -> Tensor", i);
        if (cfx_library_def(lib, schema) != CFX_OK)
            return NULL;
        snprintf(schema, sizeof schema, "op%d", i);
        if (cfx_library_impl_boxed_at(lib, schema, CFX_KEY_CPU, identity_boxed, NULL, "/dev/null", 11) != CFX_OK)
            return NULL;
    }
    return lib;
}

Test(dispatcher, concurrent_registration)
{
    pthread_t th[4];
    int ids[4] = {0, 1, 2, 3};
    int before = cfx_op_list(NULL, 0);
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, register_many, &ids[i]);
    cfx_library *libs[4];
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        libs[i] = r;
        cr_assert(libs[i]);
    }
    cr_expect_eq(cfx_op_list(NULL, 0), before + 800);
    cr_expect_not_null(cfx_op_find("thr3::op199"));
    cr_expect_eq(cfx_dispatcher_check_all_invariants(), CFX_OK, "%s", cfx_error_message());
    for (int i = 0; i < 4; i++)
        cfx_library_free(libs[i]);
    cr_expect_eq(cfx_op_list(NULL, 0), before);
    cr_expect_null(cfx_op_find("thr0::op0"));
}

static void keep_quiet(const char *msg, void *ctx) { (void)msg, (void)ctx; }

static cfx_tensor *identity_unboxed(cfx_tensor *x) { return x; }

/* ---- table maintenance under churn -------------------------------------------------------- */

/* Random registrations and removals on every kind of key (runtime, alias, catch-all,
 * fallthrough, backend fallbacks) must leave the incrementally maintained table equal to the
 * one computed from scratch after every single step. */
Test(dispatcher, random_churn_keeps_invariants)
{
    static const cfx_dispatch_key keys[] = {
        CFX_KEY_Undefined, CFX_KEY_CPU, CFX_KEY_CUDA, CFX_KEY_Meta, CFX_KEY_XLA, CFX_KEY_Lazy, CFX_KEY_MTIA,
        CFX_KEY_FPGA, CFX_KEY_SparseCPU, CFX_KEY_SparseCsrCPU, CFX_KEY_QuantizedCPU, CFX_KEY_MkldnnCPU,
        CFX_KEY_NestedTensorCPU, CFX_KEY_AutogradCPU, CFX_KEY_AutogradMeta, CFX_KEY_AutogradMTIA,
        CFX_KEY_AutogradOther, CFX_KEY_AutogradNestedTensor, CFX_KEY_Functionalize, CFX_KEY_Tracer,
        CFX_KEY_BackendSelect, CFX_KEY_FuncTorchBatched, CFX_KEY_Autograd, CFX_KEY_CompositeImplicitAutograd,
        CFX_KEY_FuncTorchBatchedDecomposition, CFX_KEY_CompositeImplicitAutogradNestedTensor,
        CFX_KEY_CompositeExplicitAutograd, CFX_KEY_CompositeExplicitAutogradNonFunctional};
    static const cfx_dispatch_key fb_keys[] = {CFX_KEY_AutogradMeta, CFX_KEY_Tracer, CFX_KEY_Functionalize,
                                               CFX_KEY_CPU, CFX_KEY_AutogradOther, CFX_KEY_Meta};
    enum { NK = sizeof keys / sizeof keys[0], NF = sizeof fb_keys / sizeof fb_keys[0], MAXL = 48 };
    cfx_dispatcher_drop_default_fallbacks();
    cfx_library *def = cfx_library_new(CFX_LIB_DEF, "churn", CFX_KEY_Undefined, "/dev/null", 1);
    int def_line = __LINE__ + 1;
    cr_assert_eq(cfx_library_def(def, "a(Tensor x) -> Tensor"), CFX_OK);
    cfx_op *op = cfx_op_find("churn::a");
    cfx_library *libs[MAXL] = {0};
    cfx_library *fbs[NF] = {0};
    cfx_set_warning_handler(keep_quiet, NULL);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int step = 0; step < 3000; step++) {
        test_rand(&rng);
        int what = (int)(rng % 10), slot = (int)((rng >> 8) % MAXL), ki = (int)((rng >> 16) % NK);
        if (what < 5 && !libs[slot]) {
            libs[slot] = cfx_library_new(CFX_LIB_IMPL, "churn", CFX_KEY_Undefined, "/dev/null", step);
            int kind = (int)((rng >> 32) % 4), rc;
            if (kind == 0)
                rc = cfx_library_impl_fallthrough_at(libs[slot], "a", keys[ki], "/dev/null", step);
            else if (kind == 1)
                rc = cfx_library_impl_at(libs[slot], "a", keys[ki], (cfx_fnptr)identity_unboxed, "/dev/null", step);
            else
                rc = cfx_library_impl_boxed_at(libs[slot], "a", keys[ki], identity_boxed, NULL, "/dev/null", step);
            cr_assert_eq(rc, CFX_OK, "%s", cfx_error_message());
        } else if (what < 8 && libs[slot]) {
            cfx_library_free(libs[slot]);
            libs[slot] = NULL;
        } else if (what == 8 && (rng >> 48) % 8 == 0) {
            /* the def comes and goes: C kernels lose and regain their boxed adapters */
            if (def) {
                cfx_library_free(def);
                def = NULL;
            } else {
                def = cfx_library_new(CFX_LIB_DEF, "churn", CFX_KEY_Undefined, "/dev/null", 1);
                def_line = __LINE__ + 1;
                cr_assert_eq(cfx_library_def(def, "a(Tensor x) -> Tensor"), CFX_OK);
            }
        } else {
            int fi = (int)((rng >> 24) % NF);
            if (fbs[fi]) {
                cfx_library_free(fbs[fi]);
                fbs[fi] = NULL;
            } else {
                fbs[fi] = cfx_library_new(CFX_LIB_IMPL, "_", fb_keys[fi], "/dev/null", step);
                cr_assert_eq(cfx_library_fallback_at(fbs[fi], CFX_KEY_Undefined, (rng >> 40) % 2 ? NULL : identity_boxed,
                                                     NULL, "/dev/null", step),
                             CFX_OK, "%s", cfx_error_message());
            }
        }
        cfx_op *ops[8];
        op = cfx_op_find("churn::a");
        if (!op && cfx_op_list_dangling(ops, 8) == 1)
            op = ops[0];
        if (op)
            cr_assert_eq(cfx_op_check_invariants(op), CFX_OK, "step %d: %s", step, cfx_error_message());
    }
    if (!def) {
        def = cfx_library_new(CFX_LIB_DEF, "churn", CFX_KEY_Undefined, "/dev/null", 1);
        def_line = __LINE__ + 1;
        cr_assert_eq(cfx_library_def(def, "a(Tensor x) -> Tensor"), CFX_OK);
    }
    op = cfx_op_find("churn::a");
    for (int i = 0; i < MAXL; i++)
        cfx_library_free(libs[i]);
    for (int i = 0; i < NF; i++)
        cfx_library_free(fbs[i]);
    /* all kernels gone, the def stays */
    char *dump = cfx_op_dump_state(op);
    char want[256];
    snprintf(want, sizeof want, "name: churn::a\nschema: churn::a(Tensor x) -> Tensor\ndebug: registered at %s:%d\n"
             "alias analysis kind: FROM_SCHEMA\n", __FILE__, def_line);
    cr_expect_str_eq(dump, want);
    free(dump);
    cfx_set_warning_handler(NULL, NULL);
    cfx_library_free(def);
}
