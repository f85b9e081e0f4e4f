/* test_dispatch_fastpaths.c - the call path's fast paths agree with the general ones.
 *
 *  - cfx_op.tensor_pair: ops whose dispatch arguments are one or two plain Tensors read those
 *    two slots directly; every other schema (and a slot that holds no tensor) takes the mask
 *    loop. Both give the key set of the reference: the union over the tensor-like arguments.
 *  - cfx_op_dispatch_stack (cfx_mode_redispatch's body) calls what cfx_op_redispatch calls for
 *    cfx_op_dispatch_keyset's key set, with the same key set.
 *  - The op wrappers compute the key set from their typed parameters: ops.def's markers must
 *    match the registered schemas' masks.
 *  - The compiled boxed entries (cfx_kfn_boxed_<id>) take a no-conversion path when every slot
 *    holds its parameter's exact C kind; on good stacks, exact or needing conversion, both
 *    paths must do what the libffi adapter does.
 *  - cfx_mode_call_top pops an infra top inline and a user top in general code: handlers see
 *    the same stack and key sets either way, and putting a mode back into a slot the handler
 *    filled fails the same way.
 *  - The slots of Python, PythonTLSSnapshot and Meta are constants, and "Python (or
 *    PythonTLSSnapshot) is the highest functionality" is one shift: both must agree with the
 *    key tables for every key set.
 *  - A fresh dispatch whose next key is Python hands the call to the top mode directly, and
 *    PythonTLSSnapshot's fallback does the same with the snapshot taken in mode.c: only when
 *    the Python fallback is in the op's Python slot. An op with a kernel of its own there runs
 *    it, and a handler reached either way sees the same key set, local keys and snapshot.
 *  - Empty table slots are all zero (cfx_op_check_invariants), as the call paths test the
 *    entries alone.
 *  - The mode stack kept as one word answers like a plain list of slots and user modes. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/library.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

static void setup(void) { cfx_error_clear(); }
TestSuite(dispatch_fastpaths, .init = setup);

static cfx_tensor *meta_tensor(void)
{
    int64_t sz[2] = {2, 3};
    cfx_tensor *t = cfx_tensor_new(sz, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
    cr_assert(t, "%s", cfx_error_message());
    return t;
}

static cfx_tensor *cpu_tensor(void)
{
    float v[6] = {1, -2, 3, -4, 5, -6};
    cfx_tensor *t = cfx_tensor_from_floats(v, (const int64_t[]){2, 3}, 2);
    cr_assert(t, "%s", cfx_error_message());
    return t;
}

/* The reference key set: every tensor-like argument (list elements included) contributes,
 * a NULL/None required Tensor makes the arguments contribute nothing (cfx_op_dispatch_keyset). */
static cfx_keyset reference_keyset(const cfx_op *op, const cfx_value *stack)
{
    const cfx_schema *s = cfx_op_schema(op);
    uint64_t ks = 0;
    for (int i = 0; i < s->n_args; i++) {
        if (!cfx_type_is_tensor_like(s->args[i].type))
            continue;
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR && v->u.t) {
            ks |= v->u.t->keys.repr;
        } else if (v->kind == CFX_V_LIST) {
            for (uint32_t j = 0; j < v->len; j++)
                if (v->u.items[j].kind == CFX_V_TENSOR && v->u.items[j].u.t)
                    ks |= v->u.items[j].u.t->keys.repr;
        } else if (s->args[i].type->kind == CFX_TYPE_TENSOR) {
            ks = 0;
            break;
        }
    }
    return cfx_op_mask_keyset(op, (cfx_keyset){ks}, cfx_local_keys_get());
}

/* Records the key set each call was dispatched with. */
typedef struct rec {
    int calls;
    cfx_keyset ks;
} rec;

static int rec_boxed(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op;
    rec *r = ctx;
    r->calls++;
    r->ks = ks;
    stack[0] = cfx_none();
    return CFX_OK;
}

static void check_stack(cfx_op *op, cfx_value *stack, rec *cpu, rec *meta)
{
    cfx_keyset want = reference_keyset(op, stack);
    cr_expect(cfx_keyset_eq(cfx_op_dispatch_keyset(op, stack), want), "%s: key set differs from the reference",
              cfx_op_name(op));
    /* the fused fresh dispatch calls the same kernel with the same key set */
    cfx_value s1[8], s2[8];
    memcpy(s1, stack, sizeof s1);
    memcpy(s2, stack, sizeof s2);
    *cpu = (rec){0};
    *meta = (rec){0};
    int rc1 = cfx_op_redispatch(op, cfx_op_dispatch_keyset(op, s1), s1);
    rec c1 = *cpu, m1 = *meta;
    *cpu = (rec){0};
    *meta = (rec){0};
    int rc2 = cfx_op_dispatch_stack(op, s2);
    cr_expect_eq(rc1, rc2, "%s", cfx_op_name(op));
    cr_expect_eq(c1.calls, cpu->calls, "%s", cfx_op_name(op));
    cr_expect_eq(m1.calls, meta->calls, "%s", cfx_op_name(op));
    cr_expect(cfx_keyset_eq(c1.ks, cpu->ks) && cfx_keyset_eq(m1.ks, meta->ks), "%s", cfx_op_name(op));
    cfx_error_clear();
}

