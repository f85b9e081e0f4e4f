/* box_convert.c - moving values between a boxed stack and C-typed slots, by steps
 * (boxing_internal.h), with torch.ops' checks and messages.
 *
 * Conversion follows IValue's rules where they are strict (an int argument does not take a
 * bool or a float) and the Python binding's where they are lenient (a float argument takes an
 * int; ScalarType, Layout and MemoryFormat take their integer codes; int[N] takes one int and
 * repeats it N times). Optional non-tensor values are normalised before the kernel sees them
 * (a ScalarType? given as INT arrives as DTYPE), so kernels can trust the kind. A wrong kind
 * is reported with the text torch.ops uses ("aten::add() Expected a value of type 'Tensor' for
 * argument 'other' but instead found type 'str'."). Nothing is allocated except for lists
 * larger than the scratch buffers, which are rare and freed after the call, and the
 * scope-owned array of a Tensor[] return. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing_internal.h"
#include "dispatch/error.h"
#include "dispatch/scope.h"

/* The Python annotation torch.ops names in type errors: 'number', 'List[int]',
 * 'Optional[Device]'. ScalarType, Layout and MemoryFormat are ints to Python. */
static const char *annotation_name(const cfx_type *t)
{
    switch (t->kind) {
    case CFX_TYPE_SYMINT: case CFX_TYPE_SCALAR_TYPE: case CFX_TYPE_LAYOUT:
    case CFX_TYPE_MEMORY_FORMAT: case CFX_TYPE_QSCHEME:
        return "int";
    case CFX_TYPE_SCALAR: return "number";
    default: return cfx_box_type_name(t);
    }
}

static void print_annotation(const cfx_type *t, cfx_buf *b)
{
    int depth = 0;
    while ((t->kind == CFX_TYPE_LIST || t->kind == CFX_TYPE_OPTIONAL) && t->n_elems > 0) {
        cfx_buf_puts(b, t->kind == CFX_TYPE_LIST ? "List[" : "Optional[");
        depth++;
        t = t->elems[0];
    }
    const char *name = annotation_name(t);
    cfx_buf_puts(b, name ? name : "?");
    while (depth-- > 0)
        cfx_buf_putc(b, ']');
}

/* Python's type(x).__name__ for the value torch.ops would have seen. */
static const char *found_type_name(cfx_value v)
{
    static const char *const names[CFX_V_KIND_COUNT] = {
        [CFX_V_NONE] = "NoneType", [CFX_V_BOOL] = "bool", [CFX_V_INT] = "int",
        [CFX_V_DOUBLE] = "float", [CFX_V_STRING] = "str", [CFX_V_TENSOR] = "Tensor",
        [CFX_V_LIST] = "list", [CFX_V_TUPLE] = "tuple", [CFX_V_DTYPE] = "dtype",
        [CFX_V_DEVICE] = "device", [CFX_V_MEMORY_FORMAT] = "memory_format",
        [CFX_V_LAYOUT] = "layout", [CFX_V_OBJECT] = "ScriptObject", [CFX_V_NODE] = "Node", [CFX_V_OP] = "OpOverload",
        [CFX_V_HOP] = "HigherOrderOperator", [CFX_V_TOKEN] = "Tensor", [CFX_V_GENERATOR] = "Generator",
    };
    const char *n = v.kind < CFX_V_KIND_COUNT ? names[v.kind] : NULL;
    return n ? n : "unknown";
}

/* Item count of an int list (a lone INT counts as size_hint items when size_hint > 0), or -1
 * if v is not one. */
static int64_t int_list_len(cfx_value v, int32_t size_hint)
{
    if (v.kind == CFX_V_INT)
        return size_hint > 0 ? size_hint : -1;
    if (v.kind != CFX_V_LIST && v.kind != CFX_V_TUPLE)
        return -1;
    for (uint32_t i = 0; i < v.len; i++)
        if (v.u.items[i].kind != CFX_V_INT)
            return -1;
    return v.len;
}

static void int_list_copy(cfx_value v, int64_t n, int64_t *out)
{
    if (v.kind == CFX_V_INT) {
        for (int64_t i = 0; i < n; i++)
            out[i] = v.u.i;
        return;
    }
    for (int64_t i = 0; i < n; i++)
        out[i] = v.u.items[i].u.i;
}

