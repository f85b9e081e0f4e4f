/* test_alloc.c - the allocator hook (dispatch/alloc.h) and what it found.
 *
 * The library's sources make no raw allocation call (scripts/convert-alloc.sh --check); a
 * hook sees the library's allocations and frees and can be taken back; calloc refuses an
 * overflowing size. Regressions: a graph whose first block of use records failed to allocate
 * crashed on the next node (ir/uses.c, found by test_failalloc.c), and a thread's error text
 * leaked when the thread exited (dispatch/error.c). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

Test(alloc, no_raw_allocation_calls_in_library)
{
    char *out = NULL;
    int rc = test_run_command("sh scripts/convert-alloc.sh --check 2>&1", &out);
    cr_expect_eq(rc, 0, "raw allocation calls (run scripts/convert-alloc.sh):\n%s", out ? out : "");
    cr_expect(out && !*out, "%s", out ? out : "");
    free(out);
}

/* ---- a counting hook: the live blocks it gave, in a small locked set ------------------------- */

enum { SET_CAP = 4096 };
static struct {
    pthread_mutex_t lock;
    void *live[SET_CAP];
    long allocs, frees, fail_at;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void set_del(void *p)
{
    for (int i = 0; i < SET_CAP; i++)
        if (C.live[i] == p) {
            C.live[i] = NULL;
            return;
        }
}

static void set_add(void *p)
{
    for (int i = 0; i < SET_CAP; i++)
        if (!C.live[i]) {
            C.live[i] = p;
            return;
        }
}

static long set_count(void)
{
    long n = 0;
    for (int i = 0; i < SET_CAP; i++)
        n += C.live[i] != NULL;
    return n;
}

static void *counting(void *ud, void *ptr, size_t nsize)
{
    cr_assert_eq(ud, &C);
    pthread_mutex_lock(&C.lock);
    if (ptr)
        set_del(ptr);
    void *p = NULL;
    if (nsize == 0) {
        C.frees++;
        free(ptr);
    } else if (++C.allocs == C.fail_at) {
        if (ptr)
            set_add(ptr); /* a failed resize keeps the block */
    } else {
        p = ptr ? realloc(ptr, nsize) : malloc(nsize);
        set_add(p ? p : ptr);
    }
    pthread_mutex_unlock(&C.lock);
    return p;
}

static void install(long fail_at)
{
    memset(C.live, 0, sizeof C.live);
    C.allocs = C.frees = 0;
    C.fail_at = fail_at;
    cfx_set_allocator(counting, &C);
}

Test(alloc, hook_sees_the_library_and_can_be_taken_back)
{
    void *ud = (void *)1;
    cfx_alloc_fn def = cfx_get_allocator(&ud);
    cr_assert(def);
    cr_expect_null(ud);
    install(0);
    void *got_ud = NULL;
    cr_expect_eq(cfx_get_allocator(&got_ud), counting);
    cr_expect_eq(got_ud, &C);
    char *s = cfx_strdup("hello");
    char *t = cfx_strndup("hello", 3);
    cr_expect_str_eq(t, "hel");
    cfx_graph *g = cfx_graph_new();
    cfx_graph_placeholder(g, "x");
    char *text = cfx_graph_to_string(g);
    cr_expect(text && strstr(text, "x"));
    cr_expect_geq(C.allocs, 4);
    cfx_free(text);
    cfx_graph_free(g);
    cfx_free(s);
    cfx_free(t);
    cr_expect_eq(set_count(), 0, "every block the hook gave was freed through it");
    cfx_set_allocator(NULL, NULL);
    cr_expect_eq(cfx_get_allocator(NULL), def);
    /* the default back: a block of libc's */
    char *u = cfx_strdup("x");
    free(u);
}

Test(alloc, calloc_overflow_and_zero_sizes)
{
    cr_expect_null(cfx_calloc(SIZE_MAX / 2, 4));
    unsigned char *z = cfx_calloc(0, 8); /* a distinct block, as malloc(0) may give */
    cr_assert(z);
    cfx_free(z);
    unsigned char *p = cfx_calloc(3, 5);
    cr_assert(p);
    for (int i = 0; i < 15; i++)
        cr_expect_eq(p[i], 0);
    p = cfx_realloc(p, 0); /* a 1-byte block, not a free */
    cr_assert(p);
    cfx_free(p);
    cfx_free(NULL);
    cr_expect_null(cfx_strdup(NULL));
}

/* Regression (found failing every allocation of a trace): when the realloc of a graph's
 * table of use blocks succeeded but its first block failed, the table's size said the block
 * existed and the next node's inputs were written through a NULL block. Every allocation of
 * a node creation is failed in turn; the graph then takes the node and lints clean. */
Test(alloc, graph_usable_after_each_failed_node)
{
    const cfx_op *relu = cfx_op_find("aten::relu");
    cr_assert(relu);
    for (long n = 1; n <= 16; n++) {
        cfx_graph *g = cfx_graph_new();
        cfx_node *x = cfx_graph_placeholder(g, "x");
        cr_assert(x);
        cfx_value a = cfx_node_value(x);
        install(n);
        cfx_node *r = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(relu), &a, 1, NULL, 0, NULL);
        cfx_set_allocator(NULL, NULL);
        if (!r) {
            cr_expect(cfx_error_occurred() && cfx_error_message(), "N=%ld: failed without a message", n);
            cfx_error_clear();
        }
        cfx_node *r2 = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(relu), &a, 1, NULL, 0, NULL);
        cr_expect(r2, "N=%ld: %s", n, cfx_error_message());
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "N=%ld: %s", n, cfx_error_message());
        cr_expect_eq(cfx_node_num_users(x), r ? 2 : 1, "N=%ld", n);
        cfx_error_clear();
        cfx_graph_free(g);
    }
}

/* Regression: a thread's error text (and op, site copies) was a thread-local never freed when
 * the thread exited. Threads that record an error and exit leave no block of the hook's. */
static void *set_error_and_exit(void *arg)
{
    static const cfx_site site = {"model.c", 7, "forward"};
    const cfx_site *prev = cfx_set_current_site(&site);
    cfx_error_set(CFX_ERR, "aten::relu", "thread %d failed", (int)(intptr_t)arg);
    cfx_set_current_site(prev);
    return (void *)(intptr_t)(cfx_error_occurred() && strstr(cfx_error_message(), "failed") != NULL);
}

Test(alloc, thread_error_text_freed_at_thread_exit)
{
    install(0);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, set_error_and_exit, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 8; i++) {
        void *ok = NULL;
        pthread_join(t[i], &ok);
        cr_expect(ok, "thread %d recorded no error", i);
    }
    long left = set_count(), allocs = C.allocs;
    cfx_set_allocator(NULL, NULL);
    cr_expect_geq(allocs, 8 * 4, "each thread copies its message, op, file and function");
    cr_expect_eq(left, 0, "%ld blocks of exited threads' errors are still allocated", left);
}
