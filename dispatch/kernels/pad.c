/* pad.c - the padding operators: constant_pad_nd, reflection_pad{1,2,3}d,
 * replication_pad{1,2,3}d, and the CompositeImplicitAutograd chain F.pad goes through
 * (pad -> _pad_enum -> one of those, or _pad_circular's new_empty + slice + copy_ calls).
 *
 * Every pad is one gather: output element o of spatial dim d reads input element map_d[o]
 * (or the fill value, map_d[o] == -1), with ATen's index rules (PaddingKernel.cpp):
 *   reflect:   j < pad ? 2 * pad - j : j < size + pad ? j : 2 * (size + pad - 1) - j
 *   replicate: j < pad ? pad : j < size + pad ? j : size + pad - 1
 * both shifted by max(0, -pad) - max(0, pad), so negative pads crop.
 *
 * The checks and output layouts come in two sets because PyTorch 2.13 has two: the CPU
 * kernels are C++ (input.sizes() printed as [2, 3], channels-last kept through
 * suggest_memory_format), the Meta kernels are torch/_meta_registrations.py's (torch.Size
 * texts, no rank check beyond what size() raises, channels-last only for a CPU fake tensor:
 * device_hint() says "cuda" for a plain meta tensor). constant_pad_nd is one
 * CompositeExplicitAutograd kernel for both, as in 2.13. */
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/factory.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/prims.h"
#include "dispatch/kernels/structured.h"

enum { PAD_FILL = -1 };

/* out[o] = in[map(o)] over every element of out; map[d] == NULL is the identity on dim d,
 * a PAD_FILL entry writes fill (es bytes). */
static void gather(cfx_tensor *out, const cfx_tensor *in, int64_t *const *map, const unsigned char *fill)
{
    int n = out->ndim;
    size_t es = cfx_dtype_size((cfx_dtype)out->dtype);
    int64_t total = cfx_tensor_numel(out), idx[CFX_MAX_DIMS] = {0};
    unsigned char *po = cfx_tensor_data(out);
    const unsigned char *pi = cfx_tensor_data(in);
    for (int64_t e = 0; e < total; e++) {
        int64_t oo = 0, io = 0;
        bool filled = false;
        for (int d = 0; d < n; d++) {
            int64_t s = map[d] ? map[d][idx[d]] : idx[d];
            filled |= s == PAD_FILL;
            oo += idx[d] * out->strides[d];
            io += s * in->strides[d];
        }
        memcpy(po + oo * (int64_t)es, filled ? fill : pi + io * (int64_t)es, es);
        for (int d = n - 1; d >= 0 && ++idx[d] == out->sizes[d]; d--)
            idx[d] = 0;
    }
}

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE } pad_mode;

/* The index map of one padded dim (count = size + l + r entries), or NULL on no memory. */
static int64_t *dim_map(pad_mode mode, int64_t size, int64_t l, int64_t r)
{
    int64_t count = size + l + r, *m = cfx_malloc((size_t)(count > 0 ? count : 1) * sizeof *m);
    if (!m)
        return NULL;
    int64_t shift = (l < 0 ? -l : 0) - (l > 0 ? l : 0);
    for (int64_t j = 0; j < count; j++) {
        int64_t i;
        if (mode == PAD_CONSTANT)
            i = j < l || j >= size + l ? PAD_FILL : j - l;
        else if (mode == PAD_REFLECT)
            i = (j < l ? 2 * l - j : j < size + l ? j : 2 * (size + l - 1) - j) + shift;
        else
            i = (j < l ? l : j < size + l ? j : size + l - 1) + shift;
        m[j] = i;
    }
    return m;
}

/* Fills out from in, padding out's last `k` dims by pad (PyTorch's order: last dim first). */
static bool pad_copy(cfx_tensor *out, const cfx_tensor *in, pad_mode mode, const int64_t *pad, int k,
                     cfx_value value)
{
    if (out->device.type != CFX_DEVICE_CPU || cfx_tensor_numel(out) == 0)
        return true;
    if (mode == PAD_CONSTANT && !cfx_scalar_converts("aten::constant_pad_nd", value, (cfx_dtype)out->dtype))
        return false;
    int64_t *map[CFX_MAX_DIMS] = {0};
    bool ok = true;
    for (int a = 0; a < k && ok; a++) {
        int d = out->ndim - 1 - a;
        map[d] = dim_map(mode, in->sizes[d], pad[2 * a], pad[2 * a + 1]);
        ok = map[d] != NULL;
    }
    _Alignas(8) unsigned char fill[16] = {0}; /* one element holding the value (complex128: 16 bytes), as fill_ converts it */
    if (mode == PAD_CONSTANT) {
        double d = cfx_scalar_to_double(value);
        int64_t i = cfx_scalar_to_int64(value);
        cfx_put_number(fill, 0, (cfx_dtype)out->dtype, d, i, value.kind == CFX_V_DOUBLE ? d != 0 : i != 0);
    }
    if (ok)
        gather(out, in, map, fill);
    else
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (int d = 0; d < CFX_MAX_DIMS; d++)
        cfx_free(map[d]);
    return ok;
}

