/* boxing.c - calling a plain C function with boxed arguments, by its schema, through libffi.
 *
 * c10 makes a boxed wrapper for every unboxed kernel at compile time from its C++ type
 * (make_boxed_from_unboxed_functor). C has no templates, so cfx does the same work at
 * registration time: the schema is walked once into a libffi call interface plus one small
 * conversion step per argument and per return. A call then checks each stack slot's kind,
 * moves it into a C-typed slot, calls ffi_call and boxes the results back onto the stack.
 * Nothing is allocated on the call path except for lists larger than the on-stack scratch
 * buffers, which are rare and freed before returning.
 *
 * Conversion follows IValue's rules where they are strict (an int argument does not take a
 * bool or a float) and the Python binding's where they are lenient (a float argument takes an
 * int; ScalarType, Layout and MemoryFormat take their integer codes; int[N] takes one int and
 * repeats it N times). Optional non-tensor values are normalised before the kernel sees them
 * (a ScalarType? given as INT arrives as DTYPE), so kernels can trust the kind. A wrong kind
 * is reported with the text torch.ops uses ("aten::add() Expected a value of type 'Tensor' for
 * argument 'other' but instead found type 'str'.").
 *
 * Returns: a list-typed return (Tensor[] in particular) comes back from the C function as a
 * cfx_value, because a boxed list is a view of cfx_value items and someone must own those
 * items; the kernel owns them exactly as a boxed kernel would. Every other return uses the C
 * type listed in boxing.h.
 *
 * ABI: cfx_value (uint32, uint32, 8-byte union) is described to libffi as {uint32, uint32,
 * uint64}. On x86-64 SysV the union's eightbyte classifies as INTEGER whether it holds a double
 * or an int (INTEGER wins the merge), so both descriptions travel in two general registers;
 * test_boxing.c checks it with doubles in the payload and enough arguments to spill.
 *
 * Cost (gcc -O2, x86-64, 10M calls, CFX_BOXING_BENCH=1 in test_boxing.c): a boxed call of
 * (Tensor, Tensor, Scalar) -> Tensor takes about 68 ns. A bare ffi_call of the same cif takes
 * about 54 ns on that machine (40 ns with no struct argument: libffi classifies arguments on
 * every call), so the conversions cost about 14 ns. Typed wrappers skip all of it by calling
 * the unboxed pointer directly (kernel.h). */
#include <ffi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"

enum {
    MAX_ARGS = 64,
    MAX_RETURNS = 16,
    RET_BYTES = 512,      /* the largest return struct: 16 cfx_values would be 256 bytes */
    INT_SCRATCH = 256,    /* int64s for all int-list arguments of one call */
    TENSOR_SCRATCH = 128, /* tensor pointers for all Tensor[] arguments of one call */
};

/* What a boxed value must be, and how it is normalised. */
typedef enum conv {
    CV_TENSOR,
    CV_INT,
    CV_DOUBLE,  /* INT is converted */
    CV_BOOL,
    CV_STR,
    CV_DTYPE,   /* INT is converted */
    CV_LAYOUT,  /* INT is converted */
    CV_MEMFMT,  /* INT is converted */
    CV_DEVICE,
    CV_SCALAR,  /* INT, DOUBLE or BOOL */
    CV_LIST,    /* LIST or TUPLE, items unchecked */
    CV_ANY,     /* anything, NONE included */
} conv;

/* Where the converted value goes. */
typedef enum form {
    F_TENSOR,      /* cfx_tensor * (NULL for None) */
    F_INT,         /* int64_t, also Layout and MemoryFormat */
    F_DOUBLE,
    F_BOOL,
    F_STR,         /* const char * */
    F_DTYPE,       /* cfx_dtype as int */
    F_DEVICE,      /* cfx_device by value */
    F_VALUE,       /* cfx_value by value */
    F_INT_LIST,    /* cfx_int_list by value */
    F_TENSOR_LIST, /* cfx_tensor_list by value */
    F_BOXED,       /* const cfx_value * to the stack slot */
} form;

typedef struct step {
    uint8_t form;
    uint8_t conv;
    bool optional;      /* NONE accepted */
    bool elem_optional; /* Tensor?[]: NONE items become NULL */
    int32_t size_hint;  /* int[N]: one int is repeated N times */
} step;

