/* test_generator.c - seeded random streams against PyTorch 2.13's CPU generator.
 *
 * tests/data/random_streams.txt (tools/interop/gen_random.py) holds, per program, a seed, the
 * calls made after torch.manual_seed(seed) and the bits of every value returned. Each program
 * is replayed through the operator API after cfx_manual_seed and must match bit for bit:
 * uniform floats from 24/53-bit draws, randn's two paths (normal_distribution<double> with its
 * cached sample below 16 elements, blockwise normal_fill from 16 on) and randint's modulo. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tests/test_util.h"

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(generator, .init = setup);

static bool parse_dtype(const char *s, cfx_dtype *dt) { return cfx_dtype_parse(s, dt); }

/* Runs one CALL token; returns the tensor (scope-owned) or NULL. */
static cfx_tensor *run_call(char *call, cfx_dtype *dt)
{
    char *f[6] = {0};
    int n = 0;
    for (char *save = NULL, *p = strtok_r(call, ":", &save); p && n < 6; p = strtok_r(NULL, ":", &save))
        f[n++] = p;
    cr_assert(n > 0, "empty call");
    if (!strcmp(f[0], "randint")) {
        cr_assert(n == 5 && parse_dtype(f[3], dt));
        int64_t len = atoll(f[4]);
        cfx_int_list size = {&len, 1};
        return cfx_randint_low(atoll(f[1]), atoll(f[2]), size, cfx_dtype_value(*dt));
    }
    cr_assert(n == 3 && parse_dtype(f[1], dt));
    int64_t len = atoll(f[2]);
    cfx_int_list size = {&len, 1};
    if (!strcmp(f[0], "randperm"))
        return cfx_randperm(len, cfx_dtype_value(*dt));
    return !strcmp(f[0], "rand") ? cfx_rand(size, cfx_dtype_value(*dt)) : cfx_randn(size, cfx_dtype_value(*dt));
}

static void bits_of(const cfx_tensor *t, int64_t i, char *buf, size_t n)
{
    const void *p = cfx_tensor_data((cfx_tensor *)t);
    uint32_t u32;
    uint64_t u64;
    switch ((cfx_dtype)t->dtype) {
    case CFX_FLOAT32: memcpy(&u32, (const float *)p + i, 4); snprintf(buf, n, "%08" PRIx32, u32); break;
    case CFX_FLOAT64: memcpy(&u64, (const double *)p + i, 8); snprintf(buf, n, "%016" PRIx64, u64); break;
    case CFX_INT64: snprintf(buf, n, "%" PRId64, ((const int64_t *)p)[i]); break;
    case CFX_INT32: snprintf(buf, n, "%" PRId32, ((const int32_t *)p)[i]); break;
    default: snprintf(buf, n, "?"); break;
    }
}

Test(generator, streams_match_pytorch)
{
    char *text = read_golden("tests/data/random_streams.txt");
    cr_assert(text);
    size_t n_lines = 0;
    char **lines = split_lines(text, &n_lines);
    int programs = 0;
    for (size_t l = 0; l < n_lines; l++) {
        if (!*lines[l])
            continue;
        char *line = strdup(lines[l]);
        char *eq = strstr(line, " = ");
        cr_assert(eq);
        *eq = '\0';
        char *expected = eq + 3;
        cfx_scope s = cfx_scope_begin();
        char *save = NULL;
        cfx_manual_seed((uint64_t)strtoull(strtok_r(line, " ", &save), NULL, 10));
        char *got = calloc(strlen(expected) + 64, 1);
        for (char *call = strtok_r(NULL, " ", &save); call; call = strtok_r(NULL, " ", &save)) {
            cfx_dtype dt;
            cfx_tensor *t = run_call(call, &dt);
            cr_assert(t, "%s: %s", lines[l], cfx_error_message());
            for (int64_t i = 0; i < cfx_tensor_numel(t); i++) {
                char b[32];
                bits_of(t, i, b, sizeof b);
                if (*got)
                    strcat(got, " ");
                strcat(got, b);
                cr_assert(strlen(got) <= strlen(expected) + 32, "%s: more values than PyTorch's", lines[l]);
            }
        }
        /* the first differing value, by position */
        int pos = 0, bad = -1, n_bad = 0;
        char *se = NULL, *sg = NULL, *e = strtok_r(expected, " ", &se), *g = strtok_r(got, " ", &sg);
        char first_e[32] = "", first_g[32] = "";
        for (; e || g; e = strtok_r(NULL, " ", &se), g = strtok_r(NULL, " ", &sg), pos++)
            if (!e || !g || strcmp(e, g)) {
                if (bad < 0) {
                    bad = pos;
                    snprintf(first_e, sizeof first_e, "%s", e ? e : "(none)");
                    snprintf(first_g, sizeof first_g, "%s", g ? g : "(none)");
                }
                n_bad++;
            }
        cr_expect_eq(n_bad, 0, "seed line %zu: %d values differ, first at %d: PyTorch %s, cfx %s", l, n_bad, bad,
                     first_e, first_g);
        free(got);
        cfx_scope_end(s);
        free(line);
        programs++;
    }
    cr_assert_geq(programs, 40);
    free(lines);
    free(text);
}

Test(generator, own_generator_and_seeds)
{
    cfx_generator *g = cfx_generator_new(), *h = cfx_generator_new();
    cr_assert(g && h);
    cr_assert_eq(cfx_generator_initial_seed(g), UINT64_C(67280421310721)); /* torch.Generator() */
    /* the textbook mt19937 check: the 10000th output of the engine seeded with 5489 */
    cfx_generator_manual_seed(g, 5489);
    uint32_t v = 0;
    for (int i = 0; i < 10000; i++)
        v = cfx_generator_random(g);
    cr_assert_eq(v, 4123659995u);
    /* torch.Generator().manual_seed(0).random() is the first raw draw: 2357136044 */
    cfx_generator_manual_seed(h, 0);
    cr_assert_eq(cfx_generator_random(h), 2357136044u);
    cr_assert_eq(cfx_generator_initial_seed(h), 0);
    cfx_generator_free(g);
    cfx_generator_free(h);
    cfx_generator_free(cfx_default_generator()); /* refused: the default generator stays */
    cfx_manual_seed(3);
    cr_assert_eq(cfx_generator_initial_seed(cfx_default_generator()), 3);
}

Test(generator, randint_errors)
{
    cfx_scope s = cfx_scope_begin();
    cr_assert_null(cfx_randint_low(5, 5, CFX_INTS(3)));
    cr_assert_str_eq(cfx_error_message(), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
    cfx_error_clear();
    cr_assert_null(cfx_randint_low(0, 5, CFX_INTS(3), cfx_dtype_value(CFX_BOOL)));
    cr_assert_str_eq(cfx_error_message(), "to - 1 is out of bounds for bool");
    cfx_error_clear();
    cfx_tensor *m = cfx_randint(5, CFX_INTS(2, 3), cfx_int(4), cfx_none(), cfx_device_value(cfx_device_make(CFX_DEVICE_META)));
    cr_assert(m && m->dtype == CFX_INT64 && m->device.type == CFX_DEVICE_META, "%s", cfx_error_message());
    cfx_scope_end(s);
}
