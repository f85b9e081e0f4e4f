/* error_internal.h - the thread's current call site, inline for the generated entry points.
 *
 * Every operator call from user code sets the site on entry and restores it on exit
 * (ops_table.h); through cfx_set_current_site that was two calls into error.c per operator
 * call, for one thread-local store each. Not installed: the variable is a hidden symbol. */
#ifndef CFX_ERROR_INTERNAL_H
#define CFX_ERROR_INTERNAL_H

#include "dispatch/error.h"

extern _Thread_local const cfx_site *cfx_current_site_tls;

/* cfx_set_current_site */
static inline const cfx_site *cfx_error_swap_site(const cfx_site *site)
{
    const cfx_site *old = cfx_current_site_tls;
    cfx_current_site_tls = site;
    return old;
}

#endif
