/* test_dispatch_golden.c - cfx's dispatcher against PyTorch 2.13's, text for text.
 *
 * tests/data/dispatch_scenarios.txt (tools/interop/gen_dispatch.py) holds scenarios: lists of
 * registration, dump and call commands, each with what PyTorch 2.13 printed for it (dumpState,
 * dumpComputedTable, dangling impls, warnings, error messages). This file replays every
 * command on cfx with the same file ("/dev/null") and line numbers and compares byte for byte.
 * Criterion runs each scenario in a process of its own, as the generator does, so the
 * once-per-process override warning is seen by each scenario's first override.
 *
 * PyTorch's tables include the backend fallbacks 2.13 registers for itself (Meta, Python,
 * Functionalize, ..., the Autograd keys) and not cfx's defaults (which differ on purpose:
 * fallbacks.c). So before a scenario the test drops cfx's defaults and installs the oracle's
 * exact set, read from the golden's "oracle_fallbacks" table, with the same debug strings.
 * Those a scenario's calls go through behave as 2.13's do (the Autograd and PreDispatch ones
 * redispatch below their key, Meta's fails with 2.13's message); the others get a stand-in
 * that fails if run. Every row of every table then has to match. cfx's own defaults are
 * checked in test_dispatcher.c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/operator_internal.h"
#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/tensor.h"
#include "tests/test_util.h"

#define GOLDEN "tests/data/dispatch_scenarios.txt"

typedef struct command {
    char *cmd, *expected;
} command;

typedef struct scenario {
    char *name;
    command *cmds;
    int n;
} scenario;

static scenario scenarios[64];
static int n_scenarios;
static char *golden_text;

static void load_golden(void)
{
    golden_text = read_golden(GOLDEN);
    cr_assert(golden_text, "cannot open %s, or it has no golden header (run from the repo root)", GOLDEN);
    /* Split into lines in place; a command's output is the lines up to the next "@@@" line,
     * minus the one "\n" the writer added. */
    char *p = golden_text;
    scenario *sc = NULL;
    command *cur = NULL;
    char *out_start = NULL;
    while (*p) {
        char *eol = strchr(p, '\n');
        char *next = eol ? eol + 1 : p + strlen(p);
        if (strncmp(p, "@@@", 3) == 0) {
            if (cur) { /* close the previous output: drop the added "\n" */
                p[-1] = '\0';
                cur->expected = out_start;
                cur = NULL;
            }
            if (eol)
                *eol = '\0';
            if (strncmp(p, "@@@@ scenario ", 14) == 0) {
                cr_assert(n_scenarios < 64);
                sc = &scenarios[n_scenarios++];
                sc->name = p + 14;
                sc->cmds = calloc(200, sizeof(command));
                sc->n = 0;
            } else {
                cr_assert(sc && sc->n < 200);
                cur = &sc->cmds[sc->n++];
                cur->cmd = p + 4;
                out_start = next;
            }
        }
        p = next;
    }
    if (cur) {
        size_t l = strlen(out_start);
        if (l && out_start[l - 1] == '\n')
            out_start[l - 1] = '\0';
        cur->expected = out_start;
    }
}

static void free_golden(void)
{
    for (int i = 0; i < n_scenarios; i++)
        free(scenarios[i].cmds);
    free(golden_text);
    n_scenarios = 0;
}

