/* test_failalloc.c - every allocation of a full workload failed in turn (issue 14).
 *
 * The workload, per built-in model and tracing mode: make_fx of the model, a JSON dump of the
 * module, a load of that JSON and the pass pipeline dce,cse,fold,topo-sort on what loaded.
 * A counting run through the allocator hook (cfx_set_allocator) numbers its K allocations;
 * then for each N a forked child runs the workload with the N-th allocation failing. The child
 * must end in success with the same final JSON as the clean run, or in an error with a
 * message (cfx_error_occurred, cfx_error_message not empty): never a crash, an abort, a
 * failure without a message, or a block allocated during the run and still live at its end
 * (the hook keeps the set of live blocks, so a leak is caught per N, not only at exit).
 *
 * The suite fails a sample of the Ns (the first ones, then a stride); `make failalloc` fails
 * every N under ASan+UBSan (CFX_FAILALLOC_STRIDE=1). What a warm-up run fills once per
 * process (operator registry, interned names, caches) is allocated before the count starts,
 * so the first-use paths are not injected here. */
#define _GNU_SOURCE /* backtrace */
#include <criterion/criterion.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfx.h"
#include "tools/models/models.h"

/* ---- the hook: counts, fails the N-th allocation, keeps the live set ------------------------- */

enum { LIVE_CAP = 1 << 18, SITE_CAP = 1 << 14 };

typedef struct live_block {
    void *p;
    void *site; /* 0: tombstone */
    int gen;    /* H.gen when it was allocated */
} live_block;

static struct {
    atomic_long count;   /* allocations (and resizes) since the run started */
    long fail_at;        /* the one to fail; 0: none */
    void *failed_site;   /* where it was asked for */
    void *failed_stack[12];
    int failed_depth;
    bool record_sites;   /* counting run: collect the distinct call sites */
    bool track_sites;    /* CFX_FAILALLOC_SITES: a leak report names each block's site */
    pthread_mutex_t lock;
    live_block *live;    /* open addressing on p */
    long nlive;
    bool dirty;          /* live has entries or tombstones */
    int gen;             /* 0: the injected run; 1: the clean run after it (object models) */
    void **sites;
    long nsites;
} H = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The library's call site: the hook is called by cfx_malloc & co., which a caller called. */
static void *call_site(void)
{
    void *frames[3];
    return backtrace(frames, 3) == 3 ? frames[2] : NULL;
}

static size_t slot_of(void *p) { return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 44 & (LIVE_CAP - 1); }

static void live_add(void *p, void *site)
{
    size_t i = slot_of(p);
    while (H.live[i].p && H.live[i].p != p)
        i = (i + 1) & (LIVE_CAP - 1);
    if (!H.live[i].p || !H.live[i].site)
        H.nlive++;
    H.dirty = true;
    H.live[i] = (live_block){p, site ? site : (void *)1, H.gen};
}

static void live_remove(void *p)
{
    size_t i = slot_of(p);
    for (; H.live[i].p; i = (i + 1) & (LIVE_CAP - 1))
        if (H.live[i].p == p) {
            if (H.live[i].site)
                H.nlive--;
            H.live[i].site = NULL; /* tombstone: keeps later probes going */
            return;
        }
}

static void add_site(void *site)
{
    for (long i = 0; i < H.nsites; i++)
        if (H.sites[i] == site)
            return;
    if (H.nsites < SITE_CAP)
        H.sites[H.nsites++] = site;
}

static void *hook(void *ud, void *ptr, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        pthread_mutex_lock(&H.lock);
        live_remove(ptr);
        pthread_mutex_unlock(&H.lock);
        free(ptr);
        return NULL;
    }
    long n = atomic_fetch_add(&H.count, 1) + 1;
    bool need_site = H.record_sites || n == H.fail_at || H.track_sites;
    void *site = need_site ? call_site() : NULL;
    if (n == H.fail_at) {
        H.failed_site = site;
        H.failed_depth = backtrace(H.failed_stack, 12);
        return NULL;
    }
    pthread_mutex_lock(&H.lock);
    if (ptr)
        live_remove(ptr); /* before realloc, which may free it */
    pthread_mutex_unlock(&H.lock);
    void *p = ptr ? realloc(ptr, nsize) : malloc(nsize);
    pthread_mutex_lock(&H.lock);
    if (p || ptr)
        live_add(p ? p : ptr, site); /* a failed resize keeps the old block */
    if (p && H.record_sites && site)
        add_site(site);
    pthread_mutex_unlock(&H.lock);
    return p;
}

