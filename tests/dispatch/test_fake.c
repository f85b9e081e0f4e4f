/* test_fake.c - fake tensors and the fake tensor mode (fake.h).
 *
 * Output metadata and error texts are compared with PyTorch 2.13's FakeTensorMode running the
 * same calls (tests/data/fake_ops.txt and fake_errors.tsv, tools/interop/gen_fake_goldens.py).
 * The one text kept here is "Mixing fake modes NYI ...", which names the two modes by address
 * and so differs from run to run. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/ops.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/library.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(fake, .init = setup);

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static cfx_tensor *real(const int64_t *sizes, int ndim, cfx_dtype dt)
{
    return cfx_tensor_new(sizes, ndim, dt, CPU);
}
#define REAL(dt, ...) real((const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (dt))

static char *str_of_fake(const cfx_tensor *t)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_fake_tensor_print(t, &b);
    return cfx_buf_take(&b);
}

/* PyTorch 2.13's text for case key of fake_errors.tsv (malloc'd). */
static char *oracle(const char *key)
{
    char *text = read_golden("tests/data/fake_errors.tsv");
    cr_assert(text, "tests/data/fake_errors.tsv missing or without its golden header");
    size_t n, k = strlen(key);
    char **lines = split_lines(text, &n);
    char *out = NULL;
    for (size_t i = 0; lines && i < n && !out; i++)
        if (strncmp(lines[i], key, k) == 0 && lines[i][k] == '\t')
            out = strdup(lines[i] + k + 1);
    free(lines);
    free(text);
    cr_assert(out, "no %s in fake_errors.tsv", key);
    return out;
}

/* The current error is PyTorch's text for key. */
#define EXPECT_ORACLE(key)                                                              \
    do {                                                                                \
        char *want_ = oracle(key);                                                      \
        cr_assert_str_eq(cfx_error_message() ? cfx_error_message() : "(none)", want_, "%s", key); \
        free(want_);                                                                    \
    } while (0)

static void join_ints(const int64_t *v, int n, char *out, size_t cap)
{
    if (n == 0) {
        snprintf(out, cap, "-");
        return;
    }
    size_t k = 0;
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(out + k, cap - k, i ? ",%lld" : "%lld", (long long)v[i]);
}

static void assert_fake_of(cfx_fake_mode *m, const cfx_tensor *t)
{
    cr_assert_not_null(t, "%s", cfx_error_message() ? cfx_error_message() : "NULL");
    cr_assert(cfx_tensor_is_fake(t));
    cr_assert_eq(cfx_tensor_fake_mode(t), m);
    cr_assert(cfx_tensor_is_meta(t), "a fake tensor is a meta tensor inside");
    cr_assert_null(cfx_tensor_data(t), "no data");
    cr_assert_null(t->storage->data);
    cr_assert(cfx_keyset_has(t->keys, CFX_KEY_Python));
    cr_assert(cfx_keyset_has(t->keys, CFX_KEY_PythonTLSSnapshot));
    cr_assert_eq(cfx_keyset_highest_backend(t->keys), CFX_BACKEND_META);
}

/* ------------------------------------------------------------------ golden op metadata */

typedef struct golden_inputs {
    cfx_fake_mode *m;
    cfx_tensor *x, *y, *r3, *xi, *xb, *a, *b, *y24, *v, *mt, *c0;
} golden_inputs;

static cfx_tensor *run_case(const char *name, golden_inputs *g, cfx_tensor **input)
{
    cfx_tensor *x = g->x, *y = g->y;
    *input = NULL;
    if (!strcmp(name, "add")) return cfx_add(x, y);
    if (!strcmp(name, "add_broadcast")) return cfx_add(x, g->r3);
    if (!strcmp(name, "add_promote")) return cfx_add(x, g->xi);
    if (!strcmp(name, "add_alpha")) return cfx_add(x, y, cfx_int(2));
    if (!strcmp(name, "mul")) return cfx_mul(x, y);
    if (!strcmp(name, "mm")) return cfx_mm(g->a, g->b);
    if (!strcmp(name, "mm_t")) return cfx_mm(cfx_t(x), g->y24);
    if (!strcmp(name, "sum")) return cfx_sum(x, CFX_NO_INTS);
    if (!strcmp(name, "sum_dim")) return cfx_sum(x, CFX_INTS(1), false);
    if (!strcmp(name, "sum_dim_keepdim")) return cfx_sum(x, CFX_INTS(0), true);
    if (!strcmp(name, "sum_int64")) return cfx_sum(g->xi, CFX_NO_INTS);
    if (!strcmp(name, "sum_bool")) return cfx_sum(g->xb, CFX_NO_INTS);
    if (!strcmp(name, "view")) return *input = x, cfx_view(x, CFX_INTS(-1));
    if (!strcmp(name, "view_3x2")) return *input = x, cfx_view(x, cfx_ints(((int64_t[]){3, 2}), 2));
    if (!strcmp(name, "t")) return *input = x, cfx_t(x);
    if (!strcmp(name, "add_t_t")) return cfx_add(cfx_t(x), cfx_t(y));
    if (!strcmp(name, "empty")) return cfx_empty(cfx_ints(((int64_t[]){2, 3}), 2), cfx_dtype_value(CFX_FLOAT32), cfx_none(), cfx_device_value(CPU));
    if (!strcmp(name, "from_tensor_offset_view")) return g->v;
    if (!strcmp(name, "add_cpu0_meta")) return cfx_add(g->c0, g->mt);
    if (!strcmp(name, "add_meta_cpu0")) return cfx_add(g->mt, g->c0);
    if (!strcmp(name, "add__meta_rhs")) return cfx_add_(cfx_fake_from_tensor(g->m, REAL(CFX_FLOAT32, 2, 3)), g->mt);
    if (!strcmp(name, "add__meta_lhs"))
        return cfx_add_(cfx_fake_from_tensor(g->m, cfx_tensor_new((const int64_t[]){2, 3}, 2, CFX_FLOAT32, META)), x);
    cr_assert_fail("unknown golden case %s", name);
    return NULL;
}

