/* test_fork.c - a child forked from a multi-threaded parent can use cfx.
 *
 * Threads of the parent run in every process-wide lock of the library (the operator registry,
 * the tensor count registry, the pass, builtin-function, side-effect and opaque-type
 * registries) while the main thread forks children that each take every one of those locks
 * once. Without the library's pthread_atfork handler a child forked while a lock was held
 * waits for it for ever; here a child that is not done within its alarm dies of SIGALRM and
 * the test fails (after the first
 * hang, the rest are not waited for), so a regression cannot hang the suite. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "dispatch/dispatcher.h"
#include "dispatch/schema.h"
#include "dispatch/tensor.h"
#include "ir/passes/manager.h"
#include "ir/side_effects.h"
#include "ir/target.h"

enum { FORKS = 300, CHILD_SECONDS = 2 };

static atomic_bool stop;

/* One use of each process-wide lock; false if one answered wrongly. */
static bool use_every_lock(int which)
{
    bool ok = true;
    if (which < 0 || which == 0)
        ok &= cfx_op_find("aten::relu") != NULL;
    if (which < 0 || which == 1)
        ok &= cfx_tensor_live_count() >= 0;
    if (which < 0 || which == 2)
        ok &= cfx_pass_count() > 0;
    if (which < 0 || which == 3)
        ok &= cfx_builtin_fn_find("operator.add") != NULL;
    if (which < 0 || which == 4)
        ok &= cfx_side_effect_register_name("test_fork::effect") == 0;
    if (which < 0 || which == 5)
        ok &= cfx_schema_register_opaque_type("__torch__.test_fork.Opaque") == 0;
    return ok;
}

enum { N_LOCKS = 6 };

static void *busy(void *arg)
{
    int which = (int)(intptr_t)arg;
    /* yielding between uses lets the forking thread win the locks (glibc's are not fair) */
    while (!atomic_load(&stop)) {
        use_every_lock(which);
        sched_yield();
    }
    return NULL;
}

Test(fork, child_uses_cfx_while_parent_threads_hold_locks, .timeout = 120)
{
    cr_assert(use_every_lock(-1), "the locks' operations themselves work");
    pthread_t th[N_LOCKS];
    int n = 0;
    for (int i = 0; i < N_LOCKS; i++)
        cr_assert_eq(pthread_create(&th[n++], NULL, busy, (void *)(intptr_t)i), 0);
    int hung = 0, failed = 0;
    for (int f = 0; f < FORKS; f++) {
        pid_t pid = fork();
        cr_assert_neq(pid, -1, "fork");
        if (pid == 0) {
            sigset_t all;
            sigfillset(&all);
            sigprocmask(SIG_UNBLOCK, &all, NULL);
            alarm(CHILD_SECONDS);
            _exit(use_every_lock(-1) ? 0 : 1);
        }
        int st = 0;
        /* polled, so a hung child is killed even if SIGALRM is blocked in it */
        for (int ms = 0; waitpid(pid, &st, WNOHANG) == 0; ms++) {
            if (ms == CHILD_SECONDS * 1000)
                kill(pid, SIGKILL);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        if (WIFSIGNALED(st))
            hung++;
        else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed++;
        if (hung)
            break;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(hung, 0, "%d of %d children hung (killed by their alarm)", hung, FORKS);
    cr_assert_eq(failed, 0, "%d of %d children got wrong answers", failed, FORKS);
}
