/* fake_render.c - printing calls and tensors the way FakeTensorMode's errors print them.
 *
 * "Please convert all Tensors to FakeTensors first ... Found in aten.add.Tensor(...)" shows
 * the call as torch._utils.render_call renders the (args, kwargs) that __torch_dispatch__
 * received: the dispatcher's parseIValuesToPyArgsKwargs drops trailing positional arguments
 * equal to their defaults and passes kwarg-only ones by name unless defaulted, and tensors are
 * printed under printoptions(threshold=0, edgeitems=0). PyTorch 2.x prints a summarized real
 * tensor as "tensor([...], size=(3,))" (no data), a 0-dim one as "tensor(2., size=())", an
 * empty one as "tensor([])", a fake one as "FakeTensor(..., size=(3,))"; suffixes wrap at 80
 * columns as _add_suffixes does. Only what cfx's dtypes and devices can show is handled. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/fake_internal.h"
#include "dispatch/schema.h"

void cfx_fake_put_op_name(const cfx_op *op, cfx_buf *b)
{
    const cfx_schema *s = cfx_op_schema(op);
    const char *name = s ? s->name : cfx_op_name(op);
    const char *sep = strstr(name, "::");
    if (sep) {
        cfx_buf_putn(b, name, (size_t)(sep - name));
        cfx_buf_putc(b, '.');
        name = sep + 2;
    }
    const char *dot = s ? NULL : strchr(name, '.');
    if (dot) { /* no schema: the qualified name carries the overload */
        cfx_buf_puts(b, name);
        return;
    }
    cfx_buf_puts(b, name);
    cfx_buf_putc(b, '.');
    cfx_buf_puts(b, s && s->overload[0] ? s->overload : "default");
}

void cfx_fake_put_device(cfx_device d, cfx_buf *b)
{
    char buf[32];
    cfx_buf_puts(b, cfx_device_format(d, buf, sizeof buf));
}

static void put_size_tuple(const cfx_tensor *t, cfx_buf *b)
{
    cfx_buf_putc(b, '(');
    for (int i = 0; i < t->ndim; i++)
        cfx_buf_printf(b, i ? ", %" PRId64 : "%" PRId64, t->sizes[i]);
    if (t->ndim == 1)
        cfx_buf_putc(b, ',');
    cfx_buf_putc(b, ')');
}

/* _Formatter for one floating value under threshold=0 (the 0-dim case). */
static void put_float(double v, cfx_buf *b)
{
    if (!isfinite(v) || v == 0) {
        /* int mode, no nonzero finite values */
        if (isnan(v))
            cfx_buf_puts(b, "nan");
        else if (isinf(v))
            cfx_buf_puts(b, v > 0 ? "inf" : "-inf");
        else
            cfx_buf_printf(b, "%.0f.", v);
        return;
    }
    double a = fabs(v);
    if (v == ceil(v)) {
        if (a > 1.0e8)
            cfx_buf_printf(b, "%.4e", v);
        else
            cfx_buf_printf(b, "%.0f.", v);
    } else if (a > 1.0e8 || a < 1.0e-4) {
        cfx_buf_printf(b, "%.4e", v);
    } else {
        cfx_buf_printf(b, "%.4f", v);
    }
}

/* A 0-dim tensor's value; a complex one as _scalar_str prints it: each part by its own
 * formatter, the imaginary part with "j" and a "+" unless it has a sign. */
