/* conv.c - convolution's CompositeExplicitAutograd kernel (CPU; on meta tensors it defers to
 * the Meta kernel): 1-D, 2-D and 3-D convolutions, plain or transposed, with stride, padding,
 * dilation, groups and (transposed) output_padding, in float32 or float64.
 *
 * Both directions are one gemm per image and group around one index walk. A plain
 * convolution gathers every receptive field of the input into columns (im2col: a
 * [C/g * prod(k), prod(out)] matrix, zeros in the padding) and multiplies the group's weights
 * [O/g, C/g * prod(k)] by it. A transposed one is that product's adjoint: W^T times the input
 * gives the columns, which col2im scatter-adds into the output. A 1x1 kernel with stride 1 and
 * no padding needs no columns: the image itself is the matrix (ATen's 1x1 fast path). The
 * arithmetic is in the tensor's dtype, on contiguous copies of input and weight, through
 * cfx_blas_gemm (sgemm / dgemm); the bias is the gemm's starting value. The output is
 * contiguous, or channels-last when the input suggests it (as ATen's CPU kernel lays it out),
 * in which case it is computed contiguous and copied. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/blas.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/nn_shapes.h"
#include "dispatch/kernels/conv_internal.h"

enum { MAXK = CFX_CONV_MAXK };

static bool is_pointwise(const conv_geom *g)
{
    for (int d = 0; d < g->k; d++)
        if (g->ker[d] != 1 || g->s[d] != 1 || g->p[d] != 0 || g->image[d] != g->grid[d])
            return false;
    return true;
}

/* Gather (im2col): col[(c * kprod + kk) * cols + o] = image[c, pos(o, kk)], 0 outside.
 * Scatter (col2im): image[c, pos(o, kk)] += col[...] where pos is inside. Walked row by row
 * of the grid's last dim, whose positions step by s along one image row; the inside part of
 * a row is one range of it, found once per kernel offset. */