Test(dispatch_fastpaths, tensor_pair_matches_the_mask_loop)
{
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "fp", CFX_KEY_Undefined, "/dev/null", 1);
    cfx_library *impl = cfx_library_new(CFX_LIB_IMPL, "fp", CFX_KEY_Undefined, "/dev/null", 2);
    static const struct {
        const char *schema, *name;
        bool pair;
        int first, second;
    } ops[] = {
        {"one(Tensor a) -> Tensor", "fp::one", true, 0, 0},
        {"two(Tensor a, int n, Tensor b) -> Tensor", "fp::two", true, 0, 2},
        {"late(int n, Tensor b) -> Tensor", "fp::late", true, 1, 1},
        {"three(Tensor a, Tensor b, Tensor c) -> Tensor", "fp::three", false, 0, 0},
        {"opt(Tensor a, Tensor? b) -> Tensor", "fp::opt", false, 0, 0},
        {"list(Tensor[] a, Tensor b) -> Tensor", "fp::list", false, 0, 0},
        {"none(int n) -> Tensor", "fp::none", false, 0, 0},
    };
    rec cpu = {0}, meta = {0};
    cfx_tensor *c = cpu_tensor(), *m = meta_tensor();
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        cr_assert_eq(cfx_library_def(lib, ops[i].schema), CFX_OK, "%s", cfx_error_message());
        const char *n = ops[i].name + 4;
        cr_assert_eq(cfx_library_impl_boxed_at(impl, n, CFX_KEY_CPU, rec_boxed, &cpu, "/dev/null", 3), CFX_OK);
        cr_assert_eq(cfx_library_impl_boxed_at(impl, n, CFX_KEY_Meta, rec_boxed, &meta, "/dev/null", 4), CFX_OK);
        cfx_op *op = cfx_op_find(ops[i].name);
        cr_assert(op);
        cr_expect_eq(op->tensor_pair_ok, ops[i].pair, "%s", ops[i].name);
        if (ops[i].pair) {
            cr_expect_eq(op->tensor_pair_off[0], ops[i].first * sizeof(cfx_value), "%s", ops[i].name);
            cr_expect_eq(op->tensor_pair_off[1], ops[i].second * sizeof(cfx_value), "%s", ops[i].name);
        }
        /* every slot a tensor (CPU or Meta in turn), or an int, or None, or a list of both */
        cfx_value items[2] = {cfx_tensor_value(c), cfx_tensor_value(m)};
        const cfx_value choices[] = {cfx_tensor_value(c), cfx_tensor_value(m), cfx_int(1), cfx_none(),
                                     cfx_tensor_value(NULL), cfx_list(items, 2), cfx_list(items, 1)};
        enum { NC = sizeof choices / sizeof choices[0] };
        int n_args = cfx_op_schema(op)->n_args;
        int combos = 1;
        for (int a = 0; a < n_args; a++)
            combos *= NC;
        for (int k = 0; k < combos; k++) {
            cfx_value stack[8];
            for (int a = 0, r = k; a < n_args; a++, r /= NC)
                stack[a] = choices[r % NC];
            check_stack(op, stack, &cpu, &meta);
        }
    }
    /* the positions follow the schema when the op is defined again differently */
    cfx_library_free(impl);
    cfx_library_free(lib);
    lib = cfx_library_new(CFX_LIB_DEF, "fp", CFX_KEY_Undefined, "/dev/null", 5);
    cr_assert_eq(cfx_library_def(lib, "one(Tensor[] a) -> Tensor"), CFX_OK);
    cfx_op *op = cfx_op_find("fp::one");
    cr_assert(op);
    cr_expect(!op->tensor_pair_ok);
    cfx_library_free(lib);
    cfx_tensor_release(c);
    cfx_tensor_release(m);
}

/* A NULL plain Tensor: the shortcut falls back, select reports nothing and returns NULL. */
Test(dispatch_fastpaths, null_tensor_on_the_shortcut)
{
    cfx_op *op = cfx_builtin_op(CFX_OPID_mul_Tensor);
    cr_assert(op && op->tensor_pair_ok);
    cfx_tensor *c = cpu_tensor();
    cfx_value stack[2] = {cfx_tensor_value(c), cfx_tensor_value(NULL)};
    cfx_keyset ks;
    cr_expect_null(cfx_dispatch_select(op, stack, &ks));
    cr_expect(!cfx_error_occurred());
    cr_expect(cfx_keyset_eq(cfx_op_dispatch_keyset(op, stack), reference_keyset(op, stack)));
    cr_expect_null(cfx_mul(c, NULL));
    cr_expect_null(cfx_mul(NULL, c));
    cr_expect(!cfx_error_occurred(), "a NULL argument propagates without an error");
    cfx_tensor_release(c);
}

Test(dispatch_fastpaths, wrapper_parameters_match_the_schemas)
{
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK);
    for (int i = 0; i < CFX_OPID_COUNT; i++) {
        cfx_op *op = cfx_builtin_op((cfx_opid)i);
        cr_assert(op);
        cr_expect_eq(cfx_builtin_ops[i].tensor_params, op->dispatch_arg_mask, "%s", cfx_builtin_ops[i].name);
        cr_expect_eq(cfx_builtin_ops[i].required_tensor_params, op->required_tensor_mask, "%s",
                     cfx_builtin_ops[i].name);
    }
}

