/* factory.c - empty.memory_format, empty_strided, empty_like and clone.
 *
 * The two factories have no tensor argument, so a call's key set comes only from the thread's
 * included keys, where BackendSelect always is: their BackendSelect kernel (as in PyTorch's
 * RegisterBackendSelect.cpp) reads the device argument (default CPU), and redispatches with
 * just that backend's key to the CPU or Meta kernel. empty_like and clone are
 * CompositeExplicitAutograd, one kernel for every device, as in PyTorch; but 2.13 gives
 * empty_like a Meta kernel of its own, the Python reference torch._refs.empty_like.
 *
 * Layout rules: empty honours memory_format (channels_last needs 4 dims, preserve is
 * refused); empty_like and clone preserve the input's strides when it is non-overlapping and
 * dense and otherwise derive dense strides in the same dimension order, while empty_like's
 * reference lays a preserved format out by prims' permutation of the input (dense strides
 * are not kept as they are: a size-1 dim gets the stride of what it spans); Meta's
 * empty_strided repairs negative strides the way the resize path does instead of refusing
 * them. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/kernels/factory.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/kernels/prims.h"

/* What an allocation with pin_memory=True says on a machine without an accelerator. */
static const char pinned_error[] =
    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available on "
    "this system.";

typedef cfx_factory_options options;

/* TensorOptions from the optional factory arguments. */
static bool parse_options(const char *op, cfx_value dtype, cfx_value layout, cfx_value device,
                          cfx_value pin_memory, cfx_value memory_format, options *o)
{
    int64_t v;
    *o = (options){.dtype = CFX_FLOAT32, .device = cfx_device_make(CFX_DEVICE_CPU)};
    if (cfx_geom_opt_int(dtype, &v)) {
        if (!cfx_dtype_valid(v)) {
            cfx_error_set(CFX_ERR, op, "%s: unsupported dtype code %lld", op, (long long)v);
            return false;
        }
        o->dtype = (cfx_dtype)v;
        o->has_dtype = true;
    }
    if (cfx_geom_opt_int(layout, &v) && v != CFX_LAYOUT_STRIDED) {
        cfx_error_set(CFX_ERR, op, "%s: only the strided layout is supported, got layout code %lld", op,
                      (long long)v);
        return false;
    }
    if (!cfx_value_is_none(device)) {
        if (!cfx_geom_opt_device(device, &o->device)) {
            cfx_error_set(CFX_ERR, op, "%s: expected a device", op);
            return false;
        }
        o->has_device = true;
    }
    o->pinned = pin_memory.kind == CFX_V_BOOL && pin_memory.u.b;
    if (cfx_geom_opt_int(memory_format, &v)) {
        if (v < CFX_CONTIGUOUS_FORMAT || v > CFX_CHANNELS_LAST_3D) {
            cfx_error_set(CFX_ERR, op, "%s: invalid memory format code %lld", op, (long long)v);
            return false;
        }
        o->memory_format = (cfx_memory_format)v;
        o->has_memory_format = true;
    }
    return true;
}

/* check_size_nonnegative, with the op recorded */
static bool sizes_ok(const char *op, cfx_int_list size)
{
    if (size.len < 0 || size.len > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, op, "%s: expected a size list of at most %d dimensions", op, CFX_MAX_DIMS);
        return false;
    }
    for (int64_t i = 0; i < size.len; i++)
        if (size.data[i] < 0) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_buf_printf(&b, "Trying to create tensor with negative dimension %lld: ", (long long)size.data[i]);
            cfx_geom_put_dims(&b, size.data, (int)size.len);
            char *msg = cfx_buf_take(&b);
            cfx_error_set_text(CFX_ERR, op, msg ? msg : "negative dimension");
            cfx_free(msg);
            return false;
        }
    return true;
}

static cfx_tensor *empty(cfx_device_type dev, cfx_int_list size, cfx_value dtype, cfx_value layout,
                         cfx_value device, cfx_value pin_memory, cfx_value memory_format)
{
    const char *op = "aten::empty.memory_format";
    options o;
    if (!parse_options(op, dtype, layout, device, pin_memory, memory_format, &o))
        return NULL;
    if (dev == CFX_DEVICE_CPU && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, pinned_error);
        return NULL;
    }
    if (!sizes_ok(op, size))
        return NULL;
    int n = (int)size.len;
    int64_t strides[CFX_MAX_DIMS];
    if (!cfx_geom_memory_format_strides(size.data, n, o.has_memory_format ? o.memory_format : CFX_CONTIGUOUS_FORMAT,
                                        strides, op))
        return NULL;
    return cfx_tensor_new_strided(size.data, strides, n, o.dtype, cfx_device_make(dev));
}

