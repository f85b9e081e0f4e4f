/* test_opcheck.c - opcheck (dispatch/opcheck.h) over every registered aten operator, and on
 * custom operators that break their registration on purpose, each caught with its message.
 *
 * The messages of the broken ops are those of PyTorch 2.13's torch.library.opcheck for the same
 * ops written in Python (tools/interop/gen_opcheck.py prints them), after the call's description
 * in the crossref check's format. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/opcheck.h"
#include "tests/dispatch/golden_blocks.h"
#include "tests/test_util.h"

Test(opcheck, every_aten_op, .timeout = 280)
{
    cfx_dispatcher_init();
    int n = cfx_op_list(NULL, 0);
    cfx_op **ops = calloc((size_t)n, sizeof *ops);
    cr_assert(ops);
    n = cfx_op_list(ops, n);
    int checked = 0, failed = 0, samples = 0, ran = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(cfx_op_name(ops[i]), "aten::", 6))
            continue;
        cfx_opcheck_report r;
        checked++;
        if (cfx_opcheck_op(ops[i], CFX_OPCHECK_ALL, &r) != CFX_OK) {
            failed++;
            fprintf(stderr, "opcheck %s: %s\n", cfx_op_name(ops[i]), cfx_error_message());
        }
        cfx_error_clear();
        samples += r.n_samples;
        ran += r.n_ran;
    }
    free(ops);
    fprintf(stderr, "opcheck: %d aten ops, %d samples, %d ran for real, %d failed\n", checked, samples, ran, failed);
    cr_expect_gt(checked, 100);
    cr_expect_eq(failed, 0, "%d of %d aten ops failed opcheck", failed, checked);
}

/* pow.Scalar's expected failure is listed because 2.13 fails it too: it must be the one hit */
Test(opcheck, expected_failure_is_hit)
{
    cfx_opcheck_report r;
    cr_assert_eq(cfx_opcheck_op(cfx_op_find("aten::pow.Scalar"), CFX_OPCHECK_ALL, &r), CFX_OK, "%s",
                 cfx_error_message());
    cr_expect_geq(r.n_xfail, 1);
    cr_expect_gt(r.n_ran, r.n_xfail);
}

/* Every override row and skip names an op that exists (a renamed op would make a row dead). */
Test(opcheck, samples_for_every_op_or_a_reason)
{
    cfx_dispatcher_init();
    cfx_op *ops[1024];
    int n = cfx_op_list(ops, 1024);
    cr_assert_lt(n, 1024);
    int generic = 0, overridden = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(cfx_op_name(ops[i]), "aten::", 6))
            continue;
        cfx_scope s = cfx_scope_begin();
        cfx_opcheck_sample smp[4];
        int k = cfx_opcheck_samples(ops[i], smp, 4);
        cfx_scope_end(s);
        cr_expect(k > 0 || cfx_opcheck_skip_reason(ops[i]), "%s: no samples and no reason", cfx_op_name(ops[i]));
        if (cfx_opcheck_override_reason(ops[i]))
            overridden++;
        else if (k > 0)
            generic++;
    }
    fprintf(stderr, "opcheck samples: %d ops from the generic generators, %d from override rows\n", generic,
            overridden);
    /* The generic generators stay the rule: override rows are for ops whose arguments must agree
     * with each other (pooling windows, convolution and its backward, bags with offsets), now a
     * fifth of the table (281 generic, 73 rows). */
    cr_expect_gt(generic, 3 * overridden);
}

/* ---- custom ops that break their registration ------------------------------------------------ */

static cfx_tensor *copy_of(cfx_tensor *x)
{
    cfx_tensor *r = cfx_tensor_new(x->sizes, x->ndim, cfx_tensor_dtype(x), x->device);
    for (int64_t i = 0; r && !cfx_tensor_is_meta(x) && i < cfx_tensor_numel(x); i++)
        ((float *)cfx_tensor_data(r))[i] = (float)cfx_tensor_get_double(x, i);
    return r;
}
static cfx_tensor *meta_like(cfx_tensor *x) { return cfx_tensor_new(x->sizes, x->ndim, cfx_tensor_dtype(x), x->device); }

/* a Meta kernel lying about strides */
static cfx_tensor *liar_meta(cfx_tensor *x)
{
    return cfx_tensor_new_strided(x->sizes, (const int64_t[]){1, x->sizes[0]}, 2, cfx_tensor_dtype(x), x->device);
}
/* a kernel mutating an argument that is not (a!) */
static cfx_tensor *mutator_cpu(cfx_tensor *x)
{
    ((float *)cfx_tensor_data(x))[0] += 1;
    return copy_of(x);
}
/* a kernel returning a view of an argument its schema does not alias */
static cfx_tensor *view_of(cfx_tensor *x) { return cfx_tensor_new_view(x, x->sizes, x->strides, x->ndim, x->storage_offset); }
/* a view op returning its input object itself */
static cfx_tensor *itself(cfx_tensor *x) { return cfx_autorelease(cfx_tensor_retain(x)); }
/* a Meta kernel that rejects what the CPU kernel takes */
static cfx_tensor *picky_meta(cfx_tensor *x)
{
    (void)x;
    cfx_error_set(CFX_ERR, NULL, "picky: no");
    return NULL;
}

