/* test_keys.c - dispatch keys, key sets and the thread-local sets against PyTorch 2.13.
 *
 * Golden data: tests/data/keys_{names,parse,sets}.txt, written by tools/interop/gen_keys.py.
 * Keys travel there as 2.13's enum values, which cfx's enum equals (keys.h), so every value is
 * used as it is. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/keys.h"
#include "tests/test_util.h"

static char *print_ks(cfx_keyset s)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_keyset_print(s, &b);
    return cfx_buf_take(&b);
}

static void expect_print(cfx_keyset s, const char *want, const char *what)
{
    char *got = print_ks(s);
    cr_assert_str_eq(got, want, "%s", what);
    free(got);
}

/* ------------------------------------------------------------ golden files */

typedef struct golden {
    char *text;
    char **lines;
    int n;
} golden;

static golden load(const char *path)
{
    golden g = {0};
    g.text = read_golden(path);
    cr_assert(g.text, "cannot open %s, or it has no golden header (run from the repo root)", path);
    size_t n;
    g.lines = split_lines(g.text, &n);
    cr_assert(g.lines);
    g.n = (int)n;
    return g;
}

static void unload(golden *g)
{
    free(g->lines);
    free(g->text);
}

/* Splits a line in place on tabs; returns the number of fields. */
static int fields(char *line, char **out, int cap)
{
    int n = 0;
    while (n < cap) {
        out[n++] = line;
        char *t = strchr(line, '\t');
        if (!t)
            break;
        *t = 0;
        line = t + 1;
    }
    return n;
}

/* "3,45,103" -> the union of their key sets. */
static cfx_keyset set_of_list(const char *list)
{
    cfx_keyset s = cfx_keyset_empty();
    if (strcmp(list, "-") == 0)
        return s;
    for (const char *p = list; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        s = cfx_keyset_add(s, (cfx_dispatch_key)v);
        p = *end == ',' ? end + 1 : end;
    }
    return s;
}

/* Runs fn on every line of keys_sets.txt whose kind matches; returns how many. */
typedef void (*row_fn)(char **f, int nf);
static int each_row(const char *kind, row_fn fn)
{
    golden g = load("tests/data/keys_sets.txt");
    int count = 0;
    for (int i = 0; i < g.n; i++) {
        char *f[6];
        char *line = g.lines[i];
        size_t kl = strlen(kind);
        if (strncmp(line, kind, kl) != 0 || line[kl] != '\t')
            continue;
        int nf = fields(line, f, 6);
        fn(f, nf);
        count++;
    }
    unload(&g);
    return count;
}

/* ------------------------------------------------------------ names and parsing */

Test(keys, names_match_toString)
{
    golden g = load("tests/data/keys_names.txt");
    cr_assert_eq(g.n, CFX_KEY_COUNT + 4); /* every key and four values past the last */
    for (int i = 0; i < g.n; i++) {
        char *f[2];
        cr_assert_eq(fields(g.lines[i], f, 2), 2);
        int v = atoi(f[0]);
        cr_assert_eq(v, i);
        cr_assert_str_eq(cfx_key_name((cfx_dispatch_key)v), f[1], "toString(%d)", v);
    }
    unload(&g);
    cr_assert_str_eq(cfx_key_name((cfx_dispatch_key)-1), "UnknownUnknown");
}

Test(keys, parse_accepts_what_parseDispatchKey_accepts)
{
    golden g = load("tests/data/keys_parse.txt");
    int accepted = 0;
    cr_assert_gt(g.n, 160);
    for (int i = 0; i < g.n; i++) {
        char *f[2];
        cr_assert_eq(fields(g.lines[i], f, 2), 2);
        int v = atoi(f[1]);
        cfx_dispatch_key k = CFX_KEY_COUNT;
        bool ok = cfx_key_parse(f[0], &k);
        if (v < 0) {
            cr_assert_not(ok, "'%s' must not parse", f[0]);
        } else {
            cr_assert(ok, "'%s' must parse", f[0]);
            cr_assert_eq(k, (cfx_dispatch_key)v, "'%s'", f[0]);
            accepted++;
        }
    }
    unload(&g);
    cr_assert_eq(accepted, 107); /* the size of 2.13's key_map */
    cr_assert_not(cfx_key_parse(NULL, NULL));
}

/* ------------------------------------------------------------ printing, sets */

static void check_tensor(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    cfx_backend b = strcmp(f[1], "cpu") == 0 ? CFX_BACKEND_CPU : CFX_BACKEND_META;
    expect_print(cfx_keyset_for_tensor(b), f[2], f[1]);
}

Test(keys, tensor_key_sets)
{
    cr_assert_eq(each_row("tensor", check_tensor), 2);
}

