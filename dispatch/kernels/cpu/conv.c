/* conv.c - convolution's CompositeExplicitAutograd kernel (CPU; on meta tensors it defers to
 * the Meta kernel) for 1-D, 2-D and 3-D non-transposed convolutions with stride, padding,
 * dilation and groups.
 *
 * Per image and group: im2col gathers every receptive field into a [C/g * prod(k), prod(out)]
 * matrix (zeros in the padding), then one BLAS gemm multiplies the group's weights
 * [O/g, C/g * prod(k)] by it; the bias is the gemm's starting value. The output is contiguous,
 * or channels-last when the input suggests it (as ATen's CPU kernel lays it out). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/blas.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"

enum { MAXK = 3 };

typedef struct conv_geom {
    int k;                                      /* spatial dims */
    int64_t in[MAXK], ker[MAXK], out[MAXK], s[MAXK], p[MAXK], d[MAXK];
    int64_t cols;                               /* prod(out) */
    int64_t kprod;                              /* prod(ker) */
} conv_geom;

/* col[(c * kprod + kk) * cols + o] = x[c, pos(o, kk)] or 0 in the padding, for the cg channels
 * of one image starting at channel c0 (double: any float dtype). */
static void im2col(const cfx_tensor *x, int64_t img, int64_t c0, int64_t cg, const conv_geom *g, double *col)
{
    const char *base = cfx_tensor_data(x);
    bool f32 = x->dtype == CFX_FLOAT32;
    for (int64_t c = 0; c < cg; c++)
        for (int64_t kk = 0; kk < g->kprod; kk++) {
            int64_t kidx[MAXK], rem = kk;
            for (int d = g->k - 1; d >= 0; d--)
                kidx[d] = rem % g->ker[d], rem /= g->ker[d];
            double *row = col + (c * g->kprod + kk) * g->cols;
            for (int64_t o = 0; o < g->cols; o++) {
                int64_t oidx = o, off = img * x->strides[0] + (c0 + c) * x->strides[1];
                bool inside = true;
                for (int d = g->k - 1; d >= 0; d--) {
                    int64_t od = oidx % g->out[d];
                    oidx /= g->out[d];
                    int64_t pos = od * g->s[d] - g->p[d] + kidx[d] * g->d[d];
                    inside = inside && pos >= 0 && pos < g->in[d];
                    off += pos * x->strides[d + 2];
                }
                row[o] = !inside ? 0.0 : f32 ? ((const float *)base)[off] : ((const double *)base)[off];
            }
        }
}

static bool conv_cpu(cfx_tensor *out, const cfx_tensor *x, const cfx_tensor *w, const cfx_tensor *bias,
                     const conv_geom *g, int64_t groups)
{
    int64_t cg = x->sizes[1] / groups, og = w->sizes[0] / groups, rows = cg * g->kprod;
    double *col = malloc((size_t)(rows * g->cols + 1) * sizeof(double));
    double *wd = malloc((size_t)(w->sizes[0] * rows + 1) * sizeof(double));
    double *res = malloc((size_t)(og * g->cols + 1) * sizeof(double));
    if (!col || !wd || !res) {
        free(col), free(wd), free(res);
        return false;
    }
    /* the weights as [O, C/g * prod(k)] doubles, whatever their layout */
    bool f32 = x->dtype == CFX_FLOAT32;
    const char *wb = cfx_tensor_data(w);
    for (int64_t o = 0; o < w->sizes[0]; o++)
        for (int64_t r = 0; r < rows; r++) {
            int64_t c = r / g->kprod, rem = r % g->kprod, off = o * w->strides[0] + c * w->strides[1];
            for (int d = g->k - 1; d >= 0; d--)
                off += (rem % g->ker[d]) * w->strides[d + 2], rem /= g->ker[d];
            wd[o * rows + r] = f32 ? ((const float *)wb)[off] : ((const double *)wb)[off];
        }
    char *ob = cfx_tensor_data(out);
    const char *bb = bias ? cfx_tensor_data(bias) : NULL;
    bool ok = true;
    for (int64_t img = 0; ok && img < x->sizes[0]; img++)
        for (int64_t grp = 0; ok && grp < groups; grp++) {
            im2col(x, img, grp * cg, cg, g, col);
            for (int64_t o = 0; o < og; o++) {
                int64_t oc = grp * og + o;
                double bv = !bb ? 0.0 : f32 ? ((const float *)bb)[oc * bias->strides[0]]
                                            : ((const double *)bb)[oc * bias->strides[0]];
                for (int64_t j = 0; j < g->cols; j++)
                    res[o * g->cols + j] = bv;
            }
            cfx_mat c = {res, og, g->cols, g->cols, 1}, a = {wd + grp * og * rows, og, rows, rows, 1},
                    b = {col, rows, g->cols, g->cols, 1};
            ok = cfx_blas_gemm(CFX_FLOAT64, c, a, b, 1.0, 1.0);
            for (int64_t o = 0; ok && o < og; o++)
                for (int64_t j = 0; j < g->cols; j++) {
                    int64_t rem = j, off = img * out->strides[0] + (grp * og + o) * out->strides[1];
                    for (int d = g->k - 1; d >= 0; d--)
                        off += (rem % g->out[d]) * out->strides[d + 2], rem /= g->out[d];
                    double v = res[o * g->cols + j];
                    if (f32)
                        ((float *)ob)[off] = (float)v;
                    else
                        ((double *)ob)[off] = v;
                }
        }
    free(col), free(wd), free(res);
    return ok;
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
    if (!cfx_conv_output_size(op, input, weight, bias, stride, padding, dilation, transposed, groups, sizes))
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
    conv_geom g = {.k = n - 2, .cols = 1, .kprod = 1};
    for (int d = 0; d < g.k; d++) {
        g.in[d] = input->sizes[d + 2], g.ker[d] = weight->sizes[d + 2], g.out[d] = sizes[d + 2];
        g.s[d] = stride.data[stride.len == 1 ? 0 : d], g.p[d] = padding.data[padding.len == 1 ? 0 : d];
        g.d[d] = dilation.data[dilation.len == 1 ? 0 : d];
        g.cols *= g.out[d], g.kprod *= g.ker[d];
    }
    int64_t strides[CFX_MAX_DIMS];
    cfx_memory_format mf = cfx_geom_suggest_memory_format(input->sizes, input->strides, n);
    if (mf != CFX_CONTIGUOUS_FORMAT && n == 4)
        cfx_geom_memory_format_strides(sizes, n, mf, strides, NULL); /* channels_last on 4 dims: cannot fail */
    else
        cfx_geom_contiguous_strides(sizes, n, strides);
    cfx_tensor *out = cfx_tensor_new_strided(sizes, strides, n, (cfx_dtype)input->dtype, input->device);
    if (!out)
        return NULL;
    if (cfx_tensor_numel(out) && !conv_cpu(out, input, weight, bias, &g, groups)) {
        cfx_error_set(CFX_ERR_NOMEM, op, "out of memory in convolution");
        cfx_kernel_discard(out);
        return NULL;
    }
    return out;
}
