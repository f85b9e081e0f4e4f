/* test_graph.c - building and editing graphs (ir/graph.h, ir/node.h): node creation of every
 * kind through the one creation path, args copies, erase, insertion points, moves, copies
 * between graphs. Error and warning texts are 2.13's (tests/data/ir_errors.tsv); the def-use
 * links are test_uses.c's. */
#include <criterion/criterion.h>

#include "ir/meta.h"
#include "tests/ir/ir_test_util.h"

/* The text of error `key` in ir_errors.tsv (malloc'd, "\\n" turned into newlines). */
static char *golden_error(const char *key)
{
    char *text = ir_golden("ir_errors.tsv");
    size_t klen = strlen(key);
    char *found = NULL;
    for (char *line = strtok(text, "\n"); line && !found; line = strtok(NULL, "\n"))
        if (strncmp(line, key, klen) == 0 && line[klen] == '\t')
            found = line + klen + 1;
    cr_assert(found, "no %s in ir_errors.tsv", key);
    char *out = malloc(strlen(found) + 1), *w = out;
    for (const char *r = found; *r; r++) {
        if (r[0] == '\\' && r[1] == 'n') {
            *w++ = '\n';
            r++;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    free(text);
    return out;
}

static void expect_error(const char *key)
{
    char *want = golden_error(key);
    cr_expect_str_eq(cfx_error_message(), want, "%s", key);
    free(want);
    cfx_error_clear();
}

static void capture_warning(const char *message, void *ctx)
{
    cfx_buf *b = ctx;
    cfx_buf_puts(b, message);
}

Test(ir_graph, build_and_read)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_kwarg kw[] = {KW("alpha", cfx_int(2)), KW("tag", cfx_string("t"))};
    cfx_node *a = OPK(g, "aten::add.Tensor", kw, 2, NV(x), LIST(NV(x), TUPLE(NV(x), cfx_int(3))));
    cr_assert(a);
    cr_expect_eq(cfx_node_opcode(a), CFX_NODE_CALL_FUNCTION);
    cr_expect_str_eq(cfx_node_op_name(cfx_node_opcode(a)), "call_function");
    cr_expect_eq(cfx_node_op_from_name("get_attr"), CFX_NODE_GET_ATTR);
    cr_expect_eq(cfx_node_op_from_name("root"), -1);
    cr_expect_eq(cfx_node_operator(a), test_op("aten::add.Tensor"));
    cr_expect_null(cfx_node_target_str(a));
    cr_expect_str_eq(cfx_node_target_str(x), "x");
    cr_expect_eq(cfx_node_target(a).kind, CFX_TARGET_OP);
    cr_expect_eq(cfx_node_num_args(a), 2);
    cr_expect_eq(cfx_node_num_kwargs(a), 2);
    cr_expect_eq(cfx_node_kwarg(a, "alpha")->u.i, 2);
    cr_expect_str_eq(cfx_node_kwarg(a, "tag")->u.s, "t");
    cr_expect_null(cfx_node_kwarg(a, "nope"));
    /* x appears three times (nested), is one input, and a is one user of x */
    cr_expect_eq(cfx_node_num_inputs(a), 1);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_graph_num_nodes(g), 2);
    cr_expect_eq(cfx_graph_first(g), x);
    cr_expect_eq(cfx_graph_last(g), a);
    cr_expect_null(cfx_graph_output_node(g));
    cfx_node *o = cfx_graph_output(g, NV(a));
    cr_expect_eq(cfx_graph_output_node(g), o);
    cr_expect_eq(cfx_graph_find_node(g, "add"), a);
    cr_expect_null(cfx_graph_find_node(g, "ad"));
    cr_expect_eq(x->seq, 0);
    cr_expect_eq(a->seq, 1);
    cr_expect_eq(cfx_graph_num_created(g), 3);
    cfx_graph_free(g);
}

