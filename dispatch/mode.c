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
 * Invoking the top mode pops it for the duration of its handler: a handler's own calls then
 * dispatch to the modes below, and a handler that fails still leaves the stack as it found
 * it. That runs twice per traced node (proxy, then fake), so cfx_mode_call_top touches the
 * local key sets once on the way in (the Python fallback's exclusion and, for the last mode,
 * the Python keys, in one write) and once on the way out (the saved sets, which already hold
 * the Python keys, so the push back leaves them alone), and the stack itself is one word
 * (see mode_state). The first hop of a traced call comes straight from PythonTLSSnapshot's
 * fallback (cfx_mode_call_top_snapshot), which records the Python TLS snapshot here, from the
 * sets it saves anyway, instead of in a frame of its own. */
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/mode.h"
#include "dispatch/operator.h"

/* The slots' occupancy and the user count live in one word (mode.h's cfx_mode_state_word:
 * bit i for infra slot i, the user count from bit CFX_MODE_USER_SHIFT up), so popping the top
 * and putting it back are one load and one store each, and "any mode set" is one compare. A
 * slot's pointer means something only while its bit is set: a pop clears the bit alone. */
typedef struct mode_state {
    cfx_mode *infra[CFX_MODE_NUM_KEYS];
    cfx_mode *user[CFX_MODE_STACK_MAX];
} mode_state;

_Static_assert(CFX_MODE_NUM_KEYS <= CFX_MODE_USER_SHIFT, "the slot bits sit below the user count");
#define SLOT_BITS ((1u << CFX_MODE_USER_SHIFT) - 1)
#define USER_ONE (1u << CFX_MODE_USER_SHIFT)

static _Thread_local mode_state st;
_Thread_local unsigned cfx_mode_state_word;

static inline unsigned n_user(unsigned w) { return w >> CFX_MODE_USER_SHIFT; }

/* ------------------------------------------------------------------ refcounting */

void cfx_mode_init(cfx_mode *m, const cfx_mode_vtable *vt, cfx_mode_key key)
{
    m->vt = vt;
    m->key = key;
    atomic_init(&m->refcount, 1);
}

cfx_mode *cfx_mode_retain(cfx_mode *m)
{
    if (m)
        atomic_fetch_add_explicit(&m->refcount, 1, memory_order_relaxed);
    return m;
}

void cfx_mode_release(cfx_mode *m)
{
    if (!m)
        return;
    if (atomic_fetch_sub_explicit(&m->refcount, 1, memory_order_acq_rel) == 1 && m->vt->destroy)
        m->vt->destroy(m);
}

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

/* plain functionality keys: one bit each */
#define PYTHON_KEYS \
    (CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Python) | CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_PythonTLSSnapshot))
_Static_assert((PYTHON_KEYS & CFX_KEYS_DEFAULT_INCLUDED) == 0,
               "cfx_mode_call_top clears the Python keys in the stored (XOR-encoded) included set");

static cfx_keyset python_keys(void) { return (cfx_keyset){PYTHON_KEYS}; }

static void set_python_included(bool on)
{
    cfx_local_keys k = cfx_local_keys_get();
    if (on)
        k.included = cfx_keyset_or(k.included, python_keys());
    else
        k.included = cfx_keyset_minus(k.included, python_keys());
    cfx_local_keys_set(k);
}

static bool valid_key(int key) { return key >= 0 && key < CFX_MODE_NUM_KEYS; }

static __attribute__((noinline, cold)) int slot_taken(int slot)
{
    return cfx_error_set(CFX_ERR, NULL, "trying to set the current %s, but one already exists",
                         cfx_mode_key_name((cfx_mode_key)slot));
}

static __attribute__((noinline, cold)) int user_overflow(void)
{
    return cfx_error_set(CFX_ERR, NULL, "mode stack overflow: more than %d user modes pushed", CFX_MODE_STACK_MAX);
}

/* Puts m into infra slot `slot`, or on top of the user stack for slot < 0, leaving the local
 * key sets alone (the callers decide about the Python keys). */
static inline int put_mode(cfx_mode *m, int slot)
{
    unsigned w = cfx_mode_state_word;
    if (slot >= 0) {
        if (__builtin_expect(w >> slot & 1, 0))
            return slot_taken(slot);
        st.infra[slot] = m;
        cfx_mode_state_word = w | 1u << slot;
    } else {
        if (__builtin_expect(n_user(w) >= CFX_MODE_STACK_MAX, 0))
            return user_overflow();
        st.user[n_user(w)] = m;
        cfx_mode_state_word = w + USER_ONE;
    }
    return CFX_OK;
}

/* Removes and returns the top of the logical stack (NULL when nothing is set), leaving the
 * local key sets alone; *slot gets its infra key or -1. */
static inline cfx_mode *take_top(int *slot)
{
    unsigned w = cfx_mode_state_word;
    *slot = CFX_MODE_USER;
    if (n_user(w) > 0) {
        cfx_mode_state_word = w - USER_ONE;
        return st.user[n_user(w) - 1];
    }
    if (!w)
        return NULL;
    int i = 31 - __builtin_clz(w);
    cfx_mode_state_word = w & ~(1u << i);
    *slot = i;
    return st.infra[i];
}

/* A push: the first mode brings the Python keys into the included set. */
static int push_to(cfx_mode *m, int slot)
{
    bool first = cfx_mode_state_word == 0;
    int rc = put_mode(m, slot);
    if (rc == CFX_OK && first)
        set_python_included(true);
    return rc;
}

