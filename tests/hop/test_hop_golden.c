/* test_hop_golden.c - PyTorch 2.13's error texts for HOPs, torchbind and fake classes
 * (tests/data/hop_errors.tsv from tools/interop/gen_hop.py, object addresses removed), each
 * reproduced by the same misuse in C. */
#include <criterion/criterion.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

/* The golden message of case name, unescaped (\n, \\); malloc'd. */
static char *expected(const char *name)
{
    char *all = read_golden("tests/data/hop_errors.tsv");
    cr_assert(all, "cannot open tests/data/hop_errors.tsv");
    size_t n = strlen(name);
    char *msg = NULL;
    for (char *line = all; *line && !msg; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
        if (strncmp(line, name, n) != 0 || line[n] != '\t')
            continue;
        const char *p = line + n + 1;
        msg = malloc(strlen(p) + 1);
        char *w = msg;
        for (; *p && *p != '\n'; p++) {
            if (*p == '\\' && (p[1] == 'n' || p[1] == '\\')) {
                *w++ = p[1] == 'n' ? '\n' : '\\';
                p++;
            } else {
                *w++ = *p;
            }
        }
        *w = '\0';
    }
    free(all);
    cr_assert(msg, "no golden case %s", name);
    return msg;
}

static void check(const char *name, int rc)
{
    cr_assert_neq(rc, CFX_OK, "%s: no error", name);
    char *want = expected(name);
    cr_expect_str_eq(cfx_error_message(), want, "%s", name);
    free(want);
    cfx_error_clear();
}

static int const_impl(cfx_hop *hop, cfx_mode *mode, void *ctx, const cfx_value *args, int n, cfx_value *out)
{
    (void)hop, (void)mode, (void)ctx, (void)n;
    *out = n > 0 ? args[0] : cfx_int(1);
    return CFX_OK;
}

static cfx_tensor *ones(void)
{
    int64_t shape[1] = {2};
    return cfx_autorelease(cfx_tensor_new(shape, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)));
}

static int passthrough(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)m, (void)ks;
    return cfx_mode_redispatch(op, stack);
}
static const cfx_mode_vtable other_vt = {"__main__.error_cases.<locals>.Other", passthrough, NULL};

Test(hop_golden, dispatch_and_registration_errors)
{
    cfx_scope s = cfx_scope_begin();
    cfx_hop *foo = cfx_hop_new("foo", false);
    cfx_value out, t = cfx_tensor_value(ones()), one = cfx_int(1);
    check("missing_autograd_kernel", cfx_hop_call(foo, &t, 1, &out));
    check("missing_kernel_undefined", cfx_hop_call(foo, &one, 1, &out));
    cfx_hop_py_impl(foo, CFX_KEY_CompositeExplicitAutograd, const_impl, NULL);
    check("override", cfx_hop_py_impl(foo, CFX_KEY_CompositeExplicitAutograd, const_impl, NULL));
    check("python_key", cfx_hop_py_impl(foo, CFX_KEY_Python, const_impl, NULL));
    cfx_hop_py_impl_mode(foo, CFX_MODE_PROXY, const_impl, NULL);
    check("mode_twice", cfx_hop_py_impl_mode(foo, CFX_MODE_PROXY, const_impl, NULL));
    cfx_mode m;
    cfx_mode_init(&m, &other_vt, CFX_MODE_USER);
    cfx_mode_push(&m);
    check("no_rule", cfx_hop_call(foo, NULL, 0, &out));
    cfx_mode_exit(&m);

    cfx_hop *strict = cfx_hop_new("strict_hop", false);
    cfx_hop_py_impl(strict, CFX_KEY_CompositeExplicitAutograd, const_impl, NULL);
    cfx_hop_autograd_not_implemented(strict, false);
    cfx_tensor *g = ones();
    cfx_tensor_set_requires_grad(g, true);
    cfx_value gv = cfx_tensor_value(g);
    check("autograd_strict", cfx_hop_call(strict, &gv, 1, &out));
    cfx_scope_end(s);
}

Test(hop_golden, torchbind_errors)
{
    cfx_scope s = cfx_scope_begin();
    int64_t zero[1] = {0};
    cfx_object *q = cfx_tensor_queue_new(cfx_autorelease(cfx_tensor_new(zero, 1, CFX_FLOAT32,
                                                                         cfx_device_make(CFX_DEVICE_CPU))));
    cfx_hop *h = cfx_call_torchbind_hop();
    static const char *const names[] = {"first_arg_int", "first_arg_tensor", "first_arg_none", "first_arg_str"};
    cfx_value firsts[4] = {cfx_int(1), cfx_tensor_value(ones()), cfx_none(), cfx_string("s")};
    cfx_key_guard kg;
    cfx_exclude_keys_begin(&kg, cfx_autograd_keyset());
    for (int i = 0; i < 4; i++) {
        cfx_value args[2] = {firsts[i], cfx_string("pop")}, out;
        check(names[i], cfx_hop_call(h, args, 2, &out));
    }
    cfx_key_guard_end(&kg);
    cfx_value out, one = cfx_int(1);
    check("no_such_method", cfx_call_torchbind(q, "nope", NULL, 0, &out));
    check("push_wrong_type", cfx_call_torchbind(q, "push", &one, 1, &out));
    check("push_missing", cfx_call_torchbind(q, "push", NULL, 0, &out));
    cfx_deregister_fake_class("_TorchScriptTesting::_TensorQueue");
    cfx_fake_mode *fm = cfx_fake_mode_new(NULL);
    cfx_object *f = cfx_to_fake_obj(fm, q);
    check("missing_fake_class", f ? CFX_OK : CFX_ERR);
    cfx_fake_mode_free(fm);
    cfx_object_release(q);
    cfx_scope_end(s);
}
