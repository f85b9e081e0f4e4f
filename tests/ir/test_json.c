/* test_json.c - graphs and graph modules through JSON (ir/json.h).
 *
 * The promise is a lossless, byte-stable round trip: for graphs covering every value kind,
 * every op kind, meta, kwargs, nesting, NaN/Inf, int64 extremes, builtin targets and several
 * outputs, dump -> load -> dump is byte-identical and the loaded graph prints (str and
 * python_code) exactly as the original. tests/data/graph_json_example.json is the complete
 * example of docs/graph-json.md and pins the format's bytes (malformed input is
 * test_json_errors.c's). tools/interop/check_graph_json.py (default python3, PyTorch 2.13) checks the example with
 * Python's strict JSON parser and the embedded aten schemas against torch's own. */
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/logging.h>

#include "tests/ir/json_test_util.h"

TestSuite(ir_json, .init = setup, .fini = teardown);

/* ---- round trips --------------------------------------------------------------------------------- */

Test(ir_json, every_kind_round_trips)
{
    cfx_graph *g = g_all();
    cfx_graph *g2 = roundtrip(g);
    /* spot checks on the loaded values */
    cfx_node *nums = cfx_graph_find_node(g2, "values_2");
    cr_assert(nums);
    const cfx_value *a = cfx_node_args(nums);
    cr_expect(signbit(a[5].u.d) && a[5].u.d == 0);
    cr_expect(!signbit(a[6].u.d));
    cr_expect(isinf(a[7].u.d) && a[7].u.d > 0);
    cr_expect(isnan(a[9].u.d));
    cr_expect_eq(a[15].kind, CFX_V_INT);
    cr_expect_eq(a[15].u.i, INT64_MAX);
    cr_expect_eq(a[16].u.i, INT64_MIN);
    cr_expect_eq(a[18].u.i, 9007199254740993LL);
    cr_expect_eq(a[20].u.i, -9007199254740993LL);
    cr_expect_eq(a[10].kind, CFX_V_DOUBLE);
    cfx_node *lit = cfx_graph_find_node(g2, "values");
    cr_expect_eq(cfx_node_args(lit)[1].kind, CFX_V_LIST);
    cr_expect_eq(cfx_node_args(lit)[1].u.items[0].kind, CFX_V_TUPLE);
    cr_expect_eq(cfx_node_args(lit)[5].kind, CFX_V_LIST);
    cr_expect_eq(cfx_node_args(lit)[6].kind, CFX_V_TUPLE);
    cr_expect_eq(cfx_node_args(lit)[7].kind, CFX_V_TUPLE);
    cfx_node *cu = cfx_graph_find_node(g2, "custom");
    cr_assert(cu);
    cr_expect_eq(cfx_node_num_kwargs(cu), 3);
    cr_expect_str_eq(cfx_node_kwargs(cu)[0].name, "k");
    cr_expect_str_eq(cfx_node_kwargs(cu)[1].name, "mode");
    cr_expect_str_eq(cfx_node_kwargs(cu)[2].name, "extra");
    cr_expect_eq(cfx_node_operator(cu), cfx_op_find("cfxjt::custom"));
    cfx_node *gi = cfx_graph_find_node(g2, "getitem");
    cr_expect_eq(cfx_target_info_fn(cfx_node_target_info(gi)), &cfx_fn_getitem);
    /* users are rebuilt from the args */
    cfx_node *x = cfx_graph_find_node(g2, "x");
    cr_expect_eq(cfx_node_num_users(x), cfx_node_num_users(cfx_graph_find_node(g, "x")));
    /* meta: a reference to a later node is resolved, entry order kept */
    cr_expect_eq(cfx_node_meta_count(x), 3);
    cr_expect_str_eq(cfx_node_meta_key(x, 0), "later");
    cr_expect_eq(cfx_node_meta_value(x, 0)->u.node, cfx_graph_find_node(g2, "layers_0"));
    cr_expect_eq(cfx_node_meta_value(x, 1)->u.node, x);
    const cfx_meta_val *v = cfx_node_val(cfx_graph_find_node(g2, "native_layer_norm"));
    cr_assert(v && v->kind == CFX_MVAL_TUPLE && v->n == 1 && v->u.items[0].n == 7);
    cr_expect_eq(v->u.items[0].u.items[1].sizes[0], INT64_MAX);
    cr_expect_eq(v->u.items[0].u.items[1].storage_offset, 5);
    cr_expect_str_eq(v->u.items[0].u.items[6].u.class_name, "__torch__.torch.classes.cfx.Foo");
    cr_expect(isnan(v->u.items[0].u.items[3].u.d));
    const cfx_site *site = cfx_node_stack_trace(cfx_graph_find_node(g2, "add"));
    cr_assert(site);
    cr_expect_eq(site->line, 42);
    cr_expect_str_eq(site->func, "forward");
    cr_expect_null(cfx_node_stack_trace(lit)->func);
    cr_expect_eq(cfx_node_tensor_meta(cfx_graph_find_node(g2, "getitem"))->memory_format, -1);
    cr_expect_eq(cfx_node_val(cfx_graph_find_node(g2, "layers_0"))->kind, CFX_MVAL_NONE);
    cr_expect_null(cfx_node_val(cfx_graph_find_node(g2, "y")));
    cfx_graph_free(g);
    cfx_graph_free(g2);
}

