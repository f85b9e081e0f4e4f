/* test_threads_zoo.c - the threaded zoo workload (threads_zoo.c) as a test: 8 threads trace
 * every model in both modes while 2 register custom operators and 2 load and dump JSON; every
 * graph must print as the single-threaded trace does. `make tsan` runs the same workload
 * under ThreadSanitizer. */
#include <criterion/criterion.h>

#include "tests/tools/threads_zoo.h"

Test(threads_zoo, tracers_registrars_and_json_at_once, .timeout = 600)
{
    threads_zoo_report r;
    int rc = threads_zoo_run(&r);
    cr_expect_eq(r.failures, 0, "%s", r.first_failure);
    cr_expect_eq(r.traces, r.expected_traces);
    cr_expect_geq(r.traces, THREADS_ZOO_TRACERS * 7 * 2, "every tracer traces every model in both modes");
    cr_expect_eq(r.op_rounds, r.expected_op_rounds);
    cr_expect_eq(r.json_rounds, r.expected_json_rounds);
    cr_expect_eq(r.live_after, r.live_before, "tensors leaked across threads");
    cr_expect_eq(rc, 0);
}
