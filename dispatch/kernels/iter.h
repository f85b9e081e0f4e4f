/* iter.h - TensorIterator's metadata half: broadcast shape, common dtype and device, and the
 * strides of a freshly allocated output.
 *
 * PyTorch's elementwise kernels all go through TensorIterator::build, whose observable
 * results are (1) the errors it raises, in its order: memory overlap, broadcasting, device
 * mixing, unsafe casts into an in-place output; (2) the result dtype (result_type rules:
 * dimensioned tensors > zero-dim tensors, by category bool < integral < floating); and (3) the
 * output layout, which follows the inputs' memory order (fast paths for all-contiguous,
 * all-channels-last and identically-strided dense inputs; otherwise an insertion sort of the
 * dimensions by stride, see reorder_dimensions). cfx_iter_build computes exactly these, and
 * both the CPU and the Meta kernels call it, so they always agree on metadata.
 *
 * One CPU-only quirk is kept: on CPU, TensorIterator replaces an input whose dtype differs from
 * the common dtype with a converted temporary laid out like empty_like(input), which can
 * change the output layout of a mixed-dtype op on a non-dense input. Meta skips it. */
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

/* The hot-path helpers of the kernel headers are forced inline: gcc's size heuristics would
 * otherwise keep one out-of-line copy per file, whose call and register saves cost about as
 * much as the work they do. */
#define CFX_KERNEL_INLINE static inline __attribute__((always_inline))

/* TensorIterator::build for out = f(in[0], ..., in[nin-1]), nin <= 3, under op's name (for
 * error records). out is the in-place output (also one of the inputs) or NULL for a new
 * output, whose strides are then computed. Returns false with the error recorded.
 * cfx_iter_build (inline, at the end) first tries a shortcut for the commonest call and
 * otherwise runs cfx_iter_build_full, every step of TensorIterator::build; both give the same
 * result. */
CFX_KERNEL_INLINE bool cfx_iter_build(cfx_iter *it, const cfx_iter_config *cfg, const char *op, const cfx_tensor *out,
                                      const cfx_tensor *const *in, int nin);
