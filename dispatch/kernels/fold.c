/* fold.c - im2col and col2im (F.unfold / F.fold's kernels, which 2.13 records as these two
 * ops), CPU and Meta.
 *
 * im2col lays every kh x kw block of a [N,]C,H,W input out as a column:
 *   out[n, (c * kh + i) * kw + j, by * BW + bx] = in[n, c, by * sh - ph + i * dh, bx * sw - pw + j * dw]
 * (0 in the padding); col2im is its adjoint, summing every column entry back into its pixel.
 * Outputs are contiguous. The checks differ between the devices in order and words: the CPU
 * kernels run im2col_shape_check.h / col2im_shape_check, the Meta kernels are 2.13's Python
 * decompositions (which check lists and tuples in Python's spelling, and im2col's padding
 * not at all: it tests dilation twice). CPU computes floating dtypes (in double) and bool (a
 * sum is an or), as ATen's dispatch does; Meta takes any dtype. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"

/* The four (five) int[2] arguments, in schema order after self (and output_size). */
typedef struct fold_args {
    int64_t k[2], d[2], p[2], s[2];
} fold_args;

static bool fail(const char *op, cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "im2col/col2im: bad arguments");
    cfx_free(msg);
    return false;
}

/* The lists' lengths: 2 each ("It is expected ..." on CPU, "only 2D ..." in Python). */
static bool lengths(const char *op, const cfx_int_list *lists, const char *const *names, int n, bool meta,
                    const char *meta_prefix)
{
    for (int i = 0; i < n; i++)
        if (lists[i].len != 2) {
            if (meta)
                cfx_error_set(CFX_ERR, op, "%sonly 2D %s supported", meta_prefix,
                              strcmp(names[i], "kernel_size") ? names[i] : "kernel");
            else
                cfx_error_set(CFX_ERR, op, "It is expected %s equals to 2, but got size %lld", names[i],
                              (long long)lists[i].len);
            return false;
        }
    return true;
}

/* Python's check_positive: "<name> should be greater than zero, but got [a, b]". */
static bool positive(const char *op, const char *name, const int64_t *v, bool strict, const char *shown_name)
{
    if (strict ? v[0] > 0 && v[1] > 0 : v[0] >= 0 && v[1] >= 0)
        return true;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s should be greater than zero, but got ", shown_name ? shown_name : name);
    cfx_geom_put_dims(&b, v, 2);
    return fail(op, &b);
}

/* Python's tuple(shape): "(5, 5)", "(16,)". */
static void put_tuple(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_puts(b, "(");
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, "%s%lld", i ? ", " : "", (long long)d[i]);
    cfx_buf_puts(b, n == 1 ? ",)" : ")");
}

/* The C++ checks' "<what> should be greater than zero, but got <a>_height: x <a>_width: y". */
static bool cpu_positive(const char *op, const char *what, const char *abbr, const int64_t *v, bool strict)
{
    if (strict ? v[0] > 0 && v[1] > 0 : v[0] >= 0 && v[1] >= 0)
        return true;
    cfx_error_set(CFX_ERR, op, "%s, but got %s_height: %lld %s_width: %lld", what, abbr, (long long)v[0], abbr,
                  (long long)v[1]);
    return false;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b, r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}

/* The number of blocks along one dim. */
static int64_t blocks(int64_t in, int64_t k, int64_t d, int64_t p, int64_t s)
{
    return floor_div(in + 2 * p - d * (k - 1) - 1, s) + 1;
}

static bool read_args(cfx_int_list kernel_size, cfx_int_list dilation, cfx_int_list padding, cfx_int_list stride,
                      fold_args *a)
{
    for (int i = 0; i < 2; i++)
        a->k[i] = kernel_size.data[i], a->d[i] = dilation.data[i], a->p[i] = padding.data[i], a->s[i] = stride.data[i];
    return true;
}

