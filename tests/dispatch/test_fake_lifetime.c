/* test_fake_lifetime.c - fake tensors and the headers they live in: mode state and bindings
 * on recycled headers, storages inside their headers (and outliving them in views), storage
 * sizes of new tensors on fresh and recycled headers, each fake's reference to its mode, the
 * per-thread live count across threads, the key sets of fake tensors and of a thread with a
 * mode set, and repeated calls giving the same answers and errors. Expected texts are PyTorch
 * 2.x's str(OpOverload), as in test_fake.c. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(fake_lifetime, .init = setup);

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};

static int freed;
static void count_free(void *p)
{
    freed++;
    free(p);
}

static int *boxed_int(int v)
{
    int *p = malloc(sizeof *p);
    *p = v;
    return p;
}

Test(fake_lifetime, bindings_past_the_inline_slots)
{
    freed = 0;
    int64_t n = 3;
    cfx_tensor *t = cfx_tensor_new(&n, 1, CFX_FLOAT32, CPU);
    enum { OWNERS = 7 }; /* inline slots, then the heap array, grown twice */
    uint64_t o[OWNERS];
    for (int i = 0; i < OWNERS; i++) {
        o[i] = cfx_binding_owner_new();
        cr_assert_eq(cfx_tensor_binding_set(t, o[i], boxed_int(100 + i), count_free), CFX_OK);
    }
    for (int i = 0; i < OWNERS; i++)
        cr_assert_eq(*(int *)cfx_tensor_binding_get(t, o[i]), 100 + i, "owner %d keeps its data", i);
    cfx_tensor_binding_clear(t, o[1]);
    cr_assert_eq(freed, 1);
    cr_assert_null(cfx_tensor_binding_get(t, o[1]));
    uint64_t late = cfx_binding_owner_new();
    cr_assert_eq(cfx_tensor_binding_set(t, late, boxed_int(42), count_free), CFX_OK);
    cr_assert_eq(*(int *)cfx_tensor_binding_get(t, late), 42, "a cleared slot is reused");
    cr_assert_eq(*(int *)cfx_tensor_binding_get(t, o[0]), 100);
    cr_assert_eq(*(int *)cfx_tensor_binding_get(t, o[6]), 106);
    cfx_tensor_release(t);
    cr_assert_eq(freed, OWNERS + 1, "every remaining binding is freed with the tensor");
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_lifetime, recycled_blocks_start_empty)
{
    /* A block freed with bindings and a mode comes back from the free list as new. */
    uint64_t o = cfx_binding_owner_new();
    int64_t n = 2;
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    for (int round = 0; round < 200; round++) {
        cfx_tensor *r = cfx_tensor_new(&n, 1, CFX_FLOAT32, CPU);
        cr_assert_null(cfx_tensor_binding_get(r, o), "round %d: no stale binding", round);
        cr_assert(!cfx_tensor_is_fake(r));
        cr_assert_null(cfx_tensor_mode(r));
        cr_assert_eq(cfx_tensor_binding_set(r, o, NULL, NULL), CFX_OK);
        cr_assert(!cfx_tensor_is_fake(r), "a binding does not make a tensor fake");
        cfx_tensor *f = cfx_fake_from_tensor(m, r);
        cr_assert(cfx_tensor_is_fake(f));
        cr_assert_null(cfx_tensor_binding_get(f, o), "round %d: the fake has no binding", round);
        cfx_tensor_release(f);
        cfx_tensor_release(r);
    }
    cfx_fake_mode_free(m);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_lifetime, every_fake_holds_its_mode)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_mode *base = cfx_fake_mode_base(m);
    cr_assert_eq(atomic_load(&base->refcount), 1, "the creator's reference");
    int64_t sz[2] = {4, 5};
    cfx_tensor *r = cfx_tensor_new(sz, 2, CFX_FLOAT32, CPU);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cr_assert_eq(atomic_load(&base->refcount), 2, "and the fake's");
    cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
    cfx_tensor *outs[50];
    for (int i = 0; i < 50; i++) {
        outs[i] = cfx_add(f, f);
        cr_assert_not_null(outs[i], "%s", cfx_error_message());
    }
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cr_assert_eq(atomic_load(&base->refcount), 52, "one for each of 51 fakes");
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m); /* drops the memo (the last reference to f) and the creator's reference */
    cr_assert_eq(atomic_load(&base->refcount), 50);
    for (int i = 0; i < 50; i++) {
        cr_assert(cfx_tensor_is_fake(outs[i]));
        cr_assert_eq(cfx_tensor_fake_mode(outs[i]), m, "the mode outlives cfx_fake_mode_free");
    }
    /* with no mode set, a fake enters its own mode for the call */
    cfx_tensor *g = cfx_mul(outs[0], outs[49]);
    cr_assert_not_null(g, "%s", cfx_error_message());
    cr_assert_eq(cfx_tensor_fake_mode(g), m);
    cr_assert_eq(g->sizes[0], 4);
    cr_assert_eq(g->sizes[1], 5);
    cfx_tensor_release(g);
    for (int i = 0; i < 50; i++)
        cfx_tensor_release(outs[i]); /* the last one frees the mode (LeakSanitizer checks) */
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_lifetime, repeated_calls_give_the_same_answers)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    int64_t sz[1] = {3};
    cfx_tensor *r = cfx_tensor_new(sz, 1, CFX_FLOAT32, CPU);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
    for (int i = 0; i < 3; i++) {
        cfx_error_clear();
        cr_assert_null(cfx_nonzero(f));
        cr_assert_str_eq(cfx_error_message(), "aten.nonzero.default", "call %d", i);
        cfx_error_clear();
        cfx_tensor *y = cfx_add(f, f); /* not data-dependent, first call or cached */
        cr_assert_not_null(y, "call %d: %s", i, cfx_error_message());
        cr_assert(cfx_tensor_is_fake(y));
        cfx_tensor_release(y);
    }
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m);
}

