/* hop.c - the higher-order operator: registration tables and dispatch (torch/_ops.py, 2.13).
 *
 * A HOP keeps an implementation slot per dispatch key (runtime and alias keys alike, so
 * resolve_key can ask "is there a kernel for CompositeExplicitAutograd?"), one per
 * infrastructure mode slot and a short list for user mode types. Dispatch follows
 * HigherOrderOperator.dispatch step by step; the Python key is handled here rather than by the
 * dispatcher's Python fallback because a HOP has no cfx_op to hand to a mode's dispatch().
 * PyTorch's per-key cache is not kept: resolution is a handful of array reads.
 *
 * The graph target is a builtin function descriptor embedded in the HOP, so a node's target
 * leads back to its HOP (cfx_hop_from_target) and the interpreter calls the HOP through the
 * call hook registered with ir/interpreter.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/dispatcher.h"
#include "dispatch/operator_internal.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "dispatch/tensor_ext.h"
#include "hop/hop.h"
#include "hop/hop_internal.h"
#include "ir/interpreter.h"
#include "ir/side_effects.h"

enum { MAX_USER_RULES = 16, HOP_NAME_MAX = 128 };

typedef enum { IMPL_NONE = 0, IMPL_PLAIN, IMPL_FUNCTIONALIZE } impl_kind;

typedef struct impl {
    uint8_t kind; /* impl_kind */
    union {
        cfx_hop_impl_fn plain;
        cfx_hop_functionalize_fn func;
    } fn;
    void *ctx;
} impl;

struct cfx_hop {
    cfx_builtin_fn target; /* first: cfx_hop_from_target casts back */
    uint32_t magic;
    char name[HOP_NAME_MAX];
    char qualified[HOP_NAME_MAX + 32];
    cfx_keyset non_fallthrough;
    impl keys[CFX_KEY_COUNT];
    impl modes[CFX_MODE_NUM_KEYS];
    struct {
        const cfx_mode_vtable *type;
        impl rule;
    } user[MAX_USER_RULES];
    int n_user;
    cfx_hop *next;
};

#define HOP_MAGIC 0x484f5031u /* "HOP1" */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(cfx_hop *) registry;

/* The keys a HOP falls through from birth (_HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS). */
static const cfx_dispatch_key default_fallthrough[] = {
    CFX_KEY_PythonDispatcher, CFX_KEY_PythonTLSSnapshot, CFX_KEY_ADInplaceOrView, CFX_KEY_BackendSelect,
    CFX_KEY_AutocastCPU,      CFX_KEY_AutocastCUDA,      CFX_KEY_AutocastXPU,
};

static int call_from_graph(const cfx_builtin_fn *fn, void *ctx, const cfx_value *args, uint32_t n, cfx_value *out)
{
    (void)ctx;
    return cfx_hop_call(cfx_hop_from_target(fn), args, (int)n, out);
}

cfx_hop *cfx_hop_find(const char *name)
{
    if (!name)
        return NULL;
    for (cfx_hop *h = atomic_load(&registry); h; h = h->next)
        if (strcmp(h->name, name) == 0)
            return h;
    return NULL;
}