typedef struct ret_step {
    uint8_t form; /* F_TENSOR, F_INT, F_DOUBLE, F_BOOL, F_STR, F_DTYPE, F_DEVICE, F_VALUE */
    uint8_t kind; /* cfx_value_kind to box an F_INT as: INT, LAYOUT or MEMORY_FORMAT */
    bool optional;
    uint8_t size;   /* bytes of the C value */
    uint16_t offset;
} ret_step;

struct cfx_adapter {
    ffi_cif cif;
    cfx_fnptr fn;
    const cfx_schema *schema;
    int n_args, n_returns;
    bool lead;          /* the C function takes a `void *` before the schema's arguments */
    step steps[MAX_ARGS];
    ret_step rets[MAX_RETURNS];
    ffi_type *arg_types[MAX_ARGS + 1]; /* [0] is the lead pointer's when lead is set */
    ffi_type ret_struct; /* several returns: a struct of their C types */
    ffi_type *ret_elems[MAX_RETURNS + 1];
    char qualname[]; /* "aten::add.Tensor", for error messages */
};

typedef union slot {
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
} slot;

/* libffi descriptions of the structs passed by value. Size and alignment are filled in so that
 * ffi_prep_cif never writes to these shared objects (it only computes them when size is 0). */
static ffi_type *value_elems[] = {&ffi_type_uint32, &ffi_type_uint32, &ffi_type_uint64, NULL};
static ffi_type value_type = {sizeof(cfx_value), _Alignof(cfx_value), FFI_TYPE_STRUCT, value_elems};
static ffi_type *device_elems[] = {&ffi_type_sint8, &ffi_type_sint8, NULL};
static ffi_type device_type = {sizeof(cfx_device), _Alignof(cfx_device), FFI_TYPE_STRUCT, device_elems};
static ffi_type *list_elems[] = {&ffi_type_pointer, &ffi_type_sint64, NULL};
static ffi_type int_list_type = {sizeof(cfx_int_list), _Alignof(cfx_int_list), FFI_TYPE_STRUCT, list_elems};
static ffi_type tensor_list_type = {sizeof(cfx_tensor_list), _Alignof(cfx_tensor_list), FFI_TYPE_STRUCT, list_elems};

_Static_assert(offsetof(cfx_value, len) == 4 && offsetof(cfx_value, u) == 8 && sizeof(cfx_value) == 16,
               "cfx_value must match {uint32, uint32, uint64}");
_Static_assert(offsetof(cfx_device, index) == 1 && sizeof(cfx_device) == 2, "cfx_device must match {int8, int8}");
_Static_assert(offsetof(cfx_int_list, len) == sizeof(void *) && sizeof(cfx_int_list) == 16 &&
                   offsetof(cfx_tensor_list, len) == sizeof(void *) && sizeof(cfx_tensor_list) == 16,
               "list views must match {pointer, int64}");
_Static_assert(sizeof(bool) == 1 && sizeof(cfx_dtype) == 4, "bool is passed as uint8, cfx_dtype as int32");

/* ---- type walking --------------------------------------------------------------------- */

/* Types with no cfx_value representation. Type trees are walked along their element chain
 * (list and optional have one element); these kinds are where the walk must stop. */
static bool kind_unsupported(int k)
{
    switch (k) {
    case CFX_TYPE_TUPLE: case CFX_TYPE_DICT: case CFX_TYPE_FUTURE: case CFX_TYPE_RREF:
    case CFX_TYPE_COMPLEX: case CFX_TYPE_VAR: case CFX_TYPE_CAPSULE: case CFX_TYPE_QUANTIZER:
    case CFX_TYPE_ANY_ENUM: case CFX_TYPE_AWAIT: case CFX_TYPE_UNION: case CFX_TYPE_PYOBJECT:
        return true;
    default:
        return k < 0 || k >= CFX_TYPE_KIND_COUNT;
    }
}

static bool type_supported(const cfx_type *t)
{
    for (;;) {
        if (kind_unsupported(t->kind))
            return false;
        if (t->kind != CFX_TYPE_LIST && t->kind != CFX_TYPE_OPTIONAL)
            return true;
        if (t->n_elems < 1 || !t->elems[0])
            return false;
        t = t->elems[0];
    }
}