static void start_run(long fail_at, bool record_sites)
{
    if (H.dirty) /* a child starts from the parent's cleared table, without touching it */
        memset(H.live, 0, LIVE_CAP * sizeof *H.live);
    H.dirty = false;
    H.nlive = 0;
    H.gen = 0;
    H.fail_at = fail_at;
    H.failed_site = NULL;
    H.record_sites = record_sites;
    atomic_store(&H.count, 0);
}

/* ---- the workload -------------------------------------------------------------------------------- */

static const char PIPELINE[] = "dce,cse,fold,topo-sort";

/* Runs it; returns CFX_OK or the first failing step's status, *json the final module's JSON
 * (the caller frees it with cfx_free) when asked. */
static int workload(const cfx_model *m, cfx_tracing_mode mode, char **json)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS];
    cfx_graph_module *gm = NULL, *loaded = NULL;
    char *text = NULL;
    int rc = CFX_ERR;
    int n = m->setup(&module, args);
    if (n < 0)
        goto out;
    cfx_make_fx_options opts = {mode, module, NULL, false};
    if (!(gm = cfx_make_fx(m->forward, m->signature, args, n, &opts)))
        goto out;
    if ((rc = cfx_graph_module_to_json(gm, 0, &text)) != CFX_OK)
        goto out;
    rc = CFX_ERR;
    if (!(loaded = cfx_graph_module_from_json(text, strlen(text))))
        goto out;
    if ((rc = cfx_pipeline_run_text(PIPELINE, loaded, NULL, NULL)) != CFX_OK)
        goto out;
    if (json)
        rc = cfx_graph_module_to_json(loaded, 0, json);
out:
    cfx_free(text);
    cfx_graph_module_free(loaded);
    cfx_graph_module_free(gm);
    cfx_module_free(module);
    cfx_scope_end(s);
    return rc;
}

/* The tensor_queue model's input is a real queue that outlives its traces (PyTorch's
 * torchbind test class): a trace that fails between its pushes and its pops leaves tensors
 * in it, the model's state rather than a leak. Its size, and taking it back to a size, with
 * no failure injected. */
static long queue_size(const cfx_model *m)
{
    if (!cfx_model_has_object_input(m))
        return 0;
    long saved = H.fail_at;
    H.fail_at = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS], size = cfx_none();
    long n = -1;
    if (m->setup(&module, args) > 0 &&
        cfx_object_call_method(cfx_value_object(args[0]), "size", NULL, 0, &size) == CFX_OK &&
        size.kind == CFX_V_INT)
        n = (long)size.u.i;
    cfx_module_free(module);
    cfx_scope_end(s);
    H.fail_at = saved;
    return n;
}

static void drain_queue(const cfx_model *m, long to)
{
    if (!cfx_model_has_object_input(m))
        return;
    long saved = H.fail_at;
    H.fail_at = 0;
    cfx_scope s = cfx_scope_begin();
    cfx_module *module = NULL;
    cfx_value args[CFX_MODEL_MAX_ARGS], out;
    if (m->setup(&module, args) > 0)
        for (long n = queue_size(m); n > to; n--)
            cfx_object_call_method(cfx_value_object(args[0]), "pop", NULL, 0, &out);
    cfx_module_free(module);
    cfx_scope_end(s);
    H.fail_at = saved;
}

/* Child exit codes besides 0. */
enum { NO_MESSAGE = 2, LEAK = 3, WRONG = 4, FAILED_BUT_OK = 5, ERRORED = 10 };

