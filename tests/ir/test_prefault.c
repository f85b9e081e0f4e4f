/* test_prefault.c - the background populating thread: requested pages become resident
 * without being touched, cancel leaves nothing queued for an unmapped range, the switch turns
 * requests off, a forked child gets a worker of its own, the worker keeps off the requesting
 * thread's CPU, a process confined to one CPU gets no worker, and a thread pinned to one CPU
 * in a wider process does. Residency is read with
 * mincore, the worker's CPUs from /proc/self/task. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

/* The worker only runs where the process may use two CPUs or more (else requests are
 * refused): tests that need it skip elsewhere. */
static bool worker_possible(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= 2;
}

Test(prefault, requested_pages_become_resident_untouched)
{
    if (!worker_possible())
        cr_skip_test("one usable CPU: no worker");
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
    if (!worker_possible())
        cr_skip_test("one usable CPU: no worker");
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
    if (!worker_possible())
        cr_skip_test("one usable CPU: no worker");
    cfx_prefault_set_enabled(true);
    char *p = fresh_mapping();
    /* the parent's worker has served a request, so it is past its start-up: forking while
     * another thread is inside the allocator (a starting thread is, under ASan) would leave
     * the child a locked allocator */
    cr_assert(cfx_prefault_request(p, PAGES * page_size()));
    cr_assert(wait_resident(p));
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
    cfx_prefault_cancel(p, PAGES * page_size());
    munmap(p, PAGES * page_size());
}

/* The CPUs the task called "cfx-prefault" may run on, from /proc/self/task/TID/status. */
static bool worker_cpus(cpu_set_t *out)
{
    DIR *d = opendir("/proc/self/task");
    cr_assert_not_null(d);
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        bool named = fgets(comm, sizeof comm, f) && strncmp(comm, "cfx-prefault", 12) == 0;
        fclose(f);
        if (!named)
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        found = sched_getaffinity(tid, sizeof *out, out) == 0;
    }
    closedir(d);
    return found;
}

/* The first CPU the calling thread may use. */
static int first_cpu(void)
{
    cpu_set_t all;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all))
            return c;
    return -1;
}

/* Confines the calling thread to CPU c. */
static bool pin_to(int c)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
}

Test(prefault, worker_keeps_off_the_requesting_cpu)
{
    if (!worker_possible())
        cr_skip_test("one usable CPU: no worker");
    cpu_set_t all;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    cfx_prefault_set_enabled(true);
    /* start the worker from this thread unpinned (a thread confined to one CPU gets none,
     * see below), then request from each usable CPU in turn: once it has served a request
     * from CPU c, the worker may not run on c */
    char *first = fresh_mapping();
    cr_assert(cfx_prefault_request(first, page_size()));
    cfx_prefault_cancel(first, page_size());
    munmap(first, PAGES * page_size());
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &all))
            continue;
        cr_assert(pin_to(c));
        char *p = fresh_mapping();
        cr_assert(cfx_prefault_request(p, PAGES * page_size()));
        cr_assert(wait_resident(p));
        cfx_prefault_cancel(p, PAGES * page_size()); /* waits for the worker to be done there */
        cpu_set_t w;
        cr_assert(worker_cpus(&w), "no thread named cfx-prefault");
        cr_assert_not(CPU_ISSET(c, &w), "the worker may still run on CPU %d, which asked", c);
        cr_assert_gt(CPU_COUNT(&w), 0);
        munmap(p, PAGES * page_size());
    }
    sched_setaffinity(0, sizeof all, &all);
}

Test(prefault, one_cpu_means_no_worker)
{
    /* a fresh process (Criterion forks one per test) whose only thread is confined to one
     * CPU before its first request: a worker there could only take turns with the caller (or
     * roam where the program chose not to run), so none is started */
    cpu_set_t all;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    cr_assert(pin_to(first_cpu()));
    cfx_prefault_set_enabled(true);
    char *p = fresh_mapping();
    cr_assert_not(cfx_prefault_request(p, PAGES * page_size()));
    cr_assert_not(cfx_prefault_enabled(), "no worker on one CPU, so populating is off");
    cpu_set_t w;
    cr_assert_not(worker_cpus(&w), "a worker thread was started");
    munmap(p, PAGES * page_size());
    sched_setaffinity(0, sizeof all, &all);
}

/* A thread the program pinned to one CPU, in a process that may use more, still gets the
 * worker (on the other CPUs): "one CPU" is the process's, not the first caller's. */
typedef struct pinned_request {
    int cpu;
    bool requested;
} pinned_request;

static void *request_pinned(void *arg)
{
    pinned_request *r = arg;
    if (!pin_to(r->cpu))
        return NULL;
    char *p = fresh_mapping();
    r->requested = cfx_prefault_request(p, PAGES * page_size());
    if (r->requested)
        wait_resident(p);
    cfx_prefault_cancel(p, PAGES * page_size());
    munmap(p, PAGES * page_size());
    return NULL;
}

Test(prefault, a_pinned_thread_in_a_wider_process_gets_the_worker)
{
    if (!worker_possible())
        cr_skip_test("one usable CPU: no worker");
    pinned_request r = {first_cpu(), false};
    cfx_prefault_set_enabled(true);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, request_pinned, &r), 0);
    pthread_join(t, NULL);
    cr_assert(r.requested, "the pinned thread's request was refused");
    cr_assert(cfx_prefault_enabled());
    cpu_set_t w;
    cr_assert(worker_cpus(&w), "no thread named cfx-prefault");
    cr_assert_not(CPU_ISSET(r.cpu, &w), "the worker may run on the pinned thread's CPU %d", r.cpu);
}