/* The name c10 prints for a base type in a schema. */
static const char *base_name(const cfx_type *t)
{
    switch (t->kind) {
    case CFX_TYPE_TENSOR: return "Tensor";
    case CFX_TYPE_INT: return "int";
    case CFX_TYPE_SYMINT: return "SymInt";
    case CFX_TYPE_FLOAT: return "float";
    case CFX_TYPE_BOOL: return "bool";
    case CFX_TYPE_STR: return "str";
    case CFX_TYPE_SCALAR: return "Scalar";
    case CFX_TYPE_SCALAR_TYPE: return "ScalarType";
    case CFX_TYPE_LAYOUT: return "Layout";
    case CFX_TYPE_MEMORY_FORMAT: return "MemoryFormat";
    case CFX_TYPE_DEVICE: return "Device";
    case CFX_TYPE_GENERATOR: return "Generator";
    case CFX_TYPE_STORAGE: return "Storage";
    case CFX_TYPE_STREAM: return "Stream";
    case CFX_TYPE_QSCHEME: return "QScheme";
    case CFX_TYPE_NONE: return "NoneType";
    case CFX_TYPE_ANY: return "Any";
    case CFX_TYPE_ANY_CLASS: return "AnyClassType";
    case CFX_TYPE_CLASS: return t->name ? t->name : "";
    default: return NULL;
    }
}

/* The Python annotation torch.ops names in type errors: 'number', 'List[int]',
 * 'Optional[Device]'. ScalarType, Layout and MemoryFormat are ints to Python. */
static const char *annotation_name(const cfx_type *t)
{
    switch (t->kind) {
    case CFX_TYPE_SYMINT: case CFX_TYPE_SCALAR_TYPE: case CFX_TYPE_LAYOUT:
    case CFX_TYPE_MEMORY_FORMAT: case CFX_TYPE_QSCHEME:
        return "int";
    case CFX_TYPE_SCALAR: return "number";
    default: return base_name(t);
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

/* c10's schema spelling without alias annotations or size hints: "int[]?", "Tensor?[]". */
static void print_plain_type(const cfx_type *t, cfx_buf *b)
{
    const cfx_type *chain[32];
    int n = 0;
    while ((t->kind == CFX_TYPE_LIST || t->kind == CFX_TYPE_OPTIONAL) && t->n_elems > 0 && n < 32) {
        chain[n++] = t;
        t = t->elems[0];
    }
    const char *name = base_name(t);
    cfx_buf_puts(b, name ? name : "?");
    while (n-- > 0)
        cfx_buf_puts(b, chain[n]->kind == CFX_TYPE_LIST ? "[]" : "?");
}

/* Python's type(x).__name__ for the value torch.ops would have seen. */
static const char *found_type_name(cfx_value v)
{
    static const char *const names[CFX_V_KIND_COUNT] = {
        [CFX_V_NONE] = "NoneType", [CFX_V_BOOL] = "bool", [CFX_V_INT] = "int",
        [CFX_V_DOUBLE] = "float", [CFX_V_STRING] = "str", [CFX_V_TENSOR] = "Tensor",
        [CFX_V_LIST] = "list", [CFX_V_TUPLE] = "tuple", [CFX_V_DTYPE] = "dtype",
        [CFX_V_DEVICE] = "device", [CFX_V_MEMORY_FORMAT] = "memory_format",
        [CFX_V_LAYOUT] = "layout", [CFX_V_OBJECT] = "ScriptObject", [CFX_V_NODE] = "Node",
    };
    const char *n = v.kind < CFX_V_KIND_COUNT ? names[v.kind] : NULL;
    return n ? n : "unknown";
}

/* ---- building ------------------------------------------------------------------------- */

static int unsupported(const cfx_schema *s, const char *qualname, const char *what,
                       const char *name, int index, const cfx_type *t)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "cannot call a C function as %s: ", qualname);
    if (name && *name)
        cfx_buf_printf(&b, "%s '%s'", what, name);
    else
        cfx_buf_printf(&b, "%s %d", what, index);
    cfx_buf_puts(&b, " has type '");
    cfx_type_print(t, &b);
    cfx_buf_puts(&b, "', which has no C mapping (see dispatch/boxing.h)\nDeclaration: ");
    cfx_schema_print(s, &b);
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, qualname, msg ? msg : "unsupported schema type");
    free(msg);
    return rc;
}

