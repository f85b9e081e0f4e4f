/* grid_sampler.c - grid_sampler_2d and grid_sampler_3d (F.grid_sample's kernels; F.grid_sample
 * records aten::grid_sampler, a composite that picks the 2-d one for 4-d inputs and the 3-d one
 * otherwise): CPU and Meta.
 *
 * out[n, c, h, w] samples input[n, c] at grid[n, h, w] = (x, y) in [-1, 1] (beyond it: the
 * padding), following ATen's GridSampler.h scalar rules: unnormalize (align_corners: -1 and
 * 1 are the corner pixels' centres, else their outer edges), then per padding mode (0 zeros,
 * 1 border: clip, 2 reflection: reflect about the edges then clip), then interpolation (0
 * bilinear over the 4 neighbours, 1 nearest with round-half-even, 2 bicubic over 4x4 with
 * A = -0.75, each tap padded on its own). Computed in double; the result is contiguous.
 * The CPU checks are check_grid_sampler_common/_2d's; the Meta kernel is 2.13's Python
 * decomposition, which checks only the modes and the grid's last dim and promotes the dtypes.
 * grid_sampler_3d samples input[n, c] (a volume) at grid[n, d, h, w] = (x, y, z): trilinear
 * over the 8 neighbours (bilinear mode) or nearest, the same padding rules; bicubic is
 * refused, as ATen does for 5-d inputs. Its CPU checks are check_grid_sampler_common/_3d's
 * (C++'s texts, sizes as [2, 3]); its Meta kernel is 2.13's meta function in
 * _meta_registrations.py, the same checks with Python's texts (torch.Size([2, 3])), no dtype
 * check, and the input's dtype. */
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

/* a tensor's sizes as C++ prints them ([2, 3]), or as Python does (torch.Size([2, 3])) */
static void put_sizes(cfx_buf *m, const cfx_tensor *t, bool python)
{
    if (python)
        cfx_buf_puts(m, "torch.Size(");
    cfx_geom_put_dims(m, t->sizes, t->ndim);
    if (python)
        cfx_buf_puts(m, ")");
}

static bool fail_sizes_as(const char *op, const char *pre, const cfx_tensor *a, const char *mid, const cfx_tensor *b,
                          bool python)
{
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, pre);
    put_sizes(&m, a, python);
    if (b) {
        cfx_buf_puts(&m, mid);
        put_sizes(&m, b, python);
    } else {
        cfx_buf_puts(&m, mid);
    }
    char *msg = cfx_buf_take(&m);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "grid_sampler: bad arguments");
    cfx_free(msg);
    return false;
}

/* check_grid_sampler_common (C++'s texts, or with python those of _meta_registrations.py's
 * twin), then the expected rank: check_grid_sampler_2d's (dims 4) or _3d's (dims 5). */
static bool check_as(const char *op, const cfx_tensor *input, const cfx_tensor *grid, int dims, bool python)
{
    int n = input->ndim;
    if (n < 1 || grid->ndim < 1 || input->sizes[0] != grid->sizes[0])
        return fail_sizes_as(op, "grid_sampler(): expected grid and input to have same batch size, but got input "
                             "with sizes ", input, " and grid with sizes ", grid, python);
    if (grid->sizes[grid->ndim - 1] != n - 2) {
        cfx_buf m;
        cfx_buf_init(&m);
        cfx_buf_printf(&m, "grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes ",
                       n - 2);
        put_sizes(&m, grid, python);
        char *msg = cfx_buf_take(&m);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "grid_sampler: bad grid");
        cfx_free(msg);
        return false;
    }
    for (int i = 2; i < n; i++)
        if (input->sizes[i] == 0) {
            char tail[64];
            snprintf(tail, sizeof tail, " with dimension %d being empty", i);
            return fail_sizes_as(op, "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                                 "input has sizes ", input, tail, NULL, python);
        }
    if (n != dims || grid->ndim != dims) {
        char pre[128];
        snprintf(pre, sizeof pre, "grid_sampler(): expected %dD input and grid with same number of dimensions, but "
                 "got input with sizes ", dims);
        return fail_sizes_as(op, pre, input, " and grid with sizes ", grid, python);
    }
    return true;
}