/* A good value for argument i of a built-in: `exact` picks the parameter's own C kind (the
 * boxed entry's fast path), otherwise one the general path converts, where there is one. */
static cfx_value good_value(const cfx_argument *a, cfx_tensor *t, bool exact, int variant)
{
    const cfx_type *ty = a->type;
    bool optional = ty->kind == CFX_TYPE_OPTIONAL;
    const cfx_type *e = optional ? ty->elems[0] : ty;
    /* valid for a [2, 3] input: view/empty sizes, strides, reduced dims, a normalized shape */
    static const cfx_value sizes[2] = {{CFX_V_INT, 0, {.i = 3}}, {CFX_V_INT, 0, {.i = 2}}};
    static const cfx_value strides[2] = {{CFX_V_INT, 0, {.i = 2}}, {CFX_V_INT, 0, {.i = 1}}};
    static const cfx_value dims[2] = {{CFX_V_INT, 0, {.i = 1}}, {CFX_V_INT, 0, {.i = 0}}};
    static const cfx_value last[1] = {{CFX_V_INT, 0, {.i = 3}}};
    switch (e->kind) {
    case CFX_TYPE_TENSOR:
        return optional && variant % 2 ? cfx_none() : cfx_tensor_value(t);
    case CFX_TYPE_SCALAR:
        return variant % 3 == 0 ? cfx_int(2) : variant % 3 == 1 ? cfx_double(0.5) : cfx_bool(true);
    case CFX_TYPE_INT:
    case CFX_TYPE_SYMINT:
        return cfx_int(1);
    case CFX_TYPE_FLOAT:
        return exact ? cfx_double(1e-5) : cfx_int(1);
    case CFX_TYPE_BOOL:
        return optional && exact ? cfx_none() : cfx_bool(false);
    case CFX_TYPE_LIST:
        if (optional && exact)
            return cfx_none();
        if (strcmp(a->name, "stride") == 0)
            return cfx_list(strides, 2);
        if (strcmp(a->name, "dim") == 0)
            return cfx_list(dims, variant % 2 ? 1 : 2);
        if (strcmp(a->name, "normalized_shape") == 0)
            return cfx_list(last, 1);
        return cfx_list(sizes, 2);
    case CFX_TYPE_SCALAR_TYPE:
        return exact ? cfx_none() : variant % 2 ? cfx_int(CFX_FLOAT64) : cfx_dtype_value(CFX_FLOAT64);
    case CFX_TYPE_DEVICE:
        return exact ? cfx_none() : cfx_device_value(t->device);
    default:
        return cfx_none();
    }
}

static void expect_same_returns(const cfx_op *op, int rc, const cfx_value *s1, const cfx_value *s2)
{
    if (rc != CFX_OK)
        return;
    for (int r = 0; r < cfx_op_schema(op)->n_returns; r++) {
        cr_assert_eq(s1[r].kind, CFX_V_TENSOR, "%s", cfx_op_name(op));
        cr_assert_eq(s2[r].kind, CFX_V_TENSOR, "%s", cfx_op_name(op));
        cfx_tensor *a = s1[r].u.t, *b = s2[r].u.t;
        cr_expect_eq(a->ndim, b->ndim, "%s", cfx_op_name(op));
        cr_expect_eq(a->dtype, b->dtype, "%s", cfx_op_name(op));
        cr_expect_eq(a->device.type, b->device.type, "%s", cfx_op_name(op));
        for (int d = 0; d < a->ndim && d < b->ndim; d++) {
            cr_expect_eq(a->sizes[d], b->sizes[d], "%s", cfx_op_name(op));
            cr_expect_eq(a->strides[d], b->strides[d], "%s", cfx_op_name(op));
        }
        /* CPU results hold values: the same ones (empty's are uninitialised) */
        if (a->device.type == CFX_DEVICE_CPU && strncmp(cfx_op_name(op), "aten::empty", 11) != 0 &&
            cfx_tensor_numel(a) == cfx_tensor_numel(b))
            for (int64_t i = 0; i < cfx_tensor_numel(a); i++) {
                double x = cfx_tensor_get_double(a, i), y = cfx_tensor_get_double(b, i);
                cr_expect(x == y || (x != x && y != y), "%s: element %lld: %g vs %g", cfx_op_name(op),
                          (long long)i, x, y);
            }
    }
}

