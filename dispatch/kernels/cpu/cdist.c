/* cdist.c - _cdist_forward and _pdist_forward on CPU and Meta (ATen's Distance.cpp and its
 * cdist/pdist kernels; 2.13's meta_cdist_forward and meta__pdist_forward), and the
 * CompositeImplicitAutograd cdist and pdist that F.cdist / F.pdist call (cdist's
 * matrix-product route records expand/contiguous/view and _euclidean_dist, euclidean_dist.c).
 *
 * The p-norm distance between rows: p = 0 counts the differing columns, p = inf takes the
 * largest |difference|, else (sum |d|^p)^(1/p). Sums are in double (ATen's float ones differ
 * by an ulp or so; its matrix-product Euclidean path, taken for p = 2 with more than 25 rows or
 * compute_mode 1, by a few ulps: cfx computes every mode directly). cdist's batch dims
 * broadcast; the result is contiguous [*batch, r1, r2] in x1's dtype. pdist of an [n, m] input
 * is the n * (n - 1) / 2 distances of its row pairs i < j in row-major order. The two keys keep
 * their own texts (ATen's on CPU, the meta functions' on Meta). */
#include <math.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/iter.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/nn_shapes.h"

static const char CDIST[] = "aten::_cdist_forward", PDIST[] = "aten::_pdist_forward";

/* the p-norm of the differences of rows a and b (m columns, strides sa and sb) */
static double row_dist(const cfx_tensor *x, int64_t a, int64_t sa, const cfx_tensor *y, int64_t b, int64_t sb,
                       int64_t m, double p)
{
    double acc = 0;
    for (int64_t k = 0; k < m; k++) {
        double d = fabs(cfx_nn_get(x, a + k * sa) - cfx_nn_get(y, b + k * sb));
        if (p == 0)
            acc += d != 0;
        else if (isinf(p))
            acc = d > acc ? d : acc;
        else if (p == 1)
            acc += d;
        else if (p == 2)
            acc += d * d;
        else
            acc += pow(d, p);
    }
    if (p == 0 || p == 1 || isinf(p))
        return acc;
    return p == 2 ? sqrt(acc) : pow(acc, 1.0 / p);
}

/* The checks of both keys, in their order, and the output's sizes (*nd of them). */
static bool cdist_shape(const cfx_tensor *x1, const cfx_tensor *x2, double p, cfx_value mode, bool meta,
                        int64_t *sizes, int *nd)
{
    const cfx_tensor *xs[2] = {x1, x2};
    for (int i = 0; i < 2; i++)
        if (xs[i]->ndim < 2) {
            cfx_error_set(CFX_ERR, CDIST, "cdist only supports at least 2D tensors, X%d got: %dD", i + 1,
                          xs[i]->ndim);
            return false;
        }
    if (x1->sizes[x1->ndim - 1] != x2->sizes[x2->ndim - 1]) {
        cfx_error_set(CFX_ERR, CDIST, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                      (long long)x1->sizes[x1->ndim - 1], (long long)x2->sizes[x2->ndim - 1]);
        return false;
    }
    for (int i = 0; i < 2; i++)
        if (!cfx_dtype_is_floating((cfx_dtype)xs[i]->dtype)) {
            cfx_dtype dt = (cfx_dtype)xs[i]->dtype;
            cfx_error_set(CFX_ERR, CDIST, "cdist only supports floating-point dtypes, X%d got: %s", i + 1,
                          meta ? cfx_dtype_torch_name(dt) : cfx_dtype_scalar_name(dt));
            return false;
        }
    if (!(p >= 0)) {
        cfx_error_set(CFX_ERR, CDIST, "cdist only supports non-negative p values");
        return false;
    }
    int64_t m = mode.kind == CFX_V_INT ? mode.u.i : 0;
    if (m < 0 || m > 2) {
        cfx_error_set(CFX_ERR, CDIST, meta ? "possible modes: None, 0, 1, 2, but was: %lld"
                                           : "possible modes: 0, 1, 2, but was: %lld", (long long)m);
        return false;
    }
    int n1 = x1->ndim - 2, n2 = x2->ndim - 2;
    if (meta) { /* torch.broadcast_shapes' text */
        int n = n1 > n2 ? n1 : n2;
        for (int i = 0; i < n; i++) {
            int64_t a = i < n - n1 ? 1 : x1->sizes[i - (n - n1)], b = i < n - n2 ? 1 : x2->sizes[i - (n - n2)];
            if (a != b && a != 1 && b != 1) {
                cfx_buf m_;
                cfx_buf_init(&m_);
                cfx_buf_printf(&m_, "Attempting to broadcast a dimension of length %lld at %d! Mismatching argument "
                               "at index 1 had torch.Size([", (long long)b, i - n);
                for (int d = 0; d < n2; d++)
                    cfx_buf_printf(&m_, "%s%lld", d ? ", " : "", (long long)x2->sizes[d]);
                cfx_buf_puts(&m_, "]); but expected shape should be broadcastable to [");
                for (int d = 0; d < n1; d++)
                    cfx_buf_printf(&m_, "%s%lld", d ? ", " : "", (long long)x1->sizes[d]);
                cfx_buf_puts(&m_, "]");
                char *msg = cfx_buf_take(&m_);
                cfx_error_set_text(CFX_ERR, CDIST, msg ? msg : "cdist: batch dims do not broadcast");
                cfx_free(msg);
                return false;
            }
        }
    }
    if (!cfx_geom_broadcast(x1->sizes, n1, x2->sizes, n2, sizes, nd, CDIST))
        return false;
    sizes[(*nd)++] = x1->sizes[x1->ndim - 2];
    sizes[(*nd)++] = x2->sizes[x2->ndim - 2];
    return true;
}