/* A pop: the last mode takes the Python keys out of the included set. */
static cfx_mode *pop_top(int *slot)
{
    cfx_mode *out = take_top(slot);
    if (out && cfx_mode_state_word == 0)
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
    if (!valid_key(key) || !(cfx_mode_state_word >> key & 1))
        return NULL;
    cfx_mode_state_word &= ~(1u << key);
    if (cfx_mode_state_word == 0)
        set_python_included(false);
    return st.infra[key];
}

cfx_mode *cfx_mode_get(cfx_mode_key key)
{
    return valid_key(key) && (cfx_mode_state_word >> key & 1) ? st.infra[key] : NULL;
}

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
    unsigned n = n_user(cfx_mode_state_word);
    if (n == 0 || st.user[n - 1] != m)
        return cfx_error_set(CFX_ERR, NULL, "cfx_mode_exit: %s is not the top user mode",
                             cfx_mode_name(m));
    int slot;
    pop_top(&slot);
    return CFX_OK;
}

cfx_mode *cfx_mode_stack_at(int idx)
{
    if (idx < 0 || idx >= cfx_mode_stack_len()) {
        cfx_error_set(CFX_ERR, NULL, "Tried to get stack at idx that's too big");
        return NULL;
    }
    unsigned w = cfx_mode_state_word;
    for (int i = 0; i < CFX_MODE_NUM_KEYS; i++) {
        if (w >> i & 1) {
            if (idx == 0)
                return st.infra[i];
            idx--;
        }
    }
    return st.user[idx];
}

cfx_mode *cfx_mode_top(void)
{
    unsigned w = cfx_mode_state_word;
    if (n_user(w) > 0)
        return st.user[n_user(w) - 1];
    return w ? st.infra[31 - __builtin_clz(w)] : NULL;
}

/* ------------------------------------------------------------------ invoking modes */

_Thread_local cfx_local_keys cfx_mode_tls_on_entry;
_Thread_local bool cfx_mode_tls_on_entry_set;

static __attribute__((noinline, cold)) int empty_stack(const cfx_op *op)
{
    return cfx_error_set(CFX_ERR, cfx_op_name(op), "trying to pop from empty mode stack");
}

/* The excluded set (as stored) with `exclude` added: the stored form is XOR'ed with the
 * default excluded keys, so an added default key clears its bit and any other sets it. */
static inline uint64_t raw_excluded_with(uint64_t raw, cfx_keyset exclude)
{
    return (raw | (exclude.repr & ~CFX_KEYS_DEFAULT_EXCLUDED)) & ~(exclude.repr & CFX_KEYS_DEFAULT_EXCLUDED);
}

/* cfx_mode_call_top's body. snapshot: also PythonTLSSnapshot's MaybeSetTLSOnEntryGuard, i.e.
 * record the local key sets as the call entered (what is saved here anyway) unless an outer
 * call recorded them, and forget them again afterwards. */
static inline __attribute__((always_inline)) int call_top(cfx_keyset exclude, const cfx_op *op, cfx_keyset ks,
                                                          cfx_value *stack, bool snapshot)
{
    /* StashTorchDispatchModeGuard: pop for the duration, put back in the same place. An infra
     * top (the usual case: proxy, then fake) is popped right here; w - 1 wraps for an empty
     * stack, and user modes count from above the slot bits: take_top does those. */
    unsigned w = cfx_mode_state_word;
    int slot;
    cfx_mode *m;
    if (__builtin_expect(w - 1 < SLOT_BITS, 1)) {
        slot = 31 - __builtin_clz(w);
        m = st.infra[slot];
        cfx_mode_state_word = w ^ 1u << slot;
    } else if (!(m = take_top(&slot))) {
        return empty_stack(op);
    }
    /* The stored (XOR-encoded) sets are saved and put back verbatim. Python keys are not among
     * the default included keys, so clearing them in the stored form clears them. */
    uint64_t saved_inc = cfx_local_keys_raw.included.repr, saved_exc = cfx_local_keys_raw.excluded.repr;
    bool had_snapshot = false;
    if (snapshot) {
        had_snapshot = cfx_mode_tls_on_entry_set;
        if (!had_snapshot) {
            cfx_mode_tls_on_entry.included.repr = saved_inc;
            cfx_mode_tls_on_entry.excluded.repr = saved_exc;
            cfx_mode_tls_on_entry_set = true;
        }
    }
    cfx_local_keys_raw.included.repr = saved_inc & ~(cfx_mode_state_word ? 0 : PYTHON_KEYS);
    cfx_local_keys_raw.excluded.repr = raw_excluded_with(saved_exc, exclude);
    int rc = m->vt->dispatch(m, op, ks, stack);
    cfx_local_keys_raw.included.repr = saved_inc;
    cfx_local_keys_raw.excluded.repr = saved_exc;
    if (snapshot)
        cfx_mode_tls_on_entry_set = had_snapshot;
    /* a handler that left a mode in m's slot: its own status if it failed, else put_mode's */
    int prc = put_mode(m, slot);
    return rc < 0 ? rc : prc;
}

int cfx_mode_call_top(cfx_keyset exclude, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    return call_top(exclude, op, ks, stack, false);
}

int cfx_mode_call_top_python(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    return call_top(CFX_MODE_ABOVE_PYTHON_KEYS, op, ks, stack, false);
}

int cfx_mode_call_top_snapshot(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    return call_top(CFX_MODE_ABOVE_PYTHON_KEYS, op, ks, stack, true);
}

int cfx_mode_redispatch(const cfx_op *op, cfx_value *stack)
{
    return cfx_op_dispatch_stack(op, stack);
}
