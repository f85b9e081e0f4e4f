/* normalize_args.c - operator calls rewritten to make_fx's spelling (see normalize_args.h).
 *
 * One forward walk; per node, the call is bound into a scratch array of the schema's length
 * (values borrowed from the node or the schema) and the canonical args and kwargs are read
 * off it. The node is rewritten only when they differ from what it has, so a graph already in
 * make_fx's form is left untouched and reports no change. The default comparison is IValue's,
 * as the proxy mode applies it when it records a call (tracer/proxy.c). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema.h"
#include "ir/passes/normalize_args.h"

/* A default as a graph argument: an enum-like int default becomes its enum value, so it
 * prints as make_fx prints it (torch.float32, not 6). */
static cfx_value default_arg(const cfx_argument *a)
{
    cfx_value d = a->default_value;
    const cfx_type *t = a->type;
    if (t->kind == CFX_TYPE_OPTIONAL)
        t = t->elems[0];
    if (d.kind != CFX_V_INT)
        return d;
    switch (t->kind) {
    case CFX_TYPE_SCALAR_TYPE: return cfx_dtype_value((cfx_dtype)d.u.i);
    case CFX_TYPE_LAYOUT: return cfx_layout_value(d.u.i);
    case CFX_TYPE_MEMORY_FORMAT: return cfx_memory_format_value((cfx_memory_format)d.u.i);
    default: return d;
    }
}

typedef struct scratch {
    cfx_value *full;
    bool *given;
    cfx_kwarg *kw;
    uint32_t cap;
} scratch;

static int reserve(scratch *s, uint32_t n)
{
    if (n <= s->cap)
        return CFX_OK;
    uint32_t cap = n < 16 ? 16 : n;
    cfx_value *full = cfx_malloc(cap * sizeof *full);
    bool *given = cfx_malloc(cap * sizeof *given);
    cfx_kwarg *kw = cfx_malloc(cap * sizeof *kw);
    if (!full || !given || !kw) {
        cfx_free(full);
        cfx_free(given);
        cfx_free(kw);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_free(s->full);
    cfx_free(s->given);
    cfx_free(s->kw);
    *s = (scratch){full, given, kw, cap};
    return CFX_OK;
}

/* 1 if n was rewritten, 0 if it is already canonical or does not bind, or an error. */
static int normalize(cfx_node *n, scratch *sc)
{
    const cfx_op *op = cfx_node_operator(n);
    const cfx_schema *s = op ? cfx_op_schema(op) : NULL;
    if (!s || s->is_vararg)
        return 0;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n), total = s->n_args;
    if (na > total)
        return 0;
    int rc = reserve(sc, total);
    if (rc != CFX_OK)
        return rc;
    memset(sc->given, 0, total * sizeof *sc->given);
    for (uint32_t i = 0; i < na; i++) {
        sc->full[i] = cfx_node_arg(n, i);
        sc->given[i] = true;
    }
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t i = 0; i < nk; i++) {
        int idx = cfx_schema_find_arg(s, kw[i].name);
        if (idx < 0 || sc->given[idx])
            return 0;
        sc->full[idx] = kw[i].value;
        sc->given[idx] = true;
    }
    for (uint32_t i = 0; i < total; i++) {
        if (sc->given[i])
            continue;
        if (!s->args[i].has_default)
            return 0;
        sc->full[i] = default_arg(&s->args[i]);
    }
    uint32_t kw_start = total;
    while (kw_start > 0 && s->args[kw_start - 1].kwarg_only)
        kw_start--;
    uint32_t n_pos = kw_start;
    while (n_pos > 0 && cfx_argument_is_default(&s->args[n_pos - 1], sc->full[n_pos - 1]))
        n_pos--;
    uint32_t n_kw = 0;
    for (uint32_t i = kw_start; i < total; i++)
        if (!cfx_argument_is_default(&s->args[i], sc->full[i]))
            sc->kw[n_kw++] = (cfx_kwarg){s->args[i].name, sc->full[i]};
    /* unchanged? the positions given stay the node's own values, so compare by identity of
     * placement: same counts, same kwarg names in the same order, equal values */
    bool same = n_pos == na && n_kw == nk;
    for (uint32_t i = 0; same && i < n_pos; i++)
        same = cfx_value_equal(sc->full[i], cfx_node_arg(n, i));
    for (uint32_t i = 0; same && i < n_kw; i++)
        same = strcmp(sc->kw[i].name, kw[i].name) == 0 && cfx_value_equal(sc->kw[i].value, kw[i].value);
    if (same)
        return 0;
    rc = cfx_node_set_args_kwargs(n, sc->full, n_pos, sc->kw, n_kw);
    return rc == CFX_OK ? 1 : rc;
}

int cfx_pass_normalize_args(cfx_graph_module *gm, void *ctx, bool *changed)
{
    (void)ctx;
    if (changed)
        *changed = false;
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!gm)
        return cfx_error_set(CFX_ERR, NULL, "normalize_args: no graph module given");
    cfx_graph *g = cfx_graph_module_graph(gm);
    scratch sc = {0};
    bool any = false;
    int rc = CFX_OK;
    for (cfx_node *n = cfx_graph_first(g); n && rc == CFX_OK; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
            continue;
        int r = normalize(n, &sc);
        if (r < 0)
            rc = r;
        else
            any |= r == 1;
    }
    cfx_free(sc.full);
    cfx_free(sc.given);
    cfx_free(sc.kw);
    if (rc == CFX_OK && changed)
        *changed = any;
    return rc;
}
