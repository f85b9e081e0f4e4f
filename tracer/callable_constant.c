/* callable_constant.c - a function marked constant (torch._dynamo.assume_constant_result).
 *
 * Dynamo's invoke_and_store_as_constant converts every argument to a Python value (a tensor
 * to its real value), calls the function outside the trace and registers the result as an
 * attribute of the graph module, read by a get_attr node. In make_fx terms: the proxy and
 * fake modes are set aside for the call (so its operators leave no node and compute on real
 * data), and the result's tensors, bound to no node, are interned by their first use as
 * make_fx interns any constant (`_tensor_constantN`, one get_attr node per use, exactly the
 * graph PyTorch records for the twin). A real traced tensor is its own real value; a fake one has none,
 * unless it carries a constant (a lifted literal): that is the one argument that cannot be
 * converted, and it gets PyTorch 2.13's graph break for a failed conversion. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/mode.h"
#include "tracer/callable_internal.h"
#include "tracer/proxy.h"

static int conversion_failed(const char *name)
{
    return cfx_error_set(
        CFX_ERR, NULL,
        "assume_constant_result argument conversion failed\n"
        "  Explanation: Cannot convert argument of type TensorVariable to a Python constant for function %s "
        "marked with torch._dynamo.assume_constant_result. The variable tracker does not support constant "
        "conversion.\n"
        "  Hint: Remove torch._dynamo.assume_constant_result from this function\n"
        "  Hint: Ensure all arguments passed to the function can be converted to constants\n"
        "\n"
        "  Developer debug context: function %s, variable type TensorVariable\n"
        "\n"
        " For more details about this graph break, please visit: "
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb2520.html",
        name, name);
}

/* x.get_real_value() / as_python_constant() for one argument, in place. */
static int convert(const char *name, cfx_value *v)
{
    if (v->kind != CFX_V_TENSOR || !v->u.t || !cfx_tensor_fake_mode(v->u.t))
        return CFX_OK;
    cfx_tensor *c = cfx_fake_tensor_constant(v->u.t);
    if (!c)
        return conversion_failed(name);
    v->u.t = c;
    return CFX_OK;
}

static int constant_call(cfx_callable *c, cfx_value *stack, cfx_value *out)
{
    cfx_mode *proxy = cfx_mode_get(CFX_MODE_PROXY);
    cfx_proxy_mode *pm = proxy ? cfx_proxy_mode_from_base(proxy) : NULL;
    if (!pm) /* not tracing: an ordinary call */
        return cfx_callable_call_fn(c, stack, out);
    for (int i = 0; i < c->schema->n_args; i++)
        if (convert(c->schema->name, &stack[i]) != CFX_OK)
            return cfx_error_status();
    /* outside the trace: neither recorded nor faked (disable_proxy_modes_tracing) */
    cfx_mode *saved_proxy = cfx_mode_retain(cfx_mode_unset(CFX_MODE_PROXY));
    cfx_mode *saved_fake = cfx_mode_retain(cfx_mode_unset(CFX_MODE_FAKE));
    int rc = cfx_callable_call_fn(c, stack, out);
    int restore = CFX_OK;
    if (saved_fake)
        restore = cfx_mode_set(saved_fake, CFX_MODE_FAKE);
    if (saved_proxy && restore == CFX_OK)
        restore = cfx_mode_set(saved_proxy, CFX_MODE_PROXY);
    cfx_mode_release(saved_fake);
    cfx_mode_release(saved_proxy);
    if (rc == CFX_OK)
        rc = restore;
    return rc; /* *out holds tensors bound to no node: their first use interns them */
}

static const callable_kind constant_kind = {constant_call, NULL};

cfx_callable *cfx_callable_assume_constant(cfx_fnptr fn, const char *signature)
{
    if (!fn) {
        cfx_error_set(CFX_ERR, NULL, "cfx_callable_assume_constant: NULL function");
        return NULL;
    }
    return cfx_callable_make(&constant_kind, fn, signature);
}