int cfx_value_to_int_list(cfx_value v, int64_t *buf, int cap, cfx_int_list *out)
{
    if (v.kind == CFX_V_NONE) {
        *out = (cfx_int_list){NULL, -1};
        return CFX_OK;
    }
    int64_t n = int_list_len(v, -1);
    if (n < 0)
        return cfx_error_set(CFX_ERR, NULL, "expected a list of ints but got %s",
                             cfx_value_kind_name((cfx_value_kind)v.kind));
    if (n > cap)
        return cfx_error_set(CFX_ERR, NULL, "a list of %lld ints does not fit in a buffer of %d",
                             (long long)n, cap);
    int_list_copy(v, n, buf);
    *out = (cfx_int_list){buf, n};
    return CFX_OK;
}

/* Python's class of a value, as pybind names it in a cast error. */
static const char *python_class(cfx_value v)
{
    return v.kind == CFX_V_TENSOR ? "torch.Tensor" : found_type_name(v);
}

/* The argument-binding error of torch.ops, with PyTorch 2.13's text: the expected annotation,
 * the value, the schema, then why the cast failed: "Unable to cast x to Tensor" for a Tensor
 * (optional or not), "Cannot cast x to number" for a Scalar, and pybind's generic message
 * naming the Python class of the offending value otherwise (see below for lists). */
int cfx_argument_type_error(const cfx_schema *s, const char *qualname, int i, cfx_value v)
{
    if (cfx_error_occurred())
        return CFX_ERR;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s() Expected a value of type '", s->name ? s->name : "");
    const cfx_type *t = s->args[i].type;
    print_annotation(t, &b);
    cfx_buf_printf(&b, "' for argument '%s' but instead found type '%s'.\nPosition: %d\nValue: ",
                   s->args[i].name, found_type_name(v), i);
    cfx_value_print(v, CFX_STYLE_PYTHON, &b);
    cfx_buf_puts(&b, "\nDeclaration: ");
    cfx_schema_print(s, &b);
    if (t->kind == CFX_TYPE_OPTIONAL && t->n_elems > 0)
        t = t->elems[0];
    const cfx_type *elem = t->kind == CFX_TYPE_LIST ? t->elems[0] : NULL;
    bool is_seq = v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE;
    bool optional_tensors = elem && elem->kind == CFX_TYPE_OPTIONAL && elem->n_elems > 0 &&
                            elem->elems[0]->kind == CFX_TYPE_TENSOR;
    if (t->kind == CFX_TYPE_SCALAR || t->kind == CFX_TYPE_TENSOR) {
        cfx_buf_puts(&b, t->kind == CFX_TYPE_SCALAR ? "\nCast error details: Cannot cast "
                                                    : "\nCast error details: Unable to cast ");
        if (v.kind == CFX_V_STRING) /* pybind shows str(value), not repr */
            cfx_buf_puts(&b, v.u.s);
        else
            cfx_value_print(v, CFX_STYLE_PYTHON, &b);
        cfx_buf_puts(&b, t->kind == CFX_TYPE_SCALAR ? " to number" : " to Tensor");
    } else if (optional_tensors && !is_seq && v.kind != CFX_V_STRING) {
        /* Tensor?[] is read by iterating the value: a non-iterable fails in Python. */
        cfx_buf_printf(&b, "\n Python error details: TypeError: '%s' object is not iterable",
                       found_type_name(v));
    } else if (optional_tensors) {
        /* ... and each item is cast to a Tensor: the first that is none names itself (a str
         * iterates over its characters). */
        cfx_buf_puts(&b, "\nCast error details: Unable to cast ");
        if (v.kind == CFX_V_STRING) {
            cfx_buf_putn(&b, v.u.s, v.u.s[0] ? 1 : 0);
        } else {
            for (uint32_t j = 0; j < v.len; j++) {
                cfx_value item = v.u.items[j];
                if (!cfx_box_normalize(CFX_CONV_TENSOR, true, &item)) {
                    if (v.u.items[j].kind == CFX_V_STRING)
                        cfx_buf_puts(&b, v.u.items[j].u.s);
                    else
                        cfx_value_print(v.u.items[j], CFX_STYLE_PYTHON, &b);
                    break;
                }
            }
        }
        cfx_buf_puts(&b, " to Tensor");
    } else {
        /* pybind's generic message names a Python class: a SymInt[]'s items are cast one by
         * one, so the first wrong item's class; any other list type is cast whole, so the
         * list's (or tuple's) own class. */
        cfx_value culprit = v;
        if (elem && elem->kind == CFX_TYPE_SYMINT && is_seq) {
            cfx_box_conv want = cfx_box_conv_of(elem->kind);
            for (uint32_t j = 0; j < v.len; j++) {
                cfx_value item = v.u.items[j];
                if (!cfx_box_normalize(want, false, &item)) {
                    culprit = v.u.items[j];
                    break;
                }
            }
        }
        cfx_buf_printf(&b,
                       "\nCast error details: Unable to cast Python instance of type <class '%s'> to C++ type '?' "
                       "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)",
                       python_class(culprit));
    }
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, qualname, msg ? msg : "argument of the wrong type");
    cfx_free(msg);
    return CFX_ERR;
}