static scenario *find_scenario(const char *name)
{
    for (int i = 0; i < n_scenarios; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

/* ---- kernels standing in for PyTorch's Python lambdas and impl_t_t ------------------------ */

static int identity_boxed(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks, (void)stack; /* returns its first argument, already at stack[0] */
    return CFX_OK;
}

static cfx_tensor *identity_unboxed(cfx_tensor *x) { return x; }

static int oracle_fallback_standin(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks, (void)stack;
    return cfx_error_set(CFX_ERR, cfx_op_name(op), "stand-in for PyTorch's %s fallback ran", (const char *)ctx);
}

/* VariableFallbackKernel.cpp's autograd fallback and preDispatchFallback: with nothing to
 * record, both call the op again below their key. ctx is that key. */
static int oracle_redispatch_below(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    return cfx_op_redispatch(op, cfx_keyset_and(ks, cfx_keyset_full_after(*(const cfx_dispatch_key *)ctx)), stack);
}

/* MetaFallbackKernel.cpp's metaFallback. */
static int oracle_meta_fallback(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)ks, (void)stack;
    return cfx_error_set(CFX_ERR_NOTIMPL, cfx_op_name(op),
                         "%s: attempted to run this operator with Meta tensors, but there was no fake impl or Meta "
                         "kernel registered. You may have run into this message while using an operator with PT2 "
                         "compilation APIs (torch.compile/torch.export); in order to use this operator with those "
                         "APIs you'll need to add a fake impl. Please see the following for next steps:  "
                         "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html",
                         cfx_op_name(op));
}

static const cfx_dispatch_key autograd_other = CFX_KEY_AutogradOther, pre_dispatch = CFX_KEY_PreDispatch;

/* ---- the interpreter ----------------------------------------------------------------------- */

typedef struct libslot {
    char id[8];
    cfx_library *lib;
    int line;
} libslot;

static libslot libs[32];
static int n_libs;
static cfx_buf out;
static cfx_library *oracle_lib;

static void capture_warning(const char *msg, void *ctx)
{
    (void)ctx;
    if (out.len)
        cfx_buf_putc(&out, '\n');
    cfx_buf_printf(&out, "warning: %s", msg);
}

static libslot *lib_by_id(const char *id)
{
    for (int i = 0; i < n_libs; i++)
        if (strcmp(libs[i].id, id) == 0)
            return &libs[i];
    cr_assert_fail("unknown library %s", id);
    return NULL;
}

static cfx_dispatch_key key_arg(const char *s)
{
    if (strcmp(s, "-") == 0)
        return CFX_KEY_Undefined;
    cfx_dispatch_key k;
    cr_assert(cfx_key_parse(s, &k), "unknown key %s", s);
    return k;
}

/* The key a computed-table row names (toString's inverse: every runtime key, also those
 * parseDispatchKey does not know, such as AutogradMTIA). */
static cfx_dispatch_key key_of_row(const char *name)
{
    for (int k = 0; k < CFX_KEY_COUNT; k++)
        if (cfx_key_is_runtime((cfx_dispatch_key)k) && strcmp(cfx_key_name((cfx_dispatch_key)k), name) == 0)
            return (cfx_dispatch_key)k;
    cr_assert_fail("oracle fallback key %s", name);
    return CFX_KEY_Undefined;
}

static void install_oracle_fallbacks(void)
{
    scenario *sc = find_scenario("oracle_fallbacks");
    cr_assert(sc && sc->n == 1);
    cfx_dispatcher_drop_default_fallbacks();
    oracle_lib = cfx_library_new(CFX_LIB_IMPL, "_", CFX_KEY_Undefined, "/dev/null", 0);
    cr_assert(oracle_lib);
    char *text = strdup(sc->cmds[0].expected);
    int rows = 0;
    for (char *save, *row = strtok_r(text, "\n", &save); row; row = strtok_r(NULL, "\n", &save)) {
        /* "<Key>: [fallthrough ]registered at <file>:<line> [backend fallback]" */
        char *colon = strstr(row, ": ");
        cr_assert(colon);
        *colon = '\0';
        char *rest = colon + 2;
        bool ft = strncmp(rest, "fallthrough ", 12) == 0;
        if (ft)
            rest += 12;
        cr_assert(strncmp(rest, "registered at ", 14) == 0);
        rest += 14;
        char *end = strstr(rest, " [backend fallback]");
        cr_assert(end);
        *end = '\0';
        char *lc = strrchr(rest, ':');
        *lc = '\0';
        cfx_dispatch_key k = key_of_row(row);
        cfx_boxed_fn fn = oracle_fallback_standin;
        void *ctx = (void *)cfx_key_name(k);
        if (cfx_key_in_expansion(CFX_KEY_Autograd, k)) {
            fn = oracle_redispatch_below;
            ctx = (void *)&autograd_other; /* FULL_AFTER of any autograd key is the same */
        } else if (k == CFX_KEY_PreDispatch) {
            fn = oracle_redispatch_below;
            ctx = (void *)&pre_dispatch;
        } else if (k == CFX_KEY_Meta) {
            fn = oracle_meta_fallback;
        }
        cr_assert_eq(cfx_library_fallback_at(oracle_lib, k, ft ? NULL : fn, ctx, rest, atoi(lc + 1)), CFX_OK, "%s",
                     cfx_error_message());
        rows++;
    }
    free(text);
    cr_assert_gt(rows, 20);
}

static cfx_op *op_by_name(const char *name)
{
    cfx_op *op = cfx_op_lookup(name);
    if (op)
        return op;
    cfx_op *dang[256];
    int n = cfx_op_list_dangling(dang, 256);
    for (int i = 0; i < n && i < 256; i++)
        if (strcmp(cfx_op_name(dang[i]), name) == 0)
            return dang[i];
    return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void put_result(int rc)
{
    if (rc == CFX_OK && !cfx_error_occurred())
        return;
    if (out.len)
        cfx_buf_putc(&out, '\n');
    cfx_buf_printf(&out, "error: %s: %s", cfx_error_status() == CFX_ERR_NOTIMPL ? "NotImplementedError" : "RuntimeError",
                   cfx_error_message());
}

/* c10's Dispatcher::redispatchBoxed, which OpOverload.redispatch calls: the slot of ks and its
 * kernel, with no fallthrough mask applied (a fallthrough kernel found there runs and fails). */
static int redispatch_boxed(const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    const cfx_kernel *k = cfx_op_kernel_for(op, ks);
    return cfx_kernel_is_valid(k) ? k->boxed(k->ctx, op, ks, stack) : cfx_dispatch_missing_kernel_error(op, ks);
}

/* call OP ARGS, or with `key` set, redispatch OP KEY ARGS: the call entering at that key. */
static void do_call(const char *name, const char *args, const char *key)
{
    cfx_op *op = cfx_op_find(name);
    cr_assert(op, "no op %s", name);
    int64_t two[1] = {2};
    cfx_value stack[4];
    cfx_tensor *ts[2] = {NULL, NULL};
    int n = 0;
    if (strcmp(args, "meta") == 0 || strcmp(args, "two") == 0 || strcmp(args, "cpu") == 0) {
        int count = strcmp(args, "two") == 0 ? 2 : 1;
        cfx_device d = cfx_device_make(strcmp(args, "cpu") == 0 ? CFX_DEVICE_CPU : CFX_DEVICE_META);
        for (int i = 0; i < count; i++) {
            ts[i] = cfx_tensor_new(two, 1, CFX_FLOAT32, d);
            cr_assert(ts[i]);
            stack[n++] = cfx_tensor_value(ts[i]);
        }
    } else if (strcmp(args, "int") == 0) {
        stack[n++] = cfx_int(3);
    }
    int rc = key ? redispatch_boxed(op, cfx_keyset_of(key_arg(key)), stack) : cfx_op_call(op, stack, n, COUNT_OF(stack));
    if (rc == CFX_OK)
        cfx_buf_puts(&out, "ok");
    put_result(rc);
    cfx_tensor_release(ts[0]);
    cfx_tensor_release(ts[1]);
}

static void run_command(char *cmd)
{
    char *f[8] = {0};
    int nf = 0;
    char *rest = NULL;
    for (char *p = cmd; nf < 8;) {
        f[nf++] = p;
        /* def's schema is the rest of the line */
        if (nf == 3 && strcmp(f[0], "def") == 0) {
            char *sp = strchr(p, ' ');
            cr_assert(sp);
            *sp = '\0';
            rest = sp + 1;
            break;
        }
        char *sp = strchr(p, ' ');
        if (!sp)
            break;
        *sp = '\0';
        p = sp + 1;
    }
    int rc = CFX_OK;
    if (strcmp(f[0], "lib") == 0) {
        cfx_library_kind kind = strcmp(f[2], "DEF") == 0 ? CFX_LIB_DEF
                                : strcmp(f[2], "IMPL") == 0 ? CFX_LIB_IMPL
                                                            : CFX_LIB_FRAGMENT;
        cfx_library *lib = cfx_library_new(kind, f[3], key_arg(f[4]), "/dev/null", atoi(f[5]));
        if (lib) {
            cr_assert(n_libs < 32);
            libslot *s = &libs[n_libs++];
            snprintf(s->id, sizeof s->id, "%s", f[1]);
            s->lib = lib;
            s->line = atoi(f[5]);
        } else {
            rc = CFX_ERR;
        }
    } else if (strcmp(f[0], "free") == 0) {
        libslot *s = lib_by_id(f[1]);
        cfx_library_free(s->lib);
        *s = libs[--n_libs];
    } else if (strcmp(f[0], "def") == 0) {
        libslot *s = lib_by_id(f[1]);
        int alias = -1;
        if (strcmp(f[2], "LEGACY") != 0)
            rc = cfx_alias_analysis_parse(strcmp(f[2], "-") == 0 ? "" : f[2], &alias);
        if (rc == CFX_OK)
            rc = cfx_library_def_at(s->lib, rest, alias, "/dev/null", s->line);
    } else if (strcmp(f[0], "impl") == 0) {
        libslot *s = lib_by_id(f[1]);
        if (strcmp(f[4], "boxed") == 0)
            rc = cfx_library_impl_boxed_at(s->lib, f[2], key_arg(f[3]), identity_boxed, NULL, "/dev/null", s->line);
        else if (strcmp(f[4], "fallthrough") == 0)
            rc = cfx_library_impl_fallthrough_at(s->lib, f[2], key_arg(f[3]), "/dev/null", s->line);
        else
            rc = cfx_library_impl_at(s->lib, f[2], key_arg(f[3]), (cfx_fnptr)identity_unboxed, "/dev/null", s->line);
    } else if (strcmp(f[0], "fallthrough") == 0) {
        libslot *s = lib_by_id(f[1]);
        rc = cfx_library_fallback_at(s->lib, key_arg(f[2]), NULL, NULL, "/dev/null", s->line);
    } else if (strcmp(f[0], "dump") == 0 || strcmp(f[0], "table") == 0) {
        cfx_op *op = op_by_name(f[1]);
        if (op) { /* PyTorch returns "" for an unknown name */
            char *t = f[0][0] == 'd' ? cfx_op_dump_state(op) : cfx_op_dump_computed_table(op);
            cfx_buf_puts(&out, t);
            free(t);
        }
    } else if (strcmp(f[0], "dangling") == 0) {
        cfx_op *ops[64];
        int n = cfx_op_list_dangling(ops, 64);
        cr_assert_leq(n, 64);
        char *dumps[64];
        for (int i = 0; i < n; i++)
            dumps[i] = cfx_op_dump_state(ops[i]);
        qsort(dumps, (size_t)n, sizeof dumps[0], cmp_str);
        for (int i = 0; i < n; i++) {
            cfx_buf_puts(&out, dumps[i]);
            free(dumps[i]);
        }
    } else if (strcmp(f[0], "invariants") == 0) {
        cfx_op *op = op_by_name(f[1]);
        cr_assert(op);
        rc = cfx_op_check_invariants(op);
    } else if (strcmp(f[0], "call") == 0) {
        do_call(f[1], f[2], NULL);
    } else if (strcmp(f[0], "redispatch") == 0) {
        do_call(f[1], f[3], f[2]);
    } else {
        cr_assert_fail("unknown command %s", f[0]);
    }
    if (strcmp(f[0], "call") != 0 && strcmp(f[0], "redispatch") != 0)
        put_result(rc);
}

static void run_scenario(const char *name)
{
    load_golden();
    scenario *sc = find_scenario(name);
    cr_assert(sc, "scenario %s missing from %s", name, GOLDEN);
    install_oracle_fallbacks();
    cfx_set_warning_handler(capture_warning, NULL);
    for (int i = 0; i < sc->n; i++) {
        char *cmd = strdup(sc->cmds[i].cmd);
        cfx_buf_init(&out);
        cfx_error_clear();
        run_command(cmd);
        char *got = cfx_buf_take(&out);
        cr_expect_str_eq(got, sc->cmds[i].expected, "scenario %s, command \"%s\":\n--- cfx:\n%s\n--- torch 2.13:\n%s",
                         name, sc->cmds[i].cmd, got, sc->cmds[i].expected);
        free(got);
        free(cmd);
    }
    /* Every op must still satisfy its invariants after the scenario's churn. */
    cfx_error_clear();
    cr_expect_eq(cfx_dispatcher_check_all_invariants(), CFX_OK, "%s", cfx_error_message());
    while (n_libs > 0)
        cfx_library_free(libs[--n_libs].lib);
    cfx_library_free(oracle_lib);
    cfx_set_warning_handler(NULL, NULL);
    cfx_error_clear();
    free_golden();
}

/* Every scenario of the golden file but the oracle's table, in the generator's order. */
#define SCENARIOS(X)                                                                             \
    X(cia_only) X(cpu_only) X(cpu_cea) X(cia_cpu) X(cia_sparse) X(cia_cea) X(cia_quantized_fpga) \
    X(ambiguous_autogradother) X(cia_mtia_maia) X(autograd_alias) X(cea_nonfunctional)          \
    X(cia_nested) X(batched_decomposition) X(catch_all) X(override) X(override_unboxed)          \
    X(override_catch_all_first) X(dangling_override) X(impl_before_def) X(def_lifetime)          \
    X(fragment) X(alias_kinds) X(backend_fallback) X(fallback_after_def) X(per_op_fallthrough)   \
    X(missing_kernel) X(library_errors)

#define SCENARIO_TEST(name) \
    Test(dispatch_golden, name) { run_scenario(#name); }
SCENARIOS(SCENARIO_TEST)

/* The list above must cover the golden file (the generator may have grown). */
Test(dispatch_golden, every_scenario_is_replayed)
{
#define SCENARIO_NAME(name) #name,
    static const char *replayed[] = {"oracle_fallbacks", SCENARIOS(SCENARIO_NAME)};
    load_golden();
    int total = 0;
    for (int i = 0; i < n_scenarios; i++) {
        bool found = false;
        for (size_t j = 0; j < sizeof replayed / sizeof replayed[0]; j++)
            found |= strcmp(replayed[j], scenarios[i].name) == 0;
        cr_expect(found, "scenario %s is not replayed", scenarios[i].name);
        total += scenarios[i].n;
    }
    cr_expect_eq(n_scenarios, (int)(sizeof replayed / sizeof replayed[0]));
    cr_expect_gt(total, 150);
    free_golden();
}
