/* test_json_errors.c - malformed JSON documents (ir/json.h): every one is refused with a
 * message that says where and what (document, node, value, attribute, write-side errors),
 * never a crash or a leak. Fuzzing loads every truncation and a few thousand seeded random
 * byte mutations of valid files; whatever loads must dump to a document that loads and dumps
 * to itself (run `make asan` for the leak half). */
#include <criterion/logging.h>

#include "tests/ir/json_test_util.h"

TestSuite(ir_json_errors, .init = setup, .fini = teardown);

/* ---- errors ------------------------------------------------------------------------------------------ */

Test(ir_json_errors, load_errors)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    expect_load_error("", "expected a JSON object");
    expect_load_error("[]", "expected a JSON object");
    expect_load_error("{}", "no \"format\" member");
    expect_load_error("{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}}", "no \"nodes\" member");
    expect_load_error("{\"format\": \"cfx.graph\", \"format\": \"cfx.graph\"}", "member \"format\" appears twice");
    expect_replaced_error(j, "\n}\n", "\n} x", "line 29, column 3: unexpected data after the document");
    expect_replaced_error(j, "\"x\", \"op\"", "\"x\" \"op\"", "line 13, column 18: $.nodes[0]: malformed JSON in a node record");
    /* targets */
    expect_replaced_error(j, "\"aten::relu\"}", "\"aten::relux\"}",
                          "node 'relu', target: unknown operator 'aten::relux': nothing registered defines it; "
                          "register its library (namespace 'aten') before loading the graph");
    expect_replaced_error(j, "{\"fn\": \"operator.getitem\"}", "{\"fn\": \"operator.getitemz\"}",
                          "unknown builtin function 'operator.getitemz'");
    expect_replaced_error(j, "{\"op\": \"aten::t\"}", "\"aten::t\"", "a call_function target must be {\"op\"");
    expect_replaced_error(j, "\"target\": \"x\"", "\"target\": {\"op\": \"aten::t\"}",
                          "a placeholder node's target must be a string");
    expect_replaced_error(j, "\"aten::t(Tensor(a) self) -> Tensor(a)\"", "\"aten::t(Tensor self) -> Tensor\"",
                          "operator 'aten::t' is registered with schema 'aten::t(Tensor(a) self) -> Tensor(a)' "
                          "but the file was written against 'aten::t(Tensor self) -> Tensor'");
    expect_replaced_error(j, "\"op\": \"call_function\"", "\"op\": \"call_fn\"", "\"op\" must be one of");
    /* references and names */
    expect_replaced_error(j, "[{\"node\": \"x\"}, {\"node\": \"t\"}]", "[{\"node\": \"x\"}, {\"node\": \"relu\"}]",
                          "line 17: $.nodes[4].args[1]: node 'mm', args: argument 'relu' is used before it has been defined (no earlier node has that name)");
    expect_replaced_error(j, "[{\"node\": \"x\"}, {\"node\": \"t\"}]", "[{\"node\": \"mm\"}, {\"node\": \"t\"}]",
                          "argument 'mm' is used before it has been defined");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"t\"", "node 't': Node redefined name t!");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"m.m\"", "node 'm.m': the graph's name space does not keep this name (it becomes 'm_m')");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"sum\"", "does not keep this name (it becomes 'sum_1')");
    expect_replaced_error(j, "\"name\": \"mm\"", "\"name\": \"\"", "needs a non-empty \"name\"");
    free(j);
    cfx_graph_module_free(gm);
}

static const char *doc_head = "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [\n"
                              "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": []},\n"
                              "{\"name\": \"y\", \"op\": \"call_function\", \"target\": {\"op\": \"cfxjt::values\"}, ";

/* A one-node body after doc_head (args/kwargs/meta members), expected to fail with want. */
static void expect_body_error(const char *body, const char *want)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s%s}]}", doc_head, body);
    expect_load_error(b.data, want);
    cfx_buf_free(&b);
}

