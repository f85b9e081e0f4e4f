/* tensor_print.c - repr() of a tensor, as PyTorch 2.13's torch/_tensor_str.py prints it.
 *
 * The printer is a transcription of _tensor_str.py for the dtypes cfx has:
 *
 *  - A formatter first looks at every value that will be shown (with summarisation, only the
 *    first and last three along each dimension). Floats print in one of three modes: integral
 *    ("1.", when every finite nonzero value is an integer), fixed ("1.5000", 4 decimals) or
 *    scientific ("1.0000e+08", when max/min of the finite nonzero magnitudes exceeds 1000, or
 *    the max exceeds 1e8, or - for non-integral values - the min is below 1e-4). Every element
 *    is right-aligned to the widest one.
 *  - Rows wrap at 80 columns: a row holds floor((80 - indent) / (width + 2)) elements, where
 *    indent is the column after the row's "[".
 *  - Tensors of more than 1000 elements are summarised with "..." (edgeitems = 3).
 *  - Complex values have two formatters, one over the real parts and one over the imaginary
 *    parts: an element is the real part right-aligned to its formatter's width, then the
 *    imaginary part unpadded with its sign ("+" added when it has none) and "j"; a row's
 *    element takes both widths + 1.
 *  - Suffixes: dtype unless float32/int64/bool/complex64 (the default complex dtype) - always
 *    for an empty or meta tensor unless float32; device for meta; size for meta and for empty
 *    tensors that are not 1-d; each moves to a new line if it would pass column 80.
 *
 * PyTorch's printer recurses over dimensions; this one walks them with an odometer, which
 * produces the same text: an opening "[" per level, the separator "," + blank lines + indent
 * between slices, and "]" when a level is exhausted. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/conj.h"
#include "dispatch/neg.h"
#include "dispatch/tensor.h"

enum { PRECISION = 4, THRESHOLD = 1000, EDGEITEMS = 3, LINEWIDTH = 80 };

typedef struct formatter {
    bool floating, int_mode, sci_mode;
    int width;
    const struct formatter *imag; /* a complex tensor's formatter of the imaginary parts */
} formatter;

/* The dims of the printed part: with summarisation a long dim shows 2*EDGEITEMS entries. */
typedef struct shown {
    const cfx_tensor *t;
    bool summarize;
    int64_t count[CFX_MAX_DIMS];
} shown;

static int64_t shown_index(const shown *s, int d, int64_t k)
{
    if (s->count[d] == s->t->sizes[d] || k < EDGEITEMS)
        return k;
    return s->t->sizes[d] - 2 * EDGEITEMS + k;
}

static int64_t element_offset(const shown *s, const int64_t *pos)
{
    const cfx_tensor *t = s->t;
    int64_t off = t->storage_offset;
    for (int d = 0; d < t->ndim; d++)
        off += shown_index(s, d, pos[d]) * t->strides[d];
    return off;
}

/* A conjugate view (the Conjugate key in its key set, dispatch/conj.h) shows the conjugates
 * of its data, as repr() resolves it: -1 for its imaginary parts; a negative view
 * (dispatch/neg.h) the negatives of its data. */
static double conj_sign(const cfx_tensor *t, int part)
{
    return (part == 1 && cfx_is_conj(t) ? -1.0 : 1.0) * (cfx_is_neg(t) ? -1.0 : 1.0);
}

/* A float element, or part (0 real, 1 imaginary) of a complex one. */
static double read_double(const cfx_tensor *t, int64_t off, int part)
{
    const char *p = t->storage->data;
    switch ((cfx_dtype)t->dtype) {
    case CFX_FLOAT32: return conj_sign(t, 0) * ((const float *)p)[off];
    case CFX_COMPLEX64: return conj_sign(t, part) * ((const float *)p)[2 * off + part];
    case CFX_COMPLEX128: return conj_sign(t, part) * ((const double *)p)[2 * off + part];
    default: return conj_sign(t, 0) * ((const double *)p)[off];
    }
}