Test(ir_graph, args_are_copied)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    char text[8] = "hello";
    cfx_value inner[2] = {cfx_int(1), cfx_string(text)};
    cfx_value args[2] = {NV(x), cfx_list(inner, 2)};
    cfx_node *a = OP(g, "aten::foo", args[0], args[1]);
    inner[0] = cfx_int(99);
    text[0] = 'j';
    cfx_value l = cfx_node_arg(a, 1);
    cr_expect_eq(l.kind, CFX_V_LIST);
    cr_expect_eq(l.u.items[0].u.i, 1);
    cr_expect_str_eq(l.u.items[1].u.s, "hello");
    /* a node's own args may be passed back in */
    cr_assert_eq(cfx_node_set_args(a, cfx_node_args(a), cfx_node_num_args(a)), CFX_OK);
    cr_expect_eq(cfx_node_arg(a, 1).u.items[0].u.i, 1);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cfx_graph_free(g);
}

Test(ir_graph, erase)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::add.Tensor", NV(x), NV(x));
    cfx_node *b = OP(g, "aten::mul.Tensor", NV(x), NV(a));
    cfx_graph_output(g, NV(b));
    cfx_error_clear();
    cr_expect_eq(cfx_graph_erase_node(g, x), CFX_ERR);
    char *want = ir_golden("ir_lint_erase_refused.txt");
    cr_expect_str_eq(cfx_error_message(), want);
    free(want);
    cfx_error_clear();
    /* erase the output, then b, then a: users drop as we go */
    cfx_node *o = cfx_graph_output_node(g);
    cr_assert_eq(cfx_graph_erase_node(g, o), CFX_OK);
    cr_expect(cfx_node_is_erased(o));
    cr_expect_eq(cfx_node_arg(o, 0).kind, CFX_V_NONE); /* args nulled out */
    cr_expect_eq(cfx_node_num_users(b), 0);
    cr_assert_eq(cfx_graph_erase_node(g, b), CFX_OK);
    cr_expect_eq(cfx_node_num_users(a), 0);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_assert_eq(cfx_graph_erase_node(g, a), CFX_OK);
    cr_expect_eq(cfx_node_num_users(x), 0);
    cr_expect_eq(cfx_graph_num_nodes(g), 1);
    /* erasing again only warns */
    cfx_buf warn;
    cfx_buf_init(&warn);
    cfx_set_warning_handler(capture_warning, &warn);
    cr_expect_eq(cfx_graph_erase_node(g, a), CFX_OK);
    cfx_set_warning_handler(NULL, NULL);
    cr_expect(!cfx_error_occurred());
    char *want_warning = golden_error("erase_twice_warning");
    cr_expect_str_eq(warn.data, want_warning);
    free(want_warning);
    cfx_buf_free(&warn);
    /* names stay taken after erase (FX never frees a name) */
    cfx_node *a2 = OP(g, "aten::add.Tensor", NV(x), NV(x));
    cr_expect(cfx_node_name_is(a2, "add_1"));
    /* wrong graph */
    cfx_graph *h = cfx_graph_new();
    cfx_node *z = cfx_graph_placeholder(h, "z");
    cr_expect_eq(cfx_graph_erase_node(g, z), CFX_ERR);
    expect_error("erase_from_wrong_graph");
    /* insert_arg's index check; moving a node of another graph */
    cfx_node *c = OP(g, "aten::cos", NV(x));
    cr_expect_eq(cfx_node_insert_arg(c, 9, NV(x)), CFX_ERR);
    expect_error("insert_arg_out_of_range");
    cr_expect_eq(cfx_node_prepend(c, z), CFX_ERR);
    expect_error("prepend_from_other_graph");
    cfx_graph_free(h);
    cfx_graph_free(g);
}

