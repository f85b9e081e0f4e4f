/* test_make_fx_shape.c - make_fx graphs of the shape operators against PyTorch 2.13's make_fx.
 *
 * The programs below are the C twins of tools/interop/gen_make_fx_shape.py's. They show that
 * the CompositeImplicitAutograd shape ops decompose through the dispatcher exactly as in
 * PyTorch (reshape of a viewable tensor is a view, of a non-viewable one a contiguous clone
 * and an _unsafe_view; flatten and unflatten are views; contiguous a clone or nothing; narrow
 * a slice; chunk a split, or a split_with_sizes for an empty dim), that Tensor[] results are
 * unpacked by getitem nodes, and that Tensor[] arguments are recorded as lists. Graph and
 * code must equal the goldens in both tracing modes, and the meta of every node that mode's
 * golden. */
#include <criterion/criterion.h>

#include "dispatch/getitem.h"
#include "tests/json_round_trip.h"
#include "tests/tracer/tracer_programs.h"

typedef struct tensor6 {
    cfx_tensor *a, *b, *c, *d, *e, *f;
} tensor6;
typedef struct tensor7 {
    cfx_tensor *a, *b, *c, *d, *e, *f, *g;
} tensor7;
typedef struct tensor8 {
    cfx_tensor *a, *b, *c, *d, *e, *f, *g, *h;
} tensor8;

static tensor7 shape_reshape(cfx_tensor *x)
{
    cfx_tensor *a = cfx_reshape(x, CFX_INTS(6, 4));
    cfx_tensor *t = cfx_transpose(x, 0, 1);
    cfx_tensor *b = cfx_reshape(t, CFX_INTS(-1));
    cfx_tensor *c = cfx_flatten(x, 1, -1);
    cfx_tensor *d = cfx_contiguous(t);
    cfx_tensor *e = cfx_unflatten(x, 2, CFX_INTS(2, -1));
    cfx_tensor *f = cfx_contiguous(x);
    cfx_tensor *g = cfx_flatten(t, 0, 1);
    return (tensor7){a, b, c, d, e, f, g};
}

static tensor6 shape_split(cfx_tensor *x)
{
    cfx_tensor_list s = cfx_split(x, 2, 1);
    cfx_tensor_list c = cfx_chunk(x, 2, 2);
    cfx_tensor *n = cfx_narrow(x, -1, -3, 2);
    cfx_tensor_list w = cfx_split_with_sizes(x, CFX_INTS(1, 2), 1);
    cfx_tensor_list e = cfx_chunk(cfx_slice(x, 0, cfx_int(0), cfx_int(0)), 3, 0);
    if (s.len < 2 || c.len < 2 || w.len < 1 || e.len < 3)
        return (tensor6){NULL, NULL, NULL, NULL, NULL, NULL};
    return (tensor6){s.data[1], c.data[0], c.data[1], n, w.data[0], e.data[2]};
}

static tensor8 shape_join(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *c = cfx_cat(CFX_TENSORS(x, y), 1);
    cfx_tensor *s = cfx_stack(CFX_TENSORS(x, y), -1);
    cfx_tensor *e = cfx_expand(cfx_unsqueeze(cfx_select(x, 0, 1), 0), CFX_INTS(5, 3, 4));
    cfx_tensor *p = cfx_permute(x, CFX_INTS(2, 0, 1));
    cfx_tensor *sl = cfx_slice(x, 2, cfx_int(1), cfx_int(INT64_MAX), 2);
    cfx_tensor *q = cfx_squeeze_dims(cfx_unsqueeze(x, 1), CFX_INTS(1));
    cfx_tensor *z = cfx_clone(x);
    cfx_tensor *w = cfx_copy_(z, y);
    cfx_tensor *a = cfx_as_strided(x, CFX_INTS(3, 2), CFX_INTS(1, 3), cfx_int(1));
    return (tensor8){c, s, e, p, sl, q, w, cfx_alias(a)};
}

typedef struct tensor15 {
    cfx_tensor *t[15];
} tensor15;