/* im2col's checks; blk gets the block counts (BH, BW). */
static bool im2col_check(const char *op, const cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list dilation,
                         cfx_int_list padding, cfx_int_list stride, bool meta, fold_args *a, int64_t *blk)
{
    const cfx_int_list lists[4] = {kernel_size, dilation, padding, stride};
    static const char *const names[4] = {"kernel_size", "dilation", "padding", "stride"};
    if (!lengths(op, lists, names, 4, meta, "im2col(): ") || !read_args(kernel_size, dilation, padding, stride, a))
        return false;
    int n = self->ndim;
    const int64_t *sz = self->sizes;
    cfx_buf b;
    cfx_buf_init(&b);
    if (meta) {
        if (!positive(op, "kernel_size", a->k, true, NULL) || !positive(op, "dilation", a->d, true, NULL) ||
            !positive(op, "dilation", a->d, false, "padding") || !positive(op, "stride", a->s, true, NULL))
            return false;
        if ((n != 3 && n != 4) || !sz[n - 3] || !sz[n - 2] || !sz[n - 1]) {
            cfx_buf_puts(&b, "Expected 3D or 4D (batch mode) tensor for input with possible 0 batch size and non-zero "
                             "dimensions, but got: ");
            put_tuple(&b, sz, n);
            return fail(op, &b);
        }
    } else {
        if (!cpu_positive(op, "kernel size should be greater than zero", "kernel", a->k, true) ||
            !cpu_positive(op, "dilation should be greater than zero", "dilation", a->d, true) ||
            !cpu_positive(op, "padding should be non-negative", "pad", a->p, false) ||
            !cpu_positive(op, "stride should be greater than zero", "stride", a->s, true))
            return false;
        if (n < 3) { /* input.size(1), input.size(2) of a smaller tensor */
            int dim = n < 2 ? 1 : 2;
            if (n == 0)
                cfx_error_set(CFX_ERR, op, "Dimension specified as %d but tensor has no dimensions", dim);
            else
                cfx_error_set(CFX_ERR, op, "Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                              -n, n - 1, dim);
            return false;
        }
        if ((n != 3 && n != 4) || !sz[1] || !sz[2] || (n == 3 ? !sz[0] : !sz[3])) {
            cfx_buf_puts(&b, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                             "dimensions for input, but got: ");
            cfx_geom_put_dims(&b, sz, n);
            return fail(op, &b);
        }
    }
    for (int i = 0; i < 2; i++)
        blk[i] = blocks(sz[n - 2 + i], a->k[i], a->d[i], a->p[i], a->s[i]);
    if (blk[0] < 1 || blk[1] < 1) {
        if (meta) {
            cfx_buf_puts(&b, "Given an input with spatial size ");
            put_tuple(&b, sz + n - 2, 2);
            const int64_t *l[4] = {a->k, a->d, a->p, a->s};
            static const char *const nm[4] = {", kernel_size=", ", dilation=", ", padding=", ", stride="};
            for (int i = 0; i < 4; i++) {
                cfx_buf_puts(&b, nm[i]);
                cfx_geom_put_dims(&b, l[i], 2);
            }
            cfx_buf_printf(&b, ", the calculated shape of the array of sliding blocks is (%lld, %lld), but its "
                           "components must be at least one.", (long long)blk[0], (long long)blk[1]);
        } else {
            cfx_buf_printf(&b, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, "
                           "%lld), padding=(%lld, %lld), calculated shape of the array of sliding blocks as (%lld, "
                           "%lld), but its components must be at least one.", (long long)sz[n - 2],
                           (long long)sz[n - 1], (long long)a->k[0], (long long)a->k[1], (long long)a->d[0],
                           (long long)a->d[1], (long long)a->p[0], (long long)a->p[1], (long long)blk[0],
                           (long long)blk[1]);
        }
        return fail(op, &b);
    }
    cfx_buf_free(&b);
    return true;
}

/* "Given output_size=(5, 5), kernel_size=(2, 2), ..., stride=(1, 1), " (CPU) or with [..] lists (Python). */
static void put_fold_args(cfx_buf *b, const int64_t *os, const fold_args *a, bool meta)
{
    const int64_t *l[5] = {os, a->k, a->d, a->p, a->s};
    static const char *const nm[5] = {"output_size=", "kernel_size=", "dilation=", "padding=", "stride="};
    cfx_buf_puts(b, "Given ");
    for (int i = 0; i < 5; i++) {
        cfx_buf_puts(b, nm[i]);
        if (meta)
            cfx_geom_put_dims(b, l[i], 2);
        else
            cfx_buf_printf(b, "(%lld, %lld)", (long long)l[i][0], (long long)l[i][1]);
        cfx_buf_puts(b, ", ");
    }
}

static bool col2im_check(const char *op, const cfx_tensor *self, cfx_int_list output_size, cfx_int_list kernel_size,
                         cfx_int_list dilation, cfx_int_list padding, cfx_int_list stride, bool meta, fold_args *a,
                         int64_t *blk)
{
    const cfx_int_list lists[5] = {output_size, kernel_size, dilation, padding, stride};
    static const char *const names[5] = {"output_size", "kernel_size", "dilation", "padding", "stride"};
    if (!lengths(op, lists, names, 5, meta, "") || !read_args(kernel_size, dilation, padding, stride, a))
        return false;
    const int64_t *os = output_size.data, *sz = self->sizes;
    int n = self->ndim;
    cfx_buf b;
    cfx_buf_init(&b);
    if (meta) {
        if (!positive(op, "kernel_size", a->k, true, NULL) || !positive(op, "dilation", a->d, true, NULL) ||
            !positive(op, "padding", a->p, false, NULL) || !positive(op, "stride", a->s, true, NULL) ||
            !positive(op, "output_size", os, true, NULL))
            return false;
    } else if (!cpu_positive(op, "kernel size should be greater than zero", "kernel", a->k, true) ||
               !cpu_positive(op, "stride should be greater than zero", "stride", a->s, true) ||
               !cpu_positive(op, "dilation should be greater than zero", "dilation", a->d, true) ||
               !cpu_positive(op, "padding should be non-negative", "pad", a->p, false))
        return false;
    if ((n != 2 && n != 3) || !sz[n - 2] || !sz[n - 1]) {
        if (meta) {
            cfx_buf_puts(&b, "Expected 2D or 3D (batch mode) tensor for input with possible 0 batch size and non-zero "
                             "dimensions, but got: ");
            put_tuple(&b, sz, n);
        } else {
            cfx_buf_puts(&b, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                             "dimensions for input, but got: ");
            cfx_geom_put_dims(&b, sz, n);
        }
        return fail(op, &b);
    }
    int64_t planes = sz[n - 2], len = sz[n - 1], kk = a->k[0] * a->k[1];
    if (planes % kk) {
        if (meta) {
            cfx_buf_printf(&b, "Expected size of input's first non-batch dimension to be divisible by the product of "
                           "kernel_size, but got input.shape[-2] = %lld and kernel_size=", (long long)planes);
            cfx_geom_put_dims(&b, a->k, 2);
        } else {
            cfx_buf_printf(&b, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           "but got input.size(1)=%lld and kernel_size=(%lld, %lld).", (long long)planes,
                           (long long)a->k[0], (long long)a->k[1]);
        }
        return fail(op, &b);
    }
    for (int i = 0; i < 2; i++)
        blk[i] = blocks(os[i], a->k[i], a->d[i], a->p[i], a->s[i]);
    int64_t l = blk[0] * blk[1];
    if (meta && (len != l || l <= 0)) {
        put_fold_args(&b, os, a, true);
        cfx_buf_printf(&b, "expected input.size(-1) to be %lld but got %lld.", (long long)l, (long long)len);
        return fail(op, &b);
    }
    if (!meta && len != l) {
        put_fold_args(&b, os, a, false);
        cfx_buf_printf(&b, "expected size of input's dimension 2 to match the calculated number of sliding blocks "
                       "%lld * %lld = %lld, but got input.size(2)=%lld.", (long long)blk[0], (long long)blk[1],
                       (long long)l, (long long)len);
        return fail(op, &b);
    }
    if (!meta && (blk[0] < 1 || blk[1] < 1)) {
        put_fold_args(&b, os, a, false);
        cfx_buf_printf(&b, "calculated shape of the array of sliding blocks as (%lld, %lld), which is too small "
                       "(non-positive)", (long long)blk[0], (long long)blk[1]);
        return fail(op, &b);
    }
    if (!meta && (os[0] < 1 || os[1] < 1)) {
        cfx_buf_printf(&b, "Expected output spatial size to be positive, but got: output_size=(%lld, %lld).",
                       (long long)os[0], (long long)os[1]);
        return fail(op, &b);
    }
    cfx_buf_free(&b);
    return true;
}

static cfx_tensor *im2col_output(const cfx_tensor *self, const fold_args *a, const int64_t *blk)
{
    int n = self->ndim;
    int64_t sizes[3] = {self->sizes[0], self->sizes[n - 3] * a->k[0] * a->k[1], blk[0] * blk[1]};
    return n == 4 ? cfx_tensor_new(sizes, 3, (cfx_dtype)self->dtype, self->device)
                  : cfx_tensor_new(sizes + 1, 2, (cfx_dtype)self->dtype, self->device);
}

static cfx_tensor *col2im_output(const cfx_tensor *self, const int64_t *os, const fold_args *a)
{
    int n = self->ndim;
    int64_t sizes[4] = {self->sizes[0], self->sizes[n - 2] / (a->k[0] * a->k[1]), os[0], os[1]};
    return n == 3 ? cfx_tensor_new(sizes, 4, (cfx_dtype)self->dtype, self->device)
                  : cfx_tensor_new(sizes + 1, 3, (cfx_dtype)self->dtype, self->device);
}

static bool cpu_dtype(const char *op, const char *kernel, const cfx_tensor *self)
{
    if (cfx_dtype_is_floating((cfx_dtype)self->dtype) || self->dtype == CFX_BOOL)
        return true;
    cfx_kernel_not_implemented(op, kernel, (cfx_dtype)self->dtype);
    return false;
}

/* Visits every (column entry, pixel) pair: col is the [N,]C*kh*kw,L tensor, img the [N,]C,H,W
 * one; to_col copies pixels into columns (im2col), else columns are summed into pixels. */
static void fold_loop(cfx_tensor *col, cfx_tensor *img, const fold_args *a, const int64_t *blk, bool to_col)
{
    int ni = img->ndim, nc = col->ndim;
    bool batched = ni == 4;
    int64_t nb = batched ? img->sizes[0] : 1, c = img->sizes[ni - 3], h = img->sizes[ni - 2], w = img->sizes[ni - 1];
    bool fl = cfx_dtype_is_floating((cfx_dtype)img->dtype);
    uint8_t *cb = cfx_tensor_data(col), *ib = cfx_tensor_data(img);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t i = 0; i < a->k[0]; i++)
                for (int64_t j = 0; j < a->k[1]; j++)
                    for (int64_t by = 0; by < blk[0]; by++)
                        for (int64_t bx = 0; bx < blk[1]; bx++) {
                            int64_t row = (ch * a->k[0] + i) * a->k[1] + j, l = by * blk[1] + bx;
                            int64_t y = by * a->s[0] - a->p[0] + i * a->d[0], x = bx * a->s[1] - a->p[1] + j * a->d[1];
                            int64_t co = row * col->strides[nc - 2] + l * col->strides[nc - 1] +
                                         (batched ? b * col->strides[0] : 0);
                            bool inside = y >= 0 && y < h && x >= 0 && x < w;
                            int64_t io = inside ? y * img->strides[ni - 2] + x * img->strides[ni - 1] +
                                                      ch * img->strides[ni - 3] + (batched ? b * img->strides[0] : 0)
                                                : 0;
                            if (to_col && fl)
                                cfx_nn_set(col, co, inside ? cfx_nn_get(img, io) : 0.0);
                            else if (to_col)
                                cb[co] = inside ? ib[io] : 0;
                            else if (inside && fl)
                                cfx_nn_set(img, io, cfx_nn_get(img, io) + cfx_nn_get(col, co));
                            else if (inside)
                                ib[io] = ib[io] | cb[co];
                        }
}