Test(dispatch_fastpaths, boxed_entries_match_the_adapter_on_good_stacks)
{
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK);
    cfx_scope scope = cfx_scope_begin();
    cfx_tensor *c = cpu_tensor(), *m = meta_tensor();
    int compared = 0, succeeded = 0;
    for (int id = 0; id < CFX_OPID_COUNT; id++) {
        cfx_op *op = cfx_builtin_op((cfx_opid)id);
        const cfx_dispatch_key keys[] = {CFX_KEY_CPU, CFX_KEY_Meta};
        for (int kk = 0; kk < 2; kk++) {
            const cfx_kernel *k = cfx_op_kernel_for(op, cfx_keyset_of(keys[kk]));
            if (!cfx_kernel_is_valid(k) || !k->unboxed)
                continue;
            cfx_adapter *a = cfx_adapter_new(op->schema, k->unboxed);
            cr_assert(a, "%s: %s", op->qualified_name, cfx_error_message());
            const cfx_schema *s = cfx_op_schema(op);
            for (int variant = 0; variant < 6; variant++) {
                cfx_value s1[8], s2[8];
                for (int i = 0; i < s->n_args; i++)
                    s1[i] = good_value(&s->args[i], kk ? m : c, variant < 3, variant);
                memcpy(s2, s1, sizeof s1);
                cfx_error_clear();
                int rc1 = k->boxed(k->ctx, op, cfx_keyset_of(keys[kk]), s1);
                char *m1 = strdup(cfx_error_message() ? cfx_error_message() : "");
                cfx_error_clear();
                int rc2 = cfx_adapter_call_boxed(a, op, cfx_keyset_of(keys[kk]), s2);
                const char *m2 = cfx_error_message() ? cfx_error_message() : "";
                cr_expect_eq(rc1, rc2, "%s: status %d vs adapter %d (%s)", op->qualified_name, rc1, rc2, m1);
                cr_expect_str_eq(m1, m2, "%s", op->qualified_name);
                expect_same_returns(op, rc1 == rc2 ? rc1 : CFX_ERR, s1, s2);
                free(m1);
                cfx_error_clear();
                compared++;
                succeeded += rc1 == CFX_OK;
            }
            cfx_adapter_free(a);
        }
    }
    cr_expect_geq(compared, 30 * 6);
    cr_expect_geq(succeeded, compared / 2, "only %d of %d calls succeeded", succeeded, compared);
    cfx_scope_end(scope);
}

/* ------------------------------------------------------------------ cfx_mode_call_top */

typedef struct seen_mode {
    cfx_mode base;
    int calls, len;
    cfx_local_keys keys;
    cfx_mode *refill; /* pushed inside the handler and left there */
} seen_mode;

static int seen_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    seen_mode *m = (seen_mode *)self;
    if (m->calls++ == 0) {
        m->len = cfx_mode_stack_len();
        m->keys = cfx_local_keys_get();
    }
    if (m->refill)
        cfx_mode_push(m->refill);
    return cfx_mode_redispatch(op, stack);
}

static const cfx_mode_vtable seen_vt = {"SeenMode", seen_dispatch, NULL};

/* One mode, as the only one: the Python keys leave the included set during its handler. */
static seen_mode run_alone(cfx_mode_key key, cfx_tensor *x)
{
    seen_mode m = {0};
    cfx_mode_init(&m.base, &seen_vt, key);
    cfx_local_keys before = cfx_local_keys_get();
    cr_assert_eq(cfx_mode_push(&m.base), CFX_OK);
    cfx_local_keys pushed = cfx_local_keys_get();
    cr_assert_not_null(cfx_add(x, x), "%s", cfx_error_message());
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().included, pushed.included));
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().excluded, pushed.excluded));
    cr_expect_eq(cfx_mode_top(), &m.base);
    cr_assert_eq(cfx_mode_exit(&m.base), CFX_OK);
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().included, before.included));
    return m;
}

Test(dispatch_fastpaths, infra_and_user_tops_run_alike)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu_tensor();
    seen_mode u = run_alone(CFX_MODE_USER, x);
    seen_mode f = run_alone(CFX_MODE_FAKE, x);
    seen_mode p = run_alone(CFX_MODE_PROXY, x);
    cr_expect_eq(u.calls, 1);
    cr_expect_eq(f.calls, 1);
    cr_expect_eq(p.calls, 1);
    cr_expect_eq(u.len, 0);
    cr_expect_eq(f.len, 0);
    cr_expect(cfx_keyset_eq(u.keys.included, f.keys.included) && cfx_keyset_eq(u.keys.included, p.keys.included));
    cr_expect(cfx_keyset_eq(u.keys.excluded, f.keys.excluded) && cfx_keyset_eq(u.keys.excluded, p.keys.excluded));
    cr_expect(!cfx_keyset_has(u.keys.included, CFX_KEY_Python), "the last mode's handler runs without Python");
    cr_expect(cfx_keyset_has(u.keys.excluded, CFX_KEY_Functionalize), "keys above Python are excluded");

    /* a mode below: the handler on top sees it and keeps the Python keys */
    seen_mode below = {0}, top = {0};
    cfx_mode_init(&below.base, &seen_vt, CFX_MODE_FAKE);
    cfx_mode_init(&top.base, &seen_vt, CFX_MODE_PROXY);
    cfx_mode_push(&below.base);
    cfx_mode_push(&top.base);
    cr_assert_not_null(cfx_add(x, x), "%s", cfx_error_message());
    cr_expect_eq(top.len, 1);
    cr_expect(cfx_keyset_has(top.keys.included, CFX_KEY_Python));
    cr_expect(!cfx_keyset_has(below.keys.included, CFX_KEY_Python));
    cr_expect_eq(cfx_mode_exit(&top.base), CFX_OK);
    cr_expect_eq(cfx_mode_exit(&below.base), CFX_OK);
    cfx_scope_end(s);
}

