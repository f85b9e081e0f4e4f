/* generator_internal.h - the distributions of ATen's CPU random kernels over a cfx_generator,
 * used by the random factories (dispatch/kernels/creation.c). Library-internal. */
#ifndef CFX_GENERATOR_INTERNAL_H
#define CFX_GENERATOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/dtype.h"
#include "dispatch/generator.h"
#include "dispatch/value.h"

/* The generator of a `Generator?` argument: its own, or the default one for None (ATen's
 * get_generator_or_default). The boxing has checked the kind. */
cfx_generator *cfx_generator_or_default(cfx_value v);

/* Each fills n elements of dtype dt at data in storage order (the order ATen's serial kernel
 * visits a fresh dense tensor), holding the generator's lock for the whole fill. */
void cfx_generator_fill_uniform(cfx_generator *g, void *data, int64_t n, cfx_dtype dt, double from, double to);
/* normal_kernel: normal_fill for >= 16 contiguous elements, else normal_distribution<double>. */
void cfx_generator_fill_normal(cfx_generator *g, void *data, int64_t n, cfx_dtype dt, bool contiguous, double mean,
                               double std);
/* bernoulli_(p) on a CPU tensor of any dtype: bernoulli_distribution<double>, a 53-bit uniform
 * draw per element compared with p, in TensorIterator's order (innermost stride first). */
struct cfx_tensor;
void cfx_generator_fill_bernoulli(cfx_generator *g, struct cfx_tensor *self, double p);

/* The engine's draws for samplers that walk a tensor themselves (dispatch/kernels/random.c):
 * the caller holds the generator's lock (cfx_generator_lock) around a whole fill, as ATen's
 * kernels hold generator->mutex_. next32 is random(), next64 random64(); next_uniform_f /
 * next_uniform_d are uniform_real_distribution<float / double>(0, 1); next_normal is
 * normal_distribution<double>(mean, std), sharing the cached Box-Muller sample with randn. */
void cfx_generator_lock(cfx_generator *g);
void cfx_generator_unlock(cfx_generator *g);
uint32_t cfx_generator_next32(cfx_generator *g);
uint64_t cfx_generator_next64(cfx_generator *g);
float cfx_generator_next_uniform_f(cfx_generator *g);
double cfx_generator_next_uniform_d(cfx_generator *g);
double cfx_generator_next_normal(cfx_generator *g, double mean, double std);

#endif