static int64_t read_int(const cfx_tensor *t, int64_t off)
{
    const char *p = t->storage->data;
    bool neg = cfx_is_neg(t); /* a negative view: the data's negatives, wrapped to the dtype */
    switch ((cfx_dtype)t->dtype) {
    case CFX_INT64: return (int64_t)((neg ? 0ull - 1 : 1) * (uint64_t)((const int64_t *)p)[off]);
    case CFX_INT32: return (int32_t)(uint32_t)((neg ? 0u - 1 : 1) * (uint32_t)((const int32_t *)p)[off]);
    case CFX_BOOL: return ((const uint8_t *)p)[off] != 0;
    case CFX_UINT8: return (uint8_t)((neg ? 0u - 1 : 1) * ((const uint8_t *)p)[off]);
    case CFX_INT8: return (int8_t)(uint8_t)((neg ? 0u - 1 : 1) * (uint8_t)((const int8_t *)p)[off]);
    case CFX_INT16: return (int16_t)(uint16_t)((neg ? 0u - 1 : 1) * (uint16_t)((const int16_t *)p)[off]);
    default: return 0;
    }
}

/* Advances pos over the shown elements in row-major order; false after the last. */
static bool next_pos(const shown *s, int64_t *pos)
{
    for (int d = s->t->ndim - 1; d >= 0; d--) {
        if (++pos[d] < s->count[d])
            return true;
        pos[d] = 0;
    }
    return false;
}

/* Python's "{:.4f}" / "{:.4e}" / "{:.0f}": NaN never has a sign. */
static int format_float(char *buf, size_t n, double v, char conv, int prec)
{
    if (isnan(v))
        return snprintf(buf, n, "nan");
    if (isinf(v))
        return snprintf(buf, n, v > 0 ? "inf" : "-inf");
    char f[8] = {'%', '.', (char)('0' + prec), conv, '\0'};
    return snprintf(buf, n, f, v);
}

static int format_int(char *buf, size_t n, const cfx_tensor *t, int64_t v)
{
    if (t->dtype == CFX_BOOL)
        return snprintf(buf, n, "%s", v ? "True" : "False");
    return snprintf(buf, n, "%" PRId64, v);
}

static void formatter_init(formatter *f, const shown *s, int part)
{
    const cfx_tensor *t = s->t;
    int64_t pos[CFX_MAX_DIMS] = {0};
    char buf[400];
    f->imag = NULL;
    f->floating = cfx_dtype_is_floating((cfx_dtype)t->dtype) || cfx_dtype_is_complex((cfx_dtype)t->dtype);
    f->int_mode = true;
    f->sci_mode = false;
    f->width = 1;
    if (!f->floating) {
        do {
            int n = format_int(buf, sizeof buf, t, read_int(t, element_offset(s, pos)));
            if (n > f->width)
                f->width = n;
        } while (next_pos(s, pos));
        return;
    }
    double lo = INFINITY, hi = 0;
    bool any = false;
    do {
        double v = read_double(t, element_offset(s, pos), part);
        if (!isfinite(v) || v == 0)
            continue;
        any = true;
        if (fabs(v) < lo)
            lo = fabs(v);
        if (fabs(v) > hi)
            hi = fabs(v);
        if (v != ceil(v))
            f->int_mode = false;
    } while (next_pos(s, pos));
    if (!any)
        return;
    if (f->int_mode)
        f->sci_mode = hi / lo > 1000.0 || hi > 1.0e8;
    else
        f->sci_mode = hi / lo > 1000.0 || hi > 1.0e8 || lo < 1.0e-4;
    memset(pos, 0, sizeof pos);
    do {
        double v = read_double(t, element_offset(s, pos), part);
        if (!isfinite(v) || v == 0)
            continue;
        int n;
        if (f->sci_mode)
            n = format_float(buf, sizeof buf, v, 'e', PRECISION);
        else if (f->int_mode)
            n = format_float(buf, sizeof buf, v, 'f', 0) + 1; /* room for the "." */
        else
            n = format_float(buf, sizeof buf, v, 'f', PRECISION);
        if (n > f->width)
            f->width = n;
    } while (next_pos(s, pos));
}

/* _Formatter.format without the padding: the text of one float (or part) in f's mode. */
static int format_value(const formatter *f, double v, char *buf, size_t size)
{
    int n;
    if (f->sci_mode) {
        n = format_float(buf, size, v, 'e', PRECISION);
    } else if (f->int_mode) {
        n = format_float(buf, size, v, 'f', 0);
        if (isfinite(v) && n + 1 < (int)size) {
            buf[n++] = '.';
            buf[n] = '\0';
        }
    } else {
        n = format_float(buf, size, v, 'f', PRECISION);
    }
    return n;
}

