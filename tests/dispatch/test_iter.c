/* test_iter.c - TensorIterator's fast paths against its general path.
 *
 * The elementwise kernels take three shortcuts, each of which must give exactly what the path
 * it skips gives:
 *   cfx_iter_fast_setup_strides  fast_set_up (contiguous / channels-last / identically strided
 *                                dense inputs) vs reorder_dimensions + allocate_or_resize_outputs
 *                                (cfx_iter_output_strides): the same physical layout, i.e. equal
 *                                strides on every dim of size > 1, as PyTorch's NOTE [Computing
 *                                output strides] promises; and each case taken exactly when
 *                                PyTorch's compute_fast_setup_type takes it;
 *   cfx_iter_shortcut / cfx_structured_binary (/ _test, the Meta kernels')
 *                                the inline shortcut of cfx_iter_build and of the binary meta
 *                                function vs cfx_iter_build_full / cfx_structured_binary_full:
 *                                identical results and errors, on random inputs covering
 *                                broadcasting, mixed dtypes, devices and layouts, overlapping
 *                                strides, 0-dim inputs, size-1 dims and empty tensors;
 *   cfx_iter_relu_meta_strides   vs cfx_iter_relu_meta_strides_full.
 * The random inputs come from a fixed seed; a handful of hand cases with PyTorch 1.13's answers
 * (meta tensors, `a + b`) pin which path each kind of input takes. The bulk check against
 * PyTorch itself is tests/data/ops_strides.json (test_ops.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/structured.h"
#include "tests/test_util.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(iter, .init = setup);

/* ---- random layouts ------------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static int rnd(int n)
{
    return (int)(test_rand(&rng) % (uint64_t)n);
}

static void random_shape(int64_t *sizes, int *n)
{
    *n = rnd(6);
    for (int d = 0; d < *n; d++) {
        int r = rnd(20);
        sizes[d] = r == 0 ? 0 : r < 6 ? 1 : 2 + rnd(3);
    }
}

typedef enum {
    L_CANONICAL,    /* c10's contiguous strides */
    L_CONTIG_ODD,   /* contiguous, but size-1 dims with arbitrary strides */
    L_CHANNELS_LAST,
    L_PERMUTED,     /* dense in a random dim order */
    L_GAPS,         /* permuted, every stride doubled: not dense */
    L_EXPANDED,     /* a dim of stride 0 (overlapping) */
    L_RANDOM,       /* anything in [0, 6] */
    L_KINDS
} layout_kind;

static void random_strides(const int64_t *sizes, int n, layout_kind k, int64_t *st)
{
    cfx_geom_contiguous_strides(sizes, n, st);
    switch (k) {
    case L_CANONICAL:
        break;
    case L_CONTIG_ODD:
        for (int d = 0; d < n; d++)
            if (sizes[d] == 1)
                st[d] = rnd(9);
        break;
    case L_CHANNELS_LAST:
        if (n == 4)
            cfx_geom_memory_format_strides(sizes, n, CFX_CHANNELS_LAST, st, NULL);
        break;
    case L_PERMUTED:
    case L_GAPS: {
        int perm[CFX_MAX_DIMS];
        for (int d = 0; d < n; d++)
            perm[d] = d;
        for (int d = n - 1; d > 0; d--) {
            int j = rnd(d + 1), t = perm[d];
            perm[d] = perm[j];
            perm[j] = t;
        }
        int64_t z = 1;
        for (int d = n - 1; d >= 0; d--) {
            st[perm[d]] = z * (k == L_GAPS ? 2 : 1);
            z *= sizes[perm[d]] > 1 ? sizes[perm[d]] : 1;
        }
        break;
    }
    case L_EXPANDED:
        if (n > 0)
            st[rnd(n)] = 0;
        break;
    case L_RANDOM:
        for (int d = 0; d < n; d++)
            st[d] = rnd(7);
        break;
    case L_KINDS:
        break;
    }
}

static bool numel_positive(const int64_t *sizes, int n)
{
    return cfx_geom_numel(sizes, n) > 0;
}