cfx_hop *cfx_hop_new(const char *name, bool side_effect)
{
    if (!name || !*name || strlen(name) >= HOP_NAME_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyz"
                                                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(name)) {
        cfx_error_set(CFX_ERR, NULL, "a higher-order operator needs a name made of letters, digits and '_' "
                                     "(got '%s')", name ? name : "(null)");
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    if (cfx_hop_find(name)) {
        pthread_mutex_unlock(&registry_lock);
        cfx_error_set(CFX_ERR, NULL, "a higher-order operator named %s already exists", name);
        return NULL;
    }
    cfx_hop *h = cfx_calloc(1, sizeof *h);
    if (!h) {
        pthread_mutex_unlock(&registry_lock);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    h->magic = HOP_MAGIC;
    strcpy(h->name, name);
    snprintf(h->qualified, sizeof h->qualified, "torch.ops.higher_order.%s", name);
    h->target.qualified_name = h->qualified;
    h->target.name = h->name;
    h->target.side_effect = side_effect;
    h->non_fallthrough = cfx_keyset_full();
    for (size_t i = 0; i < sizeof default_fallthrough / sizeof *default_fallthrough; i++)
        cfx_hop_fallthrough(h, default_fallthrough[i]);
    int rc = cfx_builtin_fn_register(&h->target);
    if (rc == CFX_OK)
        rc = cfx_interp_register_builtin(&h->target, call_from_graph, NULL);
    if (rc == CFX_OK && side_effect)
        rc = cfx_side_effect_register(cfx_target_fn(&h->target));
    if (rc != CFX_OK) {
        /* a registry may already point at h->target: HOPs are never freed, so the
         * half-registered one stays allocated (unreachable by name) rather than dangling */
        pthread_mutex_unlock(&registry_lock);
        return NULL;
    }
    h->next = atomic_load(&registry);
    atomic_store(&registry, h);
    pthread_mutex_unlock(&registry_lock);
    return h;
}

cfx_hop *cfx_hop_from_target(const cfx_builtin_fn *fn)
{
    if (!fn)
        return NULL;
    for (cfx_hop *h = atomic_load(&registry); h; h = h->next)
        if (&h->target == fn)
            return h;
    return NULL;
}

const char *cfx_hop_name(const cfx_hop *hop) { return hop ? hop->name : NULL; }
const cfx_builtin_fn *cfx_hop_target(const cfx_hop *hop) { return hop ? &hop->target : NULL; }

cfx_value cfx_hop_value(const cfx_hop *hop)
{
    if (!hop)
        return cfx_none();
    return (cfx_value){CFX_V_HOP, (uint32_t)strlen(hop->name), {.s = hop->name}};
}

cfx_hop *cfx_value_hop(cfx_value v)
{
    char name[HOP_NAME_MAX];
    if (v.kind != CFX_V_HOP || !v.u.s || v.len >= sizeof name)
        return NULL;
    memcpy(name, v.u.s, v.len);
    name[v.len] = 0;
    return cfx_hop_find(name);
}

/* ---- registration ---------------------------------------------------------------------- */

static void key_repr(cfx_dispatch_key k, char *buf, size_t n)
{
    snprintf(buf, n, "DispatchKey.%s", cfx_key_name(k));
}

static int register_key(cfx_hop *hop, cfx_dispatch_key k, impl rule)
{
    if (!hop)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: NULL higher-order operator");
    if ((int)k <= 0 || (int)k >= CFX_KEY_COUNT)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: invalid dispatch key %d", (int)k);
    char kr[96];
    key_repr(k, kr, sizeof kr);
    if (k == CFX_KEY_Python)
        return cfx_error_set(CFX_ERR, NULL, "Please register a mode for the DispatchKey.Python key instead.");
    if (hop->keys[k].kind != IMPL_NONE)
        return cfx_error_set(CFX_ERR, NULL, "Trying to override a python impl for %s on operator %s", kr, hop->name);
    hop->keys[k] = rule;
    if (!cfx_key_is_alias(k))
        hop->non_fallthrough = cfx_keyset_or(hop->non_fallthrough, cfx_keyset_of(k));
    return CFX_OK;
}

int cfx_hop_py_impl(cfx_hop *hop, cfx_dispatch_key k, cfx_hop_impl_fn fn, void *ctx)
{
    if (!fn)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: NULL implementation");
    return register_key(hop, k, (impl){IMPL_PLAIN, {.plain = fn}, ctx});
}

static const char *slot_type_name(int slot)
{
    switch (slot) {
    case CFX_MODE_FAKE: return "torch._subclasses.fake_tensor.FakeTensorMode";
    case CFX_MODE_PROXY: return "torch.fx.experimental.proxy_tensor.ProxyTorchDispatchMode";
    case CFX_MODE_FUNCTIONAL: return "torch._subclasses.functional_tensor.FunctionalTensorMode";
    default: return "TorchDispatchMode";
    }
}

const char *cfx_hop_mode_type_name(const cfx_mode *m)
{
    if (!m)
        return "None";
    return m->key >= 0 ? slot_type_name(m->key) : m->vt->name;
}

static int register_slot(cfx_hop *hop, cfx_mode_key slot, impl rule)
{
    if (!hop)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: NULL higher-order operator");
    if ((int)slot < 0 || (int)slot >= CFX_MODE_NUM_KEYS)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: invalid mode slot %d (user modes register by vtable)", (int)slot);
    if (hop->modes[slot].kind != IMPL_NONE)
        return cfx_error_set(CFX_ERR, NULL, "<class '%s'> already registered in python_key_table",
                             slot_type_name(slot));
    hop->modes[slot] = rule;
    return CFX_OK;
}

int cfx_hop_py_impl_mode(cfx_hop *hop, cfx_mode_key slot, cfx_hop_impl_fn fn, void *ctx)
{
    if (!fn)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: NULL implementation");
    return register_slot(hop, slot, (impl){IMPL_PLAIN, {.plain = fn}, ctx});
}

int cfx_hop_py_impl_user_mode(cfx_hop *hop, const cfx_mode_vtable *type, cfx_hop_impl_fn fn, void *ctx)
{
    if (!hop || !type || !fn)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: NULL higher-order operator, mode type or implementation");
    for (int i = 0; i < hop->n_user; i++)
        if (hop->user[i].type == type)
            return cfx_error_set(CFX_ERR, NULL, "<class '%s'> already registered in python_key_table", type->name);
    if (hop->n_user == MAX_USER_RULES)
        return cfx_error_set(CFX_ERR, NULL, "py_impl: at most %d user mode types per higher-order operator",
                             MAX_USER_RULES);
    hop->user[hop->n_user].type = type;
    hop->user[hop->n_user++].rule = (impl){IMPL_PLAIN, {.plain = fn}, ctx};
    return CFX_OK;
}

int cfx_hop_py_functionalize_impl(cfx_hop *hop, cfx_hop_functionalize_fn fn, void *ctx)
{
    if (!fn)
        return cfx_error_set(CFX_ERR, NULL, "py_functionalize_impl: NULL implementation");
    impl rule = {IMPL_FUNCTIONALIZE, {.func = fn}, ctx};
    int rc = register_key(hop, CFX_KEY_Functionalize, rule);
    return rc == CFX_OK ? register_slot(hop, CFX_MODE_FUNCTIONAL, rule) : rc;
}

void cfx_hop_fallthrough(cfx_hop *hop, cfx_dispatch_key k)
{
    if (hop && !cfx_key_is_alias(k))
        hop->non_fallthrough = cfx_keyset_remove(hop->non_fallthrough, k);
}

bool cfx_hop_has_impl(const cfx_hop *hop, cfx_dispatch_key k)
{
    return hop && (int)k > 0 && (int)k < CFX_KEY_COUNT && hop->keys[k].kind != IMPL_NONE;
}

bool cfx_hop_has_mode_impl(const cfx_hop *hop, cfx_mode_key slot)
{
    return hop && (int)slot >= 0 && (int)slot < CFX_MODE_NUM_KEYS && hop->modes[slot].kind != IMPL_NONE;
}

/* ---- dispatch ------------------------------------------------------------------------- */

static cfx_keyset tensor_keys(const cfx_value *v, int n, int depth)
{
    cfx_keyset ks = cfx_keyset_empty();
    for (int i = 0; i < n; i++) {
        if (cfx_value_tensor_or_token(v[i])) /* a token's tensor too: with_effects' only one, often */
            ks = cfx_keyset_or(ks, v[i].u.t->keys);
        else if (cfx_value_is_container(v[i]) && depth < 32) /* a dict too: _get_overloaded_args */
            ks = cfx_keyset_or(ks, tensor_keys(v[i].u.items, (int)v[i].len, depth + 1));
    }
    return ks;
}

cfx_dispatch_key cfx_hop_dispatch_key(const cfx_hop *hop, const cfx_value *args, int n_args)
{
    if (!hop)
        return CFX_KEY_Undefined;
    cfx_local_keys lk = cfx_local_keys_get();
    cfx_keyset ks = cfx_keyset_or(lk.included, tensor_keys(args, n_args, 0));
    ks = cfx_keyset_minus(ks, lk.excluded);
    return cfx_keyset_highest_priority(cfx_keyset_and(ks, hop->non_fallthrough));
}

static int run(cfx_hop *hop, const impl *rule, cfx_mode *mode, cfx_functionalize_route route,
               const cfx_value *args, int n, cfx_value *out)
{
    *out = cfx_none();
    if (rule->kind == IMPL_PLAIN)
        return rule->fn.plain(hop, mode, rule->ctx, args, n, out);
    cfx_functionalize_ctx fctx;
    hop_functionalize_ctx_init(&fctx, route, mode);
    return rule->fn.func(hop, &fctx, rule->ctx, args, n, out);
}

static const impl *mode_rule(cfx_hop *hop, const cfx_mode *m)
{
    if (m->key >= 0 && m->key < CFX_MODE_NUM_KEYS)
        return hop->modes[m->key].kind != IMPL_NONE ? &hop->modes[m->key] : NULL;
    for (int i = 0; i < hop->n_user; i++)
        if (hop->user[i].type == m->vt)
            return &hop->user[i].rule;
    return NULL;
}

/* The mode-type rule with the top mode popped (_pop_mode_temporarily). */
static int dispatch_python(cfx_hop *hop, const cfx_value *args, int n, cfx_value *out)
{
    cfx_mode *top = cfx_mode_top();
    if (top) {
        const impl *rule = mode_rule(hop, top);
        if (!rule) {
            const char *m = cfx_hop_mode_type_name(top);
            return cfx_error_set(CFX_ERR_NOTIMPL, NULL,
                                 "There was no rule registered for HigherOrderOperator %s and mode <%s object>."
                                 "Hint: set <%s object>'s supports_higher_order_operators to True. This causes all "
                                 "higher order operators to pass through <%s object>'s __torch_dispatch__, so handle "
                                 "them accordingly by adding support for HigerOrderOperators (in this case, %s) in "
                                 "<%s object>.__torch_dispatch__ or returning NotImplemented when not supported.",
                                 hop->name, m, m, m, hop->name, m);
        }
        cfx_mode *popped = cfx_mode_pop();
        if (!popped)
            return CFX_ERR;
        int rc = run(hop, rule, popped, CFX_FUNCTIONALIZE_MODE, args, n, out);
        int prc = cfx_mode_push(popped);
        return rc != CFX_OK ? rc : prc;
    }
    /* no mode: a fake tensor argument brings its fake mode's rule (FakeTensor -> FakeTensorMode) */
    for (int i = 0; i < n; i++) {
        if (!cfx_value_tensor_or_token(args[i]))
            continue;
        cfx_mode *m = cfx_tensor_mode(args[i].u.t);
        if (!m)
            continue;
        const impl *rule = mode_rule(hop, m);
        if (!rule)
            return cfx_error_set(CFX_ERR_NOTIMPL, NULL,
                                 "There was no rule registered for HOP %s and subclass <class '%s'>. We recommend "
                                 "filing an issue.",
                                 hop->name, m->key == CFX_MODE_FAKE ? "torch._subclasses.fake_tensor.FakeTensor"
                                                                    : cfx_hop_mode_type_name(m));
        return run(hop, rule, m, CFX_FUNCTIONALIZE_MODE, args, n, out);
    }
    return cfx_error_set(CFX_ERR, NULL,
                         "HigherOrderOperator '%s' is not supported for the given input types. This typically happens "
                         "when using custom tensor types or dispatch modes that don't have implementations for this "
                         "operation.\n\nCurrent mode: None\nInput types: []\n\nTo fix this, can add support for '%s' "
                         "in None's __torch_dispatch__\n",
                         hop->name, hop->name);
}

static bool has_any_key_in(const cfx_hop *hop, cfx_keyset ks)
{
    for (int k = 1; k < CFX_KEY_COUNT; k++)
        if (hop->keys[k].kind != IMPL_NONE && cfx_key_is_runtime((cfx_dispatch_key)k) &&
            !cfx_key_is_alias((cfx_dispatch_key)k) && cfx_keyset_has(ks, (cfx_dispatch_key)k))
            return true;
    return false;
}

static bool in_alias(cfx_dispatch_key k, cfx_dispatch_key alias)
{
    return k == CFX_KEY_Undefined || cfx_key_in_expansion(alias, k);
}

static bool has_backend_fallback(cfx_dispatch_key k)
{
    cfx_dispatcher_init(); /* the fallbacks are registered by the dispatcher's initialisation */
    int idx = cfx_key_table_index(k);
    if (idx < 0)
        return false;
    const cfx_kernel *f = cfx_dispatcher_backend_fallback(idx);
    return f && (cfx_kernel_is_valid(f) || cfx_kernel_is_fallthrough(f));
}

/* resolve_key: the key whose implementation serves k, or Undefined + error. */
static int resolve_key(const cfx_hop *hop, cfx_dispatch_key k, cfx_dispatch_key *res)
{
    *res = k;
    if (cfx_hop_has_impl(hop, k))
        return CFX_OK;
    static const cfx_dispatch_key explicit_order[] = {CFX_KEY_CompositeExplicitAutogradNonFunctional,
                                                      CFX_KEY_CompositeExplicitAutograd};
    for (int i = 0; i < 2; i++)
        if (in_alias(k, explicit_order[i]) && cfx_hop_has_impl(hop, explicit_order[i])) {
            *res = explicit_order[i];
            return CFX_OK;
        }
    bool backend = cfx_hop_has_impl(hop, CFX_KEY_CompositeExplicitAutograd) ||
                   (k != CFX_KEY_Undefined && has_any_key_in(hop, cfx_keyset_backend_from_autograd(k)));
    if (k != CFX_KEY_Undefined && cfx_key_in_expansion(CFX_KEY_CompositeImplicitAutogradNestedTensor, k) &&
        cfx_hop_has_impl(hop, CFX_KEY_CompositeImplicitAutogradNestedTensor) && !backend) {
        *res = CFX_KEY_CompositeImplicitAutogradNestedTensor;
        return CFX_OK;
    }
    if (in_alias(k, CFX_KEY_CompositeImplicitAutograd) && cfx_hop_has_impl(hop, CFX_KEY_CompositeImplicitAutograd) &&
        !backend) {
        *res = CFX_KEY_CompositeImplicitAutograd;
        return CFX_OK;
    }
    static const cfx_dispatch_key late[] = {CFX_KEY_Autograd, CFX_KEY_FuncTorchBatchedDecomposition};
    for (int i = 0; i < 2; i++)
        if (k != CFX_KEY_Undefined && cfx_key_in_expansion(late[i], k) && cfx_hop_has_impl(hop, late[i])) {
            *res = late[i];
            return CFX_OK;
        }
    if (has_backend_fallback(k))
        return CFX_OK;
    return cfx_error_set(CFX_ERR_NOTIMPL, NULL, "could not find kernel for %s at dispatch key DispatchKey.%s",
                         hop->name, cfx_key_name(k));
}

int cfx_hop_dispatch(cfx_hop *hop, cfx_dispatch_key k, const cfx_value *args, int n_args, cfx_value *out)
{
    if (!hop || !out || (n_args > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "cfx_hop_call: NULL higher-order operator, arguments or result");
    if (cfx_error_occurred())
        return cfx_error_status(); /* a NULL-propagating caller: keep the first error */
    if (k == CFX_KEY_Python)
        return dispatch_python(hop, args, n_args, out);
    cfx_dispatch_key final_key;
    int rc = resolve_key(hop, k, &final_key);
    if (rc != CFX_OK)
        return rc;
    if (!cfx_hop_has_impl(hop, final_key))
        return cfx_error_set(CFX_ERR_NOTIMPL, NULL,
                             "could not find kernel for HigherOrderOperator %s at dispatch key DispatchKey.%s "
                             "(resolved from DispatchKey.%s)",
                             hop->name, cfx_key_name(final_key), cfx_key_name(k));
    return run(hop, &hop->keys[final_key], NULL, CFX_FUNCTIONALIZE_KEY, args, n_args, out);
}

int cfx_hop_call(cfx_hop *hop, const cfx_value *args, int n_args, cfx_value *out)
{
    if (!hop || !out || (n_args > 0 && !args) || n_args < 0)
        return cfx_error_set(CFX_ERR, NULL, "cfx_hop_call: NULL higher-order operator, arguments or result");
    return cfx_hop_dispatch(hop, cfx_hop_dispatch_key(hop, args, n_args), args, n_args, out);
}
