/* test_iter.c - TensorIterator's fast_set_up against its general layout.
 *
 * PyTorch's TensorIterator itself has two ways to a new output's strides: fast_set_up
 * (contiguous / channels-last / identically strided dense inputs) and reorder_dimensions +
 * allocate_or_resize_outputs. cfx_iter_fast_setup_strides must give the same physical layout
 * as cfx_iter_output_strides, i.e. equal strides on every dim of size > 1, as PyTorch's NOTE
 * [Computing output strides] promises, and be taken exactly when PyTorch's
 * compute_fast_setup_type takes it. Random inputs come from a fixed seed; a handful of hand
 * cases with PyTorch's answers (CPU tensors, `a + b`: since 2.13 TensorIterator lays out the
 * CPU kernels' outputs only, the Meta kernels being Python references) pin which way each
 * kind of input takes. The bulk check against PyTorch itself is tests/data/ops_strides.json
 * (test_ops.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/structured.h"
#include "tests/test_util.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};

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

/* ---- hand cases: PyTorch 2.13's strides for `a + b` on CPU tensors, and the path taken ---- */

typedef struct hand_case {
    const char *what;
    int na, nb;
    int64_t sa[4], ta[4], sb[4], tb[4];
    int64_t want[4];
    int fast;       /* cfx_iter_fast_setup_strides: 1 taken, 0 declined, -1 not asked (broadcast) */
} hand_case;

static const hand_case hand[] = {
    {"contiguous", 2, 2, {3, 4}, {4, 1}, {3, 4}, {4, 1}, {4, 1}, 1},
    {"contiguous, odd size-1 stride", 3, 3, {3, 1, 4}, {4, 99, 1}, {3, 1, 4}, {4, 4, 1}, {4, 4, 1}, 1},
    {"channels-last", 4, 4, {2, 3, 4, 5}, {60, 1, 15, 3}, {2, 3, 4, 5}, {60, 1, 15, 3}, {60, 1, 15, 3}, 1},
    {"NC11: contiguous and channels-last", 4, 4, {2, 3, 1, 1}, {3, 1, 3, 3}, {2, 3, 1, 1}, {3, 1, 3, 3},
     {3, 1, 1, 1}, 1},
    {"permuted, same strides", 3, 3, {2, 4, 3}, {1, 6, 2}, {2, 4, 3}, {1, 6, 2}, {1, 6, 2}, 1},
    {"permuted, different strides", 3, 3, {2, 4, 3}, {1, 6, 2}, {2, 4, 3}, {12, 3, 1}, {1, 6, 2}, 0},
    {"overlapping", 2, 2, {3, 4}, {0, 1}, {3, 4}, {0, 1}, {4, 1}, 0},
    {"gaps, same strides", 2, 2, {2, 3}, {6, 2}, {2, 3}, {6, 2}, {3, 1}, 0},
    {"empty", 2, 2, {0, 3}, {1, 0}, {0, 3}, {1, 0}, {3, 1}, 1},
    {"broadcast", 2, 2, {3, 1}, {1, 1}, {1, 4}, {4, 1}, {4, 1}, -1},
    {"0-dim and a transposed matrix", 0, 2, {0}, {0}, {3, 4}, {1, 3}, {1, 3}, -1},
};

Test(iter, hand_cases_match_pytorch)
{
    for (size_t k = 0; k < sizeof hand / sizeof hand[0]; k++) {
        const hand_case *h = &hand[k];
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *a = cfx_tensor_new_strided(h->sa, h->ta, h->na, CFX_FLOAT32, CPU);
        cfx_tensor *b = cfx_tensor_new_strided(h->sb, h->tb, h->nb, CFX_FLOAT32, CPU);
        cfx_tensor *r = cfx_add(a, b);
        cr_assert_not_null(r, "%s: %s", h->what, cfx_error_message());
        cr_expect(!memcmp(r->strides, h->want, (size_t)r->ndim * sizeof(int64_t)), "%s: strides", h->what);
        if (h->fast >= 0) {
            const int64_t *lists[2] = {a->strides, b->strides};
            int64_t st[4];
            cr_expect_eq(cfx_iter_fast_setup_strides(a->sizes, a->ndim, lists, 2, st), h->fast == 1,
                         "%s: fast setup", h->what);
        }
        cfx_scope_end(s);
    }
}
