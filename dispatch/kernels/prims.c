/* prims.c - torch/_prims_common, torch/_prims and torch/_refs helpers on metadata (prims.h).
 *
 * Each function transcribes its Python original (PyTorch 2.13), including the odd corners
 * that decide observable results: _broadcast_shapes reports the common shape as far as it
 * got, the elementwise permutation treats a tensor that is both contiguous and channels-last
 * as neither and sorts, ge() in its comparator also accepts "a multiple of", and a reduction
 * with keepdim re-inserts its dims through broadcast_in_dim's stride rule rather than as
 * contiguous ones. Strides are never negative (PyTorch has no negative strides), so Python's
 * modulo and C's agree on them; pymod keeps Python's anyway. */
#include <stdlib.h>

#include "dispatch/error.h"
#include "dispatch/kernels/geometry.h"
#include "dispatch/kernels/prims.h"

/* A few dims at a time: plain loops, which for the usual 1-4 dims cost less than memcpy
 * calls (these run for every operand of every traced elementwise op). */
static void copy_dims(int64_t *dst, const int64_t *src, int n)
{
    for (int i = 0; i < n; i++)
        dst[i] = src[i];
}

void cfx_tmeta_copy(cfx_tmeta *dst, const cfx_tmeta *src)
{
    dst->ndim = src->ndim;
    dst->dtype = src->dtype;
    dst->device = src->device;
    dst->sizes = src->sizes;
    dst->strides = src->strides;
    if (src->sizes == src->own_sizes) {
        copy_dims(dst->own_sizes, src->sizes, src->ndim);
        dst->sizes = dst->own_sizes;
    }
    if (src->strides == src->own_strides) {
        copy_dims(dst->own_strides, src->strides, src->ndim);
        dst->strides = dst->own_strides;
    }
}

cfx_tensor *cfx_tmeta_new_tensor(const cfx_tmeta *m)
{
    return cfx_tensor_new_strided(m->sizes, m->strides, m->ndim, m->dtype, m->device);
}

/* ---- Python number types ------------------------------------------------------------------- */

bool cfx_pytype_of_value(cfx_value v, cfx_pytype *out)
{
    switch (v.kind) {
    case CFX_V_BOOL: *out = CFX_PY_BOOL; return true;
    case CFX_V_INT: *out = CFX_PY_INT; return true;
    case CFX_V_DOUBLE: *out = CFX_PY_FLOAT; return true;
    default: return false;
    }
}

const char *cfx_pytype_repr(cfx_pytype t)
{
    static const char *const names[] = {"<class 'bool'>", "<class 'int'>", "<class 'float'>", "<class 'complex'>"};
    return names[t];
}

/* ---- dtypes -------------------------------------------------------------------------------- */

