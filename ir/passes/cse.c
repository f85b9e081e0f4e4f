/* cse.c - common subexpression elimination (see cse.h).
 *
 * CSEPass builds a new graph, copying each node unless an equal one was copied before. cfx
 * rewrites in place, in three linear steps, so that no step's cost depends on how many nodes
 * were merged into one user:
 *   1. walk the graph in order and give each mergeable node a representative: the first node
 *      with the same key (opcode, target record, generation, args and kwargs with every node
 *      argument replaced by its representative), found in one open-addressed hash table;
 *   2. rewrite, once, every surviving node that has an input with another representative
 *      (its args and kwargs copied with references mapped, then set in one call). Merging a
 *      node into another by replace_all_uses_with would instead rewrite a user once per
 *      merged input: a million duplicates feeding one `cat` would cost a million rewrites of
 *      a million-element list;
 *   3. erase the merged nodes, last first (a merged node's only users by then are merged nodes
 *      after it).
 * Values are hashed and compared with explicit stacks, never by recursion, so arguments nested
 * arbitrarily deep cost memory, not C stack. Equality is cfx_value_equal's (an int never equals
 * a float, a list never equals a tuple, -0.0 is not 0.0, NaN is NaN), with nodes compared by
 * representative.
 *
 * The table is the one random access per node; the walk hashes each node LOOKAHEAD nodes before
 * probing for it and prefetches its slot meanwhile (a 1M-node chain: ~450 -> ~140-230 ns/node on
 * the shared VM). A hash goes stale only if an input of the node merged in between, which is
 * checked, and then recomputed.
 *
 * The generation is what makes merging safe in a graph that mutates: a node that mutates an
 * argument, or any other side-effectful call that is not an assertion, bumps it, so a pure node
 * after it never merges with one before it (relu(x); x.add_(1); relu(x) are two values). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema.h"
#include "ir/passes/cse.h"
#include "ir/passes/strip_asserts.h"

/* ---- walking values without recursion ------------------------------------------------------ */

typedef struct frame {
    const cfx_value *a, *b; /* b: the second operand of an equality walk */
    uint32_t n, i;
} frame;

typedef struct stack {
    frame *f;
    uint32_t depth, cap;
    bool oom;
    frame local[32];
} stack;

static void stack_init(stack *s)
{
    s->f = s->local;
    s->depth = 0;
    s->cap = sizeof s->local / sizeof s->local[0];
    s->oom = false;
}

static void stack_free(stack *s)
{
    if (s->f != s->local)
        cfx_free(s->f);
}

static bool push(stack *s, const cfx_value *a, const cfx_value *b, uint32_t n)
{
    if (s->depth == s->cap) {
        uint32_t cap = s->cap * 2;
        frame *f = s->f == s->local ? cfx_malloc(cap * sizeof *f) : cfx_realloc(s->f, cap * sizeof *f);
        if (!f) {
            s->oom = true;
            return false;
        }
        if (s->f == s->local)
            memcpy(f, s->local, sizeof s->local);
        s->f = f;
        s->cap = cap;
    }
    s->f[s->depth++] = (frame){a, b, n, 0};
    return true;
}

/* ---- keys ----------------------------------------------------------------------------------- */

typedef struct cse {
    cfx_node **rep;     /* by seq: the representative of a merged node, NULL otherwise */
    uint32_t *merge_no; /* by seq: for a merged node, how many merges came before it */
    uint8_t *class_of;  /* by target record id: 1 + classify() of its call_function nodes, 0 = not yet */
    uint32_t n_class;
    stack st;
} cse;

static inline cfx_node *mapped(const cse *c, cfx_node *n)
{
    cfx_node *r = c->rep[n->seq];
    return r ? r : n;
}

