/* test_tensor.c - tensor creation, strides, views, errors and repr.
 *
 * Goldens from PyTorch 2.13 (tools/interop/gen_value_goldens.py): strides and is_contiguous for
 * 31 shapes, repr() of 101 tensors (CPU float32/float64/int64/int32/bool of 0..5 dims, views,
 * summarised tensors of > 1000 elements, empty and meta tensors). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "tests/dispatch/value_golden.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static void clear_error(void) { cfx_error_clear(); }

static char *repr(const cfx_tensor *t)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_tensor_print(t, &b);
    return cfx_buf_take(&b);
}

TestSuite(tensor, .init = clear_error);

/* ------------------------------------------------------------------ strides */

Test(tensor, strides_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_strides.txt"), "missing golden");
    int n = 0;
    while (golden_next(&g)) {
        int64_t sizes[8], strides[8], got[8];
        int nd = golden_dims(g.field[0], sizes, 8);
        cr_assert_eq(golden_dims(g.field[1], strides, 8), nd);
        bool contig = atoi(g.field[2]) != 0;
        cfx_contiguous_strides(sizes, nd, got);
        bool is_default = memcmp(got, strides, (size_t)nd * sizeof(int64_t)) == 0;
        cfx_tensor *t = is_default ? cfx_tensor_new(sizes, nd, CFX_FLOAT32, CPU)
                                   : cfx_tensor_new_strided(sizes, strides, nd, CFX_FLOAT32, CPU);
        cr_assert_not_null(t, "%s: %s", g.field[0], cfx_error_message());
        cr_expect(memcmp(t->strides, strides, (size_t)nd * sizeof(int64_t)) == 0, "strides of %s", g.field[0]);
        cr_expect_eq(cfx_tensor_is_contiguous(t), contig, "is_contiguous of %s / %s", g.field[0], g.field[1]);
        cfx_tensor_release(t);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(n, 31);
}

/* The contiguous cases of the golden must come out of cfx_contiguous_strides itself. */
Test(tensor, contiguous_strides_zero_and_one)
{
    int64_t s1[] = {2, 0, 3}, s2[] = {2, 3, 0}, s3[] = {1, 1}, out[3];
    cfx_contiguous_strides(s1, 3, out);
    cr_assert(out[0] == 3 && out[1] == 3 && out[2] == 1);
    cfx_contiguous_strides(s2, 3, out);
    cr_assert(out[0] == 3 && out[1] == 1 && out[2] == 1);
    cfx_contiguous_strides(s3, 2, out);
    cr_assert(out[0] == 1 && out[1] == 1);
}

/* ------------------------------------------------------------------ creation */

Test(tensor, cpu_and_meta_basics)
{
    int64_t sizes[] = {2, 3};
    cfx_tensor *c = cfx_tensor_new(sizes, 2, CFX_FLOAT32, CPU);
    cfx_tensor *m = cfx_tensor_new(sizes, 2, CFX_INT64, META);
    cr_assert_not_null(c);
    cr_assert_not_null(m);
    cr_assert_eq(c->refcount, 1);
    cr_assert_eq(cfx_tensor_numel(c), 6);
    cr_assert_eq(c->storage->nbytes, 24);
    cr_assert_eq(m->storage->nbytes, 48);
    cr_assert_null(m->storage->data);
    cr_assert_null(cfx_tensor_data(m));
    cr_assert(cfx_tensor_is_meta(m));
    cr_assert_not(cfx_tensor_is_meta(c));
    cr_assert_eq(cfx_tensor_dtype(m), CFX_INT64);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(((float *)cfx_tensor_data(c))[i], 0.0f, "CPU data is zero-filled");
    cr_assert(cfx_keyset_eq(c->keys, cfx_keyset_for_tensor(CFX_BACKEND_CPU)));
    cr_assert(cfx_keyset_eq(m->keys, cfx_keyset_for_tensor(CFX_BACKEND_META)));
    cr_assert_null(c->ext.mode, "no mode state on a plain tensor");
    cr_assert_eq(c->ext.n_bindings, 0);
    cr_assert_eq(c->storage, &c->own_storage, "a fresh tensor's storage is part of its header");
    cr_assert_eq(c->sizes, c->dims_inline);
    cr_assert_eq(c->strides, c->dims_inline + CFX_INLINE_DIMS);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_tensor_print_sizes(c, &b);
    char *s = cfx_buf_take(&b);
    cr_assert_str_eq(s, "[2, 3]");
    free(s);
    cfx_tensor_release(c);
    cfx_tensor_release(m);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* PyTorch 2.13: torch._C._dispatch_keys(torch.empty(2)) and of a meta tensor. */
Test(tensor, keyset_text_matches_pytorch)
{
    int64_t sizes[] = {2};
    cfx_tensor *c = cfx_tensor_new(sizes, 1, CFX_FLOAT32, CPU);
    cfx_tensor *m = cfx_tensor_new(sizes, 1, CFX_FLOAT32, META);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_keyset_print(c->keys, &b);
    cfx_buf_puts(&b, " ");
    cfx_keyset_print(m->keys, &b);
    char *s = cfx_buf_take(&b);
    cr_assert_str_eq(s, "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU) "
                        "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)");
    free(s);
    cfx_tensor_release(c);
    cfx_tensor_release(m);
}

Test(tensor, many_dims)
{
    int64_t sizes[CFX_MAX_DIMS + 1];
    for (int i = 0; i <= CFX_MAX_DIMS; i++)
        sizes[i] = 1;
    sizes[3] = 2;
    sizes[7] = 3;
    cfx_tensor *t = cfx_tensor_new(sizes, 8, CFX_FLOAT64, CPU);
    cr_assert_not_null(t);
    cr_assert_neq(t->sizes, t->dims_inline);
    cr_assert_eq(t->strides, t->sizes + 8);
    cr_assert_eq(t->strides[3], 3);
    cr_assert_eq(t->strides[2], 6);
    cr_assert_eq(cfx_tensor_numel(t), 6);
    cfx_tensor_release(t);
    t = cfx_tensor_new(sizes, CFX_MAX_DIMS, CFX_FLOAT32, META);
    cr_assert_not_null(t);
    cr_assert_eq(t->ndim, CFX_MAX_DIMS);
    cfx_tensor_release(t);
    cr_assert_null(cfx_tensor_new(sizes, CFX_MAX_DIMS + 1, CFX_FLOAT32, META));
    cr_assert(cfx_error_occurred());
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(tensor, from_data_and_get_double)
{
    float f[] = {1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f};
    double d[] = {0.1, 0.2};
    int64_t i[] = {INT64_C(1) << 40, -3};
    int64_t s23[] = {2, 3}, s2[] = {2};
    cfx_tensor *tf = cfx_tensor_from_floats(f, s23, 2);
    cfx_tensor *td = cfx_tensor_from_doubles(d, s2, 1);
    cfx_tensor *ti = cfx_tensor_from_int64s(i, s2, 1);
    cr_assert_eq(cfx_tensor_dtype(tf), CFX_FLOAT32);
    cr_assert_eq(cfx_tensor_dtype(td), CFX_FLOAT64);
    cr_assert_eq(cfx_tensor_dtype(ti), CFX_INT64);
    cr_assert_eq(cfx_tensor_get_double(tf, 2), 3.25);
    cr_assert_eq(cfx_tensor_get_double(td, 1), 0.2);
    cr_assert_eq(cfx_tensor_get_double(ti, 0), 1099511627776.0);
    /* a transposed view reads in its own row-major order */
    int64_t vs[] = {3, 2}, vst[] = {1, 3};
    cfx_tensor *v = cfx_tensor_new_view(tf, vs, vst, 2, 0);
    cr_assert_not_null(v);
    cr_assert_eq(cfx_tensor_get_double(v, 1), 4.0);
    cr_assert_eq(cfx_tensor_get_double(v, 2), -2.0);
    cr_assert_not(cfx_tensor_is_contiguous(v));
    cr_assert(isnan(cfx_tensor_get_double(v, 6)));
    cr_assert(cfx_error_occurred());
    cfx_tensor_release(v);
    cfx_tensor_release(tf);
    cfx_tensor_release(td);
    cfx_tensor_release(ti);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(tensor, scalars)
{
    static const struct {
        cfx_dtype dt;
        double in, out;
        const char *repr;
    } cases[] = {
        {CFX_FLOAT32, 0.1, (double)0.1f, "tensor(0.1000)"},
        {CFX_FLOAT64, 2.0, 2.0, "tensor(2., dtype=torch.float64)"},
        {CFX_INT64, -7.9, -7.0, "tensor(-7)"},
        {CFX_INT32, 3e10, 2147483647.0, "tensor(2147483647, dtype=torch.int32)"},
        {CFX_BOOL, 0.5, 1.0, "tensor(True)"},
        {CFX_INT64, NAN, 0.0, "tensor(0)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cfx_tensor *t = cfx_tensor_scalar_double(cases[k].in, cases[k].dt);
        cr_assert_not_null(t);
        cr_assert_eq(t->ndim, 0);
        cr_assert_eq(cfx_tensor_numel(t), 1);
        cr_expect_eq(cfx_tensor_get_double(t, 0), cases[k].out);
        char *s = repr(t);
        cr_expect_str_eq(s, cases[k].repr);
        free(s);
        cfx_tensor_release(t);
    }
}

/* ------------------------------------------------------------------ errors (PyTorch's texts) */

/* One case of value_tensor_errors.txt made with cfx's constructors: NULL when refused. Views
 * are over a 6-float CPU storage, as as_strided over torch.empty(6) in the golden. */
static cfx_tensor *make_error_case(const char *name, cfx_tensor *base, bool *known)
{
    static const int64_t neg2[] = {-1, 2}, ovf[] = {INT64_C(1) << 40, INT64_C(1) << 30, 0},
                         sovf[] = {0, INT64_C(1) << 40, INT64_C(1) << 30},
                         sovf4[] = {0, INT64_C(1) << 31, INT64_C(1) << 31, 2},
                         nosovf[] = {0, INT64_C(1) << 31, INT64_C(1) << 30, 2}, big[] = {INT64_C(1) << 60, 2},
                         two[] = {2}, minus1[] = {-1}, s23[] = {2, 3}, st23[] = {-1, 1}, ten[] = {10},
                         one[] = {1}, e[] = {2, 0}, est[] = {100, 1};
    *known = true;
    if (!strcmp(name, "negative_dim")) return cfx_tensor_new(neg2, 2, CFX_FLOAT32, CPU);
    if (!strcmp(name, "storage_overflow")) return cfx_tensor_new(ovf, 3, CFX_FLOAT32, META);
    if (!strcmp(name, "stride_overflow")) return cfx_tensor_new(sovf, 3, CFX_FLOAT32, META);
    if (!strcmp(name, "stride_overflow_4d")) return cfx_tensor_new(sovf4, 4, CFX_FLOAT32, META);
    if (!strcmp(name, "no_stride_overflow")) return cfx_tensor_new(nosovf, 4, CFX_FLOAT32, META);
    if (!strcmp(name, "storage_overflow_big")) return cfx_tensor_new(big, 2, CFX_FLOAT32, META);
    if (!strcmp(name, "strided_negative_cpu")) return cfx_tensor_new_strided(two, minus1, 1, CFX_FLOAT32, CPU);
    if (!strcmp(name, "strided_negative_meta")) return cfx_tensor_new_strided(s23, st23, 2, CFX_FLOAT32, META);
    if (!strcmp(name, "view_out_of_bounds")) return cfx_tensor_new_view(base, ten, one, 1, 0);
    if (!strcmp(name, "view_offset_out_of_bounds")) return cfx_tensor_new_view(base, two, one, 1, 5);
    if (!strcmp(name, "view_negative_stride")) return cfx_tensor_new_view(base, two, minus1, 1, 0);
    if (!strcmp(name, "view_negative_offset")) return cfx_tensor_new_view(base, two, one, 1, -1);
    if (!strcmp(name, "view_empty_anywhere")) return cfx_tensor_new_view(base, e, est, 2, 7);
    *known = false;
    return NULL;
}

Test(tensor, creation_and_view_errors_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_tensor_errors.txt"), "missing golden");
    int64_t six[] = {6};
    cfx_tensor *base = cfx_tensor_new(six, 1, CFX_FLOAT32, CPU);
    int n = 0;
    while (golden_next(&g)) {
        cfx_error_clear();
        bool known;
        cfx_tensor *t = make_error_case(g.field[0], base, &known);
        cr_assert(known, "no C case for %s", g.field[0]);
        if (strcmp(g.field[1], "-") == 0) {
            cr_expect_not_null(t, "%s: %s", g.field[0], cfx_error_message());
        } else {
            cr_expect_null(t, "%s: no error", g.field[0]);
            cr_expect_eq(cfx_error_status(), CFX_ERR, "%s", g.field[0]);
            cr_expect_str_eq(cfx_error_message(), g.field[1], "%s", g.field[0]);
        }
        cfx_tensor_release(t);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(n, 13);
    cfx_error_clear();
    cr_assert_null(cfx_tensor_new_view(NULL, six, six, 1, 0));
    cr_assert_not(cfx_error_occurred(), "a NULL input adds no message");
    cfx_tensor_release(base);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* Not in the golden, a deviation: PyTorch 2.13 skips setStorage's bounds check for meta
 * storages (fake tensors included: as_strided([10], [1]) of a fake of 6 elements passes). cfx
 * keeps it for meta tensors too: a fake tensor is a meta tensor over a storage of the real
 * one's size (fake.c), so a view is legal exactly when the real tensor's would be, and an
 * out-of-bounds cfx_tensor_new_view is a bug in the C caller worth reporting at once. */
Test(tensor, meta_views_are_bounds_checked)
{
    int64_t six[] = {6}, ten[] = {10}, one[] = {1};
    cfx_tensor *base = cfx_tensor_new(six, 1, CFX_FLOAT32, META);
    cr_assert_null(cfx_tensor_new_view(base, ten, one, 1, 0));
    cr_assert_str_eq(cfx_error_message(),
                     "setStorage: sizes [10], strides [1], storage offset 0, and itemsize 4 requiring a "
                     "storage size of 40 are out of bounds for storage of size 24");
    cfx_error_clear();
    cfx_tensor_release(base);
}

Test(tensor, error_bad_dtype_device)
{
    int64_t s[] = {2};
    cr_assert_null(cfx_tensor_new(s, 1, (cfx_dtype)5, CPU));
    cr_assert(cfx_error_occurred());
    cfx_error_clear();
    cr_assert_null(cfx_tensor_new(s, 1, CFX_FLOAT32, (cfx_device){7, -1}));
    cr_assert(cfx_error_occurred());
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ views, versions */

Test(tensor, views_share_storage_and_version)
{
    int64_t s[] = {2, 3}, vs[] = {3}, vst[] = {1};
    cfx_tensor *t = cfx_tensor_new(s, 2, CFX_FLOAT32, CPU);
    cfx_tensor *v = cfx_tensor_new_view(t, vs, vst, 1, 3);
    cr_assert_eq(v->storage, t->storage);
    cr_assert_eq(t->storage->refcount, 2);
    cr_assert(cfx_keyset_eq(v->keys, t->keys));
    cr_assert_eq(cfx_tensor_data(v), (char *)cfx_tensor_data(t) + 12);
    cr_assert_eq(cfx_tensor_version(t), 0);
    cfx_tensor_bump_version(v);
    cr_assert_eq(cfx_tensor_version(t), 1);
    cfx_tensor_bump_version(t);
    cr_assert_eq(cfx_tensor_version(v), 2);
    ((float *)cfx_tensor_data(t))[4] = 9.0f;
    cfx_tensor_release(t); /* the view keeps the storage alive */
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cr_assert_eq(cfx_tensor_get_double(v, 1), 9.0);
    cr_assert_eq(v->storage->refcount, 1);
    cfx_tensor_release(v);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(tensor, retain_release)
{
    int64_t s[] = {4};
    cfx_tensor *t = cfx_tensor_new(s, 1, CFX_BOOL, META);
    cr_assert_eq(cfx_tensor_retain(t), t);
    cr_assert_eq(t->refcount, 2);
    cfx_tensor_release(t);
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cfx_tensor_release(t);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    cr_assert_null(cfx_tensor_retain(NULL));
    cfx_tensor_release(NULL);
}

/* ------------------------------------------------------------------ repr */

static cfx_dtype parse_dtype(const char *s)
{
    cfx_dtype d = CFX_FLOAT32;
    cr_assert(cfx_dtype_parse(s, &d), "dtype %s", s);
    return d;
}

static cfx_tensor *golden_tensor(golden *g)
{
    cfx_dtype dt = parse_dtype(g->field[1]);
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    int nd = golden_dims(g->field[2], sizes, CFX_MAX_DIMS);
    golden_dims(g->field[3], strides, CFX_MAX_DIMS);
    if (strcmp(g->field[0], "meta") == 0)
        return cfx_tensor_new_strided(sizes, strides, nd, dt, META);
    int64_t offset = atoll(g->field[4]);
    /* count storage values, then fill a 1-d base and view it */
    int64_t n = 0;
    if (strcmp(g->field[5], "-") != 0)
        for (const char *p = g->field[5]; *p; p++)
            n += (p == g->field[5] || p[-1] == ' ') && *p != ' ';
    int64_t bs[] = {n};
    cfx_tensor *base = cfx_tensor_new(bs, 1, dt, CPU);
    char *p = g->field[5];
    for (int64_t i = 0; i < n; i++) {
        char *end;
        void *data = cfx_tensor_data(base);
        switch (dt) {
        case CFX_FLOAT32: ((float *)data)[i] = (float)strtod(p, &end); break;
        case CFX_FLOAT64: ((double *)data)[i] = strtod(p, &end); break;
        case CFX_INT64: ((int64_t *)data)[i] = strtoll(p, &end, 10); break;
        case CFX_INT32: ((int32_t *)data)[i] = (int32_t)strtol(p, &end, 10); break;
        case CFX_BOOL: ((bool *)data)[i] = strtol(p, &end, 10) != 0; break;
        default: cr_assert_fail("no golden tensors of %s", cfx_dtype_name(dt)); break;
        }
        p = end;
    }
    cfx_tensor *v = cfx_tensor_new_view(base, sizes, strides, nd, offset);
    cfx_tensor_release(base);
    return v;
}

Test(tensor, repr_golden)
{
    golden g;
    cr_assert(golden_open(&g, "tests/data/value_tensor_repr.txt"), "missing golden");
    int n = 0, bad = 0;
    while (golden_next(&g)) {
        cfx_tensor *t = golden_tensor(&g);
        cr_assert_not_null(t, "case %d: %s", n, cfx_error_message());
        char *s = repr(t);
        if (strcmp(s, g.field[6]) != 0 && bad++ < 5)
            cr_expect_str_eq(s, g.field[6], "case %d (%s %s %s)", n, g.field[0], g.field[1], g.field[2]);
        free(s);
        cfx_tensor_release(t);
        n++;
    }
    golden_close(&g);
    cr_assert_eq(bad, 0, "%d of %d reprs differ", bad, n);
    cr_assert_eq(n, 101);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ speed */

/* Creating and releasing a meta tensor must stay cheap (the free lists). The bound is loose
 * so that sanitizer builds pass; tools/bench measures the real number. */
Test(tensor, meta_create_release_is_cheap)
{
    int64_t s[] = {8, 16};
    enum { N = 200000 };
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < N; i++)
        cfx_tensor_release(cfx_tensor_new(s, 2, CFX_FLOAT32, META));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / N;
    cr_log_info("meta tensor create+release: %.1f ns", ns);
    cr_expect_lt(ns, 2000.0);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}