void cfx_prims_elementwise_dtypes(const cfx_tmeta *const *ts, int n, const cfx_pytype *nums, int nn,
                                  cfx_promotion kind, cfx_dtype *compute, cfx_dtype *result)
{
    /* One pass: the highest Python type among the tensors, and for that type alone the highest
     * dtype among tensors with dimensions and among 0-dim ones (_find_highest_dtype_filtered
     * looks only at the highest type's dtypes, and prefers the former); a tensor of a higher
     * type starts both over. -1: none yet. */
    cfx_pytype highest = CFX_PY_BOOL;
    int dims_best = -1, zero_best = -1;
    for (int i = 0; i < n; i++) {
        cfx_dtype dt = ts[i]->dtype;
        cfx_pytype t = cfx_pytype_of_dtype(dt);
        if (t < highest)
            continue;
        if (t > highest) {
            highest = t;
            dims_best = zero_best = -1;
        }
        int *slot = ts[i]->ndim ? &dims_best : &zero_best;
        if (*slot != (int)dt) /* promote_types(d, d) is d */
            *slot = *slot < 0 ? (int)dt : (int)cfx_dtype_promote((cfx_dtype)*slot, dt);
    }
    if (highest == CFX_PY_COMPLEX) { /* float tensors count too, as their complex dtypes */
        dims_best = zero_best = -1;
        for (int i = 0; i < n; i++) {
            int dt = cfx_dtype_to_complex(ts[i]->dtype);
            if (dt < 0)
                continue;
            int *slot = ts[i]->ndim ? &dims_best : &zero_best;
            *slot = *slot < 0 ? dt : (int)cfx_dtype_promote((cfx_dtype)*slot, (cfx_dtype)dt);
        }
    }
    cfx_pytype tensors_highest = highest;
    for (int i = 0; i < nn; i++)
        highest = nums[i] > highest ? nums[i] : highest;
    cfx_dtype r = CFX_BOOL;
    if (highest != CFX_PY_BOOL) {
        int h = highest != tensors_highest ? -1 : dims_best >= 0 ? dims_best : zero_best;
        /* no tensor of that type: the default dtype of the number's type */
        r = h >= 0                       ? (cfx_dtype)h
            : highest == CFX_PY_FLOAT   ? CFX_FLOAT32
            : highest == CFX_PY_COMPLEX ? CFX_COMPLEX64
                                        : CFX_INT64;
    }
    if (kind == CFX_PROMOTE_INT_TO_FLOAT && cfx_pytype_of_dtype(r) < CFX_PY_FLOAT)
        r = CFX_FLOAT32; /* torch.get_default_dtype() */
    *compute = r;        /* get_computation_dtype is the identity without low-precision floats */
    *result = kind == CFX_PROMOTE_ALWAYS_BOOL ? CFX_BOOL : r;
}

void cfx_prims_to_copy(cfx_tmeta *t, cfx_dtype dt)
{
    int64_t st[CFX_MAX_DIMS];
    cfx_geom_preserve_strides(t->sizes, t->strides, t->ndim, st);
    copy_dims(t->own_strides, st, t->ndim);
    t->strides = t->own_strides;
    t->dtype = dt;
}

void cfx_prims_contiguous(cfx_tmeta *t)
{
    /* _prims_common.is_contiguous is TensorImpl's compute_contiguous */
    if (!cfx_geom_is_contiguous(t->sizes, t->strides, t->ndim)) {
        cfx_geom_contiguous_strides(t->sizes, t->ndim, t->own_strides);
        t->strides = t->own_strides;
    }
}

/* ---- broadcasting ---------------------------------------------------------------------------- */

void cfx_prims_put_size(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_puts(b, "torch.Size(");
    cfx_geom_put_dims(b, d, n);
    cfx_buf_putc(b, ')');
}

void cfx_prims_put_tuple(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_putc(b, '(');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, i ? ", %lld" : "%lld", (long long)d[i]);
    cfx_buf_puts(b, n == 1 ? ",)" : ")");
}

static void broadcast_error(const char *op, int64_t len, int idx, int arg, const int64_t *shape, int n,
                            const int64_t *common, int nc)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "Attempting to broadcast a dimension of length %lld at %d! Mismatching argument at index %d had ",
                   (long long)len, idx, arg);
    cfx_prims_put_size(&b, shape, n);
    cfx_buf_puts(&b, "; but expected shape should be broadcastable to ");
    cfx_geom_put_dims(&b, common, nc);
    char *msg = cfx_buf_take(&b);
    cfx_error_set_text(CFX_ERR, op, msg ? msg : "Attempting to broadcast a dimension");
    cfx_free(msg);
}

/* The common shape is kept by reference, so that the usual case copies no dims: NULL while it
 * is still the all-ones start, one of the shapes while no turn has had to write into it, buf
 * once one has. Two turns need no loop: the first full-length shape's turn on the all-ones
 * start leaves exactly that shape (the check for a negative length cannot fire: the shapes are
 * tensors'), and a shape that is the common array itself changes nothing. A write only ever
 * turns a 1 of the common shape into a length, so a shape that is the common one after its
 * turn stays so unless a later turn writes: bit i of differs is set when shape i is shorter,
 * has a 1 against a length, or comes before the last turn that wrote. */
