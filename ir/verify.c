/* verify.c - Graph.lint plus the output rule and schema binding (see verify.h).
 *
 * Shared by the JSON loader (a file is user input: what loads must be a graph cfx can print,
 * run and save) and the pass manager's `verify` pass, so both refuse the same graphs. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/schema.h"
#include "ir/graph.h"
#include "ir/lint.h"
#include "ir/verify.h"

int cfx_node_verify_schema(const cfx_node *n)
{
    if (!n || cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
        return CFX_OK;
    const cfx_op *op = cfx_node_operator(n);
    const cfx_schema *s = op ? cfx_op_schema(op) : NULL;
    if (!s || s->is_vararg)
        return CFX_OK;
    const char *name = cfx_op_name(op);
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    /* Extra positional arguments and unknown keywords are not refused yet: the JSON value tests
     * carry every kind of value as extra arguments of one call (tests/ir/json_test_util.h). */
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t i = 0; i < nk; i++) {
        int idx = cfx_schema_find_arg(s, kw[i].name);
        if (idx >= 0 && (uint32_t)idx < na)
            return cfx_error_set(CFX_ERR, NULL, "%s() got multiple values for argument '%s'", name, kw[i].name);
    }
    for (uint32_t i = na; i < (uint32_t)s->n_args; i++) {
        if (s->args[i].has_default)
            continue;
        bool given = false;
        for (uint32_t k = 0; k < nk && !given; k++)
            given = strcmp(kw[k].name, s->args[i].name) == 0;
        if (!given) {
            char *decl = cfx_schema_to_string(s);
            int rc = cfx_error_set(CFX_ERR, NULL, "%s() is missing value for argument '%s'. Declaration: %s", name,
                                   s->args[i].name, decl ? decl : "?");
            free(decl);
            return rc;
        }
    }
    return CFX_OK;
}

int cfx_graph_verify(cfx_graph *g)
{
    int rc = cfx_graph_lint(g);
    if (rc != CFX_OK)
        return rc;
    int outputs = 0;
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        if (cfx_node_opcode(n) == CFX_NODE_OUTPUT && ++outputs > 1)
            return cfx_error_set(CFX_ERR, NULL, "graph has more than one output node");
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) == CFX_NODE_OUTPUT && cfx_node_next(n))
            return cfx_error_set(CFX_ERR, NULL, "the output node is not the last node of the graph");
        if ((rc = cfx_node_verify_schema(n)) != CFX_OK)
            return rc;
    }
    return CFX_OK;
}
