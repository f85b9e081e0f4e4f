/* args.c - argument values and the def-use links they imply.
 *
 * A node's args and kwargs are copied into the graph's arena when set: nested lists and
 * tuples and strings get their own arena copies, so the node owns its values outright and
 * later rewrites (replace_all_uses_with, erase) can patch node references in place. Nesting
 * depth is user-sized, so every walk here keeps an explicit stack of frames instead of
 * recursing.
 *
 * The node references found in args then kwargs, deduplicated in first-seen order, are the
 * node's inputs. Deduplication is a linear scan while there are few of them (the common case:
 * one to three) and switches to a reusable pointer hash set past 16, so a node with a million
 * inputs is built in linear time. A fresh node with a few flat args (what tracing makes)
 * skips all of this: args_flat.h. */
#include <stdlib.h>
#include <string.h>

#include "ir/args_flat.h"
#include "ir/internal.h"

/* ---- an explicit stack of value arrays -------------------------------------------------- */

typedef struct frame {
    cfx_value *items;
    uint32_t n, i;
} frame;

typedef struct vstack {
    frame *f;
    uint32_t len, cap;
    frame inline_frames[16];
} vstack;

static void vstack_init(vstack *s)
{
    s->f = s->inline_frames;
    s->len = 0;
    s->cap = 16;
}

static void vstack_free(vstack *s)
{
    if (s->f != s->inline_frames)
        free(s->f);
}

static bool vstack_push(vstack *s, cfx_value *items, uint32_t n)
{
    if (s->len == s->cap) {
        uint32_t cap = s->cap * 2;
        frame *f = malloc(cap * sizeof *f);
        if (!f)
            return false;
        memcpy(f, s->f, s->len * sizeof *f);
        if (s->f != s->inline_frames)
            free(s->f);
        s->f = f;
        s->cap = cap;
    }
    s->f[s->len++] = (frame){items, n, 0};
    return true;
}

/* ---- copying ---------------------------------------------------------------------------- */

static bool needs_fixup(const cfx_value *v, uint32_t n, bool map)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = v[i].kind;
        if (k == CFX_V_STRING || k == CFX_V_LIST || k == CFX_V_TUPLE)
            return true;
        if (k == CFX_V_NODE && (map || !v[i].u.node))
            return true;
    }
    return false;
}

int ir_fixup_values(cfx_graph *g, cfx_value *vals, uint32_t n, cfx_node_map_fn map, void *ctx)
{
    if (!needs_fixup(vals, n, map != NULL))
        return CFX_OK;
    vstack st;
    vstack_init(&st);
    int rc = CFX_OK;
    if (!vstack_push(&st, vals, n))
        goto oom;
    while (st.len) {
        frame *f = &st.f[st.len - 1];
        if (f->i == f->n) {
            st.len--;
            continue;
        }
        cfx_value *v = &f->items[f->i++];
        switch (v->kind) {
        case CFX_V_STRING:
            if (v->u.s) {
                char *s = cfx_arena_strndup(&g->arena, v->u.s, v->len);
                if (!s)
                    goto oom;
                v->u.s = s;
            }
            break;
        case CFX_V_LIST:
        case CFX_V_TUPLE:
            if (v->len) {
                cfx_value *copy = cfx_arena_alloc(&g->arena, (size_t)v->len * sizeof *copy);
                if (!copy)
                    goto oom;
                memcpy(copy, v->u.items, (size_t)v->len * sizeof *copy);
                v->u.items = copy;
                if (!vstack_push(&st, copy, v->len)) /* f is invalid from here */
                    goto oom;
            } else {
                v->u.items = NULL;
            }
            break;
        case CFX_V_NODE:
            if (v->u.node && map)
                v->u.node = map(v->u.node, ctx);
            if (!v->u.node) {
                rc = CFX_ERR; /* an earlier call failed and recorded why */
                goto done;
            }
            break;
        default:
            break;
        }
    }
done:
    vstack_free(&st);
    return rc;
oom:
    vstack_free(&st);
    return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
}

