/* test_names.c - FX's name space (ir/names.h) against PyTorch 2.13's _Namespace.create_name.
 *
 * tests/data/ir_names.tsv (tools/interop/gen_fx.py) holds the names torch.fx.graph._Namespace
 * gives for request sequences, each in a fresh name space; the table of spec 1.3 is checked on
 * top. */
#include <criterion/criterion.h>

#include "tests/ir/ir_test_util.h"

static char *name_of(cfx_name n)
{
    char *s = cfx_name_to_string(n);
    cr_assert(s);
    return s;
}

static void expect_create(cfx_names *ns, const char *cand, const char *want)
{
    cfx_name n;
    cr_assert_eq(cfx_names_create(ns, cand, CFX_NAME_FOR_NONE, &n), CFX_OK);
    char *got = name_of(n);
    cr_expect_str_eq(got, want, "create_name(%s): got %s, want %s", cand, got, want);
    cr_expect(cfx_names_is_used(ns, n));
    cr_expect(cfx_names_is_used_str(ns, want));
    free(got);
}

Test(ir_names, golden_table)
{
    char *text = ir_golden("ir_names.tsv");
    cfx_names *ns = NULL;
    int seq = -1, rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *f[3];
        char *p = line;
        for (int i = 0; i < 3; i++) {
            f[i] = p;
            p = strchr(p, '\t');
            if (i < 2) {
                cr_assert(p, "bad row");
                *p++ = '\0';
            }
        }
        int s = atoi(f[0]);
        if (s != seq) {
            cfx_names_free(ns);
            ns = cfx_names_new(NULL);
            cr_assert(ns);
            seq = s;
        }
        expect_create(ns, f[1], f[2]);
        rows++;
    }
    cfx_names_free(ns);
    free(text);
    cr_expect_geq(rows, 90);
}

Test(ir_names, spec_table)
{
    /* spec 1.3's table */
    const char *seqs[][2][6] = {
        {{"add", "add", "add_1", "add_5", "add", NULL}, {"add", "add_1", "add_2", "add_5", "add_6", NULL}},
        {{"sum", "sum", NULL}, {"sum_1", "sum_2", NULL}},
        {{"1abc", "foo.bar", "if", "print", "torch", NULL}, {"_1abc", "foo_bar", "if_1", "print_1", "torch_1", NULL}},
        {{"x_0", "x_0", "x__3", "Tensor", "relu", NULL}, {"x_0", "x_1", "x__3", "Tensor", "relu", NULL}},
    };
    for (size_t s = 0; s < sizeof seqs / sizeof *seqs; s++) {
        cfx_names *ns = cfx_names_new(NULL);
        for (int i = 0; seqs[s][0][i]; i++)
            expect_create(ns, seqs[s][0][i], seqs[s][1][i]);
        cfx_names_free(ns);
    }
}

Test(ir_names, reserved_words)
{
    const char *reserved[] = {"if", "None", "True", "sum", "print", "getattr", "torch", "inf", "nan", "NoneType",
                              "device", "fx_pytree", "pytree", "__name__", "copyright", "ExceptionGroup", "yield"};
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        cr_expect(cfx_name_is_reserved(reserved[i]), "%s should be reserved", reserved[i]);
    const char *free_[] = {"match", "case", "_", "x", "relu", "Tensor", "add", "sum_1", "self"};
    for (size_t i = 0; i < sizeof free_ / sizeof *free_; i++)
        cr_expect(!cfx_name_is_reserved(free_[i]), "%s should not be reserved", free_[i]);

    /* obj decides: a node (obj None) may be named None; a python_code local may not;
     * a builtin may keep its own name */
    cfx_names *ns = cfx_names_new(NULL);
    cfx_name n;
    cr_assert_eq(cfx_names_create(ns, "None", CFX_NAME_FOR_OBJECT, &n), CFX_OK);
    char *s = name_of(n);
    cr_expect_str_eq(s, "None_1");
    free(s);
    cr_assert_eq(cfx_names_create(ns, "getattr", CFX_NAME_FOR_BUILTIN, &n), CFX_OK);
    s = name_of(n);
    cr_expect_str_eq(s, "getattr");
    free(s);
    cr_assert_eq(cfx_names_create(ns, "getattr", CFX_NAME_FOR_OBJECT, &n), CFX_OK);
    s = name_of(n);
    cr_expect_str_eq(s, "getattr_1");
    free(s);
    cr_assert_eq(cfx_names_create(ns, "if", CFX_NAME_FOR_BUILTIN, &n), CFX_OK); /* keyword: never */
    s = name_of(n);
    cr_expect_str_eq(s, "if_1");
    free(s);
    cfx_names_free(ns);
}

Test(ir_names, target_to_str_golden)
{
    char *text = ir_golden("ir_target_to_str.tsv");
    int rows = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        cr_assert(tab);
        *tab = '\0';
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_names_target_to_str(line, &b);
        char *got = cfx_buf_take(&b);
        cr_expect_str_eq(got, tab + 1, "_target_to_str(%s)", line);
        free(got);
        rows++;
    }
    free(text);
    cr_expect_eq(rows, 14);
}

