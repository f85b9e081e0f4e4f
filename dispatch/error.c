/* error.c - the thread's sticky error, current call site and warning hook.
 *
 * Only the first error of a context is kept: later failures are usually consequences of it
 * (a NULL propagating through model code), and the first message is the one that explains. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/error_internal.h"
#include "dispatch/value.h"

typedef struct error_state {
    char *message;
    char *op;
    cfx_site site;
    char *site_file; /* owned copies, so the error outlives a dlclose'd model plugin */
    char *site_func;
} error_state;

static _Thread_local error_state err;

/* A thread's error text is freed when the thread exits: a key whose value is set while the
 * thread holds a message runs free_at_exit then (the thread-local itself has no destructor). */
static pthread_key_t err_key;
static pthread_once_t err_key_once = PTHREAD_ONCE_INIT;
static bool err_key_ok;

static void free_at_exit(void *unused)
{
    (void)unused;
    cfx_error_clear();
}

static void make_err_key(void) { err_key_ok = pthread_key_create(&err_key, free_at_exit) == 0; }

/* Arms the thread's exit destructor (once per thread: the key's value stays set until exit). */
static void arm_exit_free(void)
{
    static _Thread_local bool armed;
    if (armed)
        return;
    pthread_once(&err_key_once, make_err_key);
    armed = err_key_ok && pthread_setspecific(err_key, &err) == 0;
}
_Thread_local const cfx_site *cfx_current_site_tls; /* error_internal.h */
_Thread_local cfx_status cfx_error_status_tls;        /* error_internal.h: err's status */

bool cfx_error_occurred(void) { return cfx_error_pending(); }
cfx_status cfx_error_status(void) { return cfx_error_status_tls; }

const cfx_site *cfx_current_site(void) { return cfx_current_site_tls; }

const cfx_site *cfx_set_current_site(const cfx_site *site) { return cfx_error_swap_site(site); }

int cfx_error_set_text(cfx_status status, const char *op, const char *text)
{
    if (status == CFX_OK)
        status = CFX_ERR;
    if (cfx_error_status_tls != CFX_OK)
        return status;
    cfx_error_status_tls = status;
    arm_exit_free();
    err.message = cfx_strdup(text ? text : "unknown error");
    err.op = cfx_strdup(op);
    if (cfx_current_site_tls) {
        err.site_file = cfx_strdup(cfx_current_site_tls->file);
        err.site_func = cfx_strdup(cfx_current_site_tls->func);
        err.site = (cfx_site){err.site_file, cfx_current_site_tls->line, err.site_func};
    }
    return status;
}

int cfx_error_set(cfx_status status, const char *op, const char *fmt, ...)
{
    if (cfx_error_status_tls != CFX_OK)
        return status == CFX_OK ? CFX_ERR : status;
    cfx_buf b;
    cfx_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(status, op, msg ? msg : "out of memory while formatting an error");
    cfx_free(msg);
    return rc;
}

/* A message that could not be copied (out of memory) still reads as one. */
const char *cfx_error_message(void)
{
    return err.message || cfx_error_status_tls == CFX_OK ? err.message : "out of memory";
}
const char *cfx_error_op(void) { return err.op; }
cfx_site cfx_error_site(void) { return err.site; }

void cfx_error_clear(void)
{
    cfx_free(err.message);
    cfx_free(err.op);
    cfx_free(err.site_file);
    cfx_free(err.site_func);
    memset(&err, 0, sizeof err);
    cfx_error_status_tls = CFX_OK;
    }

static cfx_warning_fn warn_fn;
static void *warn_ctx;

void cfx_set_warning_handler(cfx_warning_fn fn, void *ctx)
{
    warn_fn = fn;
    warn_ctx = ctx;
}

void cfx_warn(const char *fmt, ...)
{
    cfx_buf b;
    cfx_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *msg = cfx_buf_take(&b);
    if (!msg)
        return;
    if (warn_fn)
        warn_fn(msg, warn_ctx);
    else
        fprintf(stderr, "Warning: %s\n", msg);
    cfx_free(msg);
}