Test(ir_graph, iteration_under_mutation)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *nodes[6];
    for (int i = 0; i < 6; i++)
        nodes[i] = OP(g, "aten::relu", NV(x)); /* all dead */
    int seen = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        seen++;
        if (n == nodes[1]) {
            /* erase this one and the next one while standing on it */
            cr_assert_eq(cfx_graph_erase_node(g, nodes[1]), CFX_OK);
            cr_assert_eq(cfx_graph_erase_node(g, nodes[2]), CFX_OK);
        }
        if (n == nodes[3]) {
            /* a node inserted right after the current one is visited */
            cfx_insert_point p = cfx_graph_inserting_after(g, n);
            OP(g, "aten::cos", NV(x));
            cfx_graph_set_insert_point(g, p);
        }
    }
    cr_expect_eq(seen, 1 + 6 - 1 + 1); /* x, relu, relu_1, (relu_2 skipped), relu_3, cos, relu_4, relu_5 */
    int back = 0;
    for (cfx_node *n = cfx_graph_last(g), *p; n; n = p) {
        p = cfx_node_prev(n);
        back++;
        if (cfx_node_num_users(n) == 0 && cfx_node_opcode(n) != CFX_NODE_PLACEHOLDER)
            cr_assert_eq(cfx_graph_erase_node(g, n), CFX_OK);
    }
    cr_expect_eq(back, 6);
    cr_expect_eq(cfx_graph_num_nodes(g), 1);
    cr_expect_eq(cfx_node_num_users(x), 0);
    cfx_graph_free(g);
}

Test(ir_graph, insertion_point_and_moves)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::cos", NV(x));
    cr_assert_eq(cfx_node_prepend(a, b), CFX_OK); /* x, cos, relu */
    cr_expect_eq(cfx_node_next(x), b);
    cr_expect_eq(cfx_node_next(b), a);
    cr_assert_eq(cfx_node_append(a, b), CFX_OK); /* x, relu, cos */
    cr_expect_eq(cfx_node_next(a), b);
    cr_expect_null(cfx_node_next(b));
    cr_assert_eq(cfx_node_append(a, b), CFX_OK); /* already there */
    cr_expect_eq(cfx_node_next(a), b);
    cr_assert_eq(cfx_node_prepend(a, a), CFX_OK);
    /* an erased insertion point is refused */
    cfx_insert_point p = cfx_graph_inserting_before(g, b);
    cr_assert_eq(cfx_graph_erase_node(g, b), CFX_OK);
    cfx_error_clear();
    cr_expect_null(OP(g, "aten::sin", NV(x)));
    cr_expect(cfx_error_occurred());
    cfx_error_clear();
    cfx_graph_set_insert_point(g, p);
    cr_expect(OP(g, "aten::sin", NV(x)));
    cfx_graph *h = cfx_graph_new();
    cfx_node *z = cfx_graph_placeholder(h, "z");
    p = cfx_graph_inserting_after(g, z); /* a node of another graph */
    cr_expect_null(OP(g, "aten::sin", NV(x)));
    cr_expect_str_eq(cfx_error_message(), "Node to insert before is not in graph.");
    cfx_error_clear();
    cfx_graph_set_insert_point(g, p);
    cr_expect_eq(cfx_node_prepend(a, z), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "Attempting to move a Node into a different Graph");
    cfx_error_clear();
    cfx_graph_free(h);
    cfx_graph_free(g);
}

Test(ir_graph, bad_targets_and_null_propagation)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_error_clear();
    cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_str("foo"), VALS(NV(x)), 1, NULL, 0, NULL));
    expect_error("target_str_for_call_function");
    cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_METHOD, cfx_target_op(test_op("aten::add.Tensor")),
                                         VALS(NV(x)), 1, NULL, 0, "add_tensor"));
    expect_error("target_op_for_call_method");
    cr_expect_null(cfx_graph_create_node(g, CFX_NODE_GET_ATTR, cfx_target_fn(&cfx_fn_getitem), VALS(NV(x)), 1, NULL, 0, NULL));
    expect_error("target_fn_for_get_attr");
    /* the refused nodes consumed their names, as in FX */
    cr_expect(cfx_names_is_used_str(cfx_graph_names(g), "foo"));
    cr_expect_eq(cfx_graph_num_nodes(g), 1);
    cr_expect_eq(cfx_node_num_users(x), 0);
    /* NULL in, NULL out, no new message */
    cr_expect_null(OP(g, "aten::relu", NV(NULL)));
    cr_expect(!cfx_error_occurred());
    cr_expect_null(OP(NULL, "aten::relu", NV(x)));
    cr_expect_null(cfx_graph_call_op(g, NULL, VALS(NV(x)), 1, NULL, 0));
    cr_expect_eq(cfx_node_set_args(NULL, NULL, 0), CFX_ERR);
    cr_expect_eq(cfx_graph_erase_node(g, NULL), CFX_ERR);
    cr_expect(!cfx_error_occurred());
    cr_expect_null(cfx_graph_create_node(g, (cfx_node_op)9, cfx_target_str("x"), NULL, 0, NULL, 0, NULL));
    cr_expect(cfx_error_occurred());
    cfx_error_clear();
    cfx_graph_free(g);
    cfx_graph_free(NULL);
}

