/* triton_kernel_wrap.c - the kernel side table and the two triton_kernel_wrapper HOPs
 * (triton_kernel_wrap.h; PyTorch 2.13's torch/_higher_order_ops/triton_kernel_wrap.py).
 *
 * The side table is process-wide, as kernel_side_table is: a graph names a kernel by its
 * index, so the index must mean the same kernel in every thread that runs the graph. It only
 * grows (a graph may outlive the code that traced it); a mutex guards it.
 *
 * Every rule receives the HOP's keywords as one dict (args[0]) and reads them by name, so a
 * graph loaded from JSON with its kwargs in another order still runs. The dense rule walks the
 * grid in row-major program order (z, y, x), the order Triton's interpreter uses, and bumps
 * each tensor's version (they are written). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/functional_internal.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "hop/hop_internal.h"
#include "hop/torchbind.h"
#include "hop/triton_kernel_wrap.h"
#include "ir/graph.h"
#include "tracer/proxy.h"

enum { MAX_KERNELS = 4096, MAX_CONSTANT_ARGS = 1 << 20, MAX_KERNEL_ARGS = 64 };

/* ---- the side table ------------------------------------------------------------------------ */

typedef struct side_kernel {
    cfx_user_kernel_fn fn;
    char *name;
    char **arg_names;
    int n_arg_names;
} side_kernel;

typedef struct side_constants {
    char **names;
    int64_t *values;
    int n;
} side_constants;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static side_kernel *kernels;
static int n_kernels, cap_kernels;
static side_constants *constants;
static int n_constants, cap_constants;