Test(ir_json, empty_and_minimal_graphs)
{
    cfx_graph *g = cfx_graph_new();
    cfx_graph *g2 = roundtrip(g);
    cr_expect_eq(cfx_graph_num_nodes(g2), 0);
    cfx_graph_free(g2);
    cfx_graph_output(g, cfx_none());
    g2 = roundtrip(g);
    cr_expect_eq(cfx_graph_num_nodes(g2), 1);
    cfx_graph_free(g2);
    cfx_graph_free(g);
    /* whitespace is free and member order does not matter */
    const char *t = " {\"nodes\":[ ] ,\"version\":{\"minor\":0,\"major\":1},\"format\":\"cfx.graph\"}\n\n";
    g = load_graph(t, strlen(t));
    cr_assert(g, "%s", cfx_error_message());
    cr_expect_eq(cfx_graph_num_nodes(g), 0);
    cfx_graph_free(g);
}

Test(ir_json, names_survive_including_erasures_and_insertion_order)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = CALL(g, "aten::add.Tensor", NV(x), NV(x));
    cfx_node *b = CALL(g, "aten::add.Tensor", NV(a), NV(x));
    cfx_node *c = CALL(g, "aten::add.Tensor", NV(b), NV(x));
    cfx_node *s = CALL(g, "aten::sum.dim_IntList", NV(c), LIST(I(1)));
    cfx_node_replace_all_uses_with(b, a, NULL, NULL, NULL);
    cr_assert_eq(cfx_graph_erase_node(g, b), CFX_OK);
    cfx_insert_point p = cfx_graph_inserting_before(g, a);
    cfx_node *early = CALL(g, "aten::relu", NV(x));
    cfx_graph_set_insert_point(g, p);
    cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(OPF("aten::mul.Tensor")), VALS(NV(early), NV(s)), 2,
                          NULL, 0, "add_7");
    cfx_graph_output(g, NV(s));
    cfx_graph *g2 = roundtrip(g);
    cr_expect(cfx_graph_find_node(g2, "add_2"));
    cr_expect_null(cfx_graph_find_node(g2, "values"));
    cr_expect(cfx_graph_find_node(g2, "sum_1"));
    cr_expect(cfx_graph_find_node(g2, "add_7"));
    cfx_graph_free(g2);
    cfx_graph_free(g);
}