static cfx_node *map_to(cfx_node *n, void *ctx)
{
    cfx_node **table = ctx;
    return table[n->seq];
}

Test(ir_graph, node_copy_between_graphs)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_kwarg kw[] = {KW("alpha", cfx_double(0.5))};
    cfx_node *a = OPK(g, "aten::add.Tensor", kw, 1, NV(x), LIST(NV(x), cfx_string("s")));
    cfx_node_meta_set(a, "custom", cfx_string("tag"));
    cfx_site site = {"model.c", 42, "forward"};
    cfx_node_set_stack_trace(a, &site);
    cfx_node *o = cfx_graph_output(g, NV(a));
    cfx_graph *h = cfx_graph_new();
    cfx_node *table[3] = {0};
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        table[n->seq] = cfx_graph_node_copy(h, n, map_to, table);
    cr_assert(table[o->seq]);
    char *s1 = cfx_graph_to_string(g), *s2 = cfx_graph_to_string(h);
    cr_expect_str_eq(s1, s2);
    free(s1);
    free(s2);
    cfx_node *a2 = table[a->seq];
    cr_expect_str_eq(cfx_node_meta_get(a2, "custom")->u.s, "tag");
    cr_expect_eq(cfx_node_stack_trace(a2)->line, 42);
    cr_expect_eq(cfx_node_num_users(x), 1);
    cr_expect_eq(cfx_node_num_users(table[x->seq]), 1);
    cfx_graph_free(g); /* h owns its copies: freeing g first is fine */
    cr_expect_eq(cfx_graph_lint(h), CFX_OK);
    cfx_graph_free(h);
}

/* ---- one creation path, every kind of node -------------------------------------------------- */

static cfx_node *call(cfx_graph *g, const char *qn, const cfx_value *args, uint32_t n)
{
    return cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op(qn)), args, n, NULL, 0, NULL);
}

/* Strings, lists, tuples, kwargs, many args, and a NULL node (an earlier call failed: no node,
 * no new message, and the record is the next node's). */
Test(ir_graph, args_of_every_kind)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *y = cfx_graph_placeholder(g, "y");
    char s[] = "mode";
    cfx_node *a = OP(g, "aten::foo", NV(x), cfx_string(s), LIST(NV(y), NV(x)), TUPLE(), NV(y));
    cr_assert(a);
    s[0] = 'X';
    cr_expect_str_eq(cfx_node_arg(a, 1).u.s, "mode");
    cr_expect_eq(cfx_node_num_inputs(a), 2);
    cr_expect_eq(cfx_node_input(a, 0), x);
    cr_expect_eq(cfx_node_input(a, 1), y);
    cfx_kwarg kw[] = {KW("other", NV(y))};
    cfx_node *b = OPK(g, "aten::foo", kw, 1, NV(x));
    cr_expect_eq(cfx_node_num_inputs(b), 2);
    cr_expect_eq(cfx_node_num_kwargs(b), 1);
    cr_expect_eq(cfx_node_kwarg(b, "other")->u.node, y);
    cfx_value many[20];
    for (int i = 0; i < 20; i++)
        many[i] = i % 3 ? NV(i % 2 ? x : y) : cfx_int(i);
    cfx_node *c = cfx_graph_call_op(g, test_op("aten::foo"), many, 20, NULL, 0);
    cr_assert(c);
    cr_expect_eq(cfx_node_num_args(c), 20);
    cr_expect_eq(cfx_node_num_inputs(c), 2);
    cr_expect_eq(cfx_node_input(c, 0), x);
    cr_expect_eq(cfx_node_input(c, 1), y);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    /* a NULL node: an earlier call failed; no node, no new message, the slot is reused */
    uint32_t made = cfx_graph_num_created(g);
    cfx_error_clear();
    cr_expect_null(OP(g, "aten::foo", NV(x), cfx_node_value(NULL)));
    cr_expect_null(cfx_error_message());
    cr_expect_eq(cfx_graph_num_created(g), made);
    cr_expect_eq(cfx_node_num_users(x), 3);
    cfx_node *d = OP(g, "aten::foo", NV(x));
    cr_expect_eq(cfx_graph_num_created(g), made + 1);
    cr_expect_eq(cfx_node_num_users(x), 4);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    (void)d;
    cfx_graph_free(g);
}

