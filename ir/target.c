/* target.c - node targets: builtin descriptors, operator spellings, the per-graph table.
 *
 * Each distinct target a graph uses gets one cfx_target_info in the graph's arena, found in an
 * open-addressing table by (kind, pointer); a string target is interned first, so its pointer
 * names its contents. The record holds what would otherwise be recomputed per node: the
 * printed target (`torch.ops.aten.add.Tensor`), the registry key, and the prepared naming
 * candidate. The
 * candidate follows FX: for an operator, make_fx's `_target_to_str(overloadpacket.__name__)`
 * (strip a magic `__x__`, snake_case); for a builtin function its `__name__`, snake_cased; for a
 * string, _target_to_str of the string. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/fork_internal.h"
#include "ir/internal.h"

/* ---- builtin functions ------------------------------------------------------------------ */

const cfx_builtin_fn cfx_fn_getitem = {"operator.getitem", "getitem", false};
const cfx_builtin_fn cfx_fn_setitem = {"operator.setitem", "setitem", true};
const cfx_builtin_fn cfx_fn_add = {"operator.add", "add", false};
const cfx_builtin_fn cfx_fn_sub = {"operator.sub", "sub", false};
const cfx_builtin_fn cfx_fn_mul = {"operator.mul", "mul", false};
const cfx_builtin_fn cfx_fn_floordiv = {"operator.floordiv", "floordiv", false};
const cfx_builtin_fn cfx_fn_truediv = {"operator.truediv", "truediv", false};
const cfx_builtin_fn cfx_fn_mod = {"operator.mod", "mod", false};
const cfx_builtin_fn cfx_fn_pow = {"operator.pow", "pow", false};
const cfx_builtin_fn cfx_fn_neg = {"operator.neg", "neg", false};
const cfx_builtin_fn cfx_fn_eq = {"operator.eq", "eq", false};
const cfx_builtin_fn cfx_fn_ne = {"operator.ne", "ne", false};
const cfx_builtin_fn cfx_fn_lt = {"operator.lt", "lt", false};
const cfx_builtin_fn cfx_fn_le = {"operator.le", "le", false};
const cfx_builtin_fn cfx_fn_gt = {"operator.gt", "gt", false};
const cfx_builtin_fn cfx_fn_ge = {"operator.ge", "ge", false};
const cfx_builtin_fn cfx_fn_getattr = {"builtins.getattr", "getattr", false};
const cfx_builtin_fn cfx_fn_torch_assert = {"torch._assert", "_assert", true};
const cfx_builtin_fn cfx_fn_torch_assert_async = {"torch._assert_async", "_assert_async", true};

static const cfx_builtin_fn *const known_fns[] = {
    &cfx_fn_getitem, &cfx_fn_setitem, &cfx_fn_add, &cfx_fn_sub, &cfx_fn_mul, &cfx_fn_floordiv,
    &cfx_fn_truediv, &cfx_fn_mod, &cfx_fn_pow, &cfx_fn_neg, &cfx_fn_eq, &cfx_fn_ne, &cfx_fn_lt,
    &cfx_fn_le, &cfx_fn_gt, &cfx_fn_ge, &cfx_fn_getattr, &cfx_fn_torch_assert, &cfx_fn_torch_assert_async,
};

static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;
static const cfx_builtin_fn **extra_fns;
static size_t n_extra_fns, cap_extra_fns;
__attribute__((constructor)) static void fn_lock_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &fn_lock); }

__attribute__((destructor)) static void extra_fns_free(void)
{
    cfx_free(extra_fns);
    extra_fns = NULL;
    n_extra_fns = cap_extra_fns = 0;
}

/* Called with fn_lock held. */
static const cfx_builtin_fn *find_fn(const char *qn)
{
    for (size_t i = 0; i < sizeof known_fns / sizeof *known_fns; i++)
        if (strcmp(known_fns[i]->qualified_name, qn) == 0)
            return known_fns[i];
    for (size_t i = 0; i < n_extra_fns; i++)
        if (strcmp(extra_fns[i]->qualified_name, qn) == 0)
            return extra_fns[i];
    return NULL;
}