Test(fake_lifetime, precomputed_key_sets)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    int64_t sz[1] = {2};
    cfx_tensor *r = cfx_tensor_new(sz, 1, CFX_FLOAT32, CPU);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cfx_keyset want = cfx_keyset_add(cfx_keyset_add(cfx_keyset_for_tensor(CFX_BACKEND_META), CFX_KEY_Python),
                                     CFX_KEY_PythonTLSSnapshot);
    cr_assert_eq(f->keys.repr, want.repr, "a fake tensor: meta's keys plus Python, PythonTLSSnapshot");
    /* a mode on the stack puts Python and PythonTLSSnapshot in the included set, and only those */
    cfx_local_keys before = cfx_local_keys_get();
    cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
    cfx_local_keys in = cfx_local_keys_get();
    cfx_keyset py = cfx_keyset_add(cfx_keyset_of(CFX_KEY_Python), CFX_KEY_PythonTLSSnapshot);
    cr_assert_eq(in.included.repr, before.included.repr | py.repr);
    cr_assert_eq(in.excluded.repr, before.excluded.repr);
    cr_assert_eq(cfx_mode_stack_len(), 1);
    cfx_tensor *y = cfx_relu(f);
    cr_assert_not_null(y, "%s", cfx_error_message());
    cr_assert_eq(y->keys.repr, want.repr, "outputs get the same key set");
    cr_assert_eq(cfx_local_keys_get().included.repr, in.included.repr, "a call leaves the keys as it found them");
    cr_assert_eq(cfx_local_keys_get().excluded.repr, in.excluded.repr);
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cr_assert_eq(cfx_local_keys_get().included.repr, before.included.repr);
    cfx_tensor_release(y);
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m);
}

/* Blocks recycled on a worker thread are freed when it exits (LeakSanitizer checks). */
static void *worker(void *arg)
{
    (void)arg;
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    int64_t sz[1] = {8};
    cfx_tensor *r = cfx_tensor_new(sz, 1, CFX_FLOAT32, CPU);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cfx_fake_mode_enter(m);
    long ok = 0;
    for (int i = 0; i < 100; i++) {
        cfx_tensor *y = cfx_add(f, f);
        ok += y && cfx_tensor_is_fake(y) && cfx_tensor_fake_mode(y) == m;
        cfx_tensor_release(y);
    }
    cfx_fake_mode_exit(m);
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m);
    return (void *)ok;
}

Test(fake_lifetime, threads_recycle_their_own_blocks)
{
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < 2; i++) {
        void *ok;
        pthread_join(th[i], &ok);
        cr_assert_eq((long)ok, 100, "thread %d: every output a fake of its own mode", i);
    }
}