static void put_element(const formatter *f, const shown *s, const int64_t *pos, cfx_buf *b)
{
    const cfx_tensor *t = s->t;
    int64_t off = element_offset(s, pos);
    char buf[400];
    int n;
    if (f->imag) { /* real part padded, then the imaginary part with its sign and "j" */
        n = format_value(f, read_double(t, off, 0), buf, sizeof buf);
        for (int i = n; i < f->width; i++)
            cfx_buf_putc(b, ' ');
        cfx_buf_puts(b, buf);
        format_value(f->imag, read_double(t, off, 1), buf, sizeof buf);
        if (buf[0] != '+' && buf[0] != '-')
            cfx_buf_putc(b, '+');
        cfx_buf_puts(b, buf);
        cfx_buf_putc(b, 'j');
        return;
    }
    if (!f->floating) {
        n = format_int(buf, sizeof buf, t, read_int(t, off));
    } else {
        n = format_value(f, read_double(t, off, 0), buf, sizeof buf);
    }
    for (int i = n; i < f->width; i++)
        cfx_buf_putc(b, ' ');
    cfx_buf_puts(b, buf);
}

/* One innermost row "[a, b, ...]" at the given indent (the column of its "["). */
static void put_row(const formatter *f, const shown *s, int64_t *pos, int indent, cfx_buf *b)
{
    int last = s->t->ndim - 1;
    int element = f->width + 2 + (f->imag ? f->imag->width + 1 : 0);
    int64_t per_line = (LINEWIDTH - indent) / element; /* indent <= 7 + 63 < 80 */
    if (per_line < 1)
        per_line = 1;
    bool ellipsis = s->count[last] != s->t->sizes[last];
    int64_t items = s->count[last] + (ellipsis ? 1 : 0);
    cfx_buf_putc(b, '[');
    for (int64_t k = 0, e = 0; k < items; k++) {
        if (k > 0) {
            if (k % per_line == 0) {
                cfx_buf_puts(b, ",\n");
                for (int i = 0; i < indent + 1; i++)
                    cfx_buf_putc(b, ' ');
            } else {
                cfx_buf_puts(b, ", ");
            }
        }
        if (ellipsis && k == EDGEITEMS) {
            cfx_buf_puts(b, " ...");
            continue;
        }
        pos[last] = e++;
        put_element(f, s, pos, b);
    }
    cfx_buf_putc(b, ']');
    pos[last] = 0;
}

static void put_separator(int ndim, int d, int indent0, cfx_buf *b)
{
    cfx_buf_putc(b, ',');
    for (int i = 0; i < ndim - d - 1; i++)
        cfx_buf_putc(b, '\n');
    for (int i = 0; i < indent0 + d + 1; i++)
        cfx_buf_putc(b, ' ');
}

/* _tensor_str_with_formatter for ndim >= 1. pos[d] for d < ndim-1 counts the slices printed
 * at level d, including the "..." slice when that level is summarised. */
static void put_body(const formatter *f, const shown *s, int indent0, cfx_buf *b)
{
    const cfx_tensor *t = s->t;
    int ndim = t->ndim;
    int64_t slot[CFX_MAX_DIMS] = {0}; /* position per level, counting the "..." slot */
    int64_t pos[CFX_MAX_DIMS] = {0};  /* shown index per level, without it */
    for (int d = 0; d < ndim - 1; d++)
        cfx_buf_putc(b, '[');
    for (;;) {
        put_row(f, s, pos, indent0 + ndim - 1, b);
        int d = ndim - 2;
        for (; d >= 0; d--) {
            bool ellipsis = s->count[d] != t->sizes[d];
            int64_t slots = s->count[d] + (ellipsis ? 1 : 0);
            if (++slot[d] < slots) {
                put_separator(ndim, d, indent0, b);
                if (ellipsis && slot[d] == EDGEITEMS) {
                    cfx_buf_puts(b, "...");
                    put_separator(ndim, d, indent0, b);
                    slot[d]++;
                }
                pos[d]++;
                for (int e = d + 1; e < ndim - 1; e++) {
                    slot[e] = pos[e] = 0;
                    cfx_buf_putc(b, '[');
                }
                break;
            }
            cfx_buf_putc(b, ']');
        }
        if (d < 0)
            break;
    }
}

