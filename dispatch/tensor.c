/* tensor.c - tensor headers and storages: creation, views, refcounts, element access.
 *
 * A tensor is a small header (sizes, strides, offset, dtype, device, key set) over a
 * refcounted storage, as PyTorch's TensorImpl over StorageImpl. Storage sizes, strides and
 * the errors for bad shapes follow c10 exactly (computeStorageNbytes, check_size_nonnegative,
 * setStorage's bounds check), because fake tensors and meta kernels reason about storage
 * sizes and must agree with PyTorch about which views are legal.
 *
 * Model code makes and drops tensors at a high rate, most of them meta or fake tensors whose
 * whole cost is the header. So a fresh tensor's storage is part of its header (one allocation,
 * not two), and headers are recycled through a small per-thread free list instead of going
 * back to malloc; a tensor may die on another thread than it was born on, in which case its
 * memory simply joins that thread's list. A header whose tensor dies while views still hold
 * its storage stays out of the list until the last of them lets go. The lists are emptied when
 * their thread exits (a pthread key destructor).
 *
 * The live-tensor count (for leak tests) is kept per thread, without atomic read-modify-write
 * on the hot path; cfx_tensor_live_count sums the threads' counts under a lock, and a thread's
 * count is folded into a global one when it exits.
 *
 * Every function that makes a tensor hands it to cfx_autorelease (scope.h), so a tensor made
 * inside a scope is owned by the scope, and one made outside any scope by the caller.
 *
 * A live header carries CFX_TENSOR_MAGIC, cleared when it dies, so that a pointer of unknown
 * origin (what a C function returned under a signature it may not have) can be checked before
 * it is trusted (cfx_tensor_pointer_is_live). */
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "dispatch/fork_internal.h"
#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "dispatch/tensor_ext.h"
#include "dispatch/tensor_internal.h"
#include "dispatch/wrapped_internal.h"

/* ------------------------------------------------------------------ free lists */

/* A scope that ends releases its tensors in a burst; keeping up to 1024 headers per thread
 * (~220 KB) lets the next burst reuse them instead of going back to malloc. */
#define FREELIST_CAP 1024

typedef struct free_lists {
    cfx_tensor *tensors; /* linked through ->storage */
    /* Headers the list may still take: FREELIST_CAP minus its length on an armed thread, 0 on
     * one not armed. */
    int room;
    bool registered;     /* the thread-exit destructor is armed and the list is on the registry */
    /* Tensors this thread made minus those it freed (negative if it frees others' tensors).
     * Written only by its thread (a plain load and store), read by cfx_tensor_live_count. */
    _Atomic int64_t live;
    struct free_lists *prev, *next; /* the registry of armed threads */
} free_lists;

static _Thread_local free_lists fl;
static pthread_key_t fl_key;
static pthread_once_t fl_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static free_lists *registry;
static int64_t exited_live; /* the counts of threads that have exited; under registry_lock */
__attribute__((constructor)) static void registry_lock_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_LEAF, &registry_lock); }

static void drain(void *unused)
{
    (void)unused;
    while (fl.tensors) {
        cfx_tensor *t = fl.tensors;
        fl.tensors = (cfx_tensor *)t->storage;
        cfx_free(t);
    }
    fl.room = 0; /* unarmed, below */
    pthread_mutex_lock(&registry_lock);
    exited_live += atomic_load_explicit(&fl.live, memory_order_relaxed);
    atomic_store_explicit(&fl.live, 0, memory_order_relaxed);
    if (fl.prev)
        fl.prev->next = fl.next;
    else
        registry = fl.next;
    if (fl.next)
        fl.next->prev = fl.prev;
    fl.prev = fl.next = NULL;
    pthread_mutex_unlock(&registry_lock);
    /* A destructor that runs after this one (a scope's) may refill the list or count tensors;
     * it re-arms. */
    fl.registered = false;
}

static void make_key(void) { pthread_key_create(&fl_key, drain); }

/* Arms the thread: its destructor, and its count on the registry. Before a thread's first
 * header goes on its list or its count first changes. */