static bool grow(void **p, int *cap, int n, size_t size)
{
    if (n < *cap)
        return true;
    int c = *cap ? 2 * *cap : 16;
    void *q = cfx_realloc(*p, (size_t)c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static void free_names(char **names, int n)
{
    for (int i = 0; names && i < n; i++)
        cfx_free(names[i]);
    cfx_free(names);
}

/* A malloc'd copy of names[0..n) (n may be 0: an empty array), NULL on failure. */
static char **copy_names(const char *const *names, int n)
{
    char **c = cfx_calloc((size_t)(n > 0 ? n : 1), sizeof *c);
    for (int i = 0; c && i < n; i++)
        if (!names[i] || !(c[i] = cfx_strdup(names[i]))) {
            free_names(c, i + 1);
            return NULL;
        }
    return c;
}

int cfx_kernel_side_table_add(const char *name, cfx_user_kernel_fn fn, const char *const *arg_names,
                              int n_arg_names)
{
    if (!fn)
        return cfx_error_set(CFX_ERR, NULL, "cfx_kernel_side_table_add: NULL kernel");
    if (n_arg_names < 0 || n_arg_names > MAX_KERNEL_ARGS || (n_arg_names && !arg_names))
        return cfx_error_set(CFX_ERR, NULL, "cfx_kernel_side_table_add: bad parameter names");
    for (int i = 0; i < n_arg_names; i++)
        for (int j = 0; arg_names[i] && j < i; j++)
            if (arg_names[j] && !strcmp(arg_names[i], arg_names[j]))
                return cfx_error_set(CFX_ERR, NULL, "duplicate argument '%s' in function definition", arg_names[i]);
    pthread_mutex_lock(&table_lock);
    int idx = -1;
    for (int i = 0; i < n_kernels && idx < 0; i++)
        if (kernels[i].fn == fn)
            idx = i;
    if (idx < 0 && n_kernels < MAX_KERNELS && grow((void **)&kernels, &cap_kernels, n_kernels, sizeof *kernels)) {
        char *copy = cfx_strdup(name ? name : "kernel");
        char **names = copy_names(arg_names, n_arg_names);
        if (copy && names) {
            kernels[n_kernels] = (side_kernel){fn, copy, names, n_arg_names};
            idx = n_kernels++;
        } else {
            cfx_free(copy);
            free_names(names, n_arg_names);
        }
    }
    pthread_mutex_unlock(&table_lock);
    return idx >= 0 ? idx : cfx_error_set(CFX_ERR_NOMEM, NULL, "the kernel side table is full");
}

/* A copy of entry idx (its strings stay valid: entries are never freed), or fn NULL. */
static side_kernel get_kernel(int64_t idx)
{
    side_kernel k = {0};
    pthread_mutex_lock(&table_lock);
    if (idx >= 0 && idx < n_kernels)
        k = kernels[idx];
    pthread_mutex_unlock(&table_lock);
    return k;
}

const char *cfx_kernel_side_table_name(int idx) { return get_kernel(idx).name; }

const char *const *cfx_kernel_side_table_arg_names(int idx, int *n)
{
    side_kernel k = get_kernel(idx);
    if (n)
        *n = k.fn ? k.n_arg_names : 0;
    return k.fn ? (const char *const *)k.arg_names : NULL;
}

int cfx_kernel_side_table_add_constant_args(const char *const *names, const int64_t *values, int n)
{
    if (n < 0 || n > MAX_KERNEL_ARGS || (n && (!names || !values)))
        return cfx_error_set(CFX_ERR, NULL, "cfx_kernel_side_table_add_constant_args: bad arguments");
    pthread_mutex_lock(&table_lock);
    int idx = -1;
    if (n_constants < MAX_CONSTANT_ARGS &&
        grow((void **)&constants, &cap_constants, n_constants, sizeof *constants)) {
        char **c = copy_names(names, n);
        int64_t *v = cfx_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
        if (c && v) {
            if (n)
                memcpy(v, values, (size_t)n * sizeof *v);
            constants[n_constants] = (side_constants){c, v, n};
            idx = n_constants++;
        } else {
            free_names(c, n);
            cfx_free(v);
        }
    }
    pthread_mutex_unlock(&table_lock);
    return idx >= 0 ? idx : cfx_error_set(CFX_ERR_NOMEM, NULL, "the constant args side table is full");
}

static bool get_constants(int64_t idx, side_constants *out)
{
    pthread_mutex_lock(&table_lock);
    bool ok = idx >= 0 && idx < n_constants;
    if (ok)
        *out = constants[idx];
    pthread_mutex_unlock(&table_lock);
    return ok;
}

/* ---- the keywords ---------------------------------------------------------------------------- */

static cfx_hop *mutation_hop, *functional_hop;

typedef struct tk_call {
    int64_t kernel_idx, constant_args_idx;
    cfx_value grid, tma, kwargs, to_clone;
} tk_call;

static const char *const keyword_names[] = {"kernel_idx", "constant_args_idx", "grid", "tma_descriptor_metadata",
                                            "kwargs", "tensors_to_clone"};

/* The call's keywords from its one dict argument, with __call__'s binding errors. */
static int parse(const cfx_hop *hop, const cfx_value *args, int n, tk_call *c)
{
    bool functional = hop == functional_hop;
    const char *cls = functional ? "TritonKernelWrapperFunctional" : "TritonKernelWrapperMutation";
    if (n != 1 || args[0].kind != CFX_V_DICT)
        return cfx_error_set(CFX_ERR, NULL, "%s.__call__() takes 1 positional argument but %d were given", cls, n + 1);
    cfx_value d = args[0];
    int want = functional ? 6 : 5;
    unsigned seen = 0;
    for (uint32_t i = 0; i < d.len; i += 2) {
        if (d.u.items[i].kind != CFX_V_STRING || !d.u.items[i].u.s)
            return cfx_error_set(CFX_ERR, NULL, "%s.__call__() keywords must be strings", cls);
        int k = 0;
        while (k < want && strcmp(d.u.items[i].u.s, keyword_names[k]))
            k++;
        if (k == want)
            return cfx_error_set(CFX_ERR, NULL, "%s.__call__() got an unexpected keyword argument '%s'", cls,
                                 d.u.items[i].u.s);
        if (seen >> k & 1) /* a dict built in C may repeat a key; a node's kwargs cannot */
            return cfx_error_set(CFX_ERR, NULL, "%s.__call__() got multiple values for argument '%s'", cls,
                                 keyword_names[k]);
        seen |= 1u << k;
    }
    cfx_value v[6];
    for (int k = 0; k < want; k++) {
        const cfx_value *p = cfx_dict_get(d, keyword_names[k]);
        if (!p)
            return cfx_error_set(CFX_ERR, NULL, "%s.__call__() missing 1 required positional argument: '%s'", cls,
                                 keyword_names[k]);
        v[k] = *p;
    }
    if (v[0].kind != CFX_V_INT || v[1].kind != CFX_V_INT)
        return cfx_error_set(CFX_ERR, NULL, "%s: kernel_idx and constant_args_idx must be ints", cls);
    if (v[3].kind != CFX_V_DICT)
        return cfx_error_set(CFX_ERR, NULL, "%s: tma_descriptor_metadata must be a dict", cls);
    if (v[4].kind != CFX_V_DICT)
        return cfx_error_set(CFX_ERR, NULL, "%s: kwargs must be a dict", cls);
    for (uint32_t i = 0; i < v[4].len; i += 2)
        if (v[4].u.items[i].kind != CFX_V_STRING || !v[4].u.items[i].u.s)
            return cfx_error_set(CFX_ERR, NULL, "%s: the keys of kwargs must be strings", cls);
    if (functional && v[5].kind != CFX_V_LIST)
        return cfx_error_set(CFX_ERR, NULL, "%s: tensors_to_clone must be a list of str", cls);
    for (uint32_t i = 0; functional && i < v[5].len; i++)
        if (v[5].u.items[i].kind != CFX_V_STRING)
            return cfx_error_set(CFX_ERR, NULL, "%s: tensors_to_clone must be a list of str", cls);
    *c = (tk_call){v[0].u.i, v[1].u.i, v[2], v[3], v[4], functional ? v[5] : cfx_list(NULL, 0)};
    return CFX_OK;
}

/* The dict of the call's keywords (scope memory), to_clone given for the functional HOP. */
static cfx_value keywords(const tk_call *c, cfx_value kwargs, const cfx_value *to_clone)
{
    int n = to_clone ? 6 : 5;
    cfx_value *kv = cfx_scope_alloc(12 * sizeof *kv);
    if (!kv) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return cfx_none();
    }
    cfx_value vals[6] = {cfx_int(c->kernel_idx), cfx_int(c->constant_args_idx), c->grid, c->tma, kwargs,
                         to_clone ? *to_clone : cfx_none()};
    for (int k = 0; k < n; k++) {
        kv[2 * k] = cfx_string(keyword_names[k]);
        kv[2 * k + 1] = vals[k];
    }
    return cfx_dict(kv, (uint32_t)n);
}

static bool is_tensor(cfx_value v) { return v.kind == CFX_V_TENSOR && v.u.t; }

static bool in_list(cfx_value list, const char *s)
{
    for (uint32_t i = 0; i < list.len; i++)
        if (list.u.items[i].kind == CFX_V_STRING && !strcmp(list.u.items[i].u.s, s))
            return true;
    return false;
}

/* ---- dense --------------------------------------------------------------------------------- */

/* grid: a list of one tuple (or list) of 1 to 3 non-negative ints, missing dims 1. */
static int read_grid(cfx_value grid, int64_t out[3])
{
    if (grid.kind != CFX_V_LIST || grid.len != 1)
        return cfx_error_set(CFX_ERR, NULL, "triton_kernel_wrapper_mutation: cfx launches a kernel over one grid "
                                            "(a grid per autotuning config is not supported)");
    cfx_value g = grid.u.items[0];
    if ((g.kind != CFX_V_TUPLE && g.kind != CFX_V_LIST) || g.len < 1 || g.len > 3)
        return cfx_error_set(CFX_ERR, NULL, "triton_kernel_wrapper_mutation: a grid is a tuple of 1 to 3 ints");
    for (int i = 0; i < 3; i++) {
        cfx_value d = i < (int)g.len ? g.u.items[i] : cfx_int(1);
        if (d.kind != CFX_V_INT || d.u.i < 0)
            return cfx_error_set(CFX_ERR, NULL, "triton_kernel_wrapper_mutation: a grid is a tuple of 1 to 3 "
                                                "non-negative ints");
        out[i] = d.u.i;
    }
    return CFX_OK;
}

/* One argument of the kernel, by name: from kwargs, else from the constant args. */
static int kernel_arg(const side_kernel *k, const char *name, cfx_value kwargs, const side_constants *cs,
                      cfx_tensor **ts, int *nt, int64_t *as, int *na)
{
    const cfx_value *v = cfx_dict_get(kwargs, name);
    if (!v) {
        for (int i = 0; i < cs->n; i++)
            if (!strcmp(cs->names[i], name)) {
                as[(*na)++] = cs->values[i];
                return CFX_OK;
            }
        return cfx_error_set(CFX_ERR, NULL, "%s() missing 1 required positional argument: '%s'", k->name, name);
    }
    if (is_tensor(*v))
        ts[(*nt)++] = v->u.t;
    else if (v->kind == CFX_V_INT || v->kind == CFX_V_BOOL)
        as[(*na)++] = v->kind == CFX_V_INT ? v->u.i : v->u.b;
    else
        return cfx_error_set(CFX_ERR, NULL, "%s(): argument '%s' must be a tensor or an int, not %s", k->name, name,
                             cfx_value_kind_name(v->kind));
    return CFX_OK;
}

static int mutation_dense(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)mode;
    (void)ctx;
    tk_call c;
    if (parse(hop, args, n, &c) != CFX_OK)
        return CFX_ERR;
    side_kernel k = get_kernel(c.kernel_idx);
    if (!k.fn)
        return cfx_error_set(CFX_ERR, NULL, "Kernel index %lld not found in id_to_kernel", (long long)c.kernel_idx);
    side_constants cs;
    if (!get_constants(c.constant_args_idx, &cs))
        return cfx_error_set(CFX_ERR, NULL, "Constant args index %lld not found in constant_args",
                             (long long)c.constant_args_idx);
    if (c.tma.len)
        return cfx_error_set(CFX_ERR, NULL, "triton_kernel_wrapper_mutation: TMA descriptors are not supported by cfx");
    int64_t grid[3];
    if (read_grid(c.grid, grid) != CFX_OK)
        return CFX_ERR;
    for (uint32_t i = 0; i < c.kwargs.len; i += 2) {
        const char *name = c.kwargs.u.items[i].u.s;
        bool known = false;
        for (int j = 0; j < k.n_arg_names && !known; j++)
            known = !strcmp(k.arg_names[j], name);
        if (!known)
            return cfx_error_set(CFX_ERR, NULL, "%s() got an unexpected keyword argument '%s'", k.name, name);
    }
    cfx_tensor *ts[MAX_KERNEL_ARGS];
    int64_t as[MAX_KERNEL_ARGS];
    int nt = 0, na = 0;
    for (int j = 0; j < k.n_arg_names; j++)
        if (kernel_arg(&k, k.arg_names[j], c.kwargs, &cs, ts, &nt, as, &na) != CFX_OK)
            return CFX_ERR;
    cfx_kernel_program p = {{0, 0, 0}, {grid[0], grid[1], grid[2]}, ts, nt, as, na};
    for (p.pid[2] = 0; p.pid[2] < p.grid[2]; p.pid[2]++)
        for (p.pid[1] = 0; p.pid[1] < p.grid[1]; p.pid[1]++)
            for (p.pid[0] = 0; p.pid[0] < p.grid[0]; p.pid[0]++)
                if (k.fn(&p) != CFX_OK)
                    return cfx_error_occurred()
                               ? cfx_error_status()
                               : cfx_error_set(CFX_ERR, NULL, "kernel '%s' failed at program (%lld, %lld, %lld)",
                                               k.name, (long long)p.pid[0], (long long)p.pid[1], (long long)p.pid[2]);
    for (int i = 0; i < nt; i++)
        cfx_tensor_bump_version(ts[i]);
    *out = cfx_none();
    return CFX_OK;
}

