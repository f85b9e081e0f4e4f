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
    /* PyTorch 2.13's texts (torch.ops.aten.relu.default() and the like raise them) */
    expect_refused(HEAD X ", " CALL("relu", "aten::relu", "", "") ", " OUT("{\"node\": \"relu\"}") TAIL,
                   "$.nodes[1]: node 'relu': aten::relu() is missing value for argument 'self'. "
                   "Declaration: aten::relu(Tensor self) -> Tensor");
    expect_refused(HEAD X ", " CALL("add_", "aten::add_.Tensor", "", "") ", " OUT("null") TAIL,
                   "aten::add_() is missing value for argument 'self'. Declaration: "
                   "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
    expect_refused(HEAD X ", " CALL("relu", "aten::relu", "{\"node\": \"x\"}", "[\"self\", {\"node\": \"x\"}]") ", "
                   OUT("{\"node\": \"relu\"}") TAIL,
                   "aten::relu() expected at most 1 argument(s) but received 2 argument(s). "
                   "Declaration: aten::relu(Tensor self) -> Tensor");
    expect_refused(HEAD X ", " CALL("add", "aten::add.Tensor", "{\"node\": \"x\"}, {\"node\": \"x\"}",
                                    "[\"other\", {\"node\": \"x\"}]") ", " OUT("null") TAIL,
                   "Argument 'other' specified both as positional and keyword argument. Schema: "
                   "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

/* Issue 14: extra positional arguments and unknown keywords are refused too, the message
 * naming the node's JSON path. */
Test(json_verify, extra_positional_arguments_are_refused)
{
    expect_refused(HEAD X ", " CALL("relu", "aten::relu", "{\"node\": \"x\"}, 1", "") ", "
                   OUT("{\"node\": \"relu\"}") TAIL,
                   "cannot load graph JSON: line 1: $.nodes[1]: node 'relu': aten::relu() expected at most 1 argument(s) "
                   "but received 2 argument(s). Declaration: aten::relu(Tensor self) -> Tensor");
    /* alpha is keyword-only: a third positional one is one too many positional */
    expect_refused(HEAD X ", " CALL("add", "aten::add.Tensor", "{\"node\": \"x\"}, {\"node\": \"x\"}, 2", "") ", "
                   OUT("null") TAIL,
                   "$.nodes[1]: node 'add': aten::add() takes 2 positional argument(s) but 3 was/were given.  "
                   "Declaration: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

Test(json_verify, unknown_keywords_are_refused)
{
    expect_refused(HEAD X ", " CALL("add", "aten::add.Tensor", "{\"node\": \"x\"}, {\"node\": \"x\"}",
                                    "[\"bar\", 2]") ", " OUT("null") TAIL,
                   "$.nodes[1]: node 'add': Unknown keyword argument 'bar' for operator 'aten::add'. Schema: "
                   "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    /* a known keyword loads; a vararg schema takes anything */
    expect_loaded(HEAD X ", " CALL("add", "aten::add.Tensor", "{\"node\": \"x\"}, {\"node\": \"x\"}",
                                   "[\"alpha\", 2]") ", " OUT("{\"node\": \"add\"}") TAIL);
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
