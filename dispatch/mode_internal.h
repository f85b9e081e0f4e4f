/* mode_internal.h - how the Python key reaches the mode stack (python_fallback.c, mode.c).
 *
 * Not a public header: users push modes (mode.h) and the dispatcher's default fallbacks
 * (fallbacks.c) route calls to them through the functions below. */
#ifndef CFX_MODE_INTERNAL_H
#define CFX_MODE_INTERNAL_H

#include "dispatch/mode.h"

/* cfx_mode_retain / cfx_mode_release (NULL-safe), inline for the reference every fake tensor
 * holds to its mode (FakeTensor.fake_mode): under a fake mode each operator output takes one
 * when it is made and drops it when it dies. The exported functions wrap these. */
static inline cfx_mode *cfx_mode_ref(cfx_mode *m)
{
    if (m)
        atomic_fetch_add_explicit(&m->refcount, 1, memory_order_relaxed);
    return m;
}
static inline void cfx_mode_unref(cfx_mode *m)
{
    if (m && atomic_fetch_sub_explicit(&m->refcount, 1, memory_order_acq_rel) == 1 && m->vt->destroy)
        m->vt->destroy(m);
}

/* What the Python key's fallback does with a mode set (python_fallback.c): runs the top mode's
 * handler with that mode popped and `exclude` added to the thread's excluded keys (popping the
 * last mode also takes the Python keys out of the included set), then pushes the mode back
 * into its place and restores the local key sets exactly as they were, also on error. Error
 * "trying to pop from empty mode stack" with no mode set. */
int cfx_mode_call_top(cfx_keyset exclude, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

/* `with m: return func(*args)` for a mode m that is not on the stack (the Python fallback
 * with no mode set, for a tensor's own mode): `exclude` added to the excluded keys, m pushed,
 * the op redispatched, m popped and the local key sets put back, also on error. */
int cfx_mode_call_entered(cfx_mode *m, cfx_keyset exclude, const cfx_op *op, cfx_value *stack);

/* What the Python fallback excludes for the duration of a handler: every functionality key
 * strictly above Python except PythonDispatcher (PythonFallbackKernel.cpp). */
#define CFX_MODE_ABOVE_PYTHON_KEYS                                                                 \
    ((cfx_keyset){((CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_EndOfFunctionalityKeys - 1) << 1) -         \
                   CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Python + 1)) &                                \
                  ~CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_PythonDispatcher)})

/* The Python and PythonTLSSnapshot backend fallbacks (python_fallback.c). The dispatcher's
 * default fallbacks (fallbacks.c) register them, so every dump shows their rows as PyTorch's do. */
int cfx_python_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);
int cfx_python_tls_snapshot_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

#endif
