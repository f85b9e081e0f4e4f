/* test_json_weights.c - graph modules saved with their weights (cfx_graph_module_save / _load):
 * the document names a safetensors file beside it, a loaded module has the real tensors
 * (strides, offsets, NaN bits and all), save -> load -> save is byte-identical in both files, for
 * the documented example and for every model of the zoo traced in both modes, and every way a
 * weights file can disagree with its document is refused with the place named. Python reads a
 * saved module (tools/interop/check_graph_json.py with safetensors). */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ir/json_test_util.h"
#include "ir/safetensors.h"
#include "tests/test_util.h"
#include "tools/models/models.h"
#include "tracer/make_fx.h"

TestSuite(ir_json_weights, .init = setup, .fini = teardown);

/* A fresh directory; paths inside it are dir/name. */
static char dir[64];
static void make_dir(void)
{
    strcpy(dir, "/tmp/cfx_test_weights_XXXXXX");
    cr_assert(mkdtemp(dir));
}

static char *in_dir(const char *sub, const char *name)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s/%s%s%s", dir, sub ? sub : "", sub ? "/" : "", name);
    return cfx_buf_take(&b);
}

static void rm_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

static char *slurp_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    *len = fread(s, 1, (size_t)n, f);
    s[*len] = '\0';
    fclose(f);
    return s;
}

static void expect_same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = slurp_bytes(a, &la), *y = slurp_bytes(b, &lb);
    cr_expect(x && y && la == lb && memcmp(x, y, la) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

/* save to dir/1/name, load, save to dir/2/name: both files byte-identical, and the loaded module
 * dumps (with inline data) as the original. Returns the loaded module. */
static cfx_graph_module *save_load_save(const cfx_graph_module *gm, const char *name, const char *wname)
{
    char *d1 = in_dir(NULL, "1"), *d2 = in_dir(NULL, "2");
    mkdir(d1, 0700);
    mkdir(d2, 0700);
    char *p1 = in_dir("1", name), *p2 = in_dir("2", name);
    cr_assert_eq(cfx_graph_module_save(gm, p1, 0), CFX_OK, "%s", cfx_error_message());
    cfx_graph_module *gm2 = cfx_graph_module_load(p1);
    cr_assert(gm2, "%s", cfx_error_message());
    cr_assert_eq(cfx_graph_module_save(gm2, p2, 0), CFX_OK, "%s", cfx_error_message());
    expect_same_file(p1, p2);
    if (wname) {
        char *w1 = in_dir("1", wname), *w2 = in_dir("2", wname);
        expect_same_file(w1, w2);
        cr_expect_eq(access(w1, F_OK), 0);
        free(w1);
        free(w2);
    }
    char *j1 = dump_gm(gm, 0), *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j1, j2);
    expect_same_text(cfx_graph_module_graph(gm), cfx_graph_module_graph(gm2));
    free(j1);
    free(j2);
    free(p1);
    free(p2);
    free(d1);
    free(d2);
    return gm2;
}

