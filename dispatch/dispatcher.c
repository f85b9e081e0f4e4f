/* dispatcher.c - the operator registry, backend fallbacks and the call path (c10::Dispatcher).
 *
 * The registry maps "ns::name.overload" to its cfx_op through an open-addressing hash table
 * and keeps the ops in a list in creation order. An entry is created by the first def or impl
 * that names it and destroyed when the last registration referring to it goes away (c10's
 * cleanup), so a freed library leaves nothing behind. DEF libraries claim their namespace
 * here; backend fallbacks live in one table indexed like the ops' dispatch tables, and every
 * op is refreshed when a fallback comes or goes.
 *
 * Registration takes one process-wide lock (recursive, because a warning handler may look
 * ops up). The call path takes no lock and allocates nothing: it ORs the key sets of the
 * tensor arguments (positions precomputed from the schema), applies the thread's
 * include/exclude sets and the op's fallthrough mask, and indexes the table. Calls racing with
 * registration are not supported (as in PyTorch, register before calling from several
 * threads). */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/fork_internal.h"
#include "dispatch/hash.h"
#include "dispatch/dispatcher.h"
#include "dispatch/boxing_internal.h"
#include "dispatch/ops.h"
#include "dispatch/error.h"
#include "dispatch/mode.h"
#include "dispatch/wrapped_internal.h"
#include "dispatch/registry.h"
#include "dispatch/tensor.h"

/* ---- lock and init ------------------------------------------------------------------------- */

static pthread_mutex_t registry_mutex;
static pthread_once_t mutex_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Thread_local bool initializing; /* the defaults register through the public API */

static void init_mutex(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&registry_mutex, &a);
    pthread_mutexattr_destroy(&a);
}

void cfx_registry_lock(void)
{
    pthread_once(&mutex_once, init_mutex);
    pthread_mutex_lock(&registry_mutex);
}

void cfx_registry_unlock(void) { pthread_mutex_unlock(&registry_mutex); }

/* fork(): the registry is taken before, released in the parent, re-created in the child (a
 * recursive mutex cannot be unlocked by the child's thread, whose id differs). */
__attribute__((constructor)) static void registry_fork_guard(void)
{
    pthread_once(&mutex_once, init_mutex);
    cfx_fork_guard_fn(CFX_FORK_RANK_REGISTRY, cfx_registry_lock, cfx_registry_unlock, init_mutex);
}

static void do_init(void)
{
    initializing = true;
    cfx_fallbacks_register_defaults();
    /* The built-in operators come with the dispatcher, so `cfx ops --list` and every lookup by
     * name see them without the caller touching a wrapper first. */
    cfx_builtin_ops_init();
    cfx_effects_init();
    initializing = false;
}

void cfx_dispatcher_init(void)
{
    if (initializing)
        return;
    pthread_once(&init_once, do_init);
}

/* ---- the name -> op table ------------------------------------------------------------------ */

static cfx_op **slots; /* NULL = empty, TOMBSTONE = deleted */
static size_t n_slots, n_used, n_live;
static cfx_op *first_op, *last_op;
static cfx_op tombstone_op;
#define TOMBSTONE (&tombstone_op)

/* The slot holding name, or the slot where it would go (first tombstone or empty). */
static size_t probe(const char *name, bool *found)
{
    size_t mask = n_slots - 1, i = (size_t)cfx_hash_str(name) & mask, free_slot = (size_t)-1;
    for (;; i = (i + 1) & mask) {
        cfx_op *o = slots[i];
        if (!o) {
            *found = false;
            return free_slot != (size_t)-1 ? free_slot : i;
        }
        if (o == TOMBSTONE) {
            if (free_slot == (size_t)-1)
                free_slot = i;
        } else if (strcmp(o->qualified_name, name) == 0) {
            *found = true;
            return i;
        }
    }
}

static bool grow(void)
{
    size_t cap = n_slots ? n_slots * 2 : 256;
    while (n_live * 2 >= cap)
        cap *= 2;
    cfx_op **ns = cfx_calloc(cap, sizeof *ns);
    if (!ns)
        return false;
    cfx_op **old = slots;
    size_t old_n = n_slots;
    slots = ns;
    n_slots = cap;
    n_used = n_live;
    for (size_t i = 0; i < old_n; i++)
        if (old[i] && old[i] != TOMBSTONE) {
            bool f;
            slots[probe(old[i]->qualified_name, &f)] = old[i];
        }
    cfx_free(old);
    return true;
}

