/* boxing_internal.h - the conversions between boxed values and C arguments, one set of rules
 * for every way a C function is called from a boxed stack.
 *
 * A schema argument maps to one C form (boxing.h's table); a "step" says which form, which
 * boxed kinds it accepts and how they are normalised (an int for a float, a ScalarType's
 * integer code, int[N] from one int, ...). The libffi adapter (boxing.c) computes the steps
 * of a schema when a kernel is registered; tools/opgen computes the same steps, with the same
 * functions, when it generates the compiled boxed entries of the built-in kernels. Both then
 * convert with cfx_box_convert_arg and box returns with cfx_box_return, so a kernel sees the
 * same values and a caller the same errors whichever way it is called. */
#ifndef CFX_BOXING_INTERNAL_H
#define CFX_BOXING_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/error_internal.h"

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
    CFX_CONV_GENERATOR,
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
/* The step of s's return i. An op taking a bool[N] output_mask (the backward ops) returns an
 * undefined Tensor, None, for each output its mask leaves out, as ATen's do: its Tensor
 * returns box a NULL as None instead of as the kernel's failure. */
cfx_box_ret_step cfx_box_schema_return_step(const cfx_schema *s, int i);
/* CFX_OK when every argument and return of s has a C form and the counts fit, else the error
 * ("cannot call a C function as aten::x: argument 'y' has type 'z', which has no C mapping"). */
int cfx_box_check_schema(const cfx_schema *s, const char *qualname);

/* Checks stack[0..n) against the schema's argument types as torch.ops' binding does (the first
 * mismatch is the error; a None or NULL plain Tensor passes: the dispatcher refuses it later),
 * and converts an int given for a float (or float?) into a float in place, as the binding's
 * IValue does. steps[i] is cfx_box_arg_step(&s->args[i]) (the op keeps them, computed once). */
int cfx_box_check_args(const cfx_schema *s, const cfx_box_step *steps, const char *qualname, cfx_value *stack, int n);

/* The rules for one value. They are inline so that a generated boxed entry, which passes
 * constant steps, compiles to the few instructions its argument types need (what c10's
 * templates make of make_boxed_from_unboxed_functor), while the libffi adapter runs the same
 * code over the steps it computed at registration. */

/* Checks v against c and normalises it in place (INT -> DOUBLE for a float, ...). */
static inline bool cfx_box_normalize(cfx_box_conv c, bool optional, cfx_value *v)
{
    uint32_t k = v->kind;
    if (k == CFX_V_NONE)
        return optional || c == CFX_CONV_ANY;
    switch (c) {
    case CFX_CONV_TENSOR: return k == CFX_V_TENSOR;
    case CFX_CONV_INT: return k == CFX_V_INT;
    case CFX_CONV_DOUBLE:
        if (k == CFX_V_INT)
            *v = cfx_double((double)v->u.i);
        return v->kind == CFX_V_DOUBLE;
    case CFX_CONV_BOOL: return k == CFX_V_BOOL;
    case CFX_CONV_STR: return k == CFX_V_STRING;
    case CFX_CONV_DTYPE:
        if (k == CFX_V_INT)
            *v = cfx_dtype_value((cfx_dtype)v->u.i);
        return v->kind == CFX_V_DTYPE;
    case CFX_CONV_LAYOUT:
        if (k == CFX_V_INT)
            *v = cfx_layout_value(v->u.i);
        return v->kind == CFX_V_LAYOUT;
    case CFX_CONV_MEMFMT:
        if (k == CFX_V_INT)
            *v = cfx_memory_format_value((cfx_memory_format)v->u.i);
        return v->kind == CFX_V_MEMORY_FORMAT;
    case CFX_CONV_DEVICE: return k == CFX_V_DEVICE;
    case CFX_CONV_SCALAR: return k == CFX_V_INT || k == CFX_V_DOUBLE || k == CFX_V_BOOL;
    case CFX_CONV_LIST: return k == CFX_V_LIST || k == CFX_V_TUPLE;
    case CFX_CONV_ANY: return true;
    case CFX_CONV_GENERATOR: return k == CFX_V_GENERATOR;
    }
    return false;
}

/* cfx_box_check_arg's check of an int list or a Tensor list: its conversion's checks, without
 * the copy when the items fit a fresh scratch (a longer list is converted into scratch, so that
 * memory running out fails the check as it fails the conversion). */
int cfx_box_check_list(const cfx_schema *s, cfx_box_step st, const char *qualname, cfx_value *stack, int i);

/* cfx_box_check_args for stack[i] alone, with step st (cfx_op_call's one walk over the
 * arguments asks it of every argument but a tensor given for a Tensor). Inline, so that a
 * number given for a Scalar or an int for an int costs a few instructions, not a call. */
static inline int cfx_box_check_arg(const cfx_schema *s, cfx_box_step st, const char *qualname, cfx_value *stack,
                                    int i)
{
    cfx_value v = stack[i];
    if (st.form == CFX_BOX_TENSOR && v.kind == CFX_V_TENSOR)
        return CFX_OK; /* the common argument: a tensor (or an undefined one) where a Tensor goes */
    if (st.conv == CFX_CONV_SCALAR && (v.kind == CFX_V_INT || v.kind == CFX_V_DOUBLE || v.kind == CFX_V_BOOL))
        return CFX_OK; /* the next most common: a number where a Scalar goes (add's alpha) */
    if (st.form == CFX_BOX_INT_LIST || st.form == CFX_BOX_TENSOR_LIST)
        return cfx_box_check_list(s, st, qualname, stack, i);
    bool no_tensor = v.kind == CFX_V_NONE || (v.kind == CFX_V_TENSOR && !v.u.t);
    if (st.form == CFX_BOX_TENSOR && !st.optional && no_tensor)
        return CFX_OK; /* the binding accepts an undefined Tensor; dispatch refuses it */
    /* cfx_box_convert_arg's check without its C slot (what every other form converts) */
    cfx_value norm = v;
    if (!cfx_box_normalize((cfx_box_conv)st.conv, st.optional, &norm))
        return cfx_argument_type_error(s, qualname, i, v);
    /* Python's binding turns an int given for a float into a float IValue: modes see 1.0 */
    if (st.conv == CFX_CONV_DOUBLE && v.kind == CFX_V_INT)
        stack[i] = norm;
    return CFX_OK;
}

