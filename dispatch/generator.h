/* generator.h - random number generators that reproduce PyTorch's CPU streams.
 *
 * A cfx_generator is PyTorch's CPUGeneratorImpl: a 32-bit Mersenne Twister (mt19937) with
 * PyTorch's seeding, plus the cached second Box-Muller sample of its normal distribution. The
 * rand, randn, rand_like, randn_like and randint kernels draw from the default generator
 * exactly as ATen's CPU kernels do, so after `cfx_manual_seed(s)` the values of `rand(n)`,
 * `randn(n)` and `randint(lo, hi, n)` are bit-identical to `torch.manual_seed(s)` followed by
 * the same calls in PyTorch 2.13 (float32, float64, int64), for any size. (randn of >= 16
 * contiguous float32 elements follows the scalar normal_fill, which PyTorch runs on AVX512 and
 * non-x86 CPUs; its AVX2-only build uses a vectorised log/sin/cos instead.)
 *
 * The `.generator` overloads (rand.generator, randn.generator, randint.generator,
 * randint.low_generator, randperm.generator, rand_like.generator, randn_like.generator) and
 * bernoulli_.float take a generator as a `Generator?` argument, cfx_generator_value(g) (None:
 * the default one), so a cfx_generator seeded with N draws what torch.Generator().manual_seed(N)
 * draws. make_fx records a generator that is no graph input as 2.13 does: a get_attr of the
 * graph-module attribute `_opaque_obj0`, which holds a reference to the generator itself.
 *
 * Generators are thread-safe (a mutex per generator, as c10's). */
#ifndef CFX_GENERATOR_H
#define CFX_GENERATOR_H

#include <stdint.h>

#include "dispatch/export.h"

typedef struct cfx_generator cfx_generator;

/* torch.Generator(): seeded with PyTorch's default seed 67280421310721. NULL when out of memory. */
CFX_API cfx_generator *cfx_generator_new(void);
/* Generators are reference counted: a graph module that interns one as `_opaque_obj0` holds a
 * reference, so the generator lives as long as the last holder. cfx_generator_free drops the
 * caller's reference (the one cfx_generator_new gave); both are no-ops on the default
 * generator and NULL. */
CFX_API cfx_generator *cfx_generator_retain(cfx_generator *g);
CFX_API void cfx_generator_free(cfx_generator *g);
/* Generator.manual_seed(seed): restarts the stream (and drops a cached normal sample). */
CFX_API void cfx_generator_manual_seed(cfx_generator *g, uint64_t seed);
/* Generator.seed(): seeds from the OS's entropy (53 bits, as c10) and returns the seed. */
CFX_API uint64_t cfx_generator_seed(cfx_generator *g);
/* Generator.initial_seed() */
CFX_API uint64_t cfx_generator_initial_seed(cfx_generator *g);
/* The process-wide default CPU generator (torch.default_generator). Unlike PyTorch's, which
 * is seeded nondeterministically at start-up, it starts from the default seed, so that a
 * program without cfx_manual_seed is reproducible too. */
CFX_API cfx_generator *cfx_default_generator(void);
/* torch.manual_seed(seed): seeds the default generator. */
CFX_API void cfx_manual_seed(uint64_t seed);

/* The next raw 32-bit draw (CPUGeneratorImpl::random), for tests and custom kernels. */
CFX_API uint32_t cfx_generator_random(cfx_generator *g);

#endif
