/* test_superlinear.c - the time per input byte of the fuzzed parsers stays bounded (issue 14).
 *
 * libFuzzer's -timeout=1 catches an input that is slow outright, not one whose cost grows
 * faster than its size: each parser here reads inputs of one shape at two sizes 8x apart,
 * and the larger may cost at most 4x more per byte (a quadratic step costs 8x more per byte).
 * CPU time of the process, best of 3, so a loaded machine slows both sizes alike. Shapes: the
 * common case (a long chain, a wide schema), long values (a flat list, a string of escapes),
 * deep nesting (as deep as the format allows, then deeper: the error path) and an error at the
 * end of a long input (the message names its line and column). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cfx.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* True if text was handled as expected: parsed, or (for the _fails variants) refused with a
 * message. */
typedef bool (*parse_fn)(const char *text, size_t len);

/* Best of 3 seconds per byte of parsing text. */
static double per_byte(parse_fn parse, const char *text)
{
    size_t len = strlen(text);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cpu_now();
        cr_assert(parse(text, len), "%s", cfx_error_message());
        double t = cpu_now() - t0;
        best = t < best ? t : best;
    }
    return best / (double)len;
}

static void expect_linear(const char *what, parse_fn parse, char *small, char *big)
{
    double a = per_byte(parse, small), b = per_byte(parse, big);
    printf("superlinear %s: %zu bytes %.1f ns/byte, %zu bytes %.1f ns/byte (ratio %.2f)\n", what, strlen(small),
           a * 1e9, strlen(big), b * 1e9, b / a);
    cr_expect_lt(b, 4 * a + 2e-9, "%s: %.1f ns/byte at %zu bytes, %.1f at %zu", what, a * 1e9, strlen(small),
                 b * 1e9, strlen(big));
    cfx_free(small);
    cfx_free(big);
}

/* ---- the graph JSON loader: a chain of n relu calls, each with meta ------------------------- */

static char *chain_json(int n)
{
    cfx_graph *g = cfx_graph_new();
    const cfx_op *relu = cfx_op_find("aten::relu");
    cr_assert(relu);
    cfx_node *last = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < n; i++) {
        cfx_value a = cfx_node_value(last);
        last = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(relu), &a, 1, NULL, 0, NULL);
        cr_assert(last);
        cr_assert_eq(cfx_node_set_stack_trace(last, &(cfx_site){"model.c", i, "forward"}), CFX_OK);
    }
    cfx_graph_output(g, cfx_node_value(last));
    char *text = NULL;
    cr_assert_eq(cfx_graph_to_json(g, 0, &text), CFX_OK, "%s", cfx_error_message());
    cfx_graph_free(g);
    return text;
}

static bool load_json(const char *text, size_t len)
{
    cfx_graph *g = cfx_graph_from_json(text, len);
    cfx_graph_free(g);
    return g != NULL;
}

static bool load_json_fails(const char *text, size_t len)
{
    cfx_graph *g = cfx_graph_from_json(text, len);
    bool refused = !g && cfx_error_message();
    cfx_error_clear();
    cfx_graph_free(g);
    return refused;
}

/* A graph whose one call takes a value built by item(i) n times, wrapped in open/close. */
static char *one_call_json(const char *target, const char *open, const char *item, int n, const char *close)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 1}, \"nodes\": [\n"
                       "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": []},\n"
                       "{\"name\": \"c\", \"op\": \"call_function\", \"target\": %s, \"args\": [%s", target, open);
    for (int i = 0; i < n; i++)
        cfx_buf_printf(&b, item, i ? ", " : "", i);
    cfx_buf_printf(&b, "%s], \"kwargs\": []},\n"
                       "{\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", \"args\": [{\"node\": \"c\"}], "
                       "\"kwargs\": []}]}\n", close);
    return cfx_buf_take(&b);
}

/* A string argument of n escapes ("\u00e9\n\"..."), taken by operator.getitem. */
static char *string_json(int n)
{
    return one_call_json("{\"fn\": \"operator.getitem\"}", "\"", "%s\\u00e9\\n\\\"\\u0041%.0d", n, "\", 0");
}

/* A flat list of n ints, taken by operator.getitem. */
static char *list_json(int n)
{
    return one_call_json("{\"fn\": \"operator.getitem\"}", "[", "%s%d", n, "], 0");
}

/* n nested lists, "[[[...]]]": past the format's depth limit, refused with a message. */
static char *deep_json(int n)
{
    cfx_buf b;
    cfx_buf_init(&b);
    for (int i = 0; i < n; i++)
        cfx_buf_putc(&b, '[');
    for (int i = 0; i < n; i++)
        cfx_buf_putc(&b, ']');
    return cfx_buf_take(&b);
}

/* A long valid chain, then a node with an unknown op at its very end. */
static char *bad_end_json(int n)
{
    char *good = chain_json(n);
    char *end = strstr(good, "\n  ]"); /* the end of "nodes" */
    cr_assert(end, "%s", good);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_putn(&b, good, (size_t)(end - good));
    cfx_buf_puts(&b, ",\n{\"name\": \"z\", \"op\": \"nope\", \"target\": \"z\", \"args\": [], \"kwargs\": []}");
    cfx_buf_puts(&b, end);
    cfx_free(good);
    return cfx_buf_take(&b);
}

Test(superlinear, json_loader_time_per_byte_is_bounded, .timeout = 120)
{
    expect_linear("json", load_json, chain_json(2000), chain_json(16000));
}