/* clone_preserve_strides: the whole storage span x views, cloned, viewed the same way. */
static cfx_tensor *clone_preserve_strides(cfx_tensor *x)
{
    int64_t needed = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (x->sizes[i] == 0) {
            needed = 0;
            break;
        }
        needed += (x->sizes[i] - 1) * x->strides[i];
    }
    int64_t one = 1;
    cfx_int_list size = {&needed, 1}, stride = {&one, 1};
    cfx_tensor *flat = cfx_as_strided(x, size, stride, cfx_int(x->storage_offset));
    cfx_tensor *buffer = flat ? cfx_clone(flat) : NULL;
    if (!buffer)
        return NULL;
    cfx_int_list sizes = {x->sizes, x->ndim}, strides = {x->strides, x->ndim};
    return cfx_as_strided(buffer, sizes, strides);
}

/* {key: clone_preserve_strides(val) if key in to_clone else val}, and the dict of the clones. */
static int clone_kwargs(const tk_call *c, cfx_value *cloned, cfx_value *result)
{
    cfx_value *kv = cfx_scope_alloc((c->kwargs.len + 1) * sizeof *kv);
    cfx_value *res = cfx_scope_alloc((c->kwargs.len + 1) * sizeof *res);
    if (!kv || !res)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    uint32_t nr = 0;
    for (uint32_t i = 0; i < c->kwargs.len; i += 2) {
        kv[i] = c->kwargs.u.items[i];
        kv[i + 1] = c->kwargs.u.items[i + 1];
        if (!in_list(c->to_clone, kv[i].u.s))
            continue;
        if (is_tensor(kv[i + 1])) {
            cfx_tensor *t = clone_preserve_strides(kv[i + 1].u.t);
            if (!t)
                return CFX_ERR;
            kv[i + 1] = cfx_tensor_value(t);
        }
        res[nr++] = kv[i];
        res[nr++] = kv[i + 1];
    }
    *cloned = cfx_dict(kv, c->kwargs.len / 2);
    *result = cfx_dict(res, nr / 2);
    return CFX_OK;
}

