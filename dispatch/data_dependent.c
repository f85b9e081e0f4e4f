/* data_dependent.c - aten::_local_scalar_dense and aten::nonzero, defined and implemented here.
 *
 * They live apart from the built-in op table because they exist for the fake tensor mode's
 * sake: they are the two canonical calls a fake tensor cannot answer (the value of an element,
 * a shape decided by the data). PyTorch defines them in native_functions.yaml; cfx defines
 * them from a FRAGMENT "aten" library with boxed CPU kernels (the Scalar return needs no libffi
 * adapter that way) and no Meta kernel, as PyTorch 1.13 has none either.
 *
 * cfx_item mirrors Python's Tensor.item(): the element-count check with the message Python
 * gives, then _local_scalar_dense through the dispatcher, so modes see the call. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "dispatch/data_dependent.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/library.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cfx_library *lib; /* process lifetime */
static cfx_op *op_item, *op_nonzero;

static int local_scalar_dense_cpu(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)ks;
    cfx_tensor *t = stack[0].u.t;
    if (cfx_tensor_numel(t) < 1)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "only one element tensors can be converted to Python scalars");
    const void *p = cfx_tensor_data(t);
    switch ((cfx_dtype)t->dtype) {
    case CFX_FLOAT32: stack[0] = cfx_double(*(const float *)p); break;
    case CFX_FLOAT64: stack[0] = cfx_double(*(const double *)p); break;
    case CFX_INT32: stack[0] = cfx_int(*(const int32_t *)p); break;
    case CFX_INT64: stack[0] = cfx_int(*(const int64_t *)p); break;
    case CFX_BOOL: stack[0] = cfx_bool(*(const bool *)p); break;
    default: return cfx_error_set(CFX_ERR, cfx_op_name(op), "_local_scalar_dense: unsupported dtype");
    }
    return CFX_OK;
}

static int nonzero_cpu(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    cfx_tensor *t = stack[0].u.t;
    int64_t numel = cfx_tensor_numel(t), count = 0;
    for (int64_t i = 0; i < numel; i++)
        count += cfx_tensor_get_double(t, i) != 0; /* NaN counts, as in PyTorch */
    int64_t sizes[2] = {count, t->ndim};
    cfx_tensor *out = cfx_tensor_new(sizes, 2, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    if (!out)
        return CFX_ERR;
    int64_t *o = cfx_tensor_data(out);
    for (int64_t i = 0; i < numel; i++) {
        if (cfx_tensor_get_double(t, i) == 0)
            continue;
        int64_t rest = i;
        for (int d = t->ndim - 1; d >= 0; d--) {
            o[d] = rest % t->sizes[d];
            rest /= t->sizes[d];
        }
        o += t->ndim;
    }
    stack[0] = cfx_tensor_value(out);
    return CFX_OK;
}

static void register_ops(void)
{
    lib = cfx_library_new(CFX_LIB_FRAGMENT, "aten", CFX_KEY_Undefined, __FILE__, __LINE__);
    if (!lib)
        return;
    if (cfx_library_def(lib, "_local_scalar_dense(Tensor self) -> Scalar") != CFX_OK ||
        cfx_library_def(lib, "nonzero(Tensor self) -> Tensor") != CFX_OK)
        return;
    CFX_IMPL_BOXED(lib, "_local_scalar_dense", CFX_KEY_CPU, local_scalar_dense_cpu, NULL);
    CFX_IMPL_BOXED(lib, "nonzero", CFX_KEY_CPU, nonzero_cpu, NULL);
    op_item = cfx_op_find("aten::_local_scalar_dense");
    op_nonzero = cfx_op_find("aten::nonzero");
}

void cfx_data_dependent_ops_register(void)
{
    cfx_dispatcher_init(); /* first, so a hook in the dispatcher's init cannot re-enter our once */
    pthread_once(&once, register_ops);
}

static cfx_op *get_op(cfx_op **slot)
{
    cfx_data_dependent_ops_register();
    if (!*slot)
        cfx_error_set(CFX_ERR, NULL, "aten::_local_scalar_dense / aten::nonzero failed to register");
    return *slot;
}

cfx_value cfx_local_scalar_dense(cfx_tensor *t)
{
    cfx_op *op = get_op(&op_item);
    if (!t || !op)
        return cfx_none();
    cfx_value stack[1] = {cfx_tensor_value(t)};
    if (cfx_op_call(op, stack, 1) != CFX_OK)
        return cfx_none();
    return stack[0];
}

double cfx_item(cfx_tensor *t)
{
    if (!t)
        return NAN;
    if (cfx_tensor_numel(t) != 1) {
        cfx_error_set(CFX_ERR, NULL, "only one element tensors can be converted to Python scalars");
        return NAN;
    }
    cfx_value v = cfx_local_scalar_dense(t);
    return cfx_value_is_number(v) ? cfx_value_to_double(v) : NAN;
}

cfx_tensor *cfx_nonzero(cfx_tensor *t)
{
    cfx_op *op = get_op(&op_nonzero);
    if (!t || !op)
        return NULL;
    cfx_value stack[1] = {cfx_tensor_value(t)};
    if (cfx_op_call(op, stack, 1) != CFX_OK)
        return NULL;
    return stack[0].u.t;
}
