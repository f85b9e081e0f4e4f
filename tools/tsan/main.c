/* main.c - the ThreadSanitizer runner of `make tsan`: runs the threaded zoo workload
 * (tests/tools/threads_zoo.c) outside Criterion, whose BoxFort arena cannot coexist with
 * TSan's shadow memory (Criterion issue #274), and prints its figures. Exit status 0 only
 * when every thread matched the single-threaded traces; TSan itself fails the run on any
 * report (TSAN_OPTIONS=halt_on_error=1). */
#include <stdio.h>

#include "tests/tools/threads_zoo.h"

int main(void)
{
    threads_zoo_report r;
    int rc = threads_zoo_run(&r);
    printf("tsan: %d threads: %d/%d traces (%d models x real,fake), %d/%d custom-op rounds, %d/%d JSON round trips, "
           "%.2f s, live tensors %lld -> %lld\n",
           r.threads, r.traces, r.expected_traces, r.models, r.op_rounds, r.expected_op_rounds, r.json_rounds,
           r.expected_json_rounds, r.seconds, (long long)r.live_before, (long long)r.live_after);
    if (rc)
        printf("tsan: FAILED (%d failures): %s\n", r.failures, r.first_failure);
    return rc;
}