/* The value kinds (bit k: cfx_value_kind k) that cfx_box_check_arg accepts for st leaving the
 * value as it is: the kinds cfx_box_normalize takes unchanged (None only where it is optional),
 * none for the list forms (their items are checked too). A plain Tensor's undefined (NULL)
 * tensor is of kind TENSOR: the caller tells it apart. Computed once per argument
 * (operator.c), so that cfx_op_call passes the common argument with one bit test. */
uint32_t cfx_box_kinds_as_is(cfx_box_step st);

/* An int list or a Tensor list argument (box_convert.c): its items go to sc. */
int cfx_box_convert_list(const cfx_schema *s, const char *qualname, int i, cfx_box_step st, cfx_value *sv,
                         cfx_box_slot *sl, cfx_box_scratch *sc);

/* Converts argument i (stack value *sv) into its C slot, reporting a wrong kind with
 * torch.ops' text. sc is only used by list forms. Every form and error; the inline
 * cfx_box_convert_arg below takes the common cases first. */
int cfx_box_convert_arg_any(const cfx_schema *s, const char *qualname, int i, cfx_box_step st, cfx_value *sv,
                            cfx_box_slot *sl, cfx_box_scratch *sc);

/* cfx_box_convert_arg_any, with a Tensor given for a Tensor and a number for a Scalar handled
 * inline: small enough that a generated entry (whose st is a constant, so the tests fold away)
 * really inlines it, where the whole conversion was left out of line as a call per argument. */
static inline int cfx_box_convert_arg(const cfx_schema *s, const char *qualname, int i, cfx_box_step st,
                                      cfx_value *sv, cfx_box_slot *sl, cfx_box_scratch *sc)
{
    uint32_t k = sv->kind;
    if (st.form == CFX_BOX_TENSOR && k == CFX_V_TENSOR) {
        sl->t = sv->u.t;
        return CFX_OK;
    }
    if (st.form == CFX_BOX_VALUE && st.conv == CFX_CONV_SCALAR &&
        (k == CFX_V_INT || k == CFX_V_DOUBLE || k == CFX_V_BOOL)) {
        sl->v = *sv;
        return CFX_OK;
    }
    return cfx_box_convert_arg_any(s, qualname, i, st, sv, sl, sc);
}

/* Converts stack[0..n) into slots by steps. */
int cfx_box_unbox_args(const cfx_schema *s, const char *qualname, const cfx_box_step *steps, int n,
                       cfx_value *stack, cfx_box_slot *slots, cfx_box_scratch *sc);

/* A kernel that cannot return NULL (void, int, ...) fails by recording an error. That is only
 * visible if no error was recorded before the call (had_error); the first error wins. */
static inline bool cfx_box_kernel_failed(bool had_error) { return !had_error && cfx_error_pending(); }

/* "the kernel of aten::x returned NULL without an error" unless an error is recorded; always
 * CFX_ERR. (The inline callers return the constant themselves: a status the compiler cannot
 * see had a generated entry keep its result in saved registers in case it were CFX_OK.) */
int cfx_box_null_return(const char *qualname);
/* A returned Tensor list, boxed into a scope-owned list (box_convert.c). */
int cfx_box_return_list(const char *qualname, const cfx_box_slot *x, cfx_value *out);

/* Boxes one return slot into *out; a NULL Tensor (unless optional) is the kernel's failure. */
static inline int cfx_box_return(const char *qualname, cfx_box_ret_step r, const cfx_box_slot *x, cfx_value *out)
{
    switch ((cfx_box_form)r.form) {
    case CFX_BOX_TENSOR:
        if (!x->t && !r.optional) {
            cfx_box_null_return(qualname);
            return CFX_ERR;
        }
        *out = x->t ? cfx_tensor_value(x->t) : cfx_none();
        break;
    case CFX_BOX_INT: *out = (cfx_value){r.kind, 0, {.i = x->i}}; break;
    case CFX_BOX_DOUBLE: *out = cfx_double(x->d); break;
    case CFX_BOX_BOOL: *out = cfx_bool(x->b != 0); break;
    case CFX_BOX_DTYPE: *out = cfx_dtype_value((cfx_dtype)x->i32); break;
    case CFX_BOX_STR:
        if (!x->p) {
            cfx_box_null_return(qualname);
            return CFX_ERR;
        }
        *out = (cfx_value){CFX_V_STRING, (uint32_t)strlen(x->p), {.s = x->p}};
        break;
    case CFX_BOX_DEVICE: *out = cfx_device_value(x->dev); break;
    case CFX_BOX_TENSOR_LIST: return cfx_box_return_list(qualname, x, out);
    default: *out = x->v; break;
    }
    return CFX_OK;
}

/* After a kernel returned rets[0..n) as slots: CFX_ERR if it failed (cfx_box_kernel_failed or
 * a NULL Tensor), else the boxed returns on stack[0..n) and CFX_OK. */
int cfx_box_returns(const char *qualname, bool had_error, const cfx_box_ret_step *rets, const cfx_box_slot *slots,
                    int n, cfx_value *stack);

#endif