static void put_scalar(const cfx_tensor *t, cfx_buf *b)
{
    const void *p = cfx_tensor_data(t);
    switch ((cfx_dtype)t->dtype) {
    case CFX_INT64: cfx_buf_printf(b, "%" PRId64, *(const int64_t *)p); return;
    case CFX_INT32: cfx_buf_printf(b, "%" PRId32, *(const int32_t *)p); return;
    case CFX_BOOL: cfx_buf_puts(b, *(const bool *)p ? "True" : "False"); return;
    case CFX_UINT8: cfx_buf_printf(b, "%d", *(const uint8_t *)p); return;
    case CFX_INT8: cfx_buf_printf(b, "%d", *(const int8_t *)p); return;
    case CFX_INT16: cfx_buf_printf(b, "%d", *(const int16_t *)p); return;
    case CFX_FLOAT32: put_float(*(const float *)p, b); return;
    case CFX_FLOAT64: put_float(*(const double *)p, b); return;
    case CFX_COMPLEX64:
    case CFX_COMPLEX128: {
        double re = t->dtype == CFX_COMPLEX64 ? ((const float *)p)[0] : ((const double *)p)[0];
        double im = t->dtype == CFX_COMPLEX64 ? ((const float *)p)[1] : ((const double *)p)[1];
        put_float(re, b);
        if (!(im < 0 || signbit(im)) || isnan(im))
            cfx_buf_putc(b, '+');
        put_float(im, b);
        cfx_buf_putc(b, 'j');
        return;
    }
    default: cfx_buf_puts(b, "..."); return; /* a dtype this renderer does not know */
    }
}

/* _add_suffixes(prefix + body, suffixes, indent=len(prefix), force_newline=False) */
static void put_with_suffixes(const char *prefix, const char *body, char suffixes[][96], int n, cfx_buf *b)
{
    size_t indent = strlen(prefix);
    cfx_buf_puts(b, prefix);
    cfx_buf_puts(b, body);
    size_t last = indent + strlen(body) + 2; /* len(s) - s.rfind("\n") + 1 with no newline */
    for (int i = 0; i < n; i++) {
        size_t sl = strlen(suffixes[i]);
        if (last + sl + 2 > 80) {
            cfx_buf_printf(b, ",\n%*s%s", (int)indent, "", suffixes[i]);
            last = indent + sl;
        } else {
            cfx_buf_printf(b, ", %s", suffixes[i]);
            last += sl + 2;
        }
    }
    cfx_buf_putc(b, ')');
}

static void size_suffix(const cfx_tensor *t, char *out)
{
    cfx_buf sb;
    cfx_buf_init(&sb);
    put_size_tuple(t, &sb);
    snprintf(out, 96, "size=%s", sb.data ? sb.data : "()");
    cfx_buf_free(&sb);
}

static void render_tensor(const cfx_tensor *t, cfx_buf *b)
{
    char suf[4][96];
    int n = 0;
    cfx_dtype dt = (cfx_dtype)t->dtype;
    const char *dtname = cfx_dtype_torch_name(dt) ? cfx_dtype_torch_name(dt) : "torch.unknown";
    bool fake = cfx_tensor_is_fake(t);
    cfx_device dev = cfx_tensor_fake_device(t);
    if (dev.type != CFX_DEVICE_CPU) {
        char d[32];
        snprintf(suf[n++], 96, "device='%s'", cfx_device_format(dev, d, sizeof d));
    }
    if (fake || cfx_tensor_is_meta(t) || !cfx_tensor_data(t)) {
        size_suffix(t, suf[n++]);
        if (dt != CFX_FLOAT32)
            snprintf(suf[n++], 96, "dtype=%s", dtname);
        put_with_suffixes(fake ? "FakeTensor(" : "tensor(", "...", suf, n, b);
        return;
    }
    /* _str_intern's defaults: the float and complex defaults, int64 and bool */
    bool default_dtype = dt == CFX_FLOAT32 || dt == CFX_COMPLEX64 || dt == CFX_INT64 || dt == CFX_BOOL;
    if (cfx_tensor_numel(t) == 0) {
        if (t->ndim != 1)
            size_suffix(t, suf[n++]);
        if (dt != CFX_FLOAT32)
            snprintf(suf[n++], 96, "dtype=%s", dtname);
        put_with_suffixes("tensor(", "[]", suf, n, b);
        return;
    }
    size_suffix(t, suf[n++]); /* edgeitems == 0 */
    if (!default_dtype)
        snprintf(suf[n++], 96, "dtype=%s", dtname);
    cfx_buf body;
    cfx_buf_init(&body);
    if (t->ndim == 0)
        put_scalar(t, &body);
    else
        cfx_buf_puts(&body, "[...]");
    put_with_suffixes("tensor(", body.data ? body.data : "", suf, n, b);
    cfx_buf_free(&body);
}

