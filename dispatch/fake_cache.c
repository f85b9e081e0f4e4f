/* fake_cache.c - the fake mode's dispatch cache (FakeTensorMode._cached_dispatch_impl,
 * PyTorch 2.13, on by default: fake_tensor_cache_enabled).
 *
 * 2.13 keys every call by the operator, the state that can change its output and every
 * argument (a fake tensor by its metadata, anything else by its type and value); the first
 * call runs _dispatch_impl and records its output's metadata, and a later call with the same
 * key makes the output from that record (empty_strided on meta, made fake on the recorded
 * device) without running the Meta kernel. A call the cache cannot describe bypasses it
 * (_validate_cache_key, _prep_args_for_hash, _validate_output_for_cache_entry): a non-fake
 * tensor argument, a fake carrying a constant, a data-dependent, dynamic-shape or
 * inplace_view op, a lift, a non-builtin op, an output that is not a plain fresh fake.
 *
 * cfx caches the calls where the record is plainly the whole answer, a subset of 2.13's (a
 * bypass only costs the Meta kernel's run, so being stricter changes no result): a builtin
 * op (aten, prims) with one Tensor return that neither writes an argument nor returns a
 * view, not random (nondeterministic_seeded), called on fakes of this mode without
 * constants and on plain values (no tensor lists, no Device argument: the call stands the
 * device in by meta on the stack), whose output is a fresh fake (its own storage, offset 0,
 * not an input). The key also holds the thread's local key sets, which can steer the
 * kernel's own dispatch. A fake argument is keyed by its metadata's interned record
 * (fake_meta.c), one word, and an entry's output is such a record, which the fake it makes
 * points at from birth. Entries live in the mode (2.13 keeps them in the class: only
 * hit counts could tell the difference) and are dropped whenever a dispatch table changes,
 * since a kernel registered later must be the one that answers. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/fake_internal.h"
#include "dispatch/keys_internal.h"
#include "dispatch/operator_internal.h"
#include "dispatch/scope.h"
#include "dispatch/tensor_internal.h"

struct cfx_fake_cache_entry {
    uint64_t hash;
    uint32_t n_words;
    const cfx_fake_meta *out; /* the output's metadata (storage offset 0) */
    uint64_t nbytes;          /* the output's (meta) storage size */
    uint64_t words[];         /* the key */
};

/* Per op (mode->cache_ops): not looked at yet, never cached, cached (a required Tensor
 * argument: every keyed call has a tensor), cached when some optional Tensor argument holds
 * one (constructors and numbers-only calls take their own paths). */
enum { OP_UNKNOWN = 0, OP_BYPASS, OP_CACHED, OP_CACHED_IF_TENSOR, MAX_ENTRIES = 1 << 16 };

/* A key's words are combined by rotate and xor as they are appended (two instructions a
 * word), and the sum mixed once at the end: equal keys are compared in full anyway. The
 * multiply carries every bit of the sum into the high half only (a low bit of a product
 * depends on no higher bit of its operands), so finish folds the high half down and the
 * table's slot is the low bits of that: keys differing only in bits the rotations moved
 * up, such as add(x, i) for i = 0, 1, 2, ..., still spread (folding again at the slot would
 * cancel the fold and pile them all in one probe run: quadratic). */
static inline uint64_t rotl7(uint64_t h) { return h << 7 | h >> 57; }
static inline uint64_t finish(uint64_t h)
{
    h *= 0x9E3779B97F4A7C15ull;
    return h ^ h >> 32;
}
static inline uint32_t slot(uint64_t hash, uint32_t mask) { return (uint32_t)hash & mask; }

