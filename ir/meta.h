/* meta.h - node.meta: what tracing learned about a node's value.
 *
 * FX keeps a string-keyed dict per node. The entries every layer relies on get typed slots:
 *   val          the fake value: tensor metadata (dtype, shape, stride, device, storage offset),
 *                a scalar (int / double / bool), a tuple or list of those, an effect
 *                token (its tensor's metadata, under a kind of its own), or a script
 *                object's class;
 *   tensor_meta  FX's TensorMetadata (shape, dtype, requires_grad, stride, memory_format,
 *                is_quantized, qparams) as ShapeProp / make_fx compute it;
 *   stack_trace  the C call site (file:line, function) of the model's op call.
 * Anything else is a free-form entry: string key -> cfx_value. Meta lives out of line in the
 * graph's arena and is allocated only when first set; setting copies (deeply) into the arena. */
#ifndef CFX_IR_META_H
#define CFX_IR_META_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/error.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"
#include "ir/node.h"

typedef enum cfx_meta_val_kind {
    CFX_MVAL_NONE = 0,
    CFX_MVAL_TENSOR,
    CFX_MVAL_INT,
    CFX_MVAL_DOUBLE,
    CFX_MVAL_BOOL,
    CFX_MVAL_TUPLE,
    CFX_MVAL_OBJECT, /* a script object: class name ("__torch__.torch.classes.ns.Cls") */
    CFX_MVAL_LIST,   /* as TUPLE; what an op returning Tensor[] gives (make_fx keeps the list) */
    CFX_MVAL_TOKEN,  /* an effect token (CFX_V_TOKEN): the TENSOR fields of its tensor, which
                        2.13's val is (FakeTensor of size (0,)), under a kind of its own */
} cfx_meta_val_kind;

typedef struct cfx_meta_val {
    uint8_t kind;                  /* cfx_meta_val_kind */
    int8_t dtype;                  /* TENSOR, TOKEN: cfx_dtype */
    cfx_device device;             /* TENSOR, TOKEN */
    int32_t n;                     /* TENSOR, TOKEN: ndim; TUPLE, LIST: item count */
    const int64_t *sizes, *strides; /* TENSOR, TOKEN: n entries each */
    int64_t storage_offset;        /* TENSOR, TOKEN */
    union {
        int64_t i;
        double d;
        bool b;
        const struct cfx_meta_val *items; /* TUPLE, LIST */
        const char *class_name;           /* OBJECT */
    } u;
} cfx_meta_val;

/* A free-form entry (meta.c). */
typedef struct cfx_meta_entry {
    const char *key; /* interned */
    cfx_value value;
} cfx_meta_entry;

/* node.meta. Public so the getters below inline; written only by the functions here. A
 * record without free-form entries is shared: hash-consed on (val, tensor_meta, stack_trace)
 * and never written; the first free-form entry (or a val that is not a tensor) gives the node
 * a private copy. */
#define CFX_META_SHARED UINT32_MAX
struct cfx_meta {
    const struct cfx_meta_val *val;            /* hash-consed when a tensor */
    const struct cfx_tensor_meta *tensor_meta; /* hash-consed */
    const cfx_site *stack_trace;               /* hash-consed; NULL: unset */
    cfx_meta_entry *entries;
    uint32_t n_entries, cap_entries;           /* cap_entries == CFX_META_SHARED: shared */
};

/* -1 in memory_format means None. */
typedef struct cfx_tensor_meta {
    int32_t ndim;
    int8_t dtype;           /* cfx_dtype */
    int8_t memory_format;   /* cfx_memory_format, or -1 */
    bool requires_grad;
    bool is_quantized;      /* cfx has no quantized tensors: false, qparams {} */
    const int64_t *shape, *stride;
} cfx_tensor_meta;

/* The first of contiguous_format, channels_last, channels_last_3d the strides are contiguous
 * in (PyTorch's is_contiguous(memory_format=...)), or -1 for None. */
CFX_API int cfx_memory_format_of(const int64_t *sizes, const int64_t *strides, int ndim);

/* val */
CFX_API int cfx_node_set_val(cfx_node *n, const cfx_meta_val *v);              /* deep copy */
CFX_API int cfx_node_set_val_tensor(cfx_node *n, const cfx_tensor *t);          /* from a (fake) tensor */
/* NULL if unset */
static inline const cfx_meta_val *cfx_node_val(const cfx_node *n) { return n->meta ? n->meta->val : NULL; }

/* tensor_meta */
CFX_API int cfx_node_set_tensor_meta(cfx_node *n, const cfx_tensor_meta *tm);  /* deep copy */
CFX_API int cfx_node_set_tensor_meta_from_tensor(cfx_node *n, const cfx_tensor *t, bool requires_grad);
static inline const cfx_tensor_meta *cfx_node_tensor_meta(const cfx_node *n) { return n->meta ? n->meta->tensor_meta : NULL; }
/* "TensorMetadata(shape=torch.Size([2, 3]), dtype=torch.float32, requires_grad=False,
 *  stride=(3, 1), memory_format=torch.contiguous_format, is_quantized=False, qparams={})" */
CFX_API void cfx_tensor_meta_print(const cfx_tensor_meta *tm, cfx_buf *b);

/* set_meta of a traced op's tensor result in one call: stack_trace from site (left as it is
 * when site is NULL), val from t as a FakeTensor on *val_device (left as it is when val_device
 * is NULL: a real tensor gets no val), tensor_meta from t with requires_grad. The same as
 * cfx_node_set_stack_trace + cfx_node_set_val (tensor val) +
 * cfx_node_set_tensor_meta_from_tensor, except that on error nothing is set and that a node
 * with shared meta moves to its new record once, not once per slot. */
CFX_API int cfx_node_set_result_meta(cfx_node *n, const cfx_site *site, const cfx_tensor *t,
                                     const cfx_device *val_device, bool requires_grad);

/* stack_trace: the site is copied (strings interned in the graph). */
CFX_API int cfx_node_set_stack_trace(cfx_node *n, const cfx_site *site);
static inline const cfx_site *cfx_node_stack_trace(const cfx_node *n) { return n->meta ? n->meta->stack_trace : NULL; }

/* Free-form entries, in insertion order; setting an existing key replaces its value in place.
 * Node references inside entry values are not uses (as in FX). */
CFX_API int cfx_node_meta_set(cfx_node *n, const char *key, cfx_value v);
CFX_API const cfx_value *cfx_node_meta_get(const cfx_node *n, const char *key);
CFX_API bool cfx_node_meta_remove(cfx_node *n, const char *key);
static inline uint32_t cfx_node_meta_count(const cfx_node *n) { return n->meta ? n->meta->n_entries : 0; }
CFX_API const char *cfx_node_meta_key(const cfx_node *n, uint32_t i);
CFX_API const cfx_value *cfx_node_meta_value(const cfx_node *n, uint32_t i);

/* copy.copy(src.meta) into dst (dst may be in another graph): replaces dst's meta. */
CFX_API int cfx_node_meta_copy(cfx_node *dst, const cfx_node *src);

#endif