const cfx_builtin_fn *cfx_builtin_fn_find(const char *qualified_name)
{
    if (!qualified_name)
        return NULL;
    pthread_mutex_lock(&fn_lock);
    const cfx_builtin_fn *fn = find_fn(qualified_name);
    pthread_mutex_unlock(&fn_lock);
    return fn;
}

int cfx_builtin_fn_register(const cfx_builtin_fn *fn)
{
    if (!fn || !fn->qualified_name || !fn->name)
        return cfx_error_set(CFX_ERR, NULL, "builtin function descriptor without a name");
    int rc = CFX_OK;
    pthread_mutex_lock(&fn_lock);
    if (!find_fn(fn->qualified_name)) {
        if (n_extra_fns == cap_extra_fns) {
            size_t cap = cap_extra_fns ? cap_extra_fns * 2 : 16;
            const cfx_builtin_fn **e = cfx_realloc(extra_fns, cap * sizeof *e);
            if (!e)
                rc = CFX_ERR_NOMEM;
            else {
                extra_fns = e;
                cap_extra_fns = cap;
            }
        }
        if (rc == CFX_OK)
            extra_fns[n_extra_fns++] = fn;
    }
    pthread_mutex_unlock(&fn_lock);
    if (rc == CFX_ERR_NOMEM)
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return rc;
}

/* ---- operator spellings ----------------------------------------------------------------- */

size_t cfx_op_packet_name(const char *qn, const char **start)
{
    const char *colons = strstr(qn, "::");
    const char *name = colons ? colons + 2 : qn;
    const char *dot = strchr(name, '.');
    *start = name;
    return dot ? (size_t)(dot - name) : strlen(name);
}

void cfx_op_print_target(const char *qn, cfx_buf *b)
{
    const char *colons = strstr(qn, "::");
    const char *name = colons ? colons + 2 : qn;
    cfx_buf_puts(b, "torch.ops.");
    if (colons) {
        cfx_buf_putn(b, qn, (size_t)(colons - qn));
        cfx_buf_putc(b, '.');
    }
    const char *dot = strchr(name, '.');
    if (dot && dot[1]) {
        cfx_buf_puts(b, name);
    } else {
        cfx_buf_putn(b, name, dot ? (size_t)(dot - name) : strlen(name));
        cfx_buf_puts(b, ".default");
    }
}

/* ---- the table -------------------------------------------------------------------------- */

static bool tinfo_grow(cfx_graph *g)
{
    uint32_t cap = g->tinfo_cap ? g->tinfo_cap * 2 : 64;
    cfx_target_info **t = cfx_calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t i = 0; i < g->tinfo_cap; i++) {
        cfx_target_info *r = g->tinfo[i];
        if (!r)
            continue;
        uint32_t j = ir_target_hash(r->kind, r->ptr) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = r;
    }
    cfx_free(g->tinfo);
    g->tinfo = t;
    g->tinfo_cap = cap;
    return true;
}

void ir_target_table_free(cfx_graph *g)
{
    cfx_free(g->tinfo);
    cfx_free(g->targets);
    g->tinfo = NULL;
    g->targets = NULL;
    g->tinfo_cap = g->tinfo_count = g->targets_cap = 0;
}

