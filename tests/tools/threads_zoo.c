/* threads_zoo.c - the whole model zoo traced by many threads at once, while other threads
 * register custom operators and load and dump JSON.
 *
 * What must hold for cfx to be usable from a threaded host: the mode stacks, error state,
 * scopes and tracer state are per thread, and the shared registries (operators, libraries,
 * interned strings) are safe to read while another thread registers into them. Every graph a
 * thread traces must print (str(graph) and python_code) byte for byte what a single-threaded
 * trace of the same model prints. The workload does not use Criterion, so that `make tsan`
 * can run it under ThreadSanitizer from a plain program (tools/tsan/main.c): Criterion's
 * BoxFort arena maps at fixed addresses that collide with TSan's shadow memory (Criterion
 * issue #274). tests/tools/test_threads_zoo.c runs the same workload in `make test`. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfx.h"
#include "ir/graph_module.h"
#include "ir/json.h"
#include "tests/tools/threads_zoo.h"
#include "tools/models/models.h"
#include "tracer/make_fx.h"

enum {
    TRACERS = THREADS_ZOO_TRACERS,
    OPS = THREADS_ZOO_OPS,
    JSONS = THREADS_ZOO_JSONS,
    ROUNDS = 5, /* passes of each tracer over every model in both modes */
    OP_ROUNDS = 40,
    JSON_ROUNDS = 20,
    MAX_MODELS = 16,
};

/* The single-threaded reference of one model in one mode. */
typedef struct reference {
    char *graph, *code;
} reference;

static reference refs[MAX_MODELS][2];
static char *json_ref[MAX_MODELS]; /* the fake-mode trace as a JSON document */
static int n_models;

typedef struct worker {
    int id;
    pthread_barrier_t *start;
    int ok, failed;
    char first_failure[1024];
} worker;

static void fail(worker *w, const char *what)
{
    if (!w->failed++)
        snprintf(w->first_failure, sizeof w->first_failure, "%s: %s", what,
                 cfx_error_message() ? cfx_error_message() : "(no error recorded)");
    cfx_error_clear();
}

/* Traces model i in mode; NULL with the error recorded. Tensors go to the caller's scope. */
static cfx_graph_module *trace_model(int i, cfx_tracing_mode mode, cfx_module **module)
{
    const cfx_model *m = cfx_model_at(i);
    cfx_value args[CFX_MODEL_MAX_ARGS];
    *module = NULL;
    int n = m->setup(module, args);
    if (n < 0)
        return NULL;
    cfx_make_fx_options opts = {mode, *module, NULL, false};
    return cfx_make_fx(m->forward, m->signature, args, n, &opts);
}

static bool same_as_reference(cfx_graph_module *gm, const reference *r)
{
    cfx_graph *g = cfx_graph_module_graph(gm);
    char *graph = cfx_graph_to_string(g);
    char *code = cfx_graph_python_code_string(g, "self");
    bool same = graph && code && strcmp(graph, r->graph) == 0 && strcmp(code, r->code) == 0;
    free(graph);
    free(code);
    return same;
}

/* Each tracer walks the zoo from its own starting model: tracers id and id + n_models trace
 * the same model at the same moment, the others different ones. */
static void *tracer(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < n_models; k++)
            for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
                int i = (w->id + k) % n_models;
                cfx_scope s = cfx_scope_begin();
                cfx_module *module = NULL;
                cfx_graph_module *gm = trace_model(i, (cfx_tracing_mode)mode, &module);
                if (gm && same_as_reference(gm, &refs[i][mode])) {
                    w->ok++;
                } else {
                    char what[128];
                    snprintf(what, sizeof what, "%s (%s mode)", cfx_model_at(i)->name, mode ? "fake" : "real");
                    fail(w, what);
                }
                cfx_graph_module_free(gm);
                cfx_module_free(module);
                cfx_scope_end(s);
            }
    return NULL;
}

/* The custom kernel: x + x through the built-in add (a dispatcher call from inside a kernel). */
static cfx_tensor *twice_cpu(cfx_tensor *x) { return cfx_add(x, x); }

/* Registers an operator in a namespace of its own, calls it, and deregisters it, over and
 * over: the registry changes under the tracers' lookups. */
static void *registrar(void *arg)
{
    worker *w = arg;
    char ns[32], qual[64];
    snprintf(ns, sizeof ns, "thr%d", w->id);
    snprintf(qual, sizeof qual, "%s::twice", ns);
    pthread_barrier_wait(w->start);
    for (int r = 0; r < OP_ROUNDS; r++) {
        cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, ns);
        if (!lib || cfx_library_def(lib, "twice(Tensor x) -> Tensor") != CFX_OK ||
            CFX_IMPL(lib, "twice", CFX_KEY_CPU, twice_cpu) != CFX_OK) {
            fail(w, "registering");
            cfx_library_free(lib);
            continue;
        }
        cfx_scope s = cfx_scope_begin();
        cfx_op *op = cfx_op_find(qual);
        int64_t sz[1] = {3};
        cfx_tensor *x = cfx_model_example_tensor(sz, 1, w->id);
        cfx_value stack[1] = {cfx_tensor_value(x)};
        if (op && x && cfx_op_call(op, stack, 1, 1) == CFX_OK && stack[0].kind == CFX_V_TENSOR &&
            cfx_tensor_get_double(stack[0].u.t, 1) == 2.0 * cfx_tensor_get_double(x, 1))
            w->ok++;
        else
            fail(w, qual);
        cfx_scope_end(s);
        cfx_library_free(lib);
        if (cfx_op_find(qual))
            fail(w, "the operator outlived its library");
        /* the miss records "no operator" in this thread's error state: clear it, or its text
         * outlives the thread (the error state has no thread-exit destructor) */
        cfx_error_clear();
    }
    return NULL;
}