Test(ir_json, nesting_up_to_the_limit)
{
    enum { N = 998 }; /* node record + args array + 998 lists = 1000 containers */
    cfx_value *lv = malloc((N + 1) * sizeof *lv);
    lv[N] = I(7);
    for (int i = N - 1; i >= 0; i--)
        lv[i] = cfx_list(&lv[i + 1], 1);
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cr_assert(call(g, "aten::add.Tensor", VALS(NV(x), lv[0]), 2, NULL, 0));
    cfx_graph *g2 = roundtrip(g);
    cfx_graph_free(g2);
    /* one more level: refused by the writer, not written unreadable */
    cfx_value deeper = cfx_list(&lv[0], 1);
    cr_assert(call(g, "aten::add.Tensor", VALS(NV(x), deeper), 2, NULL, 0));
    char *s = NULL;
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &s), CFX_OK);
    cr_expect_null(s);
    cr_expect(strstr(cfx_error_message(), "nested deeper than the format's limit of 1000"), "%s",
              cfx_error_message());
    cfx_error_clear();
    cfx_graph_free(g);
    /* tuples count twice */
    for (int i = 0; i < N / 2; i++)
        lv[i] = cfx_tuple(&lv[i + 1], 1);
    lv[N / 2] = I(1);
    g = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cr_assert(call(g, "aten::add.Tensor", VALS(NV(x), lv[0]), 2, NULL, 0));
    g2 = roundtrip(g);
    cfx_graph_free(g2);
    cfx_graph_free(g);
    free(lv);

    /* a hand-made file nested 1500 deep fails cleanly */
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [\n"
                     "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [");
    for (int i = 0; i < 1500; i++)
        cfx_buf_putc(&b, '[');
    for (int i = 0; i < 1500; i++)
        cfx_buf_putc(&b, ']');
    cfx_buf_puts(&b, "], \"kwargs\": []}]}");
    expect_load_error(b.data, "line 2, column");
    cfx_error_clear();
    cfx_graph_free(load_graph(b.data, b.len));
    cr_expect(strstr(cfx_error_message(), "nested deeper than"), "%s", cfx_error_message());
    cfx_buf_free(&b);
}

/* ---- graph modules ------------------------------------------------------------------------------- */


static void expect_same_tensor(const cfx_tensor *a, const cfx_tensor *b)
{
    cr_assert_eq(a->ndim, b->ndim);
    cr_expect_eq(a->dtype, b->dtype);
    cr_expect(cfx_device_eq(a->device, b->device));
    cr_expect_eq(a->storage_offset, b->storage_offset);
    for (int i = 0; i < a->ndim; i++) {
        cr_expect_eq(a->sizes[i], b->sizes[i]);
        cr_expect_eq(a->strides[i], b->strides[i]);
    }
    if (a->device.type != CFX_DEVICE_CPU)
        return;
    for (int64_t i = 0; i < cfx_tensor_numel(a); i++) {
        double x = cfx_tensor_get_double(a, i), y = cfx_tensor_get_double(b, i);
        cr_expect((isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)), "element %lld: %g vs %g",
                  (long long)i, x, y);
    }
}

