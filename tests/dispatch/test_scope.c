/* test_scope.c - autorelease scopes: what is freed when, nesting, and per-thread isolation.
 *
 * cfx_tensor_live_count() is the witness: every assertion about ownership is an assertion
 * about how many tensors are alive. */
#include <criterion/criterion.h>
#include <pthread.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"

static const int64_t SIZES[] = {2, 3};

static cfx_tensor *meta(void)
{
    return cfx_tensor_new(SIZES, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
}

Test(scope, tensors_freed_at_end)
{
    cr_assert_eq(cfx_scope_depth(), 0);
    cfx_scope s = cfx_scope_begin();
    cr_assert_eq(cfx_scope_depth(), 1);
    for (int i = 0; i < 1000; i++)
        cr_assert_not_null(meta());
    cfx_tensor *cpu = cfx_tensor_new(SIZES, 2, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    int64_t vs[] = {3}, vst[] = {1};
    cr_assert_not_null(cfx_tensor_new_view(cpu, vs, vst, 1, 3));
    cr_assert_eq(cfx_tensor_live_count(), 1002);
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    cr_assert_eq(cfx_scope_depth(), 0);
}

Test(scope, retained_tensors_survive)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *a = meta();
    cfx_tensor *keep = cfx_tensor_retain(meta());
    int64_t vs[] = {3}, vst[] = {1};
    cfx_tensor *view = cfx_tensor_retain(cfx_tensor_new_view(a, vs, vst, 1, 0));
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 2);
    cr_assert_eq(keep->refcount, 1);
    cr_assert_eq(view->storage->refcount, 1, "a's header died, its storage lives on in the view");
    cfx_tensor_release(keep);
    cfx_tensor_release(view);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(scope, no_scope_means_caller_owns)
{
    cfx_tensor *t = meta();
    cr_assert_eq(cfx_autorelease(t), t);
    cr_assert_eq(t->refcount, 1);
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cfx_tensor_release(t);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    cr_assert_null(cfx_autorelease(NULL));
}

Test(scope, nested_scopes_release_their_own)
{
    cfx_scope outer = cfx_scope_begin();
    meta();
    meta();
    cfx_scope inner = cfx_scope_begin();
    cr_assert_eq(cfx_scope_depth(), 2);
    meta();
    meta();
    meta();
    cr_assert_eq(cfx_tensor_live_count(), 5);
    cfx_scope_end(inner);
    cr_assert_eq(cfx_tensor_live_count(), 2);
    cr_assert_eq(cfx_scope_depth(), 1);
    cfx_scope inner2 = cfx_scope_begin();
    meta();
    cfx_scope_end(inner2);
    cr_assert_eq(cfx_tensor_live_count(), 2);
    cfx_scope_end(outer);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* Empty scopes begun back to back must not be confused with each other. */
Test(scope, empty_nested_scopes)
{
    cfx_scope a = cfx_scope_begin();
    cfx_scope b = cfx_scope_begin();
    cfx_scope_end(b);
    cr_assert_eq(cfx_scope_depth(), 1, "ending the inner scope leaves the outer one open");
    meta();
    cfx_scope_end(a);
    cr_assert_eq(cfx_scope_depth(), 0);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(scope, ending_outer_ends_inner)
{
    cfx_scope outer = cfx_scope_begin();
    meta();
    cfx_scope mid = cfx_scope_begin();
    meta();
    cfx_scope inner = cfx_scope_begin();
    meta();
    cfx_scope_end(outer);
    cr_assert_eq(cfx_scope_depth(), 0);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    /* the inner scopes are gone: ending them again does nothing */
    cfx_scope_end(inner);
    cfx_scope_end(mid);
    cr_assert_eq(cfx_scope_depth(), 0);
    cfx_tensor *t = meta();
    cr_assert_eq(cfx_tensor_live_count(), 1, "no scope open: the tensor is the caller's");
    cfx_tensor_release(t);
}

Test(scope, release_order_is_newest_first)
{
    /* A view made after its base is released first; both die, the storage last. */
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *base = cfx_tensor_new(SIZES, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    int64_t vs[] = {6}, vst[] = {1};
    for (int i = 0; i < 10; i++)
        cfx_tensor_new_view(base, vs, vst, 1, 0);
    cr_assert_eq(base->storage->refcount, 11);
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ threads */

typedef struct worker {
    pthread_barrier_t *barrier;
    int made;
    int depth_seen;
    bool leave_open;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    cfx_scope s = cfx_scope_begin();
    for (int i = 0; i < w->made; i++)
        meta();
    w->depth_seen = cfx_scope_depth();
    pthread_barrier_wait(w->barrier); /* everyone holds its tensors */
    pthread_barrier_wait(w->barrier); /* main has checked the count */
    if (!w->leave_open)
        cfx_scope_end(s);
    return NULL; /* a scope left open is ended when the thread exits */
}

Test(scope, threads_have_independent_scopes)
{
    enum { T = 4 };
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, T + 1);
    pthread_t th[T];
    worker w[T];
    cfx_scope mine = cfx_scope_begin();
    meta();
    for (int i = 0; i < T; i++) {
        w[i] = (worker){&barrier, 100 * (i + 1), 0, i == T - 1};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    pthread_barrier_wait(&barrier);
    cr_assert_eq(cfx_tensor_live_count(), 1 + 100 + 200 + 300 + 400);
    cr_assert_eq(cfx_scope_depth(), 1, "other threads' scopes are not ours");
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(w[i].depth_seen, 1);
    }
    cr_assert_eq(cfx_tensor_live_count(), 1, "the thread that left its scope open released it at exit");
    cfx_scope_end(mine);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    pthread_barrier_destroy(&barrier);
}

/* A tensor made in one thread may be released (and its header recycled) in another. */
static void *release_it(void *arg)
{
    cfx_tensor_release(arg);
    return NULL;
}

Test(scope, cross_thread_release)
{
    cfx_tensor *t = meta();
    pthread_t th;
    pthread_create(&th, NULL, release_it, t);
    pthread_join(th, NULL);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}
