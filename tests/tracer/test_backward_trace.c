/* test_backward_trace.c - how make_fx records the backward ops' undefined returns and the sym
 * ops, against 2.13.
 *
 * The expected graphs are what PyTorch 2.13's make_fx printed for the same programs, in real
 * and fake mode alike:
 *   f(g, x, m, r, w, b) = aten.native_layer_norm_backward(g, x, [3], m, r, w, b, [True, False, False])[0]
 *       one node and a getitem per return, the None ones included (unused);
 *   h(x) = x * aten.sym_size.int(x, 1)
 *       no sym_size node: a CompositeImplicitAutograd kernel reading static metadata, the
 *       number recorded as a literal. */
#include <criterion/criterion.h>

#include "cfx.h"
#include "tests/json_round_trip.h"

static cfx_tensor *ln_backward_grad_input(cfx_tensor *g, cfx_tensor *x, cfx_tensor *m, cfx_tensor *r, cfx_tensor *w,
                                          cfx_tensor *b)
{
    cfx_value mask[3] = {cfx_bool(true), cfx_bool(false), cfx_bool(false)};
    cfx_value ml = cfx_list(mask, 3);
    cfx_native_layer_norm_backward_result res =
        cfx_native_layer_norm_backward(g, x, CFX_INTS(3), m, r, w, b, &ml);
    cr_expect_null(res.grad_weight, "output_mask False: an undefined gradient");
    return res.grad_input;
}

static cfx_tensor *times_size(cfx_tensor *x) { return cfx_mul(x, cfx_num(cfx_sym_size(x, 1))); }

static const char want_ln[] =
    "graph():\n"
    "    %g_1 : [num_users=1] = placeholder[target=g_1]\n"
    "    %x_1 : [num_users=1] = placeholder[target=x_1]\n"
    "    %m_1 : [num_users=1] = placeholder[target=m_1]\n"
    "    %r_1 : [num_users=1] = placeholder[target=r_1]\n"
    "    %w_1 : [num_users=1] = placeholder[target=w_1]\n"
    "    %b_1 : [num_users=1] = placeholder[target=b_1]\n"
    "    %native_layer_norm_backward : [num_users=3] = call_function[target=torch.ops.aten.native_layer_norm_backward."
    "default](args = (%g_1, %x_1, [3], %m_1, %r_1, %w_1, %b_1, [True, False, False]), kwargs = {})\n"
    "    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%native_layer_norm_backward, 0), "
    "kwargs = {})\n"
    "    %getitem_1 : [num_users=0] = call_function[target=operator.getitem](args = (%native_layer_norm_backward, 1), "
    "kwargs = {})\n"
    "    %getitem_2 : [num_users=0] = call_function[target=operator.getitem](args = (%native_layer_norm_backward, 2), "
    "kwargs = {})\n"
    "    return getitem";

static const char want_size[] =
    "graph():\n"
    "    %x_1 : [num_users=1] = placeholder[target=x_1]\n"
    "    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x_1, 2), kwargs = {})\n"
    "    return mul";

static void trace_and_compare(cfx_fnptr fn, const char *sig, cfx_value *args, int n, const char *want)
{
    for (int mode = 0; mode < 2; mode++) {
        cfx_make_fx_options o = {mode ? CFX_TRACE_FAKE : CFX_TRACE_REAL, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(fn, sig, args, n, &o);
        cr_assert(gm, "%s", cfx_error_message());
        char *text = cfx_graph_to_string(cfx_graph_module_graph(gm));
        cr_expect_str_eq(text, want, "mode %d", mode);
        cfx_free(text);
        expect_module_json_round_trip(gm, want);
        cfx_graph_module_free(gm);
    }
}

Test(backward_trace, undefined_returns_are_getitems)
{
    cfx_scope s = cfx_scope_begin();
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    int64_t x2[2] = {2, 3}, st[2] = {2, 1}, w1[1] = {3};
    cfx_value args[6];
    for (int i = 0; i < 6; i++) {
        const int64_t *sz = i < 2 ? x2 : i < 4 ? st : w1;
        cfx_tensor *t = cfx_tensor_new(sz, i < 4 ? 2 : 1, CFX_FLOAT32, cpu);
        cr_assert(t);
        for (int64_t k = 0; k < cfx_tensor_numel(t); k++)
            ((float *)cfx_tensor_data(t))[k] = 0.25f * (float)(k + i + 1);
        args[i] = cfx_tensor_value(t);
    }
    trace_and_compare((cfx_fnptr)ln_backward_grad_input,
                      "(Tensor g, Tensor x, Tensor m, Tensor r, Tensor w, Tensor b) -> Tensor", args, 6, want_ln);
    cfx_scope_end(s);
}

Test(backward_trace, sym_size_is_a_literal)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_tensor_new((const int64_t[]){2, 2}, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert(x);
    cfx_value args[1] = {cfx_tensor_value(x)};
    trace_and_compare((cfx_fnptr)times_size, "(Tensor x) -> Tensor", args, 1, want_size);
    cr_expect_eq(cfx_sym_size(x, -1), 2);
    cr_expect_eq(cfx_sym_stride(x, 0), 2);
    cr_expect_eq(cfx_sym_numel(x), 4);
    cr_expect_eq(cfx_sym_storage_offset(x), 0);
    cfx_scope_end(s);
}
