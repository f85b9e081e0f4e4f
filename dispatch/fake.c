/* fake.c - the fake tensor mode object and turning tensors into fake tensors.
 *
 * A fake tensor is an ordinary meta tensor (tensor.c) whose mode state (tensor_ext.h) names its
 * fake mode and fake device, plus the Python/PythonTLSSnapshot keys. Making one is therefore cheap
 * and needs nothing from tensor.c beyond its public constructors: a fake of a real tensor is
 * a view, with the real sizes/strides/offset, of a 1-d meta "base" tensor whose storage has
 * the real storage's byte size, so views stay in bounds exactly when they would for the real
 * tensor.
 *
 * FakeTensorConverter memoizes per mode, weakly, by tensor and by storage. C has no weak
 * references, so the memo holds a strong reference to the real tensor instead: its address
 * cannot be recycled for another tensor while the entry exists. The storage memo makes fakes
 * of two views of one real storage share one fake storage (aliasing survives faking). Both are
 * dropped by cfx_fake_mode_free.
 *
 * The mode is reference counted through its cfx_mode base: the creator holds one reference and
 * every live fake tensor one, so freeing the mode while fakes are alive only drops the memo;
 * the struct goes when the last fake tensor does. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/fake_internal.h"
#include "dispatch/scope.h"

static void fake_destroy(cfx_mode *self)
{
    cfx_fake_mode *m = (cfx_fake_mode *)self;
    cfx_fake_cache_free(m);
    cfx_fake_meta_free(m);
    cfx_free(m->memo);
    cfx_free(m->smemo);
    cfx_free(m->enters);
    cfx_free(m);
}

static const cfx_mode_vtable fake_vtable = {"FakeTensorMode", cfx_fake_dispatch, fake_destroy};

cfx_fake_mode *cfx_fake_mode_new(const cfx_fake_mode_options *opts)
{
    cfx_fake_mode *m = cfx_calloc(1, sizeof *m);
    if (!m) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_mode_init(&m->base, &fake_vtable, CFX_MODE_FAKE);
    m->opts = opts ? *opts : (cfx_fake_mode_options){.allow_non_fake_inputs = false, .allow_fallback_kernels = true};
    m->fake_keys = cfx_keyset_or(cfx_keyset_for_tensor(CFX_BACKEND_META), CFX_FAKE_PYTHON_KEYS);
    m->const_owner = cfx_binding_owner_new();
    cfx_dispatcher_init();
    m->lift_fresh = cfx_op_lookup("aten::lift_fresh");
    m->lift_fresh_copy = cfx_op_lookup("aten::lift_fresh_copy");
    m->add_inplace = cfx_op_lookup("aten::add_.Tensor");
    return m;
}

static void drop_memo(cfx_fake_mode *m)
{
    /* Releasing a fake drops one of its references to the mode, never the last one: the
     * creator's reference is released after this. */
    for (int i = 0; i < m->n_memo; i++) {
        cfx_tensor_release(m->memo[i].fake);
        cfx_tensor_release(m->memo[i].real);
    }
    m->n_memo = 0;
    for (int i = 0; i < m->n_smemo; i++)
        cfx_tensor_release(m->smemo[i].base);
    m->n_smemo = 0;
}

void cfx_fake_mode_free(cfx_fake_mode *m)
{
    if (!m)
        return;
    drop_memo(m);
    cfx_mode_release(&m->base);
}

cfx_mode *cfx_fake_mode_base(cfx_fake_mode *m) { return m ? &m->base : NULL; }

cfx_fake_mode *cfx_fake_mode_from_base(cfx_mode *m)
{
    return m && m->vt == &fake_vtable ? (cfx_fake_mode *)m : NULL;
}

/* ------------------------------------------------------------------ enter / exit */

int cfx_fake_mode_enter(cfx_fake_mode *m)
{
    if (!m)
        return CFX_ERR;
    if (m->n_enters == m->cap_enters) {
        int cap = m->cap_enters ? 2 * m->cap_enters : 4;
        fake_enter_entry *e = cfx_realloc(m->enters, (size_t)cap * sizeof *e);
        if (!e)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        m->enters = e;
        m->cap_enters = cap;
    }
    cfx_mode *prev = cfx_mode_unset(CFX_MODE_FAKE);
    bool live = prev != &m->base;
    m->enters[m->n_enters++] = (fake_enter_entry){live, live ? prev : NULL};
    return cfx_mode_set(&m->base, CFX_MODE_FAKE);
}