static cfx_op *lookup(const char *name)
{
    if (!n_slots)
        return NULL;
    bool found;
    size_t i = probe(name, &found);
    return found ? slots[i] : NULL;
}

cfx_op *cfx_registry_find_or_create(const char *qualified_name)
{
    cfx_op *op = lookup(qualified_name);
    if (op)
        return op;
    if ((n_used + 1) * 4 >= n_slots * 3 && !grow()) {
        cfx_error_set(CFX_ERR_NOMEM, qualified_name, "out of memory");
        return NULL;
    }
    op = cfx_opentry_new(qualified_name);
    if (!op)
        return NULL;
    bool found;
    size_t i = probe(qualified_name, &found);
    if (!slots[i])
        n_used++;
    slots[i] = op;
    n_live++;
    op->reg_prev = last_op;
    if (last_op)
        last_op->reg_next = op;
    else
        first_op = op;
    last_op = op;
    return op;
}

void cfx_registry_cleanup(cfx_op *op)
{
    if (op->def_and_impl_count > 0)
        return;
    bool found;
    size_t i = probe(op->qualified_name, &found);
    if (found)
        slots[i] = TOMBSTONE;
    n_live--;
    if (op->reg_prev)
        op->reg_prev->reg_next = op->reg_next;
    else
        first_op = op->reg_next;
    if (op->reg_next)
        op->reg_next->reg_prev = op->reg_prev;
    else
        last_op = op->reg_prev;
    cfx_opentry_free(op);
}

cfx_op *cfx_op_lookup(const char *qualified_name)
{
    cfx_dispatcher_init();
    if (!qualified_name)
        return NULL;
    cfx_registry_lock();
    cfx_op *op = lookup(qualified_name);
    if (op && !op->schema)
        op = NULL; /* impl-only operators are invisible until their def arrives */
    cfx_registry_unlock();
    return op;
}

cfx_op *cfx_op_find(const char *qualified_name)
{
    cfx_op *op = cfx_op_lookup(qualified_name);
    if (op)
        return op;
    if (!qualified_name) {
        cfx_error_set(CFX_ERR, NULL, "cfx_op_find: the operator name is NULL");
        return NULL;
    }
    /* findSchemaOrThrow's text: "Could not find schema for " name "." overload */
    const char *dot = strchr(qualified_name, '.');
    size_t n = dot ? (size_t)(dot - qualified_name) : strlen(qualified_name);
    cfx_error_set(CFX_ERR, qualified_name, "Could not find schema for %.*s.%s", (int)n, qualified_name,
                  dot ? dot + 1 : "");
    return NULL;
}

static int list_ops(cfx_op **out, int cap, bool with_schema)
{
    cfx_dispatcher_init();
    cfx_registry_lock();
    int n = 0;
    for (cfx_op *op = first_op; op; op = op->reg_next)
        if ((op->schema != NULL) == with_schema) {
            if (n < cap && out)
                out[n] = op;
            n++;
        }
    cfx_registry_unlock();
    return n;
}

int cfx_op_list(cfx_op **out, int cap) { return list_ops(out, cap, true); }
int cfx_op_list_dangling(cfx_op **out, int cap) { return list_ops(out, cap, false); }

int cfx_dispatcher_check_all_invariants(void)
{
    cfx_dispatcher_init();
    cfx_registry_lock();
    int rc = CFX_OK;
    for (cfx_op *op = first_op; op && rc == CFX_OK; op = op->reg_next)
        rc = cfx_op_check_invariants(op);
    cfx_registry_unlock();
    return rc;
}

/* ---- namespaces ---------------------------------------------------------------------------- */

typedef struct ns_claim {
    char *ns, *debug;
    struct ns_claim *next;
} ns_claim;
static ns_claim *claims;

