/* fallbacks.c - cfx's dispatcher-wide default backend fallbacks.
 *
 * Every tensor carries more keys than the ones with kernels (a dense CPU tensor is
 * {CPU, ADInplaceOrView, AutogradCPU, AutocastCPU}) and every thread includes BackendSelect and
 * ADInplaceOrView by default. PyTorch registers fallthrough fallbacks for these functionality
 * keys so an op without a kernel there skips straight to the next key; cfx registers the same
 * ones, once, from cfx_dispatcher_init (so they come before any user registration, as static
 * initialisers do in PyTorch):
 *
 *   BackendSelect, ADInplaceOrView, AutocastCPU, AutocastCUDA: fallthrough, as in PyTorch.
 *
 *   Autograd (the alias: AutogradOther, AutogradCPU .. AutogradPrivateUse3, AutogradNestedTensor):
 *   fallthrough. This is a deliberate difference. PyTorch 1.13 registers fallthroughs only for
 *   AutogradOther/CPU/CUDA/XLA/MPS/XPU/HPU/Lazy, and every aten op has its own autograd kernel
 *   (VariableType), so its tensors never stop at the other autograd keys; a custom op called on
 *   a meta tensor, though, fails at 'AutogradMeta'. cfx has no autograd at all, so stopping at
 *   an autograd key could only ever produce that error: the whole alias falls through, and a
 *   meta tensor reaches its Meta kernel.
 *
 * - Python and PythonTLSSnapshot hand a call to the dispatch mode stack (mode.h,
 *   python_fallback.c), as PyTorch's PythonFallbackKernel.cpp does. They are registered here,
 *   with the rest, so that every computed table shows their rows from the start and no thread
 *   can dispatch while they are being added. */
#include <stddef.h>

#include "dispatch/library.h"
#include "dispatch/mode.h"
#include "dispatch/registry.h"

static cfx_library *defaults;

void cfx_fallbacks_register_defaults(void)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, __FILE__, __LINE__);
    if (!lib)
        return;
    cfx_library_fallback_at(lib, CFX_KEY_BackendSelect, NULL, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_ADInplaceOrView, NULL, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_AutocastCPU, NULL, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_AutocastCUDA, NULL, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_Autograd, NULL, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_Python, cfx_python_fallback, NULL, __FILE__, __LINE__);
    cfx_library_fallback_at(lib, CFX_KEY_PythonTLSSnapshot, cfx_python_tls_snapshot_fallback, NULL,
                            __FILE__, __LINE__);
    defaults = lib;
}

void cfx_dispatcher_drop_default_fallbacks(void)
{
    cfx_dispatcher_init();
    cfx_library_free(defaults);
    defaults = NULL;
}
