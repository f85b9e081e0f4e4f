/* factory.h - what the factories share (factory.c): TensorOptions from the optional factory
 * arguments, the size checks, the BackendSelect routing and empty_like's layout rule.
 * Library-internal. */
#ifndef CFX_KERNELS_FACTORY_H
#define CFX_KERNELS_FACTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/boxing.h"
#include "dispatch/keys.h"

typedef struct cfx_factory_options {
    cfx_dtype dtype; /* float32 (the default dtype) unless has_dtype */
    bool has_dtype, has_device, pinned, has_memory_format;
    cfx_device device; /* CPU unless has_device */
    cfx_memory_format memory_format;
} cfx_factory_options;

/* The options, with errors for an invalid dtype, layout, device or memory format. */
bool cfx_factory_parse(const char *op, cfx_value dtype, cfx_value layout, cfx_value device, cfx_value pin_memory,
                       cfx_value memory_format, cfx_factory_options *o);
/* check_size_nonnegative: "Trying to create tensor with negative dimension -1: [-1, 2]" */
bool cfx_factory_sizes_ok(const char *op, cfx_int_list size);
/* BackendSelect's key set for a factory's device argument (default CPU). */
cfx_keyset cfx_factory_backend(cfx_value device);
/* What pin_memory=True says on a machine without an accelerator. */
const char *cfx_factory_pinned_error(void);
/* empty_like's strides: preserve (no format, or preserve_format) or the format's. */
bool cfx_factory_like_strides(const char *op, const cfx_tensor *self, bool has_mf, cfx_memory_format mf,
                              int64_t *out);

#endif
