/* test_functionalize.c - make_fx(functionalize(f)) against PyTorch 2.13, and functional tensors.
 *
 * Each program here has a Python twin in tools/interop/gen_functionalize.py; its graph and code
 * under make_fx(torch.func.functionalize(f)) are in tests/data/functionalize.txt, the same in
 * real and fake tracing. The real trace also runs the program, so the trailing copy_ must have
 * written the mutation into the caller's input. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/functional.h"
#include "tests/dispatch/golden_blocks.h"
#include "tests/test_util.h"

/* The block "@@@ name kind" of the golden file (malloc'd), or NULL. */
static char *block(const char *name, const char *kind) { return golden_block("tests/data/functionalize.txt", name, kind); }

static cfx_tensor *mutate(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *a = cfx_sin(x);
    (void)cfx_cos(y);
    cfx_add_(a, y);
    cfx_add_(x, y);
    return cfx_mul(a, y);
}

static cfx_tensor2 view_inplace(cfx_tensor *x)
{
    cfx_tensor *v = cfx_view(x, CFX_INTS(-1));
    cfx_add_(v, v);
    cfx_tensor *t = cfx_t(x);
    return (cfx_tensor2){cfx_relu(t), v};
}

static cfx_tensor *clone_mm(cfx_tensor *x, cfx_tensor *w)
{
    cfx_tensor *y = cfx_clone(x);
    cfx_add_(y, x);
    cfx_tensor *z = cfx_t(y);
    return cfx_sum(cfx_mm(z, w), CFX_INTS(1));
}

static cfx_tensor *two_views(cfx_tensor *x)
{
    cfx_tensor *a = cfx_view(x, CFX_INTS(6));
    cfx_tensor *b = cfx_view(a, CFX_INTS(3, 2));
    cfx_add_(b, b);
    return cfx_relu(x);
}

static cfx_tensor *input_twice(cfx_tensor *x, cfx_tensor *y)
{
    cfx_add_(x, y);
    cfx_add_(x, y);
    return x;
}

static cfx_tensor *t_inplace(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *v = cfx_t(x);
    cfx_add_(v, cfx_t(y));
    return cfx_sum(v, CFX_INTS(0));
}

static cfx_tensor *shape_views(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *v = cfx_transpose(x, 0, 1);
    cfx_add_(v, cfx_t(y));
    cfx_tensor *u = cfx_unsqueeze(x, 0);
    cfx_add_(u, u);
    cfx_tensor *p = cfx_permute(x, CFX_INTS(1, 0));
    cfx_add_(p, p);
    return cfx_relu(x);
}

static cfx_tensor *copy_into(cfx_tensor *x, cfx_tensor *y)
{
    cfx_copy_(x, cfx_t(cfx_t(y)));
    return cfx_relu(x);
}

typedef struct program {
    const char *name;
    cfx_fnptr fn;
    const char *sig;
    int n_args;
} program;

static const program programs[] = {
    {"mutate", (cfx_fnptr)mutate, "(Tensor x, Tensor y) -> Tensor", 2},
    {"view_inplace", (cfx_fnptr)view_inplace, "(Tensor x) -> (Tensor, Tensor)", 1},
    {"clone_mm", (cfx_fnptr)clone_mm, "(Tensor x, Tensor w) -> Tensor", 2},
    {"two_views", (cfx_fnptr)two_views, "(Tensor x) -> Tensor", 1},
    {"input_twice", (cfx_fnptr)input_twice, "(Tensor x, Tensor y) -> Tensor", 2},
    {"t_inplace", (cfx_fnptr)t_inplace, "(Tensor x, Tensor y) -> Tensor", 2},
    {"shape_views", (cfx_fnptr)shape_views, "(Tensor x, Tensor y) -> Tensor", 2},
    {"copy_into", (cfx_fnptr)copy_into, "(Tensor x, Tensor y) -> Tensor", 2},
};

