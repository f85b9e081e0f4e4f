/* structured.h - the C++ "meta functions" of the built-in structured operators.
 *
 * PyTorch splits a structured kernel into a meta function (checks + output metadata:
 * TORCH_META_FUNC) and per-backend impls. These are the meta functions the CPU kernels run
 * before they compute. In PyTorch 2.13 the Meta key no longer runs them: it runs the Python
 * meta registrations (prims.h, meta/meta.c), whose checks and texts differ ("a must be 2D"
 * where this says "self must be a matrix"). */
#ifndef CFX_KERNELS_STRUCTURED_H
#define CFX_KERNELS_STRUCTURED_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/kernels/iter.h"

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

/* _check_layer_norm_inputs (not a structured op; native_layer_norm's CPU kernel):
 * normalized_shape non-empty, weight's and bias's shapes equal to it, the
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
/* p[j] = the number in dtype dt: d for floating dtypes, i for integral ones, b for bool. */
void cfx_put_number(void *p, int64_t j, cfx_dtype dt, double d, int64_t i, bool b);

/* The matrix kernels' shared checks (dispatch/kernels/cpu/matrix.c): expand(self, sizes)'s
 * "The expanded size of the tensor ..." and dot_check (meta: the Python meta function's
 * wording, torch.float32 dtype names and its missing space in "thesame"). */
bool cfx_matrix_check_expand(const char *op, const cfx_tensor *self, const int64_t *sizes, int n);
bool cfx_matrix_check_dot(const char *op, const cfx_tensor *a, const cfx_tensor *b, bool meta);
bool cfx_matrix_check_bmm(const char *op, const cfx_tensor *b1, const cfx_tensor *b2); /* ranks, batch2 dims */

/* nll_loss_forward's meta checks (ranks, batch sizes, weight length); meta: sizes printed as
 * torch.Size and the rank message with ", got %dD" as the Python meta function words them. */
bool cfx_nll_loss_check(const char *op, const cfx_tensor *self, const cfx_tensor *target, const cfx_tensor *weight,
                        bool meta);

#endif
