/* args.c - argument values: a node's own copies of its args and kwargs.
 *
 * A node's args and kwargs are copied into the graph's arena when set: nested lists and
 * tuples and strings get their own arena copies, so the node owns its values outright and
 * later rewrites (replace_all_uses_with, erase) can patch node references in place. Nesting
 * depth is user-sized, so the copy and the walk over nested node references keep an explicit
 * stack of frames instead of recursing. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"

/* ---- the frame stack ---------------------------------------------------------------------- */

/* A frame: an array of values and how far the walk is through it. */
typedef struct frame {
    cfx_value *items;
    uint32_t n, i;
} frame;

typedef struct vstack {
    frame *f;
    uint32_t len, cap;
    frame inline_frames[8];
} vstack;

static void vstack_init(vstack *s, cfx_value *first, uint32_t n)
{
    s->f = s->inline_frames;
    s->cap = sizeof s->inline_frames / sizeof *s->inline_frames;
    s->f[0] = (frame){first, n, 0};
    s->len = 1;
}

static void vstack_free(vstack *s)
{
    if (s->f != s->inline_frames)
        cfx_free(s->f);
}

/* Pushes n values from first on; false on OOM. */
static bool vstack_push(vstack *s, cfx_value *first, uint32_t n)
{
    if (s->len == s->cap) {
        uint32_t cap = s->cap * 2;
        frame *f = cfx_malloc(cap * sizeof *f);
        if (!f)
            return false;
        memcpy(f, s->f, s->len * sizeof *f);
        vstack_free(s);
        s->f = f;
        s->cap = cap;
    }
    s->f[s->len++] = (frame){first, n, 0};
    return true;
}

/* The next value of the top frame, popping finished frames; NULL when the stack is empty. */
static cfx_value *vstack_next(vstack *s)
{
    while (s->len) {
        frame *f = &s->f[s->len - 1];
        if (f->i < f->n)
            return &f->items[f->i++];
        s->len--;
    }
    return NULL;
}

/* ---- copying ------------------------------------------------------------------------------- */

/* Whether a copied value needs more than the copy: arena copies of its string or items, or its
 * node mapped (or found missing). */
static inline bool needs_fixup(const cfx_value *v, bool map)
{
    uint32_t k = v->kind;
    return k == CFX_V_STRING || k == CFX_V_HOP || k == CFX_V_LIST || k == CFX_V_TUPLE || k == CFX_V_DICT ||
           (k == CFX_V_NODE && (map || !v->u.node));
}

int ir_fixup_values(cfx_graph *g, cfx_value *vals, uint32_t n, cfx_node_map_fn map, void *ctx, uint32_t *refs)
{
    vstack st;
    vstack_init(&st, vals, n);
    int rc = CFX_OK;
    for (cfx_value *v; (v = vstack_next(&st));) {
        switch (v->kind) {
        case CFX_V_STRING:
        case CFX_V_HOP:
            if (v->u.s) {
                char *s = cfx_arena_strndup(&g->arena, v->u.s, v->len);
                if (!s)
                    goto oom;
                v->u.s = s;
            }
            break;
        case CFX_V_LIST:
        case CFX_V_TUPLE:
        case CFX_V_DICT:
            if (v->len) {
                cfx_value *copy = cfx_arena_alloc(&g->arena, (size_t)v->len * sizeof *copy);
                if (!copy)
                    goto oom;
                memcpy(copy, v->u.items, (size_t)v->len * sizeof *copy);
                v->u.items = copy;
                if (!vstack_push(&st, copy, v->len))
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
            if (refs)
                ++*refs;
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

/* ir_args_block, inline here: every node's args are set through it (ir_node_set_args). */
static inline cfx_value *args_block(cfx_graph *g, uint32_t n_args, uint32_t n_kwargs, int *rc)
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

/* One argument value into a node's block: the copy, and what more it needs (ir_fixup_values);
 * its node references are counted in *refs. A node reference, the commonest argument of a
 * traced node, is tested for first. */
static inline int copy_value(cfx_graph *g, cfx_value *dst, cfx_value v, const ir_arg_map *map, uint32_t *refs)
{
    *dst = v;
    if (v.kind == CFX_V_NODE && v.u.node && !map) {
        ++*refs;
        return CFX_OK;
    }
    if (!needs_fixup(dst, map))
        return CFX_OK;
    return ir_fixup_values(g, dst, 1, map ? map->fn : NULL, map ? map->ctx : NULL, refs);
}

cfx_value *ir_args_block(cfx_graph *g, uint32_t n_args, uint32_t n_kwargs, int *rc)
{
    return args_block(g, n_args, n_kwargs, rc);
}

int ir_node_set_args(cfx_graph *g, cfx_node *n, const cfx_value *args, uint32_t n_args,
                     const cfx_kwarg *kwargs, uint32_t n_kwargs, const ir_arg_map *map)
{
    if (n_args && !args)
        return cfx_error_set(CFX_ERR, NULL, "args is NULL but its count is %u", n_args);
    if (n_kwargs && !kwargs)
        return cfx_error_set(CFX_ERR, NULL, "kwargs is NULL but its count is %u", n_kwargs);
    int rc;
    cfx_value *dst = args_block(g, n_args, n_kwargs, &rc);
    if (rc != CFX_OK)
        return rc;
    /* the node references are counted as they are copied: they bound the inputs */
    uint32_t refs = 0;
    for (uint32_t i = 0; i < n_args; i++)
        if ((rc = copy_value(g, &dst[i], args[i], map, &refs)) != CFX_OK)
            return rc;
    cfx_kwarg *k = dst ? (cfx_kwarg *)(void *)(dst + n_args) : NULL; /* no block for no arguments */
    for (uint32_t i = 0; i < n_kwargs; i++) {
        if (!kwargs[i].name)
            return cfx_error_set(CFX_ERR, NULL, "kwarg %u has no name", i);
        k[i].name = cfx_names_intern(g->names, kwargs[i].name, strlen(kwargs[i].name));
        if (!k[i].name)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        if ((rc = copy_value(g, &k[i].value, kwargs[i].value, map, &refs)) != CFX_OK)
            return rc;
    }
    ir_set_args(n, dst, n_args, n_kwargs); /* counts checked by ir_args_block */
    return ir_link_inputs(g, n, refs);
}


/* ---- walking nested values ------------------------------------------------------------------ */

bool ir_walk_nested(cfx_value *container, ir_ref_fn fn, void *ctx)
{
    vstack st;
    vstack_init(&st, (cfx_value *)container->u.items, container->len);
    bool ok = true;
    for (cfx_value *v; ok && (v = vstack_next(&st));) {
        if (v->kind == CFX_V_NODE)
            ok = fn(v, ctx);
        else if (cfx_value_is_container(*v) && v->len && !vstack_push(&st, (cfx_value *)v->u.items, v->len))
            ok = !cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    vstack_free(&st);
    return ok;
}