/* The twin's t23(seed): 2x3 values on a 1/16 grid. */
static cfx_tensor *t23(int seed)
{
    float d[6];
    for (int i = 0; i < 6; i++)
        d[i] = (float)((i * 7 + seed * 13) % 32 - 16) / 16.0f;
    return cfx_tensor_from_floats(d, (const int64_t[]){2, 3}, 2);
}

static const program *find(const char *name)
{
    for (int i = 0; i < COUNT_OF(programs); i++)
        if (!strcmp(programs[i].name, name))
            return &programs[i];
    return NULL;
}

static void check(const char *name)
{
    const program *p = find(name);
    char *want_graph = block(name, "graph"), *want_code = block(name, "code");
    cr_assert(p && want_graph && want_code, "missing program or golden for %s (tools/interop/gen_functionalize.py)", name);
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_tensor *a[2] = {t23(0), !strcmp(name, "mutate") ? t23(5) : t23(1)};
        cfx_value args[2] = {cfx_tensor_value(a[0]), cfx_tensor_value(a[1])};
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false, .functionalize = true};
        cfx_graph_module *gm = cfx_make_fx(p->fn, p->sig, args, p->n_args, &o);
        cr_assert(gm, "%s: %s", name, cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s: lint: %s", name, cfx_error_message());
        char *graph = cfx_graph_to_string(g);
        char *code = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(graph, want_graph, "%s (mode %d) graph", name, mode);
        cr_expect_str_eq(code, want_code, "%s (mode %d) code", name, mode);
        free(graph);
        free(code);
        cr_expect_eq(cfx_mode_stack_len(), 0, "%s: modes left on the stack", name);
        cr_expect(!cfx_keyset_has(cfx_local_keys_get().included, CFX_KEY_Functionalize), "%s: key left on", name);
        cfx_graph_module_free(gm);
        cfx_tensor_release(a[0]);
        cfx_tensor_release(a[1]);
    }
    cr_expect_eq(cfx_tensor_live_count(), live0, "%s: tensors leaked", name);
    free(want_graph);
    free(want_code);
}

Test(functionalize, mutate) { check("mutate"); }
Test(functionalize, view_inplace) { check("view_inplace"); }
Test(functionalize, clone_mm) { check("clone_mm"); }
Test(functionalize, two_views) { check("two_views"); }
Test(functionalize, input_twice) { check("input_twice"); }
Test(functionalize, t_inplace) { check("t_inplace"); }
Test(functionalize, shape_views) { check("shape_views"); }
Test(functionalize, copy_into) { check("copy_into"); }

/* The real trace runs the program: the copy_ wrote x + y + y into the caller's x, and the
 * returned values are what eager PyTorch computes. */
Test(functionalize, real_trace_writes_inputs_back)
{
    cfx_tensor *x = t23(0), *y = t23(1);
    float x0[6], y0[6];
    for (int i = 0; i < 6; i++) {
        x0[i] = (float)cfx_tensor_get_double(x, i);
        y0[i] = (float)cfx_tensor_get_double(y, i);
    }
    cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
    cfx_make_fx_options o = {CFX_TRACE_REAL, NULL, NULL, false, .functionalize = true};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)input_twice, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
    cr_assert(gm, "%s", cfx_error_message());
    for (int i = 0; i < 6; i++)
        cr_expect_eq(cfx_tensor_get_double(x, i), (double)(x0[i] + y0[i] + y0[i]), "x[%d]", i);
    cfx_graph_module_free(gm);
    cfx_tensor_release(x);
    cfx_tensor_release(y);
}

