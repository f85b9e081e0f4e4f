/* ops.h - the built-in operators: typed C wrappers and convenience macros.
 *
 * Every operator in dispatch/ops.def gets, generated from that one list:
 *   - CFX_OPID_<id>, its index in the built-in table (cfx_builtin_ops[]);
 *   - cfx_op_<id>(site, args...), the typed wrapper: it boxes the arguments into a small
 *     stack array, picks the kernel as cfx_dispatch_select does (from its tensor parameters'
 *     key sets, read directly), calls it unboxed when it can, boxed otherwise, and keeps
 *     `site` as the thread's current call site for the duration (errors and tracers report
 *     the user's C line). Returns NULL on error, or when an argument tensor is NULL (no new
 *     error: NULL propagates);
 *   - cfx_op_<id>_redispatch(ks, args...), the same call for an explicit key set (kernels
 *     that redispatch below themselves, such as BackendSelect's);
 *   - cfx_kfn_<id>, the kernel's C function type, and CFX_IMPL_OP, which registers a kernel
 *     after checking its signature at compile time, with cfx_kfn_boxed_<id>, the boxed entry
 *     compiled for that signature, so that boxed calls need no libffi adapter.
 * An operator with several returns (CFX_OP_MULTI) has the same three, returning its struct
 * (cfx_tensor2, cfx_tensor3) instead of one tensor: all members NULL on error. Its boxed
 * kernels leave the returns at stack[0..n), which the wrapper gathers into the struct.
 * The convenience macros at the end fill in PyTorch's defaults and capture the call site:
 *
 *     cfx_tensor *y = cfx_relu(cfx_add(x, cfx_mul(x, w)));
 *     cfx_tensor *s = cfx_sum(y, (int64_t[]){1}, 1, false);
 *     cfx_tensor *v = cfx_view_dims(s, 2, -1);
 *     cfx_tensor2 m = cfx_max_dim(y, 1, false);          (m.a values, m.b indices)
 */
#ifndef CFX_OPS_H
#define CFX_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/keys.h"
#include "dispatch/library.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"

/* ---- preprocessor plumbing for the parameter lists of ops.def ---------------------------- */

#define CFX_PP_CAT(a, b) CFX_PP_CAT_(a, b)
#define CFX_PP_CAT_(a, b) a##b
#define CFX_PP_UNPAREN(...) __VA_ARGS__
#define CFX_PP_NARG(...) CFX_PP_NARG_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CFX_PP_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, N, ...) N
#define CFX_PP_COMMA() ,
#define CFX_PP_NOSEP()
/* CFX_PP_EACH(M, SEP, a, b, c) -> M(a) SEP() M(b) SEP() M(c) */
#define CFX_PP_EACH(M, SEP, ...) CFX_PP_CAT(CFX_PP_EACH_, CFX_PP_NARG(__VA_ARGS__))(M, SEP, __VA_ARGS__)
#define CFX_PP_EACH_1(M, S, a) M(a)
#define CFX_PP_EACH_2(M, S, a, ...) M(a) S() CFX_PP_EACH_1(M, S, __VA_ARGS__)
#define CFX_PP_EACH_3(M, S, a, ...) M(a) S() CFX_PP_EACH_2(M, S, __VA_ARGS__)
#define CFX_PP_EACH_4(M, S, a, ...) M(a) S() CFX_PP_EACH_3(M, S, __VA_ARGS__)
#define CFX_PP_EACH_5(M, S, a, ...) M(a) S() CFX_PP_EACH_4(M, S, __VA_ARGS__)
#define CFX_PP_EACH_6(M, S, a, ...) M(a) S() CFX_PP_EACH_5(M, S, __VA_ARGS__)
#define CFX_PP_EACH_7(M, S, a, ...) M(a) S() CFX_PP_EACH_6(M, S, __VA_ARGS__)
#define CFX_PP_EACH_8(M, S, a, ...) M(a) S() CFX_PP_EACH_7(M, S, __VA_ARGS__)
#define CFX_PARAMS(M, SEP, params) CFX_PP_EACH(M, SEP, CFX_PP_UNPAREN params)
/* CFX_PP_EACH_I(M, SEP, a, b) -> M(0, a) SEP() M(0+1, b): with the parameter's index */
#define CFX_PP_EACH_I(M, SEP, ...) CFX_PP_CAT(CFX_PP_EACHI_, CFX_PP_NARG(__VA_ARGS__))(M, SEP, 0, __VA_ARGS__)
#define CFX_PP_EACHI_1(M, S, i, a) M(i, a)
#define CFX_PP_EACHI_2(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_1(M, S, i + 1, __VA_ARGS__)
#define CFX_PP_EACHI_3(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_2(M, S, i + 1, __VA_ARGS__)
#define CFX_PP_EACHI_4(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_3(M, S, i + 1, __VA_ARGS__)
#define CFX_PP_EACHI_5(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_4(M, S, i + 1, __VA_ARGS__)
#define CFX_PP_EACHI_6(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_5(M, S, i + 1, __VA_ARGS__)
#define CFX_PP_EACHI_7(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_6(M, S, i + 1, __VA_ARGS__)
#define CFX_PP_EACHI_8(M, S, i, a, ...) M(i, a) S() CFX_PP_EACHI_7(M, S, i + 1, __VA_ARGS__)
#define CFX_PARAMS_I(M, SEP, params) CFX_PP_EACH_I(M, SEP, CFX_PP_UNPAREN params)

