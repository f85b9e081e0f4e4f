/* norm.c - native_layer_norm's Meta kernel (torch._refs.native_layer_norm) and its
 * CompositeExplicitAutograd registration.
 *
 * PyTorch 2.13's Meta kernel is the Python reference, a chain of other references:
 *
 *   the shape checks, in Python's words (torch.Size reprs, "expected input with shape [3]");
 *   input, weight and bias made contiguous (kept when they are, else cloned contiguous);
 *   _normalize: var_mean(input, the normalized dims, keepdim) = var then mean, each a prims
 *       reduction re-inserting the dims through broadcast_in_dim (an integral input fails in
 *       mean(): "Got: torch.int64", even when empty); rstd = rsqrt(var + eps);
 *       out = (input - mean) * rstd, every step an elementwise reference;
 *   out * weight, out + bias (promoting: a float64 weight makes the product float64), then
 *       out converted back to the input's dtype; mean and rstd stay as computed.
 *
 * It is replayed here on metadata with the helpers of prims.h, so the layouts are the
 * references' (a transposed input gives a contiguous output, an empty one [M..., 1...] stats)
 * and a weight on another device fails in the product's device check. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/prims.h"

static const char OP[] = "aten::native_layer_norm";

static bool same_shape(const int64_t *a, int na, const int64_t *b, int nb)
{
    return na == nb && !memcmp(a, b, (size_t)na * sizeof *a);
}

static bool fail(cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    cfx_error_set_text(CFX_ERR, OP, msg ? msg : "native_layer_norm: bad arguments");
    cfx_free(msg);
    return false;
}

/* The reference's checks, in its order and words. */
static bool check_shapes(const cfx_tensor *input, const int64_t *ns, int nn, const cfx_tensor *weight,
                         const cfx_tensor *bias)
{
    cfx_buf b;
    cfx_buf_init(&b);
    if (nn < 1) {
        cfx_buf_puts(&b, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                         "element, but got normalized_shape = ");
        cfx_geom_put_dims(&b, ns, nn);
        return fail(&b);
    }
    const cfx_tensor *params[2] = {weight, bias};
    const char *names[2] = {"weight", "bias"};
    for (int k = 0; k < 2; k++) {
        const cfx_tensor *p = params[k];
        if (!p || same_shape(p->sizes, p->ndim, ns, nn))
            continue;
        cfx_buf_printf(&b, "Expected %s to be of same shape as normalized_shape, but got %s of shape ", names[k],
                       names[k]);
        cfx_prims_put_size(&b, p->sizes, p->ndim);
        cfx_buf_puts(&b, " and normalized_shape = ");
        cfx_geom_put_dims(&b, ns, nn);
        return fail(&b);
    }
    if (input->ndim < nn || !same_shape(input->sizes + input->ndim - nn, nn, ns, nn)) {
        cfx_buf_puts(&b, "Given normalized_shape=");
        cfx_geom_put_dims(&b, ns, nn);
        cfx_buf_puts(&b, ", expected input with shape ");
        cfx_geom_put_dims(&b, ns, nn);
        cfx_buf_puts(&b, ", but got input of size ");
        cfx_prims_put_size(&b, input->sizes, input->ndim);
        return fail(&b);
    }
    cfx_buf_free(&b);
    return true;
}

/* out = prim(a, b) through an elementwise binary reference without alpha (sub, mul, add):
 * promotion, broadcasting, then the prim (whose device check is where a parameter on another
 * device fails). */
static bool binary(cfx_tmeta *out, const cfx_tmeta *a_in, const cfx_tmeta *b_in)
{
    cfx_tmeta a, b; /* the operands as the reference sees them: out may be a_in */
    cfx_tmeta_copy(&a, a_in);
    cfx_tmeta_copy(&b, b_in);
    cfx_tmeta *ab[2] = {&a, &b};
    cfx_dtype compute, result;
    cfx_prims_elementwise_dtypes((const cfx_tmeta *const *)ab, 2, NULL, 0, CFX_PROMOTE_DEFAULT, &compute, &result);
    cfx_prims_to(&a, compute);
    cfx_prims_to(&b, compute);
    if (!cfx_prims_maybe_broadcast(OP, ab, 2) ||
        !cfx_prims_elementwise(OP, out, (const cfx_tmeta *const *)ab, 2, 0, CFX_PROMOTE_DEFAULT))
        return false;
    cfx_prims_to(out, result);
    return true;
}