static bool broadcast_shapes(const char *op, const cfx_tmeta *const *ts, int n, int64_t *buf,
                             const int64_t **common, int *ndim, unsigned *differs)
{
    int nc = 0;
    for (int i = 0; i < n; i++)
        nc = ts[i]->ndim > nc ? ts[i]->ndim : nc;
    const int64_t *c = NULL;
    unsigned diff = 0;
    int last_write = -1;
    for (int arg = 0; arg < n; arg++) {
        const int64_t *shape = ts[arg]->sizes;
        int sn = ts[arg]->ndim;
        if (sn == nc) {
            if (!c) {
                c = shape;
                last_write = arg;
                continue;
            }
            if (c == shape)
                continue;
        } else {
            diff |= 1u << arg;
            if (!c) { /* a shorter shape before any full-length one: the start written out */
                for (int d = 0; d < nc; d++)
                    buf[d] = 1;
                c = buf;
            }
        }
        /* idx runs -1, -2, ... as in Python; the common shape is updated as it goes, and an
         * error shows it as far as it got (the errors are raised after the loops, which keeps
         * the loops' own work small) */
        for (int idx = -1; idx >= -sn; idx--) {
            int64_t s = shape[sn + idx], cv = c[nc + idx];
            if (s == cv)
                continue;
            if (cv == 1) {
                if (s < 0)
                    goto negative;
                if (c != buf) {
                    copy_dims(buf, c, nc);
                    c = buf;
                }
                buf[nc + idx] = s;
                last_write = arg;
                continue;
            }
            if (s != 1) {
                if (c != buf)
                    copy_dims(buf, c, nc);
                broadcast_error(op, s, idx, arg, shape, sn, buf, nc);
                return false;
            }
            diff |= 1u << arg;
        }
    }
    if (last_write > 0)
        diff |= (1u << last_write) - 1;
    if (!c) /* no shapes (n == 0): () */
        c = buf;
    *common = c;
    *ndim = nc;
    *differs = diff;
    return true;
negative:
    cfx_error_set(CFX_ERR, op, "Attempting to broadcast a dimension with negative length!");
    return false;
}

/* (broadcast_shapes is shared by this entry and _maybe_broadcast, in the same file so that the
 * compiler may fold it into each) */
bool cfx_prims_broadcast_shapes(const char *op, const cfx_tmeta *const *ts, int n, int64_t *buf,
                                const int64_t **common, int *ndim, unsigned *differs)
{
    return broadcast_shapes(op, ts, n, buf, common, ndim, differs);
}

void cfx_prims_expand(cfx_tmeta *t, const int64_t *shape, int ndim)
{
    /* Written into t's own arrays back to front: dim i reads t's dim i - lead <= i, not yet
     * written, so this is right also when t points at its own arrays already. A length that
     * changes (a 1 broadcast) gets stride 0. */
    const int64_t *sizes = t->sizes, *strides = t->strides;
    int64_t *os = t->own_sizes, *ost = t->own_strides;
    int tdim = t->ndim, lead = ndim - tdim;
    for (int i = ndim - 1; i >= lead; i--) {
        int64_t size = sizes[i - lead], stride = strides[i - lead];
        os[i] = shape[i];
        ost[i] = size == shape[i] ? stride : 0;
    }
    /* a new leading dim of length 1 gets the stride of the dims inside it, a 0-dim tensor's
     * (tdim == 0) gets 0 throughout; one of another length gets 0 */
    for (int i = lead - 1; i >= 0; i--) {
        os[i] = shape[i];
        ost[i] = shape[i] != 1 || tdim == 0 ? 0 : os[i + 1] * ost[i + 1];
    }
    t->ndim = ndim;
    t->sizes = os;
    t->strides = ost;
}