static void tensor(cfx_tensor *t, int64_t rows, int64_t cols, cfx_dtype dt)
{
    memset(t, 0, sizeof *t);
    t->dtype = (int8_t)dt;
    t->ndim = 2;
    t->device = cfx_device_make(CFX_DEVICE_CPU);
    t->sizes = t->dims_inline;
    t->strides = t->dims_inline + CFX_INLINE_DIMS;
    t->sizes[0] = rows;
    t->sizes[1] = cols;
    t->strides[0] = cols;
    t->strides[1] = 1;
}

/* A tracer's script with every kind of step: calls of 0 to 14 args (nodes, ints, doubles,
 * None, bools, dtypes, duplicates, a string, a list, a node of another graph, a NULL node),
 * kwargs, explicit names that take the next default name, a function target, other ops, an
 * insertion point moved and restored, and meta set on every result. */
static cfx_graph *script(cfx_graph *other)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_create_node(g, CFX_NODE_PLACEHOLDER, cfx_target_str("x"), NULL, 0, NULL, 0, NULL);
    cfx_node *y = cfx_graph_create_node(g, CFX_NODE_PLACEHOLDER, cfx_target_str("y"), NULL, 0, NULL, 0, NULL);
    cfx_node *foreign = cfx_graph_placeholder(other, "f");
    cfx_tensor t2, t3;
    tensor(&t2, 4, 8, CFX_FLOAT32);
    tensor(&t3, 2, 3, CFX_FLOAT64);
    cfx_device meta_dev = cfx_device_make(CFX_DEVICE_META);
    static const cfx_site s1 = {"model.c", 1, "forward"}, s2 = {"model.c", 2, "forward"};
    cfx_node *prev = x;
    for (int i = 0; i < 700; i++) {
        cfx_node *n = NULL;
        switch (i % 14) {
        case 0:
            n = call(g, "aten::add.Tensor", VALS(NV(prev), NV(x)), 2);
            break;
        case 1:
            n = call(g, "aten::mul.Tensor", VALS(NV(prev), NV(y), cfx_int(2), NV(prev)), 4);
            break;
        case 2:
            n = call(g, "aten::relu", VALS(NV(prev)), 1);
            break;
        case 3: /* a string after two nodes */
            n = call(g, "aten::div.Tensor_mode", VALS(NV(prev), NV(x), cfx_string("floor")), 3);
            break;
        case 4: /* a list: its nodes are inputs too */
            n = call(g, "aten::cat", VALS(NV(prev), LIST(NV(x), NV(y)), cfx_int(0)), 3);
            break;
        case 5: /* a node of another graph after one of this one (then replaced: lint refuses it) */
            n = call(g, "aten::add.Tensor", VALS(NV(prev), NV(foreign)), 2);
            cr_assert(n);
            cr_expect_eq(cfx_node_num_users(foreign), 1);
            cr_assert_eq(cfx_node_set_args(n, VALS(NV(prev), NV(y)), 2), CFX_OK);
            cr_expect_eq(cfx_node_num_users(foreign), 0);
            break;
        case 6: { /* a NULL node: refused, its name consumed, its record the next node's */
            cfx_node *bad = call(g, "aten::add.Tensor", VALS(NV(prev), NV(x), cfx_node_value(NULL)), 3);
            cr_assert_null(bad);
            n = call(g, "aten::scalar_tensor", VALS(cfx_double(0.5), cfx_none(), cfx_bool(true)), 3);
            break;
        }
        case 7: { /* kwargs, then an explicit name that is the next default one */
            cfx_kwarg kw[] = {KW("alpha", cfx_int(2))};
            n = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op("aten::add.Tensor")),
                   VALS(NV(prev), NV(y)), 2, kw, 1, NULL);
            char nm[32];
            snprintf(nm, sizeof nm, "relu_%d", i / 14 * 2 + 3);
            cr_assert(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_op(test_op("aten::relu")), VALS(NV(n)), 1,
                         NULL, 0, nm));
            break;
        }
        case 8: /* a function target; no args at all */
            n = cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_fn(&cfx_fn_getitem), VALS(NV(prev), cfx_int(0)),
                   2, NULL, 0, NULL);
            cr_assert(call(g, "aten::empty_like_noargs", VALS(cfx_none()), 0));
            break;
        case 9: { /* inserted before the last node, then at the end again */
            cfx_insert_point old = cfx_graph_inserting_before(g, prev);
            cr_assert(call(g, "aten::neg", VALS(NV(x)), 1));
            cfx_graph_set_insert_point(g, old);
            n = call(g, "aten::neg", VALS(NV(prev)), 1);
            break;
        }
        case 10: /* call_method and get_attr: string targets */
            n = cfx_graph_create_node(g, CFX_NODE_CALL_METHOD, cfx_target_str("view"), VALS(NV(prev), cfx_int(-1)), 2, NULL, 0,
                   NULL);
            cr_assert(cfx_graph_create_node(g, CFX_NODE_GET_ATTR, cfx_target_str("weight"), NULL, 0, NULL, 0, NULL));
            break;
        case 11: /* the same node four times, scalar kinds between */
            n = call(g, "aten::where.self",
                     VALS(NV(prev), cfx_dtype_value(CFX_FLOAT64), NV(prev), cfx_device_value(meta_dev), NV(prev),
                          cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT), cfx_layout_value(0), NV(prev)),
                     8);
            break;
        case 12: /* many args: runs that need a new block of use records */
            n = call(g, "aten::stack_many",
                     VALS(NV(prev), NV(x), NV(y), cfx_int(1), cfx_int(2), cfx_int(3), cfx_int(4), cfx_int(5),
                          cfx_int(6), cfx_int(7), cfx_int(8), cfx_int(9), cfx_int(10), cfx_int(11)),
                     14);
            break;
        default:
            n = call(g, "aten::sigmoid", VALS(NV(prev)), 1);
            break;
        }
        cr_assert(n, "step %d: %s", i, cfx_error_message());
        /* meta as the tracer sets it: two sites, two shapes */
        cr_assert_eq(cfx_node_set_result_meta(n, i % 2 ? &s1 : &s2, i % 3 ? &t2 : &t3, i % 5 ? &meta_dev : NULL,
                                              false),
                     CFX_OK);
        prev = n;
    }
    cr_assert(cfx_graph_create_node(g, CFX_NODE_OUTPUT, cfx_target_str("output"), VALS(NV(prev)), 1, NULL, 0, NULL));
    return g;
}