/* Other backends cannot be built by the oracle here (no devices); these follow 2.13's
 * getAutogradRelatedKeySetFromBackend / getAutocastRelatedKeySetFromBackend in
 * c10/core/DispatchKeySet.h: HIP and VE have no Autograd key of their own, XLA has its own
 * Autocast key (1.13 used AutocastCUDA), Meta, Lazy and HIP have none. */
Test(keys, tensor_key_sets_other_backends)
{
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_CUDA),
                 "DispatchKeySet(CUDA, ADInplaceOrView, AutogradCUDA, AutocastCUDA)", "cuda");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_XLA),
                 "DispatchKeySet(XLA, ADInplaceOrView, AutogradXLA, AutocastXLA)", "xla");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_MTIA),
                 "DispatchKeySet(MTIA, ADInplaceOrView, AutogradMTIA, AutocastMTIA)", "mtia");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_PRIVATEUSE1),
                 "DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1, AutocastPrivateUse1)", "pu1");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_PRIVATEUSE2),
                 "DispatchKeySet(PrivateUse2, ADInplaceOrView, AutogradPrivateUse2)", "pu2");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_XPU),
                 "DispatchKeySet(XPU, ADInplaceOrView, AutogradXPU, AutocastXPU)", "xpu");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_HIP),
                 "DispatchKeySet(HIP, ADInplaceOrView, AutogradOther)", "hip");
    expect_print(cfx_keyset_for_tensor(CFX_BACKEND_LAZY),
                 "DispatchKeySet(Lazy, ADInplaceOrView, AutogradLazy)", "lazy");
    cr_assert(cfx_keyset_is_empty(cfx_keyset_for_tensor(CFX_BACKEND_INVALID)));
    cr_assert_eq(cfx_key_autograd_from_backend(CFX_BACKEND_CPU), CFX_KEY_AutogradCPU);
    cr_assert_eq(cfx_key_autograd_from_backend(CFX_BACKEND_PRIVATEUSE3), CFX_KEY_AutogradPrivateUse3);
    cr_assert_eq(cfx_key_autograd_from_backend(CFX_BACKEND_VE), CFX_KEY_AutogradOther);
    cr_assert_eq(cfx_key_autograd_from_backend(CFX_BACKEND_INVALID), CFX_KEY_AutogradOther);
}

static void check_single(char **f, int nf)
{
    cr_assert_eq(nf, 4);
    int v = atoi(f[1]);
    cfx_keyset s = cfx_keyset_of((cfx_dispatch_key)v);
    expect_print(s, f[2], f[1]);
    cr_assert_eq(cfx_keyset_highest_priority(s), (cfx_dispatch_key)atoi(f[3]), "highest of {%d}", v);
}

Test(keys, single_key_sets)
{
    cr_assert_eq(each_row("single", check_single), CFX_KEY_COUNT);
}

static void check_full_after(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    expect_print(cfx_keyset_full_after((cfx_dispatch_key)atoi(f[1])), f[2], f[1]);
}

Test(keys, full_after)
{
    cr_assert_eq(each_row("full_after", check_full_after), CFX_KEY_COUNT);
    /* all backend bits below ADInplaceOrView; only functionality bits are ordered */
    cfx_keyset fa = cfx_keyset_full_after(CFX_KEY_ADInplaceOrView);
    cr_assert_eq(fa.repr & 0xffff, 0xffff);
    cr_assert(cfx_keyset_has(fa, CFX_KEY_ZeroTensor));
    cr_assert_not(cfx_keyset_has(fa, CFX_KEY_ADInplaceOrView));
    cr_assert(cfx_keyset_has(fa, CFX_KEY_PythonDispatcher));
    cr_assert_not(cfx_keyset_has(fa, CFX_KEY_PreDispatch));
    /* a per-backend runtime key cuts at its functionality */
    cr_assert(cfx_keyset_eq(cfx_keyset_full_after(CFX_KEY_AutogradMeta),
                            cfx_keyset_full_after(CFX_KEY_AutogradFunctionality)));
    cr_assert_eq(cfx_keyset_full().repr, (1ull << 62) - 1);
}

/* The constant forms equal the functions they stand for. */
Test(keys, constant_forms)
{
    for (int k = 1; k < CFX_KEY_EndOfFunctionalityKeys; k++) {
        cr_expect_eq(CFX_KEYS_FULL_AFTER_FUNCTIONALITY(k).repr, cfx_keyset_full_after((cfx_dispatch_key)k).repr,
                     "%s", cfx_key_name((cfx_dispatch_key)k));
        cr_expect_eq(CFX_KEYS_FUNCTIONALITY_BIT(k), cfx_keyset_of((cfx_dispatch_key)k).repr);
    }
    cr_expect_eq(CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Dense) | CFX_KEYS_BACKEND_BIT(CFX_BACKEND_META),
                 cfx_keyset_of(CFX_KEY_Meta).repr);
    cr_expect_eq(CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Dense) | CFX_KEYS_BACKEND_BIT(CFX_BACKEND_CPU),
                 cfx_keyset_of(CFX_KEY_CPU).repr);
}