static conv scalar_conv(int kind)
{
    switch (kind) {
    case CFX_TYPE_TENSOR: return CV_TENSOR;
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: return CV_INT;
    case CFX_TYPE_FLOAT: return CV_DOUBLE;
    case CFX_TYPE_BOOL: return CV_BOOL;
    case CFX_TYPE_STR: return CV_STR;
    case CFX_TYPE_SCALAR_TYPE: return CV_DTYPE;
    case CFX_TYPE_LAYOUT: return CV_LAYOUT;
    case CFX_TYPE_MEMORY_FORMAT: return CV_MEMFMT;
    case CFX_TYPE_DEVICE: return CV_DEVICE;
    case CFX_TYPE_SCALAR: return CV_SCALAR;
    case CFX_TYPE_LIST: return CV_LIST;
    default: return CV_ANY;
    }
}

static bool is_int_kind(int k) { return k == CFX_TYPE_INT || k == CFX_TYPE_SYMINT; }

/* The C form of a base (non-optional, non-list) type, or F_BOXED if it has none. */
static form base_form(int kind)
{
    switch (kind) {
    case CFX_TYPE_TENSOR: return F_TENSOR;
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: case CFX_TYPE_LAYOUT: case CFX_TYPE_MEMORY_FORMAT:
        return F_INT;
    case CFX_TYPE_FLOAT: return F_DOUBLE;
    case CFX_TYPE_BOOL: return F_BOOL;
    case CFX_TYPE_STR: return F_STR;
    case CFX_TYPE_SCALAR_TYPE: return F_DTYPE;
    case CFX_TYPE_DEVICE: return F_DEVICE;
    case CFX_TYPE_SCALAR: return F_VALUE;
    default: return F_BOXED;
    }
}

static ffi_type *form_ffi_type(form f)
{
    switch (f) {
    case F_INT: return &ffi_type_sint64;
    case F_DOUBLE: return &ffi_type_double;
    case F_BOOL: return &ffi_type_uint8;
    case F_DTYPE: return &ffi_type_sint32;
    case F_DEVICE: return &device_type;
    case F_VALUE: return &value_type;
    case F_INT_LIST: return &int_list_type;
    case F_TENSOR_LIST: return &tensor_list_type;
    default: return &ffi_type_pointer; /* F_TENSOR, F_STR, F_BOXED */
    }
}

static step arg_step(const cfx_argument *arg)
{
    const cfx_type *t = arg->type;
    step st = {F_BOXED, CV_ANY, false, false, arg->size_hint};
    if (t->kind == CFX_TYPE_OPTIONAL) {
        const cfx_type *e = t->elems[0];
        st.optional = true;
        if (e->kind == CFX_TYPE_TENSOR) {
            st.form = F_TENSOR;
            st.conv = CV_TENSOR;
        } else if (e->kind == CFX_TYPE_LIST && is_int_kind(e->elems[0]->kind)) {
            st.form = F_INT_LIST;
            st.conv = CV_INT;
        } else {
            st.form = F_VALUE;
            st.conv = scalar_conv(e->kind);
        }
    } else if (t->kind == CFX_TYPE_LIST) {
        const cfx_type *e = t->elems[0];
        bool opt_tensor = e->kind == CFX_TYPE_OPTIONAL && e->elems[0]->kind == CFX_TYPE_TENSOR;
        if (is_int_kind(e->kind)) {
            st.form = F_INT_LIST;
            st.conv = CV_INT;
        } else if (e->kind == CFX_TYPE_TENSOR || opt_tensor) {
            st.form = F_TENSOR_LIST;
            st.conv = CV_TENSOR;
            st.elem_optional = opt_tensor;
        } else {
            st.conv = CV_LIST;
        }
    } else {
        st.form = base_form(t->kind);
        st.conv = scalar_conv(t->kind);
    }
    return st;
}

