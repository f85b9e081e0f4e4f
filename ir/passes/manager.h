/* manager.h - the pass manager: a registry of named graph passes and pipelines of them.
 *
 * A pass is a C function over a graph module that reports whether it changed the graph. Passes
 * are registered by name with a one-line description (the built-in ones: dce, cse, topo-sort,
 * verify, strip-asserts, fake-tensor-prop; a C user adds its own with cfx_pass_register). A
 * pipeline is a comma-separated list of names, "dce,cse,strip-asserts", run in order over one
 * graph module, with LLVM opt's instrumentation:
 *   verify_each      lint the input, then the graph after every pass; a failure names the pass
 *                    that broke the graph;
 *   print_after_all  str(graph) after every pass ("# *** IR Dump After cse ***" first);
 *   print_after      the same after the passes named in a comma-separated list only;
 *   print_changed    the graph at the start, then after each pass that changed it ("omitted
 *                    because no change" for the others);
 *   time_passes      a table of wall time per pass, as LLVM's -time-passes prints it;
 * and a progress line on the report stream for each pass started once the pipeline has run
 * longer than a second, so a long pipeline over a large graph is not silent.
 *
 * Errors: an unknown pass name is refused when the pipeline is parsed, naming the known
 * passes; a pass that fails stops the pipeline, and the error message names the pass. */
#ifndef CFX_IR_PASSES_MANAGER_H
#define CFX_IR_PASSES_MANAGER_H

#include <stdbool.h>
#include <stdio.h>

#include "dispatch/export.h"
#include "ir/graph_module.h"

/* A pass: CFX_OK with *changed set (never NULL when the manager calls it), or a negative status
 * with the error recorded through cfx_error_set. ctx is the pointer given at registration. */
typedef int (*cfx_pass_run)(cfx_graph_module *gm, void *ctx, bool *changed);

/* Registers a pass under `name` (letters, digits, '-' and '_'; copied). A name that is already
 * registered is refused (CFX_ERR). Thread-safe; the registry lives for the process. */
CFX_API int cfx_pass_register(const char *name, const char *description, cfx_pass_run run, void *ctx);

/* The registered passes, built-in ones first, then in registration order. */
CFX_API int cfx_pass_count(void);
CFX_API const char *cfx_pass_name(int i);        /* NULL when out of range */
CFX_API const char *cfx_pass_description(int i); /* NULL when out of range */
/* Whether a pass of that name is registered. */
CFX_API bool cfx_pass_exists(const char *name);
/* Runs one registered pass by name (no instrumentation). changed may be NULL. */
CFX_API int cfx_pass_run_named(cfx_graph_module *gm, const char *name, bool *changed);

/* ---- pipelines ----------------------------------------------------------------------------- */

typedef struct cfx_pipeline cfx_pipeline;

/* "dce,cse,topo-sort": names separated by commas (blanks around a name are ignored). NULL with
 * the error recorded for an empty pipeline, an empty name or an unknown one. */
CFX_API cfx_pipeline *cfx_pipeline_parse(const char *text);
CFX_API void cfx_pipeline_free(cfx_pipeline *p); /* NULL-safe */
CFX_API int cfx_pipeline_length(const cfx_pipeline *p);

typedef struct cfx_pipeline_options {
    bool verify_each;
    bool print_after_all;
    const char *print_after; /* comma-separated pass names, or NULL */
    bool print_changed;
    bool time_passes;
    FILE *dump;              /* graph dumps; NULL: stderr */
    FILE *report;            /* timing table and progress lines; NULL: stderr */
    double progress_after;   /* seconds before progress lines start; 0: 1 s; < 0: never */
} cfx_pipeline_options;

/* Runs the pipeline over gm. opts may be NULL (no instrumentation); changed (may be NULL)
 * tells whether any pass changed the graph. CFX_OK, or the failing pass's status with an
 * error naming it: "pass 'cse' failed: ..." or, with verify_each, "pass 'x' produced an
 * invalid graph: ...". An unknown name in print_after is an error before any pass runs. */
CFX_API int cfx_pipeline_run(const cfx_pipeline *p, cfx_graph_module *gm, const cfx_pipeline_options *opts,
                             bool *changed);

/* Parse + run + free. */
CFX_API int cfx_pipeline_run_text(const char *text, cfx_graph_module *gm, const cfx_pipeline_options *opts,
                                  bool *changed);

#endif