/* ---- fast_set_up vs the general layout ----------------------------------------------------- */

Test(iter, fast_setup_agrees_with_the_general_layout)
{
    int taken[4] = {0}; /* contiguous, channels-last, dense, none */
    for (int iter = 0; iter < 50000; iter++) {
        int64_t shape[CFX_MAX_DIMS], st[CFX_ITER_MAX_INPUTS][CFX_MAX_DIMS];
        int n;
        random_shape(shape, &n);
        if (rnd(3) == 0) { /* make channels-last (and NC11 ambiguity) common */
            n = 4;
            for (int d = 0; d < 4; d++)
                shape[d] = rnd(4) == 0 ? 1 : 2 + rnd(3);
        }
        int nin = 1 + rnd(3);
        layout_kind first = (layout_kind)rnd(L_KINDS);
        const int64_t *lists[CFX_ITER_MAX_INPUTS];
        for (int i = 0; i < nin; i++) {
            /* often the same layout for all, so the identical-strides case is exercised */
            random_strides(shape, n, rnd(3) ? first : (layout_kind)rnd(L_KINDS), st[i]);
            lists[i] = st[i];
        }

        /* compute_fast_setup_type, from the geometry predicates */
        bool contig = true, cl = true, nod = true, same = true;
        for (int i = 0; i < nin; i++) {
            contig &= cfx_geom_is_contiguous(shape, st[i], n);
            cl &= cfx_geom_is_channels_last_contiguous(shape, st[i], n);
            nod &= cfx_geom_is_non_overlapping_and_dense(shape, st[i], n);
            same &= !memcmp(st[i], st[nin - 1], (size_t)n * sizeof(int64_t));
        }
        int want_type = contig ? 0 : cl ? 1 : nod && same ? 2 : 3;
        int64_t want[CFX_MAX_DIMS];
        if (want_type == 0)
            cfx_geom_contiguous_strides(shape, n, want);
        else if (want_type == 1)
            cfx_geom_memory_format_strides(shape, n, CFX_CHANNELS_LAST, want, NULL);
        else if (want_type == 2)
            memcpy(want, st[nin - 1], (size_t)n * sizeof(int64_t));

        int64_t fast[CFX_MAX_DIMS], general[CFX_MAX_DIMS];
        bool took = cfx_iter_fast_setup_strides(shape, n, lists, nin, fast);
        cr_assert_eq(took, want_type != 3, "case %d: fast setup %s", iter, took ? "taken" : "declined");
        taken[want_type]++;
        if (!took)
            continue;
        cr_assert(!memcmp(fast, want, (size_t)n * sizeof(int64_t)), "case %d: fast setup strides", iter);

        /* same shape: compute_strides leaves the strides as they are */
        cfx_iter_output_strides(shape, n, lists, nin, general);
        if (!numel_positive(shape, n))
            continue; /* no layout to agree on */
        for (int d = 0; d < n; d++)
            if (shape[d] > 1)
                cr_assert_eq(fast[d], general[d], "case %d: dim %d (size %lld): fast %lld, general %lld", iter,
                             d, (long long)shape[d], (long long)fast[d], (long long)general[d]);
    }
    for (int t = 0; t < 4; t++)
        cr_expect_gt(taken[t], 500, "fast setup type %d hit only %d times", t, taken[t]);
}

/* ---- the inline shortcuts vs the full paths ------------------------------------------------ */

static const cfx_dtype dtypes[] = {CFX_FLOAT32, CFX_FLOAT64, CFX_INT64, CFX_INT32, CFX_BOOL};