static ret_step return_step(const cfx_type *t)
{
    ret_step r = {F_VALUE, CFX_V_NONE, false, 0, 0};
    int k = t->kind;
    if (k == CFX_TYPE_OPTIONAL && t->elems[0]->kind == CFX_TYPE_TENSOR) {
        r.form = F_TENSOR;
        r.optional = true;
        return r;
    }
    switch (k) {
    case CFX_TYPE_TENSOR: r.form = F_TENSOR; break;
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: r.form = F_INT; r.kind = CFX_V_INT; break;
    case CFX_TYPE_LAYOUT: r.form = F_INT; r.kind = CFX_V_LAYOUT; break;
    case CFX_TYPE_MEMORY_FORMAT: r.form = F_INT; r.kind = CFX_V_MEMORY_FORMAT; break;
    case CFX_TYPE_FLOAT: r.form = F_DOUBLE; break;
    case CFX_TYPE_BOOL: r.form = F_BOOL; break;
    case CFX_TYPE_STR: r.form = F_STR; break;
    case CFX_TYPE_SCALAR_TYPE: r.form = F_DTYPE; break;
    case CFX_TYPE_DEVICE: r.form = F_DEVICE; break;
    default: r.form = F_VALUE; break; /* Scalar, optionals, lists, objects */
    }
    return r;
}

static int check_schema(const cfx_schema *s, const char *qualname)
{
    if (s->is_vararg || s->is_varret)
        return cfx_error_set(CFX_ERR, qualname,
                             "cannot call a C function as %s: a schema with '...' has no C signature",
                             qualname);
    if (s->n_args > MAX_ARGS || s->n_returns > MAX_RETURNS)
        return cfx_error_set(CFX_ERR, qualname,
                             "cannot call a C function as %s: it has %d arguments and %d returns; "
                             "at most %d and %d are supported",
                             qualname, s->n_args, s->n_returns, MAX_ARGS, MAX_RETURNS);
    for (int i = 0; i < s->n_args; i++)
        if (!type_supported(s->args[i].type))
            return unsupported(s, qualname, "argument", s->args[i].name, i, s->args[i].type);
    for (int i = 0; i < s->n_returns; i++)
        if (!type_supported(s->returns[i].type))
            return unsupported(s, qualname, "return", s->returns[i].name, i, s->returns[i].type);
    return CFX_OK;
}

static char *qualified_name(const cfx_schema *s, size_t *len)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, s->name ? s->name : "");
    if (s->overload && *s->overload)
        cfx_buf_printf(&b, ".%s", s->overload);
    *len = b.len;
    return cfx_buf_take(&b);
}

static cfx_adapter *adapter_new(const cfx_schema *s, cfx_fnptr fn, bool lead)
{
    size_t qlen;
    char *q = qualified_name(s, &qlen);
    if (!q) {
        cfx_error_set(CFX_ERR_NOMEM, s->name, "out of memory");
        return NULL;
    }
    if (check_schema(s, q) != CFX_OK) {
        free(q);
        return NULL;
    }
    cfx_adapter *a = calloc(1, sizeof *a + qlen + 1);
    if (!a) {
        cfx_error_set(CFX_ERR_NOMEM, q, "out of memory");
        free(q);
        return NULL;
    }
    memcpy(a->qualname, q, qlen + 1);
    free(q);
    a->fn = fn;
    a->schema = s;
    a->n_args = s->n_args;
    a->n_returns = s->n_returns;
    a->lead = lead;
    if (lead)
        a->arg_types[0] = &ffi_type_pointer;
    for (int i = 0; i < s->n_args; i++) {
        a->steps[i] = arg_step(&s->args[i]);
        a->arg_types[i + lead] = form_ffi_type((form)a->steps[i].form);
    }

    ffi_type *rtype = &ffi_type_void;
    for (int i = 0; i < s->n_returns; i++) {
        a->rets[i] = return_step(s->returns[i].type);
        a->ret_elems[i] = form_ffi_type((form)a->rets[i].form);
        a->rets[i].size = (uint8_t)a->ret_elems[i]->size;
    }
    if (s->n_returns == 1) {
        rtype = a->ret_elems[0];
    } else if (s->n_returns > 1) {
        size_t offsets[MAX_RETURNS];
        a->ret_elems[s->n_returns] = NULL;
        a->ret_struct.type = FFI_TYPE_STRUCT;
        a->ret_struct.elements = a->ret_elems;
        if (ffi_get_struct_offsets(FFI_DEFAULT_ABI, &a->ret_struct, offsets) != FFI_OK) {
            cfx_error_set(CFX_ERR, a->qualname, "libffi rejected the return struct of %s", a->qualname);
            free(a);
            return NULL;
        }
        for (int i = 0; i < s->n_returns; i++)
            a->rets[i].offset = (uint16_t)offsets[i];
        rtype = &a->ret_struct;
    }
    if (rtype->size > RET_BYTES) {
        cfx_error_set(CFX_ERR, a->qualname, "the returns of %s take %zu bytes; at most %d are supported",
                      a->qualname, rtype->size, RET_BYTES);
        free(a);
        return NULL;
    }
    if (ffi_prep_cif(&a->cif, FFI_DEFAULT_ABI, (unsigned)(s->n_args + lead), rtype, a->arg_types) != FFI_OK) {
        cfx_error_set(CFX_ERR, a->qualname, "libffi could not prepare a call interface for %s", a->qualname);
        free(a);
        return NULL;
    }
    return a;
}

