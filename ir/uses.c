/* uses.c - def-use links: the use table, users lists, and a node's inputs.
 *
 * A use record says that `user` has `producer` among its inputs (internal.h). A node's input
 * records are one run of consecutive ids, in the order FX keeps `_input_nodes` (distinct node
 * references of args then kwargs, first occurrence first); each record is also threaded into
 * its producer's users list, in the order the uses were made. Records live in blocks of the
 * use table, allocated from the arena as ids grow; ids are never reused.
 *
 * Every change to a node's args goes through FX's one rule (_update_args_kwargs): the node
 * leaves the users of all its old producers, then is appended to the users of each new one.
 * So a new node, a node whose args were replaced and a node one of whose args was rewritten
 * all link their inputs the same way, and user order after a rewrite is exactly FX's. A
 * producer met twice is recognized in O(1) (its last user is the node being linked), so a node
 * with a million inputs is linked in linear time. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

/* ---- the use table ----------------------------------------------------------------------- */

/* Allocates the blocks of use records up to block `last` (those from first's block on may be
 * missing). */
static bool grow_use_table(cfx_graph *g, uint32_t first, uint32_t last)
{
    uint32_t cap = g->ublock_cap;
    if (last >= cap) {
        uint32_t ncap = cap ? cap : 8;
        while (ncap <= last)
            ncap *= 2;
        ir_use **t = cfx_realloc(g->ublock, ncap * sizeof *t);
        if (!t)
            return false;
        memset(t + cap, 0, (ncap - cap) * sizeof *t);
        g->ublock = t;
        cap = ncap;
    }
    for (uint32_t b = first >> IR_USE_SHIFT; b <= last; b++)
        if (!g->ublock[b] && !(g->ublock[b] = cfx_arena_alloc(&g->arena, sizeof(ir_use) << IR_USE_SHIFT)))
            return false;
    /* the size is published once the blocks exist: ir_use_alloc's fast path takes a table to
     * mean that n_uses's block exists (a first block that failed to allocate broke that) */
    g->ublock_cap = cap;
    return true;
}

uint32_t ir_use_alloc_run(cfx_graph *g, uint32_t count)
{
    const uint32_t block = 1u << IR_USE_SHIFT;
    uint32_t first = g->n_uses; /* from 1: id 0 means "none" */
    /* a run that fits in a block is kept in one; the ids skipped are never handed out */
    if (count <= block && (first & (block - 1)) + count > block)
        first = (first | (block - 1)) + 1;
    uint64_t end = (uint64_t)first + count;
    if (first == 0 || end > UINT32_MAX) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory (too many uses)");
        return 0;
    }
    /* blocks are taken in id order: when the run's last block exists, all before it do */
    uint32_t last = (uint32_t)((end - 1) >> IR_USE_SHIFT);
    if (count && (last >= g->ublock_cap || !g->ublock[last]) && !grow_use_table(g, first, last)) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return 0;
    }
    g->n_uses = (uint32_t)end;
    return first;
}

/* A ref to node p from records of g: its seq, or an entry of g's ext[]. */
static bool node_ref(cfx_graph *g, cfx_node *p, uint32_t *ref)
{
    if (cfx_node_graph(p) == g) {
        *ref = p->seq;
        return true;
    }
    if (g->n_ext == g->ext_cap) {
        uint32_t cap = g->ext_cap ? g->ext_cap * 2 : 8;
        cfx_node **t = cap < g->ext_cap || cap > IR_EXT ? NULL : cfx_realloc(g->ext, cap * sizeof *t);
        if (!t)
            return false;
        g->ext = t;
        g->ext_cap = cap;
    }
    g->ext[g->n_ext] = p;
    *ref = IR_EXT | g->n_ext++;
    return true;
}

/* Appends record id (of g, its producer p of g) to p's users: the head's prev is the tail. */
static inline void link_use(cfx_graph *g, cfx_node *p, ir_use *u, uint32_t id)
{
    ir_graph_changed(g); /* p's users */
    uint32_t head = p->users_head;
    u->next = 0;
    if (!head) {
        u->prev = id;
        p->users_head = id;
    } else {
        ir_use *h = ir_use_at(g, head);
        ir_use_at(g, h->prev)->next = id;
        u->prev = h->prev;
        h->prev = id;
    }
    p->n_users++;
}