/* A new tensor of sizes in memory format mf on like's device. */
static cfx_tensor *new_output(const int64_t *sizes, int n, cfx_memory_format mf, const cfx_tensor *like)
{
    int64_t strides[CFX_MAX_DIMS];
    if (!cfx_geom_memory_format_strides(sizes, n, mf, strides, NULL))
        cfx_geom_contiguous_strides(sizes, n, strides);
    return cfx_tensor_new_strided(sizes, strides, n, (cfx_dtype)like->dtype, like->device);
}

/* ---- constant_pad_nd ---------------------------------------------------------------------- */

/* PadNd.cpp's constant_pad_nd: narrow for negative pads; no positive pad is a clone of the
 * narrowed input, else empty(new_shape, suggest_memory_format) filled with value and the
 * input copied in. */
cfx_tensor *cfx_kernel_constant_pad_nd(cfx_tensor *self, cfx_int_list pad, cfx_value value)
{
    const char *op = "aten::constant_pad_nd";
    if (pad.len % 2 != 0) {
        cfx_error_set(CFX_ERR, op, "Length of pad must be even but instead it equals %lld", (long long)pad.len);
        return NULL;
    }
    int n = self->ndim, l_pad = (int)(pad.len / 2), l_diff = n - l_pad;
    if (n < l_pad) {
        cfx_error_set(CFX_ERR, op, "Length of pad should be no more than twice the number of dimensions of the "
                      "input. Pad length is %lldwhile the input has %ddimensions.", (long long)pad.len, n);
        return NULL;
    }
    /* the narrowed input: its sizes, and where it starts in self */
    int64_t csizes[CFX_MAX_DIMS], cstart[CFX_MAX_DIMS] = {0}, neg[2 * CFX_MAX_DIMS];
    memcpy(csizes, self->sizes, (size_t)n * sizeof *csizes);
    bool all_non_positive = true;
    for (int i = l_diff; i < n; i++) {
        int64_t l = pad.data[2 * (n - i - 1)], r = pad.data[2 * (n - i - 1) + 1];
        if (l < 0) {
            if (csizes[i] + l < 0) {
                cfx_error_set(CFX_ERR, op, "narrow(): length must be non-negative.");
                return NULL;
            }
            cstart[i] = -l, csizes[i] += l;
        }
        all_non_positive &= l <= 0;
        if (r < 0) {
            if (csizes[i] + r < 0) {
                cfx_error_set(CFX_ERR, op, "narrow(): length must be non-negative.");
                return NULL;
            }
            csizes[i] += r;
        }
        all_non_positive &= r <= 0;
    }
    /* pads of the narrowed input: only the positive parts remain */
    for (int a = 0; a < l_pad; a++)
        neg[2 * a] = pad.data[2 * a] > 0 ? pad.data[2 * a] : 0, neg[2 * a + 1] = pad.data[2 * a + 1] > 0 ? pad.data[2 * a + 1] : 0;
    int64_t off = self->storage_offset;
    for (int i = 0; i < n; i++)
        off += cstart[i] * self->strides[i];
    cfx_tensor *narrowed = cfx_tensor_new_view(self, csizes, self->strides, n, off);
    if (!narrowed)
        return NULL;
    cfx_tensor *out;
    if (all_non_positive) { /* c_input.clone() */
        int64_t strides[CFX_MAX_DIMS];
        cfx_geom_preserve_strides(csizes, self->strides, n, strides);
        out = cfx_tensor_new_strided(csizes, strides, n, (cfx_dtype)self->dtype, self->device);
    } else {
        int64_t sizes[CFX_MAX_DIMS];
        for (int i = 0; i < n; i++)
            sizes[i] = i < l_diff ? self->sizes[i] : csizes[i] + neg[2 * (n - i - 1)] + neg[2 * (n - i - 1) + 1];
        out = new_output(sizes, n, cfx_geom_suggest_memory_format(self->sizes, self->strides, n), self);
    }
    bool ok = out && pad_copy(out, narrowed, PAD_CONSTANT, neg, l_pad, value);
    cfx_kernel_discard(narrowed); /* a view autoreleased into an open scope: released only without one */
    if (!ok) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

/* ---- reflection / replication: shapes ---------------------------------------------------- */

static const char *const axis_name[3] = {"W", "H", "D"};

/* input.sizes() (C++) or input.shape (Python) */
static void put_shape(cfx_buf *b, const cfx_tensor *t, bool python)
{
    if (python)
        cfx_prims_put_size(b, t->sizes, t->ndim);
    else
        cfx_geom_put_dims(b, t->sizes, t->ndim);
}

static bool fail_buf(const char *op, cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "padding: invalid arguments");
    cfx_free(msg);
    return false;
}

