/* mode.c - the thread's dispatch mode stack (c10::impl::TorchDispatchModeTLS, PyTorch 2.x).
 *
 * The state is three infra slots (FAKE, PROXY, FUNCTIONAL) and a bounded array of user modes,
 * all thread-local, so two threads each tracing under their own modes never see each other's.
 * The logical stack a handler sees is the occupied slots in slot order followed by the user
 * modes; the generic pop takes the user top first and then the highest occupied slot, which
 * is what keeps "proxy above fake" true whatever order they were pushed in.
 *
 * The Python and PythonTLSSnapshot keys are put in the thread's included set when the first
 * mode is set and taken out when the last one goes, exactly on those transitions as c10 does
 * (not re-synchronised on every change, so a guard that excludes Python keeps working).
 *
 * Invoking the top mode (the Python fallback does, python_fallback.c) pops it for the duration
 * of its handler, as Python's __torch_dispatch__ runs under _pop_mode_temporarily: a handler's
 * own calls then dispatch to the modes below, and a handler that fails still leaves the stack
 * and the local key sets as it found them. */
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/keys_internal.h"
#include "dispatch/mode.h"
#include "dispatch/mode_internal.h"
#include "dispatch/operator.h"
#include "dispatch/operator_internal.h"
#include "dispatch/wrapped_internal.h"

typedef struct mode_state {
    cfx_mode *infra[CFX_MODE_NUM_KEYS]; /* NULL = empty slot */
    unsigned infra_set; /* bit i: infra[i] is occupied, so the top slot is one bit scan (every
                           call through the Python key pops and puts back the top mode) */
    cfx_mode *user[CFX_MODE_STACK_MAX];
    int n_user;
} mode_state;

static _Thread_local mode_state st;

/* Whether the logical stack holds a mode. */
static inline bool any_set(void) { return st.infra_set || st.n_user; }

/* ------------------------------------------------------------------ refcounting */

void cfx_mode_init(cfx_mode *m, const cfx_mode_vtable *vt, cfx_mode_key key)
{
    m->vt = vt;
    m->key = key;
    atomic_init(&m->refcount, 1);
}

cfx_mode *cfx_mode_retain(cfx_mode *m) { return cfx_mode_ref(m); }

void cfx_mode_release(cfx_mode *m) { cfx_mode_unref(m); }

/* ------------------------------------------------------------------ the stack */

const char *cfx_mode_key_name(cfx_mode_key key)
{
    /* c10's to_string never learnt FUNCTIONAL's name; the message says what PyTorch says. */
    switch (key) {
    case CFX_MODE_PROXY: return "ProxyTorchDispatchMode";
    case CFX_MODE_FAKE: return "FakeTensorMode";
    default: return "UNKNOWN_MODE";
    }
}

static cfx_keyset python_keys(void)
{
    return (cfx_keyset){CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Python) |
                        CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_PythonTLSSnapshot)};
}

static void set_python_included(bool on)
{
    cfx_local_keys k = cfx_keys_local();
    if (on)
        k.included = cfx_keyset_or(k.included, python_keys());
    else
        k.included = cfx_keyset_minus(k.included, python_keys());
    cfx_keys_set_local(k);
}

static bool valid_key(int key) { return key >= 0 && key < CFX_MODE_NUM_KEYS; }

/* Puts m into infra slot `slot`, or on top of the user stack for slot < 0, leaving the local
 * key sets alone (the callers decide about the Python keys). */
static inline int put_mode(cfx_mode *m, int slot)
{
    if (slot >= 0) {
        if (st.infra[slot])
            return cfx_error_set(CFX_ERR, NULL, "trying to set the current %s, but one already exists",
                                 cfx_mode_key_name((cfx_mode_key)slot));
        st.infra[slot] = m;
        st.infra_set |= 1u << slot;
    } else {
        if (st.n_user >= CFX_MODE_STACK_MAX)
            return cfx_error_set(CFX_ERR, NULL, "mode stack overflow: more than %d user modes pushed",
                                 CFX_MODE_STACK_MAX);
        st.user[st.n_user++] = m;
    }
    return CFX_OK;
}

/* Removes and returns the top of the logical stack (NULL when nothing is set), leaving the
 * local key sets alone; *slot gets its infra key or -1. */
static inline cfx_mode *take_top(int *slot)
{
    *slot = CFX_MODE_USER;
    cfx_mode *m = NULL;
    if (st.n_user > 0) {
        m = st.user[--st.n_user];
    } else if (st.infra_set) {
        int i = 31 - __builtin_clz(st.infra_set); /* the highest occupied slot */
        m = st.infra[i];
        st.infra[i] = NULL;
        st.infra_set &= ~(1u << i);
        *slot = i;
    }
    return m;
}

/* A push: the first mode brings the Python keys into the included set. */
static int push_to(cfx_mode *m, int slot)
{
    bool first = !any_set();
    int rc = put_mode(m, slot);
    if (rc == CFX_OK && first)
        set_python_included(true);
    return rc;
}

/* A pop: the last mode takes the Python keys out of the included set. */
static cfx_mode *pop_top(int *slot)
{
    cfx_mode *out = take_top(slot);
    if (out && !any_set())
        set_python_included(false);
    return out;
}

