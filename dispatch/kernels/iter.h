/* iter.h - TensorIterator's metadata half: broadcast shape, common dtype and device, and the
 * strides of a freshly allocated output.
 *
 * PyTorch's elementwise kernels all go through TensorIterator::build, whose observable
 * results are (1) the errors it raises, in its order: memory overlap, broadcasting, device
 * mixing, unsafe casts into an in-place output; (2) the result dtype (result_type rules:
 * dimensioned tensors > zero-dim tensors, by category bool < integral < floating); and (3) the
 * output layout, which follows the inputs' memory order (fast paths for all-contiguous,
 * all-channels-last and identically-strided dense inputs; otherwise an insertion sort of the
 * dimensions by stride, see reorder_dimensions). cfx_iter_build computes exactly these for the
 * CPU kernels. (PyTorch 2.13's Meta kernels of these ops are Python references, with a layout
 * rule of their own: prims.h.)
 *
 * One CPU-only quirk is kept: on CPU, TensorIterator replaces an input whose dtype differs from
 * the common dtype with a converted temporary laid out like empty_like(input), which can
 * change the output layout of a mixed-dtype op on a non-dense input. */
#ifndef CFX_KERNELS_ITER_H
#define CFX_KERNELS_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/tensor.h"

/* The TensorIteratorConfig flags of one family of ops; static, shared by its calls. */
typedef struct cfx_iter_config {
    bool promote_inputs;     /* promote_inputs_to_common_dtype */
    bool int_to_float;       /* promote_integer_inputs_to_float (div, sin, ...) */
    bool allow_cpu_scalars;  /* a 0-dim CPU input may join a Meta computation */
    bool check_mem_overlap;
} cfx_iter_config;

typedef struct cfx_iter {
    int ndim;
    int ninputs;
    bool all_same_shape;
    cfx_dtype common_dtype;
    cfx_device device;       /* the common device */
    /* The broadcast shape and a new output's strides (out_strides is not computed for
     * in-place). Each points into the buffers below or, when an input's own array already
     * holds exactly those values, at that array (the common case: no copies), so they are
     * valid only while the inputs are. */
    const int64_t *shape;
    const int64_t *out_strides;
    int64_t shape_buf[CFX_MAX_DIMS];
    int64_t strides_buf[CFX_MAX_DIMS];
} cfx_iter;

enum { CFX_ITER_MAX_INPUTS = 3 }; /* binary ops, and addcmul's ternary one */

/* TensorIterator::build for out = f(in[0], ..., in[nin-1]), nin <= 3, under op's name (for
 * error records). out is the in-place output (also one of the inputs) or NULL for a new
 * output, whose strides are then computed. Returns false with the error recorded. */
bool cfx_iter_build(cfx_iter *it, const cfx_iter_config *cfg, const char *op, const cfx_tensor *out,
                    const cfx_tensor *const *in, int nin);

/* compute_fast_setup_type + fast_set_up's output strides for inputs that all have the given
 * shape (after the CPU promotion temporaries): all contiguous -> contiguous strides, all
 * channels-last contiguous -> channels-last strides, all non-overlapping and dense with
 * identical strides -> those strides. false (out clobbered) when none applies; the general
 * layout (cfx_iter_output_strides) then decides. */
bool cfx_iter_fast_setup_strides(const int64_t *shape, int ndim, const int64_t *const *strides, int nin,
                                 int64_t *out);

/* Allocates the output described by it (dtype it->common_dtype unless out_dtype >= 0) on
 * device dev. */
static inline cfx_tensor *cfx_iter_new_output(const cfx_iter *it, int out_dtype, cfx_device dev)
{
    cfx_dtype dt = out_dtype >= 0 ? (cfx_dtype)out_dtype : it->common_dtype;
    return cfx_tensor_new_strided(it->shape, it->out_strides, it->ndim, dt, dev);
}

/* TensorIterator's reorder_dimensions + allocate_or_resize_outputs on explicit stride lists
 * (already broadcast to shape; 0 = broadcast dim), without the fast paths. */
void cfx_iter_output_strides(const int64_t *shape, int ndim, const int64_t *const *strides,
                             int nstrides, int64_t *out);

/* assert_no_internal_overlap / assert_no_partial_overlap's tests (dense tensors only; "too
 * hard" is no), for kernels that write without building an iterator (copy_). */
bool cfx_iter_internal_overlap(const cfx_tensor *t);
/* assert_no_internal_overlap(t) for op: false with 2.13's "unsupported operation: more than
 * one element of the written-to tensor refers to a single memory location. ..." */
bool cfx_iter_check_no_internal_overlap(const char *op, const cfx_tensor *t);
bool cfx_iter_partial_overlap(const cfx_tensor *a, const cfx_tensor *b);

/* c10 type-promotion helpers. */
typedef struct cfx_result_type_state {
    int dim_result, zero_result, wrapped_result; /* -1 = undefined */
} cfx_result_type_state;
#define CFX_RESULT_TYPE_INIT {-1, -1, -1}
void cfx_result_type_update(cfx_result_type_state *s, const cfx_tensor *t);
cfx_dtype cfx_result_type(const cfx_result_type_state *s);
bool cfx_dtype_can_cast(cfx_dtype from, cfx_dtype to);
/* A kernel without a complex path meeting a complex input: false, else true with the error
 * recorded: "\"kernel\" not implemented for 'ComplexFloat'" (PyTorch's dtype dispatch) when
 * kernel is given, else fn's own check (PyTorch's "max(): does not support complex input")
 * when fn is given, else a cfx message (PyTorch computes this op on complex, cfx does not). */
bool cfx_kernel_refuse_complex(const char *op, const char *kernel, const char *fn, const cfx_tensor *t);
/* PyTorch's dtype dispatch finding no case for dt: "\"kernel\" not implemented for 'Long'",
 * a NotImplementedError (CFX_ERR_NOTIMPL). Returns false. */
bool cfx_kernel_not_implemented(const char *op, const char *kernel, cfx_dtype dt);
/* c10's ScalarType names as printed in messages: "Float", "Long", "Bool". */
const char *cfx_dtype_scalar_name(cfx_dtype t);
/* caffe2::TypeMeta's names (the C++ type) as other messages print them: "float", "long int". */
const char *cfx_dtype_type_meta_name(cfx_dtype t);
static inline bool cfx_dtype_is_integral(cfx_dtype t, bool include_bool)
{
    return t == CFX_INT32 || t == CFX_INT64 || t == CFX_UINT8 || t == CFX_INT8 || t == CFX_INT16 ||
           (include_bool && t == CFX_BOOL);
}

#endif