Test(ir_graph, mixed_script)
{
    cfx_graph *other = cfx_graph_new();
    cfx_graph *g = script(other);
    cr_expect_eq(cfx_graph_lint(g), CFX_OK, "%s", cfx_error_message());
    expect_links_consistent(g);
    cr_expect_gt(cfx_graph_num_created(g), 900);
    /* every node's meta is what was set for it */
    int with_site = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n)) {
        const cfx_site *s = cfx_node_stack_trace(n);
        if (!s)
            continue;
        with_site++;
        cr_expect_str_eq(s->file, "model.c");
        cr_expect(cfx_node_tensor_meta(n));
    }
    cr_expect_geq(with_site, 700);
    /* names: unique, as lint checks when some were set by hand; here the name space made them */
    char *text = cfx_graph_to_string(g);
    cr_expect(strstr(text, "%relu_3 : "), "the explicit name that was the next default one");
    free(text);
    cfx_graph_free(g);
    cfx_graph_free(other);
}

/* The first node of a graph (nothing to link after) and a graph whose last node was erased. */
Test(ir_graph, first_node_and_erased_tail)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *a = call(g, "aten::ones", VALS(cfx_int(3)), 1);
    cfx_node *b = call(g, "aten::relu", VALS(NV(a)), 1);
    cfx_node *c = call(g, "aten::relu", VALS(NV(b)), 1);
    cr_assert_eq(cfx_graph_erase_node(g, c), CFX_OK);
    cfx_node *d = call(g, "aten::relu", VALS(NV(b), NV(a)), 2);
    cfx_node *e = call(g, "aten::relu", VALS(NV(a)), 1);
    cr_assert(d && e);
    cr_expect_eq(cfx_graph_first(g), a);
    cr_expect_eq(cfx_graph_last(g), e);
    cr_expect_eq(cfx_node_prev(d), b);
    cr_expect(cfx_node_name_is(d, "relu_2"));
    cr_expect(cfx_node_name_is(e, "relu_3"));
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    expect_links_consistent(g);
    cfx_graph_free(g);
}

