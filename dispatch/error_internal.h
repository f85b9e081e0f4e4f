/* error_internal.h - the thread's current call site and error status, inline for the
 * generated entry points.
 *
 * Every operator call from user code sets the site on entry and restores it on exit
 * (ops_table.h); through cfx_set_current_site that was two calls into error.c per operator
 * call, for one thread-local store each. Likewise every kernel a boxed entry calls is
 * bracketed by two looks at the error status (cfx_box_kernel_failed), a call into error.c
 * each for one thread-local load. Not installed: the variables are hidden symbols. */
#ifndef CFX_ERROR_INTERNAL_H
#define CFX_ERROR_INTERNAL_H

#include "dispatch/error.h"

extern _Thread_local const cfx_site *cfx_current_site_tls;
extern _Thread_local cfx_status cfx_error_status_tls; /* the first error's status, CFX_OK: none */

/* cfx_error_occurred */
static inline bool cfx_error_pending(void) { return cfx_error_status_tls != CFX_OK; }

/* cfx_set_current_site */
static inline const cfx_site *cfx_error_swap_site(const cfx_site *site)
{
    const cfx_site *old = cfx_current_site_tls;
    cfx_current_site_tls = site;
    return old;
}

#endif