int cfx_registry_claim_namespace(const char *ns, const char *debug)
{
    for (ns_claim *c = claims; c; c = c->next)
        if (strcmp(c->ns, ns) == 0)
            return cfx_error_set(
                CFX_ERR, NULL,
                "Only a single TORCH_LIBRARY can be used to register the namespace %s; please put all of your "
                "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                "explicitly indicate this.  Previous registration of TORCH_LIBRARY was %s; latest registration "
                "was %s",
                ns, c->debug, debug);
    ns_claim *c = cfx_calloc(1, sizeof *c);
    if (c) {
        c->ns = cfx_strdup(ns);
        c->debug = cfx_strdup(debug);
    }
    if (!c || !c->ns || !c->debug) {
        if (c) {
            cfx_free(c->ns);
            cfx_free(c->debug);
        }
        cfx_free(c);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    c->next = claims;
    claims = c;
    return CFX_OK;
}

void cfx_registry_release_namespace(const char *ns)
{
    for (ns_claim **p = &claims; *p; p = &(*p)->next)
        if (strcmp((*p)->ns, ns) == 0) {
            ns_claim *c = *p;
            *p = c->next;
            cfx_free(c->ns);
            cfx_free(c->debug);
            cfx_free(c);
            return;
        }
}

/* ---- backend fallbacks --------------------------------------------------------------------- */

static cfx_kernel fallbacks[CFX_NUM_RUNTIME_ENTRIES];

const cfx_kernel *cfx_dispatcher_backend_fallback(int table_index)
{
    if (table_index < 0 || table_index >= CFX_NUM_RUNTIME_ENTRIES)
        return NULL;
    return &fallbacks[table_index];
}

int cfx_registry_register_fallback(cfx_dispatch_key key, cfx_boxed_fn fn, void *ctx, const char *debug)
{
    int idx = cfx_key_table_index(key);
    if (idx < 0 || idx >= CFX_NUM_RUNTIME_ENTRIES)
        return cfx_error_set(CFX_ERR, NULL, "idx=%d", idx);
    cfx_kernel *f = &fallbacks[idx];
    if (cfx_kernel_is_valid(f))
        return cfx_error_set(CFX_ERR, NULL,
                             "Tried to register multiple backend fallbacks for the same dispatch key %s; previous "
                             "registration %s, new registration %s",
                             cfx_key_name(key), f->debug, debug);
    char *d = cfx_strdup(debug);
    if (!d)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *f = (cfx_kernel){
        .boxed = fn ? fn : cfx_fallthrough_kernel,
        .ctx = fn ? ctx : NULL,
        .flags = CFX_KERNEL_VALID | (fn ? 0u : (unsigned)CFX_KERNEL_FALLTHROUGH),
        .debug = d,
    };
    for (cfx_op *op = first_op; op; op = op->reg_next)
        cfx_opentry_update_fallback(op, key);
    return CFX_OK;
}

void cfx_registry_deregister_fallback(cfx_dispatch_key key)
{
    int idx = cfx_key_table_index(key);
    if (idx < 0 || idx >= CFX_NUM_RUNTIME_ENTRIES)
        return;
    char *d = (char *)fallbacks[idx].debug;
    fallbacks[idx] = (cfx_kernel){0};
    for (cfx_op *op = first_op; op; op = op->reg_next)
        cfx_opentry_update_fallback(op, key);
    cfx_free(d);
}

/* ---- the call path ------------------------------------------------------------------------- */

cfx_keyset cfx_op_dispatch_keyset(const cfx_op *op, const cfx_value *stack) { return cfx_dispatch_keyset(op, stack); }

/* PyTorch's argument-binding errors: "ns::name() <what>. Declaration: <schema>", what
 * formatted from fmt (the call path keeps no buffer for it). */
static int call_error(const cfx_op *op, const char *fmt, ...)
{
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_printf(&m, "%s() ", op->schema->name);
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    cfx_buf_puts(&m, ". Declaration: ");
    cfx_schema_print(op->schema, &m);
    char *msg = cfx_buf_take(&m);
    int rc = cfx_error_set_text(CFX_ERR, op->qualified_name, msg ? msg : "bad arguments");
    cfx_free(msg);
    return rc;
}

int cfx_dispatch_slot_error(const cfx_op *op, cfx_keyset ks)
{
    const cfx_kernel *k = cfx_op_kernel_for(op, ks);
    if (!cfx_kernel_is_valid(k))
        return cfx_dispatch_missing_kernel_error(op, ks);
    return cfx_error_set(CFX_ERR, op->qualified_name, "%s: the kernel for %s has no boxed entry",
                         op->qualified_name, cfx_key_name(cfx_keyset_highest_priority(ks)));
}

/* Whether the op takes stack[i] as it is (op->arg_kinds_as_is: a tensor for a Tensor, a number
 * for a Scalar, an int for an int, ...): a bit test, and the tensor's key set added to *ks. */
static inline bool taken_as_is(const uint32_t *as_is, const cfx_value *v, int i, uint64_t *ks)
{
    uint32_t k = v->kind;
    if (k == CFX_V_TENSOR) {
        if (!(as_is[i] & 1u << CFX_V_TENSOR) || !v->u.t)
            return false;
        *ks |= v->u.t->keys.repr;
        return true;
    }
    return k < 32 && (as_is[i] >> k & 1);
}

/* torch.ops' binding of stack[0..n_args) in one walk: each argument checked against its type
 * (the first mismatch is the error; cfx_box_check_arg's rules), the union of the tensor
 * arguments' key sets (cfx_op_arg_keys's), and the numbers given for Tensor arguments of an
 * op that takes them wrapped into wb (cfx_wrap_numbers). A plain Tensor that is None or
 * undefined is refused after every argument passed its check, as c10 refuses it when it
 * dispatches.
 *
 * cfx_op_call walks the arguments the op takes as they are (take_as_is); bind_rest continues
 * the walk from the first other one, ks the key sets so far. Nothing else was recorded before
 * it (no number to wrap, no missing Tensor), as the full rules would have left it. */
static int bind_rest(const cfx_op *op, cfx_value *stack, int i, uint64_t ks, cfx_wrapped_batch *wb,
                     uint64_t *keys)
{
    const cfx_schema *s = op->schema;
    int missing = -1;
    bool numbers = false;
    for (; i < s->n_args; i++) {
        if (taken_as_is(op->arg_kinds_as_is, &stack[i], i, &ks))
            continue; /* the arguments after the first other one are mostly taken as they are too */
        cfx_box_step st = op->arg_steps[i];
        const cfx_value *v = &stack[i];
        if (st.form == CFX_BOX_TENSOR && v->kind == CFX_V_TENSOR && v->u.t) {
            if (i < 64) /* the dispatch arguments are the first 64 (schema.h's tensor_arg_mask) */
                ks |= v->u.t->keys.repr;
            continue;
        }
        if (st.form == CFX_BOX_TENSOR && op->numbers_as_tensors && i < 64 && cfx_value_is_number(*v)) {
            numbers = true; /* wrapped below, then a tensor like the others */
            continue;
        }
        int rc = cfx_box_check_arg(s, st, op->qualified_name, stack, i);
        if (rc != CFX_OK)
            return rc;
        if (i >= 64)
            continue;
        if (st.form == CFX_BOX_TENSOR && !st.optional && missing < 0)
            missing = i; /* None or undefined: the check let it through */
        else if (st.form == CFX_BOX_TENSOR_LIST)
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && v->u.items[j].u.t)
                    ks |= v->u.items[j].u.t->keys.repr;
    }
    if (numbers) {
        int rc = cfx_wrap_numbers(op, stack, wb);
        if (rc != CFX_OK)
            return rc;
        for (int j = 0; j < wb->n; j++)
            ks |= wb->made[j]->keys.repr;
    }
    if (missing >= 0)
        return cfx_error_set(CFX_ERR, op->qualified_name,
                             "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #%d "
                             "'%s'",
                             missing, s->args[missing].name);
    *keys = ks;
    return CFX_OK;
}