Test(ir_json, module_with_attributes_round_trips)
{
    cfx_graph_module *gm = gm_example();
    cfx_scope s = cfx_scope_begin();
    /* non-contiguous, offset, other dtypes, meta, empty */
    double dd[12];
    for (int i = 0; i < 12; i++)
        dd[i] = i * 1.25 - 3;
    cfx_tensor *base = cfx_tensor_from_doubles(dd, (int64_t[]){3, 4}, 2);
    cfx_graph_module_set_attr(gm, "view_t", cfx_tensor_new_view(base, (int64_t[]){4, 2}, (int64_t[]){1, 4}, 2, 1));
    cfx_graph_module_set_attr(gm, "expanded", cfx_tensor_new_view(base, (int64_t[]){3, 2}, (int64_t[]){0, 1}, 2, 5));
    int64_t id[3] = {INT64_MIN, -1, INT64_MAX};
    cfx_graph_module_set_attr(gm, "ints", cfx_tensor_from_int64s(id, (int64_t[]){3}, 1));
    cfx_tensor *bt = cfx_tensor_new((int64_t[]){5}, 1, CFX_BOOL, cfx_device_make(CFX_DEVICE_CPU));
    ((unsigned char *)cfx_tensor_data(bt))[1] = 1;
    ((unsigned char *)cfx_tensor_data(bt))[4] = 1;
    cfx_graph_module_set_attr(gm, "mask", bt);
    cfx_tensor *it = cfx_tensor_new((int64_t[]){2, 2}, 2, CFX_INT32, cfx_device_make(CFX_DEVICE_CPU));
    ((int32_t *)cfx_tensor_data(it))[3] = -7;
    cfx_graph_module_set_attr(gm, "i32", it);
    cfx_graph_module_set_attr(gm, "scalar", cfx_tensor_scalar_double(2.5, CFX_FLOAT64));
    cfx_graph_module_set_attr(gm, "meta_w", cfx_tensor_new_strided((int64_t[]){4, 5}, (int64_t[]){1, 4}, 2,
                                                                   CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META)));
    cfx_graph_module_set_attr(gm, "empty", cfx_tensor_new((int64_t[]){0, 3}, 2, CFX_FLOAT32,
                                                          cfx_device_make(CFX_DEVICE_CPU)));
    cfx_scope_end(s);

    char *j1 = dump_gm(gm, 0);
    cfx_graph_module *gm2 = load_gm(j1, strlen(j1));
    cr_assert(gm2, "%s", cfx_error_message());
    char *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j1, j2);
    cr_expect_str_eq(cfx_graph_module_name(gm2), "Net");
    expect_same_text(cfx_graph_module_graph(gm), cfx_graph_module_graph(gm2));
    cr_assert_eq(cfx_graph_module_n_attrs(gm2), cfx_graph_module_n_attrs(gm));
    for (int i = 0; i < cfx_graph_module_n_attrs(gm); i++) {
        cr_expect_str_eq(cfx_graph_module_attr_name(gm, i), cfx_graph_module_attr_name(gm2, i));
        expect_same_tensor(cfx_graph_module_attr(gm, i), cfx_graph_module_attr(gm2, i));
    }
    /* without data: metadata only, CPU tensors come back zero-filled */
    char *j3 = dump_gm(gm, CFX_JSON_NO_DATA);
    cr_expect_null(strstr(j3, "\"data\""));
    cfx_graph_module *gm3 = load_gm(j3, strlen(j3));
    cr_assert(gm3, "%s", cfx_error_message());
    cfx_tensor *w3 = cfx_graph_module_get_attr(gm3, "fc.weight");
    cr_assert(w3);
    cr_expect_eq(cfx_tensor_get_double(w3, 0), 0.0);
    expect_same_text(cfx_graph_module_graph(gm), cfx_graph_module_graph(gm3));
    /* the graph-only loader skips attributes */
    cfx_graph *g4 = load_graph(j1, strlen(j1));
    cr_assert(g4, "%s", cfx_error_message());
    expect_same_text(cfx_graph_module_graph(gm), g4);
    /* without meta */
    char *j5 = dump_gm(gm, CFX_JSON_NO_META);
    cr_expect_null(strstr(j5, "\"meta\": {"));
    cr_expect(strstr(j1, "\"meta\": {"));
    cfx_graph_free(g4);
    free(j1);
    free(j2);
    free(j3);
    free(j5);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
    cfx_graph_module_free(gm3);
}