static bool cpu_check(const char *op, const cfx_tensor *input, const cfx_tensor *grid)
{
    return check_as(op, input, grid, 4, false);
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

/* The CPU kernels' dtype dispatch (AT_DISPATCH_FLOATING_TYPES named kernel, then the grid's
 * data_ptr<scalar_t>), then the modes: ATen's kernels have no such check (they fall through
 * to one of the modes); refusing is safer. */
static bool cpu_dtypes_and_modes(const char *op, const char *kernel, const cfx_tensor *input, const cfx_tensor *grid,
                                 int64_t mode, int64_t padding)
{
    if (!cfx_dtype_is_floating((cfx_dtype)input->dtype))
        return cfx_kernel_not_implemented(op, kernel, (cfx_dtype)input->dtype);
    if (grid->dtype != input->dtype) {
        cfx_error_set(CFX_ERR, op, "expected scalar type %s but found %s", cfx_dtype_scalar_name((cfx_dtype)input->dtype),
                      cfx_dtype_scalar_name((cfx_dtype)grid->dtype));
        return false;
    }
    return check_modes(op, mode, padding);
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
    if (!cpu_check(op, input, grid) ||
        !cpu_dtypes_and_modes(op, "grid_sampler_2d_cpu_kernel_impl", input, grid, interpolation_mode, padding_mode))
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

/* ---- grid_sampler_3d ------------------------------------------------------------------------ */

/* One volume: its element (z, y, x), or 0 outside. */
typedef struct volume {
    const cfx_tensor *t;
    int64_t base, sz, sy, sx, d, h, w;
} volume;

/* floor or round of a source coordinate as an index; a NaN or huge one is out of any volume
 * (C's conversion of it would be undefined) */
static int64_t to_index(double c) { return fabs(c) < 4e18 ? (int64_t)c : INT64_MIN; }

static double at3(const volume *v, int64_t z, int64_t y, int64_t x)
{
    return z >= 0 && z < v->d && y >= 0 && y < v->h && x >= 0 && x < v->w
               ? cfx_nn_get(v->t, v->base + z * v->sz + y * v->sy + x * v->sx)
               : 0.0;
}

/* grid_sampler_3d_cpu_impl's two modes: nearest (round half to even) or trilinear, whose 8
 * weights are the products of the distances to the opposite corner */
static double sample3(const volume *v, const double *g, int64_t mode, int64_t padding, bool align)
{
    double ix = pad_coordinate(unnormalize(g[0], v->w, align), v->w, padding, align);
    double iy = pad_coordinate(unnormalize(g[1], v->h, align), v->h, padding, align);
    double iz = pad_coordinate(unnormalize(g[2], v->d, align), v->d, padding, align);
    if (mode == NEAREST)
        return at3(v, to_index(nearbyint(iz)), to_index(nearbyint(iy)), to_index(nearbyint(ix)));
    double x0 = floor(ix), y0 = floor(iy), z0 = floor(iz);
    int64_t xi = to_index(x0), yi = to_index(y0), zi = to_index(z0);
    if (xi == INT64_MIN || yi == INT64_MIN || zi == INT64_MIN)
        return 0.0; /* every corner out of the volume (ATen's x86 conversion of NaN included) */
    double wx = ix - x0, wy = iy - y0, wz = iz - z0, acc = 0;
    for (int k = 0; k < 8; k++) {
        int dz = k >> 2, dy = (k >> 1) & 1, dx = k & 1;
        double w = (dx ? wx : 1 - wx) * (dy ? wy : 1 - wy) * (dz ? wz : 1 - wz);
        acc += at3(v, zi + dz, yi + dy, xi + dx) * w;
    }
    return acc;
}

/* check_grid_sampler_common and check_grid_sampler_3d (the rank, then bicubic) */
static bool check_3d(const char *op, const cfx_tensor *input, const cfx_tensor *grid, int64_t mode, bool python)
{
    if (!check_as(op, input, grid, 5, python))
        return false;
    if (mode == BICUBIC) {
        cfx_error_set(CFX_ERR, op, "grid_sampler(): bicubic interpolation only supports 4D input");
        return false;
    }
    return true;
}

static cfx_tensor *output_3d(const cfx_tensor *input, const cfx_tensor *grid)
{
    int64_t sizes[5] = {input->sizes[0], input->sizes[1], grid->sizes[1], grid->sizes[2], grid->sizes[3]};
    return cfx_tensor_new(sizes, 5, (cfx_dtype)input->dtype, input->device);
}

cfx_tensor *cfx_cpu_grid_sampler_3d(cfx_tensor *input, cfx_tensor *grid, int64_t interpolation_mode,
                                    int64_t padding_mode, bool align_corners)
{
    const char *op = "aten::grid_sampler_3d";
    if (!check_3d(op, input, grid, interpolation_mode, false) ||
        !cpu_dtypes_and_modes(op, "grid_sampler3d_cpu", input, grid, interpolation_mode, padding_mode))
        return NULL;
    cfx_tensor *out = output_3d(input, grid);
    if (!out)
        return NULL;
    int64_t nb = out->sizes[0], c = out->sizes[1], od = out->sizes[2], oh = out->sizes[3], ow = out->sizes[4], k = 0;
    const int64_t *is = input->strides, *gs = grid->strides;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t ch = 0; ch < c; ch++) {
            volume v = {input, b * is[0] + ch * is[1], is[2], is[3], is[4],
                        input->sizes[2], input->sizes[3], input->sizes[4]};
            for (int64_t z = 0; z < od; z++)
                for (int64_t y = 0; y < oh; y++)
                    for (int64_t x = 0; x < ow; x++) {
                        int64_t o = b * gs[0] + z * gs[1] + y * gs[2] + x * gs[3];
                        double g[3] = {cfx_nn_get(grid, o), cfx_nn_get(grid, o + gs[4]), cfx_nn_get(grid, o + 2 * gs[4])};
                        cfx_nn_set(out, k++, sample3(&v, g, interpolation_mode, padding_mode, align_corners));
                    }
        }
    return out;
}

cfx_tensor *cfx_meta_grid_sampler_3d(cfx_tensor *input, cfx_tensor *grid, int64_t interpolation_mode,
                                     int64_t padding_mode, bool align_corners)
{
    (void)padding_mode;
    (void)align_corners;
    if (!check_3d("aten::grid_sampler_3d", input, grid, interpolation_mode, true))
        return NULL;
    return output_3d(input, grid); /* input.new_empty((N, C, out_D, out_H, out_W)) */
}

/* grid_sampler (CompositeImplicitAutograd): grid_sampler_2d for a 4-d input, else
 * grid_sampler_3d (whose checks refuse any other rank) */
cfx_tensor *cfx_composite_grid_sampler(cfx_tensor *input, cfx_tensor *grid, int64_t interpolation_mode,
                                       int64_t padding_mode, bool align_corners)
{
    if (input->ndim == 4)
        return cfx_op_grid_sampler_2d(NULL, input, grid, interpolation_mode, padding_mode, align_corners);
    return cfx_op_grid_sampler_3d(NULL, input, grid, interpolation_mode, padding_mode, align_corners);
}