cfx_value *ir_args_block(cfx_graph *g, uint32_t n_args, uint32_t n_kwargs, int *rc)
{
    *rc = CFX_OK;
    if (!n_args && !n_kwargs)
        return NULL;
    if (n_args > CFX_NODE_MAX_ARGS) {
        *rc = cfx_error_set(CFX_ERR, NULL, "a node takes at most %u args, not %u", (unsigned)CFX_NODE_MAX_ARGS,
                            n_args);
        return NULL;
    }
    if (n_kwargs > CFX_NODE_MAX_KWARGS) {
        *rc = cfx_error_set(CFX_ERR, NULL, "a node takes at most %u kwargs, not %u", (unsigned)CFX_NODE_MAX_KWARGS,
                            n_kwargs);
        return NULL;
    }
    /* kwargs follow the values: 16-byte values keep the 8-byte kwargs aligned; a kwargs count
     * too big for the node's flags goes in front (so at most 16 bytes more, for rare nodes) */
    size_t pre = n_kwargs >= CFX_NODE_KWARGS_OUT ? 16 : 0;
    char *p = cfx_arena_alloc(&g->arena, pre + (size_t)n_args * sizeof(cfx_value) +
                                             (size_t)n_kwargs * sizeof(cfx_kwarg));
    if (!p) {
        *rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_value *dst = (cfx_value *)(void *)(p + pre);
    if (pre)
        ((uint32_t *)(void *)dst)[-1] = n_kwargs;
    return dst;
}

int ir_copy_args_kwargs(cfx_graph *g, const cfx_value *args, uint32_t n_args, const cfx_kwarg *kwargs,
                        uint32_t n_kwargs, cfx_node_map_fn map, void *ctx, cfx_value **out)
{
    *out = NULL;
    if (n_args && !args)
        return cfx_error_set(CFX_ERR, NULL, "args is NULL but its count is %u", n_args);
    int rc;
    cfx_value *dst = ir_args_block(g, n_args, n_kwargs, &rc);
    if (!dst)
        return rc;
    if (n_args) {
        memcpy(dst, args, (size_t)n_args * sizeof *dst);
        rc = ir_fixup_values(g, dst, n_args, map, ctx);
        if (rc != CFX_OK)
            return rc;
    }
    if (n_kwargs && !kwargs)
        return cfx_error_set(CFX_ERR, NULL, "kwargs is NULL but its count is %u", n_kwargs);
    cfx_kwarg *k = (cfx_kwarg *)(void *)(dst + n_args);
    for (uint32_t i = 0; i < n_kwargs; i++) {
        if (!kwargs[i].name)
            return cfx_error_set(CFX_ERR, NULL, "kwarg %u has no name", i);
        k[i].name = cfx_names_intern(g->names, kwargs[i].name, strlen(kwargs[i].name));
        if (!k[i].name)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        k[i].value = kwargs[i].value;
        rc = ir_fixup_values(g, &k[i].value, 1, map, ctx);
        if (rc != CFX_OK)
            return rc;
    }
    *out = dst;
    return CFX_OK;
}

bool ir_walk_node_refs(cfx_value *vals, uint32_t n, ir_value_fn fn, void *ctx)
{
    /* flat arrays (the common case) need no stack */
    bool nested = false;
    for (uint32_t i = 0; i < n && !nested; i++)
        nested = (vals[i].kind == CFX_V_LIST || vals[i].kind == CFX_V_TUPLE) && vals[i].len;
    if (!nested) {
        for (uint32_t i = 0; i < n; i++)
            if (vals[i].kind == CFX_V_NODE)
                fn(&vals[i], ctx);
        return true;
    }
    /* depth first, in order: FX's map_arg order */
    vstack st;
    vstack_init(&st);
    vstack_push(&st, vals, n); /* fits the inline frames */
    while (st.len) {
        frame *f = &st.f[st.len - 1];
        if (f->i == f->n) {
            st.len--;
            continue;
        }
        cfx_value *v = &f->items[f->i++];
        if (v->kind == CFX_V_NODE) {
            fn(v, ctx);
        } else if ((v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) && v->len) {
            if (!vstack_push(&st, (cfx_value *)v->u.items, v->len)) {
                vstack_free(&st);
                return false;
            }
        }
    }
    vstack_free(&st);
    return true;
}

/* ---- uses -------------------------------------------------------------------------------- */

uint32_t ir_use_alloc(cfx_graph *g, uint32_t count)
{
    if (g->n_uses == 0)
        g->n_uses = 1; /* id 0 means "none" */
    uint32_t first = g->n_uses;
    const uint32_t block = 1u << IR_USE_SHIFT;
    /* a run that fits in a block is kept in one (see ir_use_reserve); the ids skipped are
     * never handed out */
    if (count <= block && (first & (block - 1)) + count > block)
        first = first > UINT32_MAX - block ? 0 : (first | (block - 1)) + 1;
    if (!first || count > UINT32_MAX - first) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory (too many uses)");
        return 0;
    }
    uint32_t need = ((first + count - 1) >> IR_USE_SHIFT) + 1;
    if (need > g->ublock_cap) {
        uint32_t cap = g->ublock_cap ? g->ublock_cap : 8;
        while (cap < need)
            cap *= 2;
        ir_use **t = realloc(g->ublock, cap * sizeof *t);
        if (!t) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return 0;
        }
        memset(t + g->ublock_cap, 0, (cap - g->ublock_cap) * sizeof *t);
        g->ublock = t;
        g->ublock_cap = cap;
    }
    for (uint32_t b = first >> IR_USE_SHIFT; b < need; b++) {
        if (g->ublock[b])
            continue; /* the block holding earlier ids */
        g->ublock[b] = cfx_arena_alloc(&g->arena, sizeof(ir_use) << IR_USE_SHIFT);
        if (!g->ublock[b]) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return 0;
        }
    }
    g->n_uses = first + count;
    /* blocks are taken in id order, so every one below `need` exists */
    uint64_t limit = (uint64_t)need << IR_USE_SHIFT;
    g->use_limit = limit > UINT32_MAX ? UINT32_MAX : (uint32_t)limit;
    if (count)
        g->ucur = ir_use_at(g, first + count - 1) + 1; /* id n_uses's when it is in the block */
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
        cfx_node **t = cap < g->ext_cap || cap > IR_EXT ? NULL : realloc(g->ext, cap * sizeof *t);
        if (!t)
            return false;
        g->ext = t;
        g->ext_cap = cap;
    }
    g->ext[g->n_ext] = p;
    *ref = IR_EXT | g->n_ext++;
    return true;
}

