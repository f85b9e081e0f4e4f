/* manager.c - the pass registry and pipelines (see manager.h).
 *
 * The registry is two tables: the built-in passes, a static array (a new built-in pass is one
 * row of it), and the passes C users register at run time, a growable array behind a mutex.
 * Registered names are never removed, so a name pointer handed out stays valid.
 *
 * A parsed pipeline holds copies of its passes' entries, so running it takes no lock. Its
 * instrumentation follows LLVM's opt: dumps go to stderr by default and carry a header line
 * ("# *** IR Dump After cse ***", '#' being a comment in FX's text), the timing report is
 * -time-passes' table (wall time only: a pass here is single-threaded and its CPU time is its
 * wall time on a quiet machine), aggregated by pass name and sorted by time, with the
 * verify-each lints as a row of their own.
 *
 * A pass's error is re-recorded with the pass's name in front of it: the thread's first-error
 * slot is cleared and set again, so the message the driver prints names the pass. */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/verify.h"
#include "dispatch/fork_internal.h"
#include "dispatch/dispatcher.h"
#include "ir/passes/cse.h"
#include "ir/passes/dce.h"
#include "ir/passes/fake_tensor_prop.h"
#include "ir/passes/fold.h"
#include "ir/passes/normalize_args.h"
#include "ir/passes/manager.h"
#include "ir/passes/strip_asserts.h"
#include "ir/passes/topo_sort.h"

/* ---- built-in passes ------------------------------------------------------------------------ */

static int run_dce(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    return cfx_pass_eliminate_dead_code(cfx_graph_module_graph(gm), NULL, changed);
}

static int run_cse(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    return cfx_pass_cse(cfx_graph_module_graph(gm), changed);
}

static int run_topo_sort(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    return cfx_pass_topo_sort(cfx_graph_module_graph(gm), changed);
}

static int run_verify(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    *changed = false;
    return cfx_graph_verify(cfx_graph_module_graph(gm));
}

static int run_strip_asserts(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    return cfx_pass_strip_asserts(cfx_graph_module_graph(gm), changed);
}

/* Meta only: the graph's nodes and arguments stay as they are, so it reports no change. */
static int run_fake_tensor_prop(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    *changed = false;
    cfx_dispatcher_init();
    return cfx_fake_tensor_prop_from_meta(cfx_graph_module_graph(gm), gm);
}

typedef struct pass_entry {
    const char *name, *description;
    cfx_pass_run run;
    void *ctx;
} pass_entry;

static const pass_entry builtins[] = {
    {"dce", "dead-code elimination: erase pure nodes nobody uses (Graph.eliminate_dead_code)", run_dce, NULL},
    {"cse", "common subexpression elimination; never merges impure or nondeterministic nodes", run_cse, NULL},
    {"topo-sort", "stable topological sort of the nodes (Kahn); fails on a cycle", run_topo_sort, NULL},
    {"verify", "check that the graph is well formed (Graph.lint, one output last, calls match schemas)", run_verify, NULL},
    {"strip-asserts", "erase assertion nodes (_assert_async, _assert_scalar, torch._assert, ...)",
     run_strip_asserts, NULL},
    {"fold", "constant folding: calls whose inputs are all constants become get_attr constants "
             "(_frozen_param<i>)", cfx_pass_fold, NULL},
    {"normalize-args", "arguments spelled as make_fx records them: kwargs to positional by the schema, "
                       "defaults dropped", cfx_pass_normalize_args, NULL},
    {"fake-tensor-prop", "refresh val and tensor_meta by running the graph on fake tensors made from "
                         "the placeholders' meta (FakeTensorProp)", run_fake_tensor_prop, NULL},
};
enum { N_BUILTINS = sizeof builtins / sizeof builtins[0] };

/* ---- the user registry ---------------------------------------------------------------------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pass_entry *reg;
static int reg_len, reg_cap;
__attribute__((constructor)) static void reg_lock_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &reg_lock); }

__attribute__((destructor)) static void registry_free(void)
{
    for (int i = 0; i < reg_len; i++) {
        cfx_free((char *)reg[i].name);
        cfx_free((char *)reg[i].description);
    }
    cfx_free(reg);
    reg = NULL;
    reg_len = reg_cap = 0;
}

/* The entry named name[0..len), copied into *out; false if none. */
static bool find_entry(const char *name, size_t len, pass_entry *out)
{
    for (int i = 0; i < N_BUILTINS; i++)
        if (strlen(builtins[i].name) == len && !strncmp(builtins[i].name, name, len)) {
            *out = builtins[i];
            return true;
        }
    bool found = false;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < reg_len && !found; i++)
        if (strlen(reg[i].name) == len && !strncmp(reg[i].name, name, len)) {
            *out = reg[i];
            found = true;
        }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

