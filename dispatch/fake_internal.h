/* fake_internal.h - what fake.c, fake_dispatch.c and fake_render.c share; not public.
 *
 * fake.c owns the mode object and the conversions real -> fake; fake_dispatch.c is the mode's
 * __torch_dispatch__; fake_render.c prints calls and tensors the way PyTorch's error messages
 * do. */
#ifndef CFX_FAKE_INTERNAL_H
#define CFX_FAKE_INTERNAL_H

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/operator.h"

typedef struct fake_memo_entry {
    cfx_tensor *real; /* a reference: the address cannot be reused while memoized */
    cfx_tensor *fake; /* a reference */
} fake_memo_entry;

typedef struct fake_storage_entry {
    const cfx_storage *real; /* kept alive by a memoized real tensor */
    cfx_tensor *base;        /* a reference: 1-d meta tensor owning the fake storage */
} fake_storage_entry;

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
    /* Fake tensors holding this mode. Together they hold one reference of base's atomic
     * count: a mode and its fakes belong to one thread at a time (fake.h), so making and
     * freeing a fake costs no atomic operation. */
    long n_fake_refs;
};

/* Python and PythonTLSSnapshot, the keys of a Python tensor subclass (both plain
 * functionality keys, so one bit each). */
#define CFX_FAKE_PYTHON_KEYS \
    ((cfx_keyset){CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_Python) | CFX_KEYS_FUNCTIONALITY_BIT(CFX_KEY_PythonTLSSnapshot)})


/* On every call, so inline: is t a fake tensor of m? */
static inline bool cfx_fake_is_ours_inline(const cfx_fake_mode *m, const cfx_tensor *t)
{
    return t && t->ext.is_fake && t->ext.mode == &m->base;
}

/* fake.c */
/* Drops a fake tensor's reference to its mode (tensor_ext.c, when a fake tensor dies). */
void cfx_fake_tensor_unref(cfx_mode *mode);
static inline void cfx_fake_tensor_unref_inline(cfx_mode *mode)
{
    cfx_fake_mode *m = (cfx_fake_mode *)mode;
    if (--m->n_fake_refs == 0)
        cfx_mode_release(mode); /* may free m */
}
/* Makes t (a fresh meta tensor nobody else holds) a fake tensor of m on device, in place. */
int cfx_fake_mark(cfx_fake_mode *m, cfx_tensor *t, cfx_device device);
/* cfx_fake_mark for the usual case, a meta tensor with no mode yet (every Meta kernel
 * output): inline, as it runs once per operator call. The _meta form is for a caller that
 * checked both. */
static inline void cfx_fake_mark_fresh_meta(cfx_fake_mode *m, cfx_tensor *t, cfx_device device)
{
    if (m->n_fake_refs++ == 0)
        cfx_mode_retain(&m->base);
    t->ext.mode = &m->base;
    t->ext.is_fake = true;
    t->ext.fake_device = device;
    t->keys = m->fake_keys;
}
static inline int cfx_fake_mark_fresh(cfx_fake_mode *m, cfx_tensor *t, cfx_device device)
{
    if (!cfx_tensor_is_meta(t) || t->ext.mode)
        return cfx_fake_mark(m, t, device);
    cfx_fake_mark_fresh_meta(m, t, device);
    return CFX_OK;
}
/* A new fake tensor with real's metadata on a fresh fake storage, not memoized (outputs of
 * fallback kernels). Returned like a newly made tensor (autoreleased if a scope is open). */
cfx_tensor *cfx_fake_from_real_unmemoized(cfx_fake_mode *m, cfx_tensor *real);
bool cfx_fake_is_ours(const cfx_fake_mode *m, const cfx_tensor *t);

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