static void expect_body_ok(const char *body)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s%s}]}", doc_head, body);
    cfx_error_clear();
    cfx_graph *g = load_graph(b.data, b.len);
    cr_expect(g, "%s: %s", body, cfx_error_message());
    cfx_graph_free(g);
    cfx_buf_free(&b);
}

Test(ir_json_errors, value_errors)
{
    expect_body_ok("\"args\": [{\"node\": \"x\"}], \"kwargs\": []");
    expect_body_ok("\"args\": [{\"int\": \"5\"}, {\"int\": \"-9223372036854775808\"}, 1e3, -0], \"kwargs\": []");
    expect_body_error("\"args\": [1.5], \"kwargs\": []", "node 'y', args: value: expected an integer");
    expect_body_error("\"args\": [9007199254740993], \"kwargs\": []", "expected an integer");
    expect_body_error("\"args\": [{\"int\": \"9223372036854775808\"}], \"kwargs\": []", "decimal string within int64");
    expect_body_error("\"args\": [{\"int\": \"01\"}], \"kwargs\": []", "decimal string within int64");
    expect_body_error("\"args\": [{\"int\": 5}], \"kwargs\": []", "decimal string within int64");
    expect_body_error("\"args\": [{\"float\": \"nan\"}], \"kwargs\": []", "is not NaN, Infinity or -Infinity");
    expect_body_error("\"args\": [{\"float\": null}], \"kwargs\": []", "needs a number");
    expect_body_error("\"args\": [{\"floats\": 1}], \"kwargs\": []", "unknown value tag \"floats\"");
    expect_body_error("\"args\": [{\"float\": 1, \"int\": 1}], \"kwargs\": []", "exactly one member");
    expect_body_error("\"args\": [{}], \"kwargs\": []", "exactly one member");
    expect_body_error("\"args\": [{\"tuple\": 1}], \"kwargs\": []", "needs an array");
    expect_body_error("\"args\": [{\"dtype\": \"float32\"}], \"kwargs\": []", "unknown dtype \"float32\"");
    expect_body_error("\"args\": [{\"dtype\": 1e10}], \"kwargs\": []", "out of range");
    expect_body_error("\"args\": [{\"device\": \"cuda\"}], \"kwargs\": []", "expected a device");
    expect_body_error("\"args\": [{\"device\": \"cpu:00\"}], \"kwargs\": []", "expected a device");
    expect_body_error("\"args\": [{\"memory_format\": \"torch.channels_first\"}], \"kwargs\": []", "unknown memory format");
    expect_body_error("\"args\": [{\"layout\": \"torch.sparse\"}], \"kwargs\": []", "needs \"torch.strided\"");
    expect_body_error("\"args\": [{\"node\": 3}], \"kwargs\": []", "needs a node name");
    expect_body_error("\"args\": [{\"node\": \"y\"}], \"kwargs\": []", "argument 'y' is used before it has been defined");
    expect_body_error("\"args\": [], \"kwargs\": {\"a\": 1}", "\"kwargs\" must be an array of [name, value] pairs");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\"]]", "pairs");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\", 1, 2]]", "pairs");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\", 1], [\"a\", 2]]", "node 'y', kwargs 'a': keyword given twice");
    expect_body_error("\"args\": [], \"kwargs\": [[\"a\", {\"x\": 1}]]", "node 'y', kwargs 'a': unknown value tag \"x\"");
    expect_body_error("\"kwargs\": []", "\"args\" must be an array");
    expect_body_error("\"args\": [], \"kwargs\": [], \"args\": []", "member \"args\" appears twice");
    /* meta */
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": []", "node 'y', meta: expected an object");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"vall\": 1}", "unknown member \"vall\"");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"val\": \"x\"}", "meta 'val': val: expected null");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"val\": {\"tensor\": {\"dtype\": \"torch.float32\"}}}",
                      "a tensor needs dtype, device, shape, stride and storage_offset");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"val\": {\"tensor\": {\"dtype\": \"torch.float32\", "
                      "\"device\": \"cpu\", \"shape\": [2], \"stride\": [], \"storage_offset\": 0}}}",
                      "shape has 1 dimensions but stride has 0");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"tensor_meta\": {\"shape\": []}}", "needs shape, dtype");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"stack_trace\": {\"file\": 1, \"line\": 2, \"func\": null}}",
                      "needs file (string)");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"stack_trace\": {\"file\": \"a\", \"line\": 1e10, "
                      "\"func\": null}}", "out of range");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": [[\"k\", {\"node\": \"zz\"}]]}",
                      "node 'y', meta 'k': refers to node 'zz', which is not in the graph");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": [[\"k\", 1], [\"k\", 2]]}",
                      "key \"k\" appears twice");
    expect_body_error("\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": {\"k\": 1}}", "[key, value] pairs");
}

