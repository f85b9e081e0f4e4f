/* fake_internal.h - what fake.c, fake_dispatch.c and fake_render.c share; not public.
 *
 * fake.c owns the mode object and the conversions real -> fake; fake_dispatch.c is the mode's
 * __torch_dispatch__; fake_constants.c its constants (FakeTensor.constant); fake_render.c
 * prints calls and tensors the way PyTorch's error messages do. */
#ifndef CFX_FAKE_INTERNAL_H
#define CFX_FAKE_INTERNAL_H

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/mode_internal.h"
#include "dispatch/operator.h"

typedef struct fake_memo_entry {
    cfx_tensor *real; /* a reference: the address cannot be reused while memoized */
    cfx_tensor *fake; /* a reference */
} fake_memo_entry;

typedef struct fake_storage_entry {
    const cfx_storage *real; /* kept alive by a memoized real tensor */
    cfx_tensor *base;        /* a reference: 1-d meta tensor owning the fake storage */
} fake_storage_entry;

typedef struct cfx_fake_cache_entry cfx_fake_cache_entry; /* fake_cache.c */

/* A fake tensor's metadata, interned per mode (fake_meta.c): equal records are one record. */
typedef struct cfx_fake_meta cfx_fake_meta;
struct cfx_fake_meta {
    uint64_t id;   /* process-wide, never reused */
    uint64_t hash; /* of the fields below */
    int8_t dtype, ndim;
    cfx_device device; /* the fake device */
    int64_t storage_offset;
    const int64_t *sizes, *strides; /* into dims */
    int64_t dims[];
};

typedef struct fake_enter_entry {
    bool live;     /* this enter set the slot (false: it was already this mode) */
    cfx_mode *prev; /* the fake mode stashed by this enter, or NULL */
} fake_enter_entry;

struct cfx_fake_mode {
    cfx_mode base;
    cfx_fake_mode_options opts;
    fake_memo_entry *memo;
    int n_memo, cap_memo;
    fake_storage_entry *smemo;
    int n_smemo, cap_smemo;
    fake_enter_entry *enters;
    int n_enters, cap_enters;
    cfx_keyset fake_keys; /* a fake tensor's key set: meta's plus Python, PythonTLSSnapshot */
    uint64_t const_owner; /* bindings: fake tensor -> its real constant (FakeTensor.constant) */
    /* the operators the mode treats apart, looked up once: lift_fns and add_'s device rule */
    const cfx_op *lift_fresh, *lift_fresh_copy, *add_inplace;
    bool constants_made;  /* some fake of this mode was given a constant */
    /* the dispatch cache (fake_cache.c): records by key, and per op id whether it caches */
    cfx_fake_cache_entry **cache;
    uint32_t cache_cap, cache_count;
    uint64_t cache_gen; /* the dispatch tables' generation the records were made under */
    uint8_t *cache_ops;
    uint32_t cache_ops_cap;
    /* the interned metadata records (fake_meta.c), an open-addressing set */
    cfx_fake_meta **metas;
    uint32_t metas_cap, metas_count;
};

/* Python and PythonTLSSnapshot, the keys of a Python tensor subclass (both plain
 * functionality keys, so one bit each). */
#define CFX_FAKE_PYTHON_KEYS \
    ((cfx_keyset){CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Python) | CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_PythonTLSSnapshot)})


/* fake.c */
/* Makes t (a meta tensor nobody else holds) a fake tensor of m on device, in place: the tensor
 * takes a reference to m. Inline: every output of every call under the fake mode goes
 * through it, and it is a handful of stores. */
static inline int cfx_fake_mark(cfx_fake_mode *m, cfx_tensor *t, cfx_device device)
{
    if (!cfx_tensor_is_meta(t))
        return cfx_error_set(CFX_ERR, NULL, "a fake tensor must be a meta tensor inside, got device %s",
                             cfx_device_type_name((cfx_device_type)t->device.type));
    struct cfx_tensor_ext *e = &t->ext;
    if (e->mode != &m->base) {
        /* m's reference first: the old one may be the last holding m */
        cfx_mode *old = e->mode; /* NULL for a new tensor, the usual case */
        e->mode = cfx_mode_ref(&m->base);
        if (old)
            cfx_mode_release(old);
    }
    e->is_fake = true;
    e->fake_device = device;
    e->fake_meta = NULL; /* computed when first needed (fake_meta.c) */
    /* A meta tensor's keys, plus those of a Python tensor subclass (the dispatcher is
     * initialised: cfx_fake_mode_new did it). */
    t->keys.repr = m->fake_keys.repr | (t->keys.repr & (CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Conjugate) |
                                                        CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Negative))); /* math bits kept */
    return CFX_OK;
}
/* A new fake tensor with real's metadata on a fresh fake storage, not memoized (outputs of
 * fallback kernels). Returned like a newly made tensor (autoreleased if a scope is open). */