Test(dispatch_fastpaths, put_back_into_a_filled_slot_fails)
{
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu_tensor();
    seen_mode first = {0}, second = {0};
    cfx_mode_init(&first.base, &seen_vt, CFX_MODE_FAKE);
    cfx_mode_init(&second.base, &seen_vt, CFX_MODE_FAKE);
    first.refill = &second.base;
    cfx_local_keys before = cfx_local_keys_get();
    cfx_mode_push(&first.base);
    cfx_local_keys pushed = cfx_local_keys_get();
    cr_expect_null(cfx_add(x, x));
    cr_expect_str_eq(cfx_error_message(), "trying to set the current FakeTensorMode, but one already exists");
    cr_expect_eq(cfx_mode_get(CFX_MODE_FAKE), &second.base, "the handler's mode keeps the slot");
    cr_expect_eq(cfx_mode_stack_len(), 1);
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().included, pushed.included));
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().excluded, pushed.excluded));
    cr_expect_eq(cfx_mode_exit(&second.base), CFX_OK);
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().included, before.included));
    cfx_scope_end(s);
}

/* ------------------------------------------------------------------ constant slots and shifts */

Test(dispatch_fastpaths, constant_slots_match_the_key_tables)
{
    cr_expect_eq(CFX_MODE_PYTHON_SLOT, cfx_key_table_index(CFX_KEY_Python));
    cr_expect_eq(CFX_MODE_SNAPSHOT_SLOT, cfx_key_table_index(CFX_KEY_PythonTLSSnapshot));
    cr_expect_eq(CFX_FAKE_META_SLOT, cfx_key_table_index(CFX_KEY_Meta));
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    int n = cfx_keyset_runtime_keys(cfx_keyset_full(), keys, CFX_NUM_RUNTIME_ENTRIES);
    cr_assert_gt(n, 40);
    uint64_t x = 88172645463325252ull;
    int hits_py = 0, hits_snap = 0;
    for (int iter = 0; iter < 20000; iter++) {
        cfx_keyset ks = cfx_keyset_empty();
        for (int j = 0; j <= iter % 4; j++) {
            test_rand(&x);
            /* mostly keys up to PythonTLSSnapshot, so that both cases come up often */
            cfx_dispatch_key k = keys[x % n];
            if (j > 0 || iter % 5)
                while (cfx_key_to_functionality(k) > CFX_KEY_PythonTLSSnapshot)
                    k = keys[(x >>= 7) % n];
            ks = cfx_keyset_add(ks, k);
        }
        if (iter % 3 == 0)
            ks = cfx_keyset_add(ks, CFX_KEY_Python);
        if (iter % 7 == 0)
            ks = cfx_keyset_add(ks, CFX_KEY_PythonTLSSnapshot);
        cfx_dispatch_key top = cfx_keyset_highest_functionality(ks);
        bool py = (ks.repr >> CFX_MODE_PYTHON_SHIFT) == 1, snap = (ks.repr >> CFX_MODE_SNAPSHOT_SHIFT) == 1;
        cr_assert_eq(py, top == CFX_KEY_Python, "%llx", (unsigned long long)ks.repr);
        cr_assert_eq(snap, top == CFX_KEY_PythonTLSSnapshot, "%llx", (unsigned long long)ks.repr);
        if (py) {
            hits_py++;
            cr_assert_eq(cfx_keyset_table_index(ks), CFX_MODE_PYTHON_SLOT);
        }
        if (snap) {
            hits_snap++;
            cr_assert_eq(cfx_keyset_table_index(ks), CFX_MODE_SNAPSHOT_SLOT);
        }
    }
    cr_expect_gt(hits_py, 500);
    cr_expect_gt(hits_snap, 500);
}

/* ------------------------------------------------------------------ the Python-key shortcuts */

/* What a handler saw on its first call. */
typedef struct obs_mode {
    cfx_mode base;
    int calls, len;
    cfx_keyset ks;
    cfx_local_keys keys, snap;
    int snap_rc;
} obs_mode;

static int obs_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    obs_mode *m = (obs_mode *)self;
    if (m->calls++ == 0) {
        m->len = cfx_mode_stack_len();
        m->ks = ks;
        m->keys = cfx_local_keys_get();
        cfx_tls_snapshot_guard g;
        m->snap_rc = cfx_tls_snapshot_restore_begin(&g);
        m->snap = cfx_local_keys_get();
        cfx_tls_snapshot_restore_end(&g);
        cfx_error_clear();
    }
    return cfx_mode_redispatch(op, stack);
}

static const cfx_mode_vtable obs_vt = {"ObservingMode", obs_dispatch, NULL};

static void expect_same_obs(const obs_mode *a, const obs_mode *b, const char *what)
{
    cr_expect_eq(a->calls, b->calls, "%s", what);
    cr_expect_eq(a->len, b->len, "%s", what);
    cr_expect(cfx_keyset_eq(a->ks, b->ks), "%s: ks %llx vs %llx", what, (unsigned long long)a->ks.repr,
              (unsigned long long)b->ks.repr);
    cr_expect(cfx_keyset_eq(a->keys.included, b->keys.included) && cfx_keyset_eq(a->keys.excluded, b->keys.excluded),
              "%s", what);
    cr_expect_eq(a->snap_rc, b->snap_rc, "%s", what);
    cr_expect(cfx_keyset_eq(a->snap.included, b->snap.included) && cfx_keyset_eq(a->snap.excluded, b->snap.excluded),
              "%s", what);
}