/* Per-marker expansions: a marker such as ATensor(self) is pasted onto a prefix. */
#define CFX_PARAM_DECL(p) CFX_PP_CAT(CFX_DECL_, p)
#define CFX_DECL_ATensor(x) cfx_tensor *x
#define CFX_DECL_ATensorOpt(x) cfx_tensor *x
#define CFX_DECL_AScalar(x) cfx_value x
#define CFX_DECL_AOpt(x) cfx_value x
#define CFX_DECL_AIntList(x) cfx_int_list x
#define CFX_DECL_AInt(x) int64_t x
#define CFX_DECL_ADouble(x) double x
#define CFX_DECL_ABool(x) bool x
#define CFX_PARAM_NAME(p) CFX_PP_CAT(CFX_NAME_, p)
#define CFX_NAME_ATensor(x) x
#define CFX_NAME_ATensorOpt(x) x
#define CFX_NAME_AScalar(x) x
#define CFX_NAME_AOpt(x) x
#define CFX_NAME_AIntList(x) x
#define CFX_NAME_AInt(x) x
#define CFX_NAME_ADouble(x) x
#define CFX_NAME_ABool(x) x
#define CFX_PARAM_COUNT(p) +1
/* The marker's kind as a bare token (TENSOR, TENSOROPT, SCALAR, OPT, INTLIST, INT, DOUBLE,
 * BOOL), for dispatching on it with one more paste: CFX_PARAM_KIND(ATensor(self)) -> TENSOR. */
#define CFX_PARAM_KIND(p) CFX_PP_CAT(CFX_KIND_, p)
#define CFX_KIND_ATensor(x) TENSOR
#define CFX_KIND_ATensorOpt(x) TENSOROPT
#define CFX_KIND_AScalar(x) SCALAR
#define CFX_KIND_AOpt(x) OPT
#define CFX_KIND_AIntList(x) INTLIST
#define CFX_KIND_AInt(x) INT
#define CFX_KIND_ADouble(x) DOUBLE
#define CFX_KIND_ABool(x) BOOL

/* Return markers: RTensor (one Tensor, CFX_OP) and RTensor2/RTensor3 (CFX_OP_MULTI). For each,
 * the C type, the number of tensors, the all-NULL value, and conversions between the C value
 * v and an array o of that many tensor pointers. */
#define CFX_RET_TYPE(r) CFX_PP_CAT(CFX_RTYPE_, r)
#define CFX_RTYPE_RTensor cfx_tensor *
#define CFX_RTYPE_RTensor2 cfx_tensor2
#define CFX_RTYPE_RTensor3 cfx_tensor3
#define CFX_RET_COUNT(r) CFX_PP_CAT(CFX_RCOUNT_, r)
#define CFX_RCOUNT_RTensor 1
#define CFX_RCOUNT_RTensor2 2
#define CFX_RCOUNT_RTensor3 3
#define CFX_RET_NULL(r) CFX_PP_CAT(CFX_RNULL_, r)
#define CFX_RNULL_RTensor NULL
#define CFX_RNULL_RTensor2 ((cfx_tensor2){NULL, NULL})
#define CFX_RNULL_RTensor3 ((cfx_tensor3){NULL, NULL, NULL})
#define CFX_RET_UNPACK(r, v, o) CFX_PP_CAT(CFX_RUNPACK_, r)(v, o)
#define CFX_RUNPACK_RTensor(v, o) ((o)[0] = (v))
#define CFX_RUNPACK_RTensor2(v, o) ((o)[0] = (v).a, (o)[1] = (v).b)
#define CFX_RUNPACK_RTensor3(v, o) ((o)[0] = (v).a, (o)[1] = (v).b, (o)[2] = (v).c)
#define CFX_RET_PACK(r, v, o) CFX_PP_CAT(CFX_RPACK_, r)(v, o)
#define CFX_RPACK_RTensor(v, o) ((v) = (o)[0])
#define CFX_RPACK_RTensor2(v, o) ((v).a = (o)[0], (v).b = (o)[1])
#define CFX_RPACK_RTensor3(v, o) ((v).a = (o)[0], (v).b = (o)[1], (v).c = (o)[2])

