/* test_tracer_module.c - cfx_module (a model's parameters), cfx_graph_module (the traced
 * graph's attributes), and the boxing adapter's leading-pointer call that make_fx uses to
 * pass the module. The error texts are nn.Module's where it has one
 * (register_parameter's KeyErrors, __getattr__'s AttributeError). */
#include <criterion/criterion.h>

#include "dispatch/boxing.h"
#include "dispatch/schema.h"
#include "ir/graph.h"
#include "ir/graph_module.h"
#include "tracer/module.h"

static void setup(void) { cfx_error_clear(); }

TestSuite(tracer_module, .init = setup);

static cfx_tensor *vec(int64_t n)
{
    return cfx_tensor_new(&n, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
}

Test(tracer_module, add_get_and_reverse_lookup)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_module *m = cfx_module_new("Net");
    cr_expect_str_eq(cfx_module_class_name(m), "Net");
    cfx_tensor *ts[40];
    char name[32];
    for (int i = 0; i < 40; i++) {
        ts[i] = vec(i + 1);
        snprintf(name, sizeof name, "layers.%d.weight", i);
        cr_assert_eq(cfx_module_add(m, name, ts[i]), CFX_OK, "%s", cfx_error_message());
        cfx_tensor_release(ts[i]); /* the module keeps its own reference */
    }
    cr_expect_eq(cfx_module_count(m), 40);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "layers.%d.weight", i);
        cr_expect_eq(cfx_module_get(m, name), ts[i]);
        cr_expect_str_eq(cfx_module_name_of(m, ts[i]), name);
        cr_expect_str_eq(cfx_module_name_at(m, i), name);
        cr_expect_eq(cfx_module_tensor_at(m, i), ts[i]);
    }
    cfx_tensor *other = vec(3);
    cr_expect_null(cfx_module_name_of(m, other));
    cr_expect_null(cfx_module_name_at(m, 40));
    /* the same tensor under a second name: the reverse lookup keeps the first */
    cr_expect_eq(cfx_module_add(m, "tied", ts[0]), CFX_OK);
    cr_expect_str_eq(cfx_module_name_of(m, ts[0]), "layers.0.weight");
    cfx_tensor_release(other);
    cfx_module_free(m);
    cr_expect_eq(cfx_tensor_live_count(), live0);
}

Test(tracer_module, errors)
{
    cfx_module *m = cfx_module_new(NULL);
    cr_expect_str_eq(cfx_module_class_name(m), "Module");
    cfx_tensor *t = vec(2);
    cr_expect_eq(cfx_module_add(m, "fc.weight", t), CFX_OK);
    cr_expect_eq(cfx_module_add(m, "fc.weight", t), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "attribute 'fc.weight' already exists");
    cfx_error_clear();
    cr_expect_eq(cfx_module_add(m, "", t), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "parameter name can't be empty string \"\"");
    const char *bad[] = {"a..b", ".a", "a.", "a b", "w-1"};
    for (int i = 0; i < 5; i++) {
        cfx_error_clear();
        cr_expect_eq(cfx_module_add(m, bad[i], t), CFX_ERR, "%s", bad[i]);
        cr_expect(strstr(cfx_error_message(), "is not a dotted path"), "%s", cfx_error_message());
    }
    cfx_error_clear();
    cr_expect_null(cfx_module_get(m, "bias"));
    cr_expect_str_eq(cfx_error_message(), "'Module' object has no attribute 'bias'");
    cfx_error_clear();
    cr_expect_null(cfx_module_get(m, "fc.bias"));
    cr_expect_str_eq(cfx_error_message(), "'Module' object has no attribute 'bias'");
    cfx_error_clear();
    cr_expect_null(cfx_module_get(m, "fc"));
    /* a submodule is not a parameter: getattr would return the module, not a tensor */
    cr_expect_str_eq(cfx_error_message(), "'fc' of 'Module' is a module, not a parameter");
    cfx_tensor_release(t);
    cfx_module_free(m);
    cfx_module_free(NULL);
}