static inline void unlink_use(cfx_graph *g, uint32_t id)
{
    ir_graph_changed(g);
    ir_use *u = ir_use_at(g, id);
    cfx_node *p = ir_node_at(g, u->producer);
    uint32_t head = p->users_head;
    if (id == head) {
        p->users_head = u->next;
        if (u->next)
            ir_use_at(g, u->next)->prev = u->prev; /* the tail */
    } else {
        ir_use_at(g, u->prev)->next = u->next;
        if (u->next)
            ir_use_at(g, u->next)->prev = u->prev;
        else
            ir_use_at(g, head)->prev = u->prev; /* u was the tail */
    }
    p->n_users--;
}

/* Fills n's input record id (of g, n's graph) with a use of p, a node of graph h != g, and
 * links it: a second record in h carries h's list links. */
static int add_use_across(cfx_graph *g, cfx_node *n, uint32_t id, cfx_node *p, cfx_graph *h)
{
    uint32_t pref, uref;
    if (!node_ref(g, p, &pref) || !node_ref(h, n, &uref))
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    uint32_t other = ir_use_alloc(h, 1);
    if (!other)
        return CFX_ERR_NOMEM;
    ir_use *v = ir_use_at(h, other);
    v->producer = p->seq;
    v->user = uref;
    link_use(h, p, v, other);
    ir_use *u = ir_use_at(g, id);
    u->user = n->seq;
    u->producer = pref;
    u->prev = 0;
    u->next = other;
    g->has_foreign_uses = true;
    return CFX_OK;
}

void ir_unlink_inputs(cfx_node *n)
{
    if (!n->n_inputs)
        return; /* a new node, the commonest */
    cfx_graph *g = cfx_node_graph(n);
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        uint32_t id = n->inputs + i;
        ir_use *u = ir_use_at(g, id);
        if (u->producer & IR_EXT)
            unlink_use(cfx_node_graph(g->ext[u->producer & ~IR_EXT]), u->next);
        else
            unlink_use(g, id);
    }
    n->n_inputs = 0;
}

cfx_node *cfx_node_input(const cfx_node *n, uint32_t i)
{
    return ir_input(n, i);
}

cfx_node *cfx_node_next_user(cfx_user_iter *it)
{
    if (!it->use)
        return NULL;
    const ir_use *u = ir_use_at(it->graph, it->use);
    it->use = u->next;
    return ir_ref(it->graph, u->user);
}

cfx_node *cfx_node_first_user(const cfx_node *n, cfx_user_iter *it)
{
    it->graph = cfx_node_graph(n);
    it->use = n->users_head;
    return cfx_node_next_user(it);
}

/* ---- a node's inputs --------------------------------------------------------------------- */

static bool count_ref(cfx_value *slot, void *ctx)
{
    (void)slot;
    ++*(uint32_t *)ctx;
    return true;
}

/* Linking a node's inputs: each producer not met before in this pass gets the node's next
 * record; `old` producers that the node already had stay as they are (insert_arg). */
typedef struct linker {
    cfx_graph *g;
    cfx_node *n;
    uint32_t old;
    int rc;
} linker;

/* Whether p, a node of n's graph g, is among the inputs n was given in this pass. While n's
 * inputs are linked it is in no users list but those it joins in this pass, at the tail
 * (nothing else links meanwhile): p met earlier in the pass has n as last user, one of n's
 * records, ids [n->inputs, n->inputs + n->n_inputs). */
static inline bool has_local_input(cfx_graph *g, const cfx_node *n, const cfx_node *p)
{
    return p->users_head && ir_use_at(g, p->users_head)->prev - n->inputs < n->n_inputs;
}

/* Gives n (of g) its next input p, a node of g: the next record of n's run, appended to p's
 * users. */
static inline void add_local_input(cfx_graph *g, cfx_node *n, cfx_node *p)
{
    uint32_t id = n->inputs + n->n_inputs++;
    ir_use *u = ir_use_at(g, id);
    u->user = n->seq;
    u->producer = p->seq;
    link_use(g, p, u, id);
}

/* Whether p, a node of graph h, is among the inputs the linker has given n so far: as
 * has_local_input, where for p of another graph the tail of p's users is a record of h whose
 * user is n. An old input (insert_arg) may have other users after n, so those are searched. */
static bool has_input(const linker *l, cfx_node *p, cfx_graph *h)
{
    cfx_node *n = l->n;
    if (h == l->g ? has_local_input(h, n, p)
                  : p->users_head && ir_ref(h, ir_use_at(h, ir_use_at(h, p->users_head)->prev)->user) == n)
        return true;
    for (uint32_t j = 0; j < l->old; j++)
        if (ir_input(n, j) == p)
            return true;
    return false;
}

