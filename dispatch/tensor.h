/* tensor.h - cfx_tensor: sizes, strides, storage offset, shared storage, key set.
 *
 * A tensor is a view (sizes, strides, offset, dtype, device) onto a refcounted storage. Views
 * made by view/t share the storage and its version counter, as PyTorch's TensorImpl shares
 * VariableVersion. Meta tensors have a storage with no data (nbytes is still tracked, as
 * PyTorch's meta storage does), so every shape-only computation is exact.
 *
 * Ownership: tensors are refcounted. A tensor made while a scope is open (scope.h) is
 * autoreleased into that scope and freed when it ends unless retained; made with no scope
 * open, the caller owns the one reference and releases it. A tensor belongs to one thread at
 * a time (refcounts are not atomic). */
#ifndef CFX_TENSOR_H
#define CFX_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/dtype.h"
#include "dispatch/keys.h"
#include "dispatch/value.h"

#define CFX_MAX_DIMS 64   /* PyTorch's limit is also 64 */
#define CFX_INLINE_DIMS 4 /* sizes/strides of up to 4 dims live in the header, no malloc */

/* A storage lives inside the header of the tensor that made it (own_storage below): one
 * allocation per fresh tensor. Views hold a reference to it, so a header whose tensor has died
 * stays allocated until the last view of its storage is released (tensor.c). */
typedef struct cfx_storage {
    int32_t refcount;
    uint32_t version; /* bumped by every in-place write through any view */
    size_t nbytes;
    void *data;       /* NULL for meta storage */
    cfx_device device;
} cfx_storage;

struct cfx_mode;
struct cfx_fake_meta;

/* One tracer's record on a tensor (tensor_ext.h). */
typedef struct cfx_tensor_binding {
    uint64_t owner;             /* 0 = unused */
    void *data;
    void (*free_fn)(void *data); /* may be NULL */
} cfx_tensor_binding;

/* Bindings held in the header itself: one tracer (and one nested one) never allocate. */
#define CFX_TENSOR_EXT_INLINE_BINDINGS 2

/* The state modes attach to a tensor: its mode, fake device and tracer bindings. What it
 * means is tensor_ext.h's business; it is kept in the header so that making a fake tensor
 * and binding it to a graph node allocate nothing. Empty (no mode, no bindings) for a plain
 * tensor. */
struct cfx_tensor_ext {
    struct cfx_mode *mode;  /* strong reference, or NULL */
    cfx_device fake_device; /* meaningful when is_fake (not cleared otherwise) */
    bool is_fake;           /* mode is a fake mode and the tensor is one of its fakes */
    /* a fake's metadata as its mode's interned record (dispatch/fake_meta.c), or NULL: not
     * computed yet */
    const struct cfx_fake_meta *fake_meta;
    uint32_t n_bindings;    /* slots used (cleared ones included) */
    uint32_t cap_bindings;  /* always valid: the inline slots' count until more are needed */
    cfx_tensor_binding *bindings; /* always valid: inline_bindings until more are needed */
    cfx_tensor_binding inline_bindings[CFX_TENSOR_EXT_INLINE_BINDINGS];
};

/* What a live tensor header carries in `magic` (cleared when the tensor dies). */
#define CFX_TENSOR_MAGIC 0x7e5a0cf5u

struct cfx_tensor {
    uint32_t magic;
    int32_t refcount;
    int8_t dtype;  /* cfx_dtype */
    int8_t ndim;
    cfx_device device;
    bool is_wrapped_number; /* a number given where a Tensor goes (cfx_num); in the padding */
    int64_t storage_offset; /* in elements */
    cfx_storage *storage;   /* &own_storage for a fresh tensor, a shared one for a view */
    cfx_keyset keys;
    int64_t *sizes;         /* ndim entries; point into dims_inline when ndim <= 4 (and
                             * while the header waits on a free list) */
    int64_t *strides;
    struct cfx_tensor_ext ext; /* mode state (tensor_ext.h); not copied into views */
    int64_t dims_inline[2 * CFX_INLINE_DIMS];
    cfx_storage own_storage; /* the storage of a fresh tensor; unused by views */
};

/* Creation: contiguous, uninitialised (CPU data is zero-filled for determinism). NULL + error
 * on bad sizes (negative) or allocation failure. */
CFX_API cfx_tensor *cfx_tensor_new(const int64_t *sizes, int ndim, cfx_dtype dtype, cfx_device device);
CFX_API cfx_tensor *cfx_tensor_new_strided(const int64_t *sizes, const int64_t *strides, int ndim,
                                           cfx_dtype dtype, cfx_device device);
