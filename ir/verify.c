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
    /* PyTorch's createStackForSchema checks, in its order and with its texts (the name is the
     * schema's without the overload: "aten::add()"). */
    const char *name = s->name;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n), npos = 0;
    while (npos < s->n_args && !s->args[npos].kwarg_only)
        npos++;
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    char *decl = NULL;
    int rc = CFX_OK;
    if (na + nk > s->n_args) {
        decl = cfx_schema_to_string(s);
        rc = cfx_error_set(CFX_ERR, NULL, "%s() expected at most %u argument(s) but received %u argument(s). "
                           "Declaration: %s", name, (unsigned)s->n_args, na + nk, decl ? decl : "?");
    } else if (na > npos) {
        decl = cfx_schema_to_string(s);
        rc = cfx_error_set(CFX_ERR, NULL, "%s() takes %u positional argument(s) but %u was/were given.  "
                           "Declaration: %s", name, npos, na, decl ? decl : "?");
    }
    for (uint32_t i = na; rc == CFX_OK && i < (uint32_t)s->n_args; i++) {
        if (s->args[i].has_default)
            continue;
        bool given = false;
        for (uint32_t k = 0; k < nk && !given; k++)
            given = strcmp(kw[k].name, s->args[i].name) == 0;
        if (!given) {
            decl = cfx_schema_to_string(s);
            rc = cfx_error_set(CFX_ERR, NULL, "%s() is missing value for argument '%s'. Declaration: %s", name,
                               s->args[i].name, decl ? decl : "?");
        }
    }
    /* keywords no argument after the positional ones consumed (FunctionSchema::findErrorInKwargs) */
    for (uint32_t k = 0; rc == CFX_OK && k < nk; k++) {
        int idx = cfx_schema_find_arg(s, kw[k].name);
        if (idx >= 0 && (uint32_t)idx >= na)
            continue;
        decl = cfx_schema_to_string(s);
        if (idx < 0)
            rc = cfx_error_set(CFX_ERR, NULL, "Unknown keyword argument '%s' for operator '%s'. Schema: %s",
                               kw[k].name, name, decl ? decl : "?");
        else
            rc = cfx_error_set(CFX_ERR, NULL, "Argument '%s' specified both as positional and keyword argument. "
                               "Schema: %s", kw[k].name, decl ? decl : "?");
    }
    cfx_free(decl);
    return rc;
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
