/* test_fake_cache.c - the fake mode's dispatch cache (fake_cache.c, 2.13's
 * _cached_dispatch_impl): a call seen before is answered from its record without running the
 * Meta kernel, a call the cache cannot describe runs it every time, and a dispatch table
 * change drops the records. The Meta kernels here count their runs. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/library.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(fake_cache, .init = setup);

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static int runs_a, runs_b;

/* A Meta kernel: a new contiguous tensor of x's shape, the run counted in *ctx. */
static int fresh_meta(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op;
    (void)ks;
    (*(int *)ctx)++;
    cfx_tensor *x = stack[0].u.t;
    cfx_tensor *out = cfx_tensor_new(x->sizes, x->ndim, (cfx_dtype)x->dtype, META);
    if (!out)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(out);
    return CFX_OK;
}

/* A Meta kernel returning a view of its input (an aliasing op). */
static int view_meta(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op;
    (void)ks;
    (*(int *)ctx)++;
    cfx_tensor *x = stack[0].u.t;
    stack[0] = cfx_tensor_value(cfx_tensor_new_view(x, x->sizes, x->strides, x->ndim, 0));
    return CFX_OK;
}

static cfx_tensor *call1(const char *name, cfx_tensor *x)
{
    cfx_value st[1] = {cfx_tensor_value(x)};
    if (cfx_op_call(cfx_op_find(name), st, 1, COUNT_OF(st)) != CFX_OK)
        return NULL;
    return st[0].u.t;
}

static cfx_tensor *fake(cfx_fake_mode *m, int64_t a, int64_t b)
{
    int64_t sizes[2] = {a, b};
    return cfx_fake_from_tensor(m, cfx_tensor_new(sizes, 2, CFX_FLOAT32, CPU));
}

static void expect_fresh_fake(cfx_fake_mode *m, const cfx_tensor *y, const cfx_tensor *x)
{
    cr_assert_not_null(y, "%s", cfx_error_message() ? cfx_error_message() : "NULL");
    cr_assert(cfx_tensor_is_fake(y));
    cr_assert_eq(cfx_tensor_fake_mode(y), m);
    cr_assert(cfx_device_eq(cfx_tensor_fake_device(y), CPU));
    cr_assert_neq(y, x);
    cr_assert_neq(y->storage, x->storage);
    cr_assert_eq(y->ndim, x->ndim);
    for (int i = 0; i < x->ndim; i++) {
        cr_assert_eq(y->sizes[i], x->sizes[i]);
        cr_assert_eq(y->strides[i], x->strides[i]);
    }
}

