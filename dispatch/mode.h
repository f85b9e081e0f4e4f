/* mode.h - dispatch modes and the thread's mode stack (__torch_dispatch__ modes in C).
 *
 * A mode intercepts every operator call made while it is on the stack, as a Python
 * TorchDispatchMode does: it is a struct with a vtable whose dispatch() receives the operator,
 * the key set and the boxed stack (kernel.h's convention: arguments in, returns out). Embed
 * cfx_mode as the first member of your own struct:
 *
 *     typedef struct { cfx_mode base; int calls; } counting_mode;
 *     static int counting_dispatch(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
 *     {
 *         ((counting_mode *)m)->calls++;
 *         return cfx_mode_redispatch(op, stack);      // func(*args): the mode below, or kernels
 *     }
 *     static const cfx_mode_vtable counting_vt = {"CountingMode", counting_dispatch, NULL};
 *     counting_mode cm; cfx_mode_init(&cm.base, &counting_vt, CFX_MODE_USER);
 *     cfx_mode_push(&cm.base); ... cfx_mode_pop(); cfx_mode_release(&cm.base);
 *
 * The stack is per thread and is PyTorch 2.x's LOGICAL stack: three infrastructure slots
 * (FAKE, PROXY, FUNCTIONAL, bottom to top, each empty or holding one mode) under the user
 * modes in push order. So whatever the order they were pushed in, user modes run first, then a
 * functional mode, then a proxy mode, and a fake mode last. While any mode is set the thread's
 * included key set has Python and PythonTLSSnapshot, which is how calls with no tensor
 * arguments (empty.memory_format) still reach the modes; they leave with the last mode.
 *
 * A call reaches the Python key's fallback (python_fallback.c), which pops the top mode for
 * the duration of its handler (so calls the handler makes go to the modes below it) and pushes
 * it back afterwards, also on error. With no mode set, a tensor argument that belongs to a
 * mode (a fake tensor, tensor_ext.h) enters that mode for the call, as FakeTensor's own
 * __torch_dispatch__ does.
 *
 * The stack does not own the modes on it: a mode must stay alive while it is pushed. Modes are
 * reference counted so tensors can keep the mode they belong to alive (a fake tensor keeps its
 * fake mode). Key guards (keys.h) restore the whole local key state: begin and end them
 * around, not across, a push or pop. */
#ifndef CFX_MODE_H
#define CFX_MODE_H

#include <stdatomic.h>
#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/keys.h"
#include "dispatch/value.h"

/* _TorchDispatchModeKey: the infrastructure slots, lowest priority first. */
typedef enum cfx_mode_key {
    CFX_MODE_USER = -1, /* not an infra mode: goes on the user stack */
    CFX_MODE_FAKE = 0,
    CFX_MODE_PROXY = 1,
    CFX_MODE_FUNCTIONAL = 2,
    CFX_MODE_NUM_KEYS = 3
} cfx_mode_key;

/* User modes one thread can have pushed at once. */
#define CFX_MODE_STACK_MAX 64

typedef struct cfx_mode cfx_mode;

/* The handler: stack[0..n_args) holds the arguments (defaults filled in); on success write
 * the returns to stack[0..n_returns) and return CFX_OK, else record an error and return a
 * negative status. The mode itself is off the stack while this runs. */
typedef int (*cfx_mode_dispatch_fn)(cfx_mode *self, const cfx_op *op, cfx_keyset ks,
                                    cfx_value *stack);

typedef struct cfx_mode_vtable {
    const char *name;              /* type name, e.g. "FakeTensorMode" */
    cfx_mode_dispatch_fn dispatch; /* required */
    void (*destroy)(cfx_mode *self); /* optional: frees the enclosing struct at refcount 0 */
} cfx_mode_vtable;

struct cfx_mode {
    const cfx_mode_vtable *vt;
    int key;             /* cfx_mode_key: which slot cfx_mode_push uses */
    atomic_int refcount; /* 1 after cfx_mode_init */
};

CFX_API void cfx_mode_init(cfx_mode *m, const cfx_mode_vtable *vt, cfx_mode_key key);
CFX_API cfx_mode *cfx_mode_retain(cfx_mode *m); /* NULL-safe; returns m */
CFX_API void cfx_mode_release(cfx_mode *m);     /* NULL-safe; calls vt->destroy at 0 */
static inline const char *cfx_mode_name(const cfx_mode *m) { return m->vt->name; }

/* Push: an infra mode (key >= 0) goes into its slot (error "trying to set the current
 * FakeTensorMode, but one already exists" if occupied), a user mode on top of the user stack.
 * Returns CFX_OK or a negative status with the error recorded. */
CFX_API int cfx_mode_push(cfx_mode *m);
/* Generic pop (_pop_torch_dispatch_stack()): the top user mode, else the highest occupied
 * infra slot. NULL + error "trying to pop from empty mode stack" when nothing is set. */
CFX_API cfx_mode *cfx_mode_pop(void);
/* Pops m's own place: its slot for an infra mode, else the user top. Errors if that place
 * does not hold m. For symmetric push/pop in C code. */
CFX_API int cfx_mode_exit(cfx_mode *m);

/* The infra slots (torch._C._get/_set/_unset_dispatch_mode). */
CFX_API cfx_mode *cfx_mode_get(cfx_mode_key key);   /* NULL if empty */
CFX_API int cfx_mode_set(cfx_mode *m, cfx_mode_key key);
CFX_API cfx_mode *cfx_mode_unset(cfx_mode_key key); /* returns what was there (may be NULL) */

/* The logical stack: index 0 is the bottom (lowest-priority infra slot). */
CFX_API int cfx_mode_stack_len(void);
CFX_API bool cfx_mode_any_set(void);
CFX_API cfx_mode *cfx_mode_stack_at(int idx); /* NULL + error "Tried to get stack at idx that's too big" */
/* The mode the next call would reach first (top of the logical stack), or NULL. */
CFX_API cfx_mode *cfx_mode_top(void);

/* "FakeTensorMode" / "ProxyTorchDispatchMode" / "UNKNOWN_MODE" (c10's to_string). */
CFX_API const char *cfx_mode_key_name(cfx_mode_key key);

/* Calls op on stack as `func(*args)` does inside __torch_dispatch__: a fresh dispatch with the
 * thread's current key sets and mode stack, so it reaches the next mode down (the caller is
 * popped), else a tensor's own mode, else the kernels. stack holds all schema arguments. */
CFX_API int cfx_mode_redispatch(const cfx_op *op, cfx_value *stack);

/* The Python TLS snapshot (at::impl::RestorePythonTLSSnapshot): inside a handler, restores
 * the local key sets recorded when the call entered PythonTLSSnapshot, so a call made in
 * between runs with the keys above Python (autograd, ...) again. */
typedef struct cfx_tls_snapshot_guard {
    cfx_local_keys saved_keys;
    cfx_local_keys saved_entry;
    bool active;
} cfx_tls_snapshot_guard;
CFX_API int cfx_tls_snapshot_restore_begin(cfx_tls_snapshot_guard *g); /* error outside a handler */
CFX_API void cfx_tls_snapshot_restore_end(cfx_tls_snapshot_guard *g);

#endif