Test(superlinear, json_loader_long_values_deep_nesting_and_late_errors, .timeout = 120)
{
    expect_linear("json string", load_json, string_json(20000), string_json(160000));
    expect_linear("json list", load_json, list_json(20000), list_json(160000));
    expect_linear("json deep (refused)", load_json_fails, deep_json(20000), deep_json(160000));
    expect_linear("json late error", load_json_fails, bad_end_json(2000), bad_end_json(16000));
}

/* ---- passes on a fan-in: x feeding n calls add(x, i), all stacked by one node ---------------- */

/* The calls differ only in their int argument: FakeTensorProp's fake-mode cache once put every
 * such key in one probe run of its table (the slot cancelled the hash's final fold), which made
 * the pass quadratic on this shape. */
static char *fan_in_json(int n)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 1}, \"nodes\": [\n"
                     "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": [], "
                     "\"meta\": {\"val\": {\"tensor\": {\"dtype\": \"torch.float32\", \"device\": \"cpu\", \"shape\": [2], "
                     "\"stride\": [1], \"storage_offset\": 0}}}},\n");
    for (int i = 0; i < n; i++)
        cfx_buf_printf(&b, "{\"name\": \"add_%d\", \"op\": \"call_function\", \"target\": {\"op\": \"aten::add.Tensor\"}, "
                           "\"args\": [{\"node\": \"x\"}, %d], \"kwargs\": []},\n", i, i);
    cfx_buf_puts(&b, "{\"name\": \"stack\", \"op\": \"call_function\", \"target\": {\"op\": \"aten::stack\"}, \"args\": [[");
    for (int i = 0; i < n; i++)
        cfx_buf_printf(&b, "%s{\"node\": \"add_%d\"}", i ? ", " : "", i);
    cfx_buf_puts(&b, "]], \"kwargs\": []},\n{\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", "
                     "\"args\": [{\"node\": \"stack\"}], \"kwargs\": []}]}\n");
    return cfx_buf_take(&b);
}

/* Loads the module and runs every built-in pass (each must keep the graph as it is), then
 * fake-tensor-prop three times more, so that the pass outweighs the load in the timing. */
static bool load_and_run_passes(const char *text, size_t len)
{
    cfx_graph_module *gm = cfx_graph_module_from_json(text, len);
    bool changed = false;
    bool ok = gm && cfx_pipeline_run_text("dce,cse,topo-sort,verify,strip-asserts,fold,normalize-args,fake-tensor-prop,"
                                          "fake-tensor-prop,fake-tensor-prop,fake-tensor-prop",
                                          gm, &(cfx_pipeline_options){.progress_after = -1}, &changed) == CFX_OK;
    cfx_graph_module_free(gm);
    return ok && !changed;
}

Test(superlinear, passes_on_a_fan_in_are_linear, .timeout = 120)
{
    cfx_dispatcher_init();
    expect_linear("passes on a fan-in", load_and_run_passes, fan_in_json(1000), fan_in_json(8000));
}

/* ---- the schema parser: n arguments with defaults and annotations --------------------------- */

static char *wide_schema(int n)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "foo::wide(");
    for (int i = 0; i < n; i++)
        cfx_buf_printf(&b, "%sTensor(a%d!)? x%d=None, int[2] s%d=[1, 2], str m%d=\"mode\"", i ? ", " : "", i, i,
                       i, i);
    cfx_buf_puts(&b, ") -> Tensor");
    return cfx_buf_take(&b);
}

static bool parse_schema(const char *text, size_t len)
{
    (void)len;
    char *err = NULL;
    cfx_schema *s = cfx_schema_parse(text, &err);
    if (!s)
        cfx_error_set(CFX_ERR, NULL, "%s", err ? err : "?");
    cfx_free(err);
    cfx_schema_free(s);
    return s != NULL;
}

static bool parse_schema_fails(const char *text, size_t len)
{
    (void)len;
    char *err = NULL;
    cfx_schema *s = cfx_schema_parse(text, &err);
    bool refused = !s && err && *err;
    cfx_free(err);
    cfx_schema_free(s);
    return refused;
}

/* One argument of n nested types: "(int, Dict(str, (int, ... int ...)))?[]". */
static char *deep_schema(int n)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "foo::deep(");
    for (int i = 0; i < n; i++)
        cfx_buf_puts(&b, i % 2 ? "Dict(str, " : "(int, ");
    cfx_buf_puts(&b, "int");
    for (int i = 0; i < n; i++)
        cfx_buf_putc(&b, ')');
    cfx_buf_puts(&b, "?[] x) -> Tensor");
    return cfx_buf_take(&b);
}

/* A wide schema with an error at its very end (the message shows the line and a caret). */
static char *bad_end_schema(int n)
{
    char *good = wide_schema(n);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, good);
    cfx_buf_puts(&b, ")");
    cfx_free(good);
    return cfx_buf_take(&b);
}

Test(superlinear, schema_parser_time_per_byte_is_bounded, .timeout = 120)
{
    expect_linear("schema", parse_schema, wide_schema(300), wide_schema(2400));
}

Test(superlinear, schema_parser_deep_types_and_late_errors, .timeout = 120)
{
    expect_linear("schema deep", parse_schema, deep_schema(1000), deep_schema(8000));
    expect_linear("schema late error", parse_schema_fails, bad_end_schema(300), bad_end_schema(2400));
}