static void put_shape_tuple(const cfx_tensor *t, cfx_buf *b)
{
    cfx_buf_putc(b, '(');
    for (int d = 0; d < t->ndim; d++)
        cfx_buf_printf(b, d ? ", %" PRId64 : "%" PRId64, t->sizes[d]);
    if (t->ndim == 1)
        cfx_buf_putc(b, ',');
    cfx_buf_putc(b, ')');
}

/* _add_suffixes: start is where "tensor(" begins in b. */
static void add_suffixes(cfx_buf *b, size_t start, char suffixes[][64], int n)
{
    const int indent = 7; /* len("tensor(") */
    size_t nl = b->len;
    while (nl > start && b->data[nl - 1] != '\n')
        nl--;
    /* Python: len(s) - s.rfind("\n") + 1, with rfind = -1 when there is no newline */
    long last = nl > start ? (long)(b->len - start) - (long)(nl - 1 - start) + 1
                           : (long)(b->len - start) + 2;
    for (int i = 0; i < n; i++) {
        long len = (long)strlen(suffixes[i]);
        if (last + len + 2 > LINEWIDTH) {
            cfx_buf_puts(b, ",\n");
            for (int k = 0; k < indent; k++)
                cfx_buf_putc(b, ' ');
            last = indent + len;
        } else {
            cfx_buf_puts(b, ", ");
            last += len + 2;
        }
        cfx_buf_puts(b, suffixes[i]);
    }
    cfx_buf_putc(b, ')');
}

void cfx_tensor_print(const cfx_tensor *t, cfx_buf *b)
{
    if (!t) {
        cfx_buf_puts(b, "None");
        return;
    }
    size_t start = b->len;
    char suffixes[4][64];
    int ns = 0;
    cfx_dtype dt = (cfx_dtype)t->dtype;
    const char *dtname = cfx_dtype_torch_name(dt);
    if (!dtname)
        dtname = "torch.unknown";
    /* the element count from the sizes, so that printing needs nothing of tensor.c (the op
     * generator links the printers without the rest of the tensor layer) */
    int64_t numel = 1;
    for (int d = 0; d < t->ndim; d++)
        numel *= t->sizes[d];
    cfx_buf_puts(b, "tensor(");
    if (t->device.type == CFX_DEVICE_META || !t->storage || !t->storage->data) {
        char dev[32];
        snprintf(suffixes[ns++], 64, "device='%s'", cfx_device_format(t->device, dev, sizeof dev));
        cfx_buf b2;
        cfx_buf_init(&b2);
        put_shape_tuple(t, &b2);
        snprintf(suffixes[ns++], 64, "size=%s", b2.data ? b2.data : "()");
        cfx_buf_free(&b2);
        if (dt != CFX_FLOAT32)
            snprintf(suffixes[ns++], 64, "dtype=%s", dtname);
        cfx_buf_puts(b, "...");
    } else if (numel == 0) {
        if (t->ndim != 1) {
            cfx_buf b2;
            cfx_buf_init(&b2);
            put_shape_tuple(t, &b2);
            snprintf(suffixes[ns++], 64, "size=%s", b2.data ? b2.data : "()");
            cfx_buf_free(&b2);
        }
        if (dt != CFX_FLOAT32)
            snprintf(suffixes[ns++], 64, "dtype=%s", dtname);
        cfx_buf_puts(b, "[]");
    } else {
        if (dt != CFX_FLOAT32 && dt != CFX_INT64 && dt != CFX_BOOL && dt != CFX_COMPLEX64)
            snprintf(suffixes[ns++], 64, "dtype=%s", dtname);
        shown s = {.t = t, .summarize = numel > THRESHOLD};
        for (int d = 0; d < t->ndim; d++)
            s.count[d] = s.summarize && t->sizes[d] > 2 * EDGEITEMS ? 2 * EDGEITEMS : t->sizes[d];
        formatter f, fi;
        formatter_init(&f, &s, 0);
        if (cfx_dtype_is_complex(dt)) {
            formatter_init(&fi, &s, 1);
            f.imag = &fi;
        }
        if (t->ndim == 0) {
            int64_t pos[1] = {0};
            put_element(&f, &s, pos, b);
        } else {
            put_body(&f, &s, 7, b);
        }
    }
    if (b->oom)
        return;
    add_suffixes(b, start, suffixes, ns);
}