/* _validate_cache_key and the output rules that follow from the schema alone, per op. */
static bool op_is_cacheable(const cfx_fake_mode *m, const cfx_op *op)
{
    const cfx_schema *s = op->schema;
    if (!s || s->is_vararg || s->is_varret || s->is_mutable || s->n_returns != 1 ||
        s->returns[0].type->kind != CFX_TYPE_TENSOR || s->returns[0].type->alias)
        return false;
    if (op->tags & (cfx_tag_bit(CFX_TAG_data_dependent_output) | cfx_tag_bit(CFX_TAG_dynamic_output_shape) |
                    cfx_tag_bit(CFX_TAG_inplace_view) | cfx_tag_bit(CFX_TAG_nondeterministic_seeded)))
        return false;
    if (op == m->lift_fresh || op == m->lift_fresh_copy || strcmp(s->name, "aten::_unsafe_view") == 0)
        return false;
    /* torch._library.utils.is_builtin: the aten and prims namespaces */
    return strncmp(s->name, "aten::", 6) == 0 || strncmp(s->name, "prims::", 7) == 0;
}

static bool has_required_tensor(const cfx_schema *s)
{
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->kind == CFX_TYPE_TENSOR)
            return true;
    return false;
}

/* The op's entry in the mode's table of per-op answers, computed on its first call. */
static int op_cached(cfx_fake_mode *m, const cfx_op *op)
{
    uint32_t id = op->id;
    if (id >= m->cache_ops_cap) {
        uint32_t cap = m->cache_ops_cap ? m->cache_ops_cap : 256;
        while (cap <= id)
            cap *= 2;
        uint8_t *t = cfx_realloc(m->cache_ops, cap);
        if (!t)
            return OP_BYPASS; /* no cache then: the call runs the kernel */
        memset(t + m->cache_ops_cap, OP_UNKNOWN, cap - m->cache_ops_cap);
        m->cache_ops = t;
        m->cache_ops_cap = cap;
    }
    if (m->cache_ops[id] == OP_UNKNOWN)
        m->cache_ops[id] = !op_is_cacheable(m, op)          ? OP_BYPASS
                           : has_required_tensor(op->schema) ? OP_CACHED
                                                             : OP_CACHED_IF_TENSOR;
    return m->cache_ops[id];
}

static void drop_entries(cfx_fake_mode *m)
{
    for (uint32_t i = 0; i < m->cache_cap; i++)
        cfx_free(m->cache[i]);
    cfx_free(m->cache);
    m->cache = NULL;
    m->cache_cap = m->cache_count = 0;
}

void cfx_fake_cache_free(cfx_fake_mode *m)
{
    drop_entries(m);
    cfx_free(m->cache_ops);
    m->cache_ops = NULL;
    m->cache_ops_cap = 0;
}

/* Appends a word; false when the key would not fit (the call bypasses). */
static inline bool put(cfx_fake_key *k, uint64_t w)
{
    if (k->n == CFX_FAKE_KEY_WORDS)
        return false;
    k->w[k->n++] = w;
    k->hash = rotl7(k->hash) ^ w;
    return true;
}

/* One plain value (not a tensor), as its kind and contents; false: not describable. */
static bool put_value(cfx_fake_key *k, const cfx_value *v)
{
    uint64_t head = v->kind | (uint64_t)v->len << 32, x;
    switch (v->kind) {
    case CFX_V_NONE: return put(k, head);
    case CFX_V_BOOL: x = v->u.b; goto two;
    case CFX_V_INT:
    case CFX_V_LAYOUT:
    case CFX_V_MEMORY_FORMAT: x = (uint64_t)v->u.i; goto two;
    case CFX_V_DOUBLE: memcpy(&x, &v->u.d, sizeof x); goto two;
    case CFX_V_DTYPE: x = (uint64_t)v->u.dtype; goto two;
    case CFX_V_STRING: {
        if (!put(k, head))
            return false;
        for (uint32_t i = 0; i < v->len; i += 8) {
            uint64_t w = 0;
            memcpy(&w, v->u.s + i, v->len - i < 8 ? v->len - i : 8);
            if (!put(k, w))
                return false;
        }
        return true;
    }
    case CFX_V_LIST:
    case CFX_V_TUPLE:
        if (!put(k, head))
            return false;
        for (uint32_t i = 0; i < v->len; i++)
            if (v->u.items[i].kind == CFX_V_LIST || v->u.items[i].kind == CFX_V_TUPLE ||
                v->u.items[i].kind == CFX_V_TENSOR || !put_value(k, &v->u.items[i]))
                return false;
        return true;
    default: return false; /* devices (see above), objects, ... */
    }
two: /* a number or an enum: its kind and its value */
    if (k->n + 2 > CFX_FAKE_KEY_WORDS)
        return false;
    k->w[k->n] = head;
    k->w[k->n + 1] = x;
    k->n += 2;
    k->hash = rotl7(rotl7(k->hash) ^ head) ^ x;
    return true;
}