/* The binding's first part: the arguments from the first taken as they are, their tensors'
 * key sets in *ks. Returns where it stopped: n_args when every argument was. */
static inline int take_as_is(const cfx_op *op, const cfx_value *stack, int n_args, uint64_t *ks)
{
    uint64_t keys = 0;
    int i = 0;
    while (i < n_args && taken_as_is(op->arg_kinds_as_is, &stack[i], i, &keys))
        i++;
    *ks = keys;
    return i;
}

/* The call of an op with an argument not taken as is: the rest of the binding (which may wrap
 * numbers), the call, and the wrapped numbers dropped after it. */
static int bind_and_call(cfx_op *op, cfx_value *stack, int i, uint64_t ks)
{
    /* a number given for a Tensor is a wrapped number from here on (wrapped_internal.h) */
    cfx_wrapped_batch wb;
    wb.n = 0; /* not the whole struct: what was made is only read up to n */
    uint64_t keys = 0;
    int rc = bind_rest(op, stack, i, ks, &wb, &keys);
    if (rc == CFX_OK)
        rc = cfx_dispatch_call_slot(op, cfx_op_mask_keyset(op, (cfx_keyset){keys}, cfx_keys_local()), stack);
    cfx_wrap_numbers_end(&wb, stack, rc == CFX_OK ? op->schema->n_returns : 0);
    return rc;
}