cfx_tensor *cfx_meta__cdist_forward(cfx_tensor *x1, cfx_tensor *x2, double p, cfx_value compute_mode)
{
    int64_t sizes[CFX_MAX_DIMS];
    int nd = 0;
    if (!cdist_shape(x1, x2, p, compute_mode, true, sizes, &nd))
        return NULL;
    return cfx_tensor_new(sizes, nd, (cfx_dtype)x1->dtype, x1->device); /* x1.new_empty */
}

/* the offset of batch element b (an index of the broadcast batch dims out[0..nb)) in x */
static int64_t batch_offset(const cfx_tensor *x, const int64_t *out, int nb, int64_t b)
{
    int64_t off = 0;
    int nx = x->ndim - 2;
    for (int d = nb - 1; d >= 0; d--) {
        int64_t i = b % out[d];
        b /= out[d];
        int xd = d - (nb - nx);
        if (xd >= 0 && x->sizes[xd] != 1)
            off += i * x->strides[xd];
    }
    return off;
}

cfx_tensor *cfx_cpu__cdist_forward(cfx_tensor *x1, cfx_tensor *x2, double p, cfx_value compute_mode)
{
    int64_t sizes[CFX_MAX_DIMS];
    int nd = 0;
    if (!cdist_shape(x1, x2, p, compute_mode, false, sizes, &nd))
        return NULL;
    if (x1->dtype != x2->dtype) {
        cfx_error_set(CFX_ERR, CDIST, "expected scalar type %s but found %s", cfx_dtype_scalar_name((cfx_dtype)x1->dtype),
                      cfx_dtype_scalar_name((cfx_dtype)x2->dtype));
        return NULL;
    }
    cfx_tensor *out = cfx_tensor_new(sizes, nd, (cfx_dtype)x1->dtype, x1->device);
    if (!out)
        return NULL;
    int nb = nd - 2;
    int64_t r1 = sizes[nd - 2], r2 = sizes[nd - 1], m = x1->sizes[x1->ndim - 1];
    int64_t batches = cfx_geom_numel(sizes, nb);
    int64_t s1r = x1->strides[x1->ndim - 2], s1c = x1->strides[x1->ndim - 1];
    int64_t s2r = x2->strides[x2->ndim - 2], s2c = x2->strides[x2->ndim - 1];
    for (int64_t b = 0; b < batches; b++) {
        int64_t o1 = batch_offset(x1, sizes, nb, b), o2 = batch_offset(x2, sizes, nb, b);
        for (int64_t i = 0; i < r1; i++)
            for (int64_t j = 0; j < r2; j++)
                cfx_nn_set(out, (b * r1 + i) * r2 + j, row_dist(x1, o1 + i * s1r, s1c, x2, o2 + j * s2r, s2c, m, p));
    }
    return out;
}