/* One random operand: usually like `base` (shape, dtype, device), sometimes not. */
static cfx_tensor *random_operand(const int64_t *base, int bn, cfx_dtype bdt, cfx_device bdev)
{
    int64_t sizes[CFX_MAX_DIMS], st[CFX_MAX_DIMS];
    int n = bn;
    memcpy(sizes, base, (size_t)bn * sizeof(int64_t));
    cfx_dtype dt = bdt;
    cfx_device dev = bdev;
    switch (rnd(12)) {
    case 0: /* broadcast: fewer dims */
        n = bn ? rnd(bn) : 0;
        memcpy(sizes, base + (bn - n), (size_t)n * sizeof(int64_t));
        break;
    case 1: /* broadcast: a size-1 dim */
        if (n)
            sizes[rnd(n)] = 1;
        break;
    case 2: /* 0-dim, perhaps a CPU scalar */
        n = 0;
        if (rnd(2))
            dev = CPU;
        break;
    case 3:
        dt = dtypes[rnd(5)];
        break;
    case 4:
        dev = bdev.type == CFX_DEVICE_CPU ? META : CPU;
        break;
    case 5: /* a mismatching shape */
        random_shape(sizes, &n);
        break;
    default:
        break;
    }
    random_strides(sizes, n, rnd(2) ? L_CANONICAL : (layout_kind)rnd(L_KINDS), st);
    cfx_tensor *t = cfx_tensor_new_strided(sizes, st, n, dt, dev);
    cr_assert_not_null(t, "%s", cfx_error_message());
    return t;
}

static void random_inputs(cfx_tensor **in, int nin)
{
    int64_t sizes[CFX_MAX_DIMS];
    int n;
    random_shape(sizes, &n);
    cfx_dtype dt = dtypes[rnd(5)];
    cfx_device dev = rnd(4) ? META : CPU;
    for (int i = 0; i < nin; i++)
        in[i] = random_operand(sizes, n, dt, dev);
}

/* The outcome of a build or meta function: status, error text, and the iterator. */
typedef struct outcome {
    bool ok;
    char err[512];
    cfx_iter it;
} outcome;

static void finish(outcome *o, bool ok)
{
    o->ok = ok;
    snprintf(o->err, sizeof o->err, "%s", cfx_error_message() ? cfx_error_message() : "");
    cfx_error_clear();
}

static void expect_same(const outcome *x, const outcome *y, bool new_output, int c)
{
    cr_assert_eq(x->ok, y->ok, "case %d: ok %d vs %d (%s | %s)", c, x->ok, y->ok, x->err, y->err);
    cr_assert_str_eq(x->err, y->err, "case %d", c);
    if (!x->ok)
        return;
    const cfx_iter *a = &x->it, *b = &y->it;
    cr_assert_eq(a->ndim, b->ndim, "case %d", c);
    cr_assert_eq(a->ninputs, b->ninputs, "case %d", c);
    cr_assert_eq(a->all_same_shape, b->all_same_shape, "case %d", c);
    cr_assert_eq(a->common_dtype, b->common_dtype, "case %d", c);
    cr_assert(cfx_device_eq(a->device, b->device), "case %d", c);
    cr_assert(!memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t)), "case %d: shape", c);
    if (new_output)
        cr_assert(!memcmp(a->out_strides, b->out_strides, (size_t)a->ndim * sizeof(int64_t)),
                  "case %d: strides", c);
}

/* The configs of structured.c's unary ops, and of norm.c's ops. */
static const cfx_iter_config configs[] = {
    {.promote_inputs = true, .allow_cpu_scalars = true, .check_mem_overlap = true},
    {.promote_inputs = true, .int_to_float = true, .allow_cpu_scalars = true, .check_mem_overlap = true},
    {.check_mem_overlap = true},
    {.promote_inputs = true, .int_to_float = true, .check_mem_overlap = true},
    {.promote_inputs = true},
};

