/* test_timeout.c - every test gets a time limit, so `make test` cannot hang.
 *
 * Criterion 2.4.1 parses --timeout but never applies it; a per-test .timeout does work, so
 * before the run starts this hook gives each test that has none the limit from the
 * environment (CFX_TEST_TIMEOUT, seconds; the Makefile sets it, 300 when unset). A test that
 * runs past it fails as "<suite>::<test>: Timed out.". */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/internal/ordered-set.h>
#include <stdlib.h>

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    const char *env = getenv("CFX_TEST_TIMEOUT");
    double limit = env && *env ? atof(env) : 300.0;
    if (limit <= 0)
        return;
    struct criterion_suite_set *suite;
    FOREACH_SET(suite, set->suites) {
        struct criterion_test *test;
        FOREACH_SET(test, suite->tests) {
            if (test->data->timeout <= 0)
                test->data->timeout = limit;
        }
    }
}

/* The limit itself: a test that never returns (run only when asked) fails by name. The child
 * run must not inherit BXFI_MAP, which would make it a worker of this run. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

Test(timeout, hangs_when_asked)
{
    if (!getenv("CFX_SELFTEST_HANG"))
        cr_skip_test("run by timeout/hanging_test_fails_by_name");
    for (;;)
        pause();
}

Test(timeout, hanging_test_fails_by_name, .timeout = 60)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "env -u BXFI_MAP CFX_SELFTEST_HANG=1 CFX_TEST_TIMEOUT=1 /proc/%d/exe --filter 'timeout/hangs_when_asked' "
             "--ascii 2>&1",
             (int)getpid());
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char out[4096];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_expect(strstr(out, "timeout::hangs_when_asked: Timed out"), "output:\n%s", out);
    cr_expect(status != 0, "a timed-out run must fail");
}
