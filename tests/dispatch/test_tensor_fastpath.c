/* test_tensor_fastpath.c - tensor.c's and scope.c's fast paths against their general paths.
 *
 *   cfx_tensor_new_strided        a small meta tensor (1 to 4 dims, sizes and strides below
 *                                 2^24, a known key set) made with the dims unrolled, vs
 *                                 cfx_tensor_new_strided_general: the same header (sizes,
 *                                 strides, dtype, device, keys, offset, storage size, version,
 *                                 data, empty mode state) or the same error, on random inputs
 *                                 including 0-dim, 5+ dims, empty, negative and huge sizes and
 *                                 strides, bad dtypes and devices, NULL arrays;
 *   cfx_tensor_free_unreferenced  the death of a tensor with nothing to undo vs the general
 *                                 path: binding free_fns run once, modes released, views keep
 *                                 storages, and a recycled header starts empty;
 *   cfx_scope_end                 the inline release loop: newest first, the tensors that die
 *                                 freed, and tensors autoreleased by a dying tensor (or scopes
 *                                 begun and ended by it) handled by the same end. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "dispatch/tensor_ext.h"
#include "dispatch/tensor_internal.h"
#include "tests/test_util.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static void setup(void) { cfx_error_clear(); }

TestSuite(tensor_fastpath, .init = setup);

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd64(void) { return test_rand(&rng); }

static int rnd(int n) { return (int)(rnd64() % (uint64_t)n); }

/* Mostly values the fast path takes, with its edges and what it must decline. */
static int64_t random_size(void)
{
    static const int64_t odd[] = {0, -1, -5, (1 << 24), (1 << 24) + 1, (int64_t)1 << 40, INT64_MAX, INT64_MIN};
    int r = rnd(24);
    if (r < 2)
        return odd[rnd(8)];
    if (r < 6)
        return 1;
    return 1 + rnd(r < 12 ? 8 : 100);
}

static int64_t random_stride(const int64_t *contig, int d)
{
    static const int64_t odd[] = {0, -1, -3, (1 << 24) - 1, (1 << 24), (int64_t)1 << 40, INT64_MAX, INT64_MIN};
    int r = rnd(24);
    if (r < 2)
        return odd[rnd(8)];
    if (r < 10 || r >= 16)
        return contig[d];
    return rnd(r < 13 ? 4 : 1000);
}

/* Everything a header says, or the error. */
typedef struct made {
    bool ok;
    cfx_status status;
    char err[512];
    int ndim;
    int8_t dtype;
    cfx_device device, storage_device;
    int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
    int64_t offset;
    size_t nbytes;
    uint32_t version;
    int32_t refcount, storage_refcount;
    bool has_data, own_storage;
    uint64_t keys;
} made;

static made record(cfx_tensor *t)
{
    made m;
    memset(&m, 0, sizeof m);
    m.ok = t != NULL;
    m.status = cfx_error_status();
    snprintf(m.err, sizeof m.err, "%s", cfx_error_message() ? cfx_error_message() : "");
    cfx_error_clear();
    if (!t)
        return m;
    m.ndim = t->ndim;
    m.dtype = t->dtype;
    m.device = t->device;
    memcpy(m.sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t));
    memcpy(m.strides, t->strides, (size_t)t->ndim * sizeof(int64_t));
    m.offset = t->storage_offset;
    m.nbytes = t->storage->nbytes;
    m.version = t->storage->version;
    m.refcount = t->refcount;
    m.storage_refcount = t->storage->refcount;
    m.storage_device = t->storage->device;
    m.has_data = t->storage->data != NULL;
    m.own_storage = t->storage == &t->own_storage;
    m.keys = t->keys.repr;
    /* a fresh tensor's mode state is empty, whichever header it got */
    cr_assert_null(t->ext.mode);
    cr_assert(!t->ext.is_fake);
    cr_assert_eq(t->ext.n_bindings, 0);
    if (t->ndim <= CFX_INLINE_DIMS)
        cr_assert_eq(t->sizes, t->dims_inline);
    return m;
}