static inline uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t scalar_hash(const cse *c, const cfx_value *v)
{
    switch (v->kind) {
    case CFX_V_BOOL: return v->u.b;
    case CFX_V_INT: return (uint64_t)v->u.i;
    case CFX_V_DOUBLE: {
        if (isnan(v->u.d))
            return 0x7ff8000000000000ull; /* every NaN equals every other */
        uint64_t bits;
        memcpy(&bits, &v->u.d, sizeof bits);
        return bits;
    }
    case CFX_V_STRING:
    case CFX_V_HOP: {
        uint64_t h = 0xcbf29ce484222325ull;
        for (uint32_t i = 0; i < v->len; i++)
            h = (h ^ (unsigned char)v->u.s[i]) * 0x100000001b3ull;
        return h;
    }
    case CFX_V_TENSOR:
    case CFX_V_TOKEN: return (uint64_t)(uintptr_t)v->u.t;
    case CFX_V_OP: return (uint64_t)(uintptr_t)v->u.op; /* identity, as equality compares it */
    case CFX_V_DTYPE: return (uint64_t)v->u.dtype;
    case CFX_V_DEVICE: return (uint64_t)(uint8_t)v->u.device.type << 8 | (uint8_t)v->u.device.index;
    case CFX_V_MEMORY_FORMAT: return (uint64_t)v->u.memory_format;
    case CFX_V_LAYOUT: return (uint64_t)v->u.layout;
    case CFX_V_OBJECT: return (uint64_t)(uintptr_t)v->u.obj;
    case CFX_V_GENERATOR: return (uint64_t)(uintptr_t)v->u.gen;
    case CFX_V_NODE: return (uint64_t)(uintptr_t)mapped(c, v->u.node);
    default: return 0;
    }
}

/* The items of a container, nested ones included, in preorder (the explicit stack). */
static uint64_t hash_nested(cse *c, const cfx_value *v, uint32_t n, uint64_t h)
{
    stack *s = &c->st;
    uint32_t base = s->depth;
    if (!push(s, v, NULL, n))
        return 0;
    while (s->depth > base) {
        frame *f = &s->f[s->depth - 1];
        if (f->i == f->n) {
            s->depth--;
            continue;
        }
        const cfx_value *x = &f->a[f->i++];
        h = mix(h, x->kind);
        if (cfx_value_is_container(*x)) {
            h = mix(h, x->len);
            if (x->len && !push(s, x->u.items, NULL, x->len))
                return 0;
        } else {
            h = mix(h, scalar_hash(c, x));
        }
    }
    return h;
}

/* v[0..n), with the common arguments taken here: only a container needs the stack. A node,
 * the most common, is one step (its representative's address); were that address equal to an
 * integer argument's value, the hashes would only collide, and the comparison settles it. */
static uint64_t hash_values(cse *c, const cfx_value *v, uint32_t n, uint64_t h)
{
    for (uint32_t i = 0; i < n; i++) {
        const cfx_value *x = &v[i];
        if (x->kind == CFX_V_NODE) {
            h = mix(h, (uint64_t)(uintptr_t)mapped(c, x->u.node));
        } else if (!cfx_value_is_container(*x)) {
            h = mix(mix(h, x->kind), scalar_hash(c, x));
        } else {
            h = mix(mix(h, x->kind), x->len);
            if (x->len)
                h = hash_nested(c, x->u.items, x->len, h);
        }
    }
    return h;
}

static bool scalar_eq(const cse *c, const cfx_value *a, const cfx_value *b)
{
    switch (a->kind) {
    case CFX_V_NONE: return true;
    case CFX_V_BOOL: return a->u.b == b->u.b;
    case CFX_V_DOUBLE:
        if (isnan(a->u.d) || isnan(b->u.d))
            return isnan(a->u.d) && isnan(b->u.d);
        return memcmp(&a->u.d, &b->u.d, sizeof(double)) == 0;
    case CFX_V_STRING:
    case CFX_V_HOP: return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
    case CFX_V_DEVICE: return cfx_device_eq(a->u.device, b->u.device);
    case CFX_V_NODE: return mapped(c, a->u.node) == mapped(c, b->u.node);
    default: return scalar_hash(c, a) == scalar_hash(c, b); /* the hash is the value itself */
    }
}

