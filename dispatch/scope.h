/* scope.h - autorelease scopes for tensors (and the arrays results come in).
 *
 * Model code calls operators and never frees intermediates: every tensor made while a scope is
 * open is put in the innermost scope of the thread and released when that scope ends, unless
 * the code took its own reference with cfx_tensor_retain (then it releases it later). This is
 * Objective-C's autorelease pool: scopes nest, are thread-local, and end in LIFO order.
 *
 *     cfx_scope s = cfx_scope_begin();
 *     cfx_tensor *y = cfx_relu(cfx_add(a, b));
 *     keep = cfx_tensor_retain(y);
 *     cfx_scope_end(s);
 */
#ifndef CFX_SCOPE_H
#define CFX_SCOPE_H

#include <stddef.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"

typedef struct cfx_scope {
    size_t mark; /* depth of the thread's pool stack when the scope began */
} cfx_scope;

CFX_API cfx_scope cfx_scope_begin(void);
/* Releases every tensor autoreleased since the matching begin. Ending a scope that is not
 * the innermost one also ends the scopes inside it. */
CFX_API void cfx_scope_end(cfx_scope s);
/* Puts t in the innermost scope (if any) and returns t; with no scope open it does nothing
 * and the caller keeps ownership. Used by every function that makes a tensor. */
CFX_API cfx_tensor *cfx_autorelease(cfx_tensor *t);
/* n bytes owned like a tensor result: freed when the innermost scope ends, or with no scope
 * open owned by the caller (free() it). For arrays a kernel returns, such as a Tensor[]'s.
 * NULL with the error recorded on allocation failure. */
CFX_API void *cfx_scope_alloc(size_t n);
/* Number of scopes open on this thread. */
CFX_API int cfx_scope_depth(void);

#endif
