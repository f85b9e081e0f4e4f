/* test_generator_args.c - torch.Generator as an operator argument, against PyTorch 2.13.
 *
 * tools/interop/gen_generator.py wrote the goldens: make_fx of programs drawing from a
 * generator that is no graph input (a global here, as in the twins) records a get_attr of
 * `_opaque_obj0` per use, passed to the `.generator` overloads; the graph module holds the
 * generator itself, so running the graph draws on from where the trace left it. Values drawn
 * from seeded generators are PyTorch's bit for bit, the default generator is left alone, and
 * binding errors carry torch.ops' texts. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_golden.h"
#include "tests/test_util.h"

static cfx_generator *G, *G2; /* the programs' generators, as the twins' globals */

static cfx_value cpu(void) { return cfx_device_value(cfx_device_make(CFX_DEVICE_CPU)); }

/* what the Python binding of torch.rand(3, generator=g) passes: device and pin_memory */
static cfx_tensor *p_rand(cfx_tensor *x)
{
    return cfx_add(cfx_rand_generator(CFX_INTS(3), cfx_generator_value(G), cfx_none(), cfx_none(), cpu(),
                                      cfx_bool(false)),
                   x);
}

static cfx_tensor *p_multi(cfx_tensor *x)
{
    cfx_tensor *a = cfx_rand_generator(CFX_INTS(3), cfx_generator_value(G), cfx_none(), cfx_none(), cpu(),
                                       cfx_bool(false));
    cfx_tensor *b = cfx_randn_generator(CFX_INTS(3), cfx_generator_value(G), cfx_none(), cfx_none(), cpu(),
                                        cfx_bool(false));
    cfx_tensor *c = cfx_randn_generator(CFX_INTS(3), cfx_generator_value(G2), cfx_none(), cfx_none(), cpu(),
                                        cfx_bool(false));
    return cfx_add(cfx_add(cfx_add(a, b), c), x);
}

typedef struct four {
    cfx_tensor *t[4];
} four;

static four p_all(cfx_tensor *x)
{
    /* torch.randint's binding passes dtype=torch.int64, the schema's default (not recorded) */
    cfx_value g = cfx_generator_value(G), no = cfx_bool(false), i64 = cfx_dtype_value(CFX_INT64);
    cfx_tensor *a = cfx_randint_generator(10, CFX_INTS(3), g, i64, cfx_none(), cpu(), no);
    cfx_tensor *b = cfx_randint_low_generator(2, 5, CFX_INTS(3), g, i64, cfx_none(), cpu(), no);
    cfx_tensor *c = cfx_randperm_generator(4, g, i64, cfx_none(), cpu(), no);
    cfx_tensor *d = cfx_rand_like_generator(x, g, cfx_none(), cfx_none(), cfx_none(), no);
    cfx_tensor *e = cfx_randn_like_generator(x, g, cfx_none(), cfx_none(), cfx_none(), no);
    cfx_tensor *f = cfx_bernoulli_(cfx_empty_like(x, cfx_none(), cfx_none(), cfx_none(), no), 0.5, g);
    return (four){{a, b, c, cfx_add(cfx_add(d, e), f)}};
}

static const struct {
    const char *name;
    cfx_fnptr fn;
    const char *sig;
    int n_opaque;
} programs[] = {
    {"rand", (cfx_fnptr)p_rand, "(Tensor x) -> Tensor", 1},
    {"multi", (cfx_fnptr)p_multi, "(Tensor x) -> Tensor", 2},
    {"all", (cfx_fnptr)p_all, "(Tensor x) -> (Tensor, Tensor, Tensor, Tensor)", 1},
};

static void fresh_generators(void)
{
    cfx_generator_free(G);
    cfx_generator_free(G2);
    G = cfx_generator_new();
    G2 = cfx_generator_new();
    cr_assert(G && G2);
    cfx_generator_manual_seed(G, 0);
    cfx_generator_manual_seed(G2, 1);
}