Test(fake_cache, a_call_seen_before_is_answered_from_its_record)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_FRAGMENT, "aten");
    cr_assert_eq(cfx_library_def(lib, "cfx_cache_probe(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "cfx_cache_probe", CFX_KEY_Meta, fresh_meta, &runs_a), CFX_OK);
    runs_a = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x1 = fake(m, 2, 3), *x2 = fake(m, 2, 3), *x3 = fake(m, 4, 3);
    cfx_tensor *y1 = call1("aten::cfx_cache_probe", x1);
    expect_fresh_fake(m, y1, x1);
    cr_assert_eq(runs_a, 1);
    cfx_tensor *y2 = call1("aten::cfx_cache_probe", x2);
    expect_fresh_fake(m, y2, x2);
    cr_assert_neq(y2, y1, "every answer is a new fake tensor");
    cr_assert_eq(runs_a, 1, "the same metadata: answered without the kernel");
    cfx_tensor *y3 = call1("aten::cfx_cache_probe", x3);
    expect_fresh_fake(m, y3, x3);
    cr_assert_eq(runs_a, 2, "another shape is another key");
    cfx_tensor *y4 = call1("aten::cfx_cache_probe", y1);
    expect_fresh_fake(m, y4, y1);
    cr_assert_eq(runs_a, 2, "an answer from the cache is an input like any other");
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cfx_library_free(lib);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_cache, a_dispatch_table_change_drops_the_records)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_FRAGMENT, "aten");
    cr_assert_eq(cfx_library_def(lib, "cfx_cache_probe2(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "cfx_cache_probe2", CFX_KEY_CompositeExplicitAutograd, fresh_meta, &runs_a),
                 CFX_OK);
    runs_a = runs_b = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = fake(m, 2, 3);
    expect_fresh_fake(m, call1("aten::cfx_cache_probe2", x), x);
    expect_fresh_fake(m, call1("aten::cfx_cache_probe2", x), x);
    cr_assert_eq(runs_a, 1);
    /* a Meta kernel registered now takes over from the composite one on Meta */
    cfx_library *meta = CFX_LIBRARY(CFX_LIB_FRAGMENT, "aten");
    cr_assert_eq(CFX_IMPL_BOXED(meta, "cfx_cache_probe2", CFX_KEY_Meta, fresh_meta, &runs_b), CFX_OK);
    expect_fresh_fake(m, call1("aten::cfx_cache_probe2", x), x);
    cr_assert_eq(runs_b, 1, "the new kernel answers, not the old record");
    cfx_library_free(meta);
    expect_fresh_fake(m, call1("aten::cfx_cache_probe2", x), x);
    cr_assert_eq(runs_a, 2, "and once it is gone, the old kernel again");
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cfx_library_free(lib);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_cache, calls_the_cache_cannot_describe_run_every_time)
{
    /* a non-builtin namespace (is_builtin), a view, and a fake carrying a constant */
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "fakecache");
    cr_assert_eq(cfx_library_def(lib, "probe(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "probe", CFX_KEY_Meta, fresh_meta, &runs_a), CFX_OK);
    cfx_library *aten = CFX_LIBRARY(CFX_LIB_FRAGMENT, "aten");
    cr_assert_eq(cfx_library_def(aten, "cfx_cache_view(Tensor(a) x) -> Tensor(a)"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(aten, "cfx_cache_view", CFX_KEY_Meta, view_meta, &runs_b), CFX_OK);
    runs_a = runs_b = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = fake(m, 2, 3);
    for (int i = 0; i < 2; i++) {
        expect_fresh_fake(m, call1("fakecache::probe", x), x);
        cfx_tensor *v = call1("aten::cfx_cache_view", x);
        cr_assert_not_null(v, "%s", cfx_error_message() ? cfx_error_message() : "NULL");
        cr_assert_eq(v->storage, x->storage, "a view shares its input's fake storage");
    }
    cr_assert_eq(runs_a, 2);
    cr_assert_eq(runs_b, 2);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cfx_library_free(aten);
    cfx_library_free(lib);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* A fake argument is keyed by its metadata's interned record (fake_meta.c): fakes with equal
 * metadata share one record, and an in-place view (unsqueeze_) changes a fake's metadata in
 * its own header, so its record must go with it or the next call would be answered for the
 * old shape. */
Test(fake_cache, an_inplace_view_rekeys_its_tensor)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_FRAGMENT, "aten");
    cr_assert_eq(cfx_library_def(lib, "cfx_cache_probe3(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "cfx_cache_probe3", CFX_KEY_Meta, fresh_meta, &runs_a), CFX_OK);
    runs_a = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = fake(m, 2, 3), *x2 = fake(m, 2, 3);
    expect_fresh_fake(m, call1("aten::cfx_cache_probe3", x), x);
    expect_fresh_fake(m, call1("aten::cfx_cache_probe3", x2), x2);
    cr_assert_eq(runs_a, 1);
    cr_assert_not_null(x->ext.fake_meta);
    cr_assert_eq(x->ext.fake_meta, x2->ext.fake_meta, "equal metadata: one record");
    cfx_value st[2] = {cfx_tensor_value(x), cfx_int(1)};
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::unsqueeze_"), st, 2, COUNT_OF(st)), CFX_OK, "%s",
                 cfx_error_message() ? cfx_error_message() : "");
    cr_assert_eq(x->ndim, 3);
    cfx_tensor *y = call1("aten::cfx_cache_probe3", x);
    expect_fresh_fake(m, y, x);
    cr_assert_eq(y->sizes[1], 1, "the unsqueezed shape [2, 1, 3], not the old record's");
    cr_assert_eq(runs_a, 2, "a new shape is a new key");
    cr_assert_neq(x->ext.fake_meta, x2->ext.fake_meta);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cfx_library_free(lib);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}