Test(iter, shortcut_agrees_with_the_full_build)
{
    int shortcut = 0, full = 0;
    for (int c = 0; c < 20000; c++) {
        cfx_scope s = cfx_scope_begin();
        int nin = 1 + rnd(3);
        cfx_tensor *in[CFX_ITER_MAX_INPUTS];
        random_inputs(in, nin);
        const cfx_tensor *const *cin = (const cfx_tensor *const *)in;
        const cfx_iter_config *cfg = &configs[rnd(5)];
        const cfx_tensor *out = rnd(8) == 0 ? in[0] : NULL; /* in-place: never the shortcut */
        outcome x, y, z;
        finish(&x, cfx_iter_build(&x.it, cfg, "aten::op", out, cin, nin));
        finish(&y, cfx_iter_build_full(&y.it, cfg, "aten::op", out, cin, nin));
        expect_same(&x, &y, !out, c);
        if (!out && cfx_iter_shortcut(&z.it, cfg, cin, nin)) {
            finish(&z, true);
            expect_same(&z, &y, true, c);
            shortcut++;
        } else {
            full++;
        }
        cfx_scope_end(s);
    }
    cr_expect_gt(shortcut, 2000, "shortcut taken %d times", shortcut);
    cr_expect_gt(full, 2000, "shortcut declined %d times", full);
}

Test(iter, binary_meta_function_shortcut_agrees_with_the_full_one)
{
    static const char *names[] = {"aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::div.Tensor"};
    cfx_value alphas[] = {cfx_int(1), cfx_int(2), cfx_double(0.5), cfx_bool(true), cfx_bool(false), cfx_none()};
    int ok = 0, failed = 0, tested = 0;
    for (int c = 0; c < 20000; c++) {
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *in[2];
        random_inputs(in, 2);
        const cfx_tensor *const *cin = (const cfx_tensor *const *)in;
        cfx_binop kind = (cfx_binop)rnd(4);
        cfx_value alpha = alphas[rnd(6)];
        const cfx_tensor *out = rnd(8) == 0 ? in[0] : NULL;
        outcome x, y;
        finish(&x, cfx_structured_binary(&x.it, kind, names[kind], out, cin, &alpha));
        finish(&y, cfx_structured_binary_full(&y.it, kind, names[kind], out, cin, &alpha));
        expect_same(&x, &y, !out, c);
        /* the test alone (the Meta kernels' shortcut): a's layout in the result dtype */
        cfx_dtype dt;
        if (!out && cfx_structured_binary_test(kind, cin, &alpha, &dt)) {
            cr_assert(y.ok, "case %d: %s", c, y.err);
            cr_assert_eq(dt, y.it.common_dtype, "case %d", c);
            cr_assert_eq(in[0]->ndim, y.it.ndim, "case %d", c);
            cr_assert(cfx_device_eq(in[0]->device, y.it.device), "case %d", c);
            cr_assert(!memcmp(in[0]->sizes, y.it.shape, (size_t)y.it.ndim * sizeof(int64_t)), "case %d", c);
            cr_assert(!memcmp(in[0]->strides, y.it.out_strides, (size_t)y.it.ndim * sizeof(int64_t)), "case %d", c);
            tested++;
        }
        if (x.ok)
            ok++;
        else
            failed++;
        cfx_scope_end(s);
    }
    cr_expect_gt(ok, 2000);
    cr_expect_gt(failed, 2000);
    cr_expect_gt(tested, 1000, "cfx_structured_binary_test passed %d times", tested);
    /* cfx_structured_binary_test folds these in as constants */
    cr_assert(!cfx_structured_binary_cfg[0].int_to_float);
    cr_assert(cfx_structured_binary_cfg[1].int_to_float);
}

Test(iter, relu_meta_strides_shortcut_agrees_with_the_sort)
{
    int own = 0;
    for (int c = 0; c < 20000; c++) {
        cfx_scope s = cfx_scope_begin();
        int64_t sizes[CFX_MAX_DIMS], st[CFX_MAX_DIMS], b1[CFX_MAX_DIMS], b2[CFX_MAX_DIMS];
        int n;
        random_shape(sizes, &n);
        random_strides(sizes, n, rnd(2) ? L_CANONICAL : (layout_kind)rnd(L_KINDS), st);
        cfx_tensor *a = cfx_tensor_new_strided(sizes, st, n, CFX_FLOAT32, META);
        cr_assert_not_null(a);
        const int64_t *x = cfx_iter_relu_meta_strides(a, b1), *y = cfx_iter_relu_meta_strides_full(a, b2);
        cr_assert(!memcmp(x, y, (size_t)n * sizeof(int64_t)), "case %d", c);
        own += x == a->strides;
        cfx_scope_end(s);
    }
    cr_expect_gt(own, 2000, "the input's strides were the answer %d times", own);
}