cfx_tensor *cfx_cpu_im2col(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list dilation, cfx_int_list padding,
                           cfx_int_list stride)
{
    const char *op = "aten::im2col";
    fold_args a;
    int64_t blk[2];
    if (!im2col_check(op, self, kernel_size, dilation, padding, stride, false, &a, blk) ||
        !cpu_dtype(op, "im2col_out_cpu", self))
        return NULL;
    cfx_tensor *out = im2col_output(self, &a, blk);
    if (out)
        fold_loop(out, self, &a, blk, true);
    return out;
}

cfx_tensor *cfx_meta_im2col(cfx_tensor *self, cfx_int_list kernel_size, cfx_int_list dilation, cfx_int_list padding,
                            cfx_int_list stride)
{
    fold_args a;
    int64_t blk[2];
    if (!im2col_check("aten::im2col", self, kernel_size, dilation, padding, stride, true, &a, blk))
        return NULL;
    return im2col_output(self, &a, blk);
}

cfx_tensor *cfx_cpu_col2im(cfx_tensor *self, cfx_int_list output_size, cfx_int_list kernel_size,
                           cfx_int_list dilation, cfx_int_list padding, cfx_int_list stride)
{
    const char *op = "aten::col2im";
    fold_args a;
    int64_t blk[2];
    if (!col2im_check(op, self, output_size, kernel_size, dilation, padding, stride, false, &a, blk) ||
        !cpu_dtype(op, "col2im_out_cpu", self))
        return NULL;
    cfx_tensor *out = col2im_output(self, output_size.data, &a);
    if (!out)
        return NULL;
    memset(cfx_tensor_data(out), 0, (size_t)cfx_geom_numel(out->sizes, out->ndim) * cfx_dtype_size((cfx_dtype)out->dtype));
    fold_loop(self, out, &a, blk, false);
    return out;
}

cfx_tensor *cfx_meta_col2im(cfx_tensor *self, cfx_int_list output_size, cfx_int_list kernel_size,
                            cfx_int_list dilation, cfx_int_list padding, cfx_int_list stride)
{
    fold_args a;
    int64_t blk[2];
    if (!col2im_check("aten::col2im", self, output_size, kernel_size, dilation, padding, stride, true, &a, blk))
        return NULL;
    return col2im_output(self, output_size.data, &a);
}
