/* test_tracer_threads.c - two threads tracing two models at the same time.
 *
 * Each thread owns its model (inputs, module, constants) and traces it repeatedly, in step
 * with the other thread (a barrier before every trace), in its own mode; every graph must be
 * byte for byte the golden the model has when traced alone. Mode stacks, error state, scopes
 * and tracer bindings are per thread or per trace, so nothing may leak across. Results are
 * checked on the main thread (Criterion's asserts belong there). */
#include <pthread.h>

#include <criterion/criterion.h>

#include "tests/tracer/tracer_programs.h"

enum { ROUNDS = 40 };

typedef struct job {
    const char *programs[3]; /* traced in turn */
    cfx_tracing_mode mode;
    pthread_barrier_t *barrier;
    int ok, failed;
    char first_failure[4096];
} job;

static void *run(void *arg)
{
    job *j = arg;
    cfx_module *mlp = make_mlp();
    char *want[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++)
        want[k] = golden(j->programs[k], "graph");
    for (int r = 0; r < ROUNDS; r++) {
        int k = r % 3;
        pthread_barrier_wait(j->barrier);
        cfx_graph_module *gm = trace_program(find_program(j->programs[k]), j->mode, mlp);
        char *got = gm ? cfx_graph_to_string(cfx_graph_module_graph(gm)) : NULL;
        if (got && want[k] && strcmp(got, want[k]) == 0) {
            j->ok++;
        } else {
            if (!j->failed)
                snprintf(j->first_failure, sizeof j->first_failure, "%s round %d: %s", j->programs[k], r,
                         got ? got : cfx_error_message() ? cfx_error_message() : "?");
            j->failed++;
            cfx_error_clear();
        }
        free(got);
        cfx_graph_module_free(gm);
    }
    for (int k = 0; k < 3; k++)
        free(want[k]);
    cfx_module_free(mlp);
    return NULL;
}

static void two_threads(cfx_tracing_mode mode_a, cfx_tracing_mode mode_b)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    job a = {{"mlp", "basic", "max_dim"}, mode_a, &barrier, 0, 0, ""};
    job b = {{"view_inplace", "layer_norm", "mlp"}, mode_b, &barrier, 0, 0, ""};
    int64_t live0 = cfx_tensor_live_count();
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, run, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, run, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&barrier);
    cr_expect_eq(a.failed, 0, "thread a: %s", a.first_failure);
    cr_expect_eq(b.failed, 0, "thread b: %s", b.first_failure);
    cr_expect_eq(a.ok, ROUNDS);
    cr_expect_eq(b.ok, ROUNDS);
    cr_expect_eq(cfx_tensor_live_count(), live0);
}

Test(tracer_threads, fake_and_real)
{
    two_threads(CFX_TRACE_FAKE, CFX_TRACE_REAL);
}

Test(tracer_threads, both_fake)
{
    two_threads(CFX_TRACE_FAKE, CFX_TRACE_FAKE);
}

Test(tracer_threads, both_real)
{
    two_threads(CFX_TRACE_REAL, CFX_TRACE_REAL);
}
