/* test_mode.c - the dispatch mode stack and the Python key fallback (mode.h).
 *
 * Key-set texts and the stack lengths nested handlers observe come from PyTorch 2.13
 * (tests/data/mode_keys.txt, tools/interop/gen_keys.py). The infra-slot rules (FAKE / PROXY /
 * FUNCTIONAL) are PyTorch 2.x's; their messages are c10's. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(mode, .init = setup);

/* ------------------------------------------------------------------ helpers */

/* The text of mode_keys.txt's row `name` (malloc'd). */
static char *golden(const char *name)
{
    char *text = read_golden("tests/data/mode_keys.txt");
    cr_assert_not_null(text, "tests/data/mode_keys.txt missing or without its golden header (run from the repo root)");
    size_t n;
    char **lines = split_lines(text, &n);
    char *out = NULL;
    for (size_t i = 0; lines && i < n && !out; i++) {
        char *tab = strchr(lines[i], '\t');
        if (tab && (size_t)(tab - lines[i]) == strlen(name) && strncmp(lines[i], name, strlen(name)) == 0)
            out = strdup(tab + 1);
    }
    free(lines);
    free(text);
    cr_assert_not_null(out, "no golden line %s", name);
    return out;
}

static char *keyset_str(cfx_keyset s)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_keyset_print(s, &b);
    return cfx_buf_take(&b);
}

static void assert_keys(cfx_keyset s, const char *golden_name)
{
    char *want = golden(golden_name);
    char *got = keyset_str(s);
    cr_assert_str_eq(got, want);
    free(got);
    free(want);
}

typedef struct rec_mode {
    cfx_mode base;
    int calls;
    int seen_len;       /* stack length at the first call */
    bool top_was_self;  /* the mode was on the stack during its own handler */
    cfx_keyset seen_inc, seen_exc, seen_ks;
    char last_op[64];
    bool fail;          /* return an error instead of redispatching */
    bool snapshot;      /* read the TLS snapshot */
    cfx_local_keys snap;
    int snap_rc;
} rec_mode;

static int rec_dispatch(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    rec_mode *r = (rec_mode *)m;
    if (r->calls++ == 0) {
        r->seen_len = cfx_mode_stack_len();
        r->seen_inc = cfx_local_keys_get().included;
        r->seen_exc = cfx_local_keys_get().excluded;
        r->seen_ks = ks;
    }
    for (int i = 0; i < cfx_mode_stack_len(); i++)
        if (cfx_mode_stack_at(i) == m)
            r->top_was_self = true;
    snprintf(r->last_op, sizeof r->last_op, "%s", cfx_op_name(op));
    if (r->snapshot) {
        cfx_tls_snapshot_guard g;
        r->snap_rc = cfx_tls_snapshot_restore_begin(&g);
        r->snap = cfx_local_keys_get();
        cfx_tls_snapshot_restore_end(&g);
    }
    if (r->fail)
        return cfx_error_set(CFX_ERR, cfx_op_name(op), "handler of %s failed", cfx_mode_name(m));
    return cfx_mode_redispatch(op, stack);
}

static const cfx_mode_vtable rec_vt = {"RecordingMode", rec_dispatch, NULL};

static void rec_init(rec_mode *r, cfx_mode_key key)
{
    memset(r, 0, sizeof *r);
    cfx_mode_init(&r->base, &rec_vt, key);
}

static cfx_tensor *cpu23(float v)
{
    float d[6] = {v, v, v, v, v, v};
    return cfx_tensor_from_floats(d, (const int64_t[]){2, 3}, 2);
}

/* ------------------------------------------------------------------ stack */