/* ---- the table ----------------------------------------------------------------------------- */

typedef enum cfx_opid {
#define CFX_OP(id, name, schema, params) CFX_OPID_##id,
#include "dispatch/ops.def"
#undef CFX_OP
    CFX_OPID_COUNT
} cfx_opid;

typedef struct cfx_builtin_op_info {
    const char *id;     /* "add_Tensor" */
    const char *name;   /* "aten::add.Tensor" */
    const char *schema; /* as torch 1.13 prints it */
    int n_args;
    int n_returns;      /* tensors returned: 1 for CFX_OP, N for CFX_OP_MULTI */
    /* From the parameter markers: bit i for ATensor or ATensorOpt, and for ATensor alone. The
     * wrappers compute key sets from these parameters, so they must equal the registered
     * schema's dispatch_arg_mask and required_tensor_mask (operator.h; tested). */
    uint64_t tensor_params, required_tensor_params;
} cfx_builtin_op_info;

extern const cfx_builtin_op_info cfx_builtin_ops[CFX_OPID_COUNT];

/* Registers the aten schemas (a DEF library) and the CPU, Meta, BackendSelect and composite
 * kernels (IMPL libraries). Idempotent; run by the dispatcher's init and on first use of a
 * wrapper. Returns CFX_OK or the first registration failure. */
int cfx_builtin_ops_init(void);

/* The operator handle of a built-in (initialising on first use); NULL only if init failed. */
cfx_op *cfx_builtin_op(cfx_opid id);

/* ---- typed entry points -------------------------------------------------------------------- */

