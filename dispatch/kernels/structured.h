/* structured.h - the "meta functions" of the built-in structured operators.
 *
 * PyTorch splits a structured kernel into a meta function (checks + output metadata, shared
 * by every backend: TORCH_META_FUNC) and per-backend impls. These are the meta functions; the
 * CPU kernels run them and then compute, the Meta kernels run them and stop, so both report
 * the same errors in the same order and produce the same sizes, strides and dtype. */
#ifndef CFX_KERNELS_STRUCTURED_H
#define CFX_KERNELS_STRUCTURED_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/kernels/iter.h"

typedef enum cfx_binop { CFX_BINOP_ADD, CFX_BINOP_SUB, CFX_BINOP_MUL, CFX_BINOP_DIV } cfx_binop;
typedef enum cfx_unop {
    CFX_UNOP_NEG, CFX_UNOP_RELU, CFX_UNOP_SIN, CFX_UNOP_COS, CFX_UNOP_EXP
} cfx_unop;

/* add/sub/mul/div of in[0], in[1] (+ the in-place add_ when out != NULL): sub_check,
 * TensorIterator build, alpha_check (alpha is read for add and sub only).
 * cfx_structured_binary (inline, below) first tries a shortcut; cfx_structured_binary_full
 * runs every check in PyTorch's order. Both give the same result. */
CFX_KERNEL_INLINE bool cfx_structured_binary(cfx_iter *it, cfx_binop kind, const char *op, const cfx_tensor *out,
                                             const cfx_tensor *const in[2], const cfx_value *alpha);
bool cfx_structured_binary_full(cfx_iter *it, cfx_binop kind, const char *op, const cfx_tensor *out,
                                const cfx_tensor *const in[2], const cfx_value *alpha);
/* Their TensorIterator configs: [0] add/sub/mul, [1] div (integer inputs promote to float). */
extern const cfx_iter_config cfx_structured_binary_cfg[2];
/* neg/relu/sin/cos/exp on CPU. (relu's Meta kernel has its own rules: cfx_meta_relu.) */
bool cfx_structured_unary(cfx_iter *it, cfx_unop kind, const char *op, const cfx_tensor *a);

typedef struct cfx_reduce_shape {
    int ndim;                      /* of the output */
    cfx_dtype dtype;               /* of the output (and of the accumulation input) */
    int64_t sizes[CFX_MAX_DIMS];
    bool reduced[CFX_MAX_DIMS];    /* per input dim */
} cfx_reduce_shape;
/* sum.dim_IntList: dims wrapped then checked for repeats; dtype = dtype arg, else int64 for
 * integral/bool inputs, else the input's; output contiguous. */
bool cfx_structured_sum(cfx_reduce_shape *r, const char *op, const cfx_tensor *self, cfx_int_list dim,
                  bool keepdim, cfx_value dtype);

/* max.dim: dim wrapped (*wrapped), then zero_numel_check_dims ("max(): Expected reduction dim
 * 1 to have non-zero size."); r gets the shape of both outputs (size 1 at dim with keepdim)
 * and the values' dtype (self's); the indices are int64. Both outputs are contiguous. */
bool cfx_structured_max_dim(cfx_reduce_shape *r, int64_t *wrapped, const char *op, const cfx_tensor *self,
                            int64_t dim, bool keepdim);

/* _check_layer_norm_inputs (not a structured op, but shared by native_layer_norm's CPU and
 * composite kernels): normalized_shape non-empty, weight's and bias's shapes equal to it, the
 * input's trailing dims equal to it, in that order. *M is the product of the leading dims,
 * *N of the normalized ones. */
bool cfx_check_layer_norm_inputs(const char *op, const cfx_tensor *input, cfx_int_list normalized_shape,
                                 const cfx_tensor *weight, const cfx_tensor *bias, int64_t *M, int64_t *N);
/* The layout of native_layer_norm's mean and rstd: a contiguous [M] viewed as the input's
 * sizes[0..axis) followed by input->ndim - axis ones (input->ndim entries). */
void cfx_layer_norm_stat_layout(const cfx_tensor *input, int axis, int64_t M, int64_t *sizes, int64_t *strides);

/* mm: "self must be a matrix", "mat2 must be a matrix", "mat1 and mat2 shapes cannot be
 * multiplied (2x3 and 4x5)". */
bool cfx_structured_mm(const char *op, const cfx_tensor *a, const cfx_tensor *b);

/* The typed C value of a Scalar argument in dtype t (Scalar::to<scalar_t>()), as a double
 * for floating t, else int64 (bool -> 0/1). */
double cfx_scalar_to_double(cfx_value v);
int64_t cfx_scalar_to_int64(cfx_value v);

/* The shortcut of cfx_structured_binary, inlined into the kernels with the iterator's (see
 * iter.h for why): a new output, alpha a number, no bool operand of sub, and the iterator's
 * shortcut taken. Every check before the iterator then passes, so only alpha's check against
 * the result dtype is left; if that fails, the full path runs from the start to report the
 * errors in PyTorch's order.
 *
 * cfx_structured_binary_test is the shortcut's test alone, for a new output: true, with the
 * result dtype in *dt, when cfx_structured_binary takes its shortcut; the output then has
 * in[0]'s sizes and strides (cfx_iter_shortcut_test). A Meta kernel needs nothing else. */
CFX_KERNEL_INLINE bool cfx_structured_binary_test(cfx_binop kind, const cfx_tensor *const in[2],
                                                  const cfx_value *alpha, cfx_dtype *dt)
{
    bool has_alpha = kind == CFX_BINOP_ADD || kind == CFX_BINOP_SUB;
    if ((!has_alpha || cfx_value_is_number(*alpha)) &&
        (kind != CFX_BINOP_SUB || (in[0]->dtype != CFX_BOOL && in[1]->dtype != CFX_BOOL)) &&
        /* cfx_structured_binary_cfg[kind == DIV].int_to_float, as a constant (test_iter.c checks) */
        cfx_iter_shortcut_test(kind == CFX_BINOP_DIV, in, 2, dt)) {
        bool floating = *dt == CFX_FLOAT32 || *dt == CFX_FLOAT64;
        if (!has_alpha || ((alpha->kind != CFX_V_BOOL || *dt == CFX_BOOL) && (floating || alpha->kind != CFX_V_DOUBLE)))
            return true;
    }
    return false;
}

CFX_KERNEL_INLINE bool cfx_structured_binary(cfx_iter *it, cfx_binop kind, const char *op, const cfx_tensor *out,
                                             const cfx_tensor *const in[2], const cfx_value *alpha)
{
    cfx_dtype dt;
    if (!out && cfx_structured_binary_test(kind, in, alpha, &dt)) {
        cfx_iter_fill_shortcut(it, in[0], 2, dt);
        return true;
    }
    return cfx_structured_binary_full(it, kind, op, out, in, alpha);
}

#endif