/* A fake tensor of this mode without a constant and with a fake's key set, as one word: its
 * metadata's record (fake_meta.c), which stands for dtype, rank, device, offset, sizes and
 * strides (ids start at 1: the word of a None, CFX_V_TENSOR alone, is no record's); 0
 * otherwise (no word is 0). */
static inline uint64_t tensor_word(cfx_fake_mode *m, cfx_tensor *t)
{
    if (!t)
        return CFX_V_TENSOR;
    /* (a fake is never a wrapped number: one is meta, the other CPU) */
    if (!cfx_fake_is_ours(m, t) || t->keys.repr != m->fake_keys.repr || cfx_fake_constant_of(m, t))
        return 0;
    const cfx_fake_meta *r = cfx_fake_meta_of(m, t);
    return r ? CFX_V_TENSOR | r->id << 8 : 0;
}

static bool holds_tensor(const cfx_value *stack, int n)
{
    for (int i = 0; i < n; i++)
        if (stack[i].kind == CFX_V_TENSOR && stack[i].u.t)
            return true;
    return false;
}

static const cfx_fake_cache_entry *find(const cfx_fake_mode *m, const cfx_fake_key *k)
{
    if (!m->cache_cap)
        return NULL;
    uint32_t mask = m->cache_cap - 1;
    for (uint32_t j = slot(k->hash, mask); m->cache[j]; j = (j + 1) & mask) {
        const cfx_fake_cache_entry *e = m->cache[j];
        if (e->hash == k->hash && e->n_words == k->n && memcmp(e->words, k->w, k->n * sizeof *k->w) == 0)
            return e;
    }
    return NULL;
}

int cfx_fake_cache_lookup(cfx_fake_mode *m, const cfx_op *op, cfx_value *stack, cfx_fake_key *k)
{
    k->usable = false;
    int cached = op_cached(m, op);
    if (cached == OP_BYPASS)
        return 0;
    uint64_t gen = cfx_dispatch_tables_generation();
    if (gen != m->cache_gen) {
        drop_entries(m); /* a kernel may have changed: every record may be stale */
        m->cache_gen = gen;
    }
    const cfx_schema *s = op->schema;
    cfx_local_keys tls = cfx_keys_local();
    k->w[0] = op->id | (uint64_t)s->n_args << 32;
    k->w[1] = tls.included.repr;
    k->w[2] = tls.excluded.repr;
    k->n = 3;
    k->hash = rotl7(rotl7(k->w[0]) ^ k->w[1]) ^ k->w[2];
    for (int i = 0; i < s->n_args; i++) {
        const cfx_value *v = &stack[i];
        if (v->kind == CFX_V_TENSOR) {
            uint64_t w = tensor_word(m, v->u.t);
            if (!w || !put(k, w))
                return 0;
        } else if (!put_value(k, v)) {
            return 0;
        }
    }
    if (cached == OP_CACHED_IF_TENSOR && !holds_tensor(stack, s->n_args))
        return 0;
    k->hash = finish(k->hash);
    k->usable = true;
    const cfx_fake_cache_entry *e = find(m, k);
    if (!e)
        return 0;
    /* _output_from_cache_entry: empty_strided on meta, made a fake of this mode; the record
     * is of a tensor made on meta, checked then */
    const cfx_fake_meta *out = e->out;
    cfx_tensor *t = cfx_tensor_new_recorded(out->sizes, out->strides, out->ndim, (cfx_dtype)out->dtype,
                                            cfx_device_make(CFX_DEVICE_META), e->nbytes);
    if (!t)
        return -1;
    int rc = cfx_fake_mark(m, t, out->device);
    if (rc != CFX_OK) {
        if (cfx_scope_depth() == 0)
            cfx_tensor_release(t);
        return -1;
    }
    t->ext.fake_meta = out;
    stack[0] = cfx_tensor_value(t);
    return 1;
}