static bool values_eq(cse *c, const cfx_value *a, const cfx_value *b, uint32_t n)
{
    stack *s = &c->st;
    uint32_t base = s->depth;
    bool eq = push(s, a, b, n);
    while (eq && s->depth > base) {
        frame *f = &s->f[s->depth - 1];
        if (f->i == f->n) {
            s->depth--;
            continue;
        }
        const cfx_value *x = &f->a[f->i], *y = &f->b[f->i];
        f->i++;
        if (x->kind != y->kind)
            eq = false;
        else if (cfx_value_is_container(*x))
            eq = x->len == y->len && (x->len == 0 || push(s, x->u.items, y->u.items, x->len));
        else
            eq = scalar_eq(c, x, y);
    }
    s->depth = base;
    return eq;
}

static uint64_t node_hash(cse *c, const cfx_node *n, uint32_t gen)
{
    uint64_t h = mix(mix(cfx_node_opcode(n), n->target_id), gen); /* the id names the target in its graph */
    h = hash_values(c, cfx_node_args(n), cfx_node_num_args(n), h);
    uint32_t nk = cfx_node_num_kwargs(n);
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t k = 0; k < nk; k++) {
        h = mix(h, (uint64_t)(uintptr_t)kw[k].name); /* interned in the graph */
        h = hash_values(c, &kw[k].value, 1, h);
    }
    return h ^ h >> 32; /* the table index is the low bits: give them the high bits' mixing too */
}

static bool node_eq(cse *c, const cfx_node *a, const cfx_node *b)
{
    if (cfx_node_opcode(a) != cfx_node_opcode(b) || cfx_node_target_info(a) != cfx_node_target_info(b) ||
        cfx_node_num_args(a) != cfx_node_num_args(b) || cfx_node_num_kwargs(a) != cfx_node_num_kwargs(b))
        return false;
    if (!values_eq(c, cfx_node_args(a), cfx_node_args(b), cfx_node_num_args(a)))
        return false;
    uint32_t nk = cfx_node_num_kwargs(a);
    const cfx_kwarg *ka = cfx_node_kwargs(a), *kb = cfx_node_kwargs(b);
    for (uint32_t k = 0; k < nk; k++)
        if (strcmp(ka[k].name, kb[k].name) != 0 || !values_eq(c, &ka[k].value, &kb[k].value, 1))
            return false;
    return true;
}

/* ---- which nodes ---------------------------------------------------------------------------- */

enum { KEEP, BARRIER, CANDIDATE };

static int classify(const cfx_node *n)
{
    switch (cfx_node_opcode(n)) {
    case CFX_NODE_CALL_FUNCTION:
    case CFX_NODE_CALL_METHOD:
    case CFX_NODE_CALL_MODULE: break;
    default: return KEEP; /* placeholder, get_attr, output */
    }
    if (cfx_node_is_impure_ex(n, false))
        return cfx_node_is_assert(n) ? KEEP : BARRIER;
    if (cfx_node_is_impure(n))
        return KEEP; /* registered nondeterministic_seeded */
    const cfx_op *op = cfx_node_operator(n);
    if (op && cfx_op_has_tag(op, CFX_TAG_nondeterministic_seeded))
        return KEEP;
    return CANDIDATE;
}

/* classify(n), worked out once per target for call_function nodes: their answer depends on the
 * target alone (its schema, tags and side-effect registrations, which a pass does not change),
 * and asking the registries costs more than the rest of a node's work. */
