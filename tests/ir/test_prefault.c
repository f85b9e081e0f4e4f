/* test_prefault.c - the background populating thread: requested pages become resident
 * without being touched, cancel leaves nothing queued for an unmapped range, the switch turns
 * requests off, and a forked child gets a worker of its own. Residency is read with mincore. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/prefault.h"

enum { PAGES = 64 };

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static char *fresh_mapping(void)
{
    void *p = mmap(NULL, PAGES * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(p, MAP_FAILED);
    return p;
}

static int resident_pages(char *p)
{
    unsigned char vec[PAGES];
    cr_assert_eq(mincore(p, PAGES * page_size(), vec), 0);
    int n = 0;
    for (int i = 0; i < PAGES; i++)
        n += vec[i] & 1;
    return n;
}

/* Waits up to 5 s for all pages of p to be resident. */
static bool wait_resident(char *p)
{
    for (int i = 0; i < 5000; i++) {
        if (resident_pages(p) == PAGES)
            return true;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return false;
}

Test(prefault, requested_pages_become_resident_untouched)
{
    cfx_prefault_set_enabled(true);
    char *p = fresh_mapping();
    cr_assert_eq(resident_pages(p), 0);
    cr_assert(cfx_prefault_request(p, PAGES * page_size()));
    cr_assert(wait_resident(p), "the worker populated %d of %d pages", resident_pages(p), PAGES);
    for (size_t i = 0; i < PAGES * page_size(); i += page_size())
        cr_assert_eq(p[i], 0, "populated pages read as zero");
    cfx_prefault_cancel(p, PAGES * page_size());
    munmap(p, PAGES * page_size());
}

Test(prefault, cancel_then_unmap_and_reuse_the_address)
{
    cfx_prefault_set_enabled(true);
    /* many requests, cancelled at once: after cancel nothing may touch the range, so a new
     * mapping at the same address stays untouched */
    for (int round = 0; round < 20; round++) {
        char *p = fresh_mapping();
        for (int i = 0; i < PAGES; i += 4)
            cfx_prefault_request(p + i * page_size(), 4 * page_size());
        cfx_prefault_cancel(p, PAGES * page_size());
        munmap(p, PAGES * page_size());
        char *q = mmap(p, PAGES * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (q == MAP_FAILED)
            continue; /* the address was taken in between: nothing to check this round */
        nanosleep(&(struct timespec){0, 2000000}, NULL);
        cr_assert_eq(resident_pages(q), 0, "round %d: a cancelled request populated a later mapping", round);
        munmap(q, PAGES * page_size());
    }
}

Test(prefault, disabled_requests_are_refused)
{
    cfx_prefault_set_enabled(false);
    cr_assert_not(cfx_prefault_enabled());
    char *p = fresh_mapping();
    cr_assert_not(cfx_prefault_request(p, PAGES * page_size()));
    nanosleep(&(struct timespec){0, 5000000}, NULL);
    cr_assert_eq(resident_pages(p), 0);
    munmap(p, PAGES * page_size());
    cfx_prefault_set_enabled(true);
    cr_assert(cfx_prefault_enabled());
}

Test(prefault, bad_requests)
{
    cr_assert_not(cfx_prefault_request(NULL, 4096));
    cr_assert_not(cfx_prefault_request((void *)(uintptr_t)4096, 0));
    cfx_prefault_cancel(NULL, 0); /* nothing queued: a no-op */
}

Test(prefault, forked_child_starts_its_own_worker)
{
    cfx_prefault_set_enabled(true);
    char *p = fresh_mapping();
    cr_assert(cfx_prefault_request(p, page_size())); /* the parent's worker runs */
    cfx_prefault_cancel(p, page_size());
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char *q = mmap(NULL, PAGES * page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        bool ok = q != MAP_FAILED && cfx_prefault_request(q, PAGES * page_size()) && wait_resident(q);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's request was not served");
    munmap(p, PAGES * page_size());
}