cfx_adapter *cfx_adapter_new(const cfx_schema *s, cfx_fnptr fn) { return adapter_new(s, fn, false); }
cfx_adapter *cfx_adapter_new_lead(const cfx_schema *s, cfx_fnptr fn) { return adapter_new(s, fn, true); }

void cfx_adapter_free(cfx_adapter *a) { free(a); }

/* ---- calling -------------------------------------------------------------------------- */

/* Checks v against c and normalises it in place (INT -> DOUBLE for a float, ...). */
static bool normalize(conv c, bool optional, cfx_value *v)
{
    uint32_t k = v->kind;
    if (k == CFX_V_NONE)
        return optional || c == CV_ANY;
    switch (c) {
    case CV_TENSOR: return k == CFX_V_TENSOR;
    case CV_INT: return k == CFX_V_INT;
    case CV_DOUBLE:
        if (k == CFX_V_INT)
            *v = cfx_double((double)v->u.i);
        return v->kind == CFX_V_DOUBLE;
    case CV_BOOL: return k == CFX_V_BOOL;
    case CV_STR: return k == CFX_V_STRING;
    case CV_DTYPE:
        if (k == CFX_V_INT)
            *v = cfx_dtype_value((cfx_dtype)v->u.i);
        return v->kind == CFX_V_DTYPE;
    case CV_LAYOUT:
        if (k == CFX_V_INT)
            *v = cfx_layout_value(v->u.i);
        return v->kind == CFX_V_LAYOUT;
    case CV_MEMFMT:
        if (k == CFX_V_INT)
            *v = cfx_memory_format_value((cfx_memory_format)v->u.i);
        return v->kind == CFX_V_MEMORY_FORMAT;
    case CV_DEVICE: return k == CFX_V_DEVICE;
    case CV_SCALAR: return k == CFX_V_INT || k == CFX_V_DOUBLE || k == CFX_V_BOOL;
    case CV_LIST: return k == CFX_V_LIST || k == CFX_V_TUPLE;
    case CV_ANY: return true;
    }
    return false;
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

/* The argument-binding error of torch.ops, with its text. For Scalar and Tensor parameters
 * PyTorch's binding appends why the cast failed ("Cast error details: Cannot cast None to
 * number", "... Unable to cast s to Tensor"), checked against torch 1.13. */
int cfx_argument_type_error(const cfx_schema *s, const char *qualname, int i, cfx_value v)
{
    if (cfx_error_occurred())
        return CFX_ERR;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s() Expected a value of type '", s->name ? s->name : "");
    print_annotation(s->args[i].type, &b);
    cfx_buf_printf(&b, "' for argument '%s' but instead found type '%s'.\nPosition: %d\nValue: ",
                   s->args[i].name, found_type_name(v), i);
    cfx_value_print(v, CFX_STYLE_PYTHON, &b);
    cfx_buf_puts(&b, "\nDeclaration: ");
    cfx_schema_print(s, &b);
    int kind = s->args[i].type->kind;
    if (kind == CFX_TYPE_SCALAR || kind == CFX_TYPE_TENSOR) {
        cfx_buf_puts(&b, kind == CFX_TYPE_SCALAR ? "\nCast error details: Cannot cast "
                                                 : "\nCast error details: Unable to cast ");
        if (v.kind == CFX_V_STRING) /* pybind shows str(value), not repr */
            cfx_buf_puts(&b, v.u.s);
        else
            cfx_value_print(v, CFX_STYLE_PYTHON, &b);
        cfx_buf_puts(&b, kind == CFX_TYPE_SCALAR ? " to number" : " to Tensor");
    }
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, qualname, msg ? msg : "argument of the wrong type");
    free(msg);
    return CFX_ERR;
}

static int arg_error(const cfx_adapter *a, int i, cfx_value v)
{
    return cfx_argument_type_error(a->schema, a->qualname, i, v);
}

