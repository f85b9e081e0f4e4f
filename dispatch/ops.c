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
 * inline array, heap only past 16 entries), picks the kernel from its tensor parameters' key
 * sets (cfx_dispatch_select's rules, inline), and calls the kernel's C function directly when
 * it has one, its boxed entry otherwise (with a mode set, the Python keys' fallbacks). Single- and
 * multi-return operators share one generator, parameterised by the return marker of ops.h
 * (RTensor, RTensor2, RTensor3): a boxed kernel's returns are gathered from the stack. */
#include <pthread.h>
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/library.h"
#include "dispatch/mode.h"
#include "dispatch/ops.h"

#define PP_OR() |
#define TENSOR_BIT(i, p) CFX_PP_CAT(TENSOR_BIT_, CFX_PARAM_KIND(p))(i)
#define TENSOR_BIT_TENSOR(i) (UINT64_C(1) << (i))
#define TENSOR_BIT_TENSOROPT(i) (UINT64_C(1) << (i))
#define TENSOR_BIT_SCALAR(i) 0
#define TENSOR_BIT_OPT(i) 0
#define TENSOR_BIT_INTLIST(i) 0
#define TENSOR_BIT_INT(i) 0
#define TENSOR_BIT_DOUBLE(i) 0
#define TENSOR_BIT_BOOL(i) 0
#define REQUIRED_BIT(i, p) CFX_PP_CAT(REQUIRED_BIT_, CFX_PARAM_KIND(p))(i)
#define REQUIRED_BIT_TENSOR(i) (UINT64_C(1) << (i))
#define REQUIRED_BIT_TENSOROPT(i) 0
#define REQUIRED_BIT_SCALAR(i) 0
#define REQUIRED_BIT_OPT(i) 0
#define REQUIRED_BIT_INTLIST(i) 0
#define REQUIRED_BIT_INT(i) 0
#define REQUIRED_BIT_DOUBLE(i) 0
#define REQUIRED_BIT_BOOL(i) 0
#define PARAM_MASKS(params) \
    CFX_PARAMS_I(TENSOR_BIT, PP_OR, params), CFX_PARAMS_I(REQUIRED_BIT, PP_OR, params)

const cfx_builtin_op_info cfx_builtin_ops[CFX_OPID_COUNT] = {
#define CFX_OP(id, name, schema, params) \
    {#id, name, schema, CFX_PARAMS(CFX_PARAM_COUNT, CFX_PP_NOSEP, params), 1, PARAM_MASKS(params)},
#define CFX_OP_MULTI(id, name, schema, params, rets) \
    {#id, name, schema, CFX_PARAMS(CFX_PARAM_COUNT, CFX_PP_NOSEP, params), CFX_RET_COUNT(rets), PARAM_MASKS(params)},
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

/* Why a boxed kernel's call failed after it returned CFX_OK: no boxed entry, or return i is
 * not a tensor. */
static __attribute__((noinline, cold)) bool boxed_error(const cfx_op *op, const cfx_value *stack, int nret,
                                                        int i)
{
    if (i < 0)
        cfx_error_set(CFX_ERR, op->qualified_name, "%s: kernel has neither a C nor a boxed entry",
                      op->qualified_name);
    else if (nret == 1)
        cfx_error_set(CFX_ERR, op->qualified_name, "%s: kernel returned a %s, expected a Tensor",
                      op->qualified_name, cfx_value_kind_name((cfx_value_kind)stack[i].kind));
    else
        cfx_error_set(CFX_ERR, op->qualified_name, "%s: kernel returned a %s as return %d, expected a Tensor",
                      op->qualified_name, cfx_value_kind_name((cfx_value_kind)stack[i].kind), i);
    return false;
}

/* Runs a boxed-only kernel and takes its nret tensor returns from the stack into out. Inline:
 * on a traced call it is the wrapper's only path (the Python keys' fallbacks are boxed). */
static inline __attribute__((always_inline)) bool call_boxed(const cfx_op *op, const cfx_kernel *k, cfx_keyset ks,
                                                             cfx_value *stack, int nret, cfx_tensor **out)
{
    if (__builtin_expect(!k->boxed, 0)) {
        /* an empty slot is all zero (cfx_op_check_invariants), so it arrives here */
        if (!cfx_kernel_is_valid(k)) {
            cfx_dispatch_missing_kernel_error(op, ks);
            return false;
        }
        return boxed_error(op, stack, nret, -1);
    }
    if (k->boxed(k->ctx, op, ks, stack) != CFX_OK)
        return false;
    for (int i = 0; i < nret; i++) {
        if (__builtin_expect(stack[i].kind != CFX_V_TENSOR, 0))
            return boxed_error(op, stack, nret, i);
        out[i] = stack[i].u.t;
    }
    return true;
}

/* The kernel for an explicit key set: masked like cfx_op_redispatch, error if missing. */
static const cfx_kernel *redispatch_kernel(const cfx_op *op, cfx_keyset *ks)
{
    *ks = cfx_op_skip_fallthrough(op, *ks);
    const cfx_kernel *k = cfx_op_kernel_for(op, *ks);
    if (!cfx_kernel_is_valid(k)) {
        cfx_dispatch_missing_kernel_error(op, *ks);
        return NULL;
    }
    return k;
}

/* cfx_dispatch_select for the typed arguments: the wrapper knows which parameters are tensors
 * (ops.def's markers, which match the schema's Tensor arguments: tests/dispatch/test_ops.c
 * checks every op's masks), so it ORs their key sets directly instead of walking the boxed
 * stack. NULL when a plain Tensor is NULL (no new error); an empty slot is returned as is. */
static inline __attribute__((always_inline)) const cfx_kernel *select_kernel(const cfx_op *op, uint64_t arg_keys,
                                                                             bool null_tensor, cfx_keyset *ks)
{
    if (__builtin_expect(null_tensor, 0))
        return NULL;
    *ks = cfx_op_mask_keyset(op, (cfx_keyset){arg_keys}, cfx_local_keys_get());
    /* A traced call (a mode set) enters by PythonTLSSnapshot, whose slot is known without the
     * table-index computation. An empty slot has neither entry: call_boxed reports it. */
    if ((ks->repr >> CFX_MODE_SNAPSHOT_SHIFT) == 1)
        return &op->table[CFX_MODE_SNAPSHOT_SLOT];
    return cfx_op_kernel_for(op, *ks);
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

/* A parameter's share of the call's key set: a Tensor's keys (a NULL plain Tensor marks the
 * call as failed), a Tensor?'s when given, nothing for the rest. */
#define ARGKEYS(p) CFX_PP_CAT(ARGKEYS_, CFX_PARAM_KIND(p))(CFX_PARAM_NAME(p))
#define ARGKEYS_TENSOR(x) \
    if (x)                \
        keys_ |= (x)->keys.repr; \
    else                  \
        null_ = true;
#define ARGKEYS_TENSOROPT(x) \
    if (x)                   \
        keys_ |= (x)->keys.repr;
#define ARGKEYS_SCALAR(x)
#define ARGKEYS_OPT(x)
#define ARGKEYS_INTLIST(x)
#define ARGKEYS_INT(x)
#define ARGKEYS_DOUBLE(x)
#define ARGKEYS_BOOL(x)

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
            cfx_tensor *outs_[NRET_] = {0};                                                  \
            if (k_->unboxed)                                                                 \
                r_ = ((cfx_kfn_##id)k_->unboxed)(CFX_PARAMS(CFX_PARAM_NAME, CFX_PP_COMMA, params)); \
            else if (call_boxed(op, k_, ks_, stack, NRET_, outs_))                           \
                CFX_RET_PACK(ret, r_, outs_);                                                \
        }                                                                                    \
    }                                                                                        \
    CFX_PARAMS(LISTFREE, CFX_PP_NOSEP, params)

/* A wrapper's first call initialises the built-ins out of line and starts over, so the
 * wrapper itself makes no call before its kernel's and its arguments need no saving. */
#define WRAPPERS(id, params, ret)                                                            \
    static __attribute__((noinline, cold)) CFX_RET_TYPE(ret)                                 \
        first_call_##id(const cfx_site *site, CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params)) \
    {                                                                                        \
        if (!cfx_builtin_op(CFX_OPID_##id))                                                  \
            return CFX_RET_NULL(ret);                                                        \
        return cfx_op_##id(site, CFX_PARAMS(CFX_PARAM_NAME, CFX_PP_COMMA, params));          \
    }                                                                                        \
    CFX_RET_TYPE(ret) cfx_op_##id(const cfx_site *site, CFX_PARAMS(CFX_PARAM_DECL, CFX_PP_COMMA, params)) \
    {                                                                                        \
        cfx_op *op = __atomic_load_n(&handles[CFX_OPID_##id], __ATOMIC_ACQUIRE);             \
        if (__builtin_expect(!op, 0))                                                        \
            return first_call_##id(site, CFX_PARAMS(CFX_PARAM_NAME, CFX_PP_COMMA, params));  \
        const cfx_site *prev_ = site ? cfx_set_current_site(site) : NULL;                    \
        uint64_t keys_ = 0;                                                                  \
        bool null_ = false;                                                                  \
        CFX_PARAMS(ARGKEYS, CFX_PP_NOSEP, params)                                            \
        cfx_keyset ks_;                                                                      \
        CALL_BODY(id, params, ret, k_ = select_kernel(op, keys_, null_, &ks_);)              \
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

/* ---- boxed entries of the built-in kernels ----------------------------------------------- */

/* cfx_kfn_boxed_<id>: the boxed entry of a C kernel of op id, generated from its ops.def
 * parameter markers as c10 generates make_boxed_from_unboxed_functor from the C++ type. It
 * does what the libffi adapter (boxing.c) does for the same schema, with the same checks,
 * normalisations and messages, but as straight-line C: read each stack slot into its typed
 * local, call the kernel through its pointer (the context), box the tensors back. What a
 * marker leaves open (which optional type an AOpt is, whether an int list is optional or
 * int[N]) is read from the op's schema. */

static int arg_error(const cfx_op *op, int i, cfx_value v)
{
    return cfx_argument_type_error(op->schema, op->qualified_name, i, v);
}

static int un_tensor(const cfx_op *op, const cfx_value *stack, int i, cfx_tensor **out)
{
    if (stack[i].kind != CFX_V_TENSOR)
        return arg_error(op, i, stack[i]);
    *out = stack[i].u.t;
    return CFX_OK;
}

static int un_tensor_opt(const cfx_op *op, const cfx_value *stack, int i, cfx_tensor **out)
{
    if (stack[i].kind == CFX_V_NONE) {
        *out = NULL;
        return CFX_OK;
    }
    return un_tensor(op, stack, i, out);
}

static int un_scalar(const cfx_op *op, const cfx_value *stack, int i, cfx_value *out)
{
    uint32_t k = stack[i].kind;
    if (k != CFX_V_INT && k != CFX_V_DOUBLE && k != CFX_V_BOOL)
        return arg_error(op, i, stack[i]);
    *out = stack[i];
    return CFX_OK;
}

/* An optional non-tensor: None, or a value of the element type, normalised as the adapter
 * does (an INT given for a ScalarType?, Layout?, MemoryFormat? or float? is converted). */
static int un_opt(const cfx_op *op, const cfx_value *stack, int i, cfx_value *out)
{
    cfx_value v = stack[i];
    if (v.kind == CFX_V_NONE) {
        *out = v;
        return CFX_OK;
    }
    const cfx_type *t = op->schema->args[i].type;
    int ek = t->kind == CFX_TYPE_OPTIONAL ? t->elems[0]->kind : t->kind;
    bool is_int = v.kind == CFX_V_INT;
    bool ok;
    switch (ek) {
    case CFX_TYPE_INT: case CFX_TYPE_SYMINT: ok = is_int; break;
    case CFX_TYPE_FLOAT:
        if (is_int)
            v = cfx_double((double)v.u.i);
        ok = v.kind == CFX_V_DOUBLE;
        break;
    case CFX_TYPE_BOOL: ok = v.kind == CFX_V_BOOL; break;
    case CFX_TYPE_STR: ok = v.kind == CFX_V_STRING; break;
    case CFX_TYPE_SCALAR_TYPE:
        if (is_int)
            v = cfx_dtype_value((cfx_dtype)v.u.i);
        ok = v.kind == CFX_V_DTYPE;
        break;
    case CFX_TYPE_LAYOUT:
        if (is_int)
            v = cfx_layout_value(v.u.i);
        ok = v.kind == CFX_V_LAYOUT;
        break;
    case CFX_TYPE_MEMORY_FORMAT:
        if (is_int)
            v = cfx_memory_format_value((cfx_memory_format)v.u.i);
        ok = v.kind == CFX_V_MEMORY_FORMAT;
        break;
    case CFX_TYPE_DEVICE: ok = v.kind == CFX_V_DEVICE; break;
    case CFX_TYPE_SCALAR: ok = is_int || v.kind == CFX_V_DOUBLE || v.kind == CFX_V_BOOL; break;
    case CFX_TYPE_LIST: ok = v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE; break;
    default: ok = true; break;
    }
    if (!ok)
        return arg_error(op, i, stack[i]);
    *out = v;
    return CFX_OK;
}

/* int[], SymInt[], int[N] (a lone int repeated N times) or int[]? (None: len -1), into buf
 * or, past INLINE_LIST items, into *heap (the caller frees it). */
static int un_int_list(const cfx_op *op, const cfx_value *stack, int i, int64_t *buf, int64_t **heap,
                       cfx_int_list *out)
{
    cfx_value v = stack[i];
    const cfx_argument *a = &op->schema->args[i];
    if (v.kind == CFX_V_NONE && a->type->kind == CFX_TYPE_OPTIONAL) {
        *out = (cfx_int_list){NULL, -1};
        return CFX_OK;
    }
    int64_t n = -1;
    if (v.kind == CFX_V_INT) {
        n = a->size_hint > 0 ? a->size_hint : -1;
    } else if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) {
        n = v.len;
        for (uint32_t j = 0; j < v.len; j++)
            if (v.u.items[j].kind != CFX_V_INT)
                n = -1;
    }
    if (n < 0)
        return arg_error(op, i, v);
    int64_t *p = buf;
    if (n > INLINE_LIST && !(p = *heap = malloc((size_t)n * sizeof *p)))
        return cfx_error_set(CFX_ERR_NOMEM, op->qualified_name, "out of memory");
    for (int64_t j = 0; j < n; j++)
        p[j] = v.kind == CFX_V_INT ? v.u.i : v.u.items[j].u.i;
    *out = (cfx_int_list){p, n};
    return CFX_OK;
}

static int un_int(const cfx_op *op, const cfx_value *stack, int i, int64_t *out)
{
    if (stack[i].kind != CFX_V_INT)
        return arg_error(op, i, stack[i]);
    *out = stack[i].u.i;
    return CFX_OK;
}

static int un_double(const cfx_op *op, const cfx_value *stack, int i, double *out)
{
    if (stack[i].kind == CFX_V_INT)
        *out = (double)stack[i].u.i;
    else if (stack[i].kind == CFX_V_DOUBLE)
        *out = stack[i].u.d;
    else
        return arg_error(op, i, stack[i]);
    return CFX_OK;
}

static int un_bool(const cfx_op *op, const cfx_value *stack, int i, bool *out)
{
    if (stack[i].kind != CFX_V_BOOL)
        return arg_error(op, i, stack[i]);
    *out = stack[i].u.b;
    return CFX_OK;
}

/* The kernel's tensors onto the stack; a NULL one is a failure (the kernel said why, or the
 * adapter's message says it did not). Nothing is written unless all are there. */
static int box_returns(const cfx_op *op, cfx_tensor *const *outs, int n, cfx_value *stack)
{
    for (int j = 0; j < n; j++)
        if (!outs[j]) {
            if (!cfx_error_occurred())
                cfx_error_set(CFX_ERR, op->qualified_name, "the kernel of %s returned NULL without an error",
                              op->qualified_name);
            return CFX_ERR;
        }
    for (int j = 0; j < n; j++)
        stack[j] = cfx_tensor_value(outs[j]);
    return CFX_OK;
}

#define UNDECL(p) CFX_PARAM_DECL(p) = {0};
#define UNCONV(p) CFX_PP_CAT(UNCONV_, p)
#define UNCONV_ATensor(x) UNCONV_(un_tensor(op, stack, i_, &x))
#define UNCONV_ATensorOpt(x) UNCONV_(un_tensor_opt(op, stack, i_, &x))
#define UNCONV_AScalar(x) UNCONV_(un_scalar(op, stack, i_, &x))
#define UNCONV_AOpt(x) UNCONV_(un_opt(op, stack, i_, &x))
#define UNCONV_AIntList(x) UNCONV_(un_int_list(op, stack, i_, x##_ints_, &x##_iheap_, &x))
#define UNCONV_AInt(x) UNCONV_(un_int(op, stack, i_, &x))
#define UNCONV_ADouble(x) UNCONV_(un_double(op, stack, i_, &x))
#define UNCONV_ABool(x) UNCONV_(un_bool(op, stack, i_, &x))
#define UNCONV_(call) \
    if (rc_ == CFX_OK) \
        rc_ = call; \
    i_++;
#define UNLIST(p) CFX_PP_CAT(UNLIST_, p)
#define UNLIST_ATensor(x)
#define UNLIST_ATensorOpt(x)
#define UNLIST_AScalar(x)
#define UNLIST_AOpt(x)
#define UNLIST_AInt(x)
#define UNLIST_ADouble(x)
#define UNLIST_ABool(x)
#define UNLIST_AIntList(x) \
    int64_t x##_ints_[INLINE_LIST]; \
    int64_t *x##_iheap_ = NULL;
#define UNFREE(p) CFX_PP_CAT(UNFREE_, p)
#define UNFREE_ATensor(x)
#define UNFREE_ATensorOpt(x)
#define UNFREE_AScalar(x)
#define UNFREE_AOpt(x)
#define UNFREE_AInt(x)
#define UNFREE_ADouble(x)
#define UNFREE_ABool(x)
#define UNFREE_AIntList(x) free(x##_iheap_);

/* The fast path of a boxed entry: every slot already holds exactly its parameter's C value
 * (a Tensor, None for an optional, an int for an int, ...), so nothing needs converting or
 * reporting. Int lists always take the general path, as does anything the general path would
 * normalise (an int for a float, a value for an AOpt): test_ops_boxed.c checks both paths
 * against the libffi adapter. */
#define PP_AND() &&
#define FASTOK(i, p) CFX_PP_CAT(FASTOK_, CFX_PARAM_KIND(p))(stack[i].kind)
#define FASTOK_TENSOR(k) (k) == CFX_V_TENSOR
#define FASTOK_TENSOROPT(k) ((k) == CFX_V_TENSOR || (k) == CFX_V_NONE)
#define FASTOK_SCALAR(k) ((k) == CFX_V_INT || (k) == CFX_V_DOUBLE || (k) == CFX_V_BOOL)
#define FASTOK_OPT(k) (k) == CFX_V_NONE
#define FASTOK_INTLIST(k) ((void)(k), false)
#define FASTOK_INT(k) (k) == CFX_V_INT
#define FASTOK_DOUBLE(k) (k) == CFX_V_DOUBLE
#define FASTOK_BOOL(k) (k) == CFX_V_BOOL
#define FASTARG(i, p) CFX_PP_CAT(FASTARG_, CFX_PARAM_KIND(p))(stack[i])
#define FASTARG_TENSOR(v) (v).u.t
#define FASTARG_TENSOROPT(v) ((v).kind == CFX_V_TENSOR ? (v).u.t : NULL)
#define FASTARG_SCALAR(v) (v)
#define FASTARG_OPT(v) (v)
#define FASTARG_INTLIST(v) ((cfx_int_list){NULL, -1})
#define FASTARG_INT(v) (v).u.i
#define FASTARG_DOUBLE(v) (v).u.d
#define FASTARG_BOOL(v) (v).u.b

/* A kernel that returns its tensors but records an error has failed too; that shows only if
 * no error was recorded before (the first error wins), as in the adapter. */
#define BOXED_ENTRY(id, params, ret)                                                         \
    static __attribute__((noinline)) int boxed_general_##id(void *fn, const cfx_op *op, cfx_value *stack) \
    {                                                                                        \
        CFX_PARAMS(UNDECL, CFX_PP_NOSEP, params)                                             \
        CFX_PARAMS(UNLIST, CFX_PP_NOSEP, params)                                             \
        int rc_ = CFX_OK, i_ = 0;                                                            \
        CFX_PARAMS(UNCONV, CFX_PP_NOSEP, params)                                             \
        (void)i_;                                                                            \
        if (rc_ == CFX_OK) {                                                                 \
            bool had_error_ = cfx_error_occurred();                                          \
            CFX_RET_TYPE(ret) r_ =                                                           \
                ((cfx_kfn_##id)(uintptr_t)fn)(CFX_PARAMS(CFX_PARAM_NAME, CFX_PP_COMMA, params)); \
            cfx_tensor *outs_[CFX_RET_COUNT(ret)];                                           \
            CFX_RET_UNPACK(ret, r_, outs_);                                                  \
            rc_ = !had_error_ && cfx_error_occurred() ? CFX_ERR                              \
                                                      : box_returns(op, outs_, CFX_RET_COUNT(ret), stack); \
        }                                                                                    \
        CFX_PARAMS(UNFREE, CFX_PP_NOSEP, params)                                             \
        return rc_;                                                                          \
    }                                                                                        \
    int cfx_kfn_boxed_##id(void *fn, const cfx_op *op, cfx_keyset ks, cfx_value *stack)      \
    {                                                                                        \
        (void)ks;                                                                            \
        if (__builtin_expect(!(CFX_PARAMS_I(FASTOK, PP_AND, params)), 0))                    \
            return boxed_general_##id(fn, op, stack);                                        \
        bool had_error_ = cfx_error_occurred();                                              \
        CFX_RET_TYPE(ret) r_ = ((cfx_kfn_##id)(uintptr_t)fn)(CFX_PARAMS_I(FASTARG, CFX_PP_COMMA, params)); \
        cfx_tensor *outs_[CFX_RET_COUNT(ret)];                                               \
        CFX_RET_UNPACK(ret, r_, outs_);                                                      \
        return !had_error_ && cfx_error_occurred() ? CFX_ERR                                 \
                                                   : box_returns(op, outs_, CFX_RET_COUNT(ret), stack); \
    }
#define CFX_OP(id, name, schema, params) BOXED_ENTRY(id, params, RTensor)
#define CFX_OP_MULTI(id, name, schema, params, rets) BOXED_ENTRY(id, params, rets)
#include "dispatch/ops.def"
#undef CFX_OP_MULTI
#undef CFX_OP