Test(fake, ops_match_pytorch_metadata)
{
    cfx_scope s = cfx_scope_begin();
    golden_inputs g = {0};
    g.m = cfx_fake_mode_new(NULL);
    cfx_fake_mode *m = g.m;
    g.x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    g.y = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    g.r3 = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 3));
    g.xi = cfx_fake_from_tensor(m, REAL(CFX_INT64, 2, 3));
    g.xb = cfx_fake_from_tensor(m, REAL(CFX_BOOL, 2, 3));
    g.a = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    g.b = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 3, 4));
    g.y24 = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 4));
    cfx_tensor *base = REAL(CFX_FLOAT32, 4, 3);
    g.v = cfx_fake_from_tensor(m, cfx_tensor_new_view(base, (int64_t[]){3, 3}, (int64_t[]){3, 1}, 2, 3));
    g.mt = cfx_fake_from_tensor(m, cfx_tensor_new((const int64_t[]){2, 3}, 2, CFX_FLOAT32, META));
    g.c0 = cfx_fake_from_tensor(m, cfx_tensor_scalar_double(1, CFX_FLOAT32));

    char *text = read_golden("tests/data/fake_ops.txt");
    cr_assert_not_null(text, "tests/data/fake_ops.txt missing or without its golden header (run from the repo root)");
    size_t n_lines;
    char **lines = split_lines(text, &n_lines);
    cr_assert_not_null(lines);
    int n = 0;
    cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
    for (size_t li = 0; li < n_lines; li++) {
        const char *line = lines[li];
        char name[64], sizes[64], strides[64], dtype[32], dev[16], shares[4];
        long long off;
        cr_assert_eq(sscanf(line, "%63[^\t]\t%63[^\t]\t%63[^\t]\t%31[^\t]\t%15[^\t]\t%lld\t%3s", name, sizes,
                            strides, dtype, dev, &off, shares),
                     7, "bad golden line %s", line);
        cfx_tensor *in;
        cfx_tensor *out = run_case(name, &g, &in);
        assert_fake_of(m, out);
        char got[64], dbuf[16];
        join_ints(out->sizes, out->ndim, got, sizeof got);
        cr_assert_str_eq(got, sizes, "%s: sizes", name);
        join_ints(out->strides, out->ndim, got, sizeof got);
        cr_assert_str_eq(got, strides, "%s: strides", name);
        cr_assert_str_eq(cfx_dtype_name(cfx_tensor_dtype(out)), dtype, "%s: dtype", name);
        cr_assert_str_eq(cfx_device_format(cfx_tensor_fake_device(out), dbuf, sizeof dbuf), dev, "%s: device", name);
        cr_assert_eq(out->storage_offset, off, "%s: storage offset", name);
        if (strcmp(shares, "-") != 0)
            cr_assert_eq(out->storage == in->storage, shares[0] == '1', "%s: storage sharing", name);
        n++;
    }
    free(lines);
    free(text);
    cr_assert_eq(cfx_fake_mode_exit(m), CFX_OK);
    cr_assert_eq(n, 22);
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 0, "memo, fakes and mode all freed");
}

Test(fake, fake_tensor_repr)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    const struct {
        const char *key;
        cfx_tensor *real;
    } cases[] = {
        {"repr_f32", REAL(CFX_FLOAT32, 2, 3)},
        {"repr_i64", REAL(CFX_INT64, 3)},
        {"repr_meta_0d", cfx_tensor_new((int64_t[]){1}, 0, CFX_FLOAT32, META)},
    };
    for (int i = 0; i < COUNT_OF(cases); i++) {
        char *r = str_of_fake(cfx_fake_from_tensor(m, cases[i].real));
        char *want = oracle(cases[i].key);
        cr_assert_str_eq(r, want, "%s", cases[i].key);
        free(want);
        free(r);
    }
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

/* ------------------------------------------------------------------ from_tensor */

