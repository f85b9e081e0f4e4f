/* fallbacks.c - cfx's dispatcher-wide default backend fallbacks.
 *
 * Every tensor carries more keys than the ones with kernels (a dense CPU tensor is
 * {CPU, ADInplaceOrView, AutogradCPU, AutocastCPU}) and every thread includes BackendSelect and
 * ADInplaceOrView by default. PyTorch registers backend fallbacks for these keys so an op
 * without a kernel there goes on to the next key; cfx registers the same keys, once, from
 * cfx_dispatcher_init (so they come before any user registration, as static initialisers do in
 * PyTorch). The keys are PyTorch 2.13's (torch._C._dispatch_dump_table of an op with no
 * kernels, kept in tests/data/dispatch_scenarios.txt as "oracle_fallbacks"); the debug
 * strings are cfx's own file and line.
 *
 *   BackendSelect, ADInplaceOrView, AutocastCPU/MTIA/MAIA/XPU/MPS/CUDA, FuncTorchVmapMode,
 *   VmapMode: fallthrough, as in 2.13.
 *
 *   PreDispatch and the Autograd alias (AutogradOther, every Autograd<Backend>,
 *   AutogradNestedTensor): fallthrough, where 2.13 registers boxed kernels
 *   (PythonFallbackKernel.cpp's preDispatchFallback, VariableFallbackKernel.cpp's autograd
 *   fallback) that only redispatch below their key. cfx has no autograd and no pre-dispatch
 *   tracing, so the two are the same call; a fallthrough is masked out before the slot is
 *   chosen and costs no hop. 2.13 leaves AutogradHIP, AutogradVE, AutogradPrivateUse2/3 and
 *   AutogradNestedTensor without one; cfx covers them too, because a fallthrough on some
 *   backends' Autograd keys only makes every op's fallthrough masks differ per backend, which
 *   costs each call a lookup of its highest backend (27 more instructions per traced node,
 *   scripts/instr-per-node.sh) for keys no cfx tensor carries.
 *
 *   Python and PythonTLSSnapshot hand a call to the dispatch mode stack (mode.h,
 *   python_fallback.c), as PythonFallbackKernel.cpp's do. They are registered here, with the
 *   rest, so that every computed table shows their rows from the start and no thread can
 *   dispatch while they are being added.
 *
 * Not registered, deliberately: 2.13's Meta fallback (its "attempted to run this operator with
 * Meta tensors, but there was no fake impl or Meta kernel registered" error): the fake mode
 * reads an op's computed Meta slot to know whether the op has a Meta kernel, so a fallback
 * there would claim one for every op; cfx reports the missing Meta kernel as a missing kernel.
 * Functionalize's is the functionalization kernel (functionalize.c), as 2.13's functionalizeFallback.
 * Conjugate's is the conj bit's MathOpFallback (kernels/conj.c), Negative's the neg bit's
 * (kernels/neg_view.c). And the fallbacks of functionalities cfx does not implement (ZeroTensor, Tracer, functorch, Batched, PythonDispatcher): no cfx tensor or thread
 * carries those keys. */
#include <stddef.h>

#include "dispatch/conj_internal.h"
#include "dispatch/neg_internal.h"
#include "dispatch/functional_internal.h"
#include "dispatch/library.h"
#include "dispatch/mode.h"
#include "dispatch/mode_internal.h"
#include "dispatch/registry.h"

static cfx_library *defaults;

static const cfx_dispatch_key fallthrough_keys[] = {
    CFX_KEY_BackendSelect,     CFX_KEY_ADInplaceOrView, CFX_KEY_Autograd,     CFX_KEY_AutocastCPU,
    CFX_KEY_AutocastMTIA,      CFX_KEY_AutocastMAIA,    CFX_KEY_AutocastXPU,  CFX_KEY_AutocastMPS,
    CFX_KEY_AutocastCUDA,      CFX_KEY_FuncTorchVmapMode, CFX_KEY_VmapMode,   CFX_KEY_PreDispatch,
    CFX_KEY_PythonDispatcher, /* cfx has no Python kernels to route to (crossref.h) */
};

void cfx_fallbacks_register_defaults(void)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, __FILE__, __LINE__);
    if (!lib)
        return;
    for (size_t i = 0; i < sizeof fallthrough_keys / sizeof fallthrough_keys[0]; i++)
        cfx_library_fallback_at(lib, fallthrough_keys[i], NULL, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_Python, cfx_python_fallback, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_PythonTLSSnapshot, cfx_python_tls_snapshot_fallback, NULL,
                            __FILE__, __LINE__);
    /* functionalization (functional.h): 2.13's functionalizeFallback */
    cfx_library_fallback_at(lib, CFX_KEY_Functionalize, cfx_functionalize_fallback, NULL, __FILE__, __LINE__);
    /* conjugate views (conj_internal.h): 2.13's conjugateFallback */
    cfx_library_fallback_at(lib, CFX_KEY_Conjugate, cfx_conj_fallback, NULL, __FILE__, __LINE__);
    /* negative views (neg_internal.h): 2.13's negationFallback */
    cfx_library_fallback_at(lib, CFX_KEY_Negative, cfx_neg_fallback, NULL, __FILE__, __LINE__);
    defaults = lib;
}

void cfx_dispatcher_drop_default_fallbacks(void)
{
    cfx_dispatcher_init();
    cfx_library_free(defaults);
    defaults = NULL;
}
