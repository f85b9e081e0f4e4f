/* test_fake_fastpath.c - the parts of the fake-mode call path that exist for speed: tensor
 * extension blocks recycled per thread with inline binding slots, the per-op classification
 * cached in the operator entry, the fake tensors' shared mode reference and the precomputed
 * key sets. Each case checks that the fast path gives what the slow one gave: the same
 * bindings, the same PyTorch error texts on a second (cached) call, the same key sets, the
 * same lifetimes. Expected texts are PyTorch 2.x's str(OpOverload), as in test_fake.c. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

#include "dispatch/data_dependent.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(fake_fastpath, .init = setup);

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

Test(fake_fastpath, bindings_past_the_inline_slots)
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

Test(fake_fastpath, recycled_blocks_start_empty)
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

Test(fake_fastpath, fakes_share_one_mode_reference)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_mode *base = cfx_fake_mode_base(m);
    cr_assert_eq(atomic_load(&base->refcount), 1, "the creator's reference");
    int64_t sz[2] = {4, 5};
    cfx_tensor *r = cfx_tensor_new(sz, 2, CFX_FLOAT32, CPU);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cr_assert_eq(atomic_load(&base->refcount), 2, "the fakes hold one between them");
    cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
    cfx_tensor *outs[50];
    for (int i = 0; i < 50; i++) {
        outs[i] = cfx_add(f, f);
        cr_assert_not_null(outs[i], "%s", cfx_error_message());
    }
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cr_assert_eq(atomic_load(&base->refcount), 2, "still one for 51 fakes");
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m); /* drops the memo and the creator's reference */
    cr_assert_eq(atomic_load(&base->refcount), 1);
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

Test(fake_fastpath, cached_classification_repeats_the_same_answers)
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
    cfx_op *nz = cfx_op_find("aten::nonzero");
    cfx_op *add = cfx_op_find("aten::add.Tensor");
    cr_assert(nz && add);
    cr_assert_neq(nz->mode_cache[0], 0, "classified once, kept in the entry");
    cr_assert_neq(add->mode_cache[0], 0);
    cr_assert_neq(nz->mode_cache[0], add->mode_cache[0], "nonzero raises, add does not");
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m);
}

Test(fake_fastpath, precomputed_key_sets)
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

Test(fake_fastpath, threads_recycle_their_own_blocks)
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