/* Functional tensors by hand: wrapping, the value, syncing a view after a mutation. */
Test(functionalize, wrappers)
{
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *x = t23(0);
    cfx_autorelease(x);
    cfx_functionalize_call c;
    cfx_value args[1] = {cfx_tensor_value(x)};
    cr_assert_eq(cfx_functionalize_begin(&c, args, 1), CFX_OK, "%s", cfx_error_message());
    cfx_tensor *w = args[0].u.t;
    cr_expect(cfx_tensor_is_functional(w));
    cr_expect(!cfx_tensor_is_functional(x));
    cr_expect_eq(cfx_functional_value(w), x);
    cr_expect(cfx_keyset_has(w->keys, CFX_KEY_Functionalize));
    cr_expect(!cfx_keyset_has(w->keys, CFX_KEY_Python));
    cr_expect_eq(cfx_functional_wrap(w), NULL);
    cr_expect(strstr(cfx_error_message(), "already functional"), "%s", cfx_error_message());
    cfx_error_clear();
    cfx_tensor *v = cfx_view(w, CFX_INTS(-1));
    cr_assert(v && cfx_tensor_is_functional(v));
    cr_expect(!cfx_functional_has_data_mutation(w));
    cfx_add_(v, v);
    cr_expect(cfx_functional_has_data_mutation(w));
    cr_expect_eq(cfx_functional_value(w), x, "the base is synced lazily");
    cr_assert_eq(cfx_functional_sync(w), CFX_OK);
    cr_expect_neq(cfx_functional_value(w), x);
    cr_expect_eq(cfx_tensor_get_double(cfx_functional_value(w), 1), 2 * (-9.0 / 16));
    cfx_value rets[1] = {cfx_tensor_value(v)};
    cr_assert_eq(cfx_functionalize_end(&c, rets, 1, true), CFX_OK, "%s", cfx_error_message());
    cr_expect(!cfx_tensor_is_functional(rets[0].u.t));
    cr_expect_eq(rets[0].u.t->ndim, 1);
    cr_expect_eq(cfx_tensor_get_double(x, 1), 2 * (-9.0 / 16), "copy_ wrote the mutation back");
    cr_expect_eq(cfx_mode_stack_len(), 0);
    cfx_scope_end(sc);
}

