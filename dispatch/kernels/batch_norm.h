/* batch_norm.h - batch norm's training-mode CPU kernel (cpu/batch_norm.c), which
 * native_batch_norm's CPU kernel (cpu/nn.c) calls when training is true. Library-internal. */
#ifndef CFX_KERNELS_BATCH_NORM_H
#define CFX_KERNELS_BATCH_NORM_H

#include "dispatch/kernels/kernels.h"

/* Batch statistics per channel, output, save_mean / save_invstd [C], and the running
 * statistics (either may be NULL) updated in place with momentum. */
cfx_native_batch_norm_result cfx_cpu_batch_norm_train(const char *op, cfx_tensor *input, cfx_tensor *weight,
                                                      cfx_tensor *bias, cfx_tensor *running_mean,
                                                      cfx_tensor *running_var, double momentum, double eps);

#endif
