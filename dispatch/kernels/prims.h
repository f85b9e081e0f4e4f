/* prims.h - PyTorch 2.13's Python meta path, on tensor metadata.
 *
 * In PyTorch 2.13 most Meta kernels are Python: torch/_meta_registrations.py installs, for
 * every op with a decomposition, the reference implementation of torch/_refs (built from the
 * torch/_prims primitives, checked by torch/_prims_common) as the op's Meta kernel, over the
 * C++ structured meta function. What those produce differs from TensorIterator's metadata:
 * inputs are converted to the computation dtype first, broadcasting fails with
 * _broadcast_shapes' text, devices with check_same_device's, and every elementwise prim lays
 * its output out by compute_elementwise_output_logical_to_physical_perm + empty_permuted.
 *
 * These are those helpers, one function per Python (or C++) helper, named in its comment, so
 * that the Meta kernels (pointwise_refs.c, meta/meta.c, norm.c, factory.c) replay a reference
 * step by step. They work on cfx_tmeta, a tensor's metadata without storage (prims'
 * TensorMeta): a chain of reference steps allocates nothing until its result. Functions that
 * can fail take the operator name for the error record and return false after recording it. */
#ifndef CFX_KERNELS_PRIMS_H
#define CFX_KERNELS_PRIMS_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/tensor.h"
#include "dispatch/value.h"

/* The most operands a prim takes here (where: pred, a, b). */
enum { CFX_PRIMS_MAX_ARGS = 3 };

/* A tensor's metadata. sizes and strides point at the described tensor's own arrays (which a
 * kernel does not change) until a step computes new ones: a step writes only into the tmeta's
 * own_sizes / own_strides and then points there. So describing a tensor copies no dims, and a
 * tmeta never points into another tmeta (copy one with cfx_tmeta_copy, never by assignment). */
typedef struct cfx_tmeta {
    int ndim;
    cfx_dtype dtype;
    cfx_device device;
    const int64_t *sizes;
    const int64_t *strides;
    int64_t own_sizes[CFX_MAX_DIMS];
    int64_t own_strides[CFX_MAX_DIMS];
} cfx_tmeta;

static inline void cfx_tmeta_of(cfx_tmeta *m, const cfx_tensor *t)
{
    m->ndim = t->ndim;
    m->dtype = (cfx_dtype)t->dtype;
    m->device = t->device;
    m->sizes = t->sizes;
    m->strides = t->strides;
}
/* *dst = *src: the dims src owns are copied into dst's own arrays (ndim entries). */
void cfx_tmeta_copy(cfx_tmeta *dst, const cfx_tmeta *src);
/* A new tensor with m's metadata (storage offset 0), as the reference's result. */
cfx_tensor *cfx_tmeta_new_tensor(const cfx_tmeta *m);
/* is_cpu_scalar_tensor: a 0-dim CPU tensor, which elementwise prims let join any device. */
static inline bool cfx_tmeta_is_cpu_scalar(const cfx_tmeta *m)
{
    return m->ndim == 0 && m->device.type == CFX_DEVICE_CPU;
}

/* Python's number types in _prims_common's order (bool < int < float); what a Scalar
 * argument is once it reaches a Python kernel. */
typedef enum cfx_pytype { CFX_PY_BOOL, CFX_PY_INT, CFX_PY_FLOAT, CFX_PY_COMPLEX } cfx_pytype;
/* dtype_to_type, which _prims_common spells out by dtype lists (bool, the integer dtypes, the
 * floating ones): a switch without default, so that -Wswitch asks for a new dtype's place. */
static inline cfx_pytype cfx_pytype_of_dtype(cfx_dtype t)
{
    switch (t) {
    case CFX_BOOL: return CFX_PY_BOOL;
    case CFX_INT32: case CFX_INT64: case CFX_UINT8: case CFX_INT8: case CFX_INT16: return CFX_PY_INT;
    case CFX_FLOAT32: case CFX_FLOAT64: return CFX_PY_FLOAT;
    case CFX_COMPLEX64: case CFX_COMPLEX128: return CFX_PY_COMPLEX;
    }
    return CFX_PY_INT; /* not a dtype code */
}
bool cfx_pytype_of_value(cfx_value v, cfx_pytype *out); /* false: not a number */
const char *cfx_pytype_repr(cfx_pytype t);             /* "<class 'int'>" */
/* is_weakly_lesser_type(a, b) */
static inline bool cfx_pytype_weakly_lesser(cfx_pytype a, cfx_pytype b) { return a <= b; }