/* Every refusal inside a record names the JSON path of the offending item. */
Test(ir_json_errors, json_paths)
{
    struct {
        const char *body, *want;
    } cases[] = {
        {"\"args\": [[1, {\"tuple\": [2, 1.5]}]], \"kwargs\": []",
         "line 3: $.nodes[1].args[0][1].tuple[1]: node 'y', args: value: expected an integer"},
        {"\"args\": [], \"kwargs\": [[\"a\", 1], [\"b\", {\"dtype\": 1e10}]]",
         "$.nodes[1].kwargs[1][1].dtype: node 'y', kwargs 'b': value: 10000000000 is out of range"},
        {"\"args\": [], \"kwargs\": [[\"a\", 1], [\"a\", 2]]", "$.nodes[1].kwargs[1]: node 'y', kwargs 'a': keyword given twice"},
        {"\"args\": [{\"node\": \"nope\"}], \"kwargs\": []", "$.nodes[1].args[0]: node 'y', args: argument 'nope' is used"},
        {"\"args\": 5, \"kwargs\": []", "$.nodes[1].args: node 'y', args: \"args\" must be an array"},
        {"\"args\": [], \"kwargs\": [], \"meta\": {\"vall\": 1}", "$.nodes[1].meta.vall: node 'y', meta: meta: unknown member"},
        {"\"args\": [], \"kwargs\": [], \"meta\": {\"val\": {\"tensor\": {\"dtype\": \"torch.float32\", "
         "\"device\": \"cpu\", \"shape\": [2, 1.5], \"stride\": [1, 1], \"storage_offset\": 0}}}",
         "$.nodes[1].meta.val.tensor.shape[1]: node 'y', meta 'val': shape: expected an integer"},
        {"\"args\": [], \"kwargs\": [], \"meta\": {\"tensor_meta\": {\"shape\": [], \"dtype\": \"torch.float32\", "
         "\"requires_grad\": false, \"stride\": [1], \"memory_format\": null, \"is_quantized\": false}}",
         "$.nodes[1].meta.tensor_meta.stride: node 'y', meta 'tensor_meta': shape has 0 dimensions but stride has 1"},
        {"\"args\": [], \"kwargs\": [], \"meta\": {\"stack_trace\": {\"file\": \"a\", \"line\": 1e10, \"func\": null}}",
         "$.nodes[1].meta.stack_trace.line: node 'y', meta 'stack_trace': line: 10000000000 is out of range"},
        /* a meta entry naming a later node is read after all nodes; its path is still exact */
        {"\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": [[\"a\", 1], [\"k\", [0, {\"node\": \"zz\"}]]]}",
         "$.nodes[1].meta.entries[1][1][1]: node 'y', meta 'k': refers to node 'zz', which is not in the graph"},
        {"\"args\": [], \"kwargs\": [], \"meta\": {\"entries\": [[\"k\", 1], [\"k\", 2]]}",
         "$.nodes[1].meta.entries[1]: node 'y', meta: key \"k\" appears twice"},
        {"\"args\": [], \"kwargs\": [], \"x-extra\": 1", "$.nodes[1][\"x-extra\"]: node 'y': node: unknown member"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_body_error(cases[i].body, cases[i].want);
    /* the record itself, its name, op and target */
    expect_load_error("{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [\n"
                      "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": []},\n"
                      "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": []}]}",
                      "line 3: $.nodes[1].name: node 'x': Node redefined name x!");
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s\"args\": [], \"kwargs\": []}, {\"name\": \"z\", \"op\": \"call_function\", "
                   "\"target\": {\"op\": \"aten::nope\"}, \"args\": [], \"kwargs\": []}]}", doc_head);
    expect_load_error(b.data, "line 3: $.nodes[2].target: node 'z', target: unknown operator 'aten::nope'");
    cfx_buf_free(&b);
    expect_load_error("{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [1]}",
                      "$.nodes[0]: a node record must be an object");
    expect_load_error("{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [\n"
                      "{\"name\": \"x\", \"op\": \"placeholders\", \"target\": \"x\", \"args\": [], \"kwargs\": []}]}",
                      "$.nodes[0].op: node 'x': \"op\" must be one of");
}