/* ---- hand cases: PyTorch 1.13's strides for `a + b` on meta tensors, and the path taken ---- */

typedef struct hand_case {
    const char *what;
    int na, nb;
    int64_t sa[4], ta[4], sb[4], tb[4];
    int64_t want[4];
    bool shortcut;  /* cfx_iter_shortcut takes it */
    int fast;       /* cfx_iter_fast_setup_strides: 1 taken, 0 declined, -1 not asked (broadcast) */
} hand_case;

static const hand_case hand[] = {
    {"contiguous", 2, 2, {3, 4}, {4, 1}, {3, 4}, {4, 1}, {4, 1}, true, 1},
    {"contiguous, odd size-1 stride", 3, 3, {3, 1, 4}, {4, 99, 1}, {3, 1, 4}, {4, 4, 1}, {4, 4, 1}, false, 1},
    {"channels-last", 4, 4, {2, 3, 4, 5}, {60, 1, 15, 3}, {2, 3, 4, 5}, {60, 1, 15, 3}, {60, 1, 15, 3}, false, 1},
    {"NC11: contiguous and channels-last", 4, 4, {2, 3, 1, 1}, {3, 1, 3, 3}, {2, 3, 1, 1}, {3, 1, 3, 3},
     {3, 1, 1, 1}, false, 1},
    {"permuted, same strides", 3, 3, {2, 4, 3}, {1, 6, 2}, {2, 4, 3}, {1, 6, 2}, {1, 6, 2}, false, 1},
    {"permuted, different strides", 3, 3, {2, 4, 3}, {1, 6, 2}, {2, 4, 3}, {12, 3, 1}, {1, 6, 2}, false, 0},
    {"overlapping", 2, 2, {3, 4}, {0, 1}, {3, 4}, {0, 1}, {4, 1}, false, 0},
    {"gaps, same strides", 2, 2, {2, 3}, {6, 2}, {2, 3}, {6, 2}, {3, 1}, false, 0},
    {"empty", 2, 2, {0, 3}, {1, 0}, {0, 3}, {1, 0}, {3, 1}, false, 1},
    {"broadcast", 2, 2, {3, 1}, {1, 1}, {1, 4}, {4, 1}, {4, 1}, false, -1},
    {"0-dim and a transposed matrix", 0, 2, {0}, {0}, {3, 4}, {1, 3}, {1, 3}, false, -1},
};

Test(iter, hand_cases_match_pytorch)
{
    for (size_t k = 0; k < sizeof hand / sizeof hand[0]; k++) {
        const hand_case *h = &hand[k];
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *a = cfx_tensor_new_strided(h->sa, h->ta, h->na, CFX_FLOAT32, META);
        cfx_tensor *b = cfx_tensor_new_strided(h->sb, h->tb, h->nb, CFX_FLOAT32, META);
        cfx_tensor *r = cfx_add(a, b);
        cr_assert_not_null(r, "%s: %s", h->what, cfx_error_message());
        cr_expect(!memcmp(r->strides, h->want, (size_t)r->ndim * sizeof(int64_t)), "%s: strides", h->what);
        const cfx_tensor *in[2] = {a, b};
        cfx_iter it;
        cr_expect_eq(cfx_iter_shortcut(&it, &cfx_structured_binary_cfg[0], in, 2), h->shortcut, "%s: shortcut",
                     h->what);
        if (h->fast >= 0) {
            const int64_t *lists[2] = {a->strides, b->strides};
            int64_t st[4];
            cr_expect_eq(cfx_iter_fast_setup_strides(a->sizes, a->ndim, lists, 2, st), h->fast == 1,
                         "%s: fast setup", h->what);
        }
        cfx_scope_end(s);
    }
}