/* Appends list record id (of g, producer local to g) to its producer's users. */
static inline void link_use(cfx_graph *g, uint32_t id)
{
    ir_use *u = ir_use_at(g, id);
    cfx_node *p = ir_node_at(g, u->producer);
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

/* Drops the use recorded in n's input record id. */
static inline void unlink_input(cfx_graph *g, uint32_t id)
{
    ir_use *u = ir_use_at(g, id);
    if (u->producer & IR_EXT)
        unlink_use(cfx_node_graph(g->ext[u->producer & ~IR_EXT]), u->next);
    else
        unlink_use(g, id);
}

/* Fills n's input record id with a use of p and links it. */
static int add_use(cfx_node *n, uint32_t id, cfx_node *p)
{
    cfx_graph *g = cfx_node_graph(n), *h = cfx_node_graph(p);
    ir_use *u = ir_use_at(g, id);
    u->user = n->seq;
    if (h == g) {
        u->producer = p->seq;
        link_use(g, id);
        return CFX_OK;
    }
    /* across graphs: a second record in the producer's graph carries the list links */
    uint32_t pref, uref;
    if (!node_ref(g, p, &pref) || !node_ref(h, n, &uref))
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    uint32_t other = ir_use_alloc(h, 1);
    if (!other)
        return CFX_ERR_NOMEM;
    ir_use *v = ir_use_at(h, other);
    v->producer = p->seq;
    v->user = uref;
    link_use(h, other);
    u = ir_use_at(g, id);
    u->producer = pref;
    u->prev = 0;
    u->next = other;
    g->has_foreign_uses = true;
    return CFX_OK;
}

void ir_flat_undo(cfx_graph *g, uint32_t first, uint32_t k, void *block, size_t size)
{
    for (uint32_t i = k; i-- > 0;)
        unlink_use(g, first + i);
    if (k)
        memset(ir_use_at(g, first), 0, k * sizeof(ir_use)); /* fresh again (arena.h) */
    cfx_arena_unalloc(&g->arena, block, size);
}

void ir_unlink_inputs(cfx_node *n)
{
    cfx_graph *g = cfx_node_graph(n);
    for (uint32_t i = 0; i < n->n_inputs; i++)
        unlink_input(g, n->inputs + i);
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

/* Collecting distinct producers in first-seen order. */
typedef struct collector {
    cfx_graph *g;
    uint32_t count;
    uint32_t hmask;   /* 0: linear mode */
    bool oom;
} collector;

enum { LINEAR_MAX = 16 };

static inline uint32_t ptr_hash(const void *p)
{
    return (uint32_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >> 32);
}

static bool hset_insert(cfx_graph *g, uint32_t mask, cfx_node *p)
{
    uint32_t j = ptr_hash(p) & mask;
    while (g->hset[j]) {
        if (g->hset[j] == p)
            return false;
        j = (j + 1) & mask;
    }
    g->hset[j] = p;
    return true;
}

/* Removes items[0..n), which were inserted in that order. Deleting in reverse insertion order
 * keeps linear probing sound without tombstones: every item still present was inserted
 * before the one being looked up, so its probe path is intact. */
static void hset_clear(cfx_graph *g, uint32_t mask, cfx_node **items, uint32_t n)
{
    for (uint32_t i = n; i-- > 0;) {
        uint32_t j = ptr_hash(items[i]) & mask;
        while (g->hset[j] != items[i])
            j = (j + 1) & mask;
        g->hset[j] = NULL;
    }
}

/* Sizes the hash set to 4x the collected count, rehashing what is collected. */
static bool hset_resize(collector *c, uint32_t want)
{
    cfx_graph *g = c->g;
    uint32_t cap = 64;
    while (cap < want * 4)
        cap *= 2;
    if (c->hmask)
        hset_clear(g, c->hmask, g->scratch, c->count);
    if (cap > g->hset_cap) {
        cfx_node **t = calloc(cap, sizeof *t);
        if (!t) {
            c->hmask = 0; /* the set is empty now: nothing for the caller to clear */
            return false;
        }
        free(g->hset);
        g->hset = t;
        g->hset_cap = cap;
    }
    c->hmask = cap - 1;
    for (uint32_t i = 0; i < c->count; i++)
        hset_insert(g, c->hmask, g->scratch[i]);
    return true;
}

static bool hset_contains(const cfx_graph *g, uint32_t mask, const cfx_node *p)
{
    for (uint32_t j = ptr_hash(p) & mask; g->hset[j]; j = (j + 1) & mask)
        if (g->hset[j] == p)
            return true;
    return false;
}

static void collect(cfx_value *slot, void *ctx)
{
    collector *c = ctx;
    cfx_graph *g = c->g;
    cfx_node *p = slot->u.node;
    if (c->oom || !p)
        return;
    if (!c->hmask) {
        for (uint32_t i = 0; i < c->count; i++)
            if (g->scratch[i] == p)
                return;
    } else if (hset_contains(g, c->hmask, p)) {
        return;
    }
    if (c->count == g->scratch_cap) { /* grown before hashing so scratch[] stays in sync */
        uint32_t cap = g->scratch_cap ? g->scratch_cap * 2 : 64;
        cfx_node **s = realloc(g->scratch, cap * sizeof *s);
        if (!s) {
            c->oom = true;
            return;
        }
        g->scratch = s;
        g->scratch_cap = cap;
    }
    if (c->hmask) {
        if ((c->count + 1) * 2 > c->hmask + 1 && !hset_resize(c, c->count + 1)) {
            c->oom = true;
            return;
        }
        hset_insert(g, c->hmask, p);
    }
    g->scratch[c->count++] = p;
    if (!c->hmask && c->count == LINEAR_MAX && !hset_resize(c, c->count))
        c->oom = true;
}

static int collect_inputs(cfx_node *n, collector *c)
{
    c->g = cfx_node_graph(n);
    c->count = 0;
    c->hmask = 0;
    c->oom = false;
    bool ok = ir_walk_node_refs(n->args, n->n_args, collect, c);
    for (uint32_t i = 0, k = cfx_node_num_kwargs(n); ok && i < k; i++)
        ok = ir_walk_node_refs(&ir_kwargs(n)[i].value, 1, collect, c);
    if (c->hmask)
        hset_clear(c->g, c->hmask, c->g->scratch, c->count);
    if (!ok || c->oom)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return CFX_OK;
}

int ir_rebuild_inputs(cfx_node *n)
{
    cfx_graph *g = cfx_node_graph(n);
    uint32_t cap = n->n_inputs; /* the run is reused when the new inputs fit */
    ir_unlink_inputs(n);
    collector c;
    int rc = collect_inputs(n, &c);
    if (rc != CFX_OK)
        return rc;
    if (c.count > cap) {
        uint32_t first = ir_use_reserve(g, c.count);
        if (!first)
            return CFX_ERR_NOMEM;
        n->inputs = first;
    }
    for (uint32_t i = 0; i < c.count; i++) {
        rc = add_use(n, n->inputs + i, g->scratch[i]);
        if (rc != CFX_OK)
            return rc;
        n->n_inputs = i + 1;
    }
    return CFX_OK;
}

/* insert_arg's input update: producers of the new value not yet among the inputs are
 * appended (2.x: `if new_use not in self._input_nodes`), existing uses stay where they are. */
int ir_add_inputs_from(cfx_node *n, cfx_value *v)
{
    cfx_graph *g = cfx_node_graph(n);
    /* collect the value's producers into scratch[], then filter out existing inputs */
    collector c = {g, 0, 0, false};
    if (!ir_walk_node_refs(v, 1, collect, &c) || c.oom) {
        if (c.hmask)
            hset_clear(g, c.hmask, g->scratch, c.count);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    if (c.hmask)
        hset_clear(g, c.hmask, g->scratch, c.count);
    uint32_t add = 0;
    for (uint32_t i = 0; i < c.count; i++) {
        bool have = false;
        for (uint32_t j = 0; j < n->n_inputs && !have; j++)
            have = ir_input(n, j) == g->scratch[i];
        if (!have)
            g->scratch[add++] = g->scratch[i];
    }
    if (!add)
        return CFX_OK;
    uint32_t total = n->n_inputs + add;
    uint32_t first = ir_use_alloc(g, total);
    if (!first)
        return CFX_ERR_NOMEM;
    /* move the records and repoint their neighbours (each producer's list holds one of them);
     * a cross-graph record only points at its partner, which stays put */
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        uint32_t from = n->inputs + i, to = first + i;
        ir_use *old = ir_use_at(g, from), *nu = ir_use_at(g, to);
        *nu = *old;
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
    for (uint32_t i = 0; i < add; i++) {
        int rc = add_use(n, first + n->n_inputs, g->scratch[i]);
        if (rc != CFX_OK)
            return rc;
        n->n_inputs++;
    }
    return CFX_OK;
}