static void arm(void)
{
    pthread_once(&fl_once, make_key);
    pthread_setspecific(fl_key, &fl);
    pthread_mutex_lock(&registry_lock);
    fl.prev = NULL;
    fl.next = registry;
    if (registry)
        registry->prev = &fl;
    registry = &fl;
    pthread_mutex_unlock(&registry_lock);
    fl.registered = true;
    fl.room = FREELIST_CAP; /* the list is empty: nothing goes on it before the thread is armed */
}

static inline void count_live(int64_t d)
{
    if (!fl.registered)
        arm();
    atomic_store_explicit(&fl.live, atomic_load_explicit(&fl.live, memory_order_relaxed) + d,
                          memory_order_relaxed);
}

int64_t cfx_tensor_live_count(void)
{
    pthread_mutex_lock(&registry_lock);
    int64_t n = exited_live;
    for (free_lists *l = registry; l; l = l->next)
        n += atomic_load_explicit(&l->live, memory_order_relaxed);
    pthread_mutex_unlock(&registry_lock);
    return n;
}

/* A header to fill in. What every dead header has anyway is set once, when it is first
 * allocated, and kept while it waits on the list: its dims point at its inline slots
 * (header_drop puts them back) and its mode state is empty (cfx_tensor_ext_drop empties
 * it). */
static cfx_tensor *header_get(void)
{
    cfx_tensor *t = fl.tensors;
    if (t) {
        fl.tensors = (cfx_tensor *)t->storage;
        fl.room++;
        return t;
    }
    t = cfx_malloc(sizeof(cfx_tensor));
    if (t) {
        t->sizes = t->dims_inline;
        t->strides = t->dims_inline + CFX_INLINE_DIMS;
        cfx_tensor_ext_init(&t->ext);
    }
    return t;
}

/* The thread is armed (count_live ran when the tensor died), and t's mode state is empty, as
 * make() expects of a recycled header. */
static void header_put(cfx_tensor *t)
{
    if (fl.room <= 0) {
        cfx_free(t);
        return;
    }
    t->storage = (cfx_storage *)fl.tensors;
    fl.tensors = t;
    fl.room--;
}

/* Drops a reference to s; the last one frees its data and, its own tensor being dead by then
 * (it held a reference while alive), the header it lives in. */
static void storage_release(cfx_storage *s)
{
    if (--s->refcount > 0)
        return;
    if (s->data)
        cfx_free(s->data);
    header_put((cfx_tensor *)((char *)s - offsetof(cfx_tensor, own_storage)));
}

/* ------------------------------------------------------------------ shape arithmetic */

static void put_dims(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_putc(b, '[');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, i ? ", %lld" : "%lld", (long long)d[i]);
    cfx_buf_putc(b, ']');
}

/* Records an error whose message is prefix + "[2, 3]" (+ mid + "[3, 1]"). */
static void dims_error(const char *prefix, const int64_t *a, int n, const char *mid,
                       const int64_t *b2)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, prefix);
    put_dims(&b, a, n);
    if (mid) {
        cfx_buf_puts(&b, mid);
        put_dims(&b, b2, n);
    }
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, NULL, msg ? msg : prefix);
    cfx_free(msg);
}

/* The largest storage c10 allows: it must fit both int64_t and size_t. */
static uint64_t storage_max(void)
{
    return (uint64_t)INT64_MAX < (uint64_t)SIZE_MAX ? (uint64_t)INT64_MAX : (uint64_t)SIZE_MAX;
}

static bool check_ndim(int ndim, const int64_t *sizes)
{
    if (ndim < 0 || ndim > CFX_MAX_DIMS) {
        cfx_error_set(CFX_ERR, NULL, "cfx tensors have between 0 and %d dimensions, got %d",
                      CFX_MAX_DIMS, ndim);
        return false;
    }
    if (ndim > 0 && !sizes) {
        cfx_error_set(CFX_ERR, NULL, "sizes is NULL for a tensor of %d dimensions", ndim);
        return false;
    }
    return true;
}