Test(mode, user_stack_push_pop_order)
{
    rec_mode a, b;
    rec_init(&a, CFX_MODE_USER);
    rec_init(&b, CFX_MODE_USER);
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cr_assert(!cfx_mode_any_set());
    cr_assert_eq(cfx_mode_push(&a.base), CFX_OK);
    cr_assert_eq(cfx_mode_push(&b.base), CFX_OK);
    cr_assert_eq(cfx_mode_stack_len(), 2);
    cr_assert_eq(cfx_mode_stack_at(0), &a.base);
    cr_assert_eq(cfx_mode_stack_at(1), &b.base);
    cr_assert_eq(cfx_mode_top(), &b.base);
    cr_assert_eq(cfx_mode_pop(), &b.base);
    cr_assert_eq(cfx_mode_pop(), &a.base);
    cr_assert_null(cfx_mode_pop());
    cr_assert_str_eq(cfx_error_message(), "trying to pop from empty mode stack");
    cr_assert_null(cfx_mode_top());
}

Test(mode, stack_at_out_of_range)
{
    rec_mode a;
    rec_init(&a, CFX_MODE_USER);
    cfx_mode_push(&a.base);
    cr_assert_null(cfx_mode_stack_at(1));
    cr_assert_str_eq(cfx_error_message(), "Tried to get stack at idx that's too big");
    cfx_mode_pop();
}

/* whatever the push order, the logical stack is [FAKE, PROXY, FUNCTIONAL, user modes] */
static void check_infra_order(bool fake_first)
{
    rec_mode fake, proxy, func, user;
    rec_init(&fake, CFX_MODE_FAKE);
    rec_init(&proxy, CFX_MODE_PROXY);
    rec_init(&func, CFX_MODE_FUNCTIONAL);
    rec_init(&user, CFX_MODE_USER);
    cr_assert_eq(cfx_mode_push(&user.base), CFX_OK);
    if (fake_first) {
        cr_assert_eq(cfx_mode_push(&fake.base), CFX_OK);
        cr_assert_eq(cfx_mode_push(&func.base), CFX_OK);
        cr_assert_eq(cfx_mode_push(&proxy.base), CFX_OK);
    } else {
        cr_assert_eq(cfx_mode_push(&proxy.base), CFX_OK);
        cr_assert_eq(cfx_mode_push(&func.base), CFX_OK);
        cr_assert_eq(cfx_mode_push(&fake.base), CFX_OK);
    }
    cr_assert_eq(cfx_mode_stack_len(), 4);
    cr_assert_eq(cfx_mode_stack_at(0), &fake.base);
    cr_assert_eq(cfx_mode_stack_at(1), &proxy.base);
    cr_assert_eq(cfx_mode_stack_at(2), &func.base);
    cr_assert_eq(cfx_mode_stack_at(3), &user.base);
    cr_assert_eq(cfx_mode_get(CFX_MODE_PROXY), &proxy.base);
    /* generic pops: the user top, then the highest infra slot */
    cr_assert_eq(cfx_mode_pop(), &user.base);
    cr_assert_eq(cfx_mode_pop(), &func.base);
    cr_assert_eq(cfx_mode_pop(), &proxy.base);
    cr_assert_eq(cfx_mode_pop(), &fake.base);
    cr_assert_eq(cfx_mode_stack_len(), 0);
}

Test(mode, infra_order_fake_then_proxy) { check_infra_order(true); }
Test(mode, infra_order_proxy_then_fake) { check_infra_order(false); }

Test(mode, infra_modes_dispatch_proxy_before_fake)
{
    /* push fake last: proxy still runs first, and sees fake below it */
    rec_mode fake, proxy;
    rec_init(&fake, CFX_MODE_FAKE);
    rec_init(&proxy, CFX_MODE_PROXY);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1);
    cfx_mode_push(&proxy.base);
    cfx_mode_push(&fake.base);
    cr_assert_not_null(cfx_add(x, x));
    cr_assert_eq(proxy.calls, 1);
    cr_assert_eq(fake.calls, 1);
    cr_assert_eq(proxy.seen_len, 1, "proxy ran first, with fake still set");
    cr_assert_eq(fake.seen_len, 0);
    cr_assert(!proxy.top_was_self && !fake.top_was_self, "a handler runs with its mode popped");
    cr_assert_eq(cfx_mode_unset(CFX_MODE_FAKE), &fake.base);
    cr_assert_eq(cfx_mode_unset(CFX_MODE_PROXY), &proxy.base);
    cr_assert_null(cfx_mode_unset(CFX_MODE_PROXY));
    cfx_scope_end(s);
}