/* Per-call scratch: list arguments are carved from these arrays; a list that does not fit gets
 * its own malloc, remembered in heap[] and freed after the call. */
typedef struct scratch {
    int64_t ints[INT_SCRATCH];
    cfx_tensor *tensors[TENSOR_SCRATCH];
    void *heap[MAX_ARGS];
    int n_ints, n_tensors, n_heap;
} scratch;

static int64_t *take_ints(scratch *sc, int64_t n)
{
    if (n <= INT_SCRATCH - sc->n_ints) {
        int64_t *p = sc->ints + sc->n_ints;
        sc->n_ints += (int)n;
        return p;
    }
    int64_t *p = malloc((size_t)n * sizeof *p);
    if (p)
        sc->heap[sc->n_heap++] = p;
    return p;
}

static cfx_tensor **take_tensors(scratch *sc, int64_t n)
{
    if (n <= TENSOR_SCRATCH - sc->n_tensors) {
        cfx_tensor **p = sc->tensors + sc->n_tensors;
        sc->n_tensors += (int)n;
        return p;
    }
    cfx_tensor **p = malloc((size_t)n * sizeof *p);
    if (p)
        sc->heap[sc->n_heap++] = p;
    return p;
}

/* Converts argument i into its C slot. */
static int convert_arg(const cfx_adapter *a, int i, const step *st, cfx_value *sv, slot *sl,
                       scratch *sc)
{
    cfx_value v = *sv;
    switch ((form)st->form) {
    case F_INT_LIST: {
        if (v.kind == CFX_V_NONE && st->optional) {
            sl->il = (cfx_int_list){NULL, -1};
            return CFX_OK;
        }
        int64_t n = int_list_len(v, st->size_hint);
        if (n < 0)
            return arg_error(a, i, v);
        int64_t *p = n ? take_ints(sc, n) : sc->ints;
        if (!p)
            return cfx_error_set(CFX_ERR_NOMEM, a->qualname, "out of memory");
        int_list_copy(v, n, p);
        sl->il = (cfx_int_list){p, n};
        return CFX_OK;
    }
    case F_TENSOR_LIST: {
        if (v.kind != CFX_V_LIST && v.kind != CFX_V_TUPLE)
            return arg_error(a, i, v);
        int64_t n = v.len;
        for (int64_t j = 0; j < n; j++) {
            uint32_t k = v.u.items[j].kind;
            if (k != CFX_V_TENSOR && !(k == CFX_V_NONE && st->elem_optional))
                return arg_error(a, i, v);
        }
        cfx_tensor **p = n ? take_tensors(sc, n) : sc->tensors;
        if (!p)
            return cfx_error_set(CFX_ERR_NOMEM, a->qualname, "out of memory");
        for (int64_t j = 0; j < n; j++)
            p[j] = v.u.items[j].kind == CFX_V_TENSOR ? v.u.items[j].u.t : NULL;
        sl->tl = (cfx_tensor_list){p, n};
        return CFX_OK;
    }
    case F_BOXED:
        if (!normalize((conv)st->conv, st->optional, &v))
            return arg_error(a, i, v);
        sl->p = sv;
        return CFX_OK;
    default:
        break;
    }
    if (!normalize((conv)st->conv, st->optional, &v))
        return arg_error(a, i, *sv);
    switch ((form)st->form) {
    case F_TENSOR: sl->t = v.kind == CFX_V_NONE ? NULL : v.u.t; break;
    case F_INT: sl->i = v.u.i; break; /* also layout / memory_format: int64 in the union */
    case F_DOUBLE: sl->d = v.u.d; break;
    case F_BOOL: sl->b = v.u.b; break;
    case F_STR: sl->p = v.u.s; break;
    case F_DTYPE: sl->i32 = (int32_t)v.u.dtype; break;
    case F_DEVICE: sl->dev = v.u.device; break;
    default: sl->v = v; break; /* F_VALUE */
    }
    return CFX_OK;
}

static int null_return(const cfx_adapter *a)
{
    if (!cfx_error_occurred())
        cfx_error_set(CFX_ERR, a->qualname, "the kernel of %s returned NULL without an error", a->qualname);
    return CFX_ERR;
}