static int functional_dense(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)mode;
    (void)ctx;
    tk_call c;
    cfx_value cloned, result;
    if (parse(hop, args, n, &c) != CFX_OK || clone_kwargs(&c, &cloned, &result) != CFX_OK)
        return CFX_ERR;
    cfx_value call = keywords(&c, cloned, NULL), none;
    if (call.kind != CFX_V_DICT || cfx_hop_call(mutation_hop, &call, 1, &none) != CFX_OK)
        return CFX_ERR;
    *out = result;
    return CFX_OK;
}

/* ---- fake and Meta ------------------------------------------------------------------------- */

static int mutation_nothing(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)mode;
    (void)ctx;
    tk_call c;
    if (parse(hop, args, n, &c) != CFX_OK)
        return CFX_ERR;
    *out = cfx_none();
    return CFX_OK;
}

static int functional_fake(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)ctx;
    tk_call c;
    if (parse(hop, args, n, &c) != CFX_OK || cfx_mode_push(mode) != CFX_OK)
        return CFX_ERR;
    cfx_value cloned;
    int rc = clone_kwargs(&c, &cloned, out);
    cfx_mode_exit(mode);
    return rc;
}

/* ---- proxy ------------------------------------------------------------------------------- */

/* v with every tensor replaced by its node (scope memory for containers). */
static int to_proxy(cfx_proxy_mode *pm, cfx_value v, cfx_value *out, int depth)
{
    *out = v;
    if (is_tensor(v)) {
        cfx_node *node = cfx_proxy_node_of(pm, v.u.t);
        if (!node)
            return CFX_ERR;
        *out = cfx_node_value(node);
    } else if (cfx_value_is_container(v) && v.len) {
        if (depth > 32)
            return cfx_error_set(CFX_ERR, NULL, "value nested too deeply");
        cfx_value *items = cfx_scope_alloc(v.len * sizeof *items);
        if (!items)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        for (uint32_t i = 0; i < v.len; i++)
            if (to_proxy(pm, v.u.items[i], &items[i], depth + 1) != CFX_OK)
                return CFX_ERR;
        out->u.items = items;
    } else if (v.kind == CFX_V_OBJECT) {
        return cfx_error_set(CFX_ERR, NULL, "a triton kernel wrapper argument cannot be a script object");
    }
    return CFX_OK;
}

