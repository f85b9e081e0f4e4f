/* init.c - start-up of hop/: the built-in HOPs, classes and passes, created once
 * (cfx_hop_init), and the one way a built-in HOP is defined and fetched.
 *
 * Every built-in HOP (call_torchbind, trace_wrapped, with_effects) is a name plus the same
 * handful of rules (dense, proxy, fake, functionalize, an autograd policy), and a public
 * accessor that makes sure cfx_hop_init ran; hop_define and hop_get say that once instead
 * of in each HOP's file. */
#include <pthread.h>

#include "dispatch/error.h"
#include "hop/autograd.h"
#include "hop/fake_class.h"
#include "hop/hop_internal.h"
#include "hop/torchbind.h"
#include "ir/graph_module_internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

cfx_hop *hop_define(const hop_rules *r)
{
    cfx_hop *h = cfx_hop_new(r->name, r->side_effect);
    if (!h)
        return NULL;
    int rc = CFX_OK;
    if (r->dense)
        rc |= cfx_hop_py_impl(h, CFX_KEY_CompositeExplicitAutograd, r->dense, NULL);
    if (r->proxy)
        rc |= cfx_hop_py_impl_mode(h, CFX_MODE_PROXY, r->proxy, NULL);
    if (r->fake)
        rc |= cfx_hop_py_impl_mode(h, CFX_MODE_FAKE, r->fake, NULL);
    if (r->functionalize)
        rc |= cfx_hop_py_functionalize_impl(h, r->functionalize, NULL);
    if (r->autograd == HOP_AUTOGRAD_FALLTHROUGH)
        cfx_hop_fallthrough(h, CFX_KEY_AutogradCPU);
    else if (r->autograd == HOP_AUTOGRAD_DEFERRED_ERROR)
        rc |= cfx_hop_autograd_not_implemented(h, true);
    return rc == CFX_OK ? h : NULL;
}

cfx_hop *hop_get(cfx_hop *const *slot, const char *name)
{
    cfx_hop_init();
    if (!*slot)
        cfx_error_set(CFX_ERR, NULL, "%s could not be created", name);
    return *slot;
}

static void init(void)
{
    ir_graph_module_set_object_refcount(cfx_object_retain, cfx_object_release);
    hop_torchbind_register();
    hop_tensor_queue_register();
    cfx_tensor_queue_register_fake();
    hop_trace_wrapped_register();
    hop_inline_trace_wrapped_register();
    hop_with_effects_register();
    hop_triton_kernel_wrap_register();
}

void cfx_hop_init(void) { pthread_once(&once, init); }
