/* op_api.h - what the generated operator API (tools/opgen) is written in: the C forms of
 * schema types and the spelling of list arguments.
 *
 * Every operator has a typed entry point cfx_op_<id>(site, args...) and a convenience macro
 * cfx_<name>(args...) (dispatch/ops.h lists the built-in ones; docs/ops.md documents them).
 * Schema types map to C types as dispatch/boxing.h says; lists are passed by value as views:
 *
 *     cfx_sum(x, CFX_INTS(0, 1), true)          int[] from a literal
 *     cfx_view(x, cfx_ints(sizes, n))           int[] from an array
 *     cfx_sum(x, CFX_NO_INTS)                   None for an int[]?
 *     cfx_cat(CFX_TENSORS(a, b), 1)             Tensor[] from a literal
 *
 * A macro given fewer arguments than the schema has fills in the schema's defaults for the
 * trailing ones (cfx_add(a, b) is add.Tensor with alpha=1). Several returns come back as a
 * struct with the schema's return names (cfx_max_dim(x, 1).values), which for all-tensor
 * returns is also an array (.t[0]). Optional values other than tensors and int lists are
 * cfx_values: cfx_none(), cfx_int(3), cfx_dtype_value(CFX_FLOAT64). */
#ifndef CFX_OP_API_H
#define CFX_OP_API_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/export.h"
#include "dispatch/keys.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"

static inline cfx_int_list cfx_ints(const int64_t *data, int64_t n) { return (cfx_int_list){data, n}; }
static inline cfx_tensor_list cfx_tensors(cfx_tensor *const *data, int64_t n) { return (cfx_tensor_list){data, n}; }

#define CFX_INTS(...) cfx_ints((const int64_t[]){__VA_ARGS__}, \
                               (int64_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define CFX_INTS_EMPTY ((cfx_int_list){NULL, 0})
#define CFX_NO_INTS ((cfx_int_list){NULL, -1}) /* None for an int[]? argument */
#define CFX_TENSORS(...) cfx_tensors((cfx_tensor *const[]){__VA_ARGS__}, \
                                     (int64_t)(sizeof((cfx_tensor *[]){__VA_ARGS__}) / sizeof(cfx_tensor *)))
#define CFX_TENSORS_EMPTY ((cfx_tensor_list){NULL, 0})

/* The convenience macros pick their arity with these (up to 64 arguments). */
#define CFX_PP_CAT(a, b) CFX_PP_CAT_(a, b)
#define CFX_PP_CAT_(a, b) a##b
#define CFX_PP_NARG(...) CFX_PP_NARG_(__VA_ARGS__, CFX_PP_RSEQ_())
#define CFX_PP_NARG_(...) CFX_PP_ARG_N_(__VA_ARGS__)
#define CFX_PP_ARG_N_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, \
                      _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36,   \
                      _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49, _50, _51, _52, _53,   \
                      _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, N, ...)                          \
    N
#define CFX_PP_RSEQ_()                                                                                      \
    64, 63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, \
        38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,  \
        13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0

#endif