/* c10::check_size_nonnegative */
static bool check_sizes(const int64_t *sizes, int ndim)
{
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "Trying to create tensor with negative dimension %lld: ",
                     (long long)sizes[i]);
            dims_error(prefix, sizes, ndim, NULL, NULL);
            return false;
        }
    return true;
}

/* computeStorageNbytesContiguous: a zero size does not excuse an overflow before it. */
static bool nbytes_contiguous(const int64_t *sizes, int ndim, size_t itemsize, uint64_t *out)
{
    uint64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < ndim; i++)
        overflow |= __builtin_mul_overflow(n, (uint64_t)sizes[i], &n);
    overflow |= __builtin_mul_overflow(n, (uint64_t)itemsize, &n);
    overflow |= n > storage_max();
    *out = n;
    return !overflow;
}

/* computeStorageNbytes: one past the furthest element, in bytes; 0 if any size is 0. */
static bool nbytes_strided(const int64_t *sizes, const int64_t *strides, int ndim,
                           size_t itemsize, int64_t offset, uint64_t *out)
{
    uint64_t n = (uint64_t)offset + 1;
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) {
            *out = 0;
            return true;
        }
        uint64_t span;
        overflow |= __builtin_mul_overflow(strides[i], sizes[i] - 1, &span);
        overflow |= __builtin_add_overflow(n, span, &n);
    }
    overflow |= __builtin_mul_overflow(n, (uint64_t)itemsize, &n);
    overflow |= n > storage_max();
    *out = n;
    return !overflow;
}

/* c10's contiguous stride computation overflows (int64) where a stride does not fit, which
 * PyTorch 2.13 refuses ("Stride calculation overflowed") even for an empty tensor whose storage
 * size is 0: [0, 2^40, 2^30] would need the stride 2^70. Size-0 and size-1 dims do not scale. */
static bool contiguous_strides_overflow(const int64_t *sizes, int ndim)
{
    int64_t z = 1;
    for (int d = ndim - 1; d > 0; d--)
        if (__builtin_mul_overflow(z, sizes[d] > 1 ? sizes[d] : 1, &z))
            return true;
    return false;
}

void cfx_contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides_out)
{
    /* Size-0 and size-1 dims do not scale. Sizes whose strides would overflow never get
     * here from make(), which refuses them. */
    uint64_t z = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides_out[d] = (int64_t)z;
        z *= sizes[d] > 1 ? (uint64_t)sizes[d] : 1;
    }
}

int64_t cfx_tensor_numel(const cfx_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->sizes[d];
    return n;
}

/* c10's compute_contiguous: size-1 dims are ignored, an empty tensor is contiguous. */
bool cfx_tensor_is_contiguous(const cfx_tensor *t)
{
    if (cfx_tensor_numel(t) == 0)
        return true;
    int64_t z = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->sizes[d] == 1)
            continue;
        if (t->strides[d] != z)
            return false;
        z *= t->sizes[d];
    }
    return true;
}

/* ------------------------------------------------------------------ creation */

/* The key set of a new tensor depends only on its device; computing it takes a handful of
 * calls into keys.c, so it is computed once per device (0 = not yet; a real key set is never
 * empty). */
static _Atomic uint64_t keys_cache[2];

static cfx_keyset keys_for(cfx_device d)
{
    int meta = d.type == CFX_DEVICE_META;
    uint64_t r = atomic_load_explicit(&keys_cache[meta], memory_order_relaxed);
    if (!r) {
        r = cfx_keyset_for_tensor(meta ? CFX_BACKEND_META : CFX_BACKEND_CPU).repr;
        atomic_store_explicit(&keys_cache[meta], r, memory_order_relaxed);
    }
    return (cfx_keyset){r};
}

/* dst[0..n) = src[0..n). Headers mostly hold up to 4 dims: those are copied by plain stores,
 * which cost less than a call to memcpy for 8 to 32 bytes (twice per tensor made). */