static int fill_info(cfx_graph *g, cfx_target_info *r, cfx_target t)
{
    cfx_buf b;
    cfx_buf_init(&b);
    const char *cand = NULL;
    switch (t.kind) {
    case CFX_TARGET_STRING:
        r->printed = (const char *)r->ptr;
        cfx_names_target_to_str(t.u.str, &b);
        break;
    case CFX_TARGET_OP: {
        const char *qn = cfx_op_name(t.u.op);
        cfx_op_print_target(qn, &b);
        if (!b.oom)
            r->printed = cfx_names_intern(g->names, b.data, b.len);
        r->effect_key = cfx_names_intern(g->names, qn, strlen(qn));
        b.len = 0;
        const char *p;
        size_t n = cfx_op_packet_name(qn, &p);
        char small[128];
        char *tmp = n < sizeof small ? small : cfx_malloc(n + 1);
        if (tmp) {
            memcpy(tmp, p, n);
            tmp[n] = '\0';
            cfx_names_target_to_str(tmp, &b);
            if (tmp != small)
                cfx_free(tmp);
        } else {
            b.oom = true;
        }
        break;
    }
    case CFX_TARGET_FN:
        r->printed = cfx_names_intern(g->names, t.u.fn->qualified_name, strlen(t.u.fn->qualified_name));
        r->effect_key = t.u.fn->qualified_name;
        r->magic = ir_pycode_form(t.u.fn);
        /* _target_to_str of a callable: __name__, snake_cased, magic names kept */
        for (const char *s = t.u.fn->name; *s; s++) {
            char c = *s;
            if (c >= 'A' && c <= 'Z') {
                if (s > t.u.fn->name && s[-1] >= 'a' && s[-1] <= 'z')
                    cfx_buf_putc(&b, '_');
                c = (char)(c - 'A' + 'a');
            }
            cfx_buf_putc(&b, c);
        }
        break;
    }
    if (!b.oom)
        cand = b.data ? b.data : "";
    int rc = CFX_ERR_NOMEM;
    if (cand && r->printed && (t.kind != CFX_TARGET_OP || r->effect_key))
        rc = cfx_names_prepare(g->names, cand, b.len, &r->cand);
    cfx_buf_free(&b);
    if (rc == CFX_ERR_NOMEM)
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    return rc;
}

/* The record of a target the table does not hold yet (ptr: its key), once the target is
 * checked. */
static cfx_target_info *add_target(cfx_graph *g, cfx_target t, const void *ptr)
{
    if (t.kind == CFX_TARGET_OP) {
        if (!t.u.op)
            return NULL; /* an earlier lookup failed */
        if (!cfx_op_name(t.u.op)) {
            cfx_error_set(CFX_ERR, NULL, "operator has no name");
            return NULL;
        }
    } else if (t.kind == CFX_TARGET_FN) {
        if (!t.u.fn)
            return NULL;
        if (!t.u.fn->qualified_name || !t.u.fn->name) {
            cfx_error_set(CFX_ERR, NULL, "builtin function descriptor without a name");
            return NULL;
        }
    } else if (t.kind != CFX_TARGET_STRING) {
        cfx_error_set(CFX_ERR, NULL, "node target has no kind");
        return NULL;
    }
    if ((g->tinfo_count + 1) * 2 > g->tinfo_cap && !tinfo_grow(g)) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (g->tinfo_count == g->targets_cap) {
        uint32_t cap = g->targets_cap ? g->targets_cap * 2 : 16;
        cfx_target_info **t = cfx_realloc(g->targets, cap * sizeof *t);
        if (!t) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
        g->targets = t;
        g->targets_cap = cap;
    }
    cfx_target_info *r = cfx_arena_alloc(&g->arena, sizeof *r);
    if (!r) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    r->kind = t.kind;
    r->ptr = ptr;
    r->op_mask = (uint8_t)(t.kind == CFX_TARGET_STRING ? ((1u << CFX_NODE_OP_COUNT) - 1) & ~(1u << CFX_NODE_CALL_FUNCTION)
                                                        : 1u << CFX_NODE_CALL_FUNCTION);
    if (fill_info(g, r, t) != CFX_OK)
        return NULL;
    r->id = g->tinfo_count;
    g->targets[r->id] = r;
    uint32_t mask = g->tinfo_cap - 1, j = ir_target_hash(t.kind, ptr) & mask;
    while (g->tinfo[j])
        j = (j + 1) & mask;
    g->tinfo[j] = r;
    g->tinfo_count++;
    return r;
}

cfx_target_info *ir_target_info_slow(cfx_graph *g, cfx_target t)
{
    const void *ptr = t.u.str;
    if (t.kind == CFX_TARGET_STRING) {
        if (!t.u.str) {
            cfx_error_set(CFX_ERR, NULL, "target string is NULL");
            return NULL;
        }
        ptr = cfx_names_intern(g->names, t.u.str, strlen(t.u.str));
        if (!ptr) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            return NULL;
        }
    }
    /* no record has a NULL pointer or a kind that is not one of the three */
    cfx_target_info *r = ir_target_find(g, t.kind, ptr);
    return r ? r : add_target(g, t, ptr);
}
