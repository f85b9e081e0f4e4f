/* reduce.h - the dtype and dim rules of the reductions, shared by their CPU kernels
 * (cpu/reductions.c, the C++ meta functions' texts) and Meta kernels (meta/reductions.c,
 * 2.13's Python references' texts). Library-internal. */
#ifndef CFX_KERNELS_REDUCE_H
#define CFX_KERNELS_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/kernels/structured.h"

/* mean's output dtype: the dtype argument, else self's, which must be floating:
 * "mean(): could not infer output dtype. Input dtype must be either a floating point or complex
 * dtype. Got: Int" (C++ names; the reference's text says "torch.int32": python_names). */
bool cfx_reduce_mean_dtype(const char *op, const cfx_tensor *self, cfx_value dtype, bool python_names,
                           cfx_dtype *out);
/* get_dtype_from_self(self, dtype, promote_integers=true), prod's: the dtype argument, else
 * self's when floating, else int64. */
bool cfx_reduce_prod_dtype(const char *op, const cfx_tensor *self, cfx_value dtype, cfx_dtype *out);
/* zero_numel_check_dims for an empty self: no dims -> "<fn>: Expected reduction dim to be
 * specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.";
 * a dim of size 0 -> "<fn>: Expected reduction dim 1 to have non-zero size." */
bool cfx_reduce_zero_numel_check(const char *op, const char *fn, const cfx_tensor *self, cfx_int_list dims);
/* One wrapped dim w (keepdim: size 1 there), with zero_numel_check_dims under fn ("min()");
 * r->dtype is self's. */
bool cfx_reduce_one_dim(cfx_reduce_shape *r, int64_t *w, const char *op, const char *fn, const cfx_tensor *self,
                        int64_t dim, bool keepdim);
/* argmax/argmin's shape: dim None reduces everything (keepdim: all ones) and needs a non-empty
 * self ("<fn>: Expected reduction dim to be specified for input.numel() == 0."); else as
 * cfx_reduce_one_dim. fn is "argmax()" (C++) or "argmax" (the meta function's text). */
bool cfx_reduce_arg_shape(cfx_reduce_shape *r, const char *op, const char *fn, const cfx_tensor *self, cfx_value dim,
                          bool keepdim);

#endif