void cfx_box_scratch_free(cfx_box_scratch *sc)
{
    for (int i = 0; i < sc->n_heap; i++)
        cfx_free(sc->heap[i]);
    sc->n_heap = 0;
}

static int64_t *take_ints(cfx_box_scratch *sc, int64_t n)
{
    if (n <= CFX_BOX_INT_SCRATCH - sc->n_ints) {
        int64_t *p = sc->ints + sc->n_ints;
        sc->n_ints += (int)n;
        return p;
    }
    int64_t *p = cfx_malloc((size_t)n * sizeof *p);
    if (p)
        sc->heap[sc->n_heap++] = p;
    return p;
}

static cfx_tensor **take_tensors(cfx_box_scratch *sc, int64_t n)
{
    if (n <= CFX_BOX_TENSOR_SCRATCH - sc->n_tensors) {
        cfx_tensor **p = sc->tensors + sc->n_tensors;
        sc->n_tensors += (int)n;
        return p;
    }
    cfx_tensor **p = cfx_malloc((size_t)n * sizeof *p);
    if (p)
        sc->heap[sc->n_heap++] = p;
    return p;
}

/* The checks of an int list or a Tensor list argument v (the conversion's, before it takes
 * memory): CFX_OK with the item count in *n (-1 for the None of an optional int list), or the
 * type error. */
static inline __attribute__((always_inline)) int list_checked_len(const cfx_schema *s, const char *qualname, int i,
                                                                  cfx_box_step st, cfx_value v, int64_t *n)
{
    if (st.form == CFX_BOX_INT_LIST) {
        if (v.kind == CFX_V_NONE && st.optional) {
            *n = -1;
            return CFX_OK;
        }
        *n = int_list_len(v, st.size_hint);
        return *n < 0 ? cfx_argument_type_error(s, qualname, i, v) : CFX_OK;
    }
    /* CFX_BOX_TENSOR_LIST */
    if (v.kind != CFX_V_LIST && v.kind != CFX_V_TUPLE)
        return cfx_argument_type_error(s, qualname, i, v);
    for (uint32_t j = 0; j < v.len; j++) {
        uint32_t k = v.u.items[j].kind;
        if (k != CFX_V_TENSOR && !(k == CFX_V_NONE && st.elem_optional))
            return cfx_argument_type_error(s, qualname, i, v);
    }
    *n = v.len;
    return CFX_OK;
}

int cfx_box_convert_list(const cfx_schema *s, const char *qualname, int i, cfx_box_step st, cfx_value *sv,
                         cfx_box_slot *sl, cfx_box_scratch *sc)
{
    cfx_value v = *sv;
    int64_t n = 0; /* set by list_checked_len on success (the compilers at -O1 cannot see it) */
    int rc = list_checked_len(s, qualname, i, st, v, &n);
    if (rc != CFX_OK)
        return rc;
    if (st.form == CFX_BOX_INT_LIST) {
        if (n < 0) {
            sl->il = (cfx_int_list){NULL, -1};
            return CFX_OK;
        }
        int64_t *p = n ? take_ints(sc, n) : sc->ints;
        if (!p)
            return cfx_error_set(CFX_ERR_NOMEM, qualname, "out of memory");
        int_list_copy(v, n, p);
        sl->il = (cfx_int_list){p, n};
        return CFX_OK;
    }
    cfx_tensor **p = n ? take_tensors(sc, n) : sc->tensors;
    if (!p)
        return cfx_error_set(CFX_ERR_NOMEM, qualname, "out of memory");
    for (int64_t j = 0; j < n; j++)
        p[j] = v.u.items[j].kind == CFX_V_TENSOR ? v.u.items[j].u.t : NULL;
    sl->tl = (cfx_tensor_list){p, n};
    return CFX_OK;
}