int cfx_mode_set(cfx_mode *m, cfx_mode_key key)
{
    if (!m || !valid_key(key))
        return cfx_error_set(CFX_ERR, NULL, "cfx_mode_set: invalid mode or mode key %d", (int)key);
    cfx_dispatcher_init();
    return push_to(m, key);
}

cfx_mode *cfx_mode_unset(cfx_mode_key key)
{
    if (!valid_key(key) || !st.infra[key])
        return NULL;
    cfx_mode *m = st.infra[key];
    st.infra[key] = NULL;
    st.infra_set &= ~(1u << key);
    if (!any_set())
        set_python_included(false);
    return m;
}

cfx_mode *cfx_mode_get(cfx_mode_key key) { return valid_key(key) ? st.infra[key] : NULL; }

int cfx_mode_push(cfx_mode *m)
{
    if (!m || !m->vt || !m->vt->dispatch)
        return cfx_error_set(CFX_ERR, NULL, "cfx_mode_push: a mode needs a vtable with dispatch");
    cfx_dispatcher_init();
    return push_to(m, valid_key(m->key) ? m->key : CFX_MODE_USER);
}

cfx_mode *cfx_mode_pop(void)
{
    int slot;
    cfx_mode *m = pop_top(&slot);
    if (!m)
        cfx_error_set(CFX_ERR, NULL, "trying to pop from empty mode stack");
    return m;
}

int cfx_mode_exit(cfx_mode *m)
{
    if (!m)
        return cfx_error_set(CFX_ERR, NULL, "cfx_mode_exit: NULL mode");
    if (valid_key(m->key)) {
        if (cfx_mode_get((cfx_mode_key)m->key) != m)
            return cfx_error_set(CFX_ERR, NULL, "cfx_mode_exit: %s is not the current %s",
                                 cfx_mode_name(m), cfx_mode_key_name((cfx_mode_key)m->key));
        cfx_mode_unset((cfx_mode_key)m->key);
        return CFX_OK;
    }
    if (st.n_user == 0 || st.user[st.n_user - 1] != m)
        return cfx_error_set(CFX_ERR, NULL, "cfx_mode_exit: %s is not the top user mode",
                             cfx_mode_name(m));
    int slot;
    pop_top(&slot);
    return CFX_OK;
}

int cfx_mode_stack_len(void) { return __builtin_popcount(st.infra_set) + st.n_user; }

bool cfx_mode_any_set(void) { return any_set(); }

cfx_mode *cfx_mode_stack_at(int idx)
{
    if (idx < 0 || idx >= cfx_mode_stack_len()) {
        cfx_error_set(CFX_ERR, NULL, "Tried to get stack at idx that's too big");
        return NULL;
    }
    for (int i = 0; i < CFX_MODE_NUM_KEYS; i++) {
        if (st.infra[i]) {
            if (idx == 0)
                return st.infra[i];
            idx--;
        }
    }
    return st.user[idx];
}

cfx_mode *cfx_mode_top(void)
{
    if (st.n_user > 0)
        return st.user[st.n_user - 1];
    for (int i = CFX_MODE_NUM_KEYS - 1; i >= 0; i--)
        if (st.infra[i])
            return st.infra[i];
    return NULL;
}

/* ------------------------------------------------------------------ invoking modes */

int cfx_mode_call_top(cfx_keyset exclude, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    /* StashTorchDispatchModeGuard: pop for the duration, put back in the same place */
    int slot;
    cfx_mode *m = take_top(&slot);
    if (!m)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "trying to pop from empty mode stack");
    cfx_local_keys saved = cfx_keys_local(), k = saved;
    k.excluded = cfx_keyset_or(k.excluded, exclude);
    if (!any_set()) /* popping the last mode takes the Python keys out */
        k.included = cfx_keyset_minus(k.included, python_keys());
    cfx_keys_set_local(k);
    int rc = m->vt->dispatch(m, op, ks, stack);
    cfx_keys_set_local(saved);
    /* a handler that left a mode in m's slot: its own status if it failed, else put_mode's */
    int prc = put_mode(m, slot);
    return rc < 0 ? rc : prc;
}

int cfx_mode_call_entered(cfx_mode *m, cfx_keyset exclude, const cfx_op *op, cfx_value *stack)
{
    cfx_key_guard g;
    cfx_exclude_keys_begin(&g, exclude);
    int rc = cfx_mode_push(m);
    if (rc == CFX_OK) {
        rc = cfx_mode_redispatch(op, stack);
        int erc = cfx_mode_exit(m);
        if (rc == CFX_OK)
            rc = erc;
    }
    cfx_key_guard_end(&g);
    return rc;
}

/* A mode calls the op with the numbers it was given (wrapped_internal.h): they are wrapped
 * numbers again below it. The walk that computes the key set notices them (as arguments with
 * no tensor): the usual call, tensors only, is dispatched with that key set. */
int cfx_mode_redispatch(const cfx_op *op, cfx_value *stack)
{
    bool missing;
    uint64_t args = cfx_op_arg_keys(op, stack, &missing);
    if (missing)
        return cfx_dispatch_wrapping_numbers(op, stack);
    return cfx_dispatch_call_slot(op, cfx_op_mask_keyset(op, (cfx_keyset){args}, cfx_keys_local()), stack);
}
