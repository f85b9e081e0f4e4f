/* test_tensor_lifetime.c - how tensors die: storages that outlive their tensor in views,
 * bindings run and cleared, recycled headers starting empty, the free list's bound, and the
 * order in which a scope's end releases what it holds (newest first, including what a dying
 * tensor autoreleases). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "dispatch/tensor_ext.h"
#include "tests/test_util.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static void setup(void) { cfx_error_clear(); }

TestSuite(tensor_lifetime, .init = setup);

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

Test(tensor_lifetime, free_runs_what_there_is_to_undo)
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

Test(tensor_lifetime, free_keeps_storage_held_by_views)
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

Test(tensor_lifetime, scope_end_releases_newest_first_and_skips_survivors)
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

Test(tensor_lifetime, scope_end_releases_what_dying_tensors_autorelease)
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

/* Bindings in the header, then on the heap, rebound, cleared and reused, never found for
 * owner 0, and gone from a recycled header whose last life grew an array. */
Test(tensor_lifetime, bindings_grow_clear_and_recycle)
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
Test(tensor_lifetime, free_list_overflow)
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

/* cfx_tensor_pointer_is_live tells a live header from anything else without faulting. */
Test(tensor_lifetime, pointer_liveness)
{
    cfx_tensor *t = meta2();
    cr_expect(cfx_tensor_pointer_is_live(t));
    static char not_a_tensor[sizeof(cfx_tensor)] __attribute__((aligned(16)));
    cr_expect(!cfx_tensor_pointer_is_live(not_a_tensor));
    cr_expect(!cfx_tensor_pointer_is_live(NULL));
    cr_expect(!cfx_tensor_pointer_is_live((void *)(uintptr_t)0x10));       /* unmapped page */
    cr_expect(!cfx_tensor_pointer_is_live((char *)t + 1));                  /* misaligned */
    cr_expect(!cfx_tensor_pointer_is_live((void *)(uintptr_t)0xdead0000)); /* unmapped, aligned */
    cfx_tensor_release(t);
    cr_expect(!cfx_tensor_pointer_is_live(t), "a dead header (on the free list) is not live");
}