Test(ir_json_weights, example_saves_and_loads)
{
    make_dir();
    cfx_graph_module *gm = gm_example();
    cfx_graph_module *gm2 = save_load_save(gm, "net.json", "net.safetensors");
    char *p = in_dir("1", "net.json");
    char *doc = read_file(p);
    cr_assert(doc);
    cr_expect(strstr(doc, "\n  \"weights\": \"net.safetensors\",\n  \"attributes\": [\n"), "%s", doc);
    cr_expect_null(strstr(doc, "\"data\""));
    cr_expect(strstr(doc, "\"version\": {\"major\": 1, \"minor\": 1}"));
    /* the tensors themselves, NaN and -0.0 bits included */
    cfx_tensor *a = cfx_graph_module_get_attr(gm, "fc.weight"), *b = cfx_graph_module_get_attr(gm2, "fc.weight");
    cr_assert(b);
    cr_expect(memcmp(cfx_tensor_data(a), cfx_tensor_data(b), 6 * sizeof(float)) == 0);
    cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm2, "fc.bias"), 1), -1.0);
    /* the weights file is the module's state dict for Python's safetensors */
    char *w = in_dir("1", "net.safetensors");
    cfx_safetensors *st = cfx_safetensors_read_file(w);
    cr_assert(st, "%s", cfx_error_message());
    cr_expect_eq(cfx_safetensors_count(st), 2);
    cr_expect_geq(cfx_safetensors_find(st, "fc.weight"), 0);
    cfx_safetensors_free(st);
    /* the text loader cannot find the weights */
    expect_load_error(doc, "line 25: $.weights: the attributes' data is in 'net.safetensors', which only a loader "
                           "given the document's path can find");
    /* the graph-only loaders ignore them */
    cfx_graph *g = cfx_graph_from_json_file(p);
    cr_expect(g, "%s", cfx_error_message());
    cfx_graph_free(g);
    /* a path without .json gets .safetensors appended */
    char *q = in_dir(NULL, "model");
    cr_assert_eq(cfx_graph_module_save(gm, q, 0), CFX_OK);
    char *qw = in_dir(NULL, "model.safetensors");
    cr_expect_eq(access(qw, F_OK), 0);
    cfx_graph_module *gm3 = cfx_graph_module_load(q);
    cr_expect(gm3, "%s", cfx_error_message());
    cfx_graph_module_free(gm3);
    /* CFX_JSON_NO_DATA: no weights file, no member */
    char *r = in_dir(NULL, "nodata.json");
    cr_assert_eq(cfx_graph_module_save(gm, r, CFX_JSON_NO_DATA), CFX_OK);
    char *rw = in_dir(NULL, "nodata.safetensors");
    cr_expect_neq(access(rw, F_OK), 0);
    char *rdoc = read_file(r);
    cr_expect_null(strstr(rdoc, "\"weights\""));
    free(rdoc);
    free(r);
    free(rw);
    free(q);
    free(qw);
    free(w);
    free(doc);
    free(p);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
    rm_dir();
}

/* Attributes that are views (strides, storage offsets), every dtype, a 0-dim, an empty and a meta one. */
static cfx_graph_module *gm_views(void)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    const char *names[] = {"w", "w_t", "row", "ints", "i32", "mask", "scalar", "empty", "on_meta"};
    cfx_node *last = x;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        last = CALL(g, "aten::add.Tensor", NV(last), NV(cfx_graph_get_attr(g, names[i])));
    cfx_graph_output(g, NV(last));
    cfx_graph_module *gm = cfx_graph_module_new(g, "Views");
    cfx_scope s = cfx_scope_begin();
    float wd[6] = {1, 2, 3, NAN, -0.0f, 6};
    cfx_tensor *w = cfx_tensor_from_floats(wd, (int64_t[]){2, 3}, 2);
    int64_t id[3] = {INT64_MIN, 0, INT64_MAX};
    cfx_tensor *i32 = cfx_tensor_new((int64_t[]){2}, 1, CFX_INT32, cfx_device_make(CFX_DEVICE_CPU));
    ((int32_t *)cfx_tensor_data(i32))[0] = -7;
    cfx_tensor *mask = cfx_tensor_new((int64_t[]){3}, 1, CFX_BOOL, cfx_device_make(CFX_DEVICE_CPU));
    ((uint8_t *)cfx_tensor_data(mask))[1] = 1;
    cfx_tensor *ts[] = {
        w,
        cfx_tensor_new_view(w, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 2, 0),
        cfx_tensor_new_view(w, (int64_t[]){3}, (int64_t[]){1}, 1, 3),
        cfx_tensor_from_int64s(id, (int64_t[]){3}, 1),
        i32,
        mask,
        cfx_tensor_scalar_double(2.5, CFX_FLOAT64),
        cfx_tensor_new((int64_t[]){0, 3}, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)),
        cfx_tensor_new((int64_t[]){4}, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META)),
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cr_assert_eq(cfx_graph_module_set_attr(gm, names[i], ts[i]), CFX_OK, "%s", cfx_error_message());
    cfx_scope_end(s);
    return gm;
}