#define DEFINE_COLUMNS(S, T)                                                                      \
    static void columns_##S(T *image, T *col, int64_t channels, const conv_geom *g, bool scatter) \
    {                                                                                             \
        int last = g->k - 1;                                                                      \
        if (!g->cols) /* an empty grid (a transposed conv of an empty input) moves nothing */     \
            return;                                                                               \
        int64_t glast = g->grid[last], ilast = g->image[last], nrows = g->cols / glast;           \
        for (int64_t c = 0; c < channels; c++)                                                    \
            for (int64_t kk = 0; kk < g->kprod; kk++) {                                           \
                int64_t kidx[MAXK], rem = kk;                                                     \
                for (int d = last; d >= 0; d--)                                                   \
                    kidx[d] = rem % g->ker[d], rem /= g->ker[d];                                  \
                T *plane = image + c * g->image_numel, *crow = col + (c * g->kprod + kk) * g->cols; \
                int64_t shift = kidx[last] * g->d[last] - g->p[last], st = g->s[last];            \
                /* the grid positions [olo, ohi) whose o * st + shift is inside [0, ilast) */     \
                int64_t olo = shift >= 0 ? 0 : (-shift + st - 1) / st;                            \
                int64_t ohi = ilast - 1 - shift < 0 ? 0 : (ilast - 1 - shift) / st + 1;           \
                olo = olo < glast ? olo : glast, ohi = ohi < glast ? ohi : glast;                 \
                ohi = ohi < olo ? olo : ohi;                                                      \
                for (int64_t r = 0; r < nrows; r++, crow += glast) {                              \
                    int64_t base = 0, ridx = r, step = 1; /* the row's index in the image */      \
                    bool inside = true;                                                           \
                    for (int d = last - 1; d >= 0; d--) {                                         \
                        int64_t pos = (ridx % g->grid[d]) * g->s[d] - g->p[d] + kidx[d] * g->d[d];\
                        ridx /= g->grid[d];                                                       \
                        inside = inside && pos >= 0 && pos < g->image[d];                         \
                        base += pos * step, step *= g->image[d];                                  \
                    }                                                                             \
                    T *irow = plane + base * ilast; /* position o is irow[o * st + shift] */      \
                    int64_t lo = inside ? olo : glast, hi = inside ? ohi : glast;                 \
                    if (scatter) {                                                                \
                        for (int64_t o = lo; o < hi; o++)                                         \
                            irow[o * st + shift] += crow[o];                                      \
                    } else {                                                                      \
                        memset(crow, 0, (size_t)lo * sizeof(T));                                  \
                        if (st == 1 && hi > lo) /* a stride-1 row is one run of the image row */ \
                            memcpy(crow + lo, irow + lo + shift, (size_t)(hi - lo) * sizeof(T));  \
                        else                                                                      \
                            for (int64_t o = lo; o < hi; o++)                                     \
                                crow[o] = irow[o * st + shift];                                   \
                        memset(crow + hi, 0, (size_t)(glast - hi) * sizeof(T));                   \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
    }
DEFINE_COLUMNS(f32, float)
DEFINE_COLUMNS(f64, double)

void cfx_conv_columns(cfx_dtype dt, void *image, void *col, int64_t channels, const conv_geom *g, bool scatter)
{
    if (dt == CFX_FLOAT32)
        columns_f32(image, col, channels, g, scatter);
    else
        columns_f64(image, col, channels, g, scatter);
}

/* Rows [0, rows) of the row-major [rows, cols] matrix at p set to bias[first + row] (or 0). */
static void fill_bias(cfx_dtype dt, void *p, int64_t rows, int64_t cols, const cfx_tensor *bias, int64_t first)
{
    for (int64_t r = 0; r < rows; r++) {
        double v = bias ? cfx_nn_get(bias, (first + r) * bias->strides[0]) : 0.0;
        for (int64_t j = 0; j < cols; j++) {
            if (dt == CFX_FLOAT32)
                ((float *)p)[r * cols + j] = (float)v;
            else
                ((double *)p)[r * cols + j] = v;
        }
    }
}

bool cfx_conv_cpu(cfx_tensor *out, const cfx_tensor *x, const cfx_tensor *w, const cfx_tensor *bias,
                     const conv_geom *g, int64_t groups, bool transposed)
{
    cfx_dtype dt = (cfx_dtype)x->dtype;
    size_t es = cfx_dtype_size(dt);
    int64_t in_c = x->sizes[1] / groups, out_c = out->sizes[1] / groups;
    int64_t in_numel = cfx_geom_numel(x->sizes + 2, g->k), out_numel = cfx_geom_numel(out->sizes + 2, g->k);
    /* the columns: [C/g * prod(k), grid] plain, [O/g * prod(k), grid] transposed */
    int64_t rows = (transposed ? out_c : in_c) * g->kprod;
    bool direct = is_pointwise(g);
    char *col = direct ? NULL : cfx_malloc((size_t)(rows * g->cols) * es);
    if (!direct && !col)
        return false;
    char *xb = cfx_tensor_data(x), *wb = cfx_tensor_data(w), *ob = cfx_tensor_data(out);
    bool ok = true;
    for (int64_t img = 0; ok && img < x->sizes[0]; img++)
        for (int64_t grp = 0; ok && grp < groups; grp++) {
            char *xg = xb + (size_t)((img * x->sizes[1] + grp * in_c) * in_numel) * es;
            char *og = ob + (size_t)((img * out->sizes[1] + grp * out_c) * out_numel) * es;
            fill_bias(dt, og, out_c, out_numel, bias, grp * out_c);
            if (!transposed) {
                /* out_g [O/g, out] += W_g [O/g, rows] @ columns [rows, out] */
                if (!direct)
                    cfx_conv_columns(dt, xg, col, in_c, g, false);
                cfx_mat c = {og, out_c, g->cols, g->cols, 1};
                cfx_mat a = {wb + (size_t)(grp * out_c * rows) * es, out_c, rows, rows, 1};
                cfx_mat b = {direct ? xg : col, rows, g->cols, g->cols, 1};
                ok = cfx_blas_gemm(dt, c, a, b, 1.0, 1.0);
            } else {
                /* columns [rows, in] = W_g^T, W_g being [C/g, O/g * prod(k)], @ x_g [C/g, in] */
                cfx_mat a = {wb + (size_t)(grp * in_c * rows) * es, rows, in_c, 1, rows};
                cfx_mat b = {xg, in_c, g->cols, g->cols, 1};
                cfx_mat c = {direct ? og : col, rows, g->cols, g->cols, 1};
                ok = cfx_blas_gemm(dt, c, a, b, 1.0, direct ? 1.0 : 0.0);
                if (ok && !direct)
                    cfx_conv_columns(dt, og, col, out_c, g, true);
            }
        }
    cfx_free(col);
    return ok;
}

void cfx_conv_geom_init(conv_geom *g, const cfx_tensor *input, const cfx_tensor *weight, const int64_t *out_sizes,
                        cfx_int_list stride, cfx_int_list padding, cfx_int_list dilation, bool transposed)
{
    *g = (conv_geom){.k = input->ndim - 2, .image_numel = 1, .cols = 1, .kprod = 1};
    for (int d = 0; d < g->k; d++) {
        int64_t in = input->sizes[d + 2], out = out_sizes[d + 2];
        g->image[d] = transposed ? out : in, g->grid[d] = transposed ? in : out, g->ker[d] = weight->sizes[d + 2];
        g->s[d] = stride.data[stride.len == 1 ? 0 : d], g->p[d] = padding.data[padding.len == 1 ? 0 : d];
        g->d[d] = dilation.data[dilation.len == 1 ? 0 : d];
        g->image_numel *= g->image[d], g->cols *= g->grid[d], g->kprod *= g->ker[d];
    }
}

/* slow_conv_transpose's shape check: output_padding below stride or dilation, per dim. */
bool cfx_conv_output_padding_ok(const char *op, int k, cfx_int_list output_padding, const int64_t *s, const int64_t *d)
{
    static const char *const dims[3][3] = {{"width"}, {"height", "width"}, {"depth", "height", "width"}};
    bool ok = true;
    for (int i = 0; i < k; i++) {
        int64_t o = output_padding.data[output_padding.len == 1 ? 0 : i];
        ok = ok && (o < s[i] || o < d[i]);
    }
    if (ok)
        return true;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "output padding must be smaller than either stride or dilation, but got");
    for (int i = 0; i < k; i++)
        cfx_buf_printf(&b, " output_padding_%s: %lld", dims[k - 1][i],
                       (long long)output_padding.data[output_padding.len == 1 ? 0 : i]);
    for (int i = 0; i < k; i++)
        cfx_buf_printf(&b, " stride_%s: %lld", dims[k - 1][i], (long long)s[i]);
    for (int i = 0; i < k; i++)
        cfx_buf_printf(&b, " dilation_%s: %lld", dims[k - 1][i], (long long)d[i]);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "output padding must be smaller than either stride or dilation");
    cfx_free(msg);
    return false;
}

/* select_conv_backend's check (CPU only: 2.13's Meta kernel has none): an empty input must be
 * empty in its batch or channels. A 1-d input is printed as the backend views it, [N, C, 1, L]. */
bool cfx_conv_empty_input_ok(const char *op, const cfx_tensor *input)
{
    if (cfx_tensor_numel(input) || !input->sizes[0] || !input->sizes[1])
        return true;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "Only zero batch or zero channel inputs are supported, but got input shape: [");
    for (int d = 0; d < input->ndim; d++)
        cfx_buf_printf(&b, "%s%s%lld", d ? ", " : "", d == 2 && input->ndim == 3 ? "1, " : "",
                       (long long)input->sizes[d]);
    cfx_buf_puts(&b, "]");
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "Only zero batch or zero channel inputs are supported");
    cfx_free(msg);
    return false;
}