Test(ir_json, files)
{
    cfx_graph_module *gm = gm_example();
    char path[] = "/tmp/cfx_test_json_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cfx_graph_module_to_json_file(gm, path, 0), CFX_OK, "%s", cfx_error_message());
    char *text = read_file(path), *j = dump_gm(gm, 0);
    cr_expect_str_eq(text, j);
    cfx_graph_module *gm2 = cfx_graph_module_from_json_file(path);
    cr_assert(gm2, "%s", cfx_error_message());
    cfx_graph *g2 = cfx_graph_from_json_file(path);
    cr_assert(g2, "%s", cfx_error_message());
    cr_assert_eq(cfx_graph_to_json_file(g2, path, 0), CFX_OK);
    cfx_graph *g3 = cfx_graph_from_json_file(path);
    cr_assert(g3);
    expect_same_text(g2, g3);
    remove(path);
    cfx_error_clear();
    cr_expect_null(cfx_graph_module_from_json_file(path));
    cr_expect(strstr(cfx_error_message(), "cannot open"), "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_neq(cfx_graph_module_to_json_file(gm, "/nonexistent-dir/x.json", 0), CFX_OK);
    cfx_error_clear();
    free(text);
    free(j);
    cfx_graph_free(g2);
    cfx_graph_free(g3);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
}

/* tests/data/graph_json_example.json without its "golden" member (tools/interop/golden.py puts
 * it first, on a line of its own): the document cfx writes. */
static char *example_golden(void)
{
    char *s = read_file("tests/data/graph_json_example.json");
    cr_assert(s, "tests/data/graph_json_example.json is missing");
    static const char mark[] = "{\n  \"golden\": \"PyTorch ";
    cr_assert(strncmp(s, mark, sizeof mark - 1) == 0, "graph_json_example.json has no golden member");
    char *line = s + 2, *end = strchr(line, '\n');
    memmove(line, end + 1, strlen(end + 1) + 1);
    return s;
}

/* The documented example: its bytes are the format. tools/interop/gen_fx.py writes it from
 * PyTorch 2.13's graph of the same program (names, targets, schemas, tensor bytes), laid out by
 * docs/graph-json.md's rules, so cfx's writer must match an independent one byte for byte. */
Test(ir_json, documented_example_is_stable)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    char *golden = example_golden();
    cr_expect_str_eq(j, golden);
    cfx_graph_module *gm2 = load_gm(golden, strlen(golden));
    cr_assert(gm2, "%s", cfx_error_message());
    char *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j2, golden);
    /* the documentation quotes it verbatim */
    char *doc = read_file("docs/graph-json.md");
    cr_assert(doc);
    cr_expect(strstr(doc, golden), "docs/graph-json.md does not contain the example verbatim");
    free(doc);
    free(j);
    free(j2);
    free(golden);
    cfx_graph_module_free(gm);
    cfx_graph_module_free(gm2);
}

/* Python's strict JSON parser reads it; embedded aten schemas are torch's own. Run with the
 * default python3, which has PyTorch 2.13 (the oracle of every golden): no torch is a failure. */
Test(ir_json, python_reads_the_example)
{
    /* the documented example, and the every-kind graph */
    cfx_graph *g = g_all();
    char path[] = "/tmp/cfx_test_json_all_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cfx_graph_to_json_file(g, path, 0), CFX_OK, "%s", cfx_error_message());
    cfx_graph_free(g);
    const char *files[] = {"tests/data/graph_json_example.json", path};
    for (int i = 0; i < 2; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "python3 tools/interop/check_graph_json.py %s > %s.out 2>&1", files[i], path);
        int rc = system(cmd);
        snprintf(cmd, sizeof cmd, "%s.out", path);
        char *out = read_file(cmd);
        remove(cmd);
        cr_expect_neq(WEXITSTATUS(rc), 77, "python3 cannot import torch (PyTorch 2.13 is the oracle): %s",
                      out ? out : "");
        cr_expect_eq(WEXITSTATUS(rc), 0, "check_graph_json.py %s failed:\n%s", files[i], out ? out : "");
        cr_expect(out && strstr(out, "ok: "), "%s", out ? out : "");
        free(out);
    }
    remove(path);
}

/* ---- versions ------------------------------------------------------------------------------------- */

