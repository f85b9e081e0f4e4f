/* crossref.h - the Python-dispatcher switches and the crossref check of functionalization
 * (torch._dispatch.python: enable_python_dispatcher, no_python_dispatcher, enable_pre_dispatch,
 * enable_crossref_functionalize; PyTorch 2.13).
 *
 * The switches are thread-local guards over the thread's included keys, as the C++ guards
 * behind them are: enabling the Python dispatcher includes the PythonDispatcher key, disabling
 * it takes the key out, enabling pre-dispatch includes PreDispatch. cfx has no Python kernels,
 * so both keys have fallthrough fallbacks; the Python dispatcher matters to cfx for one thing,
 * the crossref check, which (as in PyTorch) only runs while the Python dispatcher is on.
 *
 * With crossref functionalize enabled, every op that reaches the Functionalize key, except
 * lift_fresh, first runs under a fresh fake mode on fake copies of its unwrapped arguments
 * (with the current modes and functionalization suspended, so a tracer records nothing of
 * it), then runs for real through functionalization; the outputs' sizes, dtypes and
 * significant strides (those of dimensions longer than 1) must agree, else the call fails
 * with make_crossref_functionalize's assertion text, e.g.
 *   cfxtest.liar.default(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)) output 0:
 *   strides (1, 2) != (3, 1) (mismatch at index 0)
 * which is how a Meta kernel that lies about its output is caught. All begin/end pairs nest
 * and must end in reverse order, on the thread that began them. */
#ifndef CFX_CROSSREF_H
#define CFX_CROSSREF_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/keys.h"

CFX_API void cfx_python_dispatcher_enable_begin(cfx_key_guard *g);  /* _EnablePythonDispatcher */
CFX_API void cfx_python_dispatcher_disable_begin(cfx_key_guard *g); /* _DisablePythonDispatcher */
CFX_API void cfx_pre_dispatch_enable_begin(cfx_key_guard *g);       /* _EnablePreDispatch */
/* each of the three ends with cfx_key_guard_end(g) */
CFX_API bool cfx_python_dispatcher_enabled(void);

typedef struct cfx_crossref_guard {
    cfx_key_guard keys;
    bool was_on;
} cfx_crossref_guard;
CFX_API void cfx_crossref_functionalize_begin(cfx_crossref_guard *g);
CFX_API void cfx_crossref_functionalize_end(cfx_crossref_guard *g);
/* The check runs: crossref enabled and the Python dispatcher on. */
CFX_API bool cfx_crossref_functionalize_active(void);

#endif