/* Whether out is what a hit would make of its metadata: a fresh fake of m, no input, no
 * constant, nothing else attached. */
static bool plain_fresh_output(const cfx_fake_mode *m, const cfx_tensor *out, cfx_tensor *const *inputs,
                               int n_inputs)
{
    if (!cfx_fake_is_ours(m, out) || out->storage != &out->own_storage || out->storage_offset != 0 ||
        out->storage->refcount != 1 || out->storage->version != 0 || out->is_wrapped_number ||
        out->ext.n_bindings != 0 || out->keys.repr != m->fake_keys.repr || cfx_fake_constant_of(m, out))
        return false;
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] == out)
            return false;
    return true;
}

void cfx_fake_cache_insert(cfx_fake_mode *m, const cfx_fake_key *k, cfx_tensor *const *inputs, int n_inputs,
                           const cfx_value *stack)
{
    if (!k->usable || stack[0].kind != CFX_V_TENSOR || !stack[0].u.t || m->cache_count >= MAX_ENTRIES)
        return;
    cfx_tensor *out = stack[0].u.t;
    if (!plain_fresh_output(m, out, inputs, n_inputs))
        return;
    const cfx_fake_meta *rec = cfx_fake_meta_of(m, out);
    if (!rec)
        return;
    /* the storage a hit's empty_strided gives must be the one the kernel gave */
    bool had_error = cfx_error_occurred();
    cfx_scope sc = cfx_scope_begin();
    cfx_tensor *synth = cfx_tensor_new_strided(out->sizes, out->strides, out->ndim, (cfx_dtype)out->dtype,
                                               cfx_device_make(CFX_DEVICE_META));
    bool same = synth && synth->storage->nbytes == out->storage->nbytes;
    cfx_scope_end(sc);
    if (!same) {
        if (!had_error)
            cfx_error_clear(); /* the call itself succeeded */
        return;
    }
    if ((m->cache_count + 1) * 2 > m->cache_cap) {
        uint32_t cap = m->cache_cap ? 2 * m->cache_cap : 64;
        cfx_fake_cache_entry **t = cfx_calloc(cap, sizeof *t);
        if (!t)
            return;
        for (uint32_t i = 0; i < m->cache_cap; i++)
            if (m->cache[i]) {
                uint32_t j = slot(m->cache[i]->hash, cap - 1);
                while (t[j])
                    j = (j + 1) & (cap - 1);
                t[j] = m->cache[i];
            }
        cfx_free(m->cache);
        m->cache = t;
        m->cache_cap = cap;
    }
    cfx_fake_cache_entry *e = cfx_malloc(sizeof *e + k->n * sizeof(uint64_t));
    if (!e)
        return;
    e->hash = k->hash;
    e->n_words = k->n;
    e->out = rec;
    e->nbytes = out->storage->nbytes; /* what empty_strided gave synth too (checked above) */
    memcpy(e->words, k->w, k->n * sizeof *k->w);
    uint32_t mask = m->cache_cap - 1, j = slot(e->hash, mask);
    while (m->cache[j])
        j = (j + 1) & mask;
    m->cache[j] = e;
    m->cache_count++;
}