static tensor15 shape_getitem(cfx_tensor *x, cfx_tensor *i)
{
    return (tensor15){{
        cfx_getitem(x, CFX_ALL, CFX_SLICE(1, 3)),
        cfx_getitem(x, CFX_I(0)),
        cfx_getitem(x, CFX_ELLIPSIS, CFX_NEWAXIS),
        cfx_getitem(x, CFX_FROM(1), CFX_I(0)),
        cfx_getitem(x, CFX_STEP(2)),
        cfx_getitem(x, CFX_ALL, CFX_FROM(-2)),
        cfx_getitem(x, CFX_I(-1)),
        cfx_getitem(x, CFX_ALL, CFX_NEWAXIS, CFX_SLICE(2, 3)),
        cfx_getitem(x, CFX_ALL, CFX_ALL, CFX_ALL),
        cfx_getitem(x, CFX_TO(2)),
        cfx_getitem(x, CFX_ELLIPSIS),
        cfx_getitem(x, CFX_IDX(i)),
        cfx_getitem(x, CFX_ALL, CFX_IDX(i)),
        cfx_getitem(x, CFX_IDX(i), CFX_FROM(1)),
        cfx_getitem(x, CFX_NEWAXIS, CFX_IDX(i)),
    }};
}

typedef struct shape_program {
    const char *name;
    cfx_fnptr fn;
    const char *signature;
    int n_args;
    bool index_arg; /* the second argument is the int64 index tensor [0, 1] */
} shape_program;

static const shape_program shape_programs[] = {
    {"reshape", (cfx_fnptr)shape_reshape, "(Tensor x) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", 1},
    {"split", (cfx_fnptr)shape_split, "(Tensor x) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", 1},
    {"join", (cfx_fnptr)shape_join,
     "(Tensor x, Tensor y) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", 2, false},
    {"getitem", (cfx_fnptr)shape_getitem,
     "(Tensor x, Tensor i) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, "
     "Tensor, Tensor, Tensor, Tensor)",
     2, true},
};

/* torch.arange(24.).reshape(2, 3, 4), times scale */
static cfx_tensor *arange24(float scale)
{
    float data[24];
    for (int i = 0; i < 24; i++)
        data[i] = (float)i * scale;
    return cfx_tensor_from_floats(data, (const int64_t[]){2, 3, 4}, 3);
}

static char *shape_golden(const char *name, const char *suffix)
{
    char full[64];
    snprintf(full, sizeof full, "shape_%s", name);
    return golden(full, suffix);
}

static void check_shape_program(const char *name)
{
    const shape_program *p = NULL;
    for (size_t i = 0; i < sizeof shape_programs / sizeof shape_programs[0]; i++)
        if (!strcmp(shape_programs[i].name, name))
            p = &shape_programs[i];
    cr_assert(p, "no program %s", name);
    char *want_graph = shape_golden(name, "graph");
    char *want_code = shape_golden(name, "code");
    cr_assert(want_graph && want_code, "missing goldens for %s (run tools/interop/gen_make_fx_shape.py)", name);
    int64_t live0 = cfx_tensor_live_count();
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        const char *mname = mode == CFX_TRACE_FAKE ? "fake" : "real";
        cfx_tensor *second = p->index_arg ? cfx_tensor_from_int64s((const int64_t[]){0, 1}, (const int64_t[]){2}, 1)
                                          : arange24(0.5f);
        cfx_value args[2] = {cfx_tensor_value(arange24(1.0f)), cfx_tensor_value(second)};
        cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(p->fn, p->signature, args, p->n_args, &o);
        free_args(args, 2);
        cr_assert(gm, "%s (%s): %s", name, mname, cfx_error_message());
        cfx_graph *g = cfx_graph_module_graph(gm);
        cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s (%s): lint: %s", name, mname, cfx_error_message());
        char *graph = cfx_graph_to_string(g);
        char *code = cfx_graph_python_code_string(g, "self");
        cr_expect_str_eq(graph, want_graph, "%s (%s) graph", name, mname);
        cr_expect_str_eq(code, want_code, "%s (%s) code", name, mname);
        char *want = shape_golden(name, mode == CFX_TRACE_FAKE ? "meta_fake" : "meta_real");
        cr_assert(want, "missing meta golden for %s", name);
        char *got = meta_text(g);
        cr_expect_str_eq(got, want, "%s (%s) meta", name, mname);
        expect_module_json_round_trip(gm, name);
        free(graph);
        free(code);
        free(got);
        free(want);
        cfx_graph_module_free(gm);
        cr_expect_eq(cfx_tensor_live_count(), live0, "%s (%s): tensors leaked", name, mname);
    }
    free(want_graph);
    free(want_code);
}

TestSuite(make_fx_shape, .init = cfx_error_clear);

Test(make_fx_shape, reshape_flatten_unflatten_contiguous) { check_shape_program("reshape"); }
Test(make_fx_shape, split_chunk_narrow) { check_shape_program("split"); }
Test(make_fx_shape, cat_stack_and_views) { check_shape_program("join"); }
Test(make_fx_shape, getitem_issues_what_python_indexing_issues) { check_shape_program("getitem"); }