Test(fake, from_tensor_memoizes_and_keeps_metadata)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *r = REAL(CFX_FLOAT64, 4, 3);
    cfx_tensor *rv = cfx_tensor_new_view(r, (int64_t[]){2, 3}, (int64_t[]){1, 2}, 2, 5);
    cfx_tensor *f1 = cfx_fake_from_tensor(m, r);
    cfx_tensor *f2 = cfx_fake_from_tensor(m, r);
    cfx_tensor *fv = cfx_fake_from_tensor(m, rv);
    assert_fake_of(m, f1);
    cr_assert_eq(f1, f2, "memoized per real tensor");
    cr_assert_eq(cfx_fake_from_tensor(m, f1), f1, "a fake of this mode is its own fake");
    cr_assert_eq(f1->ndim, 2);
    cr_assert_eq(f1->sizes[0], 4);
    cr_assert_eq(f1->strides[0], 3);
    cr_assert_eq(cfx_tensor_dtype(f1), CFX_FLOAT64);
    cr_assert_eq(cfx_tensor_fake_device(f1).type, CFX_DEVICE_CPU);
    cr_assert_eq(f1->storage->nbytes, r->storage->nbytes);
    cr_assert_eq(fv->storage, f1->storage, "views of one real storage share one fake storage");
    cr_assert_eq(fv->storage_offset, 5);
    cr_assert_eq(fv->strides[0], 1);
    cr_assert_eq(fv->strides[1], 2);
    cr_assert(!cfx_tensor_is_fake(r) && r->ext.mode == NULL, "the real tensor is untouched");
    /* another mode makes other fakes */
    cfx_fake_mode *m2 = cfx_fake_mode_new(NULL);
    cfx_tensor *g1 = cfx_fake_from_tensor(m2, r);
    cr_assert_neq(g1, f1);
    cr_assert_eq(cfx_tensor_fake_mode(g1), m2);
    cfx_fake_mode_free(m2);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake, from_tensor_without_scope_gives_a_reference)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *r = REAL(CFX_FLOAT32, 2);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cr_assert_eq(f->refcount, 2, "the caller's and the memo's");
    cfx_tensor_release(f);
    cfx_tensor_release(r); /* the memo still holds it */
    cr_assert_eq(cfx_tensor_live_count(), 3, "real, fake, fake storage base");
    cfx_fake_mode_free(m);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake, fake_outlives_its_mode)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *r = REAL(CFX_FLOAT32, 2, 3);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m); /* drops the memo; f keeps the mode alive */
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *z = cfx_mul(f, f); /* no mode set: the tensor's own mode handles it */
    assert_fake_of(m, z);
    cr_assert_eq(z->sizes[1], 3);
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cfx_scope_end(s);
    cfx_tensor_release(f);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ dispatch */

Test(fake, views_share_fake_storage)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_fake_mode_enter(m);
    cfx_tensor *v = cfx_view(x, CFX_INTS(-1));
    cfx_tensor *t = cfx_t(x);
    cfx_tensor *tv = cfx_t(cfx_view(v, cfx_ints(((int64_t[]){3, 2}), 2)));
    cfx_fake_mode_exit(m);
    assert_fake_of(m, v);
    assert_fake_of(m, t);
    assert_fake_of(m, tv);
    cr_assert_eq(v->storage, x->storage);
    cr_assert_eq(t->storage, x->storage);
    cr_assert_eq(tv->storage, x->storage);
    cr_assert_eq(tv->sizes[0], 2);
    cr_assert_eq(tv->strides[0], 1);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, ops_without_mode_use_the_tensors_mode)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_tensor *y = cfx_mm(x, cfx_t(x));
    assert_fake_of(m, y);
    cr_assert_eq(y->sizes[0], 2);
    cr_assert_eq(y->sizes[1], 2);
    cr_assert_eq(cfx_mode_stack_len(), 0, "the mode was entered for the call only");
    cr_assert(!cfx_keyset_has(cfx_local_keys_get().included, CFX_KEY_Python));
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, factory_under_mode_is_fake)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_fake_mode_enter(m);
    cfx_tensor *e = cfx_empty(cfx_ints(((int64_t[]){4, 5}), 2), cfx_dtype_value(CFX_INT64), cfx_none(), cfx_device_value(CPU));
    cfx_tensor *em = cfx_empty(CFX_INTS(4), cfx_dtype_value(CFX_FLOAT32), cfx_none(), cfx_device_value(META));
    cfx_fake_mode_exit(m);
    assert_fake_of(m, e);
    cr_assert_eq(cfx_tensor_fake_device(e).type, CFX_DEVICE_CPU);
    cr_assert_eq(cfx_tensor_dtype(e), CFX_INT64);
    cr_assert_eq(e->strides[0], 5);
    assert_fake_of(m, em);
    cr_assert_eq(cfx_tensor_fake_device(em).type, CFX_DEVICE_META);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, literal_under_mode_is_lifted)
{
    /* torch.tensor() under a FakeTensorMode: the plain tensor it makes is lifted, which the
     * mode accepts without allow_non_fake_inputs, and comes back as the memoized fake of it */
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_fake_mode_enter(m);
    static const double v[2] = {1, 2};
    cfx_tensor *c = cfx_tensor_literal(v, (const int64_t[]){2}, 1, CFX_FLOAT32);
    cfx_value st[1] = {cfx_tensor_value(REAL(CFX_FLOAT32, 3))};
    cfx_tensor *real = st[0].u.t;
    cr_assert_eq(cfx_op_call(cfx_op_find("aten::lift_fresh_copy"), st, 1, COUNT_OF(st)), CFX_OK, "%s",
                 cfx_error_message());
    cfx_fake_mode_exit(m);
    assert_fake_of(m, c);
    cr_assert_eq(c->sizes[0], 2);
    assert_fake_of(m, st[0].u.t);
    cr_assert_eq(st[0].u.t, cfx_fake_from_tensor(m, real), "the converter's fake of the argument");
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, never_allocates)
{
    /* 4 TiB per tensor: any real allocation on the way would fail */
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_fake_mode_enter(m);
    cfx_tensor *e = cfx_empty(cfx_ints(((int64_t[]){1 << 20, 1 << 20}), 2), cfx_dtype_value(CFX_FLOAT32), cfx_none(), cfx_device_value(CPU));
    cfx_tensor *y = cfx_sum(cfx_mm(cfx_add(e, e), cfx_t(e)), CFX_INTS(0), false);
    cfx_fake_mode_exit(m);
    assert_fake_of(m, e);
    assert_fake_of(m, y);
    cr_assert_eq(cfx_tensor_fake_device(e).type, CFX_DEVICE_CPU);
    cr_assert_eq(e->storage->nbytes, (size_t)1 << 42);
    cr_assert_eq(y->ndim, 1);
    cr_assert_eq(y->sizes[0], 1 << 20);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, enter_exit_stash_previous_mode)
{
    cfx_fake_mode *m1 = cfx_fake_mode_new(NULL), *m2 = cfx_fake_mode_new(NULL);
    cr_assert_eq(cfx_fake_mode_enter(m1), CFX_OK);
    cr_assert_eq(cfx_fake_mode_enter(m1), CFX_OK, "re-entering the current mode is a no-op");
    cr_assert_eq(cfx_mode_stack_len(), 1);
    cr_assert_eq(cfx_fake_mode_enter(m2), CFX_OK);
    cr_assert_eq(cfx_mode_get(CFX_MODE_FAKE), cfx_fake_mode_base(m2));
    cr_assert_eq(cfx_mode_stack_len(), 1);
    cr_assert_eq(cfx_fake_mode_exit(m2), CFX_OK);
    cr_assert_eq(cfx_mode_get(CFX_MODE_FAKE), cfx_fake_mode_base(m1), "m1 restored");
    cr_assert_eq(cfx_fake_mode_exit(m1), CFX_OK);
    cr_assert_eq(cfx_mode_get(CFX_MODE_FAKE), cfx_fake_mode_base(m1));
    cr_assert_eq(cfx_fake_mode_exit(m1), CFX_OK);
    cr_assert_null(cfx_mode_get(CFX_MODE_FAKE));
    cr_assert_lt(cfx_fake_mode_exit(m1), 0);
    cr_assert_str_eq(cfx_error_message(), "cfx_fake_mode_exit: FakeTensorMode was not entered");
    /* a raw push into the occupied slot is c10's error */
    cfx_error_clear();
    cfx_fake_mode_enter(m1);
    cr_assert_lt(cfx_mode_push(cfx_fake_mode_base(m2)), 0);
    cr_assert_str_eq(cfx_error_message(), "trying to set the current FakeTensorMode, but one already exists");
    cfx_fake_mode_exit(m1);
    cr_assert_eq(cfx_fake_mode_from_base(cfx_fake_mode_base(m1)), m1);
    cfx_fake_mode_free(m1);
    cfx_fake_mode_free(m2);
}