/* Loads every model's JSON document and dumps it again: the dump must be the document. */
static void *json_worker(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int r = 0; r < JSON_ROUNDS; r++) {
        int i = (w->id + r) % n_models;
        cfx_graph_module *gm = cfx_graph_module_from_json(json_ref[i], strlen(json_ref[i]));
        char *again = NULL;
        if (gm && cfx_graph_module_to_json(gm, 0, &again) == CFX_OK && strcmp(again, json_ref[i]) == 0 &&
            same_as_reference(gm, &refs[i][CFX_TRACE_FAKE]))
            w->ok++;
        else
            fail(w, cfx_model_at(i)->name);
        free(again);
        cfx_graph_module_free(gm);
    }
    return NULL;
}

/* The references, traced here before any worker starts; false with *r's failure set. */
static bool make_references(threads_zoo_report *r)
{
    n_models = cfx_model_count();
    if (n_models < 7 || n_models > MAX_MODELS) {
        snprintf(r->first_failure, sizeof r->first_failure, "%d models in the zoo", n_models);
        return false;
    }
    for (int i = 0; i < n_models; i++)
        for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
            cfx_scope s = cfx_scope_begin();
            cfx_module *module = NULL;
            cfx_graph_module *gm = trace_model(i, (cfx_tracing_mode)mode, &module);
            bool ok = gm != NULL;
            if (ok) {
                cfx_graph *g = cfx_graph_module_graph(gm);
                refs[i][mode].graph = cfx_graph_to_string(g);
                refs[i][mode].code = cfx_graph_python_code_string(g, "self");
                ok = refs[i][mode].graph && refs[i][mode].code &&
                     (mode != CFX_TRACE_FAKE || cfx_graph_module_to_json(gm, 0, &json_ref[i]) == CFX_OK);
            }
            if (!ok)
                snprintf(r->first_failure, sizeof r->first_failure, "single-threaded %s: %s", cfx_model_at(i)->name,
                         cfx_error_message() ? cfx_error_message() : "?");
            cfx_graph_module_free(gm);
            cfx_module_free(module);
            cfx_scope_end(s);
            if (!ok)
                return false;
        }
    return true;
}

static void free_references(void)
{
    for (int i = 0; i < n_models; i++) {
        for (int mode = 0; mode < 2; mode++) {
            free(refs[i][mode].graph);
            free(refs[i][mode].code);
            refs[i][mode] = (reference){NULL, NULL};
        }
        free(json_ref[i]);
        json_ref[i] = NULL;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int threads_zoo_run(threads_zoo_report *r)
{
    memset(r, 0, sizeof *r);
    if (!make_references(r)) {
        free_references();
        r->failures = 1;
        return 1;
    }
    enum { N = TRACERS + OPS + JSONS };
    r->threads = N;
    r->models = n_models;
    r->expected_traces = TRACERS * ROUNDS * n_models * 2;
    r->expected_op_rounds = OPS * OP_ROUNDS;
    r->expected_json_rounds = JSONS * JSON_ROUNDS;
    r->live_before = cfx_tensor_live_count();
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N);
    worker w[N];
    pthread_t t[N];
    int started = 0;
    double t0 = now();
    for (int k = 0; k < N; k++) {
        w[k] = (worker){.id = k, .start = &start};
        void *(*fn)(void *) = k < TRACERS ? tracer : k < TRACERS + OPS ? registrar : json_worker;
        if (pthread_create(&t[k], NULL, fn, &w[k]) != 0) {
            /* the barrier counts N: without every thread nobody passes it; give up loudly */
            fprintf(stderr, "threads_zoo: cannot start thread %d\n", k);
            abort();
        }
        started++;
    }
    for (int k = 0; k < started; k++)
        pthread_join(t[k], NULL);
    r->seconds = now() - t0;
    pthread_barrier_destroy(&start);
    for (int k = 0; k < N; k++) {
        if (w[k].failed && !r->failures)
            snprintf(r->first_failure, sizeof r->first_failure, "thread %d: %s", k, w[k].first_failure);
        r->failures += w[k].failed;
        if (k < TRACERS)
            r->traces += w[k].ok;
        else if (k < TRACERS + OPS)
            r->op_rounds += w[k].ok;
        else
            r->json_rounds += w[k].ok;
    }
    r->live_after = cfx_tensor_live_count();
    free_references();
    bool ok = !r->failures && r->traces == r->expected_traces && r->op_rounds == r->expected_op_rounds &&
              r->json_rounds == r->expected_json_rounds && r->live_after == r->live_before;
    return ok ? 0 : 1;
}