static void drop_generators(void)
{
    cfx_generator_free(G);
    cfx_generator_free(G2);
    G = G2 = NULL;
}

static cfx_graph_module *trace(int i, cfx_tracing_mode mode, cfx_tensor *x)
{
    cfx_value a = cfx_tensor_value(x);
    cfx_make_fx_options o = {mode, NULL, NULL, false};
    cfx_graph_module *gm = cfx_make_fx(programs[i].fn, programs[i].sig, &a, 1, &o);
    cr_assert_not_null(gm, "%s: %s", programs[i].name, cfx_error_message());
    return gm;
}

static cJSON *values_golden(void)
{
    char *text = read_file("tests/data/generator_values.json");
    cr_assert_not_null(text, "missing tests/data/generator_values.json (run tools/interop/gen_generator.py)");
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root);
    return root;
}

/* The bits of element i of a CPU tensor as the golden writes them. */
static void element_text(cfx_tensor *t, int64_t i, char *out, size_t cap)
{
    const void *d = cfx_tensor_data(t);
    switch (cfx_tensor_dtype(t)) {
    case CFX_FLOAT32: {
        uint32_t u;
        memcpy(&u, (const float *)d + i, 4);
        snprintf(out, cap, "%08" PRIx32, u);
        break;
    }
    case CFX_FLOAT64: {
        uint64_t u;
        memcpy(&u, (const double *)d + i, 8);
        snprintf(out, cap, "%016" PRIx64, u);
        break;
    }
    case CFX_INT32: snprintf(out, cap, "%" PRId32, ((const int32_t *)d)[i]); break;
    default: snprintf(out, cap, "%" PRId64, ((const int64_t *)d)[i]); break;
    }
}

static void expect_values(cfx_tensor *t, const cJSON *want, int *at, const char *what)
{
    cr_assert_not_null(t, "%s: %s", what, cfx_error_message());
    for (int64_t i = 0; i < cfx_tensor_numel(t); i++, (*at)++) {
        char got[32];
        element_text(t, i, got, sizeof got);
        const cJSON *w = cJSON_GetArrayItem(want, *at);
        cr_assert(cJSON_IsString(w), "%s: golden too short at %d", what, *at);
        cr_expect_str_eq(got, w->valuestring, "%s element %" PRId64, what, i);
    }
}

/* str(graph) and python_code equal 2.13's, in real and fake tracing; the module holds the
 * generators themselves under make_fx's names. */
Test(generator_args, traces_record_opaque_get_attrs_as_2_13)
{
    for (int i = 0; i < (int)(sizeof programs / sizeof *programs); i++)
        for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
            cfx_scope s = cfx_scope_begin();
            fresh_generators();
            cfx_graph_module *gm = trace(i, (cfx_tracing_mode)mode, cfx_zeros(CFX_INTS(3)));
            char path[128];
            snprintf(path, sizeof path, "tests/data/generator_%s.graph.txt", programs[i].name);
            char *wg = read_golden(path);
            snprintf(path, sizeof path, "tests/data/generator_%s.code.txt", programs[i].name);
            char *wc = read_golden(path);
            cr_assert(wg && wc, "missing goldens of %s (run tools/interop/gen_generator.py)", programs[i].name);
            char *g = cfx_graph_to_string(cfx_graph_module_graph(gm));
            char *c = cfx_graph_python_code_string(cfx_graph_module_graph(gm), "self");
            cr_expect_str_eq(g, wg, "%s mode %d\n%s", programs[i].name, mode, g);
            cr_expect_str_eq(c, wc, "%s mode %d\n%s", programs[i].name, mode, c);
            free(g);
            free(c);
            free(wg);
            free(wc);
            expect_module_json_round_trip(gm, programs[i].name);
            cr_assert_eq(cfx_graph_module_n_object_attrs(gm), programs[i].n_opaque);
            cfx_value v = cfx_graph_module_get_attr_opaque(gm, "_opaque_obj0");
            cr_expect_eq(v.kind, CFX_V_GENERATOR);
            cr_expect_eq(v.u.gen, G, "the module holds the program's generator, not a copy");
            cr_expect_null(cfx_graph_module_get_attr_object(gm, "_opaque_obj0"), "a generator is no script object");
            if (programs[i].n_opaque == 2)
                cr_expect_eq(cfx_graph_module_get_attr_opaque(gm, "_opaque_obj1").u.gen, G2);
            cfx_graph_module_free(gm);
            cfx_scope_end(s);
        }
    drop_generators();
}

