/* boxing.h - calling plain C functions from boxed arguments, by schema, through libffi.
 *
 * A kernel is an ordinary C function with the operator's unboxed signature. From the parsed
 * schema we build, once, a libffi call interface (cif) and the conversion steps between
 * cfx_value stack slots and C arguments; each call then only moves values and calls
 * ffi_call. The same adapter calls a user's C model function from a schema string (make_fx).
 *
 * Schema type -> C parameter type:
 *   Tensor, Tensor?              cfx_tensor *            (NULL = None for Tensor?)
 *   int, SymInt                  int64_t
 *   float                        double
 *   bool                         bool
 *   str                          const char *
 *   ScalarType                   cfx_dtype (int)
 *   Layout, MemoryFormat         int64_t
 *   Device                       cfx_device (struct by value)
 *   Scalar, and every optional
 *   non-tensor (int?, float?, ScalarType?, Device?, bool?, Scalar?, ...)
 *                                cfx_value (by value; NONE for None)
 *   int[], SymInt[], int[N], int[]?   cfx_int_list (by value; .len < 0 = None)
 *   Tensor[], Tensor?[]          cfx_tensor_list (by value)
 *   float[], bool[], others      const cfx_value * (pointer to the boxed value)
 * Returns: one return -> its C type (Tensor[]: a cfx_tensor_list whose array is scope-owned,
 * cfx_scope_alloc; other lists: cfx_value); none -> void; several -> a struct of their C
 * types in order (for the built-ins, the generated cfx_<op>_result). */
#ifndef CFX_BOXING_H
#define CFX_BOXING_H

#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/kernel.h"
#include "dispatch/schema.h"
#include "dispatch/tensor.h"

typedef struct cfx_int_list {
    const int64_t *data;
    int64_t len; /* < 0: None */
} cfx_int_list;

typedef struct cfx_tensor_list {
    cfx_tensor *const *data;
    int64_t len;
} cfx_tensor_list;

/* Results of C functions with two or three Tensor returns, for your own functions called from
 * a schema ("-> (Tensor, Tensor)", make_fx's models). Built-in operators return their own
 * named structs (cfx_max_dim_result: .values, .indices). */
typedef struct cfx_tensor2 {
    cfx_tensor *a, *b;
} cfx_tensor2;

typedef struct cfx_tensor3 {
    cfx_tensor *a, *b, *c;
} cfx_tensor3;

typedef struct cfx_adapter cfx_adapter;

/* Builds the adapter for calling fn with schema s's unboxed signature. NULL + error (error.h)
 * if the schema has a type with no C mapping. The schema must outlive the adapter. */
CFX_API cfx_adapter *cfx_adapter_new(const cfx_schema *s, cfx_fnptr fn);
CFX_API void cfx_adapter_free(cfx_adapter *a);
/* The boxed entry point: ctx is the adapter. Converts stack[0..n_args) to C arguments, calls,
 * and writes the boxed returns to stack[0..n_returns). A returned NULL Tensor means the C
 * function failed: the call returns CFX_ERR (the function recorded the message). */
CFX_API int cfx_adapter_call_boxed(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack);
/* c10's inferred-schema text for the C signature: "(Tensor _0, Tensor _1, Scalar _2) -> Tensor _0". */
CFX_API char *cfx_adapter_inferred_schema(const cfx_schema *s);

/* For a C function that takes one extra leading `void *` before the schema's arguments
 * (make_fx passes a model's module this way): fn(lead, args...). Called with
 * cfx_adapter_call_lead; cfx_adapter_call_boxed passes NULL as lead. */
CFX_API cfx_adapter *cfx_adapter_new_lead(const cfx_schema *s, cfx_fnptr fn);
CFX_API int cfx_adapter_call_lead(cfx_adapter *a, void *lead, cfx_value *stack);

/* Records torch.ops' argument-binding error for argument i of s given v ("aten::add() Expected
 * a value of type 'number' for argument 'alpha' but instead found type 'str'. ..."). */
CFX_API int cfx_argument_type_error(const cfx_schema *s, const char *qualname, int i, cfx_value v);

/* Boxed value -> list views (no allocation): valid while v's items live. */
CFX_API int cfx_value_to_int_list(cfx_value v, int64_t *buf, int cap, cfx_int_list *out);

#endif