static void expect_same(const made *x, const made *y, int c)
{
    cr_assert_eq(x->ok, y->ok, "case %d: ok %d vs %d (%s | %s)", c, x->ok, y->ok, x->err, y->err);
    cr_assert_eq(x->status, y->status, "case %d", c);
    cr_assert_str_eq(x->err, y->err, "case %d", c);
    if (!x->ok)
        return;
    cr_assert_eq(x->ndim, y->ndim, "case %d", c);
    cr_assert_eq(x->dtype, y->dtype, "case %d", c);
    cr_assert(cfx_device_eq(x->device, y->device), "case %d", c);
    cr_assert(cfx_device_eq(x->storage_device, y->storage_device), "case %d", c);
    cr_assert(!memcmp(x->sizes, y->sizes, (size_t)x->ndim * sizeof(int64_t)), "case %d: sizes", c);
    cr_assert(!memcmp(x->strides, y->strides, (size_t)x->ndim * sizeof(int64_t)), "case %d: strides", c);
    cr_assert_eq(x->offset, y->offset, "case %d", c);
    cr_assert_eq(x->nbytes, y->nbytes, "case %d: nbytes %zu vs %zu", c, x->nbytes, y->nbytes);
    cr_assert_eq(x->version, y->version, "case %d", c);
    cr_assert_eq(x->refcount, y->refcount, "case %d", c);
    cr_assert_eq(x->storage_refcount, y->storage_refcount, "case %d", c);
    cr_assert_eq(x->has_data, y->has_data, "case %d", c);
    cr_assert_eq(x->own_storage, y->own_storage, "case %d", c);
    cr_assert_eq(x->keys, y->keys, "case %d", c);
}

/* The inputs the fast path takes: a meta tensor of 1 to 4 dims, sizes in [1, 2^24], strides
 * in [0, 2^24). (It also needs a recycled header and the meta key set, which every case after
 * the first has.) */
static bool fast_kind(const int64_t *sizes, const int64_t *strides, int n, int dtype, cfx_device dev)
{
    if (n < 1 || n > 4 || !sizes || !strides || !cfx_dtype_valid(dtype) || dev.type != CFX_DEVICE_META)
        return false;
    for (int i = 0; i < n; i++)
        if (sizes[i] < 1 || sizes[i] > (1 << 24) || strides[i] < 0 || strides[i] >= (1 << 24))
            return false;
    return true;
}

static void random_case(int64_t *sizes, int64_t *strides, int *n, int *dtype, cfx_device *dev)
{
    static const int dtypes[] = {CFX_FLOAT32, CFX_FLOAT64, CFX_INT64, CFX_INT32, CFX_BOOL, 0, 5, 12, -1, 200};
    int r = rnd(20);
    *n = r < 2 ? 0 : r < 17 ? 1 + rnd(4) : 5 + rnd(3);
    for (int d = 0; d < *n; d++)
        sizes[d] = random_size();
    int64_t contig[CFX_MAX_DIMS];
    cfx_contiguous_strides(sizes, *n, contig);
    for (int d = 0; d < *n; d++)
        strides[d] = random_stride(contig, d);
    *dtype = dtypes[rnd(20) < 17 ? rnd(5) : 5 + rnd(5)];
    r = rnd(20);
    *dev = r < 14 ? META : r < 17 ? CPU : r < 19 ? (cfx_device){CFX_DEVICE_META, 0} : (cfx_device){7, -1};
}

/* CPU tensors allocate their data; keep them small enough. */
static bool too_big_for_cpu(const int64_t *sizes, const int64_t *strides, int n, cfx_device dev)
{
    if (dev.type != CFX_DEVICE_CPU)
        return false;
    for (int d = 0; d < n; d++)
        if (sizes[d] > 1000 || strides[d] > 1000)
            return true;
    return false;
}