/* The real trace draws from the generator (as 2.13's real make_fx runs the op), the fake one
 * does not; the graph then draws on from the generator's state, and outlives the caller's
 * reference to it. */
Test(generator_args, graph_runs_draw_from_the_held_generator)
{
    cJSON *root = values_golden();
    const char *modes[] = {"real", "fake"};
    for (int mode = CFX_TRACE_REAL; mode <= CFX_TRACE_FAKE; mode++) {
        cfx_scope s = cfx_scope_begin();
        fresh_generators();
        cfx_tensor *x = cfx_zeros(CFX_INTS(3));
        cfx_graph_module *gm = trace(0, (cfx_tracing_mode)mode, x);
        drop_generators(); /* the module keeps its generator alive */
        const cJSON *want = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "runs"), modes[mode - CFX_TRACE_REAL]);
        int at = 0;
        for (int run = 0; run < 2; run++) {
            cfx_value a = cfx_tensor_value(x), out;
            cr_assert_eq(cfx_graph_module_run(gm, &a, 1, &out), CFX_OK, "%s", cfx_error_message());
            expect_values(out.u.t, want, &at, modes[mode - CFX_TRACE_REAL]);
            cfx_tensor_release(out.u.t);
        }
        /* a live stream has no serialized form */
        char *json = NULL;
        cr_expect_neq(cfx_graph_module_to_json(gm, 0, &json), CFX_OK);
        cr_expect(strstr(cfx_error_message(), "attribute '_opaque_obj0' is a torch.Generator"), "%s",
                  cfx_error_message());
        cfx_error_clear();
        free(json);
        cfx_buf py;
        cfx_buf_init(&py);
        cr_expect_neq(cfx_graph_module_to_python(gm, "w.safetensors", &py), CFX_OK);
        cr_expect(strstr(cfx_error_message(), "attribute '_opaque_obj0': it is a torch.Generator"), "%s",
                  cfx_error_message());
        cfx_error_clear();
        cfx_buf_free(&py);
        cfx_graph_module_free(gm);
        cfx_scope_end(s);
    }
    cJSON_Delete(root);
}

/* One call of the golden's list on g. */
static cfx_tensor *call(const char *c, cfx_generator *gen)
{
    cfx_value g = cfx_generator_value(gen);
    char kind[32];
    double p;
    int lo, hi, n;
    if (sscanf(c, "rand:float32:%d", &n) == 1)
        return cfx_rand_generator(CFX_INTS(n), g);
    if (sscanf(c, "randn:float64:%d", &n) == 1)
        return cfx_randn_generator(CFX_INTS(n), g, cfx_dtype_value(CFX_FLOAT64));
    if (sscanf(c, "randn:float32:%d", &n) == 1)
        return cfx_randn_generator(CFX_INTS(n), g);
    if (sscanf(c, "randint:%d:%d:%31[a-z0-9]:%d", &lo, &hi, kind, &n) == 4)
        return cfx_randint_low_generator(lo, hi, CFX_INTS(n), g,
                                         cfx_dtype_value(strcmp(kind, "int32") ? CFX_INT64 : CFX_INT32));
    if (sscanf(c, "randperm:int64:%d", &n) == 1)
        return cfx_randperm_generator(n, g);
    if (sscanf(c, "rand_like:float32:%d", &n) == 1)
        return cfx_rand_like_generator(cfx_zeros(CFX_INTS(n)), g);
    if (sscanf(c, "randn_like:float64:%d", &n) == 1) /* a 2 x 10 float64 tensor, as the twin's */
        return cfx_randn_like_generator(cfx_zeros(CFX_INTS(2, n / 2), cfx_dtype_value(CFX_FLOAT64)), g);
    if (sscanf(c, "bernoulli:%lf:float32:%d", &p, &n) == 2)
        return cfx_bernoulli_(cfx_zeros(CFX_INTS(n)), p, g);
    cr_assert_fail("unknown call %s", c);
    return NULL;
}