bool cfx_prims_maybe_broadcast(const char *op, cfx_tmeta *const *ts, int n)
{
    int64_t buf[CFX_MAX_DIMS];
    const int64_t *common;
    int nc;
    unsigned differs;
    if (!broadcast_shapes(op, (const cfx_tmeta *const *)ts, n, buf, &common, &nc, &differs))
        return false;
    /* should_expand is "differs"; a CPU scalar is kept as it is (preserve_cpu_scalar_tensors).
     * common may be one of the operands' sizes: expand writes only the expanded tmeta's own
     * arrays, and an operand that differs is not the one common points at. */
    for (int i = 0; differs; i++, differs >>= 1)
        if ((differs & 1) && !cfx_tmeta_is_cpu_scalar(ts[i]))
            cfx_prims_expand(ts[i], common, nc);
    return true;
}

/* ---- output layout ------------------------------------------------------------------------- */

static int64_t pymod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* the comparator's ge(a, b): "symbolically" a >= b for a, b >= 0 */
static bool ge(int64_t a, int64_t b)
{
    if (b == 0)
        return true;
    if (a == 0)
        return false;
    return a >= b || pymod(a, b) == 0;
}

static int should_swap(int ia, int ib, const int64_t *shape, const cfx_tmeta *const *ts, int n)
{
    for (int k = 0; k < n; k++) {
        int64_t sa = ts[k]->strides[ia], sb = ts[k]->strides[ib];
        if (sa == 0 || sb == 0)
            continue;
        if (sa == sb) {
            if (ge(shape[ib], shape[ia]))
                continue;
            return 1;
        }
        if (ge(sb, sa))
            return -1;
        if (ge(sa, sb))
            return 1;
    }
    /* all strides zero, or equal with equal lengths */
    return 0;
}

/* The permutation's insertion sort, for operands neither all contiguous nor all
 * channels-last: Python sorts reversed(range(ndim)) back to front and returns it reversed;
 * here the list is perm read from its end (Python's perm[k] is perm[ndim - 1 - k]), which
 * starts as range(ndim) and needs no reversing at the end. */
static void sort_perm(const cfx_tmeta *const *ts, int n, int ndim, int *perm)
{
    const int64_t *shape = ts[0]->sizes;
    int *back = perm + ndim - 1; /* back[-k] is Python's perm[k] */
    for (int i = 0; i < ndim; i++)
        perm[i] = i;
    for (int i = 1; i < ndim; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int c = should_swap(back[-dim0], back[-dim1], shape, ts, n);
            if (c > 0) {
                int t = back[-dim0];
                back[-dim0] = back[-dim1];
                back[-dim1] = t;
                dim1 = dim0;
            } else if (c < 0) {
                break;
            }
        }
    }
}

/* The fake fast path's two questions, asked of each operand in turn and, like Python's `and`,
 * not asked again once answered no: is every operand contiguous, is every one channels-last
 * contiguous (which only a 4-dim tensor can be). A caller keeps the answers in a word that
 * starts as LAYOUT_BOTH and is passed through layout_of once per operand, so that the prim can
 * ask them in its one pass over its arguments. */
enum { LAYOUT_CONTIGUOUS = 1, LAYOUT_CHANNELS_LAST = 2, LAYOUT_BOTH = 3 };

static inline unsigned layout_of(const cfx_tmeta *t, unsigned still)
{
    if ((still & LAYOUT_CONTIGUOUS) && !cfx_geom_is_contiguous(t->sizes, t->strides, t->ndim))
        still &= ~(unsigned)LAYOUT_CONTIGUOUS;
    if ((still & LAYOUT_CHANNELS_LAST) &&
        !(t->ndim == 4 && cfx_geom_is_channels_last_contiguous(t->sizes, t->strides, 4)))
        still &= ~(unsigned)LAYOUT_CHANNELS_LAST;
    return still;
}

/* The permutation when the fast path has not given the identity: channels-last's
 * [0, 2, ..., ndim-1, 1], or the sort's. */