cfx_tensor *cfx_fake_from_real_unmemoized(cfx_fake_mode *m, cfx_tensor *real);
static inline bool cfx_fake_is_ours(const cfx_fake_mode *m, const cfx_tensor *t)
{
    return t && t->ext.is_fake && t->ext.mode == &m->base;
}

/* fake_constants.c (FakeTensor.constant) */
/* The real constant a fake of m carries, or NULL (no lookup while m has made none). */
static inline cfx_tensor *cfx_fake_constant_of(const cfx_fake_mode *m, const cfx_tensor *t)
{
    return m->constants_made && t ? cfx_tensor_binding_get(t, m->const_owner) : NULL;
}
/* A map_fn (ctx: the mode) replacing a fake argument by its constant. */
cfx_tensor *cfx_fake_to_constant(void *vctx, cfx_tensor *t);
/* Runs op for real on stack (real tensors and constants) and, when every result can be a
 * constant, replaces the results by constant fakes (an in-place result by its fake argument
 * among args). true when the call is answered (*rc its status, an error included). */
bool cfx_fake_answer_with_constants(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack, const cfx_value *args,
                                    int *rc);
/* A lift of a real tensor: a constant fake when small, else the converter's fake of it. */
int cfx_fake_lift_real(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack);
/* invalidate_written_to_constants: the fake arguments op writes lose their constants. */
void cfx_fake_invalidate_written(const cfx_fake_mode *m, const cfx_schema *s, const cfx_value *stack);

/* fake_meta.c */
/* t's metadata record (t a fake of m), interned and attached to t the first time; NULL when
 * m holds as many records as it may or is out of memory (no error is recorded: the caller
 * goes without). */
const cfx_fake_meta *cfx_fake_meta_intern(cfx_fake_mode *m, cfx_tensor *t);
static inline const cfx_fake_meta *cfx_fake_meta_of(cfx_fake_mode *m, cfx_tensor *t)
{
    return t->ext.fake_meta ? t->ext.fake_meta : cfx_fake_meta_intern(m, t);
}
/* Frees the records (the mode's end). */
void cfx_fake_meta_free(cfx_fake_mode *m);
/* The id of t's record, or 0 (none computed yet, or not a fake). Two tensors with the same
 * nonzero id have the same dtype, rank, sizes, strides and storage offset, in any mode: the
 * graph's meta intern (ir/meta_intern.c) compares ids instead of dims. */
static inline uint64_t cfx_fake_meta_id(const cfx_tensor *t)
{
    return t->ext.fake_meta ? t->ext.fake_meta->id : 0;
}

/* fake_cache.c (FakeTensorMode's dispatch cache) */
enum { CFX_FAKE_KEY_WORDS = 96 };
/* A call's cache key: the op, the local key sets and every argument, as words. */
typedef struct cfx_fake_key {
    bool usable; /* the call can be cached: insert its output after a successful run */
    uint32_t n;
    uint64_t hash;
    uint64_t w[CFX_FAKE_KEY_WORDS];
} cfx_fake_key;
/* Looks the call up: 1 when answered from the cache (stack[0] the new fake, owned as a
 * kernel's result), 0 when the call must run (k says whether to record it), -1 on error. */
int cfx_fake_cache_lookup(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack, cfx_fake_key *k);
/* Records the output stack[0] of a call that ran, under k, when the output is a plain fresh
 * fake (not one of inputs[0..n_inputs)). */
void cfx_fake_cache_insert(cfx_fake_mode *m, const cfx_fake_key *k, cfx_tensor *const *inputs, int n_inputs,
                           const cfx_value *stack);
/* Drops the records and the per-op table (the mode's end). */
void cfx_fake_cache_free(cfx_fake_mode *m);

/* fake_dispatch.c */
int cfx_fake_dispatch(cfx_mode *self, const cfx_op *op, cfx_keyset ks, cfx_value *stack);

/* fake_render.c */
/* str(OpOverload): "aten.add.Tensor", "aten.nonzero.default". */
void cfx_fake_put_op_name(const cfx_op *op, cfx_buf *b);
/* torch._utils.render_call(func, args, kwargs) as the dispatcher hands them to
 * __torch_dispatch__: trailing defaulted positionals dropped, kwarg-only ones by name unless
 * defaulted; tensors printed with threshold=0, edgeitems=0. */
void cfx_fake_render_call(const cfx_op *op, const cfx_value *stack, cfx_buf *b);
/* str(torch.device): "cpu", "meta", "cpu:0". */
void cfx_fake_put_device(cfx_device d, cfx_buf *b);

#endif