int cfx_box_convert_arg_any(const cfx_schema *s, const char *qualname, int i, cfx_box_step st, cfx_value *sv,
                            cfx_box_slot *sl, cfx_box_scratch *sc)
{
    if (st.form == CFX_BOX_INT_LIST || st.form == CFX_BOX_TENSOR_LIST)
        return cfx_box_convert_list(s, qualname, i, st, sv, sl, sc);
    cfx_value v = *sv;
    if (!cfx_box_normalize((cfx_box_conv)st.conv, st.optional, &v)) {
        cfx_argument_type_error(s, qualname, i, *sv);
        return CFX_ERR;
    }
    switch ((cfx_box_form)st.form) {
    case CFX_BOX_TENSOR: sl->t = v.kind == CFX_V_NONE ? NULL : v.u.t; break;
    case CFX_BOX_INT: sl->i = v.u.i; break; /* also layout / memory_format: int64 in the union */
    case CFX_BOX_DOUBLE: sl->d = v.u.d; break;
    case CFX_BOX_BOOL: sl->b = v.u.b; break;
    case CFX_BOX_STR: sl->p = v.u.s; break;
    case CFX_BOX_DTYPE: sl->i32 = (int32_t)v.u.dtype; break;
    case CFX_BOX_DEVICE: sl->dev = v.u.device; break;
    case CFX_BOX_BOXED: sl->p = sv; break;
    default: sl->v = v; break; /* CFX_BOX_VALUE */
    }
    return CFX_OK;
}

/* cfx_box_check_list of a list too long for a fresh scratch: converted into scratch (dropped),
 * so that memory running out fails the check as it would fail the conversion. */
static int check_long_list(const cfx_schema *s, cfx_box_step st, const char *qualname, cfx_value *stack, int i)
{
    cfx_box_scratch sc;
    cfx_box_scratch_init(&sc);
    cfx_box_slot slot;
    int rc = cfx_box_convert_list(s, qualname, i, st, &stack[i], &slot, &sc);
    cfx_box_scratch_free(&sc);
    return rc;
}

int cfx_box_check_list(const cfx_schema *s, cfx_box_step st, const char *qualname, cfx_value *stack, int i)
{
    /* the list's checks are its conversion's. A list whose items fit a fresh scratch cannot
     * fail after them (nothing is allocated), so it is not copied. */
    int64_t n = 0; /* as in cfx_box_convert_list */
    int rc = list_checked_len(s, qualname, i, st, stack[i], &n);
    if (rc != CFX_OK || n <= (st.form == CFX_BOX_INT_LIST ? CFX_BOX_INT_SCRATCH : CFX_BOX_TENSOR_SCRATCH))
        return rc;
    return check_long_list(s, st, qualname, stack, i);
}

int cfx_box_check_args(const cfx_schema *s, const cfx_box_step *steps, const char *qualname, cfx_value *stack, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = cfx_box_check_arg(s, steps[i], qualname, stack, i);
        if (rc != CFX_OK)
            return rc;
    }
    return CFX_OK;
}

int cfx_box_unbox_args(const cfx_schema *s, const char *qualname, const cfx_box_step *steps, int n,
                       cfx_value *stack, cfx_box_slot *slots, cfx_box_scratch *sc)
{
    for (int i = 0; i < n; i++) {
        int rc = cfx_box_convert_arg(s, qualname, i, steps[i], &stack[i], &slots[i], sc);
        if (rc != CFX_OK)
            return rc;
    }
    return CFX_OK;
}

int cfx_box_null_return(const char *qualname)
{
    if (!cfx_error_occurred())
        cfx_error_set(CFX_ERR, qualname, "the kernel of %s returned NULL without an error", qualname);
    return CFX_ERR;
}

int cfx_box_return_list(const char *qualname, const cfx_box_slot *x, cfx_value *out)
{
    if (x->tl.len < 0 || x->tl.len > UINT32_MAX || (x->tl.len > 0 && !x->tl.data))
        return cfx_box_null_return(qualname);
    for (int64_t j = 0; j < x->tl.len; j++)
        if (!x->tl.data[j])
            return cfx_box_null_return(qualname);
    cfx_value *items = cfx_scope_alloc((size_t)x->tl.len * sizeof *items);
    if (!items)
        return CFX_ERR_NOMEM;
    for (int64_t j = 0; j < x->tl.len; j++)
        items[j] = cfx_tensor_value(x->tl.data[j]);
    *out = cfx_list(items, (uint32_t)x->tl.len);
    return CFX_OK;
}

int cfx_box_returns(const char *qualname, bool had_error, const cfx_box_ret_step *rets, const cfx_box_slot *slots,
                    int n, cfx_value *stack)
{
    /* A kernel that cannot return NULL (void, int, ...) fails by recording an error. That is
     * only visible if no error was recorded before; the first error wins. */
    if (cfx_box_kernel_failed(had_error))
        return CFX_ERR;
    cfx_value boxed[CFX_BOX_MAX_RETURNS];
    for (int i = 0; i < n; i++) {
        int rc = cfx_box_return(qualname, rets[i], &slots[i], &boxed[i]);
        if (rc != CFX_OK)
            return rc;
    }
    for (int i = 0; i < n; i++)
        stack[i] = boxed[i];
    return CFX_OK;
}