static const int *ordered_perm(const cfx_tmeta *const *ts, int n, unsigned layout, int *perm)
{
    int ndim = ts[0]->ndim;
    if (layout != LAYOUT_CHANNELS_LAST) {
        sort_perm(ts, n, ndim, perm);
        return perm;
    }
    perm[0] = 0;
    for (int d = 1; d + 1 < ndim; d++)
        perm[d] = d + 1;
    perm[ndim - 1] = 1;
    return perm;
}

/* compute_elementwise_output_logical_to_physical_perm once the CPU scalars are filtered out:
 * ts[0..n) are the tensors left, all of one shape, and layout is their layout_of answers.
 * NULL stands for the identity, which is what the short-circuits for no tensors, for 0 and 1
 * dims and for all contiguous (and not all channels-last) give: [], [0], range(ndim); else
 * the permutation is written into perm (ndim entries). */
static inline const int *l2p_perm(const cfx_tmeta *const *ts, int n, unsigned layout, int *perm)
{
    if (n == 0 || ts[0]->ndim <= 1 || layout == LAYOUT_CONTIGUOUS)
        return NULL;
    return ordered_perm(ts, n, layout, perm);
}

const int *cfx_prims_l2p_perm(const cfx_tmeta *const *all, int n_all, int *perm)
{
    const cfx_tmeta *ts[CFX_PRIMS_MAX_ARGS];
    unsigned layout = LAYOUT_BOTH;
    int n = 0;
    for (int i = 0; i < n_all; i++)
        if (!cfx_tmeta_is_cpu_scalar(all[i])) {
            layout = layout_of(all[i], layout);
            ts[n++] = all[i];
        }
    return l2p_perm(ts, n, layout, perm);
}

void cfx_prims_empty_permuted(cfx_tmeta *out, const int64_t *shape, int ndim, const int *perm, cfx_dtype dtype,
                              cfx_device device)
{
    /* the physical tensor is empty(permuted shape), contiguous; its strides go back to the
     * logical dims (the sizes are copied in the same pass, into out's own array: shape may be
     * out's sizes) */
    int64_t z = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int d = perm ? perm[i] : i;
        int64_t size = shape[d];
        out->own_strides[d] = z;
        out->own_sizes[d] = size;
        z *= size > 1 ? size : 1;
    }
    out->sizes = out->own_sizes;
    out->strides = out->own_strides;
    out->ndim = ndim;
    out->dtype = dtype;
    out->device = device;
}