/* A generator seeded with N draws what torch.Generator().manual_seed(N) draws, call after
 * call (the cached Box-Muller sample included), and the default generator is not touched. */
Test(generator_args, seeded_generators_draw_pytorchs_values)
{
    cJSON *root = values_golden();
    cfx_manual_seed(7);
    uint32_t want_default = cfx_generator_random(cfx_default_generator());
    cfx_manual_seed(7);
    const cJSON *st;
    cJSON_ArrayForEach(st, cJSON_GetObjectItem(root, "streams"))
    {
        cfx_scope s = cfx_scope_begin();
        cfx_generator *g = cfx_generator_new();
        uint64_t seed = (uint64_t)cJSON_GetObjectItem(st, "seed")->valuedouble;
        cfx_generator_manual_seed(g, seed);
        cr_expect_eq(cfx_generator_initial_seed(g), seed);
        const cJSON *calls = cJSON_GetObjectItem(st, "calls"), *values = cJSON_GetObjectItem(st, "values");
        for (int i = 0; i < cJSON_GetArraySize(calls); i++) {
            const char *c = cJSON_GetArrayItem(calls, i)->valuestring;
            int at = 0;
            char what[96];
            snprintf(what, sizeof what, "seed %" PRIu64 " %s", seed, c);
            expect_values(call(c, g), cJSON_GetArrayItem(values, i), &at, what);
            cr_expect_eq(at, cJSON_GetArraySize(cJSON_GetArrayItem(values, i)), "%s: count", what);
        }
        cfx_generator_free(g);
        cfx_scope_end(s);
    }
    cr_expect_eq(cfx_generator_random(cfx_default_generator()), want_default, "the default stream moved");
    cJSON_Delete(root);
}

/* torch.ops' binding errors for a wrong generator kind, and the kernels' own checks, with
 * 2.13's texts; the .generator overloads run the C++ kernel on meta (no Python reference). */
