/* side_effects.c - the side-effect registry and Node.is_impure.
 *
 * The registry maps a target's name to flags (side-effectful, nondeterministic_seeded). It is
 * process-wide and rarely written (library set-up, HOP registration), so a mutex guards it
 * and a version counter tells each graph's target records when their answers went stale: a pass
 * asking about a million nodes that call a handful of targets takes the lock a handful of
 * times. Operator keys are normalized so "aten::relu.default" and "aten::relu" are one key.
 *
 * The built-in entries are PyTorch 2.13's torch.fx.node._side_effectful_functions as import
 * torch leaves it (tests/data/ir_side_effects.tsv): its operator overloads and functions. Its
 * three OpOverloadPacket members never match an overload target in FX either, and its
 * higher-order operator (call_torchbind) is registered by the layer that defines it. As in
 * 2.13's is_impure, an operator or HOP with an effect (dispatch/effects.h) is impure too. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/effects.h"
#include "dispatch/fork_internal.h"
#include "ir/internal.h"

enum { EFFECT_SIDE = 1, EFFECT_NONDET = 2 };

static const char *const builtin_side_effects[] = {
    "operator.setitem",
    "torch._C._set_grad_enabled",
    "torch._assert",
    "torch._assert_async",
    "torch._functorch.predispatch._enter_dual_level",
    "torch._functorch.predispatch._exit_dual_level",
    "torch._functorch.predispatch._jvp_decrement_nesting",
    "torch._functorch.predispatch._jvp_increment_nesting",
    "torch.amp.autocast_mode._enter_autocast",
    "torch.amp.autocast_mode._exit_autocast",
    "aten::_assert_async.msg",
    "aten::_assert_scalar",
    "aten::_assert_tensor_metadata",
    "aten::sym_constrain_range",
    "aten::sym_constrain_range_for_size",
    "inductor::accumulate_grad_",
    "inductor::resize_storage_bytes_",
    "prims::_sink_tokens",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit._RecordFunction",
};

typedef struct entry {
    char *key;
    unsigned flags;
} entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *reg;
static size_t reg_len, reg_cap;
static atomic_uint reg_version = 1;
__attribute__((constructor)) static void reg_lock_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &reg_lock); }

/* "ns::name.default" -> "ns::name" (length of the normalized key). */
static size_t norm_len(const char *key)
{
    size_t n = strlen(key);
    if (strstr(key, "::") && n > 8 && strcmp(key + n - 8, ".default") == 0)
        return n - 8;
    return n;
}

static bool key_eq(const char *a, size_t alen, const char *b)
{
    return norm_len(b) == alen && strncmp(a, b, alen) == 0;
}

/* Called with the lock held. */
static unsigned lookup_flags(const char *key)
{
    size_t len = norm_len(key);
    unsigned f = 0;
    for (size_t i = 0; i < sizeof builtin_side_effects / sizeof *builtin_side_effects; i++)
        if (key_eq(key, len, builtin_side_effects[i]))
            f |= EFFECT_SIDE;
    for (size_t i = 0; i < reg_len; i++)
        if (key_eq(key, len, reg[i].key))
            f |= reg[i].flags;
    return f;
}

static int register_key(const char *key, unsigned flags)
{
    if (!key)
        return CFX_ERR;
    pthread_mutex_lock(&reg_lock);
    size_t len = norm_len(key);
    for (size_t i = 0; i < reg_len; i++)
        if (key_eq(key, len, reg[i].key)) {
            reg[i].flags |= flags;
            atomic_fetch_add(&reg_version, 1);
            pthread_mutex_unlock(&reg_lock);
            return CFX_OK;
        }
    if (reg_len == reg_cap) {
        size_t cap = reg_cap ? reg_cap * 2 : 16;
        entry *e = cfx_realloc(reg, cap * sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&reg_lock);
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        }
        reg = e;
        reg_cap = cap;
    }
    char *k = cfx_malloc(len + 1);
    if (!k) {
        pthread_mutex_unlock(&reg_lock);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    memcpy(k, key, len);
    k[len] = '\0';
    reg[reg_len++] = (entry){k, flags};
    atomic_fetch_add(&reg_version, 1);
    pthread_mutex_unlock(&reg_lock);
    return CFX_OK;
}