Test(ir_json_weights, views_dtypes_and_meta_attributes)
{
    make_dir();
    cfx_graph_module *gm = gm_views();
    cfx_graph_module *gm2 = save_load_save(gm, "v.json", "v.safetensors");
    cfx_tensor *t = cfx_graph_module_get_attr(gm2, "w_t");
    cr_expect_eq(t->strides[0], 1);
    cr_expect_eq(cfx_tensor_get_double(t, 2), 2.0); /* w_t[1][0] = w[0][1] */
    cr_expect_eq(cfx_graph_module_get_attr(gm2, "row")->storage_offset, 3);
    cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm2, "row"), 2), 6.0);
    cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm2, "ints"), 0), (double)INT64_MIN);
    cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm2, "i32"), 0), -7.0);
    cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm2, "mask"), 1), 1.0);
    cr_expect_eq(cfx_graph_module_get_attr(gm2, "on_meta")->device.type, CFX_DEVICE_META);
    char *w = in_dir("1", "v.safetensors");
    cfx_safetensors *st = cfx_safetensors_read_file(w);
    cr_assert(st);
    cr_expect_eq(cfx_safetensors_count(st), 8, "the meta attribute has no data");
    cfx_safetensors_free(st);
    free(w);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
    rm_dir();
}

/* Saves the example, then lets edit() spoil a file; loading must fail with want. */
static void expect_weights_error(void (*edit)(const char *doc, const char *weights), const char *want)
{
    make_dir();
    cfx_graph_module *gm = gm_example();
    char *p = in_dir(NULL, "net.json"), *w = in_dir(NULL, "net.safetensors");
    cr_assert_eq(cfx_graph_module_save(gm, p, 0), CFX_OK);
    edit(p, w);
    cfx_error_clear();
    cfx_graph_module *gm2 = cfx_graph_module_load(p);
    cr_expect_null(gm2);
    cfx_graph_module_free(gm2);
    const char *m = cfx_error_message();
    cr_expect(m && strstr(m, want), "error \"%s\" does not contain \"%s\"", m ? m : "(none)", want);
    cfx_error_clear();
    free(p);
    free(w);
    cfx_graph_module_free(gm);
    rm_dir();
}

static void write_tensors(const char *path, const char *const *names, cfx_tensor **ts, int n)
{
    cr_assert_eq(cfx_safetensors_write_file(path, names, ts, n, NULL, 0), CFX_OK, "%s", cfx_error_message());
}

static void no_file(const char *doc, const char *w) { (void)doc; remove(w); }
static void missing_tensor(const char *doc, const char *w)
{
    (void)doc;
    cfx_scope s = cfx_scope_begin();
    float b[2] = {0, 0};
    cfx_tensor *t = cfx_tensor_from_floats(b, (int64_t[]){2}, 1);
    write_tensors(w, (const char *[]){"fc.bias"}, &t, 1);
    cfx_scope_end(s);
}
static void wrong_shape(const char *doc, const char *w)
{
    (void)doc;
    cfx_scope s = cfx_scope_begin();
    float b[6] = {0};
    cfx_tensor *ts[2] = {cfx_tensor_from_floats(b, (int64_t[]){3, 2}, 2), cfx_tensor_from_floats(b, (int64_t[]){2}, 1)};
    write_tensors(w, (const char *[]){"fc.weight", "fc.bias"}, ts, 2);
    cfx_scope_end(s);
}
static void wrong_dtype(const char *doc, const char *w)
{
    (void)doc;
    cfx_scope s = cfx_scope_begin();
    float b[6] = {0};
    cfx_tensor *ts[2] = {cfx_tensor_from_floats(b, (int64_t[]){2, 3}, 2), cfx_tensor_scalar_double(1, CFX_FLOAT64)};
    ts[1] = cfx_tensor_new((int64_t[]){2}, 1, CFX_FLOAT64, cfx_device_make(CFX_DEVICE_CPU));
    write_tensors(w, (const char *[]){"fc.weight", "fc.bias"}, ts, 2);
    cfx_scope_end(s);
}
static void extra_tensor(const char *doc, const char *w)
{
    (void)doc;
    cfx_scope s = cfx_scope_begin();
    float b[6] = {0};
    cfx_tensor *ts[3] = {cfx_tensor_from_floats(b, (int64_t[]){2, 3}, 2), cfx_tensor_from_floats(b, (int64_t[]){2}, 1),
                         cfx_tensor_from_floats(b, (int64_t[]){1}, 1)};
    write_tensors(w, (const char *[]){"fc.weight", "fc.bias", "fc.extra"}, ts, 3);
    cfx_scope_end(s);
}
static void corrupt(const char *doc, const char *w)
{
    (void)doc;
    FILE *f = fopen(w, "r+b");
    fseek(f, 5, SEEK_SET);
    fputc(0x7f, f); /* a header length far past the file */
    fclose(f);
}
static void bad_member(const char *doc, const char *w)
{
    (void)w;
    char *s = read_file(doc);
    char *t = replace(s, "\"weights\": \"net.safetensors\"", "\"weights\": 5");
    FILE *f = fopen(doc, "wb");
    fputs(t, f);
    fclose(f);
    free(s);
    free(t);
}