cfx_tensor *cfx_cpu_empty_memory_format(cfx_int_list size, cfx_value dtype, cfx_value layout,
                                        cfx_value device, cfx_value pin_memory, cfx_value memory_format)
{
    return empty(CFX_DEVICE_CPU, size, dtype, layout, device, pin_memory, memory_format);
}

cfx_tensor *cfx_meta_empty_memory_format(cfx_int_list size, cfx_value dtype, cfx_value layout,
                                         cfx_value device, cfx_value pin_memory, cfx_value memory_format)
{
    return empty(CFX_DEVICE_META, size, dtype, layout, device, pin_memory, memory_format);
}

/* computeStorageNbytes' overflow test (CPU only: the meta path skips it). */
static bool storage_overflows(const int64_t *sizes, const int64_t *strides, int n, size_t itemsize)
{
    uint64_t nbytes;
    return !cfx_geom_storage_nbytes(sizes, strides, n, itemsize, &nbytes);
}

static cfx_tensor *empty_strided(cfx_device_type dev, cfx_int_list size, cfx_int_list stride, cfx_value dtype,
                                 cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    const char *op = "aten::empty_strided";
    options o;
    if (!parse_options(op, dtype, layout, device, pin_memory, cfx_none(), &o))
        return NULL;
    if (dev == CFX_DEVICE_CPU && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, pinned_error);
        return NULL;
    }
    if (!sizes_ok(op, size))
        return NULL;
    if (stride.len != size.len) {
        cfx_error_set(CFX_ERR, op, "dimensionality of sizes (%lld) must match dimensionality of strides (%lld)",
                      (long long)size.len, (long long)(stride.len < 0 ? 0 : stride.len));
        return NULL;
    }
    int n = (int)size.len;
    if (dev == CFX_DEVICE_CPU && storage_overflows(size.data, stride.data, n, cfx_dtype_size(o.dtype))) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Storage size calculation overflowed with sizes=");
        cfx_geom_put_dims(&b, size.data, n);
        cfx_buf_puts(&b, " and strides=");
        cfx_geom_put_dims(&b, stride.data, n);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, op, msg ? msg : "Storage size calculation overflowed");
        cfx_free(msg);
        return NULL;
    }
    /* TensorImpl::set_sizes_and_strides: a negative stride becomes the contiguous one (the
     * storage size above was computed from the strides as given, as in PyTorch) */
    int64_t strides[CFX_MAX_DIMS];
    memcpy(strides, stride.data, (size_t)n * sizeof(int64_t));
    for (int d = n - 1; d >= 0; d--)
        if (strides[d] < 0)
            strides[d] = d == n - 1 ? 1 : (size.data[d + 1] > 1 ? size.data[d + 1] : 1) * strides[d + 1];
    /* a CPU storage size overflow is reported by tensor.c in PyTorch's words */
    return cfx_tensor_new_strided(size.data, strides, n, o.dtype, cfx_device_make(dev));
}

cfx_tensor *cfx_cpu_empty_strided(cfx_int_list size, cfx_int_list stride, cfx_value dtype, cfx_value layout,
                                  cfx_value device, cfx_value pin_memory)
{
    return empty_strided(CFX_DEVICE_CPU, size, stride, dtype, layout, device, pin_memory);
}

cfx_tensor *cfx_meta_empty_strided(cfx_int_list size, cfx_int_list stride, cfx_value dtype, cfx_value layout,
                                   cfx_value device, cfx_value pin_memory)
{
    return empty_strided(CFX_DEVICE_META, size, stride, dtype, layout, device, pin_memory);
}

/* BackendSelect: computeDispatchKey(dtype, layout, device) -> the backend's key alone. */
static cfx_keyset backend_of(cfx_value device)
{
    cfx_device d = cfx_device_make(CFX_DEVICE_CPU);
    cfx_geom_opt_device(device, &d);
    return cfx_keyset_of(d.type == CFX_DEVICE_META ? CFX_KEY_Meta : CFX_KEY_CPU);
}

cfx_tensor *cfx_backend_select_empty_memory_format(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                                                      cfx_value pin_memory, cfx_value memory_format)
{
    return cfx_op_empty_memory_format_redispatch(backend_of(device), size, dtype, layout, device, pin_memory,
                                                 memory_format);
}

cfx_tensor *cfx_backend_select_empty_strided(cfx_int_list size, cfx_int_list stride, cfx_value dtype,
                                              cfx_value layout, cfx_value device, cfx_value pin_memory)
{
    return cfx_op_empty_strided_redispatch(backend_of(device), size, stride, dtype, layout, device, pin_memory);
}