static void print_site(const char *what, void *site)
{
    fprintf(stderr, "  %s at ", what);
    fflush(stderr);
    backtrace_symbols_fd(&site, 1, 2);
}

/* A crash in a child: where the failed allocation was asked for and where it crashed. */
static void on_crash(int sig)
{
    static const char head[] = "failalloc: crashed; the failed allocation was asked for at\n";
    if (write(2, head, sizeof head - 1) < 0)
        _exit(128 + sig);
    backtrace_symbols_fd(H.failed_stack, H.failed_depth, 2);
    static const char at[] = "and crashed at\n";
    if (write(2, at, sizeof at - 1) < 0)
        _exit(128 + sig);
    void *frames[24];
    backtrace_symbols_fd(frames, backtrace(frames, 24), 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* One injected run, in a child: classifies the outcome as the exit code. */
static int child_run(const cfx_model *m, cfx_tracing_mode mode, long n, const char *want)
{
    long size0 = queue_size(m);
    start_run(n, false);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGABRT, on_crash);
    char *json = NULL;
    int rc = workload(m, mode, &json);
    bool failed = rc != CFX_OK;
    bool has_msg = cfx_error_occurred() && cfx_error_message() && *cfx_error_message();
    char msg[200];
    snprintf(msg, sizeof msg, "%s", has_msg ? cfx_error_message() : "(none)");
    bool wrong = !failed && (!json || strcmp(json, want) != 0);
    cfx_free(json);
    cfx_error_clear();
    drain_queue(m, size0);
    cfx_error_clear();
    long leaked = H.nlive;
    if (cfx_model_has_object_input(m)) {
        /* The real object caches its fake copy (hop/fake_class.c) until the next fake trace
         * replaces it: a trace failing between the copy's pushes and pops leaves tensors of
         * its fake mode in it. Retained, not leaked, if the next trace frees them: one clean
         * run more, and what the injected run allocated must be gone after it. */
        H.gen = 1;
        long saved = H.fail_at;
        H.fail_at = 0;
        char *again = NULL;
        workload(m, mode, &again);
        cfx_free(again);
        cfx_error_clear();
        drain_queue(m, size0);
        H.fail_at = saved;
        leaked = 0;
        for (size_t i = 0; i < LIVE_CAP; i++)
            leaked += H.live[i].p && H.live[i].site && H.live[i].gen == 0;
    }
    int code = 0;
    if (failed && !has_msg)
        code = NO_MESSAGE;
    else if (!failed && cfx_error_occurred())
        code = FAILED_BUT_OK;
    else if (wrong)
        code = WRONG;
    else if (leaked > 0)
        code = LEAK;
    if (code) {
        fprintf(stderr, "failalloc %s (%s) N=%ld: %s; error: %s\n", m->name, mode ? "fake" : "real", n,
                code == NO_MESSAGE ? "failed without a message" : code == WRONG ? "succeeded with a different graph"
                : code == FAILED_BUT_OK ? "succeeded with an error recorded" : "leaked", msg);
        print_site("failed allocation", H.failed_site);
        if (getenv("CFX_FAILALLOC_SITES"))
            backtrace_symbols_fd(H.failed_stack, H.failed_depth, 2);
        int shown = 0;
        for (size_t i = 0; code == LEAK && i < LIVE_CAP && shown < 5; i++)
            if (H.live[i].p && H.live[i].site && H.live[i].gen == 0) {
                shown++;
                print_site("leaked block allocated", H.live[i].site);
            }
    }
    return code ? code : failed ? ERRORED : 0;
}

static long stride_from_env(void)
{
    const char *e = getenv("CFX_FAILALLOC_STRIDE");
    return e && *e ? atol(e) : 0;
}

/* Whether N is run: all of them with stride 1; else the first 40 and every 61st (or stride-th). */
static bool sampled(long n, long stride)
{
    const char *only = getenv("CFX_FAILALLOC_ONLY"); /* debugging one N */
    if (only && *only)
        return n == atol(only);
    return stride == 1 || n <= 40 || n % (stride > 1 ? stride : 61) == 0;
}

static void inject_all(const char *name)
{
    const cfx_model *m = cfx_model_find(name);
    cr_assert(m, "no model %s", name);
    static live_block live[LIVE_CAP];
    static void *sites[SITE_CAP];
    H.live = live;
    H.sites = sites;
    void *warm[3];
    backtrace(warm, 3); /* loads the unwinder before any count */
    long stride = stride_from_env();
    H.track_sites = getenv("CFX_FAILALLOC_SITES") != NULL;
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        /* warm-up: process-wide caches and registries fill outside the count */
        /* (an object input remembers the node of each trace that used it, up to 8: hop/object.c
         * grows that table, so that it is full before the count) */
        char *want = NULL;
        for (int w = 0; w < (cfx_model_has_object_input(m) ? 9 : 1); w++) {
            cr_assert_eq(workload(m, mode, &want), CFX_OK, "%s: %s", name, cfx_error_message());
            cfx_free(want);
            want = NULL;
        }
        cfx_set_allocator(hook, NULL);
        start_run(0, true);
        int rc = workload(m, mode, &want);
        long total = atomic_load(&H.count);
        long leaked = H.nlive;
        start_run(0, false);
        cr_assert_eq(rc, CFX_OK, "%s: %s", name, cfx_error_message());
        /* (an object input's cached fake copy, replaced by this run, may stay too: the injected
         * runs check that the next run frees what a run left in it) */
        cr_assert(leaked == 1 || (cfx_model_has_object_input(m) && leaked > 1),
                  "%s: the clean run leaves only its result's JSON (%ld blocks)", name, leaked);
        long runs = 0, errors = 0, bad = 0;
        for (long n = 1; n <= total; n++) {
            if (!sampled(n, stride))
                continue;
            fflush(NULL);
            pid_t pid = fork();
            cr_assert_geq(pid, 0);
            if (pid == 0)
                _exit(child_run(m, mode, n, want));
            int st = 0;
            waitpid(pid, &st, 0);
            runs++;
            if (WIFSIGNALED(st)) {
                fprintf(stderr, "failalloc %s (%s) N=%ld: killed by signal %d\n", name, mode ? "fake" : "real", n,
                        WTERMSIG(st));
                bad++;
            } else if (WEXITSTATUS(st) == ERRORED) {
                errors++;
            } else if (WEXITSTATUS(st) != 0) {
                bad++; /* reported by the child */
            }
        }
        cfx_set_allocator(NULL, NULL);
        cfx_free(want);
        printf("failalloc %s (%s): %ld allocations from %ld distinct call sites; %ld injected runs: %ld errors, %ld successes, %ld bad\n",
               name, mode ? "fake" : "real", total, H.nsites, runs, errors, runs - errors - bad, bad);
        fflush(stdout);
        cr_expect_eq(bad, 0, "%s (%s): %ld of %ld injected runs crashed, leaked or failed without a message "
                             "(listed on stderr)", name, mode ? "fake" : "real", bad, runs);
        H.nsites = 0;
    }
}

Test(failalloc, mlp) { inject_all("mlp"); }
Test(failalloc, chain) { inject_all("chain"); }
Test(failalloc, mutate) { inject_all("mutate"); }
Test(failalloc, cnn) { inject_all("cnn"); }
Test(failalloc, classifier) { inject_all("classifier"); }
Test(failalloc, transformer) { inject_all("transformer"); }
Test(failalloc, tensor_queue) { inject_all("tensor_queue"); }

/* The set of models tested above is the whole zoo: a new model needs its line. */
Test(failalloc, covers_every_model)
{
    static const char *tested[] = {"mlp", "chain", "mutate", "cnn", "classifier", "transformer", "tensor_queue"};
    int n = (int)(sizeof tested / sizeof *tested);
    cr_assert_eq(cfx_model_count(), n, "the zoo has %d models, failalloc tests %d", cfx_model_count(), n);
    for (int i = 0; i < n; i++)
        cr_expect(cfx_model_find(tested[i]), "%s", tested[i]);
}