static void check_tls(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    cfx_local_keys d = cfx_local_keys_get();
    cfx_keyset autograd = cfx_keyset_add(
        cfx_keyset_add(cfx_keyset_of(CFX_KEY_AutogradFunctionality), CFX_KEY_AutogradOther),
        CFX_KEY_AutogradNestedTensor);
    if (strcmp(f[1], "include") == 0)
        expect_print(d.included, f[2], f[1]);
    else if (strcmp(f[1], "exclude") == 0)
        expect_print(d.excluded, f[2], f[1]);
    else if (strcmp(f[1], "inference_include") == 0) /* c10::InferenceMode */
        expect_print(cfx_keyset_remove(d.included, CFX_KEY_ADInplaceOrView), f[2], f[1]);
    else if (strcmp(f[1], "inference_exclude") == 0) /* AutogradFunctionality prints nothing */
        expect_print(cfx_keyset_or(d.excluded, autograd), f[2], f[1]);
    else if (strcmp(f[1], "autocast_cpu_exclude") == 0)
        expect_print(cfx_keyset_remove(d.excluded, CFX_KEY_AutocastCPU), f[2], f[1]);
    else
        cr_assert_fail("unknown tls row %s", f[1]);
}

static void *thread_local_keys(void *out)
{
    *(cfx_local_keys *)out = cfx_local_keys_get();
    return NULL;
}

Test(keys, default_tls)
{
    cr_assert_eq(each_row("tls", check_tls), 5);
    /* a thread that never touched its sets has the defaults too */
    cfx_local_keys k;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, thread_local_keys, &k), 0);
    pthread_join(th, NULL);
    cr_assert_eq(k.included.repr, CFX_KEYS_DEFAULT_INCLUDED);
    cr_assert_eq(k.excluded.repr, CFX_KEYS_DEFAULT_EXCLUDED);
}

static void check_from_ag(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    expect_print(cfx_keyset_backend_from_autograd((cfx_dispatch_key)atoi(f[1])), f[2], f[1]);
}

static void check_agother(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    expect_print(cfx_keyset_backend_from_autograd(CFX_KEY_AutogradOther), f[2], "agother");
}

Test(keys, backend_from_autograd)
{
    cr_assert_eq(each_row("from_ag", check_from_ag), CFX_KEY_COUNT);
    cr_assert_eq(each_row("agother", check_agother), 1);
}

static void check_combo(char **f, int nf)
{
    cr_assert_eq(nf, 4);
    cfx_keyset s = set_of_list(f[1]);
    expect_print(s, f[2], f[1]);
    cfx_dispatch_key h = cfx_keyset_highest_priority(s);
    cr_assert_eq(h, (cfx_dispatch_key)atoi(f[3]), "highest of %s", f[1]);
    /* the slot the dispatcher picks is the highest key's slot */
    if (cfx_key_is_runtime(h))
        cr_assert_eq(cfx_keyset_table_index(s), cfx_key_table_index(h), "%s", f[1]);
}

static void split_pair(char *arg, cfx_keyset *a, cfx_keyset *b)
{
    char *semi = strchr(arg, ';');
    cr_assert(semi);
    *semi = 0;
    *a = set_of_list(arg);
    *b = set_of_list(semi + 1);
}

static void check_minus(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    cfx_keyset a, b;
    split_pair(f[1], &a, &b);
    expect_print(cfx_keyset_minus(a, b), f[2], "minus");
}

static void check_and(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    cfx_keyset a, b;
    split_pair(f[1], &a, &b);
    expect_print(cfx_keyset_and(a, b), f[2], "and");
}

static void check_has(char **f, int nf)
{
    cr_assert_eq(nf, 4);
    bool want = atoi(f[3]) != 0;
    cr_assert_eq(cfx_keyset_has(set_of_list(f[1]), (cfx_dispatch_key)atoi(f[2])), want, "%s has %s", f[1], f[2]);
}

Test(keys, random_set_algebra)
{
    cr_assert_eq(each_row("combo", check_combo), 300);
    cr_assert_eq(each_row("minus", check_minus), 200);
    cr_assert_eq(each_row("and", check_and), 200);
    cr_assert_eq(each_row("has", check_has), 300);
}

/* ------------------------------------------------------------ alias keys */

static void check_in_alias(char **f, int nf)
{
    cr_assert_eq(nf, 4);
    cfx_dispatch_key alias = (cfx_dispatch_key)atoi(f[1]), k = (cfx_dispatch_key)atoi(f[2]);
    cr_assert_eq(cfx_key_in_expansion(alias, k), atoi(f[3]) != 0, "%s in %s", cfx_key_name(k),
                 cfx_key_name(alias));
}