bool cfx_prims_elementwise(const char *op, cfx_tmeta *out, const cfx_tmeta *const *args, int n, int nfixed,
                           cfx_promotion kind)
{
    /* One pass over the arguments gathers what the prim's steps look at, each as Python finds
     * it: the first dtype mismatch among the non-fixed arguments (check_same_dtype: the
     * references promote their operands first, but a prim run on a CPU scalar executes ATen,
     * whose promotion can differ: add's prims.mul(b, alpha) of a bool b and an int alpha is
     * int64), the first device mismatch among the tensors that are not CPU scalars
     * (check_same_device), those tensors (the permutation's operands, with the fast path's
     * layout answers; the first of them gives extract_shape's shape and the device, else the
     * first CPU scalar does), and the dtype: the first non-fixed argument that is not a CPU
     * scalar, else the last CPU scalar among them. check_same_shape cannot fail: the
     * references broadcast before calling a prim. The dtype check comes first in Python, so
     * its mismatch returns at once; a device mismatch waits for the end of the pass. */
    const cfx_tmeta *ts[CFX_PRIMS_MAX_ARGS] = {NULL}; /* (zeroed: -O1's uninitialized-use warning) */
    const cfx_tmeta *bad_device = NULL, *typed = NULL;
    cfx_dtype want = args[nfixed]->dtype;
    bool typed_final = false; /* typed is not a CPU scalar */
    unsigned layout = LAYOUT_BOTH;
    int nt = 0;
    for (int i = 0; i < n; i++) {
        const cfx_tmeta *a = args[i];
        if (i > nfixed && a->dtype != want) {
            cfx_error_set(CFX_ERR, op, "Tensor with dtype %s is not the expected dtype of %s!",
                          cfx_dtype_torch_name(a->dtype), cfx_dtype_torch_name(want));
            return false;
        }
        bool scalar = cfx_tmeta_is_cpu_scalar(a);
        if (!scalar) {
            if (nt > 0 && !bad_device && !cfx_device_eq(a->device, ts[0]->device))
                bad_device = a;
            layout = layout_of(a, layout);
            ts[nt++] = a;
        }
        if (i >= nfixed && !typed_final) {
            typed = a;
            typed_final = !scalar;
        }
    }
    if (bad_device) {
        char a[24], b[24];
        cfx_error_set(CFX_ERR, op, "Tensor on device %s is not on the expected device %s!",
                      cfx_device_format(bad_device->device, a, sizeof a),
                      cfx_device_format(ts[0]->device, b, sizeof b));
        return false;
    }
    int buf[CFX_MAX_DIMS];
    const int *perm = l2p_perm(ts, nt, layout, buf);
    const cfx_tmeta *shaped = nt > 0 ? ts[0] : args[0];
    cfx_dtype dt = typed->dtype;
    if (kind == CFX_PROMOTE_ALWAYS_BOOL)
        dt = CFX_BOOL;
    else if (kind == CFX_PROMOTE_INT_TO_FLOAT && cfx_pytype_of_dtype(dt) != CFX_PY_FLOAT)
        dt = CFX_FLOAT32;
    cfx_prims_empty_permuted(out, shaped->sizes, shaped->ndim, perm, dt, shaped->device);
    return true;
}

/* ---- reductions ---------------------------------------------------------------------------- */

bool cfx_prims_reduction_dims(const char *op, int ndim, const int64_t *dims, int ndims, bool *reduced)
{
    for (int d = 0; d < ndim; d++)
        reduced[d] = dims == NULL;
    if (!dims)
        return true;
    int64_t canon[CFX_MAX_DIMS];
    for (int i = 0; i < ndims; i++) /* canonicalize_dim: a 0-dim tensor takes 0 and -1 */
        if (!cfx_geom_wrap_dim(dims[i], ndim, &canon[i], op))
            return false;
    for (int i = 0; i < ndims; i++)
        for (int j = 0; j < i; j++)
            if (canon[i] == canon[j]) {
                cfx_error_set(CFX_ERR, op, "duplicate value in the list of dims");
                return false;
            }
    for (int i = 0; i < ndims; i++)
        if (canon[i] < ndim)
            reduced[canon[i]] = true;
    return true;
}

void cfx_prims_reduction(cfx_tmeta *out, const cfx_tmeta *in, const bool *reduced, bool keepdim)
{
    int64_t sizes[CFX_MAX_DIMS] = {0}, strides[CFX_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < in->ndim; d++)
        if (!reduced[d])
            sizes[n++] = in->sizes[d];
    cfx_geom_contiguous_strides(sizes, n, strides); /* make_contiguous_strides_for */
    out->dtype = in->dtype;
    out->device = in->device;
    out->sizes = out->own_sizes;
    out->strides = out->own_strides;
    if (!keepdim) {
        out->ndim = n;
        copy_dims(out->own_sizes, sizes, n);
        copy_dims(out->own_strides, strides, n);
        return;
    }
    /* broadcast_in_dim(r, kept shape, the kept dims): a kept dim keeps its stride, a
     * re-inserted one of size 1 gets the stride the next kept dim spans (1 after the last) */
    out->ndim = in->ndim;
    int orig = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!reduced[d]) {
            out->own_sizes[d] = sizes[orig];
            out->own_strides[d] = strides[orig];
            orig++;
        } else {
            out->own_sizes[d] = 1;
            out->own_strides[d] = orig == n ? 1 : strides[orig] * sizes[orig];
        }
    }
}