/* "Argument #4: Padding size should be less than ..." for each spatial axis (W, H, D). */
static bool reflect_checks(const char *op, const cfx_tensor *in, const int64_t *pad, int k, int lead, bool python)
{
    for (int a = 0; a < k; a++) {
        int dim = lead + k - 1 - a;
        int64_t size = in->sizes[dim], l = pad[2 * a], r = pad[2 * a + 1];
        if (l < size && r < size)
            continue;
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "Argument #%d: Padding size should be less than the corresponding input dimension, but "
                       "got: padding (%lld, %lld) at dimension %d of input ", 4 + 2 * a, (long long)l, (long long)r, dim);
        put_shape(&b, in, python);
        return fail_buf(op, &b);
    }
    return true;
}

/* "input (D: 2 H: 3, W: 4) is too small. Calculated output D: .. H: .. W: .." in each op's
 * spelling; reflection_pad1d and every replication pad need all extents >= 1 (1-D) or any. */
static bool size_check(const char *op, const int64_t *in, const int64_t *out, int k, bool reflect, bool python)
{
    bool any = false;
    for (int a = 0; a < k; a++)
        any |= out[a] >= 1;
    if (any)
        return true;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "input (");
    for (int a = k - 1; a >= 0; a--) {
        /* C++: "D: 2 H: 3, W: 4" (replication_pad2d: "H: 3, W: 4 )"); Python: spaces only */
        const char *sep = a == 0 ? "" : python || a == 2 ? " " : ", ";
        cfx_buf_printf(&b, "%s: %lld%s", axis_name[a], (long long)in[a], sep);
    }
    cfx_buf_puts(&b, !python && !reflect && k == 2 ? " ) is too small. Calculated output " : ") is too small. Calculated output ");
    for (int a = k - 1; a >= 0; a--)
        cfx_buf_printf(&b, "%s: %lld%s", axis_name[a], (long long)out[a], a ? " " : "");
    return fail_buf(op, &b);
}

/* sizes (k spatial extents, W first) of the input and the output */
static void extents(const cfx_tensor *in, int lead, const int64_t *pad, int k, int64_t *ins, int64_t *outs)
{
    for (int a = 0; a < k; a++) {
        ins[a] = in->sizes[lead + k - 1 - a];
        outs[a] = ins[a] + pad[2 * a] + pad[2 * a + 1];
    }
}

static bool nonneg_sizes(const char *op, const int64_t *sizes, int n)
{
    return cfx_factory_sizes_ok(op, (cfx_int_list){sizes, n});
}

/* The C++ meta function (Padding.h's check_valid_input, then the op's checks) and the output
 * in the input's suggested memory format. */