static void check_alias_rows(char **f, int nf)
{
    cr_assert_eq(nf, 3);
    cfx_dispatch_key alias = (cfx_dispatch_key)atoi(f[1]);
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    int n = cfx_key_expand(alias, keys, CFX_NUM_RUNTIME_ENTRIES);
    /* The Undefined row is the caller's (c10's updateDispatchTable_ adds it for the three
     * Composite aliases other than CompositeImplicitAutogradNestedTensor). */
    bool undefined_row = strncmp(f[2], "Undefined,", 10) == 0;
    cr_assert_eq(undefined_row, alias == CFX_KEY_CompositeImplicitAutograd ||
                                    alias == CFX_KEY_CompositeExplicitAutograd ||
                                    alias == CFX_KEY_CompositeExplicitAutogradNonFunctional);
    cfx_buf b;
    cfx_buf_init(&b);
    if (undefined_row)
        cfx_buf_puts(&b, "Undefined,");
    for (int i = 0; i < n; i++) {
        cr_assert(cfx_key_is_runtime(keys[i]));
        cr_assert(cfx_key_in_expansion(alias, keys[i]));
        cfx_buf_printf(&b, "%s%s", i ? "," : "", cfx_key_name(keys[i]));
    }
    char *got = cfx_buf_take(&b);
    cr_assert_str_eq(got, f[2], "rows of %s", cfx_key_name(alias));
    free(got);
}

Test(keys, alias_expansion)
{
    enum { N_ALIASES = CFX_KEY_COUNT - CFX_KEY_Autograd };
    cr_assert_eq(each_row("in_alias", check_in_alias), N_ALIASES * (CFX_KEY_COUNT - 1));
    cr_assert_eq(each_row("alias_rows", check_alias_rows), N_ALIASES);
    /* row counts (runtime keys, without the Undefined row) */
    static const struct {
        cfx_dispatch_key alias;
        int n;
    } counts[] = {
        {CFX_KEY_Autograd, 18},
        {CFX_KEY_CompositeImplicitAutograd, 103},
        {CFX_KEY_FuncTorchBatchedDecomposition, 1},
        {CFX_KEY_CompositeImplicitAutogradNestedTensor, 17},
        {CFX_KEY_CompositeExplicitAutograd, 69},
        {CFX_KEY_CompositeExplicitAutogradNonFunctional, 47},
    };
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        cr_assert_eq(cfx_key_expand(counts[i].alias, keys, CFX_NUM_RUNTIME_ENTRIES), counts[i].n);
    /* PreDispatch and Functionalize are in no alias (some 2.x releases had Functionalize in
     * CompositeImplicitAutograd); a plain key expands to itself */
    for (cfx_dispatch_key a = CFX_KEY_Autograd; a <= CFX_KEY_CompositeExplicitAutogradNonFunctional; a++) {
        cr_assert_not(cfx_key_in_expansion(a, CFX_KEY_PreDispatch));
        cr_assert_not(cfx_key_in_expansion(a, CFX_KEY_Functionalize));
    }
    cr_assert_eq(cfx_key_expand(CFX_KEY_AutogradMeta, keys, 4), 1);
    cr_assert_eq(keys[0], CFX_KEY_AutogradMeta);
    cr_assert_eq(cfx_key_expand(CFX_KEY_Undefined, keys, 4), 0);
    cr_assert_not(cfx_key_in_expansion(CFX_KEY_CompositeImplicitAutograd, CFX_KEY_Undefined));
    /* truncation: writes at most cap */
    cr_assert_eq(cfx_key_expand(CFX_KEY_Autograd, keys, 3), 3);
    cr_assert_eq(keys[0], CFX_KEY_AutogradOther);
    cr_assert_eq(keys[1], CFX_KEY_AutogradCPU);
    cr_assert_eq(keys[2], CFX_KEY_AutogradCUDA);
}

/* ------------------------------------------------------------ table index */