Test(tracer_module, graph_module_attributes)
{
    int64_t live0 = cfx_tensor_live_count();
    cfx_graph_module *gm = cfx_graph_module_new(cfx_graph_new(), NULL);
    cr_expect_str_eq(cfx_graph_module_name(gm), "GraphModule");
    cr_expect_not_null(cfx_graph_module_graph(gm));
    cfx_tensor *a = vec(1), *b = vec(2);
    char name[32];
    for (int i = 0; i < 30; i++) {
        snprintf(name, sizeof name, "_tensor_constant%d", i);
        cr_assert_eq(cfx_graph_module_set_attr(gm, name, i % 2 ? b : a), CFX_OK);
    }
    cr_expect_eq(cfx_graph_module_set_attr(gm, "fc1.weight", a), CFX_OK);
    cr_expect_eq(cfx_graph_module_n_attrs(gm), 31);
    cr_expect_eq(cfx_graph_module_get_attr(gm, "_tensor_constant7"), b);
    cr_expect_str_eq(cfx_graph_module_attr_name(gm, 30), "fc1.weight");
    /* replacing keeps the position */
    cr_expect_eq(cfx_graph_module_set_attr(gm, "_tensor_constant7", a), CFX_OK);
    cr_expect_eq(cfx_graph_module_attr(gm, 7), a);
    cr_expect_eq(cfx_graph_module_n_attrs(gm), 31);
    cr_expect_null(cfx_graph_module_get_attr(gm, "nope"));
    cr_expect(cfx_graph_module_has_path(gm, "fc1"));
    cr_expect(cfx_graph_module_has_path(gm, "fc1.weight"));
    cr_expect_not(cfx_graph_module_has_path(gm, "fc"));
    cr_expect_not(cfx_graph_module_has_path(gm, "fc1.w"));
    cfx_tensor_release(a);
    cfx_tensor_release(b);
    cr_expect_gt(cfx_tensor_live_count(), live0); /* held by the module */
    cfx_graph_module_free(gm);
    cr_expect_eq(cfx_tensor_live_count(), live0);
}

/* ---- boxing: a leading `void *` before the schema's arguments ---------------------------------- */

typedef struct ctx_rec {
    int calls;
    int64_t last_n;
} ctx_rec;

static cfx_tensor *with_lead(void *ctx, cfx_tensor *x, int64_t n, double s, cfx_value alpha)
{
    ctx_rec *c = ctx;
    if (c) {
        c->calls++;
        c->last_n = n + (int64_t)s + alpha.u.i;
    }
    return x;
}

static cfx_tensor2 with_lead2(void *ctx, cfx_tensor *x, cfx_tensor *y)
{
    return ctx ? (cfx_tensor2){y, x} : (cfx_tensor2){x, y};
}

Test(tracer_module, adapter_with_leading_pointer)
{
    cfx_schema *s = cfx_schema_parse("f(Tensor x, int n, float s, Scalar alpha) -> Tensor", NULL);
    cr_assert(s);
    cfx_adapter *a = cfx_adapter_new_lead(s, (cfx_fnptr)with_lead);
    cr_assert(a);
    cfx_tensor *x = vec(2);
    ctx_rec rec = {0, 0};
    cfx_value stack[4] = {cfx_tensor_value(x), cfx_int(5), cfx_double(2.0), cfx_int(10)};
    cr_expect_eq(cfx_adapter_call_lead(a, &rec, stack), CFX_OK);
    cr_expect_eq(rec.calls, 1);
    cr_expect_eq(rec.last_n, 17);
    cr_expect_eq(stack[0].kind, CFX_V_TENSOR);
    cr_expect_eq(stack[0].u.t, x);
    /* the boxed entry passes NULL as the lead */
    cfx_value stack2[4] = {cfx_tensor_value(x), cfx_int(5), cfx_double(2.0), cfx_int(10)};
    cr_expect_eq(cfx_adapter_call_boxed(a, NULL, cfx_keyset_empty(), stack2), CFX_OK);
    cr_expect_eq(rec.calls, 1);
    /* conversions and their errors are the same as without the lead */
    cfx_value bad[4] = {cfx_tensor_value(x), cfx_double(1.5), cfx_double(2.0), cfx_int(10)};
    cr_expect_eq(cfx_adapter_call_lead(a, &rec, bad), CFX_ERR);
    cr_expect(strstr(cfx_error_message(), "Expected a value of type 'int' for argument 'n'"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_adapter_free(a);
    cfx_schema_free(s);

    s = cfx_schema_parse("g(Tensor x, Tensor y) -> (Tensor, Tensor)", NULL);
    a = cfx_adapter_new_lead(s, (cfx_fnptr)with_lead2);
    cr_assert(a);
    cfx_tensor *y = vec(3);
    cfx_value st[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
    cr_expect_eq(cfx_adapter_call_lead(a, &rec, st), CFX_OK);
    cr_expect_eq(st[0].u.t, y);
    cr_expect_eq(st[1].u.t, x);
    cfx_adapter_free(a);
    cfx_schema_free(s);
    cfx_tensor_release(x);
    cfx_tensor_release(y);
}