Test(mode, set_occupied_slot_errors)
{
    rec_mode a, b;
    const struct {
        cfx_mode_key key;
        const char *msg;
    } cases[] = {
        {CFX_MODE_FAKE, "trying to set the current FakeTensorMode, but one already exists"},
        {CFX_MODE_PROXY, "trying to set the current ProxyTorchDispatchMode, but one already exists"},
        /* c10's to_string has no name for FUNCTIONAL */
        {CFX_MODE_FUNCTIONAL, "trying to set the current UNKNOWN_MODE, but one already exists"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfx_error_clear();
        rec_init(&a, cases[i].key);
        rec_init(&b, cases[i].key);
        cr_assert_eq(cfx_mode_push(&a.base), CFX_OK);
        cr_assert_lt(cfx_mode_push(&b.base), 0);
        cr_assert_str_eq(cfx_error_message(), cases[i].msg);
        cr_assert_eq(cfx_mode_get(cases[i].key), &a.base, "the slot keeps the first mode");
        cr_assert_eq(cfx_mode_stack_len(), 1);
        cr_assert_eq(cfx_mode_exit(&a.base), CFX_OK);
    }
    cr_assert_eq(cfx_mode_stack_len(), 0);
}

Test(mode, exit_checks_identity)
{
    rec_mode a, b, f;
    rec_init(&a, CFX_MODE_USER);
    rec_init(&b, CFX_MODE_USER);
    rec_init(&f, CFX_MODE_FAKE);
    cfx_mode_push(&a.base);
    cfx_mode_push(&b.base);
    cr_assert_lt(cfx_mode_exit(&a.base), 0);
    cr_assert_str_eq(cfx_error_message(), "cfx_mode_exit: RecordingMode is not the top user mode");
    cfx_error_clear();
    cr_assert_lt(cfx_mode_exit(&f.base), 0);
    cr_assert_str_eq(cfx_error_message(), "cfx_mode_exit: RecordingMode is not the current FakeTensorMode");
    cr_assert_eq(cfx_mode_exit(&b.base), CFX_OK);
    cr_assert_eq(cfx_mode_exit(&a.base), CFX_OK);
}

/* ------------------------------------------------------------------ TLS keys */

Test(mode, python_keys_included_exactly_while_modes_exist)
{
    rec_mode a, f;
    rec_init(&a, CFX_MODE_USER);
    rec_init(&f, CFX_MODE_FAKE);
    assert_keys(cfx_local_keys_get().included, "include_no_mode");
    cfx_mode_push(&a.base);
    assert_keys(cfx_local_keys_get().included, "include_in_mode");
    cfx_mode_push(&f.base);
    assert_keys(cfx_local_keys_get().included, "include_in_mode");
    cfx_mode_pop();
    assert_keys(cfx_local_keys_get().included, "include_in_mode");
    cfx_mode_pop();
    assert_keys(cfx_local_keys_get().included, "include_after_mode");
    /* an infra mode alone does the same */
    cfx_mode_set(&f.base, CFX_MODE_FAKE);
    assert_keys(cfx_local_keys_get().included, "include_in_mode");
    cfx_mode_unset(CFX_MODE_FAKE);
    assert_keys(cfx_local_keys_get().included, "include_after_mode");
    assert_keys(cfx_local_keys_get().excluded, "exclude_no_mode");
}

Test(mode, nested_handlers_see_the_modes_below)
{
    /* X13: `with M("outer"): with M("inner"): ...` - the inner handler sees 1, the outer 0 */
    rec_mode outer, inner;
    rec_init(&outer, CFX_MODE_USER);
    rec_init(&inner, CFX_MODE_USER);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1), *y = cpu23(2);
    cfx_mode_push(&outer.base);
    cfx_mode_push(&inner.base);
    cfx_tensor *z = cfx_add(x, y);
    cr_assert_not_null(z, "%s", cfx_error_message());
    cr_assert_float_eq(cfx_tensor_get_double(z, 5), 3.0, 0);
    cr_assert_eq(inner.calls, 1);
    cr_assert_eq(outer.calls, 1);
    char want_len[16];
    char *g = golden("inner_stack_len");
    snprintf(want_len, sizeof want_len, "%d", inner.seen_len);
    cr_assert_str_eq(want_len, g);
    free(g);
    g = golden("outer_stack_len");
    snprintf(want_len, sizeof want_len, "%d", outer.seen_len);
    cr_assert_str_eq(want_len, g);
    free(g);
    assert_keys(inner.seen_inc, "inner_handler_include");
    assert_keys(outer.seen_inc, "outer_handler_include");
    /* every key above Python but PythonDispatcher (2.13's after_Python_keyset) */
    assert_keys(inner.seen_exc, "inner_handler_exclude");
    assert_keys(outer.seen_exc, "outer_handler_exclude");
    cr_assert(cfx_keyset_has(inner.seen_ks, CFX_KEY_Python));
    cr_assert_str_eq(inner.last_op, "aten::add.Tensor");
    cr_assert_eq(cfx_mode_pop(), &inner.base);
    cr_assert_eq(cfx_mode_pop(), &outer.base);
    assert_keys(cfx_local_keys_get().excluded, "exclude_no_mode");
    cfx_scope_end(s);
}

