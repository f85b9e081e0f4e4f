/* wrapped_number.c - numbers as operands (cfx_num, tensor.h; wrapped_internal.h).
 *
 * A wrapped number is what at::scalar_to_tensor + set_wrapped_number(true) make of a Python
 * number: a 0-dim CPU tensor of the number's own dtype (int64 for an int, float64 for a float,
 * bool for a bool). Its dtype is not what the op computes in: type promotion (iter.c,
 * prims' elementwise_dtypes) ranks it below every tensor, by category only. */
#include <stdatomic.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/operator_internal.h"
#include "dispatch/scope.h"
#include "dispatch/wrapped_internal.h"

/* Live wrapped numbers, all threads. A tensor on a stack was made before the call that sees
 * it (its mark happened before), so a count of 0 means that no argument is one. */
static _Atomic int64_t live_wrapped;

void cfx_wrapped_number_mark(cfx_tensor *t)
{
    t->is_wrapped_number = true;
    atomic_fetch_add_explicit(&live_wrapped, 1, memory_order_relaxed);
}

void cfx_wrapped_number_died(void) { atomic_fetch_sub_explicit(&live_wrapped, 1, memory_order_relaxed); }

static cfx_tensor *wrapped_new(cfx_value v)
{
    cfx_dtype dt = v.kind == CFX_V_DOUBLE ? CFX_FLOAT64 : v.kind == CFX_V_BOOL ? CFX_BOOL : CFX_INT64;
    cfx_tensor *t = cfx_tensor_new(NULL, 0, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (!t)
        return NULL;
    void *p = cfx_tensor_data(t);
    switch (v.kind) {
    case CFX_V_DOUBLE: memcpy(p, &v.u.d, sizeof v.u.d); break;
    case CFX_V_BOOL: *(bool *)p = v.u.b; break;
    default: memcpy(p, &v.u.i, sizeof v.u.i); break;
    }
    cfx_wrapped_number_mark(t);
    return t;
}

cfx_tensor *cfx_wrapped_number_new(cfx_value v)
{
    if (!cfx_value_is_number(v)) {
        cfx_error_set(CFX_ERR, NULL, "expected a number but got %s", cfx_value_kind_name((cfx_value_kind)v.kind));
        return NULL;
    }
    return wrapped_new(v);
}

cfx_tensor *cfx_num_int(int64_t v) { return cfx_autorelease(wrapped_new(cfx_int(v))); }
cfx_tensor *cfx_num_double(double v) { return cfx_autorelease(wrapped_new(cfx_double(v))); }
cfx_tensor *cfx_num_bool(bool v) { return cfx_autorelease(wrapped_new(cfx_bool(v))); }

cfx_tensor *cfx_num_value(cfx_value v) { return cfx_autorelease(cfx_wrapped_number_new(v)); }

cfx_value cfx_wrapped_number_value(const cfx_tensor *t)
{
    const void *p = cfx_tensor_data(t);
    switch ((cfx_dtype)t->dtype) {
    case CFX_FLOAT64: { double d; memcpy(&d, p, sizeof d); return cfx_double(d); }
    case CFX_BOOL: return cfx_bool(*(const bool *)p);
    case CFX_INT64: { int64_t i; memcpy(&i, p, sizeof i); return cfx_int(i); }
    default: return cfx_double(cfx_tensor_get_double(t, 0));
    }
}

/* torch._C._should_allow_numbers_as_tensors: the ops whose Tensor arguments take numbers */
static const char *const numbers_as_tensors[] = {
    "add", "add_", "add_out", "div", "div_", "div_out", "divide", "divide_", "divide_out",
    "mul", "mul_", "mul_out", "multiply", "multiply_", "multiply_out", "sub", "sub_", "sub_out",
    "subtract", "subtract_", "subtract_out", "true_divide", "true_divide_", "true_divide_out",
    "to", "_to_copy", "copy_", "floor_divide", "floor_divide_", "floor_divide_out", "_conj"};

bool cfx_allows_numbers_as_tensors(const cfx_schema *s)
{
    const char *sep = strstr(s->name, "::");
    const char *name = sep ? sep + 2 : s->name;
    for (size_t i = 0; i < sizeof numbers_as_tensors / sizeof *numbers_as_tensors; i++)
        if (!strcmp(name, numbers_as_tensors[i]))
            return true;
    return false;
}

int cfx_wrap_numbers(const cfx_op *op, cfx_value *stack, cfx_wrapped_batch *b)
{
    b->n = 0;
    if (!op->numbers_as_tensors)
        return CFX_OK; /* a number where a Tensor goes: the binding refuses it with its own message */
    const cfx_schema *s = op->schema;
    for (uint64_t m = op->dispatch_arg_mask; m; m &= m - 1) { /* the tensor arguments only */
        int i = __builtin_ctzll(m);
        uint32_t k = stack[i].kind;
        /* a Tensor or Tensor? argument (boxed as a tensor): what toIValue converts a number for */
        if ((k != CFX_V_INT && k != CFX_V_DOUBLE && k != CFX_V_BOOL) || op->arg_steps[i].form != CFX_BOX_TENSOR)
            continue;
        if (b->n == (int)(sizeof b->made / sizeof *b->made)) {
            cfx_wrap_numbers_end(b, NULL, 0);
            return cfx_error_set(CFX_ERR, s->name, "%s: too many numbers given for Tensor arguments", s->name);
        }
        cfx_tensor *t = wrapped_new(stack[i]);
        if (!t) {
            cfx_wrap_numbers_end(b, NULL, 0);
            return cfx_error_status();
        }
        b->made[b->n++] = t;
        stack[i] = cfx_tensor_value(t);
    }
    return CFX_OK;
}

void cfx_wrapped_batch_drop(cfx_wrapped_batch *b, const cfx_value *stack, int n_returns)
{
    for (int j = 0; j < b->n; j++) {
        bool returned = false;
        for (int i = 0; i < n_returns && !returned; i++)
            returned = stack[i].kind == CFX_V_TENSOR && stack[i].u.t == b->made[j];
        if (returned)
            cfx_autorelease(b->made[j]);
        else
            cfx_tensor_release(b->made[j]);
    }
    b->n = 0;
}

void cfx_unwrap_numbers(const cfx_schema *s, cfx_value *stack)
{
    if (atomic_load_explicit(&live_wrapped, memory_order_relaxed) == 0)
        return;
    for (int i = 0; i < s->n_args; i++)
        if (stack[i].kind == CFX_V_TENSOR && stack[i].u.t && stack[i].u.t->is_wrapped_number)
            stack[i] = cfx_wrapped_number_value(stack[i].u.t);
}

int cfx_dispatch_wrapping_numbers(const cfx_op *op, cfx_value *stack)
{
    const cfx_schema *s = op->schema;
    if (!s)
        return cfx_dispatch_stack(op, stack);
    cfx_wrapped_batch wb;
    int rc = cfx_wrap_numbers(op, stack, &wb);
    if (rc != CFX_OK)
        return rc;
    rc = cfx_dispatch_stack(op, stack);
    cfx_wrap_numbers_end(&wb, stack, rc == CFX_OK ? s->n_returns : 0);
    return rc;
}
