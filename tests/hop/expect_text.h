/* expect_text.h - a traced graph module's printed graph and code against 2.13's texts, shared
 * by the hop/ tests. */
#ifndef CFX_TESTS_HOP_EXPECT_TEXT_H
#define CFX_TESTS_HOP_EXPECT_TEXT_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "cfx.h"
#include "tests/json_round_trip.h"

/* str(gm.graph) == want_graph and gm.code == want_code (mode names the trace in messages). */
static inline void expect_graph_and_code(const cfx_graph_module *gm, const char *want_graph, const char *want_code,
                                         int mode)
{
    char *g = cfx_graph_to_string(cfx_graph_module_graph(gm));
    char *c = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
    cr_expect_str_eq(g, want_graph, "mode %d\n%s", mode, g);
    cr_expect_str_eq(c, want_code, "mode %d\n%s", mode, c);
    free(g);
    free(c);
    expect_module_json_round_trip(gm, want_graph);
}

#endif