/* ------------------------------------------------------------------ tensor creation */

static const cfx_device META = {CFX_DEVICE_META, -1};

/* make()'s one-pass case and every case it hands to the general path, each made twice: on a
 * thread whose free list is empty (the general path) and again with a recycled header at hand
 * (the fast path where it applies). Both must give c10's storage sizes. */
typedef struct shape_case {
    int ndim;
    int64_t sizes[6], strides[6];
    cfx_dtype dtype;
    uint64_t nbytes;
} shape_case;

static const shape_case shape_cases[] = {
    {2, {64, 64}, {64, 1}, CFX_FLOAT32, 64 * 64 * 4},
    {0, {0}, {0}, CFX_FLOAT64, 8},                                  /* 0-dim */
    {3, {2, 0, 5}, {5, 5, 1}, CFX_FLOAT32, 0},                      /* empty: general */
    {1, {1}, {0}, CFX_INT64, 8},                                    /* size 1, stride 0 */
    {2, {INT64_C(1) << 24, 2}, {1, 1}, CFX_BOOL, (INT64_C(1) << 24) + 1}, /* size 2^24 */
    {2, {3, (INT64_C(1) << 24) + 1}, {1, 3}, CFX_FLOAT32, (1 + 2 + 3 * (INT64_C(1) << 24)) * 4}, /* general */
    {1, {4}, {INT64_C(1) << 30}, CFX_INT32, (1 + 3 * (INT64_C(1) << 30)) * 4}, /* big stride: general */
    {5, {2, 2, 2, 2, 2}, {16, 8, 4, 2, 1}, CFX_FLOAT32, 32 * 4},    /* 5 dims: general */
    {2, {2, 3}, {-1, 1}, CFX_FLOAT32, INT64_MAX},                   /* negative stride: clamped */
};

static void check_shapes(const char *when)
{
    for (size_t k = 0; k < sizeof shape_cases / sizeof shape_cases[0]; k++) {
        const shape_case *c = &shape_cases[k];
        cfx_tensor *t = cfx_tensor_new_strided(c->sizes, c->strides, c->ndim, c->dtype, META);
        cr_assert_not_null(t, "%s, case %zu: %s", when, k, cfx_error_message());
        cr_assert_eq(t->ndim, c->ndim);
        cr_assert_eq((int)t->dtype, (int)c->dtype);
        cr_assert_eq(t->storage_offset, 0);
        for (int d = 0; d < c->ndim; d++)
            cr_assert(t->sizes[d] == c->sizes[d] && t->strides[d] == c->strides[d], "%s, case %zu, dim %d", when, k, d);
        cr_assert_eq((uint64_t)t->storage->nbytes, c->nbytes, "%s, case %zu: %zu bytes", when, k, t->storage->nbytes);
        cr_assert_eq(t->storage, &t->own_storage);
        cr_assert_eq(t->storage->refcount, 1);
        cr_assert_eq(t->storage->version, 0);
        cr_assert_null(t->storage->data);
        cr_assert_null(t->ext.mode);
        cr_assert_eq(t->ext.n_bindings, 0);
        cr_assert(!cfx_tensor_is_fake(t));
        cr_assert_eq(t->refcount, 1);
        cfx_tensor_release(t);
    }
    /* contiguous: the product in c10's order, then strides from the sizes */
    int64_t sz[3] = {2, 3, 4};
    cfx_tensor *t = cfx_tensor_new(sz, 3, CFX_FLOAT32, META);
    cr_assert(t && t->strides[0] == 12 && t->strides[1] == 4 && t->strides[2] == 1 && t->storage->nbytes == 96, "%s", when);
    cfx_tensor_release(t);
    int64_t over[3] = {INT64_C(1) << 40, INT64_C(1) << 30, 0};
    cr_assert_null(cfx_tensor_new(over, 3, CFX_FLOAT32, META), "%s", when);
    cr_assert_str_eq(cfx_error_message(), "Storage size calculation overflowed with sizes=[1099511627776, 1073741824, 0]");
    cfx_error_clear();
    int64_t neg[2] = {2, -3}, st[2] = {1, 1};
    cr_assert_null(cfx_tensor_new_strided(neg, st, 2, CFX_FLOAT32, META), "%s", when);
    cr_assert_str_eq(cfx_error_message(), "Trying to create tensor with negative dimension -3: [2, -3]");
    cfx_error_clear();
    cr_assert_null(cfx_tensor_new_strided(sz, st, 2, (cfx_dtype)5, META));
    cr_assert_str_eq(cfx_error_message(), "invalid dtype code 5");
    cfx_error_clear();
}