typedef struct py_rec {
    int calls;
    cfx_keyset ks;
    bool forward; /* hand the call on to the Python fallback, as if it were not there */
} py_rec;

static int py_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    py_rec *r = ctx;
    r->calls++;
    r->ks = ks;
    if (r->forward)
        return cfx_python_fallback(NULL, op, ks, stack);
    return CFX_OK; /* stack[0] stays the input */
}

static int cpu_identity(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks, (void)stack;
    return CFX_OK;
}

typedef struct py_ops {
    cfx_library *lib, *impl;
    cfx_op *plain, *own, *fwd;
    py_rec own_rec, fwd_rec;
} py_ops;

/* plain: the Python fallback in its Python slot; own: a Python kernel of its own; fwd: a
 * Python kernel that hands on to the Python fallback (the general path, same behaviour). */
static void py_ops_init(py_ops *o)
{
    memset(o, 0, sizeof *o);
    o->fwd_rec.forward = true;
    o->lib = cfx_library_new(CFX_LIB_DEF, "fpy", CFX_KEY_Undefined, "/dev/null", 1);
    o->impl = cfx_library_new(CFX_LIB_IMPL, "fpy", CFX_KEY_Undefined, "/dev/null", 2);
    const char *names[3] = {"plain", "own", "fwd"};
    for (int i = 0; i < 3; i++) {
        char schema[64];
        snprintf(schema, sizeof schema, "%s(Tensor a, Tensor b) -> Tensor", names[i]);
        cr_assert_eq(cfx_library_def(o->lib, schema), CFX_OK, "%s", cfx_error_message());
        cr_assert_eq(cfx_library_impl_boxed_at(o->impl, names[i], CFX_KEY_CPU, cpu_identity, NULL, "/dev/null", 3),
                     CFX_OK);
    }
    cr_assert_eq(cfx_library_impl_boxed_at(o->impl, "own", CFX_KEY_Python, py_kernel, &o->own_rec, "/dev/null", 4),
                 CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(o->impl, "fwd", CFX_KEY_Python, py_kernel, &o->fwd_rec, "/dev/null", 5),
                 CFX_OK);
    o->plain = cfx_op_find("fpy::plain");
    o->own = cfx_op_find("fpy::own");
    o->fwd = cfx_op_find("fpy::fwd");
    cr_assert(o->plain && o->own && o->fwd);
}

static void py_ops_free(py_ops *o)
{
    cfx_library_free(o->impl);
    cfx_library_free(o->lib);
}

/* A fresh dispatch landing on Python (PythonTLSSnapshot excluded, a mode set), through the
 * shortcut (cfx_op_dispatch_stack) and through the table (cfx_op_redispatch). */
Test(dispatch_fastpaths, fresh_dispatch_to_python_matches_the_table)
{
    py_ops o;
    py_ops_init(&o);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu_tensor();
    cfx_key_guard g;
    cfx_exclude_keys_begin(&g, cfx_keyset_of(CFX_KEY_PythonTLSSnapshot));
    for (int user = 0; user < 2; user++) {
        obs_mode a = {0}, b = {0};
        cfx_mode_init(&a.base, &obs_vt, user ? CFX_MODE_USER : CFX_MODE_FAKE);
        cfx_mode_init(&b.base, &obs_vt, user ? CFX_MODE_USER : CFX_MODE_FAKE);
        cfx_op *ops[3] = {o.plain, o.own, o.fwd};
        for (int i = 0; i < 3; i++) {
            py_rec *r = i == 1 ? &o.own_rec : i == 2 ? &o.fwd_rec : NULL;
            cfx_value s1[2] = {cfx_tensor_value(x), cfx_tensor_value(x)}, s2[2];
            memcpy(s2, s1, sizeof s1);
            a.calls = b.calls = 0;
            cr_assert_eq(cfx_mode_push(&a.base), CFX_OK);
            cfx_keyset want = cfx_op_dispatch_keyset(ops[i], s1);
            cr_expect_eq((want.repr >> CFX_MODE_PYTHON_SHIFT), 1, "Python on top");
            int calls0 = r ? r->calls : 0;
            int rc1 = cfx_op_dispatch_stack(ops[i], s1);
            int calls1 = r ? r->calls : 0;
            cfx_keyset rks1 = r ? r->ks : cfx_keyset_empty();
            cr_assert_eq(cfx_mode_exit(&a.base), CFX_OK);
            cr_assert_eq(cfx_mode_push(&b.base), CFX_OK);
            int rc2 = cfx_op_redispatch(ops[i], cfx_op_dispatch_keyset(ops[i], s2), s2);
            int calls2 = r ? r->calls : 0;
            cr_assert_eq(cfx_mode_exit(&b.base), CFX_OK);
            cr_expect_eq(rc1, CFX_OK, "%s", cfx_error_message());
            cr_expect_eq(rc1, rc2);
            cr_expect(s1[0].kind == CFX_V_TENSOR && s1[0].u.t == x && s2[0].u.t == x);
            expect_same_obs(&a, &b, cfx_op_name(ops[i]));
            cr_expect_eq(a.calls, i == 1 ? 0 : 1, "%s: the mode runs unless the op has its own Python kernel",
                         cfx_op_name(ops[i]));
            if (r) {
                cr_expect_eq(calls1 - calls0, 1);
                cr_expect_eq(calls2 - calls1, 1);
                cr_expect(cfx_keyset_eq(rks1, r->ks));
            }
            if (i == 0)
                cr_expect(cfx_keyset_eq(a.ks, want), "the handler gets the call's key set");
        }
    }
    cfx_key_guard_end(&g);
    cfx_scope_end(s);
    py_ops_free(&o);
}

