/* grid_sampler.c - grid_sampler_2d (F.grid_sample's kernel; F.grid_sample records
 * aten::grid_sampler, a composite that picks it for 4-d inputs): CPU and Meta.
 *
 * out[n, c, h, w] samples input[n, c] at grid[n, h, w] = (x, y) in [-1, 1] (beyond it: the
 * padding), following ATen's GridSampler.h scalar rules: unnormalize (align_corners: -1 and
 * 1 are the corner pixels' centres, else their outer edges), then per padding mode (0 zeros,
 * 1 border: clip, 2 reflection: reflect about the edges then clip), then interpolation (0
 * bilinear over the 4 neighbours, 1 nearest with round-half-even, 2 bicubic over 4x4 with
 * A = -0.75, each tap padded on its own). Computed in double; the result is contiguous.
 * The CPU checks are check_grid_sampler_common/_2d's; the Meta kernel is 2.13's Python
 * decomposition, which checks only the modes and the grid's last dim and promotes the dtypes.
 * The composite grid_sampler passes a 4-d input on to grid_sampler_2d (cfx has no 3-d one). */
#include <math.h>
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/nn_shapes.h"

enum { BILINEAR, NEAREST, BICUBIC };
enum { PAD_ZEROS, PAD_BORDER, PAD_REFLECTION };

static double unnormalize(double c, int64_t size, bool align)
{
    return align ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * (double)size - 1) / 2;
}

static double clip(double c, int64_t size)
{
    return fmin((double)(size - 1), fmax(c, 0.0));
}

/* Reflects c about [twice_low / 2, twice_high / 2] until it falls inside. */
static double reflect(double c, int64_t twice_low, int64_t twice_high)
{
    if (twice_low == twice_high)
        return 0;
    double lo = (double)twice_low / 2, span = (double)(twice_high - twice_low) / 2;
    c = fabs(c - lo);
    double extra = fmod(c, span);
    int64_t flips = (int64_t)floor(c / span);
    return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

static double pad_coordinate(double c, int64_t size, int64_t padding, bool align)
{
    if (padding == PAD_BORDER)
        return clip(c, size);
    if (padding == PAD_REFLECTION)
        return clip(align ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1), size);
    return c;
}

/* One plane: its element (y, x), or 0 outside. */
typedef struct plane {
    const cfx_tensor *t;
    int64_t base, sy, sx, h, w;
} plane;

static double at(const plane *p, int64_t y, int64_t x)
{
    return y >= 0 && y < p->h && x >= 0 && x < p->w ? cfx_nn_get(p->t, p->base + y * p->sy + x * p->sx) : 0.0;
}

static double cubic1(double x) { const double A = -0.75; return ((A + 2) * x - (A + 3)) * x * x + 1; }
static double cubic2(double x) { const double A = -0.75; return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

static double cubic_interp(const double *v, double t)
{
    return v[0] * cubic2(t + 1) + v[1] * cubic1(t) + v[2] * cubic1(1 - t) + v[3] * cubic2(2 - t);
}

static double sample(const plane *p, double gx, double gy, int64_t mode, int64_t padding, bool align)
{
    if (mode == BICUBIC) {
        double ix = unnormalize(gx, p->w, align), iy = unnormalize(gy, p->h, align);
        double x0 = floor(ix), y0 = floor(iy), rows[4];
        for (int j = 0; j < 4; j++) {
            double v[4];
            for (int i = 0; i < 4; i++) {
                double x = pad_coordinate(x0 - 1 + i, p->w, padding, align);
                double y = pad_coordinate(y0 - 1 + j, p->h, padding, align);
                v[i] = at(p, (int64_t)y, (int64_t)x);
            }
            rows[j] = cubic_interp(v, ix - x0);
        }
        return cubic_interp(rows, iy - y0);
    }
    double ix = pad_coordinate(unnormalize(gx, p->w, align), p->w, padding, align);
    double iy = pad_coordinate(unnormalize(gy, p->h, align), p->h, padding, align);
    if (mode == NEAREST)
        return at(p, (int64_t)nearbyint(iy), (int64_t)nearbyint(ix));
    double x0 = floor(ix), y0 = floor(iy);
    int64_t xi = (int64_t)x0, yi = (int64_t)y0;
    double wx = ix - x0, wy = iy - y0;
    return at(p, yi, xi) * (1 - wx) * (1 - wy) + at(p, yi, xi + 1) * wx * (1 - wy) +
           at(p, yi + 1, xi) * (1 - wx) * wy + at(p, yi + 1, xi + 1) * wx * wy;
}

static bool fail_sizes(const char *op, const char *pre, const cfx_tensor *a, const char *mid, const cfx_tensor *b)
{
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, pre);
    cfx_geom_put_dims(&m, a->sizes, a->ndim);
    if (b) {
        cfx_buf_puts(&m, mid);
        cfx_geom_put_dims(&m, b->sizes, b->ndim);
    } else {
        cfx_buf_puts(&m, mid);
    }
    char *msg = cfx_buf_take(&m);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "grid_sampler: bad arguments");
    cfx_free(msg);
    return false;
}

