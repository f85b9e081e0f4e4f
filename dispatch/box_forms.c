/* box_forms.c - which C form each schema type takes (boxing.h's table), as per-argument
 * steps (boxing_internal.h).
 *
 * c10 derives a kernel's boxing from its C++ type at compile time; cfx derives it from the
 * schema, here, once: when a libffi adapter is built for a kernel (boxing.c) and when
 * tools/opgen generates the built-in operators' entry points and boxed entries. This file
 * depends on nothing but the schema layer, so the generator can link it on its own. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing_internal.h"
#include "dispatch/error.h"

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
const char *cfx_box_type_name(const cfx_type *t)
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

/* c10's schema spelling without alias annotations or size hints: "int[]?", "Tensor?[]". */
static void print_plain_type(const cfx_type *t, cfx_buf *b)
{
    const cfx_type *chain[32];
    int n = 0;
    while ((t->kind == CFX_TYPE_LIST || t->kind == CFX_TYPE_OPTIONAL) && t->n_elems > 0 && n < 32) {
        chain[n++] = t;
        t = t->elems[0];
    }
    const char *name = cfx_box_type_name(t);
    cfx_buf_puts(b, name ? name : "?");
    while (n-- > 0)
        cfx_buf_puts(b, chain[n]->kind == CFX_TYPE_LIST ? "[]" : "?");
}

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
    cfx_free(msg);
    return rc;
}

cfx_box_conv cfx_box_conv_of(int kind)
{
    switch (kind) {
    case CFX_TYPE_TENSOR: return CFX_CONV_TENSOR;
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: return CFX_CONV_INT;
    case CFX_TYPE_FLOAT: return CFX_CONV_DOUBLE;
    case CFX_TYPE_BOOL: return CFX_CONV_BOOL;
    case CFX_TYPE_STR: return CFX_CONV_STR;
    case CFX_TYPE_SCALAR_TYPE: return CFX_CONV_DTYPE;
    case CFX_TYPE_LAYOUT: return CFX_CONV_LAYOUT;
    case CFX_TYPE_MEMORY_FORMAT: return CFX_CONV_MEMFMT;
    case CFX_TYPE_DEVICE: return CFX_CONV_DEVICE;
    case CFX_TYPE_SCALAR: return CFX_CONV_SCALAR;
    case CFX_TYPE_LIST: return CFX_CONV_LIST;
    case CFX_TYPE_GENERATOR: return CFX_CONV_GENERATOR;
    default: return CFX_CONV_ANY;
    }
}

static bool is_int_kind(int k) { return k == CFX_TYPE_INT || k == CFX_TYPE_SYMINT; }

/* The C form of a base (non-optional, non-list) type, or CFX_BOX_BOXED if it has none. */
static cfx_box_form base_form(int kind)
{
    switch (kind) {
    case CFX_TYPE_TENSOR: return CFX_BOX_TENSOR;
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: case CFX_TYPE_LAYOUT: case CFX_TYPE_MEMORY_FORMAT:
        return CFX_BOX_INT;
    case CFX_TYPE_FLOAT: return CFX_BOX_DOUBLE;
    case CFX_TYPE_BOOL: return CFX_BOX_BOOL;
    case CFX_TYPE_STR: return CFX_BOX_STR;
    case CFX_TYPE_SCALAR_TYPE: return CFX_BOX_DTYPE;
    case CFX_TYPE_DEVICE: return CFX_BOX_DEVICE;
    case CFX_TYPE_SCALAR: return CFX_BOX_VALUE;
    default: return CFX_BOX_BOXED;
    }
}

cfx_box_step cfx_box_arg_step(const cfx_argument *arg)
{
    const cfx_type *t = arg->type;
    cfx_box_step st = {CFX_BOX_BOXED, CFX_CONV_ANY, false, false, arg->size_hint};
    if (t->kind == CFX_TYPE_OPTIONAL) {
        const cfx_type *e = t->elems[0];
        st.optional = true;
        if (e->kind == CFX_TYPE_TENSOR) {
            st.form = CFX_BOX_TENSOR;
            st.conv = CFX_CONV_TENSOR;
        } else if (e->kind == CFX_TYPE_LIST && is_int_kind(e->elems[0]->kind)) {
            st.form = CFX_BOX_INT_LIST;
            st.conv = CFX_CONV_INT;
        } else {
            st.form = CFX_BOX_VALUE;
            st.conv = cfx_box_conv_of(e->kind);
        }
    } else if (t->kind == CFX_TYPE_LIST) {
        const cfx_type *e = t->elems[0];
        bool opt_tensor = e->kind == CFX_TYPE_OPTIONAL && e->elems[0]->kind == CFX_TYPE_TENSOR;
        if (is_int_kind(e->kind)) {
            st.form = CFX_BOX_INT_LIST;
            st.conv = CFX_CONV_INT;
        } else if (e->kind == CFX_TYPE_TENSOR || opt_tensor) {
            st.form = CFX_BOX_TENSOR_LIST;
            st.conv = CFX_CONV_TENSOR;
            st.elem_optional = opt_tensor;
        } else {
            st.conv = CFX_CONV_LIST;
        }
    } else {
        st.form = base_form(t->kind);
        st.conv = cfx_box_conv_of(t->kind);
    }
    return st;
}