bool cfx_iter_build_full(cfx_iter *it, const cfx_iter_config *cfg, const char *op, const cfx_tensor *out,
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

/* The Meta output strides of aten::relu in PyTorch 1.13, whose Meta kernel is the Python
 * reference where(le(a, 0), 0, a): prims' compute_elementwise_output_strides over (a, the
 * TensorIterator layout of le(a, 0)), sorted the way CPython's sort orders them. Returns buf,
 * filled in, or a->strides when they already are the answer (contiguous strides, no size-1
 * dim after the first: the sort keeps the identity). _full always sorts, into buf. */
const int64_t *cfx_iter_relu_meta_strides_full(const cfx_tensor *a, int64_t *buf);
/* Whether the answer is a->strides: the sort keeps the identity when a's strides are positive
 * and strictly decreasing; the answer is then make_contiguous_strides_for(shape), which (size
 * 0 not scaling) is c10's contiguous strides. So an input with exactly those strides and no
 * size-1 dim after the first (the traced case) is its own answer. */
static inline __attribute__((always_inline)) bool cfx_iter_relu_meta_strides_own(const cfx_tensor *a)
{
    const int64_t *sizes = a->sizes, *strides = a->strides;
    int64_t z = 1;
    for (int d = a->ndim - 1; d > 0; d--) {
        if (strides[d] != z || sizes[d] < 2)
            return false;
        z *= sizes[d];
    }
    return a->ndim == 0 || strides[0] == z;
}
/* Inline, so that the Meta kernel's usual case makes no call. */
static inline __attribute__((always_inline)) const int64_t *cfx_iter_relu_meta_strides(const cfx_tensor *a,
                                                                                        int64_t *buf)
{
    return cfx_iter_relu_meta_strides_own(a) ? a->strides : cfx_iter_relu_meta_strides_full(a, buf);
}

/* c10 type-promotion helpers. */
typedef struct cfx_result_type_state {
    int dim_result, zero_result; /* -1 = undefined */
} cfx_result_type_state;
void cfx_result_type_update(cfx_result_type_state *s, const cfx_tensor *t);
cfx_dtype cfx_result_type(const cfx_result_type_state *s);
bool cfx_dtype_can_cast(cfx_dtype from, cfx_dtype to);
/* c10's ScalarType names as printed in messages: "Float", "Long", "Bool". */
const char *cfx_dtype_scalar_name(cfx_dtype t);
static inline bool cfx_dtype_is_integral(cfx_dtype t, bool include_bool)
{
    return t == CFX_INT32 || t == CFX_INT64 || (include_bool && t == CFX_BOOL);
}

/* ---- cfx_iter_build's shortcut --------------------------------------------------------------
 * Tracing calls the Meta kernels of elementwise ops once per node, so their metadata work is
 * on the tracer's hot path. The call the shortcut takes: a new output from inputs of one
 * dtype, device and shape, each with exactly the contiguous strides of that shape. Then
 * compute_mem_overlaps has no output to check, compute_shape no broadcast, compute_types no
 * promotion and no device error, and fast_set_up's answer is a contiguous output: the inputs'
 * own sizes and strides, which it->shape and it->out_strides point at. (On CPU, int_to_float
 * replaces the inputs by promotion temporaries laid out like empty_like: for a contiguous
 * input, its own strides.) Only the common dtype is left. Anything else goes to
 * cfx_iter_build_full. */

/* dtype, ndim and device sit side by side in the tensor header, so one 4-byte compare tells
 * whether two tensors agree on all three. */
_Static_assert(offsetof(cfx_tensor, ndim) == offsetof(cfx_tensor, dtype) + 1 &&
                   offsetof(cfx_tensor, device) == offsetof(cfx_tensor, dtype) + 2 && sizeof(cfx_device) == 2,
               "cfx_tensor's dtype, ndim and device must be 4 adjacent bytes");
static inline uint32_t cfx_iter_kind_word(const cfx_tensor *t)
{
    uint32_t w;
    memcpy(&w, (const char *)t + offsetof(cfx_tensor, dtype), sizeof w);
    return w;
}

/* The shortcut's test alone: true, with the common dtype in *dt, when cfx_iter_shortcut takes
 * in under a config whose int_to_float is the one given (the output's shape and strides are
 * then in[0]'s). For kernels that need nothing else of the iterator, so that it is not filled
 * in and read back; with int_to_float a constant, its check folds away. */
CFX_KERNEL_INLINE bool cfx_iter_shortcut_test(bool int_to_float, const cfx_tensor *const *in, int nin, cfx_dtype *dt)
{
    const cfx_tensor *a = in[0];
    uint32_t kind = cfx_iter_kind_word(a);
    for (int i = 1; i < nin; i++)
        if (cfx_iter_kind_word(in[i]) != kind)
            return false;
    int n = a->ndim;
    const int64_t *sizes = a->sizes, *strides = a->strides;
    const int64_t *isz[CFX_ITER_MAX_INPUTS], *ist[CFX_ITER_MAX_INPUTS];
    for (int i = 1; i < nin; i++) {
        isz[i] = in[i]->sizes;
        ist[i] = in[i]->strides;
    }
    /* one pass over the dims checks every input against c10's contiguous strides of a's
     * sizes (size-0/1 dims do not scale the next stride); inlined with nin a constant, the
     * inner loop unrolls. The first dim's size scales nothing, so the loop stops before. */
    int64_t z = 1;
    for (int d = n - 1; d >= 0; d--) {
        int64_t s = sizes[d];
        if (strides[d] != z)
            return false;
        for (int i = 1; i < nin; i++)
            if (isz[i][d] != s || ist[i][d] != z)
                return false;
        if (d == 0)
            break;
        z *= s > 1 ? s : 1;
    }
    cfx_dtype t = (cfx_dtype)a->dtype;
    if (int_to_float && cfx_dtype_is_integral(t, true))
        t = CFX_FLOAT32; /* the default dtype */
    *dt = t;
    return true;
}

/* The iterator a passed shortcut test describes: nin inputs laid out like a, computing in dt. */
CFX_KERNEL_INLINE void cfx_iter_fill_shortcut(cfx_iter *it, const cfx_tensor *a, int nin, cfx_dtype dt)
{
    it->ninputs = nin;
    it->ndim = a->ndim;
    it->all_same_shape = true;
    it->common_dtype = dt;
    it->device = a->device;
    it->shape = a->sizes;
    it->out_strides = a->strides;
}

CFX_KERNEL_INLINE bool cfx_iter_shortcut(cfx_iter *it, const cfx_iter_config *cfg, const cfx_tensor *const *in,
                                         int nin)
{
    cfx_dtype dt;
    if (!cfx_iter_shortcut_test(cfg->int_to_float, in, nin, &dt))
        return false;
    cfx_iter_fill_shortcut(it, in[0], nin, dt);
    return true;
}

CFX_KERNEL_INLINE bool cfx_iter_build(cfx_iter *it, const cfx_iter_config *cfg, const char *op, const cfx_tensor *out,
                                      const cfx_tensor *const *in, int nin)
{
    if (!out && cfx_iter_shortcut(it, cfg, in, nin))
        return true;
    return cfx_iter_build_full(it, cfg, op, out, in, nin);
}

#endif