static int classify_cached(cse *c, const cfx_node *n)
{
    if (cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
        return classify(n);
    uint32_t id = n->target_id;
    if (id >= c->n_class) {
        uint32_t cap = c->n_class ? c->n_class : 16;
        while (cap <= id)
            cap *= 2;
        uint8_t *p = cfx_realloc(c->class_of, cap);
        if (!p)
            return classify(n); /* uncached, and still right */
        memset(p + c->n_class, 0, cap - c->n_class);
        c->class_of = p;
        c->n_class = cap;
    }
    if (!c->class_of[id])
        c->class_of[id] = (uint8_t)(1 + classify(n));
    return c->class_of[id] - 1;
}

/* ---- rewriting users ------------------------------------------------------------------------ */

typedef struct vbuf {
    cfx_value *v;
    size_t len, cap;
} vbuf;

static bool vbuf_push(vbuf *b, cfx_value v)
{
    if (b->len == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        cfx_value *p = cfx_realloc(b->v, cap * sizeof *p);
        if (!p)
            return false;
        b->v = p;
        b->cap = cap;
    }
    b->v[b->len++] = v;
    return true;
}

static inline cfx_value map_value(const cse *c, cfx_value v)
{
    if (v.kind == CFX_V_NODE)
        v.u.node = mapped(c, v.u.node);
    return v;
}

/* n's args then kwarg values copied into b with references mapped. Nested containers are laid
 * out breadth first after the top-level values (a scan over b appends each container's items
 * in turn, so no stack is needed), then pointed at their items in a second scan that meets the
 * containers in the same order. */
static bool copy_mapped(const cse *c, const cfx_node *n, vbuf *b)
{
    b->len = 0;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t i = 0; i < na; i++)
        if (!vbuf_push(b, map_value(c, cfx_node_arg(n, i))))
            return false;
    for (uint32_t k = 0; k < nk; k++)
        if (!vbuf_push(b, map_value(c, kw[k].value)))
            return false;
    for (size_t i = 0; i < b->len; i++) {
        cfx_value v = b->v[i]; /* items still point into the graph */
        if (cfx_value_is_container(v))
            for (uint32_t j = 0; j < v.len; j++)
                if (!vbuf_push(b, map_value(c, v.u.items[j])))
                    return false;
    }
    size_t next = (size_t)na + nk;
    for (size_t i = 0; i < b->len; i++)
        if ((cfx_value_is_container(b->v[i])) && b->v[i].len) {
            b->v[i].u.items = &b->v[next];
            next += b->v[i].len;
        }
    return true;
}

static int rewrite(const cse *c, cfx_node *n, vbuf *b, cfx_kwarg **kwbuf, uint32_t *kwcap)
{
    if (!copy_mapped(c, n, b))
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "cse: out of memory");
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    if (nk > *kwcap) {
        cfx_kwarg *p = cfx_realloc(*kwbuf, nk * sizeof *p);
        if (!p)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "cse: out of memory");
        *kwbuf = p;
        *kwcap = nk;
    }
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    for (uint32_t k = 0; k < nk; k++)
        (*kwbuf)[k] = (cfx_kwarg){kw[k].name, b->v[na + k]};
    return cfx_node_set_args_kwargs(n, b->v, na, nk ? *kwbuf : NULL, nk);
}

/* ---- the pass ------------------------------------------------------------------------------- */

/* The table is the pass's one random access per node, so its slots are 8 bytes (a 1M-node
 * graph's table, 2M slots, stays within a large last-level cache): the hash's high half as a
 * tag, and an index into the dense array of inserted nodes, which holds each one's generation. */
typedef struct slot {
    uint32_t tag;
    uint32_t entry; /* index + 1 into the entries; 0: empty */
} slot;

typedef struct entry {
    cfx_node *node;
    uint32_t gen;
} entry;

/* A node between the two stages of the walk (below). */
enum { LOOKAHEAD = 16 };
typedef struct pending {
    cfx_node *node;
    uint64_t hash;
    uint32_t gen, stamp; /* stamp: merges so far when hashed */
    int kind;
} pending;

/* Whether a pending node's hash may be out of date: one of its inputs was merged after it was
 * hashed (hashing maps inputs through the representatives known then). */
static bool stale(const cse *c, const pending *p, uint32_t n_merged)
{
    if (p->stamp == n_merged)
        return false;
    uint32_t ni = cfx_node_num_inputs(p->node);
    for (uint32_t k = 0; k < ni; k++) {
        const cfx_node *in = cfx_node_input(p->node, k);
        if (c->rep[in->seq] && c->merge_no[in->seq] >= p->stamp)
            return true;
    }
    return false;
}