Test(ir_json_errors, attribute_errors)
{
    const char *head = "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 0}, \"nodes\": [], \"attributes\": [\n";
    struct {
        const char *rec, *want;
    } cases[] = {
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPw==\"}", NULL},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [2], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPw==\"}", "line 2: $.attributes[0].data: attribute 'w': \"data\" is not the base64 of 8 bytes"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAP=w=\"}", "is not the base64"},
        /* found by fuzz_json: the string's length is checked before the 4 GiB of the declared
         * shape are allocated (they were, and zeroed, which took seconds under ASan) */
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1073741824], "
         "\"stride\": [1], \"storage_offset\": 0, \"data\": \"AACAPw==\"}",
         "\"data\" is not the base64 of 4294967296 bytes (1073741824 elements of 4 bytes)"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPx==\"}", "is not the base64"},
        {"{\"name\": \"w\", \"dtype\": \"torch.bool\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"Ag==\"}", "a bool element is neither 0 nor 1"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"meta\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"data\": \"AACAPw==\"}", "\"data\" given for a tensor not on the CPU"},
        {"{\"name\": \"w\", \"dtype\": 15, \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], \"storage_offset\": 0}",
         "dtype code 15 is not one cfx has tensors of"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [-1], \"stride\": [1], "
         "\"storage_offset\": 0}", "negative size"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [-1], "
         "\"storage_offset\": 0}", "negative size or stride"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0},\n{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], "
         "\"stride\": [1], \"storage_offset\": 0}", "line 3: $.attributes[1]: attribute 'w': the attribute appears twice"},
        {"{\"dtype\": \"torch.float32\"}", "needs a non-empty \"name\""},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\"}", "a tensor needs dtype, device"},
        {"{\"name\": \"w\", \"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [1], \"stride\": [1], "
         "\"storage_offset\": 0, \"grad\": null}", "unknown member \"grad\""},
        {"[1]", "an attribute record must be an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "%s%s]}", head, cases[i].rec);
        if (cases[i].want) {
            expect_load_error(b.data, cases[i].want);
        } else {
            cfx_graph_module *gm = load_gm(b.data, b.len);
            cr_assert(gm, "%s", cfx_error_message());
            cr_expect_eq(cfx_tensor_get_double(cfx_graph_module_get_attr(gm, "w"), 0), 1.0);
            cfx_graph_module_free(gm);
        }
        cfx_buf_free(&b);
    }
}

