/* node.c - changing a node: its args, its uses, its place, its name.
 *
 * Every change to args or kwargs goes through FX's one rule (_update_args_kwargs): the node
 * leaves the users of every old producer and is appended to the users of every new one, so
 * user order after a rewrite is exactly FX's. New values are copied into the arena before the
 * old ones are let go, so a caller may pass a node's own args back in. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

static const char *const op_names[CFX_NODE_OP_COUNT] = {
    "placeholder", "get_attr", "call_function", "call_method", "call_module", "output",
};

const char *cfx_node_op_name(int op)
{
    if (op >= 0 && op < CFX_NODE_OP_COUNT)
        return op_names[op];
    return op == CFX_NODE_ROOT ? "root" : NULL;
}

int cfx_node_op_from_name(const char *s)
{
    for (int i = 0; i < CFX_NODE_OP_COUNT; i++)
        if (strcmp(s, op_names[i]) == 0)
            return i;
    return -1;
}

const cfx_value *cfx_node_kwarg(const cfx_node *n, const char *name)
{
    cfx_kwarg *k = ir_kwargs(n);
    for (uint32_t i = 0, nk = cfx_node_num_kwargs(n); i < nk; i++)
        if (strcmp(k[i].name, name) == 0)
            return &k[i].value;
    return NULL;
}

/* ---- names -------------------------------------------------------------------------------- */

void cfx_node_print_name(const cfx_node *n, cfx_buf *b) { cfx_name_print(cfx_node_name(n), b); }
void ir_print_name(const cfx_node *n, cfx_buf *b) { cfx_name_print(cfx_node_name(n), b); }
char *cfx_node_name_string(const cfx_node *n) { return cfx_name_to_string(cfx_node_name(n)); }

bool cfx_node_name_is(const cfx_node *n, const char *s)
{
    size_t blen = cfx_istr_len(n->name_base);
    if (strncmp(s, n->name_base, blen) != 0)
        return false;
    s += blen;
    if (n->name_suffix < 0)
        return *s == '\0';
    char tmp[24];
    size_t k = cfx_fmt_u64((uint64_t)n->name_suffix, tmp);
    return s[0] == '_' && strncmp(s + 1, tmp, k) == 0 && s[1 + k] == '\0';
}

int cfx_node_set_name_unchecked(cfx_node *n, const char *name)
{
    if (!n || !name)
        return CFX_ERR;
    cfx_name nm;
    cfx_graph *g = cfx_node_graph(n);
    int rc = cfx_names_key(g->names, name, strlen(name), &nm);
    if (rc != CFX_OK)
        return rc;
    n->name_base = nm.base;
    n->name_suffix = nm.suffix;
    g->names_unchecked = true;
    return CFX_OK;
}

/* ---- args / kwargs ------------------------------------------------------------------------ */

int cfx_node_set_args_kwargs(cfx_node *n, const cfx_value *args, uint32_t n_args,
                             const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    if (!n)
        return CFX_ERR;
    return ir_node_set_args(cfx_node_graph(n), n, args, n_args, kwargs, n_kwargs, NULL);
}

int cfx_node_set_args(cfx_node *n, const cfx_value *args, uint32_t n_args)
{
    if (!n)
        return CFX_ERR;
    return cfx_node_set_args_kwargs(n, args, n_args, ir_kwargs(n), cfx_node_num_kwargs(n));
}

int cfx_node_set_kwargs(cfx_node *n, const cfx_kwarg *kwargs, uint32_t n_kwargs)
{
    if (!n)
        return CFX_ERR;
    return cfx_node_set_args_kwargs(n, n->args, n->n_args, kwargs, n_kwargs);
}

int cfx_node_update_arg(cfx_node *n, uint32_t idx, cfx_value v)
{
    if (!n)
        return CFX_ERR;
    if (idx >= n->n_args)
        return cfx_error_set(CFX_ERR, NULL, "list assignment index out of range");
    int rc = ir_fixup_values(cfx_node_graph(n), &v, 1, NULL, NULL, NULL);
    if (rc != CFX_OK)
        return rc;
    n->args[idx] = v;
    return ir_rebuild_inputs(n);
}

int cfx_node_update_kwarg(cfx_node *n, const char *key, cfx_value v)
{
    if (!n || !key)
        return CFX_ERR;
    cfx_graph *g = cfx_node_graph(n);
    int rc = ir_fixup_values(g, &v, 1, NULL, NULL, NULL);
    if (rc != CFX_OK)
        return rc;
    cfx_kwarg *old = ir_kwargs(n);
    uint32_t nk = cfx_node_num_kwargs(n);
    for (uint32_t i = 0; i < nk; i++)
        if (strcmp(old[i].name, key) == 0) {
            old[i].value = v;
            return ir_rebuild_inputs(n);
        }
    const char *name = cfx_names_intern(g->names, key, strlen(key));
    if (!name)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    /* a new key: a new argument block, the values moved over (they are the node's own) */
    cfx_value *a = ir_args_block(g, n->n_args, nk + 1, &rc);
    if (!a)
        return rc;
    if (n->n_args)
        memcpy(a, n->args, n->n_args * sizeof *a);
    cfx_kwarg *k = (cfx_kwarg *)(void *)(a + n->n_args);
    if (nk)
        memcpy(k, old, nk * sizeof *k);
    k[nk] = (cfx_kwarg){name, v};
    ir_set_args(n, a, n->n_args, nk + 1);
    return ir_rebuild_inputs(n);
}