static inline void copy_dims(int64_t *dst, const int64_t *src, int n)
{
    switch (n) {
    case 4: dst[3] = src[3]; /* fall through */
    case 3: dst[2] = src[2]; /* fall through */
    case 2: dst[1] = src[1]; /* fall through */
    case 1: dst[0] = src[0]; /* fall through */
    case 0: return;
    default: memcpy(dst, src, (size_t)n * sizeof *src);
    }
}

/* A header with sizes/strides copied in (strides NULL: contiguous), no storage, not yet
 * autoreleased. Dims of up to 4 dimensions live in the header. */
static cfx_tensor *header_new(const int64_t *sizes, const int64_t *strides, int ndim,
                              cfx_dtype dtype, cfx_device device)
{
    cfx_tensor *t = header_get(); /* dims inline, mode state empty */
    if (!t)
        goto oom;
    if (ndim > CFX_INLINE_DIMS) {
        int64_t *dims = cfx_malloc(2 * (size_t)ndim * sizeof(int64_t));
        if (!dims) {
            cfx_free(t); /* not counted yet, so not header_put */
            goto oom;
        }
        t->sizes = dims;
        t->strides = dims + ndim;
    }
    t->magic = CFX_TENSOR_MAGIC;
    t->refcount = 1;
    t->dtype = (int8_t)dtype;
    t->ndim = (int8_t)ndim;
    t->device = device;
    t->is_wrapped_number = false;
    t->storage_offset = 0;
    t->storage = NULL;
    t->keys = keys_for(device);
    copy_dims(t->sizes, sizes, ndim);
    if (strides) {
        copy_dims(t->strides, strides, ndim);
    } else {
        cfx_contiguous_strides(sizes, ndim, t->strides);
    }
    count_live(1);
    return t;
oom:
    cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory allocating a tensor header");
    return NULL;
}

/* Takes back the header of a tensor that died (or never got a storage); its dims go back
 * to the inline slots, as header_get hands headers out. */
static void header_drop(cfx_tensor *t)
{
    if (t->sizes != t->dims_inline) {
        cfx_free(t->sizes);
        t->sizes = t->dims_inline;
        t->strides = t->dims_inline + CFX_INLINE_DIMS;
    }
    t->magic = 0;
    count_live(-1);
}

/* Gives a new header its own storage of nbytes. false + error (header freed) if CPU data
 * cannot be allocated; CPU data is zero-filled and never NULL, even for 0 bytes, so kernels
 * may memcpy from it unconditionally. */
static bool storage_init(cfx_tensor *t, uint64_t nbytes, cfx_device device)
{
    cfx_storage *s = &t->own_storage;
    s->refcount = 1;
    s->version = 0;
    s->nbytes = (size_t)nbytes;
    s->device = device;
    s->data = NULL;
    t->storage = s;
    if (device.type == CFX_DEVICE_META || (s->data = cfx_calloc(nbytes ? (size_t)nbytes : 1, 1)))
        return true;
    cfx_error_set(CFX_ERR_NOMEM, NULL, "DefaultCPUAllocator: not enough memory: you tried to allocate %llu bytes.",
                  (unsigned long long)nbytes);
    header_drop(t);
    header_put(t);
    return false;
}

static bool check_dtype_device(cfx_dtype dtype, cfx_device device)
{
    if (!cfx_dtype_valid(dtype)) {
        cfx_error_set(CFX_ERR, NULL, "invalid dtype code %d", (int)dtype);
        return false;
    }
    if (!cfx_device_type_valid(device.type)) {
        cfx_error_set(CFX_ERR, NULL, "invalid device type %d", (int)device.type);
        return false;
    }
    return true;
}