/* The walk's step: the producer in *slot becomes n's next input unless it is one already. */
static bool link_ref(cfx_value *slot, void *ctx)
{
    linker *l = ctx;
    cfx_graph *g = l->g;
    cfx_node *n = l->n, *p = slot->u.node;
    cfx_graph *h = cfx_node_graph(p);
    if (has_input(l, p, h))
        return true;
    if (h == g) {
        add_local_input(g, n, p);
        return true;
    }
    if ((l->rc = add_use_across(g, n, n->inputs + n->n_inputs, p, h)) != CFX_OK)
        return false;
    n->n_inputs++;
    return true;
}

/* The link step for one top-level value of n's args or kwargs (n of g, the linker's):
 * ir_walk_values with link_ref, except that a reference to a node of g, a traced node's
 * commonest argument, is linked here without the call. */
static inline bool link_value(cfx_graph *g, cfx_node *n, linker *l, cfx_value *v)
{
    cfx_node *p = v->kind == CFX_V_NODE ? v->u.node : NULL;
    if (p && cfx_node_graph(p) == g) {
        if (!has_local_input(g, n, p))
            add_local_input(g, n, p);
        return true;
    }
    return ir_walk_values(v, 1, sizeof *v, link_ref, l);
}

int ir_link_inputs(cfx_graph *g, cfx_node *n, uint32_t refs)
{
    ir_graph_changed(g); /* n's args: this is how every change of them ends */
    uint32_t cap = n->n_inputs; /* the run is reused when the new inputs fit */
    ir_unlink_inputs(n);
    /* the references bound the distinct inputs: a run of that many records */
    if (refs > cap && !(n->inputs = ir_use_alloc(g, refs)))
        return CFX_ERR_NOMEM;
    linker l = {g, n, 0, CFX_OK};
    uint32_t nk = cfx_node_num_kwargs(n);
    for (uint32_t i = 0; i < n->n_args; i++)
        if (!link_value(g, n, &l, &n->args[i]))
            return l.rc != CFX_OK ? l.rc : CFX_ERR_NOMEM;
    for (uint32_t i = 0; i < nk; i++)
        if (!link_value(g, n, &l, &ir_kwargs(n)[i].value))
            return l.rc != CFX_OK ? l.rc : CFX_ERR_NOMEM;
    return CFX_OK;
}

int ir_rebuild_inputs(cfx_node *n)
{
    uint32_t refs = 0;
    if (!ir_walk_refs(n, count_ref, &refs))
        return CFX_ERR_NOMEM;
    return ir_link_inputs(cfx_node_graph(n), n, refs);
}

/* insert_arg's input update: producers of the new value not yet among the inputs are
 * appended (FX: `if new_use not in self._input_nodes`), existing uses stay where they are. */
int ir_add_inputs_from(cfx_node *n, cfx_value *v)
{
    cfx_graph *g = cfx_node_graph(n);
    ir_graph_changed(g); /* an argument was inserted */
    uint32_t refs = 0;
    if (!ir_walk_values(v, 1, sizeof *v, count_ref, &refs))
        return CFX_ERR_NOMEM;
    if (!refs)
        return CFX_OK;
    uint32_t old = n->n_inputs, first = ir_use_alloc(g, old + refs);
    if (!first)
        return CFX_ERR_NOMEM;
    /* move the records and repoint their neighbours (each producer's list holds one of them);
     * a cross-graph record only points at its partner, which stays put */
    for (uint32_t i = 0; i < old; i++) {
        uint32_t from = n->inputs + i, to = first + i;
        ir_use *nu = ir_use_at(g, to);
        *nu = *ir_use_at(g, from);
        if (nu->producer & IR_EXT)
            continue;
        cfx_node *p = ir_node_at(g, nu->producer);
        if (p->users_head == from) {
            p->users_head = to;
            if (nu->prev == from)
                nu->prev = to; /* alone in the list */
        } else {
            ir_use_at(g, nu->prev)->next = to;
        }
        if (nu->next)
            ir_use_at(g, nu->next)->prev = to;
        else if (p->users_head != to)
            ir_use_at(g, p->users_head)->prev = to; /* the tail moved */
    }
    n->inputs = first;
    linker l = {g, n, old, CFX_OK};
    if (!ir_walk_values(v, 1, sizeof *v, link_ref, &l))
        return l.rc != CFX_OK ? l.rc : CFX_ERR_NOMEM;
    return CFX_OK;
}