static cfx_tensor *pad_output_cpu(const char *op, const char *name, const cfx_tensor *in, cfx_int_list padding, int k,
                                  bool reflect)
{
    if ((int)padding.len != 2 * k) { /* ReplicationPadding.cpp says less */
        if (reflect)
            cfx_error_set(CFX_ERR, op, "padding size is expected to be %d, but got: %lld", 2 * k, (long long)padding.len);
        else
            cfx_error_set(CFX_ERR, op, "padding size is expected to be %d", 2 * k);
        return NULL;
    }
    int n = in->ndim;
    bool valid = n == k + 1 || n == k + 2;
    for (int d = n == k + 2 ? 1 : 0; valid && d < n; d++)
        valid = in->sizes[d] != 0;
    if (!valid) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero "
                       "dimensions for input, but got: ", k + 1, k + 2);
        put_shape(&b, in, false);
        return fail_buf(op, &b), NULL;
    }
    int lead = n - k;
    int64_t ins[3], outs[3], sizes[CFX_MAX_DIMS];
    extents(in, lead, padding.data, k, ins, outs);
    if (reflect && !reflect_checks(op, in, padding.data, k, lead, false))
        return NULL;
    if (!size_check(op, ins, outs, k, reflect, false))
        return NULL;
    for (int d = 0; d < n; d++)
        sizes[d] = d < lead ? in->sizes[d] : outs[n - 1 - d];
    if (!nonneg_sizes(op, sizes, n))
        return NULL;
    if (in->dtype == CFX_BOOL) {
        cfx_kernel_not_implemented(op, name, CFX_BOOL);
        return NULL;
    }
    return new_output(sizes, n, cfx_geom_suggest_memory_format(in->sizes, in->strides, n), in);
}

/* input.size(d) in Python: the dim wrapped, or "Dimension out of range" */
static bool py_size(const char *op, const cfx_tensor *in, int d, int64_t *out)
{
    int64_t w;
    if (!cfx_geom_wrap_dim(d, in->ndim, &w, op))
        return false;
    *out = in->ndim == 0 ? 1 : in->sizes[w];
    return true;
}

/* _meta_registrations.py's _pad{1,2,3}d_common. */
static cfx_tensor *pad_output_meta(const char *op, const char *name, const cfx_tensor *in, cfx_int_list padding, int k,
                                   bool reflect)
{
    if (!reflect && in->dtype == CFX_BOOL) {
        cfx_error_set(CFX_ERR, op, "\"%s\" not implemented for 'torch.bool'", name);
        return NULL;
    }
    if ((int)padding.len != 2 * k) {
        cfx_error_set(CFX_ERR, op, "padding size is expected to be %d, but got: %lld", 2 * k, (long long)padding.len);
        return NULL;
    }
    int n = in->ndim;
    bool batch = n == k + 2, valid = true;
    for (int d = batch ? 1 : 0; d < n; d++)
        valid &= in->sizes[d] != 0;
    if (!valid) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_printf(&b, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other non-zero "
                       "dimensions for input, but got: ", k + 1, k + 2);
        put_shape(&b, in, true);
        return fail_buf(op, &b), NULL;
    }
    /* dims as the Python sees them: batch mode only at rank k + 2 */
    int lead = batch ? 1 : 0;
    int64_t nbatch = batch ? in->sizes[0] : 1, nplane, ins[3], outs[3];
    if (!py_size(op, in, lead, &nplane))
        return NULL;
    for (int a = k - 1; a >= 0; a--) /* D, H, W: the order the Python asks */
        if (!py_size(op, in, lead + k - a, &ins[a]))
            return NULL;
    for (int a = 0; a < k; a++)
        outs[a] = ins[a] + padding.data[2 * a] + padding.data[2 * a + 1];
    if (reflect) {
        for (int a = 0; a < k; a++) {
            int64_t l = padding.data[2 * a], r = padding.data[2 * a + 1];
            if (l < ins[a] && r < ins[a])
                continue;
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_printf(&b, "Argument #%d: Padding size should be less than the corresponding input dimension, "
                           "but got: padding (%lld, %lld) at dimension %d of input ", 4 + 2 * a, (long long)l,
                           (long long)r, lead + k - a);
            put_shape(&b, in, true);
            return fail_buf(op, &b), NULL;
        }
    }
    if (!size_check(op, ins, outs, k, reflect, true))
        return NULL;
    /* 1-d: (nplane, W) at rank 2 else (nbatch, nplane, W); 2-d: rank 3 -> 3-D else 4-D;
     * 3-d: batch mode -> 5-D else 4-D */
    int64_t sizes[5];
    int m = 0;
    bool with_batch = k == 1 ? n != 2 : k == 2 ? n != 3 : batch;
    if (with_batch)
        sizes[m++] = nbatch;
    sizes[m++] = nplane;
    for (int a = k - 1; a >= 0; a--)
        sizes[m++] = outs[a];
    if (!nonneg_sizes(op, sizes, m))
        return NULL;
    cfx_memory_format mf = CFX_CONTIGUOUS_FORMAT;
    cfx_device hint = cfx_tensor_is_fake(in) ? cfx_tensor_fake_device(in) : in->device;
    if (k == 2 && m == 4 && hint.type == CFX_DEVICE_CPU &&
        cfx_geom_suggest_memory_format(in->sizes, in->strides, n) == CFX_CHANNELS_LAST)
        mf = CFX_CHANNELS_LAST;
    return new_output(sizes, m, mf, in);
}

