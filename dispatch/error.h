/* error.h - the sticky error of the current thread.
 *
 * No operator aborts on user error. A failing call records an error and returns NULL (or a
 * negative status); the FIRST error of the context is kept and later ones are dropped, so model
 * code can be written straight through and checked once, as with SQLite's VDBE builder. Calls
 * that receive a NULL tensor return NULL without a new message. Messages follow PyTorch's text.
 * The state is thread-local; cfx_error_clear() starts a new context. */
#ifndef CFX_ERROR_H
#define CFX_ERROR_H

#include <stdbool.h>

#include "dispatch/export.h"

/* Where a C call into cfx was made: the site of the user's cfx_add(...) call. */
typedef struct cfx_site {
    const char *file;
    int line;
    const char *func;
} cfx_site;

/* A pointer to a compound literal describing the current source location. */
#define CFX_HERE (&(const cfx_site){__FILE__, __LINE__, __func__})

typedef enum cfx_status {
    CFX_OK = 0,
    CFX_ERR = -1,          /* generic user error (bad arguments, shape mismatch, ...) */
    CFX_ERR_NOMEM = -2,    /* allocation failed */
    CFX_ERR_NOTIMPL = -3,  /* no kernel for this dispatch key (PyTorch's NotImplementedError) */
    CFX_ERR_PARSE = -4,    /* schema / JSON text could not be parsed */
} cfx_status;

/* Records an error unless one is already recorded. op may be NULL (e.g. "aten::add.Tensor").
 * The site recorded is the innermost cfx_site set by the dispatcher for this thread, if any.
 * Returns status so callers can `return cfx_error_set(...)`. */
CFX_API int cfx_error_set(cfx_status status, const char *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Same, but the message is taken verbatim (no formatting); for long PyTorch texts. */
CFX_API int cfx_error_set_text(cfx_status status, const char *op, const char *text);

/* Whether an error is recorded, and its status (CFX_OK when none). */
CFX_API bool cfx_error_occurred(void);
CFX_API cfx_status cfx_error_status(void);
/* The message of the first error, or NULL. Valid until cfx_error_clear(). */
CFX_API const char *cfx_error_message(void);
/* The operator name recorded with the error, or NULL. */
CFX_API const char *cfx_error_op(void);
/* The user's call site recorded with the error (file NULL when unknown). */
CFX_API cfx_site cfx_error_site(void);
CFX_API void cfx_error_clear(void);

/* The C call site of the op currently being called on this thread (set by op wrappers). */
CFX_API const cfx_site *cfx_current_site(void);
/* Sets it; returns the previous one. */
CFX_API const cfx_site *cfx_set_current_site(const cfx_site *site);

/* Warnings (kernel overrides, ...) go to stderr unless captured; tests capture them. */
typedef void (*cfx_warning_fn)(const char *message, void *ctx);
CFX_API void cfx_set_warning_handler(cfx_warning_fn fn, void *ctx); /* NULL restores stderr */
CFX_API void cfx_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