cfx_tensor *cfx_kernel_convolution(cfx_tensor *input, cfx_tensor *weight, cfx_tensor *bias, cfx_int_list stride,
                                   cfx_int_list padding, cfx_int_list dilation, bool transposed,
                                   cfx_int_list output_padding, int64_t groups)
{
    const char *op = "aten::convolution";
    if (input->device.type == CFX_DEVICE_META || weight->device.type == CFX_DEVICE_META)
        return cfx_meta_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                                    groups);
    int64_t sizes[CFX_MAX_DIMS];
    if (!cfx_conv_output_size(op, input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                              sizes) ||
        !cfx_conv_empty_input_ok(op, input))
        return NULL;
    int n = input->ndim;
    if (n - 2 > MAXK) {
        cfx_error_set(CFX_ERR_NOTIMPL, op, "convolution with more than 3 spatial dimensions is not implemented in cfx");
        return NULL;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype) || weight->dtype != input->dtype ||
        (bias && bias->dtype != input->dtype)) {
        cfx_error_set(CFX_ERR, op, "Input type (%s) and weight type (%s) should be the same or input should be a "
                      "floating point tensor", cfx_dtype_name((cfx_dtype)input->dtype),
                      cfx_dtype_name((cfx_dtype)weight->dtype));
        return NULL;
    }
    conv_geom g;
    cfx_conv_geom_init(&g, input, weight, sizes, stride, padding, dilation, transposed);
    if (transposed && !cfx_conv_output_padding_ok(op, g.k, output_padding, g.s, g.d))
        return NULL;
    int64_t strides[CFX_MAX_DIMS];
    cfx_memory_format mf = cfx_geom_suggest_memory_format(input->sizes, input->strides, n);
    bool channels_last = mf != CFX_CONTIGUOUS_FORMAT && n == 4;
    if (channels_last)
        cfx_geom_memory_format_strides(sizes, n, mf, strides, NULL); /* channels_last on 4 dims: cannot fail */
    else
        cfx_geom_contiguous_strides(sizes, n, strides);
    cfx_dtype dt = (cfx_dtype)input->dtype;
    cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
    cfx_tensor *out = cfx_tensor_new_strided(sizes, strides, n, dt, cpu);
    if (!out || !cfx_tensor_numel(out))
        return out;
    cfx_scope s = cfx_scope_begin();
    const cfx_tensor *x = cfx_cpu_contiguous(input), *w = x ? cfx_cpu_contiguous(weight) : NULL;
    cfx_tensor *res = channels_last ? cfx_tensor_new(sizes, n, dt, cpu) : out;
    bool ok = x && w && res && cfx_conv_cpu(res, x, w, bias, &g, groups, transposed);
    if (ok && res != out)
        cfx_cpu_copy(out, res);
    cfx_scope_end(s);
    if (!ok) {
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in convolution");
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}
