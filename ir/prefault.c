/* prefault.c - the background populating thread (see prefault.h).
 *
 * One mutex guards a small ring of requested ranges and the range the worker is populating.
 * Requests come a window at a time (tens of KiB to a MiB), so taking the mutex per request
 * costs nothing measurable; the worker drops it while it is in madvise.
 *
 * Two things decide whether the worker overlaps with the thread that builds the graph at all,
 * both measured on the 2-vCPU VMs cfx is developed on:
 * - Schedulers that pack threads onto few CPUs (and plain wake-affine placement) run a newly
 *   created or woken thread on the waker's CPU: the worker then only takes turns with the
 *   graph builder instead of running beside it, and a 10k-node trace saw no gain. The worker
 *   therefore confines itself to the CPUs other than the requesting thread's (sched_getcpu,
 *   carried in each request) whenever its affinity still allows that CPU, and is not started
 *   at all where the process may use only one CPU (process_cpus): there it could never
 *   overlap, so the arena populates synchronously.
 * - Waking a thread that sleeps on an idle vCPU takes ~100 us, longer than the graph takes to
 *   fill a small window. After its queue runs dry the worker therefore polls it for a while
 *   (SPIN_NS) before it sleeps: a growing graph's next request comes well within that. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* madvise, sched_getcpu, CPU_* and pthread affinity */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "ir/prefault.h"

#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum { QUEUE_CAP = 64 };
#define SPIN_NS 300000 /* how long an idle worker polls its queue before it sleeps */

typedef struct range {
    char *from, *to;
    int cpu; /* the requesting thread's CPU (-1: unknown), which the worker should avoid */
} range;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* the worker waits for requests */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* cancel waits for the running one */
static range queue[QUEUE_CAP];
static unsigned head, count; /* count is also polled without the lock (atomic loads) */
static cpu_set_t usable;      /* the CPUs the process could use when the worker started */
static cpu_set_t worker_set;  /* the worker's own affinity (the worker's alone after start) */
static range running;   /* what the worker is populating; from == NULL when idle */
static int state;       /* 0: not decided yet, 1: on, -1: off */
static bool started;    /* the worker runs (in this process) */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static bool overlaps(range r, const char *a, const char *b) { return r.from < b && a < r.to; }

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Called without the lock: polls the queue for up to SPIN_NS. */
static void spin_for_work(void)
{
    double until = now_ns() + SPIN_NS;
    while (__atomic_load_n(&count, __ATOMIC_RELAXED) == 0) {
        for (int i = 0; i < 64; i++)
            cpu_relax();
        if (now_ns() > until)
            return;
    }
}

/* If the worker may run on the CPU the request came from, confines it to the others: one
 * system call when the requesting thread has moved to a CPU the worker was allowed. */
static void move_off(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &worker_set))
        return;
    cpu_set_t set = usable;
    CPU_CLR(cpu, &set);
    if (CPU_COUNT(&set) > 0 && pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0)
        worker_set = set;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "cfx-prefault"); /* for top, gdb and the tests */
    if (pthread_getaffinity_np(pthread_self(), sizeof worker_set, &worker_set) != 0)
        worker_set = usable; /* unknown: the first request sets it */
    pthread_mutex_lock(&lock);
    for (;;) {
        if (count == 0) {
            pthread_mutex_unlock(&lock);
            spin_for_work();
            pthread_mutex_lock(&lock);
        }
        while (count == 0)
            pthread_cond_wait(&work_cv, &lock);
        running = queue[head];
        head = (head + 1) % QUEUE_CAP;
        __atomic_store_n(&count, count - 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&lock);
        move_off(running.cpu);
        int rc = madvise(running.from, (size_t)(running.to - running.from), MADV_POPULATE_WRITE);
        int err = errno;
        pthread_mutex_lock(&lock);
        if (rc != 0 && err == EINVAL)
            state = -1; /* a kernel without MADV_POPULATE_WRITE: stop asking */
        running = (range){NULL, NULL, -1};
        pthread_cond_broadcast(&done_cv);
    }
    return NULL;
}

