/* dropout.c - dropout in training mode as 2.13 decomposes it on CPU, feature_dropout, and
 * bernoulli_.float, the random op they record.
 *
 * aten::dropout and aten::feature_dropout are CompositeImplicitAutograd; off CUDA their C++
 * (_dropout_impl) is: the input itself when p == 0, not training or empty; for p == 1 the
 * product with zeros({}) (a 0-dim tensor of the input's options, so make_fx records
 * zeros.default([], dtype, layout, device)); otherwise noise = empty_like(input) (for feature
 * dropout new_empty(input, [N, C, 1, ...]): one draw per channel), noise.bernoulli_(1 - p),
 * noise.div_(1 - p), and input * noise. So a traced training-mode dropout is the four nodes
 * empty_like, bernoulli_.float, div_.Scalar, mul.Tensor, as 2.13's make_fx records it.
 *
 * bernoulli_ (CPU) draws from its generator (the default one for None) as ATen's default kernel
 * does (a 53-bit uniform per element, kept when below p): PyTorch runs that kernel on non-Intel CPUs; on
 * Intel ones it uses MKL's stream instead, so the masks then differ while their law does not. */
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/generator_internal.h"
#include "dispatch/kernels/composite.h"
#include "dispatch/kernels/kernels.h"

cfx_tensor *cfx_cpu_bernoulli__float(cfx_tensor *self, double p, cfx_value generator)
{
    if (!(p >= 0 && p <= 1)) {
        cfx_error_set(CFX_ERR, "aten::bernoulli_.float", "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
        return NULL;
    }
    cfx_generator_fill_bernoulli(cfx_generator_or_default(generator), self, p);
    cfx_tensor_bump_version(self);
    return self;
}

/* meta_bernoulli_: self, unchecked */
cfx_tensor *cfx_meta_bernoulli__float(cfx_tensor *self, double p, cfx_value generator)
{
    (void)p;
    (void)generator; /* a meta tensor draws nothing: the generator is not advanced */
    cfx_tensor_bump_version(self);
    return self;
}

/* _dropout_impl<feature_dropout, alpha_dropout=false, inplace=false> */
static cfx_tensor *dropout_impl(const char *op, cfx_tensor *input, double p, bool train, bool feature)
{
    if (!(p >= 0 && p <= 1)) {
        cfx_error_set(CFX_ERR, op, "dropout probability has to be between 0 and 1, but got %g", p);
        return NULL;
    }
    if (p == 0 || !train || cfx_tensor_numel(input) == 0)
        return cfx_autorelease(cfx_tensor_retain(input)); /* the input itself, a new reference */
    if (feature && input->ndim < 2) {
        cfx_error_set(CFX_ERR, op, "Feature dropout requires at least 2 dimensions in the input");
        return NULL;
    }
    cfx_scope s = cfx_scope_begin();
    cfx_value dtype = cfx_dtype_value((cfx_dtype)input->dtype), layout = cfx_layout_value(CFX_LAYOUT_STRIDED),
              device = cfx_device_value(cfx_tensor_fake_device(input));
    if (p == 1) {
        cfx_tensor *zeros = cfx_op_zeros(NULL, CFX_INTS_EMPTY, dtype, layout, device, cfx_none());
        return cfx_composite_return(s, zeros ? cfx_op_mul_Tensor(NULL, input, zeros) : NULL);
    }
    cfx_tensor *noise;
    if (feature) { /* make_feature_noise: [N, C, 1, ...] */
        int64_t sizes[CFX_MAX_DIMS];
        sizes[0] = input->sizes[0];
        sizes[1] = input->sizes[1];
        for (int d = 2; d < input->ndim; d++)
            sizes[d] = 1;
        noise = cfx_op_new_empty(NULL, input, (cfx_int_list){sizes, input->ndim}, cfx_none(), cfx_none(), cfx_none(),
                                 cfx_none());
    } else {
        noise = cfx_op_empty_like(NULL, input, cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none());
    }
    /* noise.bernoulli_(1 - p); noise.div_(1 - p): the C++ keeps using noise, not the results */
    bool ok = noise && cfx_op_bernoulli__float(NULL, noise, 1 - p, cfx_none()) &&
              cfx_op_div__Scalar(NULL, noise, cfx_double(1 - p));
    return cfx_composite_return(s, ok ? cfx_op_mul_Tensor(NULL, input, noise) : NULL);
}

cfx_tensor *cfx_composite_dropout(cfx_tensor *input, double p, bool train)
{
    return dropout_impl("aten::dropout", input, p, train, false);
}

cfx_tensor *cfx_composite_feature_dropout(cfx_tensor *input, double p, bool train)
{
    return dropout_impl("aten::feature_dropout", input, p, train, true);
}