Test(mode, op_without_tensor_args_reaches_mode)
{
    rec_mode a;
    rec_init(&a, CFX_MODE_USER);
    cfx_scope s = cfx_scope_begin();
    cfx_mode_push(&a.base);
    cfx_tensor *e = cfx_empty(cfx_ints(((const int64_t[]){2, 3}), 2), cfx_dtype_value(CFX_FLOAT32), cfx_none(), cfx_device_value(cfx_device_make(CFX_DEVICE_CPU)));
    cfx_mode_pop();
    cr_assert_not_null(e, "%s", cfx_error_message());
    cr_assert_eq(a.calls, 1);
    cr_assert_str_eq(a.last_op, "aten::empty.memory_format");
    cr_assert_eq(e->ndim, 2);
    cr_assert_eq(e->device.type, CFX_DEVICE_CPU);
    cfx_scope_end(s);
}

Test(mode, handler_error_restores_stack)
{
    rec_mode below, failing;
    rec_init(&below, CFX_MODE_PROXY);
    rec_init(&failing, CFX_MODE_USER);
    failing.fail = true;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1);
    cfx_mode_push(&below.base);
    cfx_mode_push(&failing.base);
    cfx_local_keys before = cfx_local_keys_get();
    cr_assert_null(cfx_mul(x, x));
    cr_assert_str_eq(cfx_error_message(), "handler of RecordingMode failed");
    cr_assert_eq(failing.calls, 1);
    cr_assert_eq(below.calls, 0);
    cr_assert_eq(cfx_mode_stack_len(), 2);
    cr_assert_eq(cfx_mode_top(), &failing.base);
    cr_assert_eq(cfx_mode_get(CFX_MODE_PROXY), &below.base);
    cr_assert(cfx_keyset_eq(cfx_local_keys_get().included, before.included));
    cr_assert(cfx_keyset_eq(cfx_local_keys_get().excluded, before.excluded));
    /* the infra mode put back into its slot after failing, too */
    cfx_mode_pop();
    cfx_error_clear();
    below.fail = true;
    cr_assert_null(cfx_mul(x, x));
    cr_assert_eq(cfx_mode_get(CFX_MODE_PROXY), &below.base);
    cr_assert(cfx_keyset_eq(cfx_local_keys_get().excluded, before.excluded));
    cfx_mode_pop();
    cfx_scope_end(s);
}