int cfx_fake_mode_exit(cfx_fake_mode *m)
{
    if (!m)
        return CFX_ERR;
    if (m->n_enters == 0)
        return cfx_error_set(CFX_ERR, NULL, "cfx_fake_mode_exit: FakeTensorMode was not entered");
    fake_enter_entry e = m->enters[--m->n_enters];
    if (!e.live)
        return CFX_OK;
    int rc = cfx_mode_exit(&m->base);
    if (e.prev && rc == CFX_OK)
        rc = cfx_mode_set(e.prev, CFX_MODE_FAKE);
    return rc;
}

/* ------------------------------------------------------------------ queries */

cfx_fake_mode *cfx_tensor_fake_mode(const cfx_tensor *t)
{
    return cfx_tensor_is_fake(t) ? (cfx_fake_mode *)t->ext.mode : NULL;
}

/* ------------------------------------------------------------------ conversions */

/* A reference owned by the caller whatever the scope state (tensor.c autoreleases what it
 * makes when a scope is open). */
static cfx_tensor *own(cfx_tensor *t) { return t && cfx_scope_depth() > 0 ? cfx_tensor_retain(t) : t; }

static int grow(void **arr, int *cap, size_t elem)
{
    int nc = *cap ? 2 * *cap : 8;
    void *p = cfx_realloc(*arr, (size_t)nc * elem);
    if (!p)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *arr = p;
    *cap = nc;
    return CFX_OK;
}

/* A fresh 1-d meta tensor whose storage has nbytes bytes, owned by the caller. */
static cfx_tensor *new_base(const cfx_tensor *real)
{
    size_t isz = cfx_dtype_size((cfx_dtype)real->dtype);
    size_t nbytes = real->storage ? real->storage->nbytes : 0;
    int64_t n = (int64_t)((nbytes + isz - 1) / isz);
    cfx_tensor *base = own(cfx_tensor_new(&n, 1, (cfx_dtype)real->dtype, cfx_device_make(CFX_DEVICE_META)));
    if (base)
        base->storage->nbytes = nbytes;
    return base;
}

static cfx_tensor *make_fake(cfx_fake_mode *m, cfx_tensor *real, bool memoize)
{
    cfx_tensor *base = NULL;
    bool own_base = true;
    if (memoize) {
        for (int i = 0; i < m->n_smemo; i++)
            if (m->smemo[i].real == real->storage) {
                base = m->smemo[i].base;
                own_base = false;
                break;
            }
    }
    if (!base) {
        base = new_base(real);
        if (!base)
            return NULL;
        if (memoize && (m->n_smemo < m->cap_smemo ||
                        grow((void **)&m->smemo, &m->cap_smemo, sizeof *m->smemo) == CFX_OK)) {
            m->smemo[m->n_smemo++] = (fake_storage_entry){real->storage, base};
            own_base = false;
        }
    }
    cfx_tensor *fake = cfx_tensor_new_view(base, real->sizes, real->strides, real->ndim, real->storage_offset);
    if (own_base)
        cfx_tensor_release(base); /* the view holds the storage */
    if (!fake)
        return NULL;
    if (cfx_fake_mark(m, fake, cfx_tensor_fake_device(real)) != CFX_OK) {
        if (cfx_scope_depth() == 0)
            cfx_tensor_release(fake);
        return NULL;
    }
    return fake;
}

cfx_tensor *cfx_fake_from_real_unmemoized(cfx_fake_mode *m, cfx_tensor *real)
{
    return make_fake(m, real, false);
}

cfx_tensor *cfx_fake_from_tensor(cfx_fake_mode *m, cfx_tensor *real)
{
    if (!m || !real)
        return NULL;
    if (cfx_fake_is_ours(m, real))
        return cfx_autorelease(cfx_tensor_retain(real));
    for (int i = 0; i < m->n_memo; i++)
        if (m->memo[i].real == real)
            return cfx_autorelease(cfx_tensor_retain(m->memo[i].fake));
    if (m->n_memo == m->cap_memo && grow((void **)&m->memo, &m->cap_memo, sizeof *m->memo) != CFX_OK)
        return NULL;
    cfx_tensor *fake = make_fake(m, real, true);
    if (!fake)
        return NULL;
    m->memo[m->n_memo++] = (fake_memo_entry){cfx_tensor_retain(real), own(fake)};
    /* `fake` as made is the caller's reference (or the scope's); the memo took its own. */
    if (cfx_scope_depth() == 0)
        cfx_tensor_retain(fake);
    return fake;
}