Test(keys, table_index_slots)
{
    /* c10's offsetsAndMasks in 2.13: Dense, Quantized, Sparse, SparseCsr, NestedTensor and
     * AutogradFunctionality take 16 slots each, in backend order (Meta last) */
    static const struct {
        cfx_dispatch_key k;
        int slot;
    } slots[] = {
        {CFX_KEY_Undefined, 0}, {CFX_KEY_CPU, 1}, {CFX_KEY_PrivateUse3, 15}, {CFX_KEY_Meta, 16},
        {CFX_KEY_FPGA, 17}, {CFX_KEY_QuantizedCPU, 20}, {CFX_KEY_QuantizedMeta, 35},
        {CFX_KEY_MkldnnCPU, 37}, {CFX_KEY_SparseCPU, 38}, {CFX_KEY_SparseCsrCPU, 54},
        {CFX_KEY_NestedTensorCPU, 70}, {CFX_KEY_NestedTensorMeta, 85}, {CFX_KEY_BackendSelect, 86},
        {CFX_KEY_Fake, 87}, {CFX_KEY_Python, 88}, {CFX_KEY_Functionalize, 90},
        {CFX_KEY_ADInplaceOrView, 94}, {CFX_KEY_AutogradOther, 95}, {CFX_KEY_AutogradCPU, 96},
        {CFX_KEY_AutogradMeta, 111}, {CFX_KEY_AutogradNestedTensor, 112}, {CFX_KEY_Tracer, 113},
        {CFX_KEY_AutocastCPU, 114}, {CFX_KEY_AutocastCUDA, 122}, {CFX_KEY_PythonTLSSnapshot, 131},
        {CFX_KEY_PreDispatch, 135}, {CFX_KEY_PythonDispatcher, 136},
    };
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        cr_assert_eq(cfx_key_table_index(slots[i].k), slots[i].slot, "%s", cfx_key_name(slots[i].k));
        cr_assert_eq(cfx_keyset_table_index(cfx_keyset_of(slots[i].k)), slots[i].slot);
    }
    cr_assert_eq(cfx_key_table_index(CFX_KEY_CompositeExplicitAutograd), -1);
    cr_assert_eq(cfx_keyset_table_index(cfx_keyset_empty()), 0);
    /* backend bits alone: Undefined's slot */
    cr_assert_eq(cfx_keyset_table_index((cfx_keyset){0xffff}), 0);
    /* several backends: the highest backend bit picks the instance */
    cfx_keyset cpu_cuda = cfx_keyset_add(cfx_keyset_of(CFX_KEY_CPU), CFX_KEY_CUDA);
    cr_assert_eq(cfx_keyset_table_index(cpu_cuda), 2);
}

/* The runtime keys are exactly the table slots, one each. */
Test(keys, table_index_is_a_bijection)
{
    int owner[CFX_NUM_RUNTIME_ENTRIES];
    for (int i = 0; i < CFX_NUM_RUNTIME_ENTRIES; i++)
        owner[i] = -1;
    int runtime = 0;
    for (int k = 0; k < CFX_KEY_COUNT; k++) {
        if (!cfx_key_is_runtime((cfx_dispatch_key)k))
            continue;
        runtime++;
        int slot = cfx_key_table_index((cfx_dispatch_key)k);
        cr_assert(slot >= 0 && slot < CFX_NUM_RUNTIME_ENTRIES, "%s", cfx_key_name((cfx_dispatch_key)k));
        cr_assert_eq(owner[slot], -1, "slot %d twice", slot);
        owner[slot] = k;
        /* and the set of the key dispatches to the key */
        if (k != CFX_KEY_Undefined)
            cr_assert_eq((int)cfx_keyset_highest_priority(cfx_keyset_of((cfx_dispatch_key)k)), k);
    }
    cr_assert_eq(runtime, CFX_NUM_RUNTIME_ENTRIES);
    cr_assert_eq(CFX_NUM_FUNCTIONALITY_KEYS, 47);
    cr_assert_eq(CFX_NUM_RUNTIME_ENTRIES, 137);
}

/* The closed-form table equals c10's initializeFunctionalityOffsetsAndMasks loop: a
 * functionality's set with no backend bit indexes its offset, and a backend bit moves the
 * index only for per-backend functionalities (by the backend's index). */
Test(keys, offsets_match_c10_loop)
{
    int offset = 0, mask = 0;
    cfx_keyset cuda = cfx_keyset_of(CFX_KEY_CUDA);
    cfx_keyset backend_bits = cfx_keyset_minus(cuda, cfx_keyset_of(CFX_KEY_Dense)); /* the CUDA bit */
    for (int f = 0; f < CFX_NUM_FUNCTIONALITY_KEYS; f++) {
        if (f > 0) {
            offset += mask == 0 ? 1 : CFX_NUM_BACKENDS;
            mask = cfx_key_is_per_backend_functionality((cfx_dispatch_key)f) ? 0xffff : 0;
        }
        if (f == 0)
            continue; /* Undefined has no bit */
        cfx_keyset s = {CFX_KEYS_FUNCTIONALITY_BIT(f)};
        cr_assert_eq(cfx_keyset_table_index(s), offset, "f=%d", f);
        cr_assert_eq(cfx_keyset_table_index(cfx_keyset_or(s, backend_bits)), offset + (mask ? 1 : 0), "f=%d", f);
    }
    cr_assert_eq(offset, CFX_NUM_RUNTIME_ENTRIES - 1);
}