/* trace_triton_kernel_wrapper: the call below the proxy mode, then one node named
 * `<hop>_proxy` with args () and the keywords as kwargs; a dict result is tracked entry by
 * entry through getitem nodes (track_tensor_tree on a dict). */
static int proxy(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)ctx;
    tk_call c;
    if (parse(hop, args, n, &c) != CFX_OK || cfx_hop_call(hop, args, n, out) != CFX_OK)
        return CFX_ERR;
    cfx_proxy_mode *pm = cfx_proxy_mode_from_base(mode);
    cfx_value mapped;
    if (to_proxy(pm, args[0], &mapped, 0) != CFX_OK)
        return CFX_ERR;
    cfx_kwarg kw[6];
    uint32_t nk = mapped.len / 2;
    for (uint32_t i = 0; i < nk && i < 6; i++)
        kw[i] = (cfx_kwarg){mapped.u.items[2 * i].u.s, mapped.u.items[2 * i + 1]};
    char name[96];
    snprintf(name, sizeof name, "%s_proxy", cfx_hop_name(hop));
    cfx_graph *g = cfx_proxy_mode_graph(pm);
    cfx_node *node = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_fn(cfx_hop_target(hop)), NULL, 0,
                                           kw, nk, name);
    if (!node)
        return CFX_ERR;
    if (out->kind != CFX_V_DICT)
        return CFX_OK;
    for (uint32_t i = 0; i < out->len; i += 2) {
        cfx_value ga[2] = {cfx_node_value(node), out->u.items[i]};
        cfx_node *gi = cfx_graph_call_fn(g, &cfx_fn_getitem, ga, 2, NULL, 0);
        if (!gi)
            return CFX_ERR;
        if (is_tensor(out->u.items[i + 1]) && cfx_proxy_track(pm, out->u.items[i + 1].u.t, gi) != CFX_OK)
            return CFX_ERR;
    }
    return CFX_OK;
}