Test(ir_names, interning_and_keys)
{
    cfx_names *ns = cfx_names_new(NULL);
    const char *a = cfx_names_intern(ns, "hello", 5);
    const char *b = cfx_names_intern(ns, "hello world", 5);
    cr_expect_eq(a, b);
    cr_expect_str_eq(a, "hello");
    cr_expect_eq(cfx_istr_len(a), 5);
    cr_expect_eq(cfx_names_find(ns, "hello", 5), a);
    cr_expect_null(cfx_names_find(ns, "nope", 4));
    /* canonical keys: one per spelling */
    cfx_name k1, k2, k3;
    cr_assert_eq(cfx_names_key(ns, "add_12", 6, &k1), CFX_OK);
    cr_expect_eq(k1.suffix, 12);
    cr_expect_str_eq(k1.base, "add");
    cr_assert_eq(cfx_names_key(ns, "add_012", 7, &k2), CFX_OK);
    cr_expect_eq(k2.suffix, CFX_NAME_NO_SUFFIX);
    cr_expect_str_eq(k2.base, "add_012");
    cr_assert_eq(cfx_names_key(ns, "_5", 2, &k3), CFX_OK);
    cr_expect_eq(k3.suffix, CFX_NAME_NO_SUFFIX);
    cr_expect_eq(cfx_name_length(k1), 6);
    char buf[16];
    *cfx_name_write(k1, buf) = '\0';
    cr_expect_str_eq(buf, "add_12");
    cr_expect(!cfx_names_is_used(ns, k1));
    cfx_names_free(ns);
}

Test(ir_names, high_water_counter_scales)
{
    /* a million `add`s: add, add_1, ..., add_999999 - in linear time (bitset, no hashing) */
    cfx_names *ns = cfx_names_new(NULL);
    cfx_name_candidate c;
    cr_assert_eq(cfx_names_prepare(ns, "add", 3, &c), CFX_OK);
    cfx_name n = {NULL, 0};
    for (int i = 0; i < 1000000; i++)
        cr_assert_eq(cfx_names_create_prepared(ns, &c, CFX_NAME_FOR_NONE, &n), CFX_OK);
    cr_expect_eq(n.suffix, 999999);
    /* an explicit far suffix goes to the overflow set and is still honoured; it raises the
     * base's counter (torch.fx 2.13 gives the same three names) */
    expect_create(ns, "add_5000000", "add_5000000");
    expect_create(ns, "add_5000000", "add_5000001");
    expect_create(ns, "add", "add_5000002");
    cfx_names_free(ns);
}

Test(ir_names, fmt_integers)
{
    char buf[32];
    buf[cfx_fmt_u64(0, buf)] = '\0';
    cr_expect_str_eq(buf, "0");
    buf[cfx_fmt_u64(18446744073709551615ull, buf)] = '\0';
    cr_expect_str_eq(buf, "18446744073709551615");
    buf[cfx_fmt_i64(INT64_MIN, buf)] = '\0';
    cr_expect_str_eq(buf, "-9223372036854775808");
    buf[cfx_fmt_i64(-42, buf)] = '\0';
    cr_expect_str_eq(buf, "-42");
}

/* Names in a graph: default names from targets (a numeric suffix, reserved words) and
 * explicit ones, interleaved, are create_name's: the golden's sequence 17 for the targets,
 * and a replay through a name space of their own for the rest. */
Test(ir_names, graph_names_are_create_names)
{
    char *text = ir_golden("ir_names.tsv");
    const char *want[64];
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (line[0] != '#' && t2 && atoi(line) == 17 && n < 64)
            want[n++] = t2 + 1;
    }
    cr_assert_eq(n, 60);
    static const char *const qns[] = {"aten::foo_1", "aten::for", "aten::add.Tensor", "aten::bar_0", "aten::print"};
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    for (int i = 0; i < 60; i++) {
        cfx_node *nd = OP(g, qns[i % 5], NV(x));
        cr_assert(nd);
        char *got = nname(nd);
        cr_expect_str_eq(got, want[i], "node %d: %s, want %s", i, got, want[i]);
        free(got);
    }
    cfx_graph_free(g);
    free(text);

    g = cfx_graph_new();
    cfx_names *ref = cfx_names_new(NULL);
    cfx_name r;
    cr_assert(cfx_graph_placeholder(g, "x"));
    cr_assert_eq(cfx_names_create(ref, "x", CFX_NAME_FOR_NONE, &r), CFX_OK);
    x = cfx_graph_first(g);
    for (int i = 0; i < 300; i++) {
        cfx_node *nd = i % 7 == 3 ? cfx_graph_call_op(g, test_op("aten::add.Tensor"), VALS(NV(x), LIST(cfx_int(1))), 2,
                                                      NULL, 0)
                                  : OP(g, i % 3 ? "aten::add.Tensor" : "aten::mul.Tensor", NV(x));
        cr_assert(nd);
        cr_assert_eq(cfx_names_create(ref, i % 7 == 3 || i % 3 ? "add" : "mul", CFX_NAME_FOR_NONE, &r), CFX_OK);
        char *got = nname(nd), *exp = cfx_name_to_string(r);
        cr_expect_str_eq(got, exp, "step %d", i);
        free(got);
        free(exp);
        if (i % 50 == 49) { /* an explicit name among them */
            char buf[32];
            snprintf(buf, sizeof buf, "add_%d", i + 3);
            cr_assert(op_call(g, "aten::add.Tensor", buf, VALS(NV(x)), 1, NULL, 0));
            cr_assert_eq(cfx_names_create(ref, buf, CFX_NAME_FOR_NONE, &r), CFX_OK);
        }
    }
    cfx_names_free(ref);
    cfx_graph_free(g);
}