int cfx_op_call(cfx_op *op, cfx_value *stack, int n, int cap)
{
    if (!op)
        return cfx_error_occurred() ? cfx_error_status()
                                    : cfx_error_set(CFX_ERR, NULL, "cfx_op_call: the operator is NULL");
    const cfx_schema *s = op->schema;
    if (!s)
        return cfx_error_set(CFX_ERR, op->qualified_name,
                             "Could not find schema for %s but we found an implementation; did you forget to def() "
                             "the operator?",
                             op->qualified_name);
    int n_args = s->n_args;
    int need = n_args > s->n_returns ? n_args : s->n_returns;
    if (!stack || cap < need || n > cap)
        return cfx_error_set(CFX_ERR, op->qualified_name,
                             "cfx_op_call: %s needs a stack of %d values (its arguments and returns), but the stack "
                             "holds %d",
                             op->qualified_name, need, stack ? cap : 0);
    if (n < 0 || (n > n_args && !s->is_vararg))
        return call_error(op, "expected at most %d argument(s) but received %d argument(s)", n_args, n);
    for (int i = n; i < n_args; i++) {
        if (!s->args[i].has_default)
            return call_error(op, "is missing value for argument '%.100s'", s->args[i].name);
        stack[i] = s->args[i].default_value;
    }
    uint64_t ks;
    int i = take_as_is(op, stack, n_args, &ks);
    if (i < n_args)
        return bind_and_call(op, stack, i, ks);
    /* the common call: every argument taken as is, no number wrapped, nothing to do after */
    return cfx_dispatch_call_slot(op, cfx_op_mask_keyset(op, (cfx_keyset){ks}, cfx_keys_local()), stack);
}

int cfx_op_redispatch(const cfx_op *op, cfx_keyset ks, cfx_value *stack) { return cfx_dispatch_redispatch(op, ks, stack); }

int cfx_op_dispatch_stack(const cfx_op *op, cfx_value *stack) { return cfx_dispatch_stack(op, stack); }

/* c10's listAllDispatchKeys: runtime keys with a valid slot, ascending. */
static void list_available(const cfx_op *op, cfx_buf *b)
{
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    int n = cfx_keyset_runtime_keys(cfx_keyset_full(), keys, CFX_NUM_RUNTIME_ENTRIES);
    bool any = false;
    cfx_buf_putc(b, '[');
    for (int i = 0; i < n; i++) {
        int idx = cfx_key_table_index(keys[i]);
        if (idx < 0 || !cfx_kernel_is_valid(&op->table[idx]))
            continue;
        if (any)
            cfx_buf_puts(b, ", ");
        cfx_buf_puts(b, cfx_key_name(keys[i]));
        any = true;
    }
    cfx_buf_putc(b, ']');
}

int cfx_dispatch_missing_kernel_error(const cfx_op *op, cfx_keyset ks)
{
    /* c10 reports a broken invariant first: it is the better explanation */
    int rc = cfx_op_check_invariants(op);
    if (rc != CFX_OK)
        return rc;
    cfx_dispatch_key k = cfx_keyset_highest_priority(ks);
    const char *name = op->qualified_name;
    cfx_buf b;
    cfx_buf_init(&b);
    if (k == CFX_KEY_Undefined) {
        cfx_buf_printf(&b,
                       "There were no tensor arguments to this function (e.g., you passed an empty list of "
                       "Tensors), but no fallback function is registered for schema %s.  This usually means that "
                       "this function requires a non-empty list of Tensors, or that you (the operator writer) "
                       "forgot to register a fallback function.  Available functions are ",
                       name);
    } else {
        cfx_buf_printf(&b,
                       "Could not run '%s' with arguments from the '%s' backend. This could be because the "
                       "operator doesn't exist for this backend, or was omitted during the selective/custom build "
                       "process (if using custom build). If you are a Facebook employee using PyTorch on mobile, "
                       "please visit https://fburl.com/ptmfixes for possible resolutions. '%s' is only available "
                       "for these backends: ",
                       name, cfx_key_name(k), name);
    }
    list_available(op, &b);
    cfx_buf_puts(&b, ".\n\n");
    char *table = cfx_op_dump_computed_table(op);
    if (table)
        cfx_buf_puts(&b, table);
    cfx_free(table);
    char *msg = cfx_buf_take(&b);
    rc = cfx_error_set_text(CFX_ERR_NOTIMPL, name, msg ? msg : "no kernel");
    cfx_free(msg);
    return rc;
}
