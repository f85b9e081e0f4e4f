/* generator.c - PyTorch's CPU generator (CPUGeneratorImpl + at::mt19937) and the sampling
 * loops of ATen's CPU distribution kernels, so that seeded streams match PyTorch bit for bit.
 *
 * The engine is the standard 32-bit Mersenne Twister, seeded as at::mt19937 does (state[0] =
 * the seed's low 32 bits, Knuth's multiplier for the rest). A 64-bit draw is two 32-bit ones,
 * the first in the high half. uniform_real takes the low 24 (float) or 53 (double) bits of a
 * 32- or 64-bit draw times 2^-digits. normal_distribution<double> is Box-Muller on two
 * uniform doubles and caches its sine sample in the generator for the next call;
 * normal_fill first fills the whole tensor with uniforms, then transforms each block of 16 in
 * place (8 pairs: u1 = 1 - x[j], u2 = x[j + 8]), redrawing the last 16 when the size is not a
 * multiple of 16. The arithmetic is done in the same types and order as the C++ templates. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/fork_internal.h"
#include "dispatch/generator_internal.h"
#include "dispatch/kernels/loops.h"
#include "dispatch/value.h"

enum { MT_N = 624, MT_M = 397 };
#define DEFAULT_SEED UINT64_C(67280421310721) /* c10::detail::default_rng_seed_val */

struct cfx_generator {
    pthread_mutex_t lock;
    _Atomic int refs; /* the default generator's stays 0: it is never freed */
    uint64_t seed;
    uint32_t state[MT_N];
    int left, next;
    bool has_next_double;
    double next_double;
};

static void seed_locked(cfx_generator *g, uint64_t seed)
{
    g->seed = seed;
    g->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int j = 1; j < MT_N; j++)
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + (uint32_t)j;
    g->left = 1;
    g->next = 0;
    g->has_next_double = false;
}