Test(ir_json_errors, write_errors)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *t = cfx_tensor_scalar_double(1, CFX_FLOAT32);
    call(g, "aten::add.Tensor", VALS(NV(x), cfx_tensor_value(t)), 2, NULL, 0);
    char *out = (char *)1;
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
    cr_expect_null(out);
    cr_expect_str_eq(cfx_error_message(), "cannot write graph JSON: node 'add', args: a tensor value cannot be "
                     "serialized (make it a module attribute read by a get_attr node)");
    cfx_graph_free(g);
    cfx_scope_end(s);

    struct {
        cfx_value v;
        const char *want;
    } cases[] = {
        {S("bad \xff utf8"), "node 'add', kwargs 'k': a string value is not valid UTF-8"},
        {S("\xc0\x80"), "not valid UTF-8"},                        /* overlong NUL */
        {S("\xed\xa0\x80"), "not valid UTF-8"},                    /* surrogate */
        {(cfx_value){CFX_V_STRING, 3, {.s = "a\0b"}}, "contains a NUL byte"},
        {cfx_object_value(NULL), "a script object value cannot be serialized"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        g = cfx_graph_new();
        x = cfx_graph_placeholder(g, "x");
        cfx_kwarg k[] = {KW("k", cases[i].v)};
        call(g, "aten::add.Tensor", VALS(NV(x)), 1, k, 1);
        cfx_error_clear();
        out = NULL;
        cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
        cr_expect(strstr(cfx_error_message(), cases[i].want), "%s", cfx_error_message());
        cfx_graph_free(g);
    }
    /* a meta reference to a node of another graph */
    g = cfx_graph_new();
    cfx_graph *other = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cfx_node_meta_set(x, "k", NV(cfx_graph_placeholder(other, "z")));
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "node 'x', meta 'k': refers to a node that is not in this graph"), "%s",
              cfx_error_message());
    cfx_graph_free(g);
    cfx_graph_free(other);
    /* names set by hand that clash */
    g = cfx_graph_new();
    x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    cfx_node_set_name_unchecked(y, "x");
    cfx_error_clear();
    cr_expect_neq(cfx_graph_to_json(g, 0, &out), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "the name is used by two nodes"), "%s", cfx_error_message());
    cfx_graph_free(g);
    cfx_error_clear();
}

Test(ir_json_errors, unknown_library_after_unload)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    CALL(g, "cfxjt::custom", NV(x));
    char *j = dump_graph(g);
    cfx_graph_free(g);
    cfx_library_free(lib);
    lib = NULL;
    expect_load_error(j, "unknown operator 'cfxjt::custom': nothing registered defines it; register its library "
                         "(namespace 'cfxjt') before loading the graph (schema in the file: "
                         "cfxjt::custom(Tensor x, *, int k=1, str mode=\"a\", Any? extra=None) -> Tensor)");
    /* with a library to declare it in, the embedded schema defines it: the graph loads and dumps
     * to the same bytes; the operator has no kernel */
    cfx_library *decl = CFX_LIBRARY(CFX_LIB_FRAGMENT, "cfxjt");
    cr_assert(decl);
    cfx_graph_load_options opts = {.declare = decl};
    cfx_error_clear();
    cfx_graph_module *gm = cfx_graph_module_from_json_opts(j, strlen(j), &opts);
    cr_assert(gm, "%s", cfx_error_message());
    cfx_node *n = cfx_graph_find_node(cfx_graph_module_graph(gm), "custom");
    cr_expect_eq(cfx_node_operator(n), cfx_op_lookup("cfxjt::custom"));
    char *j2 = dump_graph(cfx_graph_module_graph(gm));
    cr_expect_str_eq(j2, j);
    free(j2);
    cfx_graph_module_free(gm);
    /* now registered: a second load needs no declaring */
    gm = load_gm(j, strlen(j));
    cr_expect(gm, "%s", cfx_error_message());
    cfx_graph_module_free(gm);
    cfx_library_free(decl);
    /* a library of another namespace cannot declare it */
    decl = CFX_LIBRARY(CFX_LIB_FRAGMENT, "other");
    opts.declare = decl;
    cfx_error_clear();
    gm = cfx_graph_module_from_json_opts(j, strlen(j), &opts);
    cr_expect_null(gm);
    cr_expect(strstr(cfx_error_message(), "$.nodes[1].target: node 'custom', target: unknown operator 'cfxjt::custom' "
                                          "cannot be declared from the file's schema"), "%s", cfx_error_message());
    cr_expect(strstr(cfx_error_message(), "does not match namespace"), "%s", cfx_error_message());
    cfx_library_free(decl);
    /* an embedded schema that does not parse */
    char *bad = replace(j, "cfxjt::custom(Tensor x, *,", "cfxjt::custom(Tensor x, ((,");
    decl = CFX_LIBRARY(CFX_LIB_FRAGMENT, "cfxjt");
    opts.declare = decl;
    cfx_error_clear();
    gm = cfx_graph_module_from_json_opts(bad, strlen(bad), &opts);
    cr_expect_null(gm);
    cr_expect(strstr(cfx_error_message(), "cannot be declared from the file's schema"), "%s", cfx_error_message());
    free(bad);
    /* one that parses but prints otherwise: declared, then refused as a disagreeing schema */
    bad = replace(j, "cfxjt::custom(Tensor x, *,", "cfxjt::custom(Tensor  x, *,");
    cfx_error_clear();
    gm = cfx_graph_module_from_json_opts(bad, strlen(bad), &opts);
    cr_expect_null(gm);
    cr_expect(strstr(cfx_error_message(), "operator 'cfxjt::custom' is registered with schema"), "%s", cfx_error_message());
    cfx_library_free(decl);
    free(bad);
    free(j);
}