/* A new tensor header viewing t's storage (refcount on the storage). */
CFX_API cfx_tensor *cfx_tensor_new_view(cfx_tensor *t, const int64_t *sizes, const int64_t *strides,
                                        int ndim, int64_t storage_offset);
/* CPU tensors from C data (copied). */
CFX_API cfx_tensor *cfx_tensor_from_floats(const float *data, const int64_t *sizes, int ndim);
CFX_API cfx_tensor *cfx_tensor_from_doubles(const double *data, const int64_t *sizes, int ndim);
CFX_API cfx_tensor *cfx_tensor_from_int64s(const int64_t *data, const int64_t *sizes, int ndim);
CFX_API cfx_tensor *cfx_tensor_scalar_double(double v, cfx_dtype dtype); /* 0-dim */

/* Numbers as operands: PyTorch's `x * 2` passes the number as a wrapped number, a 0-dim CPU
 * tensor (int64, float64 or bool, as scalar_to_tensor makes it) marked is_wrapped_number, which
 * type promotion ranks below every tensor (an int does not promote a float32 tensor, a float
 * promotes an int tensor to float32) and which modes (make_fx) see as the number itself, so the
 * graph records `mul.Tensor(relu, 2)`. In C: cfx_mul(x, cfx_num(2)), cfx_div(q, cfx_num(8.0)).
 * The tensor is owned like any new tensor (the innermost scope's). C's `true` is an int:
 * a bool is cfx_num((bool)true) or cfx_num_bool(true). */
CFX_API cfx_tensor *cfx_num_int(int64_t v);
CFX_API cfx_tensor *cfx_num_double(double v);
CFX_API cfx_tensor *cfx_num_bool(bool v);
/* The wrapped number of a number value (INT, DOUBLE or BOOL); NULL + error otherwise. */
CFX_API cfx_tensor *cfx_num_value(cfx_value v);
#define cfx_num(x)                                                                              \
    _Generic((x), bool: cfx_num_bool, float: cfx_num_double, double: cfx_num_double,            \
             long double: cfx_num_double, default: cfx_num_int)(x)
static inline bool cfx_tensor_is_wrapped_number(const cfx_tensor *t) { return t && t->is_wrapped_number; }

CFX_API cfx_tensor *cfx_tensor_retain(cfx_tensor *t); /* NULL-safe; returns t */
CFX_API void cfx_tensor_release(cfx_tensor *t);       /* NULL-safe */
/* Whether p points at a live tensor header: aligned, readable memory holding CFX_TENSOR_MAGIC
 * and a positive refcount. For pointers of unknown origin (what a C function returned under a
 * signature it may not match); never faults (two system calls: not for hot paths). */
CFX_API bool cfx_tensor_pointer_is_live(const void *p);

CFX_API int64_t cfx_tensor_numel(const cfx_tensor *t);
CFX_API bool cfx_tensor_is_contiguous(const cfx_tensor *t);
/* Pointer to element 0 of the view (storage data + offset); NULL for meta. */
CFX_API void *cfx_tensor_data(const cfx_tensor *t);
static inline cfx_dtype cfx_tensor_dtype(const cfx_tensor *t) { return (cfx_dtype)t->dtype; }
static inline bool cfx_tensor_is_meta(const cfx_tensor *t) { return t->device.type == CFX_DEVICE_META; }
/* Element i (in row-major logical order) as double; for tests and printing. */
CFX_API double cfx_tensor_get_double(const cfx_tensor *t, int64_t linear_index);
CFX_API void cfx_tensor_bump_version(cfx_tensor *t);
static inline uint32_t cfx_tensor_version(const cfx_tensor *t) { return t->storage->version; }

/* Contiguous strides for sizes (strides of size-1 dims follow PyTorch: product of the rest). */
CFX_API void cfx_contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides_out);

/* "tensor([[1., 2.], [3., 4.]])" / "tensor(..., device='meta', size=(2, 3))" as PyTorch's repr. */
CFX_API void cfx_tensor_print(const cfx_tensor *t, cfx_buf *b);
/* "[2, 3]" */
CFX_API void cfx_tensor_print_sizes(const cfx_tensor *t, cfx_buf *b);

/* Tensors alive in the process (made and not yet freed), for tests and leak checks. */
CFX_API int64_t cfx_tensor_live_count(void);

#endif