static void next_state(cfx_generator *g)
{
    uint32_t *s = g->state;
    g->left = MT_N;
    g->next = 0;
    for (int i = 0; i < MT_N; i++) {
        uint32_t y = (s[i] & 0x80000000u) | (s[(i + 1) % MT_N] & 0x7fffffffu);
        s[i] = s[(i + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
}

static uint32_t draw32(cfx_generator *g)
{
    if (--g->left == 0)
        next_state(g);
    uint32_t y = g->state[g->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static uint64_t draw64(cfx_generator *g)
{
    uint64_t hi = draw32(g), lo = draw32(g);
    return hi << 32 | lo;
}

static float uniform_f(cfx_generator *g) { return (float)(draw32(g) & 0xffffffu) * (1.0f / 16777216.0f); }
static double uniform_d(cfx_generator *g)
{
    return (double)(draw64(g) & ((UINT64_C(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

cfx_generator *cfx_generator_new(void)
{
    cfx_generator *g = cfx_malloc(sizeof *g);
    if (!g)
        return NULL;
    pthread_mutex_init(&g->lock, NULL);
    atomic_init(&g->refs, 1);
    seed_locked(g, DEFAULT_SEED);
    return g;
}

cfx_generator *cfx_generator_retain(cfx_generator *g)
{
    if (g && g != cfx_default_generator())
        atomic_fetch_add(&g->refs, 1);
    return g;
}

void cfx_generator_free(cfx_generator *g)
{
    if (!g || g == cfx_default_generator() || atomic_fetch_sub(&g->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&g->lock);
    cfx_free(g);
}

void cfx_generator_manual_seed(cfx_generator *g, uint64_t seed)
{
    pthread_mutex_lock(&g->lock);
    seed_locked(g, seed);
    pthread_mutex_unlock(&g->lock);
}

uint64_t cfx_generator_initial_seed(cfx_generator *g)
{
    pthread_mutex_lock(&g->lock);
    uint64_t s = g->seed;
    pthread_mutex_unlock(&g->lock);
    return s;
}

/* c10::detail::getNonDeterministicRandom: bits from the OS's entropy (std::random_device there,
 * /dev/urandom here), else the clock mixed with the generator's address. */
uint64_t cfx_generator_seed(cfx_generator *g)
{
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    bool ok = f && fread(&s, sizeof s, 1, f) == 1;
    if (f)
        fclose(f);
    if (!ok) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ (uint64_t)(uintptr_t)g;
    }
    /* c10 keeps 53 bits, so that the seed has one representation as a double */
    s &= UINT64_C(0x1FFFFFFFFFFFFF);
    cfx_generator_manual_seed(g, s);
    return s;
}

uint32_t cfx_generator_random(cfx_generator *g)
{
    pthread_mutex_lock(&g->lock);
    uint32_t r = draw32(g);
    pthread_mutex_unlock(&g->lock);
    return r;
}

static cfx_generator default_gen = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static void default_init(void) { seed_locked(&default_gen, DEFAULT_SEED); }
__attribute__((constructor)) static void default_fork_guard(void)
{
    cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &default_gen.lock);
}

cfx_generator *cfx_default_generator(void)
{
    pthread_once(&default_once, default_init);
    return &default_gen;
}

void cfx_manual_seed(uint64_t seed) { cfx_generator_manual_seed(cfx_default_generator(), seed); }

cfx_generator *cfx_generator_or_default(cfx_value v)
{
    return v.kind == CFX_V_GENERATOR && v.u.gen ? v.u.gen : cfx_default_generator();
}

/* ---- distributions ---------------------------------------------------------------------- */

static void store(void *data, int64_t i, cfx_dtype dt, double v)
{
    if (dt == CFX_FLOAT32)
        ((float *)data)[i] = (float)v;
    else
        ((double *)data)[i] = v;
}

void cfx_generator_fill_uniform(cfx_generator *g, void *data, int64_t n, cfx_dtype dt, double from, double to)
{
    pthread_mutex_lock(&g->lock);
    if (dt == CFX_FLOAT32) {
        float f = (float)from, t = (float)to;
        for (int64_t i = 0; i < n; i++)
            ((float *)data)[i] = uniform_f(g) * (t - f) + f;
    } else {
        for (int64_t i = 0; i < n; i++)
            ((double *)data)[i] = uniform_d(g) * (to - from) + from;
    }
    pthread_mutex_unlock(&g->lock);
}

/* at::normal_distribution<double>; transformation::normal's val * std + mean is fused, as
 * PyTorch's build (-mfma) compiles it */
static double normal_double(cfx_generator *g, double mean, double std)
{
    if (g->has_next_double) {
        g->has_next_double = false;
        return fma(g->next_double, std, mean);
    }
    double u1 = uniform_d(g), u2 = uniform_d(g);
    double r = sqrt(-2.0 * log1p(-u2));
    double theta = 2.0 * 3.14159265358979323846 * u1;
    g->next_double = r * sin(theta);
    g->has_next_double = true;
    return fma(r * cos(theta), std, mean);
}

void cfx_generator_lock(cfx_generator *g) { pthread_mutex_lock(&g->lock); }
void cfx_generator_unlock(cfx_generator *g) { pthread_mutex_unlock(&g->lock); }
uint32_t cfx_generator_next32(cfx_generator *g) { return draw32(g); }
uint64_t cfx_generator_next64(cfx_generator *g) { return draw64(g); }
float cfx_generator_next_uniform_f(cfx_generator *g) { return uniform_f(g); }
double cfx_generator_next_uniform_d(cfx_generator *g) { return uniform_d(g); }
double cfx_generator_next_normal(cfx_generator *g, double mean, double std) { return normal_double(g, mean, std); }

/* PyTorch's x86 builds (AVX2 and AVX512 capabilities alike) transform float blocks with the
 * vectorised Cephes logf / sincosf of avx_mathfun.h, not libm's, and the results differ from
 * libm's in the last bit: these are the same polynomials and reductions, one lane at a time,
 * with every operation in float in the same order, and each multiply feeding an add fused as
 * the compiler fused them in PyTorch's build (-mfma): which operand of `a * b + c * d` became
 * the addend was found by matching 8192 values of the wheel's output (y * z + e * q1 and
 * yc * z * z - z / 2 fuse their first product). */
static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t f_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float cephes_logf(float x)
{
    bool invalid = x <= 0.0f;
    x = x > bits_f(0x00800000u) ? x : bits_f(0x00800000u); /* no denormals */
    int32_t e_bits = (int32_t)(f_bits(x) >> 23);
    x = bits_f((f_bits(x) & ~0x7f800000u) | f_bits(0.5f)); /* mantissa in [0.5, 1) */
    float e = (float)(e_bits - 0x7f);
    e = e + 1.0f;
    bool small = x < 0.707106781186547524f;
    float tmp = small ? x : 0.0f;
    x = x - 1.0f;
    e = e - (small ? 1.0f : 0.0f);
    x = x + tmp;
    float z = x * x;
    static const float p[9] = {7.0376836292E-2f, -1.1514610310E-1f, 1.1676998740E-1f,
                               -1.2420140846E-1f, 1.4249322787E-1f, -1.6668057665E-1f,
                               2.0000714765E-1f, -2.4999993993E-1f, 3.3333331174E-1f};
    float y = p[0];
    for (int i = 1; i < 9; i++)
        y = fmaf(y, x, p[i]);
    y = y * x;
    y = fmaf(y, z, e * -2.12194440e-4f);
    y = fmaf(-z, 0.5f, y);
    x = x + y;
    x = fmaf(e, 0.693359375f, x);
    return invalid ? bits_f(0xffffffffu) : x;
}

static void cephes_sincosf(float x, float *s, float *c)
{
    uint32_t sign_sin = f_bits(x) & 0x80000000u;
    x = fabsf(x);
    float y = x * 1.27323954473516f; /* 4 / pi */
    int32_t j = (int32_t)y;
    j = (j + 1) & ~1;
    y = (float)j;
    uint32_t swap_sin = (uint32_t)(j & 4) << 29;
    bool poly2 = (j & 2) == 0; /* the sine polynomial for the sine */
    x = fmaf(y, -0.78515625f, x);
    x = fmaf(y, -2.4187564849853515625e-4f, x);
    x = fmaf(y, -3.77489497744594108e-8f, x);
    uint32_t sign_cos = (uint32_t)(~(j - 2) & 4) << 29;
    sign_sin ^= swap_sin;
    float z = x * x;
    float yc = fmaf(2.443315711809948E-005f, z, -1.388731625493765E-003f);
    yc = fmaf(yc, z, 4.166664568298827E-002f);
    yc = yc * z;
    yc = fmaf(yc, z, -(z * 0.5f));
    yc = yc + 1.0f;
    float ys = fmaf(-1.9515295891E-4f, z, 8.3321608736E-3f);
    ys = fmaf(ys, z, -1.6666654611E-1f);
    ys = ys * z;
    ys = fmaf(ys, x, x);
    float sin_v = poly2 ? ys : yc, cos_v = poly2 ? yc : ys;
    *s = bits_f(f_bits(sin_v) ^ sign_sin);
    *c = bits_f(f_bits(cos_v) ^ sign_cos);
}

static void normal_fill_16_f(float *x, float mean, float std)
{
    const float two_pi = (float)(2.0f * 3.14159265358979323846);
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - x[j], u2 = x[j + 8];
        float radius = sqrtf(-2.0f * cephes_logf(u1));
        float s, c;
        cephes_sincosf(two_pi * u2, &s, &c);
        x[j] = fmaf(radius * c, std, mean);
        x[j + 8] = fmaf(radius * s, std, mean);
    }
}

static void normal_fill_16_d(double *x, double mean, double std)
{
    for (int j = 0; j < 8; j++) {
        double u1 = 1 - x[j], u2 = x[j + 8];
        double radius = sqrt(-2 * log(u1));
        double theta = 2.0f * 3.14159265358979323846 * u2;
        x[j] = radius * cos(theta) * std + mean;
        x[j + 8] = radius * sin(theta) * std + mean;
    }
}

void cfx_generator_fill_normal(cfx_generator *g, void *data, int64_t n, cfx_dtype dt, bool contiguous, double mean,
                               double std)
{
    pthread_mutex_lock(&g->lock);
    if (n >= 16 && contiguous) {
        bool f32 = dt == CFX_FLOAT32;
        for (int64_t i = 0; i < n; i++)
            store(data, i, dt, f32 ? (double)uniform_f(g) : uniform_d(g));
        for (int64_t i = 0; i < n - 15; i += 16)
            f32 ? normal_fill_16_f((float *)data + i, (float)mean, (float)std)
                : normal_fill_16_d((double *)data + i, mean, std);
        if (n % 16 != 0) { /* the last 16 again, from fresh uniforms */
            for (int64_t i = n - 16; i < n; i++)
                store(data, i, dt, f32 ? (double)uniform_f(g) : uniform_d(g));
            f32 ? normal_fill_16_f((float *)data + n - 16, (float)mean, (float)std)
                : normal_fill_16_d((double *)data + n - 16, mean, std);
        }
    } else {
        for (int64_t i = 0; i < n; i++)
            store(data, i, dt, normal_double(g, mean, std));
    }
    pthread_mutex_unlock(&g->lock);
}

typedef struct bernoulli_ctx {
    cfx_generator *g;
    double p;
    cfx_dtype dt;
} bernoulli_ctx;

static void bernoulli_loop(char **ptr, const int64_t *strides, int64_t n, const void *ctx)
{
    const bernoulli_ctx *c = ctx;
    char *o = ptr[0];
    for (int64_t i = 0; i < n; i++, o += strides[0]) {
        bool v = uniform_d(c->g) < c->p;
        switch (c->dt) {
        case CFX_FLOAT32: *(float *)o = v; break;
        case CFX_FLOAT64: *(double *)o = v; break;
        case CFX_INT64: *(int64_t *)o = v; break;
        case CFX_INT32: *(int32_t *)o = v; break;
        case CFX_BOOL: *(bool *)o = v; break;
        case CFX_UINT8: *(uint8_t *)o = v; break;
        case CFX_INT8: *(int8_t *)o = v; break;
        case CFX_INT16: *(int16_t *)o = v; break;
        case CFX_COMPLEX64: ((float *)o)[0] = v, ((float *)o)[1] = 0; break;
        case CFX_COMPLEX128: ((double *)o)[0] = v, ((double *)o)[1] = 0; break;
        }
    }
}

void cfx_generator_fill_bernoulli(cfx_generator *g, cfx_tensor *self, double p)
{
    bernoulli_ctx c = {g, p, (cfx_dtype)self->dtype};
    cfx_loop l;
    cfx_loop_init(&l, self, NULL, 0);
    pthread_mutex_lock(&g->lock);
    cfx_loop_run(&l, bernoulli_loop, &c);
    pthread_mutex_unlock(&g->lock);
}