/* ---- functionalization ---------------------------------------------------------------------- */

/* triton_kernel_wrapper_functional_functionalize: unwrapped below, the outputs wrapped (by
 * hand, as with_effects.c does: the routes' installable ops default to passing values). */
static int functional_functionalize(cfx_hop *hop, cfx_functionalize_ctx *fc, void *ctx, const cfx_value *args,
                                    int n, cfx_value *out)
{
    (void)ctx;
    tk_call c;
    cfx_value un, r;
    if (parse(hop, args, n, &c) != CFX_OK || hop_map_tensors(args, 1, &un, hop_functional_unwrap_one, NULL) != CFX_OK ||
        cfx_functionalize_redispatch_begin(fc) != CFX_OK)
        return CFX_ERR;
    int rc = cfx_hop_call(hop, &un, 1, &r);
    cfx_functionalize_redispatch_end(fc);
    return rc == CFX_OK ? hop_map_tensors(&r, 1, out, hop_functional_wrap_one, NULL) : rc;
}

/* triton_kernel_wrapper_mutation_functionalize: the functional HOP below functionalization,
 * cloning every tensor of kwargs (get_mutated_tensors' answer when the kernel cannot be
 * analysed), then each input replaced by its output (replace + commit_update + sync). */
static int mutation_functionalize(cfx_hop *hop, cfx_functionalize_ctx *fc, void *ctx, const cfx_value *args, int n,
                                  cfx_value *out)
{
    (void)ctx;
    tk_call c;
    if (parse(hop, args, n, &c) != CFX_OK)
        return CFX_ERR;
    cfx_value un;
    if (hop_map_tensors(&c.kwargs, 1, &un, hop_functional_unwrap_one, NULL) != CFX_OK)
        return CFX_ERR;
    cfx_value *names = cfx_scope_alloc((un.len / 2 + 1) * sizeof *names);
    if (!names)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    uint32_t nn = 0;
    for (uint32_t i = 0; i < un.len; i += 2)
        if (is_tensor(un.u.items[i + 1]))
            names[nn++] = un.u.items[i];
    cfx_value to_clone = cfx_list(names, nn);
    cfx_value call = keywords(&c, un, &to_clone), r;
    if (call.kind != CFX_V_DICT || cfx_functionalize_redispatch_begin(fc) != CFX_OK)
        return CFX_ERR;
    int rc = cfx_hop_call(functional_hop, &call, 1, &r);
    cfx_functionalize_redispatch_end(fc);
    if (rc != CFX_OK)
        return rc;
    /* the new values, plain (a functionalize rule below may have wrapped them) */
    if (hop_map_tensors(&r, 1, &r, hop_functional_unwrap_one, NULL) != CFX_OK)
        return CFX_ERR;
    if (r.kind != CFX_V_DICT)
        return cfx_error_set(CFX_ERR, NULL, "triton_kernel_wrapper_functional returned a %s, not a dict",
                             cfx_value_kind_name(r.kind));
    for (uint32_t i = 0; i < r.len; i += 2) {
        const char *key = r.u.items[i].u.s;
        cfx_value o = r.u.items[i + 1];
        const cfx_value *in = cfx_dict_get(c.kwargs, key);
        if (!in)
            return cfx_error_set(CFX_ERR, NULL, "Output keys {'%s'} not subset of input keys", key);
        if (!is_tensor(o))
            continue;
        if (!is_tensor(*in))
            return cfx_error_set(CFX_ERR, NULL, "Expected input_arg for key %s to be a Tensor, got <class '%s'>", key,
                                 cfx_value_kind_name(in->kind));
        if (cfx_functional_mutate(in->u.t, o.u.t) != CFX_OK)
            return CFX_ERR;
    }
    *out = cfx_none();
    return CFX_OK;
}

