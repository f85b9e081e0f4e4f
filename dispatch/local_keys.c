/* local_keys.c - the thread-local included/excluded key sets (c10::impl::LocalDispatchKeySet)
 * and the guards that change them for a scope.
 *
 * Every dispatch ORs the included set into the arguments' keys and removes the excluded set,
 * so reading them is one TLS load (keys_internal.h). A new thread starts with the defaults
 * (included {BackendSelect, ADInplaceOrView}, excluded every Autocast key) from the variable's
 * constant initializer, which the TLS image carries: c10 stores the sets XOR'ed with the
 * defaults so that zero-filled TLS means "defaults" (a C++ thread_local with a non-constant
 * initializer needs a guard on every access); a C11 _Thread_local needs neither.
 *
 * c10's Include/ExcludeDispatchKeyGuard add only the keys that were missing and remove those on
 * exit; these guards save the whole state and put it back, which is the same when scopes nest
 * properly and also undoes any unbalanced change made inside the scope. */
#include "dispatch/keys_internal.h"

_Thread_local cfx_local_keys cfx_local_keys_tls = {{CFX_KEYS_DEFAULT_INCLUDED}, {CFX_KEYS_DEFAULT_EXCLUDED}};

cfx_local_keys cfx_local_keys_get(void) { return cfx_keys_local(); }
void cfx_local_keys_set(cfx_local_keys k) { cfx_keys_set_local(k); }

void cfx_include_keys_begin(cfx_key_guard *g, cfx_keyset s)
{
    cfx_local_keys k = cfx_keys_local();
    g->saved = k;
    k.included = cfx_keyset_or(k.included, s);
    cfx_keys_set_local(k);
}

void cfx_exclude_keys_begin(cfx_key_guard *g, cfx_keyset s)
{
    cfx_local_keys k = cfx_keys_local();
    g->saved = k;
    k.excluded = cfx_keyset_or(k.excluded, s);
    cfx_keys_set_local(k);
}

void cfx_key_guard_end(cfx_key_guard *g) { cfx_keys_set_local(g->saved); }