/* ------------------------------------------------------------ set semantics */

Test(keys, highest_priority)
{
    cfx_keyset s = cfx_keyset_empty();
    cr_assert_eq(cfx_keyset_highest_priority(s), CFX_KEY_Undefined);
    cr_assert_eq(cfx_keyset_highest_functionality(s), CFX_KEY_Undefined);
    cr_assert_eq(cfx_keyset_highest_backend(s), CFX_BACKEND_INVALID);
    s = cfx_keyset_add(cfx_keyset_of(CFX_KEY_CPU), CFX_KEY_CUDA); /* numerically highest backend */
    cr_assert_eq(cfx_keyset_highest_priority(s), CFX_KEY_CUDA);
    cr_assert_eq(cfx_keyset_highest_backend(s), CFX_BACKEND_CUDA);
    s = cfx_keyset_for_tensor(CFX_BACKEND_CPU);
    cr_assert_eq(cfx_keyset_highest_priority(s), CFX_KEY_AutocastCPU);
    cr_assert_eq(cfx_keyset_highest_functionality(s), CFX_KEY_AutocastCPU);
    s = cfx_keyset_minus(s, cfx_local_keys_get().excluded);
    cr_assert_eq(cfx_keyset_highest_priority(s), CFX_KEY_AutogradCPU);
    cr_assert_eq(cfx_keyset_highest_functionality(s), CFX_KEY_AutogradFunctionality);
    /* a per-backend functionality without a backend bit: its block marker, as in c10 */
    cr_assert_eq(cfx_keyset_highest_priority(cfx_keyset_of(CFX_KEY_Dense)), CFX_KEY_StartOfDenseBackends);
    cr_assert_eq(cfx_keyset_highest_priority(cfx_keyset_of(CFX_KEY_PythonDispatcher)),
                 CFX_KEY_PythonDispatcher);
}

Test(keys, minus_keeps_backend_bits)
{
    /* oracle: DispatchKeySet(AutogradCPU) - DispatchKeySet(CPU) prints DispatchKeySet(AutogradCPU) */
    cfx_keyset s = cfx_keyset_minus(cfx_keyset_of(CFX_KEY_AutogradCPU), cfx_keyset_of(CFX_KEY_CPU));
    expect_print(s, "DispatchKeySet(AutogradCPU)", "AutogradCPU - CPU");
    cr_assert(cfx_keyset_has(s, CFX_KEY_AutogradCPU));
    cr_assert_not(cfx_keyset_has(s, CFX_KEY_CPU));
    cfx_keyset t = cfx_keyset_minus(cfx_keyset_of(CFX_KEY_CPU), cfx_keyset_of(CFX_KEY_CPU));
    cr_assert_eq(t.repr, 1); /* CPU bit survives */
    expect_print(t, "DispatchKeySet()", "backend bit alone");
}

Test(keys, remove_clears_only_the_functionality_bit)
{
    cfx_keyset s = cfx_keyset_for_tensor(CFX_BACKEND_META);
    cfx_keyset r = cfx_keyset_remove(s, CFX_KEY_AutogradMeta);
    cr_assert_eq(r.repr, s.repr & ~CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_AutogradFunctionality));
    cr_assert(cfx_keyset_has(r, CFX_KEY_Meta));
    cr_assert_not(cfx_keyset_has(r, CFX_KEY_AutogradMeta));
    expect_print(r, "DispatchKeySet(Meta, ADInplaceOrView)", "remove");
    r = cfx_keyset_remove(cfx_keyset_of(CFX_KEY_Meta), CFX_KEY_Meta);
    cr_assert_eq(r.repr, 1ull << (CFX_BACKEND_META - 1));
}

Test(keys, has_needs_both_bits)
{
    cfx_keyset ag = cfx_keyset_of(CFX_KEY_AutogradFunctionality);
    cr_assert_not(cfx_keyset_has(ag, CFX_KEY_AutogradCPU));
    cr_assert(cfx_keyset_has(ag, CFX_KEY_AutogradFunctionality));
    cr_assert_not(cfx_keyset_has((cfx_keyset){1}, CFX_KEY_AutogradCPU)); /* CPU bit alone */
    cr_assert(cfx_keyset_has((cfx_keyset){ag.repr | 1}, CFX_KEY_AutogradCPU));
    /* the shared-backend-bit consequence: {AutogradCUDA, CPU} "has" AutogradCPU too */
    cfx_keyset mixed = cfx_keyset_add(cfx_keyset_of(CFX_KEY_AutogradCUDA), CFX_KEY_CPU);
    cr_assert(cfx_keyset_has(mixed, CFX_KEY_AutogradCPU));
    cr_assert(cfx_keyset_has_any(mixed, cfx_keyset_of(CFX_KEY_Dense)));
    cr_assert_not(cfx_keyset_has_any(mixed, cfx_keyset_of(CFX_KEY_Python)));
}