/* out = prim(a) (a unary reference, or a binary one with a Python number: a + eps, a / n);
 * a is floating here, so no promotion moves it. */
static void unary(cfx_tmeta *out, const cfx_tmeta *a)
{
    const cfx_tmeta *just_a[1] = {a};
    cfx_prims_elementwise(OP, out, just_a, 1, 0, CFX_PROMOTE_DEFAULT); /* one tensor: no device to mismatch */
}

cfx_native_layer_norm_result cfx_meta_native_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape,
                                                        cfx_tensor *weight, cfx_tensor *bias, double eps)
{
    (void)eps;
    cfx_native_layer_norm_result none = {{NULL, NULL, NULL}};
    int nn = normalized_shape.len < 0 ? 0 : (int)normalized_shape.len;
    if (!check_shapes(input, normalized_shape.data, nn, weight, bias))
        return none;
    cfx_tmeta x, w, b;
    cfx_tmeta_of(&x, input);
    cfx_prims_contiguous(&x);
    if (weight) {
        cfx_tmeta_of(&w, weight);
        cfx_prims_contiguous(&w);
    }
    if (bias) {
        cfx_tmeta_of(&b, bias);
        cfx_prims_contiguous(&b);
    }

    /* _normalize; the computation dtype is the input's */
    bool reduced[CFX_MAX_DIMS];
    for (int d = 0; d < x.ndim; d++)
        reduced[d] = d >= x.ndim - nn;
    cfx_tmeta var, sum, mean, t, rstd, out;
    cfx_prims_reduction(&var, &x, reduced, true);
    cfx_prims_reduction(&sum, &x, reduced, true);
    if (!cfx_dtype_is_floating(x.dtype)) {
        cfx_error_set(CFX_ERR, OP,
                      "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                      "dtype. Got: %s",
                      cfx_dtype_torch_name(x.dtype));
        return none;
    }
    unary(&mean, &sum); /* true_divide(sum, nelem) */
    unary(&t, &var);    /* var + eps */
    unary(&rstd, &t);   /* rsqrt */
    if (!binary(&t, &x, &mean) || !binary(&out, &t, &rstd))
        return none;
    if (weight && !binary(&out, &out, &w))
        return none;
    if (bias && !binary(&out, &out, &b))
        return none;
    cfx_prims_to(&out, x.dtype);
    /* mean and rstd are converted to the input's dtype on CPU only: they have it already */

    cfx_tensor *o = cfx_tmeta_new_tensor(&out);
    cfx_tensor *m = o ? cfx_tmeta_new_tensor(&mean) : NULL;
    cfx_tensor *r = m ? cfx_tmeta_new_tensor(&rstd) : NULL;
    if (!r) {
        cfx_kernel_discard(o);
        cfx_kernel_discard(m);
        return none;
    }
    return (cfx_native_layer_norm_result){{o, m, r}};
}

/* PyTorch's CompositeExplicitAutograd kernel (math_native_layer_norm) serves the backends
 * without a kernel of their own; cfx's two backends both have one, so the dispatcher never
 * picks it, and a direct call gets the kernel of the input's device. */
cfx_native_layer_norm_result cfx_kernel_native_layer_norm(cfx_tensor *input, cfx_int_list normalized_shape,
                                                          cfx_tensor *weight, cfx_tensor *bias, double eps)
{
    if (input->device.type == CFX_DEVICE_CPU)
        return cfx_cpu_native_layer_norm(input, normalized_shape, weight, bias, eps);
    return cfx_meta_native_layer_norm(input, normalized_shape, weight, bias, eps);
}
