/* effects.c - the effect registry, tokens, and aten::_print (effects.h).
 *
 * The registry is a small process-wide table behind a lock (registrations are rare, lookups
 * happen once per op reaching functionalization with tokens on). aten::_print is defined here,
 * with 2.13's schema and tags, rather than in the op table: it takes a string and returns
 * nothing, so it has no place in the tensor-kernel goldens; its CompositeExplicitAutograd
 * kernel prints the string and a newline to stdout (`std::cout << s << std::endl`), and its
 * Meta kernel does nothing (2.13's meta registration), so a fake trace prints nothing. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/effects.h"
#include "dispatch/error.h"
#include "dispatch/functional.h"
#include "dispatch/functional_internal.h"
#include "dispatch/library.h"
#include "dispatch/schema.h"
#include "dispatch/tensor_ext.h"

typedef struct entry {
    char *name;
    cfx_effect_type effect;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table;
static int n_table, cap_table;
static _Atomic(cfx_effects_handler) handler;
static atomic_uint version = 1; /* bumped by every change: is_impure's caches (ir/) follow it */

const char *cfx_effect_type_name(cfx_effect_type e)
{
    return e == CFX_EFFECT_ORDERED ? "EffectType.ORDERED" : NULL;
}

static int find(const char *name)
{
    for (int i = 0; i < n_table; i++)
        if (!strcmp(table[i].name, name))
            return i;
    return -1;
}

int cfx_register_effectful_op(const char *qualname, cfx_effect_type e)
{
    if (!qualname)
        return cfx_error_set(CFX_ERR, NULL, "_register_effectful_op: NULL operator name");
    if (e != CFX_EFFECT_NONE && (e < 0 || e >= CFX_EFFECT_NUM_TYPES))
        return cfx_error_set(CFX_ERR, NULL, "_register_effectful_op: invalid effect type %d", (int)e);
    int rc = CFX_OK;
    pthread_mutex_lock(&lock);
    int i = find(qualname);
    if (e == CFX_EFFECT_NONE) {
        if (i >= 0) {
            cfx_free(table[i].name);
            table[i] = table[--n_table];
        }
    } else if (i >= 0) {
        table[i].effect = e;
    } else {
        if (n_table == cap_table) {
            int cap = cap_table ? 2 * cap_table : 8;
            entry *t = cfx_realloc(table, (size_t)cap * sizeof *t);
            if (!t)
                rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            else
                table = t, cap_table = cap;
        }
        char *copy = rc == CFX_OK ? cfx_strdup(qualname) : NULL;
        if (rc == CFX_OK && !copy)
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        if (rc == CFX_OK)
            table[n_table++] = (entry){copy, e};
    }
    if (rc == CFX_OK)
        atomic_fetch_add(&version, 1);
    pthread_mutex_unlock(&lock);
    return rc;
}

unsigned cfx_effects_version(void) { return atomic_load_explicit(&version, memory_order_acquire); }

cfx_effect_type cfx_effect_of_name(const char *qualname)
{
    if (!qualname)
        return CFX_EFFECT_NONE;
    pthread_mutex_lock(&lock);
    int i = find(qualname);
    cfx_effect_type e = i >= 0 ? table[i].effect : CFX_EFFECT_NONE;
    pthread_mutex_unlock(&lock);
    return e;
}

cfx_effect_type cfx_op_effect(const cfx_op *op)
{
    const cfx_schema *s = op ? cfx_op_schema(op) : NULL;
    if (!s)
        return CFX_EFFECT_NONE;
    cfx_effect_type e = cfx_effect_of_name(s->name);
    if (e != CFX_EFFECT_NONE)
        return e;
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->kind == CFX_TYPE_CLASS)
            return CFX_EFFECT_ORDERED;
    return CFX_EFFECT_NONE;
}

bool cfx_op_has_effects(const cfx_op *op)
{
    const cfx_schema *s = op ? cfx_op_schema(op) : NULL;
    if (!s)
        return false;
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->alias)
            return false;
    for (int i = 0; i < s->n_returns; i++)
        if (s->returns[i].type->alias)
            return false;
    return cfx_op_effect(op) != CFX_EFFECT_NONE;
}

/* ---- tokens ------------------------------------------------------------------------------- */

static uint64_t token_owner(void)
{
    static atomic_uint_fast64_t id;
    return cfx_lazy_binding_owner(&id);
}

static char token_mark; /* the binding's data: any non-NULL address */

int cfx_tensor_mark_token(cfx_tensor *t)
{
    if (!t)
        return cfx_error_set(CFX_ERR, NULL, "cfx_tensor_mark_token: NULL tensor");
    return cfx_tensor_binding_set(t, token_owner(), &token_mark, NULL);
}

cfx_tensor *cfx_token_new(void)
{
    static const int64_t zero[1] = {0};
    cfx_tensor *t = cfx_tensor_new(zero, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    if (t && cfx_tensor_mark_token(t) != CFX_OK)
        return NULL;
    return t;
}

bool cfx_tensor_is_token(const cfx_tensor *t)
{
    if (!t)
        return false;
    return cfx_tensor_binding_get(cfx_functional_value(t), token_owner()) != NULL;
}

void cfx_effects_set_handler(cfx_effects_handler h) { atomic_store(&handler, h); }
cfx_effects_handler cfx_effects_get_handler(void) { return atomic_load(&handler); }

/* ---- aten::_print ------------------------------------------------------------------------- */

static void print_kernel(const char *s)
{
    fputs(s, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void print_meta(const char *s) { (void)s; }

/* The registration lives for the process, like the built-in ops' (kept reachable here). */
static cfx_library *volatile print_lib; /* volatile: a write-only static would be optimised away */

void cfx_effects_init(void)
{
    cfx_library *lib = print_lib = cfx_library_new(CFX_LIB_FRAGMENT, "aten", CFX_KEY_Undefined, __FILE__, __LINE__);
    if (!lib)
        return;
    cfx_library_def_tagged_at(lib, "_print(str s) -> ()", CFX_ALIAS_FROM_SCHEMA, cfx_tag_bit(CFX_TAG_pt2_compliant_tag),
                              __FILE__, __LINE__);
    cfx_library_impl_at(lib, "_print", CFX_KEY_CompositeExplicitAutograd, (cfx_fnptr)print_kernel, __FILE__, __LINE__);
    cfx_library_impl_at(lib, "_print", CFX_KEY_Meta, (cfx_fnptr)print_meta, __FILE__, __LINE__);
    /* 2.13's pre-registered effects (torch/_library/effects.py) */
    cfx_register_effectful_op("aten::_print", CFX_EFFECT_ORDERED);
    cfx_register_effectful_op("aten::_linalg_check_errors", CFX_EFFECT_ORDERED);
    cfx_register_effectful_op("call_torchbind", CFX_EFFECT_ORDERED);
}