static void *shapes_on_fresh_thread(void *arg)
{
    (void)arg;
    check_shapes("first (empty free list)");
    check_shapes("again (recycled headers)");
    return NULL;
}

Test(fake_lifetime, storage_sizes_on_fresh_and_recycled_headers)
{
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, shapes_on_fresh_thread, NULL), 0);
    pthread_join(th, NULL);
    check_shapes("main thread");
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_lifetime, recycled_headers_start_clean)
{
    /* a many-dims tensor (heap dims), a fake tensor with a binding and a view with an offset
     * die; what is made next in their headers is a plain fresh tensor */
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    uint64_t o = cfx_binding_owner_new();
    for (int round = 0; round < 3; round++) {
        int64_t six[6] = {1, 2, 1, 2, 1, 2}, two[2] = {4, 4}, st[2] = {4, 1}, one[1] = {2}, one_st[1] = {1};
        cfx_tensor *a = cfx_tensor_new(six, 6, CFX_FLOAT32, META);
        cr_assert_neq(a->sizes, a->dims_inline);
        cfx_tensor *r = cfx_tensor_new(two, 2, CFX_FLOAT32, CPU);
        cfx_tensor *f = cfx_fake_from_tensor(m, r);
        cr_assert_eq(cfx_tensor_binding_set(f, o, f, NULL), CFX_OK);
        cfx_tensor *v = cfx_tensor_new_view(f, one, one_st, 1, 3);
        cfx_tensor_bump_version(v);
        cfx_tensor_release(a);
        cfx_tensor_release(v);
        cfx_tensor_release(f);
        cfx_tensor_release(r);
        for (int i = 0; i < 8; i++) {
            cfx_tensor *t = cfx_tensor_new_strided(two, st, 2, CFX_FLOAT32, META);
            cr_assert_eq(t->sizes, t->dims_inline, "round %d: dims inline again", round);
            cr_assert_eq(t->strides, t->dims_inline + CFX_INLINE_DIMS);
            cr_assert_eq(t->storage_offset, 0);
            cr_assert_eq(t->storage, &t->own_storage);
            cr_assert_eq(cfx_tensor_version(t), 0, "round %d: a fresh version counter", round);
            cr_assert_null(t->ext.mode);
            cr_assert(!cfx_tensor_is_fake(t));
            cr_assert_null(cfx_tensor_binding_get(t, o), "round %d: no stale binding", round);
            cr_assert_eq(t->keys.repr, cfx_keyset_for_tensor(CFX_BACKEND_META).repr);
            cfx_tensor_release(t);
        }
    }
    cfx_fake_mode_free(m);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake_lifetime, a_dead_tensors_storage_lives_on_in_its_views)
{
    int64_t n[1] = {6}, vs[1] = {3}, vst[1] = {2};
    cfx_tensor *base = cfx_tensor_new(n, 1, CFX_FLOAT32, CPU);
    ((float *)cfx_tensor_data(base))[4] = 7.0f;
    cfx_tensor *v = cfx_tensor_new_view(base, vs, vst, 1, 0);
    cfx_storage *s = base->storage;
    cfx_tensor_release(base); /* its header holds the storage: it must stay put */
    cr_assert_eq(cfx_tensor_live_count(), 1);
    cfx_tensor *others[64];
    for (int i = 0; i < 64; i++) {
        others[i] = cfx_tensor_new(n, 1, CFX_FLOAT32, CPU);
        cr_assert_neq(others[i]->storage, s, "the dead tensor's header is not reused yet");
    }
    cr_assert_eq(v->storage, s);
    cr_assert_eq(s->refcount, 1);
    cr_assert_eq(s->nbytes, 24);
    cr_assert_eq(cfx_tensor_get_double(v, 2), 7.0, "the data is intact");
    for (int i = 0; i < 64; i++)
        cfx_tensor_release(others[i]);
    cfx_tensor_release(v); /* now the header goes too (LeakSanitizer checks) */
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* Tensors made on one thread and released on another: the per-thread counts add up. */
enum { HANDOFF = 100 };

static void *make_some(void *arg)
{
    cfx_tensor **out = arg;
    int64_t n[1] = {4};
    for (int i = 0; i < HANDOFF; i++)
        out[i] = cfx_tensor_new(n, 1, CFX_FLOAT32, META);
    return NULL;
}

static void *release_some(void *arg)
{
    cfx_tensor **in = arg;
    for (int i = 0; i < HANDOFF; i++)
        cfx_tensor_release(in[i]);
    return NULL;
}

Test(fake_lifetime, live_count_across_threads)
{
    cfx_tensor *ts[HANDOFF];
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, make_some, ts), 0);
    pthread_join(th, NULL);
    cr_assert_eq(cfx_tensor_live_count(), HANDOFF, "made by a thread that has exited");
    for (int i = 0; i < HANDOFF; i++)
        cfx_tensor_release(ts[i]);
    cr_assert_eq(cfx_tensor_live_count(), 0);
    make_some(ts);
    cr_assert_eq(cfx_tensor_live_count(), HANDOFF);
    cr_assert_eq(pthread_create(&th, NULL, release_some, ts), 0);
    pthread_join(th, NULL);
    cr_assert_eq(cfx_tensor_live_count(), 0, "released by a thread that has exited");
}