Test(generator_args, errors_and_meta_as_2_13)
{
    cJSON *root = values_golden();
    cfx_generator *g = cfx_generator_new();
    cfx_scope s = cfx_scope_begin();
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "errors"))
    {
        const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
        const char *want = cJSON_GetObjectItem(e, "message")->valuestring;
        cfx_value st[8];
        int rc = CFX_OK;
        cfx_value meta = cfx_device_value(cfx_device_make(CFX_DEVICE_META));
        if (!strcmp(name, "rand_int_generator")) {
            st[0] = cfx_list((const cfx_value[]){cfx_int(3)}, 1);
            st[1] = cfx_int(5);
            rc = cfx_op_call(cfx_op_find("aten::rand.generator"), st, 2, 8);
        } else if (!strcmp(name, "bernoulli_str_generator")) {
            st[0] = cfx_tensor_value(cfx_zeros(CFX_INTS(3)));
            st[1] = cfx_double(0.5);
            st[2] = cfx_string("a");
            rc = cfx_op_call(cfx_op_find("aten::bernoulli_.float"), st, 3, 8);
        } else if (!strcmp(name, "randint_empty_range")) {
            rc = cfx_randint_low_generator(5, 5, CFX_INTS(3), cfx_generator_value(g)) ? CFX_OK : CFX_ERR;
        } else if (!strcmp(name, "randn_int_dtype")) {
            rc = cfx_randn_generator(CFX_INTS(3), cfx_generator_value(g), cfx_dtype_value(CFX_INT64)) ? CFX_OK
                                                                                                      : CFX_ERR;
        } else if (!strcmp(name, "randn_meta_negative")) {
            rc = cfx_randn_generator(CFX_INTS(-1), cfx_generator_value(g), cfx_none(), cfx_none(), meta) ? CFX_OK
                                                                                                        : CFX_ERR;
        } else {
            cr_assert_fail("unknown error case %s", name);
        }
        cr_expect_neq(rc, CFX_OK, "%s succeeded", name);
        cr_expect_str_eq(cfx_error_message(), want, "%s", name);
        cfx_error_clear();
    }
    cfx_tensor *m = cfx_randperm_generator(5, cfx_generator_value(g), cfx_none(), cfx_none(),
                                           cfx_device_value(cfx_device_make(CFX_DEVICE_META)));
    cr_assert_not_null(m, "%s", cfx_error_message());
    cr_expect_str_eq(cfx_dtype_torch_name(cfx_tensor_dtype(m)),
                     cJSON_GetObjectItem(root, "randperm_meta_dtype")->valuestring);
    /* None is the default generator, as get_generator_or_default */
    cfx_manual_seed(3);
    cfx_tensor *a = cfx_rand_generator(CFX_INTS(4), cfx_none());
    cfx_manual_seed(3);
    cfx_tensor *b = cfx_rand(CFX_INTS(4));
    cr_assert(a && b);
    cr_expect_eq(memcmp(cfx_tensor_data(a), cfx_tensor_data(b), 4 * sizeof(float)), 0);
    cfx_scope_end(s);
    cfx_generator_free(g);
    cJSON_Delete(root);
}

/* CSE never merges two draws (nondeterministic_seeded), even from the same generator node. */
Test(generator_args, cse_keeps_every_draw)
{
    cfx_scope s = cfx_scope_begin();
    fresh_generators();
    cfx_graph_module *gm = trace(1, CFX_TRACE_FAKE, cfx_zeros(CFX_INTS(3)));
    bool changed = false;
    cr_assert_eq(cfx_pipeline_run_text("cse,dce", gm, NULL, &changed), CFX_OK, "%s", cfx_error_message());
    char *g = cfx_graph_to_string(cfx_graph_module_graph(gm));
    cr_expect(strstr(g, "%randn_1") && strstr(g, "%rand ") && strstr(g, "%_opaque_obj0_1"), "%s", g);
    free(g);
    cfx_graph_module_free(gm);
    drop_generators();
    cfx_scope_end(s);
}

/* The C emitter reads the generator attribute as an opaque value and passes it on; the code
 * compiles against the headers. */
Test(generator_args, c_codegen_reads_the_generator_attribute)
{
    cfx_scope s = cfx_scope_begin();
    fresh_generators();
    cfx_graph_module *gm = trace(1, CFX_TRACE_FAKE, cfx_zeros(CFX_INTS(3)));
    cfx_buf b;
    cfx_buf_init(&b);
    cr_assert_eq(cfx_graph_to_c(cfx_graph_module_graph(gm), "fwd", &b), CFX_OK, "%s", cfx_error_message());
    char *c = cfx_buf_take(&b);
    cr_expect(strstr(c, "cfx_value v__opaque_obj1 = cfx_graph_module_get_attr_opaque(self, \"_opaque_obj1\");"), "%s",
              c);
    cr_expect(strstr(c, "cfx_op_randn_generator(CFX_HERE, (cfx_int_list){(const int64_t[]){INT64_C(3)}, 1}, "
                        "v__opaque_obj0_1,"),
              "%s", c);
    expect_c_compiles(c);
    free(c);
    cfx_graph_module_free(gm);
    drop_generators();
    cfx_scope_end(s);
}