Test(tensor_fastpath, new_strided_agrees_with_the_general_path)
{
    int fast = 0, other = 0, failed = 0;
    for (int c = 0; c < 30000; c++) {
        int64_t sizes[CFX_MAX_DIMS], strides[CFX_MAX_DIMS];
        int n, dtype;
        cfx_device dev;
        random_case(sizes, strides, &n, &dtype, &dev);
        if (too_big_for_cpu(sizes, strides, n, dev))
            continue;
        const int64_t *sz = rnd(50) ? sizes : NULL, *st = rnd(50) ? strides : NULL;
        /* some in a scope (the fast path pushes onto the pool inline), the rest the caller's */
        bool scoped = c % 7 == 0;
        cfx_scope sc = scoped ? cfx_scope_begin() : (cfx_scope){0};
        cfx_tensor *tx = cfx_tensor_new_strided(sz, st, n, (cfx_dtype)dtype, dev);
        made x = record(tx);
        cfx_tensor *ty = cfx_tensor_new_strided_general(sz, st, n, (cfx_dtype)dtype, dev);
        made y = record(ty);
        expect_same(&x, &y, c);
        if (fast_kind(sz, st, n, dtype, dev))
            fast++;
        else
            other++;
        failed += !x.ok;
        cr_assert_eq(cfx_tensor_live_count(), x.ok ? 2 : 0);
        if (scoped) {
            cfx_scope_end(sc);
        } else {
            /* freed by the fast free (which declines CPU data) and by the general one */
            cfx_tensor_release(tx);
            if (ty && --ty->refcount == 0)
                cfx_tensor_free_unreferenced_general(ty);
        }
        cr_assert_eq(cfx_tensor_live_count(), 0);
    }
    cr_expect_gt(fast, 10000, "fast-path inputs %d", fast);
    cr_expect_gt(other, 5000, "other inputs %d", other);
    cr_expect_gt(failed, 1000, "errors %d", failed);
}

/* ------------------------------------------------------------------ free */

static int frees;
static void count_free(void *p)
{
    frees++;
    free(p);
}

static cfx_tensor *meta2(void)
{
    static const int64_t s[] = {2, 3}, st[] = {3, 1};
    return cfx_tensor_new_strided(s, st, 2, CFX_FLOAT32, META);
}