/* A user mode above the fake mode sees the call first; its redispatch reaches the fake mode,
 * as ProxyTorchDispatchMode's does. */
typedef struct probe_mode {
    cfx_mode base;
    int calls;
    bool out_fake;
} probe_mode;

static int probe_dispatch(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    probe_mode *p = (probe_mode *)m;
    p->calls++;
    int rc = cfx_mode_redispatch(op, stack);
    p->out_fake = rc == CFX_OK && stack[0].kind == CFX_V_TENSOR && cfx_tensor_is_fake(stack[0].u.t);
    return rc;
}

Test(fake, mode_above_fake_sees_fake_outputs)
{
    static const cfx_mode_vtable vt = {"ProbeMode", probe_dispatch, NULL};
    probe_mode p = {0};
    cfx_mode_init(&p.base, &vt, CFX_MODE_PROXY);
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_mode_push(&p.base); /* proxy first, fake second: proxy still runs first */
    cfx_fake_mode_enter(m);
    cfx_tensor *y = cfx_relu(cfx_add(x, x));
    cfx_fake_mode_exit(m);
    cfx_mode_exit(&p.base);
    assert_fake_of(m, y);
    cr_assert_eq(p.calls, 2);
    cr_assert(p.out_fake);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, mode_beats_fake_tensor_subclass)
{
    /* X13: a mode over subclass tensors runs first; the subclass (here: the fake tensors' own
     * mode) handles the mode's redispatch with the stack empty */
    static const cfx_mode_vtable vt = {"ProbeMode", probe_dispatch, NULL};
    probe_mode p = {0};
    cfx_mode_init(&p.base, &vt, CFX_MODE_USER);
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_mode_push(&p.base);
    cfx_tensor *y = cfx_mul(x, x);
    cfx_mode_pop();
    assert_fake_of(m, y);
    cr_assert_eq(p.calls, 1);
    cr_assert(p.out_fake);
    cr_assert_null(cfx_mode_get(CFX_MODE_FAKE), "the fake mode was set only for the call");
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

/* ------------------------------------------------------------------ constants */

/* One case of fake_constants.tsv run under mode m (entered); x1 a fake of one element. */
static cfx_value constant_case(const char *name, cfx_fake_mode *m, cfx_tensor *x1)
{
    static const double v25[1] = {2.5}, v7[1] = {7}, v12[2] = {1, 2}, v1[1] = {1}, v2[1] = {2};
    static const int64_t one[1] = {1}, two[1] = {2};
#define LIT(v, sizes, dt) cfx_tensor_literal(v, sizes, 1, dt)
    (void)m;
    if (!strcmp(name, "item_literal")) return cfx__local_scalar_dense(LIT(v25, one, CFX_FLOAT32));
    if (!strcmp(name, "item_literal_int")) return cfx__local_scalar_dense(LIT(v7, one, CFX_INT64));
    if (!strcmp(name, "item_add"))
        return cfx__local_scalar_dense(cfx_add(LIT(v25, one, CFX_FLOAT32), LIT(v25, one, CFX_FLOAT32)));
    if (!strcmp(name, "item_big_literal")) return cfx__local_scalar_dense(cfx_sum(LIT(v12, two, CFX_FLOAT32), CFX_NO_INTS));
    if (!strcmp(name, "item_after_inplace_fake")) {
        cfx_tensor *c = LIT(v1, one, CFX_FLOAT32);
        cfx_add_(c, x1);
        return cfx__local_scalar_dense(c);
    }
    if (!strcmp(name, "item_after_inplace_constant")) {
        cfx_tensor *c = LIT(v1, one, CFX_FLOAT32);
        cfx_add_(c, LIT(v2, one, CFX_FLOAT32));
        return cfx__local_scalar_dense(c);
    }
    if (!strcmp(name, "item_mixed")) return cfx__local_scalar_dense(cfx_add(LIT(v25, one, CFX_FLOAT32), x1));
    if (!strcmp(name, "nonzero_literal")) return cfx_tensor_value(cfx_nonzero(LIT(v1, one, CFX_FLOAT32)));
    if (!strcmp(name, "literal")) return cfx_tensor_value(LIT(v1, one, CFX_FLOAT32));
    if (!strcmp(name, "literal_big")) return cfx_tensor_value(LIT(v12, two, CFX_FLOAT32));
    if (!strcmp(name, "add_real_0d"))
        return cfx_tensor_value(cfx_add(cfx_tensor_scalar_double(3, CFX_FLOAT32), cfx_tensor_scalar_double(4, CFX_FLOAT32)));
    if (!strcmp(name, "add_real_big")) return cfx_tensor_value(cfx_add(REAL(CFX_FLOAT32, 2), REAL(CFX_FLOAT32, 2)));
#undef LIT
    cr_assert_fail("unknown constant case %s", name);
    return cfx_none();
}

Test(fake, constants_match_pytorch)
{
    char *text = read_golden("tests/data/fake_constants.tsv");
    cr_assert(text, "tests/data/fake_constants.tsv missing or without its golden header");
    size_t n;
    char **lines = split_lines(text, &n);
    cr_assert(lines);
    int64_t live0 = cfx_tensor_live_count();
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x1 = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 1));
    cr_expect_eq(n, 12);
    for (size_t i = 0; i < n; i++) {
        char *f[4] = {lines[i], NULL, NULL, NULL};
        for (int k = 1; k < 4 && f[k - 1]; k++) {
            char *tab = strchr(f[k - 1], '\t');
            if (tab)
                *tab = '\0';
            f[k] = tab ? tab + 1 : NULL;
        }
        cfx_error_clear();
        cr_assert_eq(cfx_fake_mode_enter(m), CFX_OK);
        cfx_value v = constant_case(f[0], m, x1);
        cfx_fake_mode_exit(m);
        if (!strcmp(f[1], "error")) {
            cr_expect(cfx_error_occurred(), "%s: no error", f[0]);
            cr_expect_str_eq(cfx_error_message() ? cfx_error_message() : "", f[2], "%s", f[0]);
        } else if (!strcmp(f[1], "value")) {
            char *got = cfx_value_to_string(v, CFX_STYLE_PYTHON);
            cr_expect_str_eq(got, f[2], "%s: %s", f[0], cfx_error_message() ? cfx_error_message() : "");
            free(got);
        } else {
            cr_assert(v.kind == CFX_V_TENSOR && v.u.t, "%s: %s", f[0], cfx_error_message());
            char *r = str_of_fake(v.u.t);
            cr_expect_str_eq(r, f[2], "%s", f[0]);
            free(r);
            cfx_tensor *c = cfx_fake_tensor_constant(v.u.t);
            cfx_buf b;
            cfx_buf_init(&b);
            if (c)
                cfx_tensor_print(c, &b);
            else
                cfx_buf_puts(&b, "None");
            char *cs = cfx_buf_take(&b);
            cr_expect_str_eq(cs, f[3], "%s: constant", f[0]);
            free(cs);
        }
    }
    cfx_error_clear();
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cr_expect_eq(cfx_tensor_live_count(), live0, "constants go with their fakes");
    free(lines);
    free(text);
}