/* n * (n - 1) / 2 for the rows of self (n = size(0)) */
static int64_t pairs(const cfx_tensor *self)
{
    int64_t n = self->ndim ? self->sizes[0] : 1;
    return n > 1 ? n * (n - 1) / 2 : 0;
}

cfx_tensor *cfx_meta__pdist_forward(cfx_tensor *self, double p)
{
    (void)p;
    if (!cfx_tensor_is_contiguous(self)) {
        cfx_error_set(CFX_ERR, PDIST, "_pdist_forward requires contiguous input");
        return NULL;
    }
    int64_t n = self->ndim ? self->sizes[0] : 1, c = n * (n - 1) / 2; /* meta__pdist_forward's formula */
    if (c < 0) {
        cfx_error_set(CFX_ERR, PDIST, "Trying to create tensor with negative dimension %lld: [%lld]", (long long)c,
                      (long long)c);
        return NULL;
    }
    return cfx_tensor_new(&c, 1, (cfx_dtype)self->dtype, self->device);
}

cfx_tensor *cfx_cpu__pdist_forward(cfx_tensor *self, double p)
{
    if (!cfx_tensor_is_contiguous(self)) {
        cfx_error_set(CFX_ERR, PDIST, "_pdist_forward requires contiguous input");
        return NULL;
    }
    int64_t c = pairs(self), n = self->ndim ? self->sizes[0] : 1;
    if (c && self->ndim < 2) { /* self.size(1) */
        cfx_error_set(CFX_ERR, PDIST, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
        return NULL;
    }
    if (c && !cfx_dtype_is_floating((cfx_dtype)self->dtype)) {
        cfx_kernel_not_implemented(PDIST, "pdist", (cfx_dtype)self->dtype);
        return NULL;
    }
    int64_t m = c ? self->sizes[1] : 0, k = 0; /* the kernel reads n rows of size(1) from the data */
    if (c && m && cfx_tensor_numel(self) < n * m) {
        /* an input of more than two dims, empty past dim 1 ([2, 1, 0]): 2.13's CPU kernel reads
         * n * size(1) elements of it anyway and crashes (SIGSEGV); cfx refuses (found by
         * fuzz_op_call) */
        cfx_error_set(CFX_ERR, PDIST, "_pdist_forward: an input of %d dims with %lld elements cannot hold "
                      "%lld rows of size(1) = %lld (PyTorch 2.13 reads past its end)", (int)self->ndim,
                      (long long)cfx_tensor_numel(self), (long long)n, (long long)m);
        return NULL;
    }
    cfx_tensor *out = cfx_tensor_new(&c, 1, (cfx_dtype)self->dtype, self->device);
    if (!out || !c)
        return out;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++)
            cfx_nn_set(out, k++, m ? row_dist(self, i * m, 1, self, j * m, 1, m, p) : 0.0);
    return out;
}

/* cdist's matrix-product Euclidean route: cdist_impl (Distance.cpp) as cdist reaches it, the
 * inputs non-empty. Its checks first (C++'s texts: they run on meta tensors too), then both
 * inputs are expanded to the broadcast batch, made contiguous (a clone only when needed) and
 * viewed as [batch product, rows, columns], every call through the dispatcher, so make_fx
 * records them even when unused: with one batch element _euclidean_dist takes the original
 * inputs, as ATen does. The result is viewed as [*batch, r1, r2]. */