int cfx_node_insert_arg(cfx_node *n, uint32_t idx, cfx_value v)
{
    if (!n)
        return CFX_ERR;
    if (idx > n->n_args)
        return cfx_error_set(CFX_ERR, NULL, "insert_args index must be between 0 and len(self.args), got %u",
                             idx);
    cfx_graph *g = cfx_node_graph(n);
    int rc = ir_fixup_values(g, &v, 1, NULL, NULL, NULL);
    if (rc != CFX_OK)
        return rc;
    uint32_t nk = cfx_node_num_kwargs(n);
    cfx_value *a = ir_args_block(g, n->n_args + 1u, nk, &rc);
    if (!a)
        return rc;
    if (idx)
        memcpy(a, n->args, idx * sizeof *a);
    a[idx] = v;
    if (n->n_args > idx)
        memcpy(a + idx + 1, n->args + idx, (n->n_args - idx) * sizeof *a);
    if (nk)
        memcpy(a + n->n_args + 1, ir_kwargs(n), nk * sizeof(cfx_kwarg));
    ir_set_args(n, a, n->n_args + 1u, nk);
    return ir_add_inputs_from(n, &a[idx]);
}

typedef struct replacement {
    cfx_node *old, *new_;
} replacement;

static bool replace_ref(cfx_value *slot, void *ctx)
{
    const replacement *r = ctx;
    if (slot->u.node == r->old)
        slot->u.node = r->new_;
    return true;
}

/* Rewrites n's node references old -> new in place, then re-links n's uses. */
static int replace_in(cfx_node *n, cfx_node *old, cfx_node *new_)
{
    replacement r = {old, new_};
    if (!ir_walk_refs(n, replace_ref, &r))
        return CFX_ERR_NOMEM;
    return ir_rebuild_inputs(n);
}

int cfx_node_replace_input_with(cfx_node *n, cfx_node *old_input, cfx_node *new_input)
{
    if (!n || !old_input || !new_input)
        return CFX_ERR;
    return replace_in(n, old_input, new_input);
}

int64_t cfx_node_replace_all_uses_with(cfx_node *old, cfx_node *replacement, cfx_node_filter_fn filter,
                                       void *ctx, cfx_node ***changed)
{
    if (changed)
        *changed = NULL;
    if (!old || !replacement)
        return CFX_ERR;
    uint32_t k = old->n_users;
    if (k == 0)
        return 0;
    /* to_process = list(self.users): the users list changes under us */
    cfx_node **users = cfx_malloc(k * sizeof *users);
    if (!users)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    uint32_t i = 0;
    cfx_user_iter it;
    for (cfx_node *u = cfx_node_first_user(old, &it); u; u = cfx_node_next_user(&it))
        users[i++] = u;
    uint32_t done = 0;
    for (i = 0; i < k; i++) {
        if (filter && !filter(users[i], ctx))
            continue;
        int rc = replace_in(users[i], old, replacement);
        if (rc != CFX_OK) {
            cfx_free(users);
            return rc;
        }
        users[done++] = users[i];
    }
    if (changed && done)
        *changed = users;
    else
        cfx_free(users);
    return done;
}

/* ---- moving ------------------------------------------------------------------------------- */

int cfx_node_prepend(cfx_node *n, cfx_node *x)
{
    if (!n || !x)
        return CFX_ERR;
    cfx_graph *g = cfx_node_graph(n);
    if (cfx_node_graph(x) != g)
        return cfx_error_set(CFX_ERR, NULL, "Attempting to move a Node into a different Graph");
    if (cfx_node_is_erased(x) || (n->op != CFX_NODE_ROOT && cfx_node_is_erased(n)))
        return cfx_error_set(CFX_ERR, NULL, "Attempting to move an erased Node");
    if (n == x)
        return CFX_OK; /* FX: "Trying to prepend a node to itself..." has no effect */
    ir_list_unlink(g, x);
    ir_list_insert(g, (cfx_insert_point){n, false}, x);
    return CFX_OK;
}

int cfx_node_append(cfx_node *n, cfx_node *x)
{
    if (!n || !x)
        return CFX_ERR;
    if (n == x)
        return CFX_OK;
    return cfx_node_prepend(ir_link(cfx_node_graph(n), n->next), x);
}