static const cfx_type *strip_optional(const cfx_type *ty)
{
    return ty && ty->kind == CFX_TYPE_OPTIONAL ? ty->elems[0] : ty;
}

/* One argument as Python's repr() of what __torch_dispatch__ receives. */
static void render_value(const cfx_value *v, const cfx_type *ty, cfx_buf *b)
{
    ty = strip_optional(ty);
    if (v->kind == CFX_V_TENSOR) {
        if (v->u.t)
            render_tensor(v->u.t, b);
        else
            cfx_buf_puts(b, "None");
        return;
    }
    if (v->kind == CFX_V_INT && ty) {
        /* schemaAwareToPyObject turns these ints into torch objects */
        const char *name = NULL;
        if (ty->kind == CFX_TYPE_SCALAR_TYPE)
            name = cfx_dtype_torch_name((cfx_dtype)v->u.i);
        else if (ty->kind == CFX_TYPE_MEMORY_FORMAT)
            name = cfx_memory_format_torch_name((cfx_memory_format)v->u.i);
        else if (ty->kind == CFX_TYPE_LAYOUT && v->u.i == CFX_LAYOUT_STRIDED)
            name = "torch.strided";
        if (name) {
            cfx_buf_puts(b, name);
            return;
        }
    }
    if (v->kind == CFX_V_LIST || v->kind == CFX_V_TUPLE) {
        bool tensors = false;
        for (uint32_t i = 0; i < v->len; i++)
            tensors |= v->u.items[i].kind == CFX_V_TENSOR;
        if (tensors) {
            cfx_buf_putc(b, v->kind == CFX_V_LIST ? '[' : '(');
            for (uint32_t i = 0; i < v->len; i++) {
                if (i)
                    cfx_buf_puts(b, ", ");
                const cfx_value *it = &v->u.items[i];
                if (it->kind == CFX_V_TENSOR)
                    render_tensor(it->u.t, b);
                else
                    cfx_value_print(*it, CFX_STYLE_PYTHON, b);
            }
            cfx_buf_puts(b, v->kind == CFX_V_LIST ? "]" : v->len == 1 ? ",)" : ")");
            return;
        }
    }
    cfx_value_print(*v, CFX_STYLE_PYTHON, b);
}

static bool is_default(const cfx_schema *s, const cfx_value *stack, int i)
{
    return s->args[i].has_default && cfx_value_equal(s->args[i].default_value, stack[i]);
}

void cfx_fake_render_call(const cfx_op *op, const cfx_value *stack, cfx_buf *b)
{
    const cfx_schema *s = cfx_op_schema(op);
    cfx_fake_put_op_name(op, b);
    cfx_buf_putc(b, '(');
    if (!s) {
        cfx_buf_putc(b, ')');
        return;
    }
    int kw_start = s->n_args;
    while (kw_start > 0 && s->args[kw_start - 1].kwarg_only)
        kw_start--;
    int pos_end = kw_start;
    while (pos_end > 0 && is_default(s, stack, pos_end - 1))
        pos_end--;
    bool first = true;
    for (int i = 0; i < pos_end; i++) {
        if (!first)
            cfx_buf_puts(b, ", ");
        first = false;
        render_value(&stack[i], s->args[i].type, b);
    }
    for (int i = kw_start; i < s->n_args; i++) {
        if (is_default(s, stack, i))
            continue;
        if (!first)
            cfx_buf_puts(b, ", ");
        first = false;
        cfx_buf_printf(b, "%s=", s->args[i].name);
        render_value(&stack[i], s->args[i].type, b);
    }
    cfx_buf_putc(b, ')');
}

void cfx_fake_tensor_print(const cfx_tensor *t, cfx_buf *b)
{
    if (!t)
        cfx_buf_puts(b, "None");
    else if (cfx_tensor_is_fake(t))
        render_tensor(t, b);
    else
        cfx_tensor_print(t, b);
}