Test(functionalize, errors)
{
    cfx_functionalize_call c;
    cfx_value args[1] = {cfx_none()};
    cr_expect_neq(cfx_functionalize_begin(&c, args, 1), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "scope"), "%s", cfx_error_message());
    cfx_error_clear();
    /* an in-place op without a functional variant of its name: bernoulli_.float (2.13's is
     * bernoulli.p, which functionalization finds by its own table) */
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *x = cfx_autorelease(t23(0)), *y = cfx_autorelease(t23(1));
    cfx_value a2[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
    cr_assert_eq(cfx_functionalize_begin(&c, a2, 2), CFX_OK);
    cr_expect_eq(cfx_bernoulli_(a2[0].u.t), NULL);
    cr_expect_str_eq(cfx_error_message(),
                     "functionalization: aten::bernoulli_.float writes to its input and cfx has no functional variant of "
                     "it");
    cfx_error_clear();
    /* a plain tensor mutated with a functional one */
    cr_expect_eq(cfx_add_(y, a2[0].u.t), NULL);
    cr_expect(strstr(cfx_error_message(), "mutating a non-functional tensor with a functional tensor is not allowed"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_eq(cfx_functionalize_end(&c, NULL, 0, false), CFX_ERR);
    cr_expect_eq(cfx_mode_stack_len(), 0);
    cfx_scope_end(sc);
}

/* The driver: cfx trace mutate --functionalize prints the golden graph. */
Test(functionalize, cli)
{
    char *out = NULL;
    int rc = test_run_command("build/cfx trace mutate --functionalize", &out);
    cr_assert_eq(rc, 0, "%s", out ? out : "");
    char *want = block("mutate", "graph");
    cr_assert(want);
    size_t n = strlen(out);
    if (n && out[n - 1] == '\n')
        out[n - 1] = '\0';
    cr_expect_str_eq(out, want);
    free(out);
    free(want);
}

/* ---- crossref functionalize: Meta kernels that lie, registered from C ---------------------- */

static cfx_tensor *cpu_copy_of(cfx_tensor *x)
{
    cfx_tensor *r = cfx_tensor_new(x->sizes, x->ndim, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    for (int64_t i = 0; r && i < cfx_tensor_numel(x); i++)
        ((float *)cfx_tensor_data(r))[i] = (float)cfx_tensor_get_double(x, i);
    return r;
}
static cfx_tensor *liar_strides_cpu(cfx_tensor *x) { return cpu_copy_of(x); }
static cfx_tensor *liar_strides_meta(cfx_tensor *x)
{
    return cfx_tensor_new_strided(x->sizes, (const int64_t[]){1, x->sizes[0]}, 2, cfx_tensor_dtype(x),
                                  cfx_device_make(CFX_DEVICE_META));
}
static cfx_tensor *liar_sizes_cpu(cfx_tensor *x, cfx_tensor *y, int64_t k)
{
    (void)y, (void)k;
    return cpu_copy_of(x);
}
static cfx_tensor *liar_sizes_meta(cfx_tensor *x, cfx_tensor *y, int64_t k)
{
    (void)y, (void)k;
    return cfx_tensor_new((const int64_t[]){x->sizes[1], x->sizes[0]}, 2, cfx_tensor_dtype(x),
                          cfx_device_make(CFX_DEVICE_META));
}
static cfx_tensor *liar_dtype_cpu(cfx_tensor *x, cfx_value dims)
{
    (void)dims;
    return cpu_copy_of(x);
}
static cfx_tensor *liar_dtype_meta(cfx_tensor *x, cfx_value dims)
{
    (void)dims;
    return cfx_tensor_new(x->sizes, x->ndim, CFX_INT64, cfx_device_make(CFX_DEVICE_META));
}

static cfx_library *liars(void)
{
    cfx_library *lib = CFX_LIBRARY(CFX_LIB_DEF, "cfxtest");
    cr_assert(lib);
    cr_assert_eq(cfx_library_def(lib, "liar_strides(Tensor x) -> Tensor"), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(cfx_library_def(lib, "liar_sizes(Tensor x, Tensor y, *, int k=1) -> Tensor"), CFX_OK);
    cr_assert_eq(cfx_library_def(lib, "liar_dtype(Tensor x, int[] dims) -> Tensor"), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "liar_strides", CFX_KEY_CPU, liar_strides_cpu), CFX_OK, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL(lib, "liar_strides", CFX_KEY_Meta, liar_strides_meta), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "liar_sizes", CFX_KEY_CPU, liar_sizes_cpu), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "liar_sizes", CFX_KEY_Meta, liar_sizes_meta), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "liar_dtype", CFX_KEY_CPU, liar_dtype_cpu), CFX_OK);
    cr_assert_eq(CFX_IMPL(lib, "liar_dtype", CFX_KEY_Meta, liar_dtype_meta), CFX_OK);
    return lib;
}

static cfx_tensor *call1(const char *name, cfx_value *stack, int n)
{
    cfx_value s[4];
    memcpy(s, stack, (size_t)n * sizeof *s);
    return cfx_op_call(cfx_op_find(name), s, n, 4) == CFX_OK ? s[0].u.t : NULL;
}

static cfx_tensor *liar_strides(cfx_tensor *x, cfx_tensor *y)
{
    cfx_value a[1] = {cfx_tensor_value(cfx_add(x, y))};
    return call1("cfxtest::liar_strides", a, 1);
}
static cfx_tensor *liar_sizes(cfx_tensor *x, cfx_tensor *y)
{
    cfx_value a[3] = {cfx_tensor_value(cfx_t(x)), cfx_tensor_value(y), cfx_int(2)};
    return call1("cfxtest::liar_sizes", a, 3);
}
static cfx_tensor *liar_dtype(cfx_tensor *x, cfx_tensor *y)
{
    (void)y;
    static const cfx_value dims[2] = {{CFX_V_INT, 0, {.i = 0}}, {CFX_V_INT, 0, {.i = 1}}};
    cfx_value a[2] = {cfx_tensor_value(x), cfx_list(dims, 2)};
    return call1("cfxtest::liar_dtype", a, 2);
}