/* ------------------------------------------------------------------ errors */

Test(fake, mixing_fake_modes)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m1 = cfx_fake_mode_new(NULL), *m2 = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m1, REAL(CFX_FLOAT32, 3));
    cfx_tensor *y = cfx_fake_from_tensor(m2, REAL(CFX_FLOAT32, 3));
    /* f"Mixing fake modes NYI x.fake_mode={x.fake_mode} vs self={self}": the modes' str() is
     * their class and address */
    char want[256];
    const char *cls = "torch._subclasses.fake_tensor.FakeTensorMode object at";
    cfx_fake_mode_enter(m1);
    cr_assert_null(cfx_add(x, y));
    cfx_fake_mode_exit(m1);
    snprintf(want, sizeof want, "Mixing fake modes NYI x.fake_mode=<%s %p> vs self=<%s %p>", cls,
             (void *)cfx_fake_mode_base(m2), cls, (void *)cfx_fake_mode_base(m1));
    cr_assert_str_eq(cfx_error_message(), want);
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cfx_error_clear();
    cr_assert_null(cfx_add(y, x), "no mode: y's mode handles it and rejects x");
    snprintf(want, sizeof want, "Mixing fake modes NYI x.fake_mode=<%s %p> vs self=<%s %p>", cls,
             (void *)cfx_fake_mode_base(m1), cls, (void *)cfx_fake_mode_base(m2));
    cr_assert_str_eq(cfx_error_message(), want);
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cfx_fake_mode_free(m1);
    cfx_fake_mode_free(m2);
    cfx_scope_end(s);
}