/* The storage size of a new tensor, with every check and PyTorch's error texts. */
static bool checked_nbytes(const int64_t *sizes, const int64_t *strides, int ndim, cfx_dtype dtype,
                           cfx_device device, uint64_t *nbytes)
{
    if (!check_ndim(ndim, sizes) || !check_dtype_device(dtype, device))
        return false;
    size_t itemsize = cfx_dtype_size(dtype);
    if (!check_sizes(sizes, ndim))
        return false;
    if (!strides) {
        if (!nbytes_contiguous(sizes, ndim, itemsize, nbytes)) {
            dims_error("Storage size calculation overflowed with sizes=", sizes, ndim, NULL, NULL);
            return false;
        }
        if (contiguous_strides_overflow(sizes, ndim)) {
            cfx_error_set(CFX_ERR, NULL, "Stride calculation overflowed");
            return false;
        }
    } else if (!nbytes_strided(sizes, strides, ndim, itemsize, 0, nbytes)) {
        /* PyTorch's meta empty_strided does not check (it even takes negative strides); a
         * meta storage holds no data, so its size is only clamped. */
        if (device.type != CFX_DEVICE_META) {
            dims_error("Storage size calculation overflowed with sizes=", sizes, ndim,
                       " and strides=", strides);
            return false;
        }
        *nbytes = storage_max();
    }
    return true;
}

/* A new tensor with its own storage (strides NULL: contiguous). */
static cfx_tensor *make(const int64_t *sizes, const int64_t *strides, int ndim, cfx_dtype dtype,
                        cfx_device device)
{
    uint64_t nbytes;
    if (!checked_nbytes(sizes, strides, ndim, dtype, device, &nbytes))
        return NULL;
    return cfx_tensor_new_recorded(sizes, strides, ndim, dtype, device, nbytes);
}

cfx_tensor *cfx_tensor_new_recorded(const int64_t *sizes, const int64_t *strides, int ndim, cfx_dtype dtype,
                                    cfx_device device, uint64_t nbytes)
{
    cfx_tensor *t = header_new(sizes, strides, ndim, dtype, device);
    if (!t || !storage_init(t, nbytes, device))
        return NULL;
    return cfx_autorelease(t);
}

cfx_tensor *cfx_tensor_new(const int64_t *sizes, int ndim, cfx_dtype dtype, cfx_device device)
{
    return make(sizes, NULL, ndim, dtype, device);
}

cfx_tensor *cfx_tensor_new_strided(const int64_t *sizes, const int64_t *strides, int ndim,
                                   cfx_dtype dtype, cfx_device device)
{
    if (ndim > 0 && !strides) {
        cfx_error_set(CFX_ERR, NULL, "strides is NULL for a tensor of %d dimensions", ndim);
        return NULL;
    }
    return make(sizes, strides ? strides : sizes, ndim, dtype, device);
}

cfx_tensor *cfx_tensor_new_view(cfx_tensor *t, const int64_t *sizes, const int64_t *strides,
                                int ndim, int64_t storage_offset)
{
    if (!t)
        return NULL;
    if (!check_ndim(ndim, sizes))
        return NULL;
    if (ndim > 0 && !strides) {
        cfx_error_set(CFX_ERR, NULL, "strides is NULL for a tensor of %d dimensions", ndim);
        return NULL;
    }
    if (storage_offset < 0) {
        cfx_error_set(CFX_ERR, NULL, "Tensor: invalid storage offset %lld", (long long)storage_offset);
        return NULL;
    }
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0) {
            dims_error("as_strided: Negative strides are not supported at the moment, got strides: ",
                       strides, ndim, NULL, NULL);
            return NULL;
        }
    size_t itemsize = cfx_dtype_size((cfx_dtype)t->dtype);
    uint64_t need;
    if (!nbytes_strided(sizes, strides, ndim, itemsize, storage_offset, &need)) {
        dims_error("Storage size calculation overflowed with sizes=", sizes, ndim,
                   " and strides=", strides);
        return NULL;
    }
    if (need > t->storage->nbytes) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "setStorage: sizes ");
        put_dims(&b, sizes, ndim);
        cfx_buf_puts(&b, ", strides ");
        put_dims(&b, strides, ndim);
        cfx_buf_printf(&b, ", storage offset %lld, and itemsize %zu requiring a storage size of %llu "
                           "are out of bounds for storage of size %zu",
                       (long long)storage_offset, itemsize, (unsigned long long)need,
                       t->storage->nbytes);
        char *msg = cfx_buf_take(&b);
        cfx_error_set_text(CFX_ERR, NULL, msg ? msg : "setStorage: out of bounds");
        cfx_free(msg);
        return NULL;
    }
    cfx_tensor *v = header_new(sizes, strides, ndim, (cfx_dtype)t->dtype, t->device);
    if (!v)
        return NULL;
    v->keys = t->keys;
    v->storage_offset = storage_offset;
    v->storage = t->storage;
    v->storage->refcount++;
    return cfx_autorelease(v);
}