static void check_liar(const char *name, cfx_fnptr fn)
{
    cfx_library *lib = liars();
    char *want = block(name, "error");
    cr_assert(want);
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_tensor *x = t23(0), *y = t23(1);
        cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false, .functionalize = true};
        /* without the check the lie goes unnoticed */
        cfx_graph_module *gm = cfx_make_fx(fn, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
        cr_expect(gm, "%s", cfx_error_message());
        cfx_graph_module_free(gm);
        cfx_error_clear();
        cfx_crossref_guard g;
        cfx_crossref_functionalize_begin(&g);
        cr_expect(cfx_crossref_functionalize_active());
        gm = cfx_make_fx(fn, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
        cfx_crossref_functionalize_end(&g);
        cr_expect(!cfx_crossref_functionalize_active());
        if (mode == CFX_TRACE_REAL) {
            cr_expect_null(gm);
            cr_expect_str_eq(cfx_error_message(), want, "%s (mode %d)", name, mode);
        } else {
            /* a fake trace computes the "real" result with the same lying Meta kernel: it
             * agrees with itself and passes, as in 2.13 */
            cr_expect(gm, "%s: %s", name, cfx_error_message());
        }
        cfx_graph_module_free(gm);
        cfx_error_clear();
        cr_expect_eq(cfx_mode_stack_len(), 0);
        cfx_tensor_release(x);
        cfx_tensor_release(y);
    }
    free(want);
    cfx_library_free(lib);
}

Test(crossref, lying_strides) { check_liar("liar_strides", (cfx_fnptr)liar_strides); }
Test(crossref, lying_sizes_with_kwarg) { check_liar("liar_sizes", (cfx_fnptr)liar_sizes); }
Test(crossref, lying_dtype_with_list) { check_liar("liar_dtype", (cfx_fnptr)liar_dtype); }

/* Honest kernels pass: every golden program traces to the same graph under the check. */
Test(crossref, honest_programs_unchanged)
{
    cfx_crossref_guard g;
    cfx_crossref_functionalize_begin(&g);
    for (int i = 0; i < COUNT_OF(programs); i++)
        check(programs[i].name);
    cfx_crossref_functionalize_end(&g);
}

/* The switches are guards on the thread's included keys; crossref needs the Python dispatcher. */
Test(crossref, python_dispatcher_switches)
{
    cfx_local_keys before = cfx_local_keys_get();
    cr_expect(!cfx_python_dispatcher_enabled());
    cfx_key_guard a, b, c;
    cfx_python_dispatcher_enable_begin(&a);
    cr_expect(cfx_python_dispatcher_enabled());
    cfx_crossref_guard g;
    cfx_crossref_functionalize_begin(&g);
    cr_expect(cfx_crossref_functionalize_active());
    cfx_python_dispatcher_disable_begin(&b);
    cr_expect(!cfx_python_dispatcher_enabled());
    cr_expect(!cfx_crossref_functionalize_active(), "no Python dispatcher, no crossref");
    cfx_pre_dispatch_enable_begin(&c);
    cr_expect(cfx_keyset_has(cfx_local_keys_get().included, CFX_KEY_PreDispatch));
    /* ops still run with both keys included (fallthroughs) */
    cfx_scope sc = cfx_scope_begin();
    cr_expect(cfx_relu(t23(0)), "%s", cfx_error_message());
    cfx_scope_end(sc);
    cfx_key_guard_end(&c);
    cfx_key_guard_end(&b);
    cr_expect(cfx_crossref_functionalize_active());
    cfx_crossref_functionalize_end(&g);
    cfx_key_guard_end(&a);
    cfx_local_keys after = cfx_local_keys_get();
    cr_expect(after.included.repr == before.included.repr && after.excluded.repr == before.excluded.repr);
}

Test(crossref, cli)
{
    char *out = NULL;
    int rc = test_run_command("build/cfx trace mutate --crossref-functionalize", &out);
    cr_assert_eq(rc, 0, "%s", out ? out : "");
    char *want = block("mutate", "graph");
    size_t n = strlen(out);
    if (n && out[n - 1] == '\n')
        out[n - 1] = '\0';
    cr_expect_str_eq(out, want);
    free(out);
    free(want);
}