Test(fake, real_inputs_rejected)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_tensor *r = REAL(CFX_FLOAT32, 2, 3);
    cfx_fake_mode_enter(m);
    cr_assert_null(cfx_add(x, r));
    EXPECT_ORACLE("real_add");
    cfx_error_clear();
    cr_assert_null(cfx_add(x, cfx_tensor_scalar_double(2, CFX_FLOAT64), cfx_int(2)));
    EXPECT_ORACLE("real_add_alpha");
    cfx_error_clear();
    cr_assert_null(cfx_mm(REAL(CFX_INT64, 0, 2), x));
    EXPECT_ORACLE("real_mm");
    cfx_error_clear();
    cr_assert_null(cfx_sum(r, CFX_INTS(1), false));
    EXPECT_ORACLE("real_sum");
    cfx_fake_mode_exit(m);
    /* without an active mode, the fake argument's mode rejects the real one the same way */
    cfx_error_clear();
    cr_assert_null(cfx_mul(r, x));
    EXPECT_ORACLE("real_mul_nomode");
    cr_assert_eq(cfx_mode_stack_len(), 0);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

/* A real complex tensor in the error's rendering of the call: _scalar_str's two parts for a
 * 0-dim one, and no dtype suffix for complex64, the default complex dtype. */
Test(fake, real_complex_inputs_rendered)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_tensor *x3 = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 3));
    cfx_tensor *c64 = cfx_tensor_new(NULL, 0, CFX_COMPLEX64, CPU);
    cfx_tensor *c128 = cfx_tensor_new(NULL, 0, CFX_COMPLEX128, CPU);
    cfx_tensor *c64_1d = REAL(CFX_COMPLEX64, 3);
    cr_assert(c64 && c128 && c64_1d);
    float *a = cfx_tensor_data(c64);
    a[0] = 1.5f, a[1] = -2.25f;
    double *b = cfx_tensor_data(c128);
    b[0] = -0.0, b[1] = 2.5;
    cfx_fake_mode_enter(m);
    cr_assert_null(cfx_add(x, c64));
    EXPECT_ORACLE("real_add_complex64_0d");
    cfx_error_clear();
    cr_assert_null(cfx_add(x, c128));
    EXPECT_ORACLE("real_add_complex128_0d");
    cfx_error_clear();
    cr_assert_null(cfx_add(x3, c64_1d));
    EXPECT_ORACLE("real_add_complex64_1d");
    cfx_error_clear();
    cfx_fake_mode_exit(m);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, allow_non_fake_inputs_converts)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode_options o = {.allow_non_fake_inputs = true, .allow_fallback_kernels = true};
    cfx_fake_mode *m = cfx_fake_mode_new(&o);
    cfx_fake_mode *other = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_tensor *r = REAL(CFX_FLOAT32, 2, 3);
    cfx_tensor *zero_dim = cfx_tensor_scalar_double(2, CFX_FLOAT32);
    cfx_tensor *y = cfx_fake_from_tensor(other, REAL(CFX_FLOAT32, 3));
    cfx_fake_mode_enter(m);
    cfx_tensor *a = cfx_add(x, r);
    cfx_tensor *b = cfx_mul(x, zero_dim);
    cfx_tensor *c = cfx_add(x, y);
    cfx_fake_mode_exit(m);
    assert_fake_of(m, a);
    assert_fake_of(m, b);
    assert_fake_of(m, c);
    cr_assert_eq(cfx_tensor_fake_device(b).type, CFX_DEVICE_CPU);
    cr_assert_eq(b->ndim, 2);
    cr_assert_eq(r->ext.mode, NULL, "the real input stays real");
    cr_assert_eq(cfx_fake_from_tensor(m, r)->storage->nbytes, r->storage->nbytes, "converted through the memo");
    cfx_fake_mode_free(other);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake, data_dependent_ops)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *one = cfx_tensor_scalar_double(3.5, CFX_FLOAT32);
    cfx_tensor *f = cfx_fake_from_tensor(m, one);
    cfx_fake_mode_enter(m);
    cr_assert(isnan(cfx_item(f)));
    EXPECT_ORACLE("item");
    cfx_error_clear();
    cr_assert_null(cfx_nonzero(f));
    EXPECT_ORACLE("nonzero");
    cfx_fake_mode_exit(m);
    /* without a mode, through the tensor's mode */
    cfx_error_clear();
    cr_assert_null(cfx_nonzero(f));
    EXPECT_ORACLE("nonzero_nomode");
    /* real tensors compute */
    cfx_error_clear();
    cr_assert_float_eq(cfx_item(one), 3.5, 0);
    cr_assert(!cfx_error_occurred());
    cr_assert(isnan(cfx_item(REAL(CFX_FLOAT32, 3))));
    cr_assert_str_eq(cfx_error_message(), "only one element tensors can be converted to Python scalars");
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

Test(fake, nonzero_and_item_on_cpu_match_pytorch)
{
    /* torch.nonzero(torch.tensor([[0.,1.],[2.,0.]])) == [[0, 1], [1, 0]];
     * nonzero of a 0-dim 1. has size (1, 0), of 0. (0, 0); of ones(0, 3) (0, 2) */
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_tensor_from_floats((const float[]){0, 1, 2, 0}, (const int64_t[]){2, 2}, 2);
    cfx_tensor *nz = cfx_nonzero(x);
    cr_assert_not_null(nz, "%s", cfx_error_message());
    cr_assert_eq(cfx_tensor_dtype(nz), CFX_INT64);
    cr_assert_eq(nz->sizes[0], 2);
    cr_assert_eq(nz->sizes[1], 2);
    const int64_t want[] = {0, 1, 1, 0};
    for (int i = 0; i < 4; i++)
        cr_assert_float_eq(cfx_tensor_get_double(nz, i), (double)want[i], 0);
    nz = cfx_nonzero(cfx_tensor_scalar_double(1, CFX_FLOAT32));
    cr_assert_eq(nz->sizes[0], 1);
    cr_assert_eq(nz->sizes[1], 0);
    nz = cfx_nonzero(cfx_tensor_scalar_double(0, CFX_FLOAT32));
    cr_assert_eq(nz->sizes[0], 0);
    nz = cfx_nonzero(REAL(CFX_FLOAT32, 0, 3));
    cr_assert_eq(nz->sizes[0], 0);
    cr_assert_eq(nz->sizes[1], 2);
    cfx_value v = cfx__local_scalar_dense(cfx_tensor_from_int64s((const int64_t[]){5}, (const int64_t[]){1}, 1));
    cr_assert_eq(v.kind, CFX_V_INT);
    cr_assert_eq(v.u.i, 5);
    cr_assert_not_null(cfx_op_find("aten::_local_scalar_dense"));
    cfx_scope_end(s);
}