/* ELEMENTWISE_TYPE_PROMOTION_KIND (and the prims' own kind). NO_OPMATH and COMPLEX_TO_FLOAT
 * are DEFAULT for the dtypes cfx has (no low-precision floats, no complex). */
typedef enum cfx_promotion { CFX_PROMOTE_DEFAULT, CFX_PROMOTE_INT_TO_FLOAT, CFX_PROMOTE_ALWAYS_BOOL } cfx_promotion;

/* elementwise_dtypes over the tensors ts[0..n) and numbers of the Python types nums[0..nn):
 * the computation dtype and the result dtype. */
void cfx_prims_elementwise_dtypes(const cfx_tmeta *const *ts, int n, const cfx_pytype *nums, int nn,
                                  cfx_promotion kind, cfx_dtype *compute, cfx_dtype *result);

/* t = t.to(dt): the tensor itself when its dtype is dt already (_to_will_alias), else C++
 * _to_copy with MemoryFormat::Preserve (dense strides kept, others made dense in the same
 * order). */
void cfx_prims_to_copy(cfx_tmeta *t, cfx_dtype dt);
static inline void cfx_prims_to(cfx_tmeta *t, cfx_dtype dt)
{
    if (t->dtype != dt)
        cfx_prims_to_copy(t, dt);
}
/* t = torch._refs.contiguous(t): kept when contiguous, else clone(contiguous_format). */
void cfx_prims_contiguous(cfx_tmeta *t);

/* _broadcast_shapes over the shapes of ts[0..n) (n <= CFX_PRIMS_MAX_ARGS), with its
 * "Attempting to broadcast a dimension of length ..." text: *common points at the common shape
 * (*ndim entries), which is one of the operands' sizes when it is one of them, else buf (room
 * for CFX_MAX_DIMS); bit i of *differs is set when ts[i]'s shape is not the common one. */
bool cfx_prims_broadcast_shapes(const char *op, const cfx_tmeta *const *ts, int n, int64_t *buf,
                                const int64_t **common, int *ndim, unsigned *differs);
/* t = t.expand(shape) (C++ inferExpandGeometry; shape is a broadcast of t's). */
void cfx_prims_expand(cfx_tmeta *t, const int64_t *shape, int ndim);
/* _maybe_broadcast(*ts), n <= CFX_PRIMS_MAX_ARGS: every tensor but a CPU scalar expanded to
 * the common shape. */
bool cfx_prims_maybe_broadcast(const char *op, cfx_tmeta *const *ts, int n);

/* compute_elementwise_output_logical_to_physical_perm(*ts), n <= CFX_PRIMS_MAX_ARGS: the
 * tensors other than CPU scalars, all of one shape, ordered. NULL stands for the identity (its
 * short-circuits: no tensors, 0 or 1 dims, all contiguous); else the permutation is written
 * into perm (ndim entries) and perm returned. */
const int *cfx_prims_l2p_perm(const cfx_tmeta *const *ts, int n, int *perm);
/* torch.empty_permuted(shape, perm): contiguous in the physical order perm (NULL: the
 * identity, as cfx_prims_l2p_perm gives it). */
void cfx_prims_empty_permuted(cfx_tmeta *out, const int64_t *shape, int ndim, const int *perm, cfx_dtype dtype,
                              cfx_device device);
/* _prim_elementwise_meta(*args[nfixed..n), args_with_fixed_dtypes=args[0..nfixed)) of a prim
 * with type promotion kind: the dtype and device checks, then an output laid out by the
 * permutation of every argument, in the dtype of the first non-fixed one that is not a CPU
 * scalar. */
bool cfx_prims_elementwise(const char *op, cfx_tmeta *out, const cfx_tmeta *const *args, int n, int nfixed,
                           cfx_promotion kind);

/* reduction_dims(shape, dims) (dims NULL: None): canonicalize_dim on each, then "duplicate
 * value in the list of dims"; reduced[d] for each of the ndim dims. */
bool cfx_prims_reduction_dims(const char *op, int ndim, const int64_t *dims, int ndims, bool *reduced);
/* _reduction_meta (a contiguous output of the reduced shape) followed, for keepdim, by
 * broadcast_in_dim to the kept shape, as torch._refs._reduction does. */
void cfx_prims_reduction(cfx_tmeta *out, const cfx_tmeta *in, const bool *reduced, bool keepdim);

/* Python reprs in error texts: "torch.Size([2, 3])" and the tuple "(3,)". */
void cfx_prims_put_size(cfx_buf *b, const int64_t *d, int n);
void cfx_prims_put_tuple(cfx_buf *b, const int64_t *d, int n);

#endif