static bool valid_name(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
            return false;
    return true;
}

int cfx_pass_register(const char *name, const char *description, cfx_pass_run run, void *ctx)
{
    if (!valid_name(name))
        return cfx_error_set(CFX_ERR, NULL, "cannot register pass '%s': a pass name is letters, digits, '-' and '_'",
                             name ? name : "(null)");
    if (!run)
        return cfx_error_set(CFX_ERR, NULL, "cannot register pass '%s' without a function", name);
    pass_entry e;
    if (find_entry(name, strlen(name), &e))
        return cfx_error_set(CFX_ERR, NULL, "a pass named '%s' is already registered", name);
    char *n = cfx_strdup(name), *d = cfx_strdup(description ? description : "");
    pthread_mutex_lock(&reg_lock);
    bool dup = false;
    for (int i = 0; i < reg_len && !dup; i++)
        dup = !strcmp(reg[i].name, name); /* registered by another thread meanwhile */
    if (!dup && n && d && reg_len == reg_cap) {
        int cap = reg_cap ? reg_cap * 2 : 8;
        pass_entry *p = cfx_realloc(reg, (size_t)cap * sizeof *p);
        if (p) {
            reg = p;
            reg_cap = cap;
        }
    }
    bool ok = !dup && n && d && reg_len < reg_cap;
    if (ok)
        reg[reg_len++] = (pass_entry){n, d, run, ctx};
    pthread_mutex_unlock(&reg_lock);
    if (ok)
        return CFX_OK;
    cfx_free(n);
    cfx_free(d);
    if (dup)
        return cfx_error_set(CFX_ERR, NULL, "a pass named '%s' is already registered", name);
    return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
}