/* A traced call enters by PythonTLSSnapshot: with the Python fallback next, its fallback calls
 * the top mode itself and takes the snapshot there; a handler reached the general way (fwd)
 * sees the same, alone or under another mode, and the snapshot is gone afterwards. */
Test(dispatch_fastpaths, snapshot_fallback_direct_and_general_agree)
{
    py_ops o;
    py_ops_init(&o);
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cpu_tensor();
    for (int nested = 0; nested < 3; nested++) {
        obs_mode top[2], below[2];
        int fwd0 = o.fwd_rec.calls;
        for (int w = 0; w < 2; w++) {
            memset(&top[w], 0, sizeof top[w]);
            memset(&below[w], 0, sizeof below[w]);
            cfx_mode_init(&top[w].base, &obs_vt, nested == 2 ? CFX_MODE_PROXY : CFX_MODE_USER);
            cfx_mode_init(&below[w].base, &obs_vt, CFX_MODE_FAKE);
            if (nested)
                cr_assert_eq(cfx_mode_push(&below[w].base), CFX_OK);
            cr_assert_eq(cfx_mode_push(&top[w].base), CFX_OK);
            cfx_local_keys entry = cfx_local_keys_get();
            cfx_value st[2] = {cfx_tensor_value(x), cfx_tensor_value(x)};
            cr_expect_eq(cfx_op_call(w ? o.fwd : o.plain, st, 2), CFX_OK, "%s", cfx_error_message());
            cr_expect_eq(top[w].snap_rc, CFX_OK);
            cr_expect(cfx_keyset_eq(top[w].snap.included, entry.included) &&
                      cfx_keyset_eq(top[w].snap.excluded, entry.excluded), "the keys as the call entered");
            if (nested) {
                cr_expect_eq(below[w].calls, 1);
                cr_expect_eq(below[w].snap_rc, CFX_OK);
                cr_expect(cfx_keyset_eq(below[w].snap.included, entry.included) &&
                          cfx_keyset_eq(below[w].snap.excluded, entry.excluded), "the outermost snapshot");
            }
            cr_assert_eq(cfx_mode_exit(&top[w].base), CFX_OK);
            if (nested)
                cr_assert_eq(cfx_mode_exit(&below[w].base), CFX_OK);
            cfx_tls_snapshot_guard g;
            cr_expect_lt(cfx_tls_snapshot_restore_begin(&g), 0, "no snapshot after the call");
            cfx_error_clear();
        }
        expect_same_obs(&top[0], &top[1], "top");
        expect_same_obs(&below[0], &below[1], "below");
        /* fwd's kernel runs for the call and, under another mode, for the top handler's redispatch */
        cr_expect_eq(o.fwd_rec.calls - fwd0, nested ? 2 : 1);
    }
    /* the op's own Python kernel runs instead of the mode */
    obs_mode m = {0};
    cfx_mode_init(&m.base, &obs_vt, CFX_MODE_PROXY);
    cr_assert_eq(cfx_mode_push(&m.base), CFX_OK);
    cfx_value st[2] = {cfx_tensor_value(x), cfx_tensor_value(x)};
    cr_expect_eq(cfx_op_call(o.own, st, 2), CFX_OK);
    cr_assert_eq(cfx_mode_exit(&m.base), CFX_OK);
    cr_expect_eq(m.calls, 0);
    cr_expect_eq(o.own_rec.calls, 1);
    cfx_scope_end(s);
    py_ops_free(&o);
}

/* ------------------------------------------------------------------ empty slots */

static int any_kernel(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks, (void)stack;
    return CFX_OK;
}