/* ------------------------------------------------------------------ the plain-call path */

Test(fake_lifetime, inputs_of_every_kind_give_the_same_fake)
{
    /* The same add three ways: all fakes of the mode, with a real input converted
     * (allow_non_fake_inputs), with a cpu 0-dim fake beside a meta-device fake
     * (merge_devices); and two devices that cannot merge fail. */
    cfx_fake_mode_options o = {.allow_non_fake_inputs = true, .allow_fallback_kernels = true};
    cfx_fake_mode *m = cfx_fake_mode_new(&o);
    int64_t sz[2] = {2, 3};
    cfx_tensor *r = cfx_tensor_new(sz, 2, CFX_FLOAT32, CPU);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cfx_tensor *r2 = cfx_tensor_new(sz, 2, CFX_FLOAT32, CPU);
    cfx_tensor *rm = cfx_tensor_new(sz, 2, CFX_FLOAT32, META), *r0 = cfx_tensor_scalar_double(1, CFX_FLOAT32);
    cfx_tensor *mt = cfx_fake_from_tensor(m, rm);
    cfx_tensor *c0 = cfx_fake_from_tensor(m, r0);
    cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
    cfx_tensor *plain = cfx_add(f, f);
    cfx_tensor *converted = cfx_add(f, r2);
    cfx_tensor *two_devices = cfx_add(c0, mt);
    /* in a scope: the kernel's output of a call failing after the kernel is the scope's */
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *bad = cfx_add(f, mt);
    cfx_scope_end(sc);
    cr_assert_null(bad);
    cr_assert_str_eq(cfx_error_message(), /* FakeTensorDeviceMismatchError (fake_errors.tsv) */
                     "Expected all tensors to be on the same device, but found at least two devices, cpu and meta!");
    cfx_error_clear();
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cfx_tensor *outs[3] = {plain, converted, two_devices};
    for (int i = 0; i < 3; i++) {
        cfx_tensor *y = outs[i];
        cr_assert_not_null(y, "call %d", i);
        cr_assert_eq(cfx_tensor_fake_mode(y), m, "call %d", i);
        cr_assert(cfx_tensor_is_meta(y));
        cr_assert(y->ndim == 2 && y->sizes[0] == 2 && y->sizes[1] == 3 && y->strides[0] == 3 && y->strides[1] == 1);
        cr_assert_eq(y->storage->nbytes, 24);
        cr_assert_eq(y->keys.repr, f->keys.repr);
        cr_assert_eq(cfx_tensor_fake_device(y).type, i == 2 ? CFX_DEVICE_META : CFX_DEVICE_CPU, "call %d", i);
        cfx_tensor_release(y);
    }
    cfx_tensor_release(c0);
    cfx_tensor_release(mt);
    cfx_tensor_release(r0);
    cfx_tensor_release(rm);
    cfx_tensor_release(r2);
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}