int cfx_pass_count(void)
{
    pthread_mutex_lock(&reg_lock);
    int n = N_BUILTINS + reg_len;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

static bool entry_at(int i, pass_entry *out)
{
    if (i < 0)
        return false;
    if (i < N_BUILTINS) {
        *out = builtins[i];
        return true;
    }
    pthread_mutex_lock(&reg_lock);
    bool ok = i - N_BUILTINS < reg_len;
    if (ok)
        *out = reg[i - N_BUILTINS];
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

const char *cfx_pass_name(int i)
{
    pass_entry e;
    return entry_at(i, &e) ? e.name : NULL;
}

const char *cfx_pass_description(int i)
{
    pass_entry e;
    return entry_at(i, &e) ? e.description : NULL;
}

bool cfx_pass_exists(const char *name)
{
    pass_entry e;
    return name && find_entry(name, strlen(name), &e);
}

/* "cse, dce, ..." in registry order. */
static void known_passes(cfx_buf *b)
{
    int n = cfx_pass_count();
    for (int i = 0; i < n; i++) {
        const char *name = cfx_pass_name(i);
        if (name)
            cfx_buf_printf(b, "%s%s", i ? ", " : "", name);
    }
}

static int unknown_pass(const char *name, size_t len, const char *where, const char *text)
{
    cfx_buf b;
    cfx_buf_init(&b);
    known_passes(&b);
    int rc = where ? cfx_error_set(CFX_ERR, NULL, "unknown pass '%.*s' in %s '%s' (known passes: %s)", (int)len, name,
                                   where, text, b.data ? b.data : "")
                   : cfx_error_set(CFX_ERR, NULL, "unknown pass '%.*s' (known passes: %s)", (int)len, name,
                                   b.data ? b.data : "");
    cfx_buf_free(&b);
    return rc;
}

/* Re-records the thread's error as "<prefix>: <message>". */
static int rewrap(int status, const char *fmt, const char *name)
{
    const char *m = cfx_error_message();
    char *msg = cfx_strdup(m ? m : "unknown error");
    cfx_error_clear();
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, fmt, name);
    int rc = cfx_error_set(status < 0 ? (cfx_status)status : CFX_ERR, NULL, "%s: %s", b.data ? b.data : name,
                           msg ? msg : "unknown error");
    cfx_buf_free(&b);
    cfx_free(msg);
    return rc;
}

int cfx_pass_run_named(cfx_graph_module *gm, const char *name, bool *changed)
{
    bool ch = false;
    if (changed)
        *changed = false;
    pass_entry e;
    if (!name || !find_entry(name, strlen(name), &e))
        return unknown_pass(name ? name : "(null)", name ? strlen(name) : 6, NULL, NULL);
    if (!gm)
        return CFX_ERR;
    int rc = e.run(gm, e.ctx, &ch);
    if (rc != CFX_OK)
        return rewrap(rc, "pass '%s' failed", e.name);
    if (changed)
        *changed = ch;
    return CFX_OK;
}

/* ---- pipelines ------------------------------------------------------------------------------ */

struct cfx_pipeline {
    int n;
    pass_entry passes[];
};

/* Calls fn(name, len) on each comma-separated token of text, blanks trimmed; stops at the first
 * non-zero return. */
typedef int (*token_fn)(const char *name, size_t len, void *ctx);
static int for_each_token(const char *text, token_fn fn, void *ctx)
{
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *s = p, *e = end;
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        int rc = fn(s, (size_t)(e - s), ctx);
        if (rc)
            return rc;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

typedef struct parse_ctx {
    const char *text, *where;
    cfx_pipeline *p; /* NULL: validate only */
} parse_ctx;

static int add_token(const char *name, size_t len, void *ctx)
{
    parse_ctx *pc = ctx;
    if (len == 0)
        return cfx_error_set(CFX_ERR, NULL, "empty pass name in %s '%s'", pc->where, pc->text);
    pass_entry e;
    if (!find_entry(name, len, &e))
        return unknown_pass(name, len, pc->where, pc->text);
    if (pc->p)
        pc->p->passes[pc->p->n++] = e;
    return 0;
}

cfx_pipeline *cfx_pipeline_parse(const char *text)
{
    if (!text)
        return NULL;
    size_t commas = 0;
    for (const char *c = text; *c; c++)
        commas += *c == ',';
    const char *s = text;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s) {
        cfx_error_set(CFX_ERR, NULL, "empty pass pipeline");
        return NULL;
    }
    cfx_pipeline *p = cfx_malloc(sizeof *p + (commas + 1) * sizeof p->passes[0]);
    if (!p) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    p->n = 0;
    parse_ctx pc = {text, "pipeline", p};
    if (for_each_token(text, add_token, &pc) != 0) {
        cfx_free(p);
        return NULL;
    }
    return p;
}

void cfx_pipeline_free(cfx_pipeline *p) { cfx_free(p); }

int cfx_pipeline_length(const cfx_pipeline *p) { return p ? p->n : 0; }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct match_ctx {
    const char *name;
} match_ctx;

static int match_token(const char *name, size_t len, void *ctx)
{
    const char *want = ((match_ctx *)ctx)->name;
    return strlen(want) == len && !strncmp(want, name, len);
}

static bool list_has(const char *list, const char *name)
{
    match_ctx m = {name};
    return list && for_each_token(list, match_token, &m) == 1;
}

static int dump_graph(FILE *f, const cfx_graph *g, const char *header, const char *name)
{
    char *text = cfx_graph_to_string(g);
    if (!text)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    fprintf(f, header, name);
    fprintf(f, "\n%s\n", text);
    cfx_free(text);
    return CFX_OK;
}

/* Time per distinct pass name, in first-run order. */
typedef struct timing {
    const char *name;
    double seconds;
    int first; /* first-run order: the tie-break that makes the sort stable */
} timing;

static int by_time_desc(const void *a, const void *b)
{
    const timing *x = a, *y = b;
    if (x->seconds != y->seconds)
        return x->seconds < y->seconds ? 1 : -1;
    return (x->first > y->first) - (x->first < y->first);
}

static void add_time(timing *t, int *n, const char *name, double s)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(t[i].name, name)) {
            t[i].seconds += s;
            return;
        }
    t[*n] = (timing){name, s, *n};
    (*n)++;
}