Test(dispatch_fastpaths, empty_slots_stay_all_zero)
{
    cr_assert_eq(cfx_dispatcher_check_all_invariants(), CFX_OK, "%s", cfx_error_message());
    /* kernels and fallbacks come and go: every slot they leave is all zero again */
    cfx_library *lib = cfx_library_new(CFX_LIB_DEF, "fz", CFX_KEY_Undefined, "/dev/null", 1);
    cfx_library *impl = cfx_library_new(CFX_LIB_IMPL, "fz", CFX_KEY_Undefined, "/dev/null", 2);
    cfx_library *fb = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_FPGA, "/dev/null", 3);
    cr_assert(lib && impl && fb);
    cr_assert_eq(cfx_library_def(lib, "z(Tensor a) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(impl, "z", CFX_KEY_Meta, any_kernel, NULL, "/dev/null", 4), CFX_OK);
    cr_assert_eq(cfx_library_impl_boxed_at(impl, "z", CFX_KEY_CompositeImplicitAutograd, any_kernel, NULL,
                                           "/dev/null", 5),
                 CFX_OK);
    cr_assert_eq(cfx_library_fallback_at(fb, CFX_KEY_FPGA, any_kernel, NULL, "/dev/null", 6), CFX_OK,
                 "%s", cfx_error_message());
    cr_expect_eq(cfx_dispatcher_check_all_invariants(), CFX_OK, "%s", cfx_error_message());
    cfx_library_free(fb);
    cfx_library_free(impl);
    cr_expect_eq(cfx_dispatcher_check_all_invariants(), CFX_OK, "%s", cfx_error_message());
    cfx_op *op = cfx_op_find("fz::z");
    cr_assert(op);
    for (int i = 0; i < CFX_NUM_RUNTIME_ENTRIES; i++) {
        const cfx_kernel *k = &op->table[i];
        if (!cfx_kernel_is_valid(k))
            cr_expect(!k->boxed && !k->unboxed && !k->ctx && !k->flags, "slot %d", i);
    }
    /* an empty slot still reports the missing kernel, the wrappers' way and the boxed way */
    cfx_tensor *m = meta_tensor();
    cfx_value st[1] = {cfx_tensor_value(m)};
    cr_expect_eq(cfx_op_call(op, st, 1), CFX_ERR_NOTIMPL);
    cr_expect(strstr(cfx_error_message(), "Could not run 'fz::z' with arguments from the 'Meta' backend."), "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_library_free(lib);
    cfx_tensor_release(m);
}

/* ------------------------------------------------------------------ the mode stack word */

/* Random pushes, pops, unsets and exits against a plain model of the logical stack. */
Test(dispatch_fastpaths, mode_stack_word_matches_a_list)
{
    obs_mode modes[7];
    const cfx_mode_key keys[7] = {CFX_MODE_FAKE, CFX_MODE_PROXY, CFX_MODE_FUNCTIONAL, CFX_MODE_USER,
                                  CFX_MODE_USER, CFX_MODE_USER, CFX_MODE_USER};
    for (int i = 0; i < 7; i++) {
        memset(&modes[i], 0, sizeof modes[i]);
        cfx_mode_init(&modes[i].base, &obs_vt, keys[i]);
    }
    cfx_mode *infra[3] = {0}, *user[64];
    int n_user = 0;
    cfx_local_keys base = cfx_local_keys_get();
    uint64_t x = 2463534242ull;
    for (int step = 0; step < 4000; step++) {
        test_rand(&x);
        int what = (int)(x % 4), i = (int)((x >> 8) % 7);
        cfx_mode *m = &modes[i].base;
        if (what == 0) {
            bool free_slot = keys[i] < 0 ? n_user < 64 : !infra[keys[i]];
            bool on_stack = false;
            for (int j = 0; j < n_user; j++)
                on_stack |= user[j] == m;
            if (keys[i] < 0 && on_stack)
                continue; /* the model keeps each user mode once */
            int rc = cfx_mode_push(m);
            cr_assert_eq(rc == CFX_OK, free_slot, "step %d", step);
            if (rc == CFX_OK) {
                if (keys[i] < 0)
                    user[n_user++] = m;
                else
                    infra[keys[i]] = m;
            }
            cfx_error_clear();
        } else if (what == 1) {
            cfx_mode *want = n_user ? user[n_user - 1] : infra[2] ? infra[2] : infra[1] ? infra[1] : infra[0];
            cr_assert_eq(cfx_mode_pop(), want, "step %d", step);
            if (n_user)
                n_user--;
            else if (want)
                infra[want == infra[2] ? 2 : want == infra[1] ? 1 : 0] = NULL;
            cfx_error_clear();
        } else if (what == 2 && keys[i] >= 0) {
            cr_assert_eq(cfx_mode_unset(keys[i]), infra[keys[i]], "step %d", step);
            infra[keys[i]] = NULL;
        } else if (what == 3) {
            bool ok = keys[i] >= 0 ? infra[keys[i]] == m : n_user && user[n_user - 1] == m;
            cr_assert_eq(cfx_mode_exit(m) == CFX_OK, ok, "step %d", step);
            if (ok && keys[i] >= 0)
                infra[keys[i]] = NULL;
            else if (ok)
                n_user--;
            cfx_error_clear();
        }
        int len = (infra[0] != NULL) + (infra[1] != NULL) + (infra[2] != NULL) + n_user;
        cr_assert_eq(cfx_mode_stack_len(), len, "step %d", step);
        cr_assert_eq(cfx_mode_any_set(), len > 0);
        for (int k = 0; k < 3; k++)
            cr_assert_eq(cfx_mode_get((cfx_mode_key)k), infra[k]);
        int idx = 0;
        for (int k = 0; k < 3; k++)
            if (infra[k])
                cr_assert_eq(cfx_mode_stack_at(idx++), infra[k]);
        for (int k = 0; k < n_user; k++)
            cr_assert_eq(cfx_mode_stack_at(idx++), user[k]);
        cr_assert_null(cfx_mode_stack_at(idx));
        cfx_error_clear();
        cfx_mode *top = n_user ? user[n_user - 1] : infra[2] ? infra[2] : infra[1] ? infra[1] : infra[0];
        cr_assert_eq(cfx_mode_top(), top);
        cr_assert_eq(cfx_keyset_has(cfx_local_keys_get().included, CFX_KEY_Python), len > 0, "step %d", step);
    }
    while (cfx_mode_stack_len() > 0)
        cfx_mode_pop();
    cr_expect(cfx_keyset_eq(cfx_local_keys_get().included, base.included));
}
