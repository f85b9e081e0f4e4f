/* ops.c - the built-in operator table, generated from ops.def: schemas, handles, wrappers.
 *
 * Init defines every schema in one DEF library for "aten" (debug location: its ops.def line,
 * as PyTorch points at RegisterSchema.cpp) and creates one IMPL library per dispatch key,
 * into which each kernel file registers its kernels. The keys follow PyTorch 1.13's own
 * registrations (torch._C._dispatch_dump), restricted to the backends cfx has:
 *   add/sub/mul/div.Tensor, neg, sin, cos, exp, sum.dim_IntList, mm, add_.Tensor
 *       CPU, Meta, CompositeExplicitAutogradNonFunctional (structured kernels)
 *   relu                   CPU, Meta (1.13's Meta kernel is a Python reference)
 *   view                   CPU, Meta
 *   t, clone, empty_like   CompositeExplicitAutograd
 *   empty.memory_format, empty_strided   CPU, Meta, BackendSelect
 *   max.dim                CPU, Meta, CompositeExplicitAutogradNonFunctional (structured)
 *   native_layer_norm      CPU, CompositeExplicitAutograd (no Meta kernel: meta tensors run
 *                          the composite math_native_layer_norm)
 *   lift_fresh, lift_fresh_copy   CompositeExplicitAutograd
 * PyTorch's other registrations on these ops (autograd, tracer, functionalize, named,
 * batching, sparse, quantized, mkldnn, ...) belong to subsystems cfx does not have.
 *
 * A wrapper's fast path boxes its arguments into a stack array (int lists into a small
 * inline array, heap only past 16 entries), lets the dispatcher pick the kernel from the
 * tensors' key sets, and calls the kernel's C function directly when it has one. Single- and
 * multi-return operators share one generator, parameterised by the return marker of ops.h
 * (RTensor, RTensor2, RTensor3): a boxed kernel's returns are gathered from the stack. */
#include <pthread.h>
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/library.h"
#include "dispatch/ops.h"

