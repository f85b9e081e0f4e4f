/* prefault.c - the background populating thread (see prefault.h).
 *
 * One mutex guards a small ring of requested ranges and the range the worker is populating.
 * Requests come a window at a time (tens of KiB to a MiB), so taking the mutex per request
 * costs nothing measurable; the worker drops it while it is in madvise. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ir/prefault.h"

#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum { QUEUE_CAP = 64 };

typedef struct range {
    char *from, *to;
} range;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* the worker waits for requests */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* cancel waits for the running one */
static range queue[QUEUE_CAP];
static unsigned head, count;
static range running;   /* what the worker is populating; from == NULL when idle */
static int state;       /* 0: not decided yet, 1: on, -1: off */
static bool started;    /* the worker runs (in this process) */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static bool overlaps(range r, const char *a, const char *b) { return r.from < b && a < r.to; }

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (count == 0)
            pthread_cond_wait(&work_cv, &lock);
        running = queue[head];
        head = (head + 1) % QUEUE_CAP;
        count--;
        pthread_mutex_unlock(&lock);
        int rc = madvise(running.from, (size_t)(running.to - running.from), MADV_POPULATE_WRITE);
        int err = errno;
        pthread_mutex_lock(&lock);
        if (rc != 0 && err == EINVAL)
            state = -1; /* a kernel without MADV_POPULATE_WRITE: stop asking */
        running = (range){NULL, NULL};
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
    running = (range){NULL, NULL};
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

/* Starts the worker with every signal blocked, so signals keep going to the program's own
 * threads. Off for good if the thread cannot be made. */
static bool start_locked(void)
{
    pthread_once(&atfork_once, install_atfork);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t tid;
    bool ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
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
        queue[(head + count) % QUEUE_CAP] = (range){from, (char *)from + len};
        count++;
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
        count = n;
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