static int box_return(const cfx_adapter *a, const ret_step *r, const unsigned char *p, bool widened,
                      cfx_value *out)
{
    slot x;
    if (widened && (r->form == F_BOOL || r->form == F_DTYPE)) {
        /* libffi returns a small integral value widened to a full ffi_arg */
        ffi_sarg w;
        memcpy(&w, p, sizeof w);
        if (r->form == F_BOOL)
            x.b = (uint8_t)w;
        else
            x.i32 = (int32_t)w;
    } else {
        memcpy(&x, p, r->size);
    }
    switch ((form)r->form) {
    case F_TENSOR:
        if (!x.t && !r->optional)
            return null_return(a);
        *out = x.t ? cfx_tensor_value(x.t) : cfx_none();
        break;
    case F_INT: *out = (cfx_value){r->kind, 0, {.i = x.i}}; break;
    case F_DOUBLE: *out = cfx_double(x.d); break;
    case F_BOOL: *out = cfx_bool(x.b != 0); break;
    case F_DTYPE: *out = cfx_dtype_value((cfx_dtype)x.i32); break;
    case F_STR:
        if (!x.p)
            return null_return(a);
        *out = (cfx_value){CFX_V_STRING, (uint32_t)strlen(x.p), {.s = x.p}};
        break;
    case F_DEVICE: *out = cfx_device_value(x.dev); break;
    default: *out = x.v; break;
    }
    return CFX_OK;
}

static int adapter_call(cfx_adapter *a, void *lead, cfx_value *stack)
{
    slot slots[MAX_ARGS];
    void *avalue[MAX_ARGS + 1];
    scratch sc;
    sc.n_ints = sc.n_tensors = sc.n_heap = 0;
    _Alignas(16) unsigned char rbuf[RET_BYTES];
    int rc = CFX_OK;

    for (int i = 0; i < a->n_args; i++) {
        rc = convert_arg(a, i, &a->steps[i], &stack[i], &slots[i], &sc);
        if (rc != CFX_OK)
            goto out;
        avalue[i + a->lead] = &slots[i];
    }
    if (a->lead)
        avalue[0] = &lead;
    /* A kernel that cannot return NULL (void, int, ...) fails by recording an error. That is
     * only visible if no error was recorded before; the first error wins. */
    bool had_error = cfx_error_occurred();
    ffi_call(&a->cif, a->fn, rbuf, avalue);
    if (!had_error && cfx_error_occurred()) {
        rc = CFX_ERR;
        goto out;
    }
    cfx_value boxed[MAX_RETURNS];
    bool widened = a->n_returns == 1;
    for (int i = 0; i < a->n_returns; i++) {
        rc = box_return(a, &a->rets[i], rbuf + a->rets[i].offset, widened, &boxed[i]);
        if (rc != CFX_OK)
            goto out;
    }
    for (int i = 0; i < a->n_returns; i++)
        stack[i] = boxed[i];
out:
    for (int i = 0; i < sc.n_heap; i++)
        free(sc.heap[i]);
    return rc < 0 ? rc : CFX_OK;
}

int cfx_adapter_call_boxed(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op;
    (void)ks;
    return adapter_call(ctx, NULL, stack);
}

int cfx_adapter_call_lead(cfx_adapter *a, void *lead, cfx_value *stack)
{
    return adapter_call(a, lead, stack);
}

/* ---- c10's inferred schema ------------------------------------------------------------ */

char *cfx_adapter_inferred_schema(const cfx_schema *s)
{
    size_t qlen;
    char *q = qualified_name(s, &qlen);
    if (!q || check_schema(s, q) != CFX_OK) {
        free(q);
        return NULL;
    }
    free(q);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_putc(&b, '(');
    for (int i = 0; i < s->n_args; i++) {
        if (i)
            cfx_buf_puts(&b, ", ");
        print_plain_type(s->args[i].type, &b);
        cfx_buf_printf(&b, " _%d", i);
    }
    cfx_buf_puts(&b, ") -> ");
    if (s->n_returns != 1)
        cfx_buf_putc(&b, '(');
    for (int i = 0; i < s->n_returns; i++) {
        if (i)
            cfx_buf_puts(&b, ", ");
        print_plain_type(s->returns[i].type, &b);
        cfx_buf_printf(&b, " _%d", i);
    }
    if (s->n_returns != 1)
        cfx_buf_putc(&b, ')');
    return cfx_buf_take(&b);
}