static cfx_library *broken_ops(void)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "opcheck_test");
    cr_assert(lib);
    static const struct {
        const char *schema, *name;
        void *cpu, *meta;
    } ops[] = {
        {"liar(Tensor x) -> Tensor", "liar", (void *)copy_of, (void *)liar_meta},
        {"mutator(Tensor x) -> Tensor", "mutator", (void *)mutator_cpu, (void *)meta_like},
        {"sneaky_alias(Tensor x) -> Tensor", "sneaky_alias", (void *)view_of, (void *)meta_like},
        {"returns_input(Tensor(a) x) -> Tensor(a)", "returns_input", (void *)itself, (void *)itself},
        {"fake_view(Tensor(a) x) -> Tensor(a)", "fake_view", (void *)copy_of, (void *)view_of},
        {"picky(Tensor x) -> Tensor", "picky", (void *)copy_of, (void *)picky_meta},
        {"honest_view(Tensor(a) x) -> Tensor(a)", "honest_view", (void *)view_of, (void *)view_of},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        cr_assert_eq(cfx_library_def(lib, ops[i].schema), CFX_OK, "%s", cfx_error_message());
        cr_assert_eq(cfx_library_impl_at(lib, ops[i].name, CFX_KEY_CPU, (cfx_fnptr)ops[i].cpu, __FILE__, __LINE__),
                     CFX_OK, "%s", cfx_error_message());
        cr_assert_eq(cfx_library_impl_at(lib, ops[i].name, CFX_KEY_Meta, (cfx_fnptr)ops[i].meta, __FILE__, __LINE__),
                     CFX_OK, "%s", cfx_error_message());
    }
    return lib;
}

static char *expected(const char *name) { return golden_block("tests/data/opcheck.txt", name, "error"); }

/* opcheck of op on a (2, 3) float32 input: the message, which must fail; the input untouched */
static void check_broken(const char *name, const char *want)
{
    cfx_library *lib = broken_ops();
    char qn[64];
    snprintf(qn, sizeof qn, "opcheck_test::%s", name);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_tensor_from_floats((const float[]){0, 1, 2, 3, 4, 5}, (const int64_t[]){2, 3}, 2);
    cfx_value args[1] = {cfx_tensor_value(x)};
    bool ran = true;
    cr_expect_eq(cfx_opcheck(cfx_op_find(qn), args, 1, CFX_OPCHECK_ALL, &ran), CFX_ERR, "%s passed opcheck", name);
    cr_expect_str_eq(cfx_error_message() ? cfx_error_message() : "", want, "%s", name);
    cr_expect_eq(cfx_tensor_get_double(x, 0), 0.0, "opcheck changed the caller's tensor");
    cfx_error_clear();
    cfx_scope_end(s);
    cfx_library_free(lib);
}

static void check_golden(const char *name)
{
    char *want = expected(name);
    cr_assert(want, "no block %s in tests/data/opcheck.txt (tools/interop/gen_opcheck.py)", name);
    size_t n = strlen(want);
    if (n && want[n - 1] == '\n')
        want[n - 1] = 0;
    check_broken(name, want);
    free(want);
}

Test(opcheck, meta_lying_about_strides) { check_golden("liar"); }
Test(opcheck, kernel_mutating_a_const_argument) { check_golden("mutator"); }
Test(opcheck, output_aliasing_a_non_aliased_argument) { check_golden("sneaky_alias"); }
Test(opcheck, view_returning_its_input_object) { check_golden("returns_input"); }

/* No PyTorch text for these two: PyTorch's SchemaCheckMode does not check that a Tensor(a)
 * output aliases (opcheck finds it only when the Meta kernel's aliasing differs), nor does
 * CrossRefFakeMode word a fake-only error (it raises the fake error itself). */
Test(opcheck, view_whose_output_does_not_alias)
{
    check_broken("fake_view", "opcheck_test::fake_view(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)): "
                              "Output 0 is defined to alias argument x but was not aliasing");
}
Test(opcheck, meta_rejecting_what_cpu_takes)
{
    check_broken("picky", "opcheck_test::picky(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)): "
                          "the fake run raised and the real one did not: picky: no");
}

Test(opcheck, honest_custom_op_passes_and_samples_are_generated)
{
    cfx_library *lib = broken_ops();
    cfx_opcheck_report r;
    cr_expect_eq(cfx_opcheck_op(cfx_op_find("opcheck_test::honest_view"), CFX_OPCHECK_ALL, &r), CFX_OK, "%s",
                 cfx_error_message());
    cr_expect_gt(r.n_ran, 5);
    /* and the broken ones fail on generated samples too */
    cr_expect_neq(cfx_opcheck_op(cfx_op_find("opcheck_test::liar"), CFX_OPCHECK_ALL, NULL), CFX_OK);
    cfx_error_clear();
    cr_expect_neq(cfx_opcheck_op(cfx_op_find("opcheck_test::sneaky_alias"), CFX_OPCHECK_SCHEMA, NULL), CFX_OK);
    cfx_error_clear();
    cfx_library_free(lib);
}

/* A real error is not opcheck's failure: the sample is outside the op's domain. */
Test(opcheck, rejected_sample_checks_nothing)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = cfx_tensor_from_floats((const float[]){1, 2, 3, 4, 5, 6}, (const int64_t[]){2, 3}, 2);
    cfx_value args[2] = {cfx_tensor_value(a), cfx_tensor_value(a)};
    bool ran = true;
    cr_expect_eq(cfx_opcheck(cfx_op_find("aten::mm"), args, 2, CFX_OPCHECK_ALL, &ran), CFX_OK, "%s",
                 cfx_error_message());
    cr_expect(!ran);
    cr_expect(!cfx_error_occurred());
    cfx_scope_end(s);
}
