/* test_json_verify.c - the loader refuses what the writer refuses and what FX would not run.
 *
 * Ill-formed UTF-8 anywhere in the document (the writer never produces it, so a loaded graph
 * could not be saved again); a call_function that does not bind to its operator's schema;
 * several output nodes, or an output that is not last. Each is an error with a message, and
 * the `verify` pass refuses the same graphs as the loader (one shared cfx_graph_verify). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cfx.h"

#define HEAD "{\"format\": \"cfx.graph\", \"version\": {\"major\": 1, \"minor\": 1}, \"name\": null, \"nodes\": ["
#define X "{\"name\": \"x\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], \"kwargs\": []}"
#define OUT(v) "{\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", \"args\": [" v "], \"kwargs\": []}"
#define CALL(name, op, args, kwargs) \
    "{\"name\": \"" name "\", \"op\": \"call_function\", \"target\": {\"op\": \"" op "\"}, \"args\": [" args \
    "], \"kwargs\": [" kwargs "]}"
#define TAIL "], \"attributes\": []}"

static void expect_refused(const char *doc, const char *needle)
{
    cfx_error_clear();
    cfx_graph_module *gm = cfx_graph_module_from_json(doc, strlen(doc));
    cr_expect_null(gm, "loaded: %s", doc);
    cfx_graph_module_free(gm);
    const char *m = cfx_error_message();
    cr_expect(m && strstr(m, needle), "'%s' not in: %s", needle, m ? m : "(no message)");
}

static void expect_loaded(const char *doc)
{
    cfx_graph_module *gm = cfx_graph_module_from_json(doc, strlen(doc));
    cr_expect(gm, "%s: %s", doc, cfx_error_message() ? cfx_error_message() : "?");
    cfx_graph_module_free(gm);
}

Test(json_verify, well_formed_graph_loads)
{
    expect_loaded(HEAD X ", " CALL("relu", "aten::relu", "{\"node\": \"x\"}", "") ", " OUT("{\"node\": \"relu\"}") TAIL);
    expect_loaded(HEAD X ", " CALL("add", "aten::add.Tensor", "{\"node\": \"x\"}, {\"node\": \"x\"}", "[\"alpha\", 2]")
                  ", " OUT("{\"node\": \"add\"}") TAIL);
    expect_loaded(HEAD X ", " CALL("add", "aten::add.Tensor", "{\"node\": \"x\"}", "[\"other\", {\"node\": \"x\"}]")
                  ", " OUT("{\"node\": \"add\"}") TAIL);
}

Test(json_verify, ill_formed_utf8_is_refused)
{
    /* a lone continuation byte, an overlong '/', a surrogate, a truncated sequence */
    static const char *const bad[] = {"\x80", "\xC0\xAF", "\xED\xA0\x80", "\xE2\x82"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc, "%s{\"name\": \"x%s\", \"op\": \"placeholder\", \"target\": \"x\", \"args\": [], "
                 "\"kwargs\": []}, %s%s", HEAD, bad[i], OUT("null"), TAIL);
        expect_refused(doc, "not valid UTF-8");
    }
}

Test(json_verify, calls_must_bind_to_their_schema)
{
    expect_refused(HEAD X ", " CALL("relu", "aten::relu", "", "") ", " OUT("{\"node\": \"relu\"}") TAIL,
                   "aten::relu() is missing value for argument 'self'. Declaration: aten::relu(Tensor self) -> Tensor");
    expect_refused(HEAD X ", " CALL("add_", "aten::add_.Tensor", "", "") ", " OUT("null") TAIL,
                   "aten::add_.Tensor() is missing value for argument 'self'");
    expect_refused(HEAD X ", " CALL("relu", "aten::relu", "{\"node\": \"x\"}", "[\"self\", {\"node\": \"x\"}]") ", "
                   OUT("{\"node\": \"relu\"}") TAIL,
                   "aten::relu() got multiple values for argument 'self'");
}

Test(json_verify, one_output_and_last)
{
    expect_refused(HEAD X ", " OUT("null") ", {\"name\": \"output_1\", \"op\": \"output\", \"target\": \"output\", "
                   "\"args\": [null], \"kwargs\": []}" TAIL, "more than one output node");
    expect_refused(HEAD X ", " OUT("null") ", " CALL("relu", "aten::relu", "{\"node\": \"x\"}", "") TAIL,
                   "the output node is not the last node");
}

Test(json_verify, verify_pass_refuses_what_the_loader_refuses)
{
    const char *doc = HEAD X ", " CALL("relu", "aten::relu", "{\"node\": \"x\"}", "") ", " OUT("{\"node\": \"relu\"}") TAIL;
    cfx_graph_module *gm = cfx_graph_module_from_json(doc, strlen(doc));
    cr_assert(gm, "%s", cfx_error_message());
    cfx_graph *g = cfx_graph_module_graph(gm);
    cr_expect_eq(cfx_graph_verify(g), CFX_OK);
    cfx_node *relu = cfx_node_next(cfx_graph_first(g));
    cr_assert_eq(cfx_node_set_args_kwargs(relu, NULL, 0, NULL, 0), CFX_OK);
    cr_expect_neq(cfx_graph_verify(g), CFX_OK);
    cr_expect(cfx_error_message() && strstr(cfx_error_message(), "missing value for argument 'self'"));
    cfx_pipeline *pl = cfx_pipeline_parse("verify");
    cr_assert(pl, "%s", cfx_error_message());
    cr_expect_neq(cfx_pipeline_run(pl, gm, NULL, NULL), CFX_OK, "the verify pass accepted it");
    cfx_pipeline_free(pl);
    cfx_graph_module_free(gm);
}