Test(ir_json, versions)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    expect_replaced_error(j, "{\"major\": 1, \"minor\": 1}", "{\"major\": 2, \"minor\": 0}",
                          "the file has format version 2.0, newer than this reader's 1.1; a newer major "
                          "version cannot be read");
    expect_replaced_error(j, "{\"major\": 1, \"minor\": 1}", "{\"major\": 0, \"minor\": 9}",
                          "format version 0.9 is not supported");
    expect_replaced_error(j, "{\"major\": 1, \"minor\": 1}", "{\"major\": 1}", "\"version\" must be");
    expect_replaced_error(j, "\"cfx.graph\"", "\"torch.export\"", "not a cfx graph document: \"format\" is "
                          "\"torch.export\", expected \"cfx.graph\"");
    /* the version is checked before anything after it is parsed */
    char *t = replace(j, "{\"major\": 1, \"minor\": 1}", "{\"major\": 3, \"minor\": 1}");
    char *t2 = replace(t, "\"nodes\": [", "\"nodes\": [[[ garbage");
    expect_load_error(t2, "newer than this reader's");
    free(t);
    free(t2);
    /* a newer minor: unknown members are ignored, known ones read */
    t = replace(j, "{\"major\": 1, \"minor\": 1}", "{\"major\": 1, \"minor\": 7, \"patch\": 1}");
    t2 = replace(t, "\"op\": \"placeholder\"", "\"op\": \"placeholder\", \"future\": {\"x\": [1]}");
    char *t3 = replace(t2, "\"nodes\": [", "\"extra\": 5, \"nodes\": [");
    cfx_error_clear();
    cfx_graph_module *gm2 = load_gm(t3, strlen(t3));
    cr_assert(gm2, "%s", cfx_error_message());
    char *j2 = dump_gm(gm2, 0);
    cr_expect_str_eq(j, j2);
    free(j2);
    cfx_graph_module_free(gm2);
    /* an older minor (1.0: no "weights") loads */
    char *old = replace(j, "{\"major\": 1, \"minor\": 1}", "{\"major\": 1, \"minor\": 0}");
    cfx_graph_module *gm3 = load_gm(old, strlen(old));
    cr_expect(gm3, "%s", cfx_error_message());
    cfx_graph_module_free(gm3);
    free(old);
    /* the same additions in a file of this minor are errors */
    expect_replaced_error(j, "\"op\": \"placeholder\"", "\"op\": \"placeholder\", \"future\": 1",
                          "node 'x': node: unknown member \"future\"");
    expect_replaced_error(j, "\"nodes\": [", "\"extra\": 5, \"nodes\": [", "unknown member \"extra\"");
    free(t);
    free(t2);
    free(t3);
    free(j);
    cfx_graph_module_free(gm);
}

/* ---- size ------------------------------------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

Test(ir_json, chain_of_100k_nodes, .timeout = 120)
{
    enum { N = 100000 };
    const cfx_op *add = OPF("aten::add.Tensor"), *mul = OPF("aten::mul.Tensor"), *relu = OPF("aten::relu");
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *prev = x;
    for (int i = 0; i < N; i++) {
        const cfx_op *op = i % 3 == 0 ? add : i % 3 == 1 ? mul : relu;
        prev = cfx_graph_call_op(g, op, VALS(NV(prev), NV(x)), op == relu ? 1 : 2, NULL, 0);
        cr_assert(prev);
    }
    cfx_graph_output(g, NV(prev));
    double t0 = now();
    char *j1 = dump_graph(g);
    double t1 = now();
    cfx_graph *g2 = load_graph(j1, strlen(j1));
    double t2 = now();
    cr_assert(g2, "%s", cfx_error_message());
    cr_expect_eq(cfx_graph_num_nodes(g2), N + 2);
    cr_expect(cfx_node_name_is(cfx_node_prev(cfx_graph_last(g2)), "add_33333"));
    char *j2 = dump_graph(g2);
    cr_expect(strcmp(j1, j2) == 0);
    char *s1 = cfx_graph_to_string(g), *s2 = cfx_graph_to_string(g2);
    cr_expect(strcmp(s1, s2) == 0);
    cr_log_info("100k chain: dump %.0f ns/node, load %.0f ns/node, %zu bytes", (t1 - t0) * 1e9 / N,
                (t2 - t1) * 1e9 / N, strlen(j1));
    free(s1);
    free(s2);
    free(j1);
    free(j2);
    cfx_graph_free(g);
    cfx_graph_free(g2);
}