static void print_timing(FILE *f, timing *t, int n)
{
    double total = 0;
    for (int i = 0; i < n; i++)
        total += t[i].seconds;
    qsort(t, (size_t)n, sizeof *t, by_time_desc);
    fprintf(f, "===-------------------------------------------------------------------------===\n"
               "                      ... Pass execution timing report ...\n"
               "===-------------------------------------------------------------------------===\n"
               "  Total Execution Time: %.4f seconds (%.4f wall clock)\n\n"
               "   ---Wall Time---  --- Name ---\n",
            total, total);
    for (int i = 0; i < n; i++)
        fprintf(f, "   %.4f (%5.1f%%)  %s\n", t[i].seconds, total > 0 ? 100.0 * t[i].seconds / total : 0.0, t[i].name);
    fprintf(f, "   %.4f (100.0%%)  Total\n\n", total);
}

int cfx_pipeline_run(const cfx_pipeline *p, cfx_graph_module *gm, const cfx_pipeline_options *opts,
                     bool *changed)
{
    if (changed)
        *changed = false;
    if (!p || !gm)
        return CFX_ERR;
    static const cfx_pipeline_options none = {0};
    if (!opts)
        opts = &none;
    FILE *dump = opts->dump ? opts->dump : stderr, *report = opts->report ? opts->report : stderr;
    double progress_after = opts->progress_after == 0 ? 1.0 : opts->progress_after;
    cfx_graph *g = cfx_graph_module_graph(gm);
    if (opts->print_after) {
        parse_ctx pc = {opts->print_after, "print-after", NULL};
        if (for_each_token(opts->print_after, add_token, &pc) != 0)
            return cfx_error_status() ? cfx_error_status() : CFX_ERR;
    }
    timing *times = cfx_malloc((size_t)(p->n + 1) * sizeof *times);
    if (!times)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    int n_times = 0, rc = CFX_OK;
    double verify_time = 0, start = now();
    bool any = false, progressed = false;
    if (opts->verify_each) {
        double t0 = now();
        rc = cfx_graph_lint(g);
        verify_time += now() - t0;
        if (rc != CFX_OK)
            rc = rewrap(rc, "%s", "the input graph is invalid");
    }
    if (rc == CFX_OK && opts->print_changed)
        rc = dump_graph(dump, g, "# *** IR Dump At Start ***%s", "");
    for (int i = 0; i < p->n && rc == CFX_OK; i++) {
        const pass_entry *e = &p->passes[i];
        double t0 = now();
        if (progress_after >= 0 && t0 - start > progress_after) {
            fprintf(report, "cfx: running pass %d/%d '%s' on %u nodes (%.1f s elapsed)\n", i + 1, p->n, e->name,
                    cfx_graph_num_nodes(g), t0 - start);
            fflush(report);
            progressed = true;
        }
        bool ch = false;
        rc = e->run(gm, e->ctx, &ch);
        add_time(times, &n_times, e->name, now() - t0);
        if (rc != CFX_OK) {
            rc = rewrap(rc, "pass '%s' failed", e->name);
            break;
        }
        any |= ch;
        if (opts->verify_each) {
            double v0 = now();
            rc = cfx_graph_lint(g);
            verify_time += now() - v0;
            if (rc != CFX_OK) {
                rc = rewrap(rc, "pass '%s' produced an invalid graph", e->name);
                break;
            }
        }
        if (opts->print_after_all || list_has(opts->print_after, e->name) || (opts->print_changed && ch))
            rc = dump_graph(dump, g, "# *** IR Dump After %s ***", e->name);
        else if (opts->print_changed)
            fprintf(dump, "# *** IR Dump After %s omitted because no change ***\n", e->name);
    }
    if (progressed)
        fprintf(report, "cfx: pipeline finished in %.1f s\n", now() - start);
    if (opts->time_passes) {
        if (opts->verify_each)
            add_time(times, &n_times, "(verify-each)", verify_time);
        print_timing(report, times, n_times);
    }
    cfx_free(times);
    if (rc == CFX_OK && changed)
        *changed = any;
    return rc;
}

int cfx_pipeline_run_text(const char *text, cfx_graph_module *gm, const cfx_pipeline_options *opts, bool *changed)
{
    if (changed)
        *changed = false;
    cfx_pipeline *p = cfx_pipeline_parse(text);
    if (!p)
        return cfx_error_status() ? cfx_error_status() : CFX_ERR;
    int rc = cfx_pipeline_run(p, gm, opts, changed);
    cfx_pipeline_free(p);
    return rc;
}