#define CFX_OP_DECLARE(id, params, ret)                                                        \
    typedef CFX_RET_TYPE(ret) (*cfx_kfn_##id)(CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params));  \
    CFX_RET_TYPE(ret) cfx_op_##id(const cfx_site *site, CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params)); \
    CFX_RET_TYPE(ret) cfx_op_##id##_redispatch(cfx_keyset ks, CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params)); \
    int cfx_kfn_boxed_##id(void *fn, const cfx_op *op, cfx_keyset ks, cfx_value *stack);        \
    static inline cfx_fnptr cfx_kfn_check_##id(cfx_kfn_##id fn) { return (cfx_fnptr)fn; }
#define CFX_OP(id, name, schema, params) CFX_OP_DECLARE(id, params, RTensor)
#define CFX_OP_MULTI(id, name, schema, params, rets) CFX_OP_DECLARE(id, params, rets)
#include "dispatch/ops.def"
#undef CFX_OP_MULTI
#undef CFX_OP
#undef CFX_OP_DECLARE

/* A C function pointer as a boxed entry's context (POSIX: function and data pointers
 * convert both ways, as dlsym relies on). */
static inline void *cfx_kfn_ctx(cfx_fnptr fn) { return (void *)(uintptr_t)fn; }

/* Registers fn (which must have the C signature cfx_kfn_<id>) for built-in op id in lib, on
 * lib's dispatch key; the debug location is the caller's file and line. Its boxed entry is
 * cfx_kfn_boxed_<id>, compiled from ops.def for that signature (c10's
 * make_boxed_from_unboxed_functor), with fn as its context: no libffi adapter. */
#define CFX_IMPL_OP(lib, id, fn)                                                                  \
    cfx_library_impl_boxed_unboxed_at((lib), cfx_builtin_ops[CFX_OPID_##id].name, CFX_KEY_Undefined, \
                                      cfx_kfn_check_##id(fn), cfx_kfn_boxed_##id,                  \
                                      cfx_kfn_ctx(cfx_kfn_check_##id(fn)), __FILE__, __LINE__)

/* ---- convenience macros -------------------------------------------------------------------- */

static inline cfx_int_list cfx_ints(const int64_t *data, int64_t n) { return (cfx_int_list){data, n}; }
/* An int list literal: CFX_DIMS(2, 3) */
#define CFX_DIMS(...) cfx_ints((const int64_t[]){__VA_ARGS__}, \
                               (int64_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define CFX_NO_DIMS ((cfx_int_list){NULL, -1}) /* None for an int[]? argument */

#define cfx_add(a, b) cfx_op_add_Tensor(CFX_HERE, (a), (b), cfx_int(1))
#define cfx_add_alpha(a, b, alpha) cfx_op_add_Tensor(CFX_HERE, (a), (b), (alpha))
#define cfx_sub(a, b) cfx_op_sub_Tensor(CFX_HERE, (a), (b), cfx_int(1))
#define cfx_sub_alpha(a, b, alpha) cfx_op_sub_Tensor(CFX_HERE, (a), (b), (alpha))
#define cfx_mul(a, b) cfx_op_mul_Tensor(CFX_HERE, (a), (b))
#define cfx_div(a, b) cfx_op_div_Tensor(CFX_HERE, (a), (b))
#define cfx_neg(x) cfx_op_neg(CFX_HERE, (x))
#define cfx_relu(x) cfx_op_relu(CFX_HERE, (x))
#define cfx_sin(x) cfx_op_sin(CFX_HERE, (x))
#define cfx_cos(x) cfx_op_cos(CFX_HERE, (x))
#define cfx_exp(x) cfx_op_exp(CFX_HERE, (x))
/* sum over dims[0..ndims) (ndims 0: every dim) */
#define cfx_sum(x, dims, ndims, keepdim) \
    cfx_op_sum_dim_IntList(CFX_HERE, (x), cfx_ints((dims), (ndims)), (keepdim), cfx_none())
#define cfx_sum_dtype(x, dims, ndims, keepdim, dtype) \
    cfx_op_sum_dim_IntList(CFX_HERE, (x), cfx_ints((dims), (ndims)), (keepdim), cfx_dtype_value(dtype))
#define cfx_sum_all(x) cfx_op_sum_dim_IntList(CFX_HERE, (x), CFX_NO_DIMS, false, cfx_none())
#define cfx_mm(a, b) cfx_op_mm(CFX_HERE, (a), (b))
#define cfx_t(x) cfx_op_t(CFX_HERE, (x))
#define cfx_view(x, sizes, n) cfx_op_view(CFX_HERE, (x), cfx_ints((sizes), (n)))
#define cfx_view_dims(x, ...) cfx_op_view(CFX_HERE, (x), CFX_DIMS(__VA_ARGS__))
#define cfx_clone(x) cfx_op_clone(CFX_HERE, (x), cfx_none())
#define cfx_clone_format(x, memory_format) \
    cfx_op_clone(CFX_HERE, (x), cfx_memory_format_value(memory_format))
#define cfx_add_(a, b) cfx_op_add__Tensor(CFX_HERE, (a), (b), cfx_int(1))
#define cfx_add_alpha_(a, b, alpha) cfx_op_add__Tensor(CFX_HERE, (a), (b), (alpha))
#define cfx_empty(sizes, n, dtype, device)                                                  \
    cfx_op_empty_memory_format(CFX_HERE, cfx_ints((sizes), (n)), cfx_dtype_value(dtype), cfx_none(), \
                               cfx_device_value(device), cfx_none(), cfx_none())
#define cfx_empty_strided(sizes, strides, n, dtype, device)                                    \
    cfx_op_empty_strided(CFX_HERE, cfx_ints((sizes), (n)), cfx_ints((strides), (n)),             \
                         cfx_dtype_value(dtype), cfx_none(), cfx_device_value(device), cfx_none())
#define cfx_empty_like(x) \
    cfx_op_empty_like(CFX_HERE, (x), cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none())
/* (values, indices) of the maximum along dim: a cfx_tensor2, .a values, .b int64 indices */
#define cfx_max_dim(x, dim, keepdim) cfx_op_max_dim(CFX_HERE, (x), (dim), (keepdim))
/* (output, mean, rstd) over the trailing dims shape[0..n); weight and bias may be NULL */
#define cfx_native_layer_norm(x, shape, n, weight, bias, eps) \
    cfx_op_native_layer_norm(CFX_HERE, (x), cfx_ints((shape), (n)), (weight), (bias), (eps))
#define cfx_lift_fresh(x) cfx_op_lift_fresh(CFX_HERE, (x))
#define cfx_lift_fresh_copy(x) cfx_op_lift_fresh_copy(CFX_HERE, (x))

/* ---- tensor literals ----------------------------------------------------------------------- */

/* torch.tensor(data, dtype=dtype): a CPU tensor of the given sizes holding data (row-major,
 * numel(sizes) values, converted to dtype as c10 converts a double), made outside the
 * dispatcher and then passed through aten::lift_fresh, as torch.tensor does. A mode or tracer
 * therefore sees one lift_fresh call on a tensor it has never seen (make_fx interns it as
 * _tensor_constantN and records lift_fresh_copy). Ownership as for an operator result; NULL
 * with the error recorded on bad sizes or if lift_fresh fails. The macro records the caller's
 * line as the call site; the function keeps the thread's current one. */
cfx_tensor *cfx_tensor_literal(const double *data, const int64_t *sizes, int ndim, cfx_dtype dtype);
cfx_tensor *cfx_tensor_literal_at(const cfx_site *site, const double *data, const int64_t *sizes, int ndim,
                                  cfx_dtype dtype);
/* variadic, so that a sizes compound literal needs no extra parentheses:
 * cfx_tensor_literal(v, (int64_t[]){2, 3}, 2, CFX_FLOAT32) */
#define cfx_tensor_literal(...) cfx_tensor_literal_at(CFX_HERE, __VA_ARGS__)

#endif