/* The strides of empty_like(self, memory_format) / clone's output. */
static bool like_strides(const char *op, const cfx_tensor *self, bool has_mf, cfx_memory_format mf,
                         int64_t *out)
{
    if (!has_mf || mf == CFX_PRESERVE_FORMAT) {
        cfx_geom_preserve_strides(self->sizes, self->strides, self->ndim, out);
        return true;
    }
    return cfx_geom_memory_format_strides(self->sizes, self->ndim, mf, out, op);
}

cfx_tensor *cfx_kernel_empty_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                  cfx_value pin_memory, cfx_value memory_format)
{
    const char *op = "aten::empty_like";
    options o;
    if (!parse_options(op, dtype, layout, device, pin_memory, memory_format, &o))
        return NULL;
    cfx_dtype dt = o.has_dtype ? o.dtype : (cfx_dtype)self->dtype;
    cfx_device_type dev = (cfx_device_type)(o.has_device ? o.device : self->device).type;
    if (dev == CFX_DEVICE_CPU && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, pinned_error);
        return NULL;
    }
    int64_t strides[CFX_MAX_DIMS];
    if (!like_strides(op, self, o.has_memory_format, o.memory_format, strides))
        return NULL;
    return cfx_tensor_new_strided(self->sizes, strides, self->ndim, dt, cfx_device_make(dev));
}

/* torch._refs.empty_like: a memory format other than preserve is torch.empty's; preserve is
 * torch.empty_permuted in the order compute_elementwise_output_logical_to_physical_perm gives
 * the input. Both are factories on the requested device (a CPU result from a meta input). */
cfx_tensor *cfx_meta_empty_like(cfx_tensor *self, cfx_value dtype, cfx_value layout, cfx_value device,
                                cfx_value pin_memory, cfx_value memory_format)
{
    const char *op = "aten::empty_like";
    options o;
    if (!parse_options(op, dtype, layout, device, pin_memory, memory_format, &o))
        return NULL;
    cfx_dtype dt = o.has_dtype ? o.dtype : (cfx_dtype)self->dtype;
    cfx_device dev = cfx_device_make((cfx_device_type)(o.has_device ? o.device : self->device).type);
    if (dev.type == CFX_DEVICE_CPU && o.pinned) {
        cfx_error_set_text(CFX_ERR, op, pinned_error);
        return NULL;
    }
    cfx_tmeta out;
    if (o.has_memory_format && o.memory_format != CFX_PRESERVE_FORMAT) {
        if (!cfx_geom_memory_format_strides(self->sizes, self->ndim, o.memory_format, out.own_strides, op))
            return NULL;
        out.strides = out.own_strides;
    } else {
        cfx_tmeta a;
        cfx_tmeta_of(&a, self);
        const cfx_tmeta *just_a[1] = {&a};
        int buf[CFX_MAX_DIMS];
        cfx_prims_empty_permuted(&out, self->sizes, self->ndim, cfx_prims_l2p_perm(just_a, 1, buf), dt, dev);
    }
    return cfx_tensor_new_strided(self->sizes, out.strides, self->ndim, dt, dev);
}

cfx_tensor *cfx_kernel_clone(cfx_tensor *self, cfx_value memory_format)
{
    const char *op = "aten::clone";
    int64_t v;
    bool has_mf = cfx_geom_opt_int(memory_format, &v);
    if (has_mf && (v < CFX_CONTIGUOUS_FORMAT || v > CFX_CHANNELS_LAST_3D)) {
        cfx_error_set(CFX_ERR, op, "%s: invalid memory format code %lld", op, (long long)v);
        return NULL;
    }
    int64_t strides[CFX_MAX_DIMS];
    if (!like_strides(op, self, has_mf, (cfx_memory_format)v, strides))
        return NULL;
    cfx_tensor *out = cfx_tensor_new_strided(self->sizes, strides, self->ndim, (cfx_dtype)self->dtype,
                                             cfx_device_make((cfx_device_type)self->device.type));
    if (out && self->device.type == CFX_DEVICE_CPU)
        cfx_cpu_copy(out, self);
    return out;
}

/* ---- shared with the other factories (factory.h) ---- */

bool cfx_factory_parse(const char *op, cfx_value dtype, cfx_value layout, cfx_value device, cfx_value pin_memory,
                       cfx_value memory_format, cfx_factory_options *o)
{
    return parse_options(op, dtype, layout, device, pin_memory, memory_format, o);
}

bool cfx_factory_sizes_ok(const char *op, cfx_int_list size) { return sizes_ok(op, size); }

cfx_keyset cfx_factory_backend(cfx_value device) { return backend_of(device); }

const char *cfx_factory_pinned_error(void) { return pinned_error; }

bool cfx_factory_like_strides(const char *op, const cfx_tensor *self, bool has_mf, cfx_memory_format mf,
                              int64_t *out)
{
    return like_strides(op, self, has_mf, mf, out);
}