/* A target without a kind is refused with a message, whatever the target table holds; so are
 * other malformed targets. */
Test(ir_graph, target_without_kind)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_target none = {CFX_TARGET_NONE, {.op = NULL}};
    for (int round = 0; round < 2; round++) {
        cfx_error_clear();
        cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, none, VALS(NV(x)), 1, NULL, 0, NULL));
        cr_expect_str_eq(cfx_error_message(), "node target has no kind");
        cfx_error_clear();
        cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, (cfx_target){99, {.op = NULL}}, NULL, 0,
                                             NULL, 0, NULL));
        cr_expect_str_eq(cfx_error_message(), "node target has no kind");
        /* fill the table for the second round */
        for (int i = 0; i < 40; i++) {
            char qn[32];
            snprintf(qn, sizeof qn, "aten::op%d", i);
            cr_assert(OP(g, qn, NV(x)));
        }
    }
    cfx_error_clear();
    cr_expect_null(cfx_graph_create_node(g, CFX_NODE_CALL_FUNCTION, cfx_target_str("relu"), NULL, 0, NULL, 0, NULL));
    cr_expect(cfx_error_message() && strstr(cfx_error_message(), "but a Callable is expected"));
    cfx_error_clear();
    cr_expect_eq(cfx_graph_lint(g), CFX_OK);
    cr_expect_eq(cfx_node_num_users(x), 80);
    cfx_graph_free(g);
}

/* Nodes made at the end, before and after other nodes, into a list emptied by erasing and
 * filled again, across node blocks: order and links as a model says. */
Test(ir_graph, insertion_points_and_emptied_list)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *nodes[200];
    for (int round = 0; round < 3; round++) {
        int n = 0;
        for (int i = 0; i < 150; i++) {
            cfx_value a[2] = {n ? NV(nodes[n - 1]) : cfx_int(i), cfx_int(i)};
            cfx_node *x = call(g, i % 2 ? "aten::add.Tensor" : "aten::relu", a, 2);
            cr_assert(x);
            nodes[n++] = x;
        }
        cfx_insert_point old = cfx_graph_inserting_before(g, nodes[n / 2]);
        cfx_node *before = call(g, "aten::relu", VALS(cfx_int(1)), 1);
        cfx_graph_inserting_after(g, nodes[n / 3]);
        cfx_node *after = call(g, "aten::relu", VALS(cfx_int(2)), 1);
        cfx_graph_set_insert_point(g, old);
        cfx_node *end = call(g, "aten::relu", VALS(NV(before)), 1);
        cr_expect_eq(cfx_node_next(before), nodes[n / 2]);
        cr_expect_eq(cfx_node_prev(after), nodes[n / 3]);
        cr_expect_eq(cfx_graph_last(g), end);
        cr_expect_eq(cfx_graph_num_nodes(g), 153u);
        cr_expect_eq(cfx_graph_lint(g), CFX_OK);
        expect_links_consistent(g);
        /* empty the list (users first) */
        for (cfx_node *x = cfx_graph_last(g); x; x = cfx_graph_last(g))
            cr_assert_eq(cfx_graph_erase_node(g, x), CFX_OK);
        cr_expect_eq(cfx_graph_num_nodes(g), 0u);
        cr_expect_null(cfx_graph_first(g));
    }
    cfx_node *x = call(g, "aten::relu", VALS(cfx_int(3)), 1);
    cr_expect_eq(cfx_graph_first(g), x);
    cr_expect_eq(cfx_graph_last(g), x);
    cfx_graph_free(g);
}