/* fork() copies the queue and the lock but not the worker: the child starts afresh. */
static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&lock); }
static void after_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&work_cv, NULL);
    pthread_cond_init(&done_cv, NULL);
    head = count = 0;
    running = (range){NULL, NULL, -1};
    started = false;
}
static void install_atfork(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

static bool enabled_locked(void)
{
    if (state == 0) {
        const char *e = getenv("CFX_PREFAULT");
        state = e && strcmp(e, "0") == 0 ? -1 : 1;
    }
    return state > 0;
}

/* The CPUs the process may use, as far as a thread can tell: the main thread's affinity
 * (where taskset and the like put a process) and the caller's, together. A program that pins
 * one of its threads to a CPU still leaves the others to the worker. */
static bool process_cpus(cpu_set_t *set)
{
    cpu_set_t caller;
    if (sched_getaffinity(0, sizeof caller, &caller) != 0)
        return false;
    if (sched_getaffinity(getpid(), sizeof *set, set) != 0)
        CPU_ZERO(set);
    CPU_OR(set, set, &caller);
    return true;
}

/* Starts the worker with every signal blocked, so signals keep going to the program's own
 * threads, on a CPU other than the caller's. Off for good if the thread cannot be made or
 * the process may use only one CPU. */
static bool start_locked(void)
{
    pthread_once(&atfork_once, install_atfork);
    if (!process_cpus(&usable) || CPU_COUNT(&usable) < 2) {
        state = -1;
        return false;
    }
    cpu_set_t others = usable;
    int cpu = sched_getcpu();
    if (cpu >= 0)
        CPU_CLR(cpu, &others);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t tid;
    bool ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        if (CPU_COUNT(&others) > 0)
            pthread_attr_setaffinity_np(&attr, sizeof others, &others);
        ok = pthread_create(&tid, &attr, worker, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok)
        state = -1;
    started = ok;
    return ok;
}

bool cfx_prefault_request(void *from, size_t len)
{
    if (!from || len == 0)
        return false;
    pthread_mutex_lock(&lock);
    bool ok = enabled_locked() && count < QUEUE_CAP && (started || start_locked());
    if (ok) {
        queue[(head + count) % QUEUE_CAP] = (range){from, (char *)from + len, sched_getcpu()};
        __atomic_store_n(&count, count + 1, __ATOMIC_RELAXED);
        pthread_cond_signal(&work_cv);
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void cfx_prefault_cancel(void *from, size_t len)
{
    const char *a = from, *b = a + len;
    pthread_mutex_lock(&lock);
    if (started) {
        range keep[QUEUE_CAP];
        unsigned n = 0;
        for (unsigned i = 0; i < count; i++) {
            range r = queue[(head + i) % QUEUE_CAP];
            if (!overlaps(r, a, b))
                keep[n++] = r;
        }
        memcpy(queue, keep, n * sizeof *keep);
        head = 0;
        __atomic_store_n(&count, n, __ATOMIC_RELAXED);
        while (running.from && overlaps(running, a, b))
            pthread_cond_wait(&done_cv, &lock);
    }
    pthread_mutex_unlock(&lock);
}

void cfx_prefault_set_enabled(bool on)
{
    pthread_mutex_lock(&lock);
    state = on ? 1 : -1;
    pthread_mutex_unlock(&lock);
}

bool cfx_prefault_enabled(void)
{
    pthread_mutex_lock(&lock);
    bool on = enabled_locked();
    pthread_mutex_unlock(&lock);
    return on;
}

#else /* not Linux: no MADV_POPULATE_WRITE, pages fault in on first touch */

bool cfx_prefault_request(void *from, size_t len)
{
    (void)from;
    (void)len;
    return false;
}
void cfx_prefault_cancel(void *from, size_t len)
{
    (void)from;
    (void)len;
}
void cfx_prefault_set_enabled(bool on) { (void)on; }
bool cfx_prefault_enabled(void) { return false; }

#endif
