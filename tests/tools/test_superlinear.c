/* test_superlinear.c - the time per input byte of the fuzzed parsers stays bounded (issue 14).
 *
 * libFuzzer's -timeout=1 catches an input that is slow outright, not one whose cost grows
 * faster than its size: each parser here reads inputs of one shape at two sizes 8x apart,
 * and the larger may cost at most 4x more per byte (a quadratic step costs 8x more per byte).
 * CPU time of the process, best of 3, so a loaded machine slows both sizes alike. */
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

Test(superlinear, json_loader_time_per_byte_is_bounded, .timeout = 120)
{
    expect_linear("json", load_json, chain_json(2000), chain_json(16000));
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

Test(superlinear, schema_parser_time_per_byte_is_bounded, .timeout = 120)
{
    expect_linear("schema", parse_schema, wide_schema(300), wide_schema(2400));
}
