/* threads_zoo.h - the threaded zoo workload (threads_zoo.c), shared by its Criterion test and
 * the ThreadSanitizer runner (tools/tsan/main.c), which cannot use Criterion. */
#ifndef CFX_TESTS_THREADS_ZOO_H
#define CFX_TESTS_THREADS_ZOO_H

#include <stdint.h>

enum {
    THREADS_ZOO_TRACERS = 8, /* threads tracing every model of the zoo, real and fake */
    THREADS_ZOO_OPS = 2,     /* threads registering custom operators, each its own namespace */
    THREADS_ZOO_JSONS = 2,   /* threads loading and dumping JSON documents */
};

typedef struct threads_zoo_report {
    int threads, models;
    int traces, expected_traces;
    int op_rounds, expected_op_rounds;
    int json_rounds, expected_json_rounds;
    int failures;
    int64_t live_before, live_after; /* live tensors: no thread may leak one */
    double seconds;
    char first_failure[1100];
} threads_zoo_report;

/* Runs the workload; 0 when every thread's every result matched the single-threaded one. */
int threads_zoo_run(threads_zoo_report *r);

#endif