static cfx_tensor *cdist_mm(cfx_tensor *x1, cfx_tensor *x2)
{
    const char *op = "aten::cdist";
    cfx_tensor *xs[2] = {x1, x2};
    for (int i = 0; i < 2; i++)
        if (!cfx_dtype_is_floating((cfx_dtype)xs[i]->dtype)) {
            cfx_error_set(CFX_ERR, op, "cdist only supports floating-point dtypes, X%d got: %s", i + 1,
                          cfx_dtype_scalar_name((cfx_dtype)xs[i]->dtype));
            return NULL;
        }
    if (x1->device.type != x2->device.type) {
        cfx_error_set(CFX_ERR, op, "X1 and X2 must have the same device type. X1: %s X2: %s",
                      cfx_device_type_name((cfx_device_type)x1->device.type),
                      cfx_device_type_name((cfx_device_type)x2->device.type));
        return NULL;
    }
    int n1 = x1->ndim - 2, n2 = x2->ndim - 2, nb = 0;
    int64_t batch[CFX_MAX_DIMS], size[CFX_MAX_DIMS], flat[3];
    if (!cfx_geom_broadcast(x1->sizes, n1, x2->sizes, n2, batch, &nb, op))
        return NULL;
    int64_t product = cfx_geom_numel(batch, nb), r1 = x1->sizes[n1], r2 = x2->sizes[n2];
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *expanded[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        memcpy(size, batch, (size_t)nb * sizeof *size);
        size[nb] = xs[i]->sizes[xs[i]->ndim - 2];
        size[nb + 1] = xs[i]->sizes[xs[i]->ndim - 1];
        flat[0] = product, flat[1] = size[nb], flat[2] = size[nb + 1];
        cfx_tensor *e = cfx_op_expand(NULL, xs[i], (cfx_int_list){size, nb + 2}, false);
        cfx_tensor *c = e ? cfx_op_contiguous(NULL, e, CFX_CONTIGUOUS_FORMAT) : NULL;
        expanded[i] = c ? cfx_op_view(NULL, c, (cfx_int_list){flat, 3}) : NULL;
        if (!expanded[i])
            return cfx_composite_return(s, NULL);
    }
    cfx_tensor *d = product == 1 ? cfx_op__euclidean_dist(NULL, x1, x2)
                                 : cfx_op__euclidean_dist(NULL, expanded[0], expanded[1]);
    memcpy(size, batch, (size_t)nb * sizeof *size);
    size[nb] = r1;
    size[nb + 1] = r2;
    return cfx_composite_return(s, d ? cfx_op_view(NULL, d, (cfx_int_list){size, nb + 2}) : NULL);
}

/* cdist (CompositeImplicitAutograd), as 2.13's: its checks, then _cdist_forward(x1, x2, p,
 * compute_mode) for an empty input or off the matrix-product route; that route (p = 2 and
 * compute_mode 1 "use_mm_for_euclid_dist", or the default (None/0) with more than 25 rows in
 * either input) is cdist_mm's _euclidean_dist. */
cfx_tensor *cfx_composite_cdist(cfx_tensor *x1, cfx_tensor *x2, double p, cfx_value compute_mode)
{
    const char *op = "aten::cdist";
    for (int i = 0; i < 2; i++) {
        const cfx_tensor *x = i ? x2 : x1;
        if (x->ndim < 2) {
            cfx_error_set(CFX_ERR, op, "cdist only supports at least 2D tensors, X%d got: %dD", i + 1, x->ndim);
            return NULL;
        }
    }
    if (x1->sizes[x1->ndim - 1] != x2->sizes[x2->ndim - 1]) {
        cfx_error_set(CFX_ERR, op, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                      (long long)x1->sizes[x1->ndim - 1], (long long)x2->sizes[x2->ndim - 1]);
        return NULL;
    }
    int64_t mode = compute_mode.kind == CFX_V_INT ? compute_mode.u.i : 0;
    int64_t r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
    if (cfx_tensor_numel(x1) && cfx_tensor_numel(x2) && p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25))))
        return cdist_mm(x1, x2);
    return cfx_op__cdist_forward(NULL, x1, x2, p, compute_mode);
}

/* pdist (CompositeImplicitAutograd): its checks, then _pdist_forward(self.contiguous(), p). */
cfx_tensor *cfx_composite_pdist(cfx_tensor *self, double p)
{
    const char *op = "aten::pdist";
    if (self->ndim != 2) {
        cfx_error_set(CFX_ERR, op, "pdist only supports 2D tensors, got: %dD", self->ndim);
        return NULL;
    }
    if (!cfx_dtype_is_floating((cfx_dtype)self->dtype)) {
        cfx_error_set(CFX_ERR, op, "pdist only supports floating-point dtypes");
        return NULL;
    }
    if (!(p >= 0)) {
        cfx_error_set(CFX_ERR, op, "pdist only supports non-negative p values");
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *x = cfx_op_contiguous(NULL, self, CFX_CONTIGUOUS_FORMAT); /* a clone node only when needed */
    return cfx_composite_return(s, x ? cfx_op__pdist_forward(NULL, x, p) : NULL);
}