/* ---- reflection / replication: kernels --------------------------------------------------- */

static cfx_tensor *pad_cpu(const char *op, const char *name, cfx_tensor *in, cfx_int_list padding, int k, pad_mode mode)
{
    cfx_tensor *out = pad_output_cpu(op, name, in, padding, k, mode == PAD_REFLECT);
    if (out && !pad_copy(out, in, mode, padding.data, k, cfx_none())) {
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}

#define PAD_KERNELS(NAME, K, MODE)                                                                       \
    cfx_tensor *cfx_cpu_##NAME(cfx_tensor *self, cfx_int_list padding)                                   \
    {                                                                                                    \
        return pad_cpu("aten::" #NAME, #NAME, self, padding, K, MODE);                                   \
    }                                                                                                    \
    cfx_tensor *cfx_meta_##NAME(cfx_tensor *self, cfx_int_list padding)                                  \
    {                                                                                                    \
        return pad_output_meta("aten::" #NAME, #NAME, self, padding, K, MODE == PAD_REFLECT);            \
    }

PAD_KERNELS(reflection_pad1d, 1, PAD_REFLECT)
PAD_KERNELS(reflection_pad2d, 2, PAD_REFLECT)
PAD_KERNELS(reflection_pad3d, 3, PAD_REFLECT)
PAD_KERNELS(replication_pad1d, 1, PAD_REPLICATE)
PAD_KERNELS(replication_pad2d, 2, PAD_REPLICATE)
PAD_KERNELS(replication_pad3d, 3, PAD_REPLICATE)

/* ---- F.pad: pad, _pad_enum, _pad_circular (CompositeImplicitAutograd) ---------------------- */

/* at::padding_mode */
enum { MODE_REFLECT = 0, MODE_REPLICATE = 1, MODE_CIRCULAR = 2, MODE_CONSTANT = 3 };
static const char *const mode_names[4] = {"reflect", "replicate", "circular", "constant"};

static cfx_tensor *slice_of(cfx_tensor *t, int64_t dim, int64_t start, int64_t end)
{
    return cfx_op_slice_Tensor(NULL, t, dim, cfx_int(start), cfx_int(end), 1);
}

static int64_t max0(int64_t v) { return v > 0 ? v : 0; }

cfx_tensor *cfx_composite__pad_circular(cfx_tensor *self, cfx_int_list padding)
{
    const char *op = "aten::_pad_circular";
    /* 2.13 pads the last len(pad) / 2 dims of an input with 1 or 2 more (batched or not) */
    int n = self->ndim, k = (int)(padding.len / 2), lead = n - k;
    if (padding.len % 2 != 0 || (lead != 1 && lead != 2)) {
        cfx_error_set(CFX_ERR, op, "Invalid padding size, expected 1 or 2 non-padded dimensions, which would be "
                      "equivalent to padding of length %d or %d respectively but got %lld", 2 * (n - 1), 2 * (n - 2),
                      (long long)padding.len);
        return NULL;
    }
    int64_t out_shape[CFX_MAX_DIMS];
    for (int d = 0; d < lead; d++)
        out_shape[d] = self->sizes[d];
    for (int i = 0; i < k; i++) {
        int64_t l = padding.data[2 * (k - i - 1)], r = padding.data[2 * (k - i - 1) + 1], size = self->sizes[lead + i];
        out_shape[lead + i] = size + l + r;
        if (!(l <= size && r <= size)) {
            cfx_error_set(CFX_ERR, op, "Padding value causes wrapping around more than once.");
            return NULL;
        }
        if (out_shape[lead + i] < 0) {
            cfx_error_set(CFX_ERR, op, "Negative padding value is resulting in an empty dimension");
            return NULL;
        }
    }
    cfx_scope s = cfx_scope_begin();
    /* self.new_empty(out_shape, self.options()): the options are spelled out in the call */
    cfx_tensor *out = cfx_op_new_empty(NULL, self, (cfx_int_list){out_shape, n},
                                       cfx_dtype_value((cfx_dtype)self->dtype), cfx_layout_value(CFX_LAYOUT_STRIDED),
                                       cfx_device_value(cfx_tensor_fake_device(self)), cfx_none());
    cfx_tensor *out_slice = out, *in_slice = self;
    for (int i = 0; i < k && out_slice && in_slice; i++) {
        int dim = n - 1 - i;
        int64_t l = padding.data[2 * i], r = padding.data[2 * i + 1];
        out_slice = slice_of(out_slice, dim, max0(l), out_shape[dim] - max0(r));
        in_slice = out_slice ? slice_of(in_slice, dim, max0(-l), self->sizes[dim] - max0(-r)) : NULL;
    }
    bool ok = out_slice && in_slice && cfx_op_copy_(NULL, out_slice, in_slice, false);
    for (int i = 0; i < k && ok; i++) {
        int dim = n - 1 - i;
        int64_t l = padding.data[2 * i], r = padding.data[2 * i + 1];
        if (l > 0) {
            cfx_tensor *dst = slice_of(out, dim, 0, l);
            cfx_tensor *src = dst ? slice_of(out, dim, out_shape[dim] - l - max0(r), out_shape[dim] - max0(r)) : NULL;
            ok = src && cfx_op_copy_(NULL, dst, src, false);
        }
        if (ok && r > 0) {
            cfx_tensor *dst = slice_of(out, dim, out_shape[dim] - r, out_shape[dim]);
            cfx_tensor *src = dst ? slice_of(out, dim, max0(l), max0(l) + r) : NULL;
            ok = src && cfx_op_copy_(NULL, dst, src, false);
        }
    }
    return cfx_composite_return(s, ok ? out : NULL);
}

cfx_tensor *cfx_composite__pad_enum(cfx_tensor *self, cfx_int_list pad, int64_t mode, cfx_value value)
{
    const char *op = "aten::_pad_enum";
    int n = self->ndim;
    if (pad.len % 2 != 0) {
        cfx_error_set(CFX_ERR, op, "Padding length must be divisible by 2");
        return NULL;
    }
    if ((int64_t)pad.len > 2 * (int64_t)n) {
        cfx_error_set(CFX_ERR, op, "Padding length too large");
        return NULL;
    }
    if (mode == MODE_CONSTANT)
        return cfx_op_constant_pad_nd(NULL, self, pad, value.kind == CFX_V_NONE ? cfx_double(0.0) : value);
    if (mode < 0 || mode > MODE_CONSTANT) {
        cfx_error_set(CFX_ERR, op, "Unrecognised padding mode %lld", (long long)mode);
        return NULL;
    }
    if (value.kind != CFX_V_NONE) {
        cfx_error_set(CFX_ERR, op, "Padding mode \"%s\" doesn't take in value argument", mode_names[mode]);
        return NULL;
    }
    int k = (int)pad.len / 2;
    if (k >= 1 && k <= 3 && (n == k + 1 || n == k + 2)) {
        if (mode == MODE_CIRCULAR)
            return cfx_op__pad_circular(NULL, self, pad);
        bool reflect = mode == MODE_REFLECT;
        if (k == 1)
            return reflect ? cfx_op_reflection_pad1d(NULL, self, pad) : cfx_op_replication_pad1d(NULL, self, pad);
        if (k == 2)
            return reflect ? cfx_op_reflection_pad2d(NULL, self, pad) : cfx_op_replication_pad2d(NULL, self, pad);
        return reflect ? cfx_op_reflection_pad3d(NULL, self, pad) : cfx_op_replication_pad3d(NULL, self, pad);
    }
    cfx_error_set(CFX_ERR_NOTIMPL, op, "Padding size %lld is not supported for %dD input tensor.\n"
                  "Supported combinations for non-constant padding:\n"
                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)", (long long)pad.len, n);
    return NULL;
}

cfx_tensor *cfx_composite_pad(cfx_tensor *self, cfx_int_list pad, const char *mode, cfx_value value)
{
    for (int64_t m = 0; m < 4; m++)
        if (strcmp(mode, mode_names[m]) == 0)
            return cfx_op__pad_enum(NULL, self, pad, m, value);
    cfx_error_set(CFX_ERR_NOTIMPL, "aten::pad", "Unrecognised padding mode %s", mode);
    return NULL;
}