/* ---- fuzzing ------------------------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) { return test_rand(&rng_state); }

/* If text loads, it must dump to a document that loads and dumps to itself. */
static int fuzz_one(const char *text, size_t len)
{
    cfx_error_clear();
    cfx_graph_module *gm = load_gm(text, len);
    if (!gm) {
        cr_assert(cfx_error_occurred(), "refused without an error message");
        cr_assert(cfx_error_message() && cfx_error_message()[0]);
        cfx_error_clear();
        return 0;
    }
    char *a = NULL;
    int rc = cfx_graph_module_to_json(gm, 0, &a);
    if (rc == CFX_OK) {
        cfx_graph_module *gm2 = load_gm(a, strlen(a));
        cr_assert(gm2, "a re-dump does not load: %s", cfx_error_message());
        char *b = dump_gm(gm2, 0);
        cr_assert_str_eq(a, b);
        free(b);
        cfx_graph_module_free(gm2);
    }
    free(a);
    cfx_graph_module_free(gm);
    cfx_error_clear();
    return 1;
}

Test(ir_json_errors, fuzz_truncations, .timeout = 120)
{
    cfx_graph_module *gm = gm_example();
    char *j = dump_gm(gm, 0);
    size_t len = strlen(j);
    int ok = 0;
    for (size_t n = 0; n < len; n++)
        ok += fuzz_one(j, n);
    /* only the final newline may go */
    cr_expect_eq(ok, 1);
    cr_log_info("%zu truncations loaded, %d accepted", len, ok);
    free(j);
    cfx_graph_module_free(gm);
}

Test(ir_json_errors, fuzz_mutations, .timeout = 240)
{
    cfx_graph *g = g_all();
    cfx_graph_module *gm = cfx_graph_module_new(g, "All");
    cfx_scope s = cfx_scope_begin();
    float wd[6] = {1, 2, 3, 4, 5, 6};
    cfx_graph_module_set_attr(gm, "fc.weight", cfx_tensor_from_floats(wd, (int64_t[]){2, 3}, 2));
    cfx_scope_end(s);
    char *j = dump_gm(gm, 0);
    size_t len = strlen(j);
    char *buf = malloc(len);
    static const char alphabet[] = "{}[]\",:0123456789-+.eE \\nulltruefalse\x01\xff";
    int accepted = 0, iters = 3000;
    for (int it = 0; it < iters; it++) {
        memcpy(buf, j, len);
        int k = 1 + (int)(rng() % 3);
        for (int m = 0; m < k; m++) {
            size_t at = rng() % len;
            buf[at] = rng() % 2 ? alphabet[rng() % (sizeof alphabet - 1)] : (char)(rng() & 0xff);
        }
        accepted += fuzz_one(buf, len);
    }
    cr_log_info("%d of %d mutations still loaded", accepted, iters);
    free(buf);
    free(j);
    cfx_graph_module_free(gm);
}