Test(ir_json_weights, disagreements_are_refused)
{
    expect_weights_error(no_file, "cannot load graph JSON: line 25: $.weights: cannot read safetensors '");
    expect_weights_error(no_file, "net.safetensors': cannot open it: No such file or directory");
    expect_weights_error(missing_tensor, "line 27: $.attributes[0].name: attribute 'fc.weight': the weights file 'net.safetensors' has no "
                                         "tensor of this name");
    expect_weights_error(wrong_shape, "attribute 'fc.weight': the weights file 'net.safetensors' has it as F32 of "
                                      "shape [3, 2], which is not the attribute's dtype and shape");
    expect_weights_error(wrong_dtype, "attribute 'fc.bias': the weights file 'net.safetensors' has it as F64");
    expect_weights_error(extra_tensor, "line 25: $.weights: the weights file 'net.safetensors' has a tensor "
                                       "'fc.extra' that no attribute without inline data names");
    expect_weights_error(corrupt, "$.weights: cannot read safetensors '");
    expect_weights_error(corrupt, "exceeds the");
    expect_weights_error(bad_member, "\"weights\" must be the file name of a safetensors file");
}

/* ---- every model of the zoo ------------------------------------------------------------------------- */

Test(ir_json_weights, every_model_round_trips, .timeout = 120)
{
    make_dir();
    for (int i = 0; i < cfx_model_count(); i++) {
        const cfx_model *m = cfx_model_at(i);
        for (int mode = 0; mode < 2; mode++) {
            cfx_scope s = cfx_scope_begin();
            cfx_module *module = NULL;
            cfx_value args[CFX_MODEL_MAX_ARGS];
            int n = m->setup(&module, args);
            cr_assert_geq(n, 0, "%s: %s", m->name, cfx_error_message());
            cfx_make_fx_options opts = {mode ? CFX_TRACE_FAKE : CFX_TRACE_REAL, module, NULL, true};
            cfx_graph_module *gm = cfx_make_fx(m->forward, m->signature, args, n, &opts);
            cr_assert(gm, "tracing %s: %s", m->name, cfx_error_message());
            /* in memory, inline data */
            char *j1 = dump_gm(gm, 0);
            cfx_graph_module *gm2 = load_gm(j1, strlen(j1));
            cr_assert(gm2, "%s: %s", m->name, cfx_error_message());
            char *j2 = dump_gm(gm2, 0);
            cr_expect_str_eq(j1, j2, "%s", m->name);
            /* files, weights beside */
            char name[64];
            snprintf(name, sizeof name, "%s_%d.json", m->name, mode);
            cfx_graph_module *gm3 = save_load_save(gm, name, NULL);
            free(j1);
            free(j2);
            cfx_graph_module_free(gm);
            cfx_graph_module_free(gm2);
            cfx_graph_module_free(gm3);
            cfx_module_free(module);
            cfx_scope_end(s);
        }
    }
    rm_dir();
}

/* ---- Python ---------------------------------------------------------------------------------------------- */

Test(ir_json_weights, python_reads_a_saved_module, .timeout = 120)
{
    make_dir();
    cfx_graph_module *gm = gm_example();
    char *p = in_dir(NULL, "net.json");
    cr_assert_eq(cfx_graph_module_save(gm, p, 0), CFX_OK);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 tools/interop/check_graph_json.py %s > %s.out 2>&1", p, p);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s.out", p);
    char *out = read_file(cmd);
    cr_expect_neq(WEXITSTATUS(rc), 77, "python3 cannot import torch: %s", out ? out : "");
    cr_expect_eq(WEXITSTATUS(rc), 0, "check_graph_json.py failed:\n%s", out ? out : "");
    cr_expect(out && strstr(out, "fc.weight [1.5, -2.0, 0.25, nan, inf, -0.0]\nfc.bias [0.5, -1.0]\nok: "), "%s",
              out ? out : "");
    free(out);
    free(p);
    cfx_graph_module_free(gm);
    rm_dir();
}