const cfx_builtin_op_info cfx_builtin_ops[CFX_OPID_COUNT] = {
#define CFX_OP(id, name, schema, params) \
    {#id, name, schema, CFX_PARAMS(CFX_PARAM_COUNT, CFX_PP_NOSEP, params), 1},
#define CFX_OP_MULTI(id, name, schema, params, rets) \
    {#id, name, schema, CFX_PARAMS(CFX_PARAM_COUNT, CFX_PP_NOSEP, params), CFX_RET_COUNT(rets)},
#include "dispatch/ops.def"
#undef CFX_OP_MULTI
#undef CFX_OP
};

/* ---- init ------------------------------------------------------------------------------- */

static cfx_op *handles[CFX_OPID_COUNT];
/* The libraries live for the whole process, like PyTorch's static registrations; volatile
 * keeps the pointers in memory, where leak checkers look for them. */
static cfx_library *volatile libraries[6];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status = CFX_OK;

static void do_init(void)
{
    int rc = CFX_OK;
    cfx_library *def = libraries[0] = cfx_library_new(CFX_LIB_DEF, "aten", CFX_KEY_Undefined, __FILE__, __LINE__);
    if (!def) {
        init_status = cfx_error_status() ? cfx_error_status() : CFX_ERR;
        return;
    }
#define CFX_OP(id, name, schema, params) \
    CFX_KEEP_FIRST(rc, cfx_library_def_at(def, schema, CFX_ALIAS_FROM_SCHEMA, __FILE__, __LINE__));
#include "dispatch/ops.def"
#undef CFX_OP

    cfx_kernel_libs L = {
        .cpu = cfx_library_new(CFX_LIB_IMPL, "aten", CFX_KEY_CPU, __FILE__, __LINE__),
        .meta = cfx_library_new(CFX_LIB_IMPL, "aten", CFX_KEY_Meta, __FILE__, __LINE__),
        .backend_select = cfx_library_new(CFX_LIB_IMPL, "aten", CFX_KEY_BackendSelect, __FILE__, __LINE__),
        .cea = cfx_library_new(CFX_LIB_IMPL, "aten", CFX_KEY_CompositeExplicitAutograd, __FILE__, __LINE__),
        .ceanf = cfx_library_new(CFX_LIB_IMPL, "aten", CFX_KEY_CompositeExplicitAutogradNonFunctional,
                                 __FILE__, __LINE__),
    };
    libraries[1] = L.cpu;
    libraries[2] = L.meta;
    libraries[3] = L.backend_select;
    libraries[4] = L.cea;
    libraries[5] = L.ceanf;
    if (!L.cpu || !L.meta || !L.backend_select || !L.cea || !L.ceanf) {
        init_status = CFX_ERR;
        return;
    }
    CFX_KEEP_FIRST(rc, cfx_kernels_register_cpu_binary(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_cpu_unary(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_cpu_reduce(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_cpu_mm(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_meta(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_views(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_factory(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_composite(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_cpu_layer_norm(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_norm(&L));
    CFX_KEEP_FIRST(rc, cfx_kernels_register_lift(&L));
    for (int i = 0; i < CFX_OPID_COUNT; i++) {
        cfx_op *op = cfx_op_find(cfx_builtin_ops[i].name);
        if (!op && rc == CFX_OK)
            rc = CFX_ERR;
        __atomic_store_n(&handles[i], op, __ATOMIC_RELEASE);
    }
    init_status = rc;
}

int cfx_builtin_ops_init(void)
{
    /* the dispatcher's own init may be what calls us; it must run first either way */
    cfx_dispatcher_init();
    pthread_once(&init_once, do_init);
    return init_status;
}

cfx_op *cfx_builtin_op(cfx_opid id)
{
    if ((unsigned)id >= CFX_OPID_COUNT)
        return NULL;
    cfx_op *op = __atomic_load_n(&handles[id], __ATOMIC_ACQUIRE);
    if (!op) {
        cfx_builtin_ops_init();
        op = __atomic_load_n(&handles[id], __ATOMIC_ACQUIRE);
        if (!op)
            cfx_error_set(CFX_ERR, cfx_builtin_ops[id].name, "the built-in operator %s could not be registered",
                          cfx_builtin_ops[id].name);
    }
    return op;
}

/* ---- boxing ---------------------------------------------------------------------------------- */

enum { INLINE_LIST = 16 };

/* An int list as a boxed list of ints (None when len < 0), items in buf or on the heap. */
static bool box_ints(cfx_int_list l, cfx_value *buf, cfx_value **heap, cfx_value *out)
{
    if (l.len < 0) {
        *out = cfx_none();
        return true;
    }
    cfx_value *items = buf;
    if (l.len > INLINE_LIST) {
        items = *heap = malloc((size_t)l.len * sizeof *items);
        if (!items) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory boxing an int list");
            return false;
        }
    }
    for (int64_t i = 0; i < l.len; i++)
        items[i] = cfx_int(l.data[i]);
    *out = cfx_list(items, (uint32_t)l.len);
    return true;
}

/* Runs a boxed-only kernel and takes its nret tensor returns from the stack into out. */
static bool call_boxed(const cfx_op *op, const cfx_kernel *k, cfx_keyset ks, cfx_value *stack, int nret,
                       cfx_tensor **out)
{
    if (!k->boxed) {
        cfx_error_set(CFX_ERR, op->qualified_name, "%s: kernel has neither a C nor a boxed entry",
                      op->qualified_name);
        return false;
    }
    if (k->boxed(k->ctx, op, ks, stack) != CFX_OK)
        return false;
    for (int i = 0; i < nret; i++)
        if (stack[i].kind != CFX_V_TENSOR) {
            if (nret == 1)
                cfx_error_set(CFX_ERR, op->qualified_name, "%s: kernel returned a %s, expected a Tensor",
                              op->qualified_name, cfx_value_kind_name((cfx_value_kind)stack[i].kind));
            else
                cfx_error_set(CFX_ERR, op->qualified_name, "%s: kernel returned a %s as return %d, expected a Tensor",
                              op->qualified_name, cfx_value_kind_name((cfx_value_kind)stack[i].kind), i);
            return false;
        }
    for (int i = 0; i < nret; i++)
        out[i] = stack[i].u.t;
    return true;
}

/* The kernel for an explicit key set: masked like cfx_op_redispatch, error if missing. */
static const cfx_kernel *redispatch_kernel(const cfx_op *op, cfx_keyset *ks)
{
    const cfx_keyset *mask = &op->non_fallthrough;
    if (op->per_backend_masks_differ) {
        cfx_backend b = cfx_keyset_highest_backend(*ks);
        if (b != CFX_BACKEND_INVALID)
            mask = &op->non_fallthrough_per_backend[b - 1];
    }
    *ks = cfx_keyset_and(*ks, *mask);
    const cfx_kernel *k = cfx_op_kernel_for(op, *ks);
    if (!cfx_kernel_is_valid(k)) {
        cfx_dispatch_missing_kernel_error(op, *ks);
        return NULL;
    }
    return k;
}

#define BOX(p) CFX_PP_CAT(BOX_, p)
#define BOX_ATensor(x) stack[i_++] = cfx_tensor_value(x);
#define BOX_ATensorOpt(x) stack[i_++] = (x) ? cfx_tensor_value(x) : cfx_none();
#define BOX_AScalar(x) stack[i_++] = x;
#define BOX_AOpt(x) stack[i_++] = x;
#define BOX_AInt(x) stack[i_++] = cfx_int(x);
#define BOX_ADouble(x) stack[i_++] = cfx_double(x);
#define BOX_ABool(x) stack[i_++] = cfx_bool(x);
#define BOX_AIntList(x) ok_ = ok_ && box_ints(x, x##_buf_, &x##_heap_, &stack[i_++]);
#define LISTBUF(p) CFX_PP_CAT(LISTBUF_, p)
#define LISTBUF_ATensor(x)
#define LISTBUF_ATensorOpt(x)
#define LISTBUF_AScalar(x)
#define LISTBUF_AOpt(x)
#define LISTBUF_AInt(x)
#define LISTBUF_ADouble(x)
#define LISTBUF_ABool(x)
#define LISTBUF_AIntList(x) \
    cfx_value x##_buf_[INLINE_LIST]; \
    cfx_value *x##_heap_ = NULL;
#define LISTFREE(p) CFX_PP_CAT(LISTFREE_, p)
#define LISTFREE_ATensor(x)
#define LISTFREE_ATensorOpt(x)
#define LISTFREE_AScalar(x)
#define LISTFREE_AOpt(x)
#define LISTFREE_AInt(x)
#define LISTFREE_ADouble(x)
#define LISTFREE_ABool(x)
#define LISTFREE_AIntList(x) free(x##_heap_);

/* The body shared by a wrapper and its _redispatch twin: box, pick, call, unbox. SELECT is
 * the statement that sets k_ (and ks_). The stack also receives the returns of a boxed
 * kernel, so it has room for the larger of the two counts. */
#define CALL_BODY(id, params, ret, SELECT)                                                   \
    enum { NARGS_ = CFX_PARAMS(CFX_PARAM_COUNT, CFX_PP_NOSEP, params),                       \
           NRET_ = CFX_RET_COUNT(ret) };                                                     \
    cfx_value stack[NARGS_ > NRET_ ? NARGS_ : NRET_];                                        \
    CFX_PARAMS(LISTBUF, CFX_PP_NOSEP, params)                                                \
    int i_ = 0;                                                                              \
    bool ok_ = true;                                                                         \
    CFX_PARAMS(BOX, CFX_PP_NOSEP, params)                                                    \
    (void)i_;                                                                                \
    CFX_RET_TYPE(ret) r_ = CFX_RET_NULL(ret);                                                \
    if (ok_) {                                                                               \
        const cfx_kernel *k_;                                                                \
        SELECT                                                                               \
        if (k_) {                                                                            \
            cfx_tensor *outs_[NRET_];                                                        \
            if (k_->unboxed)                                                                 \
                r_ = ((cfx_kfn_##id)k_->unboxed)(CFX_PARAMS(CFX_PARAM_NAME, CFX_PP_COMMA, params)); \
            else if (call_boxed(op, k_, ks_, stack, NRET_, outs_))                           \
                CFX_RET_PACK(ret, r_, outs_);                                                \
        }                                                                                    \
    }                                                                                        \
    CFX_PARAMS(LISTFREE, CFX_PP_NOSEP, params)

#define WRAPPERS(id, params, ret)                                                            \
    CFX_RET_TYPE(ret) cfx_op_##id(const cfx_site *site, CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params)) \
    {                                                                                        \
        cfx_op *op = __atomic_load_n(&handles[CFX_OPID_##id], __ATOMIC_ACQUIRE);             \
        if (__builtin_expect(!op, 0) && !(op = cfx_builtin_op(CFX_OPID_##id)))               \
            return CFX_RET_NULL(ret);                                                        \
        const cfx_site *prev_ = site ? cfx_set_current_site(site) : NULL;                    \
        cfx_keyset ks_;                                                                      \
        CALL_BODY(id, params, ret, k_ = cfx_dispatch_select(op, stack, &ks_);)               \
        if (site)                                                                            \
            cfx_set_current_site(prev_);                                                     \
        return r_;                                                                           \
    }                                                                                        \
    CFX_RET_TYPE(ret) cfx_op_##id##_redispatch(cfx_keyset ks, CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params)) \
    {                                                                                        \
        cfx_op *op = cfx_builtin_op(CFX_OPID_##id);                                          \
        if (!op)                                                                             \
            return CFX_RET_NULL(ret);                                                        \
        cfx_keyset ks_ = ks;                                                                 \
        CALL_BODY(id, params, ret, k_ = redispatch_kernel(op, &ks_);)                        \
        return r_;                                                                           \
    }
#define CFX_OP(id, name, schema, params) WRAPPERS(id, params, RTensor)
#define CFX_OP_MULTI(id, name, schema, params, rets) WRAPPERS(id, params, rets)
#include "dispatch/ops.def"
#undef CFX_OP_MULTI
#undef CFX_OP
