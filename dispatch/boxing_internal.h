/* boxing_internal.h - the conversions between boxed values and C arguments, one set of rules
 * for every way a C function is called from a boxed stack.
 *
 * A schema argument maps to one C form (boxing.h's table); a "step" says which form, which
 * boxed kinds it accepts and how they are normalised (an int for a float, a ScalarType's
 * integer code, int[N] from one int, ...). The libffi adapter (boxing.c) computes the steps
 * of a schema when a kernel is registered; tools/opgen computes the same steps, with the same
 * functions, when it generates the compiled boxed entries of the built-in kernels. Both then
 * convert with cfx_box_unbox_args and box returns with cfx_box_returns, so a kernel sees the
 * same values and a caller the same errors whichever way it is called. */
#ifndef CFX_BOXING_INTERNAL_H
#define CFX_BOXING_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"

/* What a boxed value must be, and how it is normalised. */
typedef enum cfx_box_conv {
    CFX_CONV_TENSOR,
    CFX_CONV_INT,
    CFX_CONV_DOUBLE, /* INT is converted */
    CFX_CONV_BOOL,
    CFX_CONV_STR,
    CFX_CONV_DTYPE,  /* INT is converted */
    CFX_CONV_LAYOUT, /* INT is converted */
    CFX_CONV_MEMFMT, /* INT is converted */
    CFX_CONV_DEVICE,
    CFX_CONV_SCALAR, /* INT, DOUBLE or BOOL */
    CFX_CONV_LIST,   /* LIST or TUPLE, items unchecked */
    CFX_CONV_ANY,    /* anything, NONE included */
} cfx_box_conv;

/* The C form a value takes (boxing.h's table). */
typedef enum cfx_box_form {
    CFX_BOX_TENSOR,      /* cfx_tensor * (NULL for None) */
    CFX_BOX_INT,         /* int64_t, also Layout and MemoryFormat */
    CFX_BOX_DOUBLE,
    CFX_BOX_BOOL,
    CFX_BOX_STR,         /* const char * */
    CFX_BOX_DTYPE,       /* cfx_dtype as int */
    CFX_BOX_DEVICE,      /* cfx_device by value */
    CFX_BOX_VALUE,       /* cfx_value by value */
    CFX_BOX_INT_LIST,    /* cfx_int_list by value */
    CFX_BOX_TENSOR_LIST, /* cfx_tensor_list by value */
    CFX_BOX_BOXED,       /* const cfx_value * to the stack slot */
} cfx_box_form;

typedef struct cfx_box_step {
    uint8_t form;       /* cfx_box_form */
    uint8_t conv;       /* cfx_box_conv */
    bool optional;      /* NONE accepted */
    bool elem_optional; /* Tensor?[]: NONE items become NULL */
    int32_t size_hint;  /* int[N]: one int is repeated N times */
} cfx_box_step;

typedef struct cfx_box_ret_step {
    uint8_t form; /* TENSOR, INT, DOUBLE, BOOL, STR, DTYPE, DEVICE or VALUE */
    uint8_t kind; /* cfx_value_kind an INT is boxed as: INT, LAYOUT or MEMORY_FORMAT */
    bool optional;
} cfx_box_ret_step;

/* One converted value. */
typedef union cfx_box_slot {
    cfx_tensor *t;
    int64_t i;
    double d;
    uint8_t b;
    int32_t i32;
    const void *p;
    cfx_device dev;
    cfx_value v;
    cfx_int_list il;
    cfx_tensor_list tl;
} cfx_box_slot;

enum {
    CFX_BOX_MAX_ARGS = 64,
    CFX_BOX_MAX_RETURNS = 16,
    CFX_BOX_INT_SCRATCH = 256,    /* int64s for all int-list arguments of one call */
    CFX_BOX_TENSOR_SCRATCH = 128, /* tensor pointers for all Tensor[] arguments of one call */
};

/* Per-call storage for list arguments: carved from these arrays; a list that does not fit
 * gets its own malloc, freed by cfx_box_scratch_free. */
typedef struct cfx_box_scratch {
    int64_t ints[CFX_BOX_INT_SCRATCH];
    cfx_tensor *tensors[CFX_BOX_TENSOR_SCRATCH];
    void *heap[CFX_BOX_MAX_ARGS];
    int n_ints, n_tensors, n_heap;
} cfx_box_scratch;

static inline void cfx_box_scratch_init(cfx_box_scratch *sc) { sc->n_ints = sc->n_tensors = sc->n_heap = 0; }
void cfx_box_scratch_free(cfx_box_scratch *sc);

/* The name c10 prints for a base type in a schema ("Tensor", "int", ...; NULL for none). */
const char *cfx_box_type_name(const cfx_type *t);
/* How a value of a base type kind is checked and normalised. */
cfx_box_conv cfx_box_conv_of(int kind);
/* The step of an argument / a return type (never fails: a type with no C form is BOXED /
 * VALUE; cfx_box_check_schema says whether a schema can be called at all). */
cfx_box_step cfx_box_arg_step(const cfx_argument *arg);
cfx_box_ret_step cfx_box_return_step(const cfx_type *t);
/* CFX_OK when every argument and return of s has a C form and the counts fit, else the error
 * ("cannot call a C function as aten::x: argument 'y' has type 'z', which has no C mapping"). */
int cfx_box_check_schema(const cfx_schema *s, const char *qualname);

/* Checks stack[0..n) against the schema's argument types as torch.ops' binding does (the first
 * mismatch is the error; a None or NULL plain Tensor passes: the dispatcher refuses it later),
 * and converts an int given for a float (or float?) into a float in place, as the binding's
 * IValue does. */
int cfx_box_check_args(const cfx_schema *s, const char *qualname, cfx_value *stack, int n);
/* Converts stack[0..n) into slots by steps, reporting a wrong kind with torch.ops' text. */
int cfx_box_unbox_args(const cfx_schema *s, const char *qualname, const cfx_box_step *steps, int n,
                       cfx_value *stack, cfx_box_slot *slots, cfx_box_scratch *sc);
/* After a kernel returned rets[0..n) as slots: CFX_ERR if it recorded the call's first error
 * (had_error: an error was recorded before the call) or returned NULL for a Tensor, else the
 * boxed returns on stack[0..n) and CFX_OK. */
int cfx_box_returns(const char *qualname, bool had_error, const cfx_box_ret_step *rets, const cfx_box_slot *slots,
                    int n, cfx_value *stack);

#endif