/* A mode that answers add itself: a handler's returns replace the kernel's. */
static int const_dispatch(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)m;
    (void)ks;
    if (strcmp(cfx_op_name(op), "aten::add.Tensor") != 0)
        return cfx_mode_redispatch(op, stack);
    stack[0] = cfx_tensor_value(cfx_tensor_scalar_double(42, CFX_FLOAT64));
    return CFX_OK;
}

Test(mode, handler_supplies_returns)
{
    static const cfx_mode_vtable vt = {"ConstMode", const_dispatch, NULL};
    cfx_mode m;
    cfx_mode_init(&m, &vt, CFX_MODE_USER);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1);
    cfx_mode_push(&m);
    cfx_tensor *r = cfx_add(x, x);
    cfx_tensor *q = cfx_mul(x, x);
    cfx_mode_pop();
    cr_assert_not_null(r);
    cr_assert_eq(r->ndim, 0);
    cr_assert_float_eq(cfx_tensor_get_double(r, 0), 42.0, 0);
    cr_assert_eq(q->ndim, 2);
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(mode, python_key_without_mode_or_subclass)
{
    cfx_dispatcher_init();
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1);
    cfx_key_guard g;
    cfx_include_keys_begin(&g, cfx_keyset_add(cfx_keyset_of(CFX_KEY_Python), CFX_KEY_PythonTLSSnapshot));
    cr_assert_null(cfx_add(x, x));
    cfx_key_guard_end(&g);
    cr_assert_str_eq(cfx_error_message(),
                     "Hit Python dispatch key but no arguments had PyInterpreter (no tensor args?)");
    cfx_scope_end(s);
}

Test(mode, tls_snapshot_restore)
{
    cfx_tls_snapshot_guard g;
    cr_assert_lt(cfx_tls_snapshot_restore_begin(&g), 0);
    cr_assert_str_eq(cfx_error_message(),
                     "Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.");
    cfx_error_clear();
    rec_mode a;
    rec_init(&a, CFX_MODE_USER);
    a.snapshot = true;
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1);
    cfx_mode_push(&a.base);
    cfx_local_keys entry = cfx_local_keys_get();
    cr_assert_not_null(cfx_add(x, x));
    cfx_mode_pop();
    cr_assert_eq(a.snap_rc, CFX_OK);
    cr_assert(cfx_keyset_eq(a.snap.included, entry.included), "the keys as the call entered");
    cr_assert(cfx_keyset_eq(a.snap.excluded, entry.excluded));
    cr_assert(!cfx_keyset_eq(a.seen_exc, entry.excluded), "the handler itself ran with keys excluded");
    cfx_scope_end(s);
}

/* ------------------------------------------------------------------ threads */

typedef struct thread_arg {
    int iters;
    int calls;
    int other_len_seen;
    bool ok;
} thread_arg;

static void *thread_body(void *p)
{
    thread_arg *t = p;
    rec_mode m;
    rec_init(&m, CFX_MODE_USER);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu23(1);
    t->ok = cfx_mode_push(&m.base) == CFX_OK && cfx_mode_stack_len() == 1;
    for (int i = 0; i < t->iters; i++) {
        cfx_tensor *y = cfx_add(x, x);
        t->ok &= y != NULL && cfx_mode_stack_len() == 1;
    }
    t->ok &= cfx_mode_pop() == &m.base;
    t->calls = m.calls;
    t->ok &= !cfx_keyset_has(cfx_local_keys_get().included, CFX_KEY_Python);
    cfx_scope_end(s);
    return NULL;
}

Test(mode, stacks_are_per_thread)
{
    cfx_dispatcher_init();
    cfx_dispatcher_init();
    pthread_t th[2];
    thread_arg args[2] = {{.iters = 2000}, {.iters = 3000}};
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, thread_body, &args[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        cr_assert(args[i].ok, "thread %d", i);
        cr_assert_eq(args[i].calls, args[i].iters, "thread %d saw only its own calls", i);
    }
    cr_assert_eq(cfx_mode_stack_len(), 0, "the main thread's stack never saw them");
    assert_keys(cfx_local_keys_get().included, "include_no_mode");
}