static cfx_tensor *from_data(const void *data, const int64_t *sizes, int ndim, cfx_dtype dtype)
{
    cfx_tensor *t = make(sizes, NULL, ndim, dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (t && data)
        memcpy(t->storage->data, data, t->storage->nbytes);
    return t;
}

cfx_tensor *cfx_tensor_from_floats(const float *data, const int64_t *sizes, int ndim)
{
    return from_data(data, sizes, ndim, CFX_FLOAT32);
}

cfx_tensor *cfx_tensor_from_doubles(const double *data, const int64_t *sizes, int ndim)
{
    return from_data(data, sizes, ndim, CFX_FLOAT64);
}

cfx_tensor *cfx_tensor_from_int64s(const int64_t *data, const int64_t *sizes, int ndim)
{
    return from_data(data, sizes, ndim, CFX_INT64);
}

/* double -> integer without undefined behaviour: NaN is 0, out-of-range values saturate. */
static int64_t to_int64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

cfx_tensor *cfx_tensor_scalar_double(double v, cfx_dtype dtype)
{
    cfx_tensor *t = make(NULL, NULL, 0, dtype, cfx_device_make(CFX_DEVICE_CPU));
    if (!t)
        return NULL;
    void *p = t->storage->data;
    switch (dtype) {
    case CFX_FLOAT32: *(float *)p = (float)v; break;
    case CFX_FLOAT64: *(double *)p = v; break;
    case CFX_INT64: *(int64_t *)p = to_int64(v); break;
    case CFX_INT32: {
        int64_t i = to_int64(v);
        *(int32_t *)p = (int32_t)(i > INT32_MAX ? INT32_MAX : i < INT32_MIN ? INT32_MIN : i);
        break;
    }
    case CFX_BOOL: *(bool *)p = v != 0; break;
    case CFX_UINT8: *(uint8_t *)p = (uint8_t)to_int64(v); break;
    case CFX_INT8: *(int8_t *)p = (int8_t)to_int64(v); break;
    case CFX_INT16: *(int16_t *)p = (int16_t)to_int64(v); break;
    case CFX_COMPLEX64: ((float *)p)[0] = (float)v, ((float *)p)[1] = 0; break;
    case CFX_COMPLEX128: ((double *)p)[0] = v, ((double *)p)[1] = 0; break;
    }
    return t;
}

/* ------------------------------------------------------------------ lifetime */

cfx_tensor *cfx_tensor_retain(cfx_tensor *t)
{
    if (t)
        t->refcount++;
    return t;
}

void cfx_tensor_free_unreferenced(cfx_tensor *t)
{
    cfx_tensor_ext_drop(&t->ext); /* bindings and mode reference (tensor_ext.h) */
    if (t->is_wrapped_number)
        cfx_wrapped_number_died(); /* only a tensor that lived can be one */
    header_drop(t);
    cfx_storage *s = t->storage;
    if (s == &t->own_storage) {
        /* the header goes with its storage: now, or when the last view lets go */
        storage_release(s);
        return;
    }
    if (s)
        storage_release(s);
    header_put(t);
}

void cfx_tensor_release(cfx_tensor *t) { cfx_tensor_unref(t); }

bool cfx_tensor_pointer_is_live(const void *p)
{
    if (!p || (uintptr_t)p % _Alignof(cfx_tensor))
        return false;
    /* The header's first fields (magic, refcount) are copied through a pipe, which fails with
     * EFAULT instead of faulting when the memory is not readable; only the copy is looked at.
     * Copying no further keeps the padding after them (never written) out of the syscall. */
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    struct { uint32_t magic; int32_t refcount; } copy;
    _Static_assert(offsetof(cfx_tensor, magic) == 0 && offsetof(cfx_tensor, refcount) == 4,
                   "magic and refcount lead the tensor header");
    bool ok = write(fds[1], p, sizeof copy) == (ssize_t)sizeof copy &&
              read(fds[0], &copy, sizeof copy) == (ssize_t)sizeof copy;
    close(fds[0]);
    close(fds[1]);
    return ok && copy.magic == CFX_TENSOR_MAGIC && copy.refcount > 0;
}

/* ------------------------------------------------------------------ data access */

void *cfx_tensor_data(const cfx_tensor *t)
{
    if (!t->storage || !t->storage->data)
        return NULL;
    return (char *)t->storage->data + t->storage_offset * (int64_t)cfx_dtype_size((cfx_dtype)t->dtype);
}

double cfx_tensor_get_double(const cfx_tensor *t, int64_t linear_index)
{
    int64_t numel = cfx_tensor_numel(t);
    if (linear_index < 0 || linear_index >= numel) {
        cfx_error_set(CFX_ERR, NULL, "index %lld is out of bounds for a tensor of %lld elements",
                      (long long)linear_index, (long long)numel);
        return NAN;
    }
    if (!t->storage->data) {
        cfx_error_set(CFX_ERR, NULL, "Cannot read the data of a meta tensor");
        return NAN;
    }
    int64_t off = t->storage_offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += linear_index % t->sizes[d] * t->strides[d];
        linear_index /= t->sizes[d];
    }
    const char *p = t->storage->data;
    switch ((cfx_dtype)t->dtype) {
    case CFX_FLOAT32: return ((const float *)p)[off];
    case CFX_FLOAT64: return ((const double *)p)[off];
    case CFX_INT64: return (double)((const int64_t *)p)[off];
    case CFX_INT32: return ((const int32_t *)p)[off];
    case CFX_BOOL: return ((const bool *)p)[off];
    case CFX_UINT8: return ((const uint8_t *)p)[off];
    case CFX_INT8: return ((const int8_t *)p)[off];
    case CFX_INT16: return ((const int16_t *)p)[off];
    case CFX_COMPLEX64: return ((const float *)p)[2 * off]; /* the real part */
    case CFX_COMPLEX128: return ((const double *)p)[2 * off];
    }
    return NAN;
}