Test(tensor_fastpath, free_runs_what_there_is_to_undo)
{
    uint64_t o1 = cfx_binding_owner_new(), o2 = cfx_binding_owner_new();
    int data = 0;
    frees = 0;
    /* one binding, no free_fn: the fast free; the header comes back empty */
    cfx_tensor *t = meta2();
    cr_assert_eq(cfx_tensor_binding_set(t, o1, &data, NULL), CFX_OK);
    cfx_tensor_release(t);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    cfx_tensor *u = meta2();
    cr_assert_eq(u, t, "the header is recycled (LIFO)");
    cr_assert_null(cfx_tensor_binding_get(u, o1), "a recycled header has no bindings");
    cr_assert_null(cfx_tensor_mode(u));
    /* one binding with a free_fn: it runs once */
    cr_assert_eq(cfx_tensor_binding_set(u, o1, malloc(4), count_free), CFX_OK);
    cfx_tensor_release(u);
    cr_assert_eq(frees, 1);
    /* two bindings, one cleared, with free_fns: the one left runs */
    t = meta2();
    cr_assert_eq(cfx_tensor_binding_set(t, o1, malloc(4), count_free), CFX_OK);
    cr_assert_eq(cfx_tensor_binding_set(t, o2, malloc(4), count_free), CFX_OK);
    cfx_tensor_binding_clear(t, o1);
    cr_assert_eq(frees, 2);
    cfx_tensor_release(t);
    cr_assert_eq(frees, 3);
    /* three bindings: a grown array, freed (ASan's leak check watches) */
    t = meta2();
    for (int i = 0; i < 3; i++)
        cr_assert_eq(cfx_tensor_binding_set(t, cfx_binding_owner_new(), &data, NULL), CFX_OK);
    cfx_tensor_release(t);
    u = meta2();
    cr_assert_eq(u->ext.n_bindings, 0);
    cr_assert_null(cfx_tensor_binding_get(u, o2));
    cfx_tensor_release(u);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(tensor_fastpath, free_keeps_storage_held_by_views)
{
    /* a meta base and a view: the base's header waits for the view */
    cfx_tensor *t = meta2();
    int64_t vs[] = {3}, vst[] = {1};
    cfx_tensor *v = cfx_tensor_new_view(t, vs, vst, 1, 3);
    cr_assert_eq(t->storage->refcount, 2);
    cfx_tensor_release(t);
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cr_assert_eq(v->storage->refcount, 1);
    cr_assert_eq(v->storage->nbytes, 24);
    cfx_tensor *w = meta2();
    cr_assert_neq(w, t, "a header whose storage is held is not recycled");
    cfx_tensor_release(w);
    cfx_tensor_release(v);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    /* CPU data, and more dims than the header holds */
    int64_t s[] = {2, 3};
    cfx_tensor *c = cfx_tensor_new(s, 2, CFX_INT64, CPU);
    ((int64_t *)cfx_tensor_data(c))[5] = 7;
    cfx_tensor_release(c);
    int64_t big[] = {1, 2, 1, 2, 1, 2};
    cfx_tensor *b = cfx_tensor_new(big, 6, CFX_FLOAT32, META);
    cr_assert_neq(b->sizes, b->dims_inline);
    cfx_tensor_release(b);
    cfx_tensor *r = meta2();
    cr_assert_eq(r->sizes, r->dims_inline, "a recycled header's dims are inline again");
    cfx_tensor_release(r);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ scopes */

static cfx_tensor *order[16];
static int norder;

static void record_death(void *p)
{
    order[norder++] = p;
}

/* A binding whose free_fn runs when its tensor dies, recording which tensor it was. */
static cfx_tensor *watched(void)
{
    cfx_tensor *t = meta2();
    cr_assert_eq(cfx_tensor_binding_set(t, cfx_binding_owner_new(), t, record_death), CFX_OK);
    return t;
}

Test(tensor_fastpath, scope_end_releases_newest_first_and_skips_survivors)
{
    norder = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = watched(), *b = watched(), *c = watched(), *d = watched();
    cfx_tensor_retain(b); /* survives */
    cfx_tensor_retain(d);
    cr_assert_eq(cfx_tensor_live_count(), 4);
    cfx_scope_end(s);
    cr_assert_eq(norder, 2);
    cr_assert_eq(order[0], c);
    cr_assert_eq(order[1], a);
    cr_assert_eq(cfx_tensor_live_count(), 2);
    cr_assert_eq(b->refcount, 1);
    cr_assert_eq(d->refcount, 1);
    cfx_tensor_release(d);
    cfx_tensor_release(b);
    cr_assert_eq(norder, 4);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* A free_fn that makes a tensor (autoreleased into whatever scope is open) and opens and ends
 * a scope of its own, as a dying tensor's mode or tracer may. */
static cfx_tensor *last_made;
static void make_more(void *p)
{
    (void)p;
    norder++;
    cfx_scope inner = cfx_scope_begin();
    meta2();
    cfx_scope_end(inner);
    cfx_tensor *t = last_made = meta2();
    if (norder < 3) /* a chain of three deaths */
        cr_assert_eq(cfx_tensor_binding_set(t, cfx_binding_owner_new(), NULL, make_more), CFX_OK);
}

Test(tensor_fastpath, scope_end_releases_what_dying_tensors_autorelease)
{
    norder = 0;
    cfx_scope outer = cfx_scope_begin();
    cfx_tensor *keep = cfx_tensor_retain(meta2());
    cfx_scope s = cfx_scope_begin();
    meta2();
    cfx_tensor *t = meta2();
    cr_assert_eq(cfx_tensor_binding_set(t, cfx_binding_owner_new(), NULL, make_more), CFX_OK);
    meta2();
    cfx_scope_end(s);
    cr_assert_eq(norder, 3);
    cr_assert_eq(cfx_scope_depth(), 1);
    cr_assert_eq(cfx_tensor_live_count(), 1, "only the outer scope's tensor");
    cr_assert_eq(keep->refcount, 2);
    cfx_scope_end(outer);
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cr_assert_eq(keep->refcount, 1);
    cfx_tensor_release(keep);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    /* with no scope open, what a dying tensor makes is its free_fn's (here: leaked to us) */
    norder = 2;
    t = meta2();
    cr_assert_eq(cfx_tensor_binding_set(t, cfx_binding_owner_new(), NULL, make_more), CFX_OK);
    cfx_tensor_release(t);
    cr_assert_eq(norder, 3);
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cfx_tensor_release(last_made);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ bindings */

/* binding_get reads slot 0 in the header and binding_set fills it without setting up the
 * array: right while the bindings live in the header, after they move to the heap, after
 * clears, for owner 0, and on a recycled header whose last life grew an array. */
Test(tensor_fastpath, binding_slot_zero_shortcuts)
{
    int v[8];
    uint64_t o[5];
    for (int i = 0; i < 5; i++)
        o[i] = cfx_binding_owner_new();
    for (int round = 0; round < 3; round++) {
        cfx_tensor *t = meta2();
        cr_assert_null(cfx_tensor_binding_get(t, o[0]));
        cr_assert_null(cfx_tensor_binding_get(t, 0));
        cr_assert_eq(cfx_tensor_binding_set(t, 0, &v[0], NULL), CFX_ERR);
        cfx_error_clear();
        cr_assert_eq(cfx_tensor_binding_set(t, o[0], &v[0], NULL), CFX_OK);
        cr_assert_eq(cfx_tensor_binding_get(t, o[0]), &v[0]);
        cr_assert_null(cfx_tensor_binding_get(t, o[1]));
        cr_assert_null(cfx_tensor_binding_get(t, 0));
        cr_assert_eq(cfx_tensor_binding_set(t, o[1], &v[1], NULL), CFX_OK);
        cr_assert_eq(cfx_tensor_binding_get(t, o[1]), &v[1]);
        cr_assert_eq(t->ext.bindings, t->ext.inline_bindings);
        /* the third moves them to the heap: slot 0 is found there */
        cr_assert_eq(cfx_tensor_binding_set(t, o[2], &v[2], NULL), CFX_OK);
        cr_assert_neq(t->ext.bindings, t->ext.inline_bindings);
        for (int i = 0; i < 3; i++)
            cr_assert_eq(cfx_tensor_binding_get(t, o[i]), &v[i], "owner %d", i);
        cr_assert_null(cfx_tensor_binding_get(t, 0));
        /* rebinding slot 0 and clearing it, on the heap */
        cr_assert_eq(cfx_tensor_binding_set(t, o[0], &v[3], NULL), CFX_OK);
        cr_assert_eq(cfx_tensor_binding_get(t, o[0]), &v[3]);
        cfx_tensor_binding_clear(t, o[0]);
        cr_assert_null(cfx_tensor_binding_get(t, o[0]));
        cr_assert_null(cfx_tensor_binding_get(t, 0));
        cr_assert_eq(cfx_tensor_binding_get(t, o[2]), &v[2]);
        /* the cleared slot is reused */
        cr_assert_eq(cfx_tensor_binding_set(t, o[3], &v[4], NULL), CFX_OK);
        cr_assert_eq(cfx_tensor_binding_get(t, o[3]), &v[4]);
        cfx_tensor_release(t);
        /* the recycled header starts with its bindings in the header again */
        cfx_tensor *u = meta2();
        cr_assert_eq(u, t);
        cr_assert_eq(u->ext.n_bindings, 0);
        cr_assert_eq(u->ext.bindings, u->ext.inline_bindings);
        cr_assert_eq(u->ext.cap_bindings, CFX_TENSOR_EXT_INLINE_BINDINGS);
        for (int i = 0; i < 5; i++)
            cr_assert_null(cfx_tensor_binding_get(u, o[i]));
        /* in the header: clear slot 0, then owner 0 and the others */
        cr_assert_eq(cfx_tensor_binding_set(u, o[4], &v[5], NULL), CFX_OK);
        cr_assert_eq(cfx_tensor_binding_set(u, o[1], &v[6], NULL), CFX_OK);
        cfx_tensor_binding_clear(u, o[4]);
        cr_assert_null(cfx_tensor_binding_get(u, o[4]));
        cr_assert_null(cfx_tensor_binding_get(u, 0));
        cr_assert_eq(cfx_tensor_binding_get(u, o[1]), &v[6]);
        cfx_tensor_release(u);
    }
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* More deaths at once than the free list keeps (1024): the rest go back to malloc (ASan's
 * leak check watches), and the list serves the next burst. */
Test(tensor_fastpath, free_list_overflow)
{
    for (int round = 0; round < 3; round++) {
        cfx_scope s = cfx_scope_begin();
        for (int i = 0; i < 3000; i++)
            cr_assert_not_null(meta2());
        cr_assert_eq(cfx_tensor_live_count(), 3000);
        cfx_scope_end(s);
        cr_assert_eq(cfx_tensor_live_count(), 0);
    }
}