int cfx_pass_cse(cfx_graph *g, bool *changed)
{
    if (changed)
        *changed = false;
    if (!g)
        return CFX_ERR;
    int rc = cfx_graph_lint(g);
    if (rc != CFX_OK)
        return rc;
    uint32_t count = cfx_graph_num_nodes(g);
    size_t cap = 16;
    while (cap < (size_t)count + count / 2)
        cap *= 2;
    cse c = {0};
    stack_init(&c.st);
    c.rep = cfx_calloc(cfx_graph_num_created(g) ? cfx_graph_num_created(g) : 1, sizeof *c.rep);
    c.merge_no = cfx_malloc((cfx_graph_num_created(g) ? cfx_graph_num_created(g) : 1) * sizeof *c.merge_no);
    slot *table = cfx_calloc(cap, sizeof *table);
    entry *entries = cfx_malloc((count ? count : 1) * sizeof *entries);
    cfx_node **merged = cfx_malloc((count ? count : 1) * sizeof *merged);
    vbuf b = {0};
    cfx_kwarg *kwbuf = NULL;
    uint32_t kwcap = 0, n_merged = 0, n_entries = 0;
    if (!c.rep || !c.merge_no || !table || !entries || !merged) {
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "cse: out of memory");
        goto done;
    }
    /* Two stages LOOKAHEAD nodes apart: the first classifies a node, hashes it with the
     * representatives known so far and prefetches its slot; the second probes the slot, by
     * then (usually) in cache, re-hashing first if a merge since could have changed the key. */
    pending ring[LOOKAHEAD];
    uint32_t head = 0, filled = 0, gen_ahead = 0;
    cfx_node *ahead = cfx_graph_first(g);
    for (;;) {
        if (ahead && filled < LOOKAHEAD) {
            pending *p = &ring[(head + filled++) % LOOKAHEAD];
            p->node = ahead;
            p->kind = classify_cached(&c, ahead);
            if (p->kind == BARRIER)
                gen_ahead++;
            p->gen = gen_ahead;
            if (p->kind == CANDIDATE) {
                p->hash = node_hash(&c, ahead, gen_ahead);
                p->stamp = n_merged;
                __builtin_prefetch(&table[(size_t)p->hash & (cap - 1)]);
            }
            ahead = cfx_node_next(ahead);
            continue;
        }
        if (!filled)
            break;
        pending *p = &ring[head];
        head = (head + 1) % LOOKAHEAD;
        filled--;
        if (p->kind != CANDIDATE)
            continue;
        cfx_node *n = p->node;
        uint32_t gen = p->gen;
        uint64_t h = stale(&c, p, n_merged) ? node_hash(&c, n, gen) : p->hash;
        uint32_t tag = (uint32_t)(h >> 32);
        for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
            slot *s = &table[i];
            if (!s->entry) {
                entries[n_entries] = (entry){n, gen};
                *s = (slot){tag, ++n_entries};
                break;
            }
            const entry *e = &entries[s->entry - 1];
            if (s->tag == tag && e->gen == gen && node_eq(&c, n, e->node)) {
                c.rep[n->seq] = e->node;
                c.merge_no[n->seq] = n_merged;
                merged[n_merged++] = n;
                break;
            }
        }
        if (c.st.oom) {
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "cse: out of memory");
            goto done;
        }
    }
    if (n_merged == 0)
        goto done;
    for (cfx_node *n = cfx_graph_first(g); n && rc == CFX_OK; n = cfx_node_next(n)) {
        if (c.rep[n->seq])
            continue;
        uint32_t ni = cfx_node_num_inputs(n);
        for (uint32_t k = 0; k < ni; k++)
            if (c.rep[cfx_node_input(n, k)->seq]) {
                rc = rewrite(&c, n, &b, &kwbuf, &kwcap);
                break;
            }
    }
    for (uint32_t i = n_merged; i-- > 0 && rc == CFX_OK;)
        rc = cfx_graph_erase_node(g, merged[i]);
    if (rc == CFX_OK && changed)
        *changed = true;
done:
    stack_free(&c.st);
    cfx_free(c.class_of);
    cfx_free(c.rep);
    cfx_free(c.merge_no);
    cfx_free(table);
    cfx_free(entries);
    cfx_free(merged);
    cfx_free(b.v);
    cfx_free(kwbuf);
    return rc;
}