/* ---- registration ----------------------------------------------------------------------------- */

static cfx_hop *make(const char *name, bool mutation)
{
    const hop_rules rules = {.name = name, .side_effect = mutation,
                             .dense = mutation ? mutation_dense : functional_dense, .proxy = proxy,
                             .fake = mutation ? mutation_nothing : functional_fake,
                             .functionalize = mutation ? mutation_functionalize : functional_functionalize,
                             .autograd = HOP_AUTOGRAD_FALLTHROUGH};
    cfx_hop *h = hop_define(&rules);
    if (!h)
        return NULL;
    /* called with keywords: the interpreter passes a node's kwargs as the one dict argument
     * (the descriptor is the HOP's own record, writable; nothing has called it yet) */
    ((cfx_builtin_fn *)cfx_hop_target(h))->kwargs_dict = true;
    if (mutation)
        cfx_hop_py_impl(h, CFX_KEY_Meta, mutation_nothing, NULL);
    cfx_hop_fallthrough(h, CFX_KEY_AutogradCUDA);
    return h;
}

void hop_triton_kernel_wrap_register(void)
{
    mutation_hop = make("triton_kernel_wrapper_mutation", true);
    functional_hop = make("triton_kernel_wrapper_functional", false);
}

cfx_hop *cfx_triton_kernel_wrapper_mutation_hop(void)
{
    return hop_get(&mutation_hop, "triton_kernel_wrapper_mutation");
}

cfx_hop *cfx_triton_kernel_wrapper_functional_hop(void)
{
    return hop_get(&functional_hop, "triton_kernel_wrapper_functional");
}