Test(keys, functionality_bit_without_backend_prints_nothing)
{
    cfx_dispatch_key out[4];
    cfx_keyset s = cfx_keyset_of(CFX_KEY_AutogradFunctionality);
    cr_assert_not(cfx_keyset_is_empty(s));
    cr_assert_eq(cfx_keyset_runtime_keys(s, out, 4), 0);
    expect_print(s, "DispatchKeySet()", "AutogradFunctionality");
    s = cfx_keyset_add(s, CFX_KEY_Tracer);
    expect_print(s, "DispatchKeySet(Tracer)", "AutogradFunctionality + Tracer");
    /* with two backends a per-backend functionality yields both, lower backend first */
    s = cfx_keyset_add(cfx_keyset_of(CFX_KEY_AutogradMeta), CFX_KEY_CUDA);
    expect_print(s, "DispatchKeySet(CUDA, Meta, AutogradCUDA, AutogradMeta)", "cross product");
    cr_assert_eq(cfx_keyset_runtime_keys(s, out, 3), 3);
    cr_assert_eq(out[2], CFX_KEY_AutogradCUDA);
}

Test(keys, key_properties)
{
    cr_assert_eq(cfx_key_to_functionality(CFX_KEY_AutogradCPU), CFX_KEY_AutogradFunctionality);
    cr_assert_eq(cfx_key_to_functionality(CFX_KEY_Meta), CFX_KEY_Dense);
    cr_assert_eq(cfx_key_to_functionality(CFX_KEY_SparseCsrCPU), CFX_KEY_SparseCsr); /* per-backend in 2.x */
    cr_assert_eq(cfx_key_to_functionality(CFX_KEY_StartOfNestedTensorBackends), CFX_KEY_NestedTensor);
    cr_assert_eq(cfx_key_to_functionality(CFX_KEY_AutogradMeta), CFX_KEY_AutogradFunctionality);
    cr_assert_eq(cfx_key_to_functionality(CFX_KEY_Autograd), CFX_KEY_Undefined);
    cr_assert_eq(cfx_key_to_backend(CFX_KEY_AutogradCPU), CFX_BACKEND_CPU);
    cr_assert_eq(cfx_key_to_backend(CFX_KEY_NestedTensorMeta), CFX_BACKEND_META);
    cr_assert_eq(cfx_key_to_backend(CFX_KEY_StartOfSparseBackends), CFX_BACKEND_INVALID);
    cr_assert_eq(cfx_key_to_backend(CFX_KEY_Python), CFX_BACKEND_INVALID);
    cr_assert_eq(cfx_key_for_backend(CFX_KEY_Quantized, CFX_BACKEND_XPU), CFX_KEY_QuantizedXPU);
    cr_assert_eq(cfx_key_for_backend(CFX_KEY_Python, CFX_BACKEND_CPU), CFX_KEY_Undefined);
    cr_assert(cfx_key_is_alias(CFX_KEY_CompositeImplicitAutogradNestedTensor));
    cr_assert_not(cfx_key_is_alias(CFX_KEY_AutogradPrivateUse3));
    cr_assert(cfx_key_is_per_backend_functionality(CFX_KEY_NestedTensor));
    cr_assert(cfx_key_is_per_backend_functionality(CFX_KEY_SparseCsr));
    cr_assert_not(cfx_key_is_per_backend_functionality(CFX_KEY_AutogradNestedTensor));
    cr_assert(cfx_key_is_runtime(CFX_KEY_Undefined));
    cr_assert(cfx_key_is_runtime(CFX_KEY_PreDispatch));
    cr_assert_not(cfx_key_is_runtime(CFX_KEY_Dense));
    cr_assert_not(cfx_key_is_runtime(CFX_KEY_StartOfAutogradFunctionalityBackends));
    cr_assert_not(cfx_key_is_runtime(CFX_KEY_EndOfFunctionalityKeys));
    cr_assert_not(cfx_key_is_runtime(CFX_KEY_Autograd));
    cr_assert(cfx_keyset_is_empty(cfx_keyset_of(CFX_KEY_Autograd)));
    cr_assert(cfx_keyset_is_empty(cfx_keyset_of(CFX_KEY_Undefined)));
}

/* ------------------------------------------------------------ thread-local sets */