/* check_grid_sampler_common, then check_grid_sampler_2d. */
static bool cpu_check(const char *op, const cfx_tensor *input, const cfx_tensor *grid)
{
    int n = input->ndim;
    if (n < 1 || grid->ndim < 1 || input->sizes[0] != grid->sizes[0])
        return fail_sizes(op, "grid_sampler(): expected grid and input to have same batch size, but got input with "
                          "sizes ", input, " and grid with sizes ", grid);
    if (grid->sizes[grid->ndim - 1] != n - 2) {
        cfx_buf m;
        cfx_buf_init(&m);
        cfx_buf_printf(&m, "grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes ",
                       n - 2);
        cfx_geom_put_dims(&m, grid->sizes, grid->ndim);
        char *msg = cfx_buf_take(&m);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "grid_sampler: bad grid");
        cfx_free(msg);
        return false;
    }
    for (int i = 2; i < n; i++)
        if (input->sizes[i] == 0) {
            char tail[64];
            snprintf(tail, sizeof tail, " with dimension %d being empty", i);
            return fail_sizes(op, "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                              "has sizes ", input, tail, NULL);
        }
    if (n != 4 || grid->ndim != 4)
        return fail_sizes(op, "grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                          "input with sizes ", input, " and grid with sizes ", grid);
    return true;
}

static bool check_modes(const char *op, int64_t mode, int64_t padding)
{
    if (mode < 0 || mode > 2) {
        cfx_error_set(CFX_ERR, op, "Invalid interpolation mode %lld", (long long)mode);
        return false;
    }
    if (padding < 0 || padding > 2) {
        cfx_error_set(CFX_ERR, op, "Invalid padding mode %lld", (long long)padding);
        return false;
    }
    return true;
}

static cfx_tensor *output(const cfx_tensor *input, const cfx_tensor *grid, cfx_dtype dt)
{
    int64_t sizes[4] = {input->sizes[0], input->sizes[1], grid->sizes[1], grid->sizes[2]};
    return cfx_tensor_new(sizes, 4, dt, input->device);
}

cfx_tensor *cfx_cpu_grid_sampler_2d(cfx_tensor *input, cfx_tensor *grid, int64_t interpolation_mode,
                                    int64_t padding_mode, bool align_corners)
{
    const char *op = "aten::grid_sampler_2d";
    if (!cpu_check(op, input, grid))
        return NULL;
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype)) {
        cfx_kernel_not_implemented(op, "grid_sampler_2d_cpu_kernel_impl", (cfx_dtype)input->dtype);
        return NULL;
    }
    if (grid->dtype != input->dtype) {
        cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name((cfx_dtype)input->dtype),
                      cfx_dtype_scalar_name((cfx_dtype)grid->dtype));
        return NULL;
    }
    /* ATen's kernel has no such check (it falls through to one of the modes); refusing is safer */
    if (!check_modes(op, interpolation_mode, padding_mode))
        return NULL;
    cfx_tensor *out = output(input, grid, (cfx_dtype)input->dtype);
    if (!out)
        return NULL;
    int64_t nb = out->sizes[0], c = out->sizes[1], oh = out->sizes[2], ow = out->sizes[3];
    for (int64_t b = 0; b < nb; b++)
        for (int64_t y = 0; y < oh; y++)
            for (int64_t x = 0; x < ow; x++) {
                int64_t g = b * grid->strides[0] + y * grid->strides[1] + x * grid->strides[2];
                double gx = cfx_nn_get(grid, g), gy = cfx_nn_get(grid, g + grid->strides[3]);
                for (int64_t ch = 0; ch < c; ch++) {
                    plane p = {input, b * input->strides[0] + ch * input->strides[1], input->strides[2],
                               input->strides[3], input->sizes[2], input->sizes[3]};
                    double v = sample(&p, gx, gy, interpolation_mode, padding_mode, align_corners);
                    cfx_nn_set(out, ((b * c + ch) * oh + y) * ow + x, v);
                }
            }
    return out;
}

cfx_tensor *cfx_meta_grid_sampler_2d(cfx_tensor *input, cfx_tensor *grid, int64_t interpolation_mode,
                                     int64_t padding_mode, bool align_corners)
{
    (void)align_corners;
    const char *op = "aten::grid_sampler_2d";
    if (!check_modes(op, interpolation_mode, padding_mode))
        return NULL;
    /* the decomposition unpacks both shapes into four names and views the grid with the
     * input's batch: a rank or batch it cannot take is a Python ValueError or view error,
     * which cfx words as the C++ kernel's check (that check always fails here) */
    if (input->ndim != 4 || grid->ndim != 4 || input->sizes[0] != grid->sizes[0]) {
        (void)cpu_check(op, input, grid);
        return NULL;
    }
    if (grid->sizes[3] != 2) {
        cfx_error_set(CFX_ERR, op, "grid last dimension must be 2 (for x,y coords), got %lld", (long long)grid->sizes[3]);
        return NULL;
    }
    return output(input, grid, cfx_dtype_promote((cfx_dtype)input->dtype, (cfx_dtype)grid->dtype));
}

cfx_tensor *cfx_composite_grid_sampler(cfx_tensor *input, cfx_tensor *grid, int64_t interpolation_mode,
                                       int64_t padding_mode, bool align_corners)
{
    if (input->ndim != 4) {
        cfx_error_set(CFX_ERR_NOTIMPL, "aten::grid_sampler", "grid_sampler of a %d-d input (grid_sampler_3d) is not "
                      "implemented in cfx", input->ndim);
        return NULL;
    }
    return cfx_op_grid_sampler_2d(NULL, input, grid, interpolation_mode, padding_mode, align_corners);
}