/* The registry lives for the process; free it at exit so leak checkers stay quiet. */
__attribute__((destructor)) static void registry_free(void)
{
    for (size_t i = 0; i < reg_len; i++)
        cfx_free(reg[i].key);
    cfx_free(reg);
    reg = NULL;
    reg_len = reg_cap = 0;
}

const char *cfx_side_effect_key(cfx_target t)
{
    switch (t.kind) {
    case CFX_TARGET_OP: return t.u.op ? cfx_op_name(t.u.op) : NULL;
    case CFX_TARGET_FN: return t.u.fn ? t.u.fn->qualified_name : NULL;
    default: return NULL;
    }
}

int cfx_side_effect_register(cfx_target t) { return register_key(cfx_side_effect_key(t), EFFECT_SIDE); }
int cfx_side_effect_register_name(const char *key) { return register_key(key, EFFECT_SIDE); }
int cfx_side_effect_register_nondeterministic(const char *key) { return register_key(key, EFFECT_NONDET); }

bool cfx_side_effect_is_registered(cfx_target t)
{
    if (t.kind == CFX_TARGET_FN && t.u.fn && t.u.fn->side_effect)
        return true;
    const char *key = cfx_side_effect_key(t);
    if (!key)
        return false;
    pthread_mutex_lock(&reg_lock);
    unsigned f = lookup_flags(key);
    pthread_mutex_unlock(&reg_lock);
    return (f & EFFECT_SIDE) != 0;
}

/* torch._library.utils.is_impure's `_get_effect(op) is not None`: an operator or a HOP with an
 * effect (aten::_print, a custom-class argument, call_torchbind; dispatch/effects.h) is impure,
 * so dce keeps it even unused. with_effects itself has none (its token chain keeps it). */
static bool has_effect(const cfx_target_info *info)
{
    static const char hop_prefix[] = "torch.ops.higher_order.";
    const cfx_op *op = cfx_target_info_op(info);
    if (op)
        return cfx_op_effect(op) != CFX_EFFECT_NONE;
    const cfx_builtin_fn *fn = cfx_target_info_fn(info);
    return fn && fn->qualified_name && strncmp(fn->qualified_name, hop_prefix, sizeof hop_prefix - 1) == 0 &&
           cfx_effect_of_name(fn->qualified_name + sizeof hop_prefix - 1) != CFX_EFFECT_NONE;
}

/* Refreshes a target's cached registry answers if either registry changed since (the sum of
 * two counters that only grow changes whenever one of them does). */
static void refresh(cfx_target_info *info)
{
    unsigned v = atomic_load_explicit(&reg_version, memory_order_acquire) + cfx_effects_version();
    if (info->impure_version == v)
        return;
    unsigned f = 0;
    if (info->effect_key) {
        pthread_mutex_lock(&reg_lock);
        f = lookup_flags(info->effect_key);
        pthread_mutex_unlock(&reg_lock);
    }
    const cfx_builtin_fn *fn = cfx_target_info_fn(info);
    info->impure = (f & EFFECT_SIDE) || (fn && fn->side_effect) || has_effect(info);
    info->nondeterministic = (f & EFFECT_NONDET) != 0;
    info->impure_version = v;
}

bool cfx_node_is_impure_ex(const cfx_node *n, bool impure_random)
{
    switch (n->op) {
    case CFX_NODE_PLACEHOLDER:
    case CFX_NODE_OUTPUT:
        return true;
    case CFX_NODE_CALL_FUNCTION: {
        /* the record belongs to the graph, which belongs to this thread */
        cfx_target_info *info = (cfx_target_info *)ir_target_of(n);
        const cfx_op *op = cfx_target_info_op(info);
        if (op && cfx_op_schema(op) && cfx_op_schema(op)->is_mutable)
            return true; /* impure since it mutates inputs */
        refresh(info);
        return info->impure || (impure_random && info->nondeterministic);
    }
    case CFX_NODE_CALL_MODULE: {
        const cfx_graph *g = cfx_node_graph(n);
        return g->module_impure ? g->module_impure(g, cfx_node_target_str(n), g->module_impure_ctx) : false;
    }
    default:
        return false;
    }
}

bool cfx_node_is_impure(const cfx_node *n) { return cfx_node_is_impure_ex(n, true); }