void cfx_tensor_bump_version(cfx_tensor *t)
{
    if (t)
        t->storage->version++;
}

/* TensorImpl::set_sizes_and_strides for the in-place views (squeeze_, unsqueeze_): the
 * header keeps its identity (every holder sees the new shape, as in PyTorch) and its dims move
 * between the inline slots and the heap as the rank crosses CFX_INLINE_DIMS. */
bool cfx_tensor_set_geometry(cfx_tensor *t, const int64_t *sizes, const int64_t *strides, int ndim)
{
    int64_t tmp[2 * CFX_MAX_DIMS]; /* sizes/strides may point into t's own dims */
    copy_dims(tmp, sizes, ndim);
    copy_dims(tmp + ndim, strides, ndim);
    int64_t *dims = t->dims_inline;
    if (ndim > CFX_INLINE_DIMS) {
        dims = cfx_malloc(2 * (size_t)ndim * sizeof *dims);
        if (!dims) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory resizing a tensor header");
            return false;
        }
    }
    if (t->sizes != t->dims_inline)
        cfx_free(t->sizes);
    t->sizes = dims;
    t->strides = ndim > CFX_INLINE_DIMS ? dims + ndim : dims + CFX_INLINE_DIMS;
    t->ndim = (int8_t)ndim;
    copy_dims(t->sizes, tmp, ndim);
    copy_dims(t->strides, tmp + ndim, ndim);
    t->ext.fake_meta = NULL; /* the fake's record no longer describes it */
    return true;
}

void cfx_tensor_print_sizes(const cfx_tensor *t, cfx_buf *b) { put_dims(b, t->sizes, t->ndim); }
