/* getitem.h - Python's tensor indexing, x[...], for C: the exact operator calls PyTorch's
 * __getitem__ makes, so make_fx records the same graph.
 *
 *     cfx_getitem(x, CFX_ALL, CFX_SLICE(1, 3))     x[:, 1:3]
 *     cfx_getitem(x, CFX_I(0))                     x[0]
 *     cfx_getitem(x, CFX_ELLIPSIS, CFX_NEWAXIS)    x[..., None]
 *     cfx_getitem(x, CFX_FROM(-2), CFX_IDX(t))     x[-2:, t]
 *
 * Each index is one of: an integer (CFX_I), a slice (CFX_ALL ":", CFX_SLICE(a, b) "a:b",
 * CFX_SLICE3(a, b, s) "a:b:s", CFX_FROM(a) "a:", CFX_TO(b) ":b"), CFX_NEWAXIS (None),
 * CFX_ELLIPSIS, or an index tensor (CFX_IDX(t): long, int or bool). One index is Python's
 * x[i] (no tuple): an integer is select(x, 0, i), a slice always a slice.Tensor, None an
 * unsqueeze(x, 0), Ellipsis alias(x). Several are the tuple form (applySlicing): integers
 * select, a slice that spans its whole dim is skipped, None unsqueezes, Ellipsis skips the
 * dims no other index names, tensors become one index.Tensor call at the end, and a result
 * that is x itself becomes alias(x). Bad indices fail with PyTorch's texts ("too many indices
 * for tensor of dimension 2", "index 5 is out of bounds for dimension 0 with size 3",
 * "step must be greater than zero"). */
#ifndef CFX_GETITEM_H
#define CFX_GETITEM_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/error.h"
#include "dispatch/export.h"
#include "dispatch/tensor.h"

typedef enum cfx_index_kind {
    CFX_INDEX_INT = 1,
    CFX_INDEX_SLICE,
    CFX_INDEX_NONE,
    CFX_INDEX_ELLIPSIS,
    CFX_INDEX_TENSOR,
} cfx_index_kind;

typedef struct cfx_index {
    cfx_index_kind kind;
    bool has_start, has_stop; /* a slice's omitted bounds are Python's None */
    int64_t start, stop, step; /* CFX_INDEX_INT: start is the integer */
    cfx_tensor *tensor;
} cfx_index;

#define CFX_I(i) ((cfx_index){.kind = CFX_INDEX_INT, .start = (i)})
#define CFX_ALL ((cfx_index){.kind = CFX_INDEX_SLICE, .step = 1})
#define CFX_SLICE(a, b) ((cfx_index){.kind = CFX_INDEX_SLICE, .has_start = true, .has_stop = true, .start = (a), .stop = (b), .step = 1})
#define CFX_SLICE3(a, b, s) ((cfx_index){.kind = CFX_INDEX_SLICE, .has_start = true, .has_stop = true, .start = (a), .stop = (b), .step = (s)})
#define CFX_FROM(a) ((cfx_index){.kind = CFX_INDEX_SLICE, .has_start = true, .start = (a), .step = 1})
#define CFX_TO(b) ((cfx_index){.kind = CFX_INDEX_SLICE, .has_stop = true, .stop = (b), .step = 1})
#define CFX_STEP(s) ((cfx_index){.kind = CFX_INDEX_SLICE, .step = (s)})
#define CFX_NEWAXIS ((cfx_index){.kind = CFX_INDEX_NONE})
#define CFX_ELLIPSIS ((cfx_index){.kind = CFX_INDEX_ELLIPSIS})
#define CFX_IDX(t) ((cfx_index){.kind = CFX_INDEX_TENSOR, .tensor = (t)})

/* x[idx[0], ..., idx[n-1]] (n == 1: x[idx[0]]). A new tensor (a view unless a tensor index
 * is given), autoreleased like every operator result; NULL with the error recorded. site is
 * the user's call site (NULL: keep the current one). */
CFX_API cfx_tensor *cfx_getitem_at(const cfx_site *site, cfx_tensor *x, const cfx_index *idx, int n);

#define cfx_getitem(x, ...)                                                                 \
    cfx_getitem_at(CFX_HERE, (x), (const cfx_index[]){__VA_ARGS__},                         \
                   (int)(sizeof((const cfx_index[]){__VA_ARGS__}) / sizeof(cfx_index)))

/* Python's x[idx[0], ..., idx[n-1]] = value: value is a tensor, or a number given as a wrapped
 * number (cfx_num(0), cfx_num(2.5)), which becomes a tensor of x's dtype as Python's
 * valueToTensor makes it (a lifted constant). Writes x's elements through views of it (copy_,
 * fill_ or index_put_, as THPVariable_setitem calls them). CFX_OK, or the error's status.
 *
 *     cfx_setitem(x, cfx_num(0), CFX_ALL, CFX_SLICE(1, 3))     x[:, 1:3] = 0
 *     cfx_setitem(x, v, CFX_I(0))                             x[0] = v
 *     cfx_setitem(x, t, CFX_ELLIPSIS, CFX_I(1))               x[..., 1] = t */
CFX_API int cfx_setitem_at(const cfx_site *site, cfx_tensor *x, const cfx_index *idx, int n, cfx_tensor *value);

#define cfx_setitem(x, value, ...)                                                          \
    cfx_setitem_at(CFX_HERE, (x), (const cfx_index[]){__VA_ARGS__},                         \
                   (int)(sizeof((const cfx_index[]){__VA_ARGS__}) / sizeof(cfx_index)), (value))

#endif