_Static_assert(CFX_V_KIND_COUNT <= 32, "a set of value kinds fits 32 bits");

uint32_t cfx_box_kinds_as_is(cfx_box_step st)
{
    /* a list's items are checked (and converted) too: no kind passes on its own */
    if (st.form == CFX_BOX_INT_LIST || st.form == CFX_BOX_TENSOR_LIST)
        return 0;
    uint32_t m = 0;
    for (uint32_t k = 0; k < CFX_V_KIND_COUNT; k++) {
        cfx_value v = {k, 0, {.i = 0}};
        /* a kind normalised into another (an int for a float) is rewritten: not as is */
        if (cfx_box_normalize((cfx_box_conv)st.conv, st.optional, &v) && v.kind == k)
            m |= 1u << k;
    }
    return m;
}

cfx_box_ret_step cfx_box_return_step(const cfx_type *t)
{
    cfx_box_ret_step r = {CFX_BOX_VALUE, CFX_V_NONE, false};
    int k = t->kind;
    if (k == CFX_TYPE_OPTIONAL && t->elems[0]->kind == CFX_TYPE_TENSOR) {
        r.form = CFX_BOX_TENSOR;
        r.optional = true;
        return r;
    }
    switch (k) {
    case CFX_TYPE_TENSOR: r.form = CFX_BOX_TENSOR; break;
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: r.form = CFX_BOX_INT; r.kind = CFX_V_INT; break;
    case CFX_TYPE_LAYOUT: r.form = CFX_BOX_INT; r.kind = CFX_V_LAYOUT; break;
    case CFX_TYPE_MEMORY_FORMAT: r.form = CFX_BOX_INT; r.kind = CFX_V_MEMORY_FORMAT; break;
    case CFX_TYPE_FLOAT: r.form = CFX_BOX_DOUBLE; break;
    case CFX_TYPE_BOOL: r.form = CFX_BOX_BOOL; break;
    case CFX_TYPE_STR: r.form = CFX_BOX_STR; break;
    case CFX_TYPE_SCALAR_TYPE: r.form = CFX_BOX_DTYPE; break;
    case CFX_TYPE_DEVICE: r.form = CFX_BOX_DEVICE; break;
    case CFX_TYPE_LIST:
        if (t->elems[0]->kind == CFX_TYPE_TENSOR) {
            r.form = CFX_BOX_TENSOR_LIST;
            break;
        }
        r.form = CFX_BOX_VALUE;
        break;
    default: r.form = CFX_BOX_VALUE; break; /* Scalar, optionals, other lists, objects */
    }
    return r;
}

cfx_box_ret_step cfx_box_schema_return_step(const cfx_schema *s, int i)
{
    cfx_box_ret_step r = cfx_box_return_step(s->returns[i].type);
    if (r.form == CFX_BOX_TENSOR)
        for (int j = 0; j < s->n_args; j++)
            if (!strcmp(s->args[j].name, "output_mask"))
                r.optional = true;
    return r;
}

int cfx_box_check_schema(const cfx_schema *s, const char *qualname)
{
    if (s->is_vararg || s->is_varret)
        return cfx_error_set(CFX_ERR, qualname,
                             "cannot call a C function as %s: a schema with '...' has no C signature",
                             qualname);
    if (s->n_args > CFX_BOX_MAX_ARGS || s->n_returns > CFX_BOX_MAX_RETURNS)
        return cfx_error_set(CFX_ERR, qualname,
                             "cannot call a C function as %s: it has %d arguments and %d returns; "
                             "at most %d and %d are supported",
                             qualname, s->n_args, s->n_returns, CFX_BOX_MAX_ARGS, CFX_BOX_MAX_RETURNS);
    for (int i = 0; i < s->n_args; i++)
        if (!type_supported(s->args[i].type))
            return unsupported(s, qualname, "argument", s->args[i].name, i, s->args[i].type);
    for (int i = 0; i < s->n_returns; i++)
        if (!type_supported(s->returns[i].type))
            return unsupported(s, qualname, "return", s->returns[i].name, i, s->returns[i].type);
    return CFX_OK;
}

/* ---- c10's inferred schema ------------------------------------------------------------ */

char *cfx_adapter_inferred_schema(const cfx_schema *s)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_schema_print_name(s, &b);
    char *q = cfx_buf_take(&b);
    int rc = q ? cfx_box_check_schema(s, q) : CFX_ERR_NOMEM;
    cfx_free(q);
    if (rc != CFX_OK)
        return NULL;
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
