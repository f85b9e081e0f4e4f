/* local_keys.c - the thread-local included/excluded key sets (c10::impl::LocalDispatchKeySet)
 * and the guards that change them for a scope.
 *
 * Every dispatch ORs the included set into the arguments' keys and removes the excluded set,
 * so reading them costs one TLS load (keys_internal.h) and no initialisation: the sets are
 * stored XOR'ed with the defaults (included {BackendSelect, ADInplaceOrView}, excluded every
 * Autocast key) exactly as c10 does, so a new thread's zero-filled TLS already means
 * "defaults".
 *
 * c10's Include/ExcludeDispatchKeyGuard add only the keys that were missing and remove those on
 * exit; these guards save the whole state and put it back, which is the same when scopes nest
 * properly and also undoes any unbalanced change made inside the scope. */
#include "dispatch/keys_internal.h"

_Thread_local cfx_local_keys cfx_local_keys_raw;

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