Test(fake, device_propagation)
{
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *c = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 3));
    cfx_tensor *c0 = cfx_fake_from_tensor(m, cfx_tensor_scalar_double(1, CFX_FLOAT32));
    cfx_tensor *mt = cfx_fake_from_tensor(m, cfx_tensor_new((const int64_t[]){2, 3}, 2, CFX_FLOAT32, META));
    cr_assert_eq(cfx_tensor_fake_device(mt).type, CFX_DEVICE_META);
    cfx_fake_mode_enter(m);
    cfx_tensor *a = cfx_add(c0, mt); /* a cpu 0-dim tensor defers to the other device */
    cfx_tensor *b = cfx_add(mt, c0);
    cfx_tensor *bad = cfx_add(c, mt);
    cfx_fake_mode_exit(m);
    cr_assert_eq(cfx_tensor_fake_device(a).type, CFX_DEVICE_META);
    cr_assert_eq(cfx_tensor_fake_device(b).type, CFX_DEVICE_META);
    cr_assert_null(bad);
    EXPECT_ORACLE("device_cpu_meta");
    cfx_error_clear();
    cfx_fake_mode_enter(m);
    cr_assert_null(cfx_mm(cfx_t(mt), c));
    EXPECT_ORACLE("device_meta_cpu");
    cfx_error_clear();
    cr_assert_null(cfx_mul(cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 3)), mt));
    EXPECT_ORACLE("device_mul");
    cfx_fake_mode_exit(m);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
}

/* ------------------------------------------------------------------ ops without Meta kernels */

static int twice_cpu(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    cfx_tensor *x = stack[0].u.t;
    cfx_tensor *out = cfx_tensor_new(x->sizes, x->ndim, (cfx_dtype)x->dtype, x->device);
    if (!out)
        return CFX_ERR;
    for (int64_t i = 0; i < cfx_tensor_numel(x); i++)
        ((float *)cfx_tensor_data(out))[i] = 2 * (float)cfx_tensor_get_double(x, i);
    stack[0] = cfx_tensor_value(out);
    return CFX_OK;
}

static int alias_cpu(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    cfx_tensor *x = stack[0].u.t;
    stack[0] = cfx_tensor_value(cfx_tensor_new_view(x, x->sizes, x->strides, x->ndim, 0));
    return CFX_OK;
}

static int inplace_cpu(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    cfx_tensor *x = stack[0].u.t;
    for (int64_t i = 0; i < cfx_tensor_numel(x); i++)
        ((float *)cfx_tensor_data(x))[i] += 1;
    return CFX_OK; /* returns self, as in-place kernels do */
}

static cfx_library *test_ops(void)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_FRAGMENT, "aten");
    cr_assert_eq(cfx_library_def(lib, "cfx_test_twice(Tensor x) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "cfx_test_alias(Tensor(a) x) -> Tensor(a)"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "cfx_test_twice", CFX_KEY_CPU, twice_cpu, NULL), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "cfx_test_alias", CFX_KEY_CPU, alias_cpu, NULL), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "cfx_test_inplace_(Tensor(a!) x) -> Tensor(a!)"), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "cfx_test_inplace_", CFX_KEY_CPU, inplace_cpu, NULL), CFX_OK);
    return lib;
}

static cfx_tensor *call1(const char *name, cfx_tensor *x)
{
    cfx_value st[1] = {cfx_tensor_value(x)};
    if (cfx_op_call(cfx_op_find(name), st, 1, COUNT_OF(st)) != CFX_OK)
        return NULL;
    return st[0].u.t;
}

Test(fake, fallback_kernel_runs_on_zeros)
{
    cfx_library *lib = test_ops();
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2, 5));
    cfx_tensor *y = call1("aten::cfx_test_twice", x);
    assert_fake_of(m, y);
    cr_assert_eq(y->sizes[1], 5);
    cr_assert_neq(y->storage, x->storage);
    cr_assert_eq(call1("aten::cfx_test_inplace_", x), x, "an in-place result maps back to its fake input");
    cr_assert_null(call1("aten::cfx_test_alias", x));
    cr_assert_str_eq(cfx_error_message(), "aten.cfx_test_alias.default", "an aliasing output cannot be faked");
    cfx_error_clear();
    cfx_fake_mode_options no_fallback = {.allow_fallback_kernels = false};
    cfx_fake_mode *strict = cfx_fake_mode_new(&no_fallback);
    cfx_tensor *z = cfx_fake_from_tensor(strict, REAL(CFX_FLOAT32, 2));
    cr_assert_null(call1("aten::cfx_test_twice", z));
    cr_assert_str_eq(cfx_error_message(), "aten.cfx_test_twice.default"); /* UnsupportedOperatorException */
    cfx_fake_mode_free(strict);
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cfx_library_free(lib);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake, fallback_kernel_without_scope_owns_correctly)
{
    cfx_library *lib = test_ops();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *r = REAL(CFX_FLOAT32, 3);
    cfx_tensor *x = cfx_fake_from_tensor(m, r);
    cfx_tensor *y = call1("aten::cfx_test_twice", x); /* a new tensor: ours to release */
    cr_assert_eq(call1("aten::cfx_test_inplace_", x), x);
    assert_fake_of(m, y);
    cr_assert_eq(y->refcount, 1);
    cr_assert_eq(x->refcount, 2, "caller + memo, no reference leaked by the in-place call");
    cfx_tensor_release(y);
    cfx_tensor_release(x);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m);
    cfx_library_free(lib);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