Test(keys, local_keys_set_get_and_guards)
{
    cfx_local_keys d = cfx_local_keys_get();
    cr_assert_eq(d.included.repr, CFX_KEYS_DEFAULT_INCLUDED);
    cr_assert_eq(d.excluded.repr, CFX_KEYS_DEFAULT_EXCLUDED);

    cfx_key_guard g1, g2, g3;
    cfx_include_keys_begin(&g1, cfx_keyset_of(CFX_KEY_Python));
    cfx_local_keys in1 = cfx_local_keys_get();
    expect_print(in1.included, "DispatchKeySet(BackendSelect, Python, ADInplaceOrView)", "include");
    cfx_exclude_keys_begin(&g2, cfx_keyset_of(CFX_KEY_AutogradCPU));
    cfx_local_keys in2 = cfx_local_keys_get();
    cr_assert(cfx_keyset_has(in2.excluded, CFX_KEY_AutogradCPU));
    cr_assert_eq(in2.included.repr, in1.included.repr);
    /* a key already there: the guard still restores what it saw */
    cfx_include_keys_begin(&g3, cfx_keyset_of(CFX_KEY_BackendSelect));
    cr_assert_eq(cfx_local_keys_get().included.repr, in1.included.repr);
    /* an unbalanced change inside a scope is undone by the enclosing guard */
    cfx_local_keys_set((cfx_local_keys){cfx_keyset_empty(), cfx_keyset_full()});
    cfx_key_guard_end(&g3);
    cr_assert_eq(cfx_local_keys_get().included.repr, in2.included.repr);
    cr_assert_eq(cfx_local_keys_get().excluded.repr, in2.excluded.repr);
    cfx_key_guard_end(&g2);
    cr_assert_eq(cfx_local_keys_get().excluded.repr, d.excluded.repr);
    cfx_key_guard_end(&g1);
    cfx_local_keys after = cfx_local_keys_get();
    cr_assert_eq(after.included.repr, d.included.repr);
    cr_assert_eq(after.excluded.repr, d.excluded.repr);
    cr_assert_eq(after.included.repr, CFX_KEYS_DEFAULT_INCLUDED); /* back to the defaults */
    cr_assert_eq(after.excluded.repr, CFX_KEYS_DEFAULT_EXCLUDED);

    /* set stores exactly what get returns */
    cfx_local_keys k = {cfx_keyset_of(CFX_KEY_Meta), cfx_keyset_empty()};
    cfx_local_keys_set(k);
    cr_assert_eq(cfx_local_keys_get().included.repr, k.included.repr);
    cr_assert_eq(cfx_local_keys_get().excluded.repr, 0);
    cfx_local_keys_set(d);
}

typedef struct thread_probe {
    pthread_barrier_t *barrier;
    cfx_keyset include;
    cfx_local_keys seen_start, seen_end;
} thread_probe;

static void *thread_main(void *arg)
{
    thread_probe *p = arg;
    p->seen_start = cfx_local_keys_get();
    cfx_key_guard g;
    cfx_include_keys_begin(&g, p->include);
    pthread_barrier_wait(p->barrier); /* both threads hold their guard here */
    p->seen_end = cfx_local_keys_get();
    pthread_barrier_wait(p->barrier);
    cfx_key_guard_end(&g);
    return NULL;
}

Test(keys, threads_have_independent_tls)
{
    cfx_key_guard mine;
    cfx_exclude_keys_begin(&mine, cfx_keyset_of(CFX_KEY_Tracer));
    pthread_barrier_t barrier;
    cr_assert_eq(pthread_barrier_init(&barrier, NULL, 2), 0);
    thread_probe a = {&barrier, cfx_keyset_of(CFX_KEY_Python), {{0}}, {{0}}};
    thread_probe b = {&barrier, cfx_keyset_of(CFX_KEY_Functionalize), {{0}}, {{0}}};
    pthread_t ta, tb;
    cr_assert_eq(pthread_create(&ta, NULL, thread_main, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, thread_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&barrier);
    /* each new thread starts at the defaults, not at this thread's state */
    cr_assert_eq(a.seen_start.included.repr, CFX_KEYS_DEFAULT_INCLUDED);
    cr_assert_eq(a.seen_start.excluded.repr, CFX_KEYS_DEFAULT_EXCLUDED);
    cr_assert_eq(b.seen_start.excluded.repr, CFX_KEYS_DEFAULT_EXCLUDED);
    /* and sees only its own guard while the other's is active */
    expect_print(a.seen_end.included, "DispatchKeySet(BackendSelect, Python, ADInplaceOrView)", "a");
    expect_print(b.seen_end.included, "DispatchKeySet(BackendSelect, Functionalize, ADInplaceOrView)", "b");
    cr_assert(cfx_keyset_has(cfx_local_keys_get().excluded, CFX_KEY_Tracer));
    cr_assert_eq(cfx_local_keys_get().included.repr, CFX_KEYS_DEFAULT_INCLUDED);
    cfx_key_guard_end(&mine);
    cr_assert_eq(cfx_local_keys_get().excluded.repr, CFX_KEYS_DEFAULT_EXCLUDED);
}