Test(fake, custom_namespace_is_unsupported_without_meta)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "faketest");
    cfx_library_def(lib, "twice(Tensor x) -> Tensor");
    CFX_IMPL_BOXED(lib, "twice", CFX_KEY_CPU, twice_cpu, NULL);
    cfx_scope s = cfx_scope_begin();
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *x = cfx_fake_from_tensor(m, REAL(CFX_FLOAT32, 2));
    cr_assert_null(call1("faketest::twice", x));
    EXPECT_ORACLE("unsupported_namespace");
    cfx_fake_mode_free(m);
    cfx_scope_end(s);
    cfx_library_free(lib);
}

/* ------------------------------------------------------------------ tracer bindings */

static int freed;
static void count_free(void *p)
{
    freed++;
    free(p);
}

Test(fake, tensor_bindings)
{
    uint64_t o1 = cfx_binding_owner_new(), o2 = cfx_binding_owner_new();
    cr_assert_neq(o1, 0);
    cr_assert_neq(o1, o2);
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *r = REAL(CFX_FLOAT32, 2);
    cfx_tensor *f = cfx_fake_from_tensor(m, r);
    cr_assert_null(cfx_tensor_binding_get(f, o1));
    cr_assert_eq(cfx_tensor_binding_set(f, o1, malloc(8), count_free), CFX_OK);
    int *p2 = malloc(sizeof *p2);
    *p2 = 7;
    cr_assert_eq(cfx_tensor_binding_set(f, o2, p2, count_free), CFX_OK);
    cr_assert_eq(*(int *)cfx_tensor_binding_get(f, o2), 7);
    cr_assert_eq(cfx_tensor_binding_set(f, o1, malloc(8), count_free), CFX_OK);
    cr_assert_eq(freed, 1, "rebinding frees the old record");
    cfx_tensor_binding_clear(f, o1);
    cr_assert_eq(freed, 2);
    cr_assert_null(cfx_tensor_binding_get(f, o1));
    cr_assert(cfx_tensor_is_fake(f), "bindings and fake state share the extension block");
    cr_assert_eq(cfx_tensor_binding_set(r, o1, malloc(8), count_free), CFX_OK);
    cr_assert(!cfx_tensor_is_fake(r), "a binding does not make a tensor fake");
    cr_assert_null(cfx_tensor_mode(r));
    cfx_tensor_release(f);
    cfx_tensor_release(r);
    cfx_fake_mode_free(m); /* the memo's references go: both tensors die, their bindings too */
    cr_assert_eq(freed, 4);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* ------------------------------------------------------------------ threads */

typedef struct worker {
    int64_t n;
    bool ok;
} worker;

static void *fake_worker(void *p)
{
    worker *w = p;
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    w->ok = m != NULL;
    for (int it = 0; it < 300 && w->ok; it++) {
        cfx_scope s = cfx_scope_begin();
        cfx_tensor *x = cfx_fake_from_tensor(m, real((const int64_t[]){w->n, 3}, 2, CFX_FLOAT32));
        cfx_fake_mode_enter(m);
        cfx_tensor *y = cfx_mm(cfx_add(x, x), cfx_t(x));
        cfx_fake_mode_exit(m);
        w->ok = y && cfx_tensor_fake_mode(y) == m && y->sizes[0] == w->n && y->sizes[1] == w->n &&
                cfx_mode_stack_len() == 0 && !cfx_error_occurred();
        cfx_scope_end(s);
    }
    cfx_fake_mode_free(m);
    return NULL;
}

Test(fake, two_threads_two_modes)
{
    cfx_dispatcher_init();
    cfx_dispatcher_init();
    cfx_builtin_ops_init();
    pthread_t th[2];
    worker w[2] = {{.n = 4}, {.n = 7}};
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, fake_worker, &w[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    cr_assert(w[0].ok);
    cr_assert(w[1].ok);
    cr_assert_eq(cfx_tensor_live_count(), 0);
}

/* The same failure with no scope open: the Meta kernel's fresh result belongs to the caller,
 * who never sees it, so the fake mode must drop it. */
Test(fake, device_propagation_failure_leaks_nothing_without_scope)
{
    cfx_fake_mode *m = cfx_fake_mode_new(NULL);
    cfx_tensor *rc = cfx_tensor_new((const int64_t[]){2, 3}, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_tensor *rm = cfx_tensor_new((const int64_t[]){2, 3}, 2, CFX_FLOAT32, META);
    cfx_tensor *c = cfx_fake_from_tensor(m, rc);
    cfx_tensor *mt = cfx_fake_from_tensor(m, rm);
    int64_t live = cfx_tensor_live_count();
    cfx_fake_mode_enter(m);
    cfx_tensor *bad = cfx_add(c, mt);
    cfx_fake_mode_exit(m);
    cr_assert_null(bad);
    EXPECT_ORACLE("device_cpu_meta");
    cr_assert_eq(cfx_tensor_live_count(), live);
    cfx_tensor_release(c);
    cfx_tensor_release(mt);
    cfx_fake_mode_free(m);
    cfx_tensor_release(rc);
    cfx_tensor_release(rm);
}
