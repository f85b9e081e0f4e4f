/* ops.c - the runtime of generated op tables (ops_table.h) and the built-in table's init.
 *
 * Registration: one DEF library for the table's namespace holds every schema (with the op's
 * tags), one IMPL library per dispatch key holds that key's kernels, each registered as an
 * unboxed C function with its compiled boxed entry and the table row as its debug location.
 * The libraries live as long as the process (in the table's state), like PyTorch's static
 * registrations.
 *
 * Calls: cfx_call_select (inline, ops_table.h) is the dispatcher's cfx_dispatch_select with
 * the entry point's housekeeping around it (the handle on first use, the call site, list
 * storage); what is here is their slow paths and the redispatch and boxed variants. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/fork_internal.h"
#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/operator.h"
#include "dispatch/scope.h"
#include "dispatch/ops.h"
#include "dispatch/ops_table.h"
#include "dispatch/ops_gen_kernels.h"

/* ---- registration ------------------------------------------------------------------------- */

/* The IMPL library of key (opened on first use; the table's state keeps it for the process,
 * where leak checkers see it). */
static cfx_library *impl_for(const cfx_op_table *t, cfx_dispatch_key key)
{
    cfx_op_table_state *st = t->state;
    for (int i = 0; i < st->n_libs; i++)
        if (st->lib_keys[i] == key)
            return st->libs[i + 1];
    if (st->n_libs == CFX_OP_TABLE_MAX_KEYS)
        return NULL;
    cfx_library *lib = cfx_library_new(CFX_LIB_IMPL, t->ns, key, t->file, 0);
    if (lib) {
        st->lib_keys[st->n_libs] = key;
        st->libs[++st->n_libs] = lib;
    }
    return lib;
}

static void keep_first(int *rc, int r)
{
    if (*rc == CFX_OK && r < 0)
        *rc = r;
}

static int register_table(const cfx_op_table *t)
{
    cfx_library *def = t->state->libs[0] = cfx_library_new(CFX_LIB_DEF, t->ns, CFX_KEY_Undefined, t->file, 0);
    if (!def)
        return cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
    int rc = CFX_OK;
    for (int i = 0; i < t->n_rows; i++) {
        const cfx_op_row *r = &t->rows[i];
        keep_first(&rc, cfx_library_def_tagged_at(def, r->schema, CFX_ALIAS_FROM_SCHEMA, r->tags, t->file, r->line));
    }
    for (int i = 0; i < t->n_rows; i++) {
        const cfx_op_row *r = &t->rows[i];
        for (const cfx_op_row_kernel *k = r->kernels; k->key != CFX_KEY_Undefined; k++) {
            cfx_library *lib = impl_for(t, k->key);
            if (!lib) {
                keep_first(&rc, cfx_error_set(CFX_ERR, r->name, "cannot open an IMPL library for %s", r->name));
                continue;
            }
            /* the C function is the boxed entry's context (POSIX: function and data pointers
             * convert both ways, as dlsym relies on) */
            keep_first(&rc, cfx_library_impl_boxed_unboxed_at(lib, r->name, CFX_KEY_Undefined, k->unboxed, k->boxed,
                                                              (void *)(uintptr_t)k->unboxed, t->file, r->line));
        }
    }
    for (int i = 0; i < t->n_rows; i++) {
        cfx_op *op = cfx_op_find(t->rows[i].name);
        if (!op)
            keep_first(&rc, CFX_ERR);
        __atomic_store_n(&t->handles[i], op, __ATOMIC_RELEASE);
    }
    return rc;
}

/* pthread_once takes no argument: the table being registered is handed over here, under a
 * lock that also serialises the registrations of different tables. */
static pthread_mutex_t register_mutex = PTHREAD_MUTEX_INITIALIZER;
static const cfx_op_table *registering;
__attribute__((constructor)) static void register_mutex_fork_guard(void) { cfx_fork_guard_mutex(CFX_FORK_RANK_OP_TABLES, &register_mutex); }

static void register_current(void) { registering->state->status = register_table(registering); }

int cfx_op_table_register(const cfx_op_table *t)
{
    cfx_dispatcher_init();
    pthread_mutex_lock(&register_mutex);
    registering = t;
    pthread_once(&t->state->once, register_current);
    pthread_mutex_unlock(&register_mutex);
    return t->state->status;
}

cfx_op *cfx_op_table_op_slow(const cfx_op_table *t, int i)
{
    cfx_op_table_register(t);
    cfx_op *op = __atomic_load_n(&t->handles[i], __ATOMIC_ACQUIRE);
    if (!op)
        cfx_error_set(CFX_ERR, t->rows[i].name, "the operator %s could not be registered", t->rows[i].name);
    return op;
}

int cfx_builtin_ops_init(void) { return cfx_op_table_register(&cfx_ops_table); }

cfx_op *cfx_builtin_op(cfx_opid id)
{
    if ((unsigned)id >= CFX_OPID_COUNT) {
        cfx_error_set(CFX_ERR, NULL, "cfx_builtin_op: no built-in operator has id %d", (int)id);
        return NULL;
    }
    return cfx_op_table_op(&cfx_ops_table, (int)id);
}

/* ---- boxing the arguments ----------------------------------------------------------------- */

static cfx_value *take_items(cfx_call *c, int64_t n)
{
    if (n <= CFX_CALL_INLINE_ITEMS - (int64_t)c->n_items) {
        cfx_value *p = c->items + c->n_items;
        c->n_items += (uint32_t)n;
        return p;
    }
    cfx_value *p = c->n_heap < CFX_CALL_MAX_HEAP && n <= UINT32_MAX ? cfx_malloc((size_t)n * sizeof *p) : NULL;
    if (!p) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory boxing a list argument");
        c->failed = true;
        return NULL;
    }
    c->heap[c->n_heap++] = p;
    return p;
}

cfx_value cfx_call_ints(cfx_call *c, cfx_int_list l)
{
    if (l.len < 0)
        return cfx_none();
    cfx_value *items = l.len ? take_items(c, l.len) : c->items;
    if (!items)
        return cfx_none();
    for (int64_t i = 0; i < l.len; i++)
        items[i] = cfx_int(l.data[i]);
    return cfx_list(items, (uint32_t)l.len);
}

cfx_value cfx_call_tensors(cfx_call *c, cfx_tensor_list l)
{
    if (l.len < 0) {
        cfx_error_set(CFX_ERR, NULL, "a tensor list has a negative length (%lld)", (long long)l.len);
        c->failed = true;
        return cfx_none();
    }
    cfx_value *items = l.len ? take_items(c, l.len) : c->items;
    if (!items)
        return cfx_none();
    for (int64_t i = 0; i < l.len; i++)
        items[i] = l.data[i] ? cfx_tensor_value(l.data[i]) : cfx_none();
    return cfx_list(items, (uint32_t)l.len);
}

cfx_value cfx_call_string(cfx_call *c, const char *s)
{
    (void)c;
    return s ? cfx_string(s) : cfx_none();
}

/* ---- selecting and calling ---------------------------------------------------------------- */

const cfx_kernel *cfx_call_redispatch(cfx_call *c, const cfx_op_table *t, int i, cfx_keyset ks, cfx_value *stack)
{
    (void)stack;
    if (c->failed || !(c->op = cfx_op_table_op(t, i)))
        return NULL;
    c->ks = cfx_op_skip_fallthrough(c->op, ks);
    const cfx_kernel *k = cfx_op_kernel_for(c->op, c->ks);
    if (!cfx_kernel_is_valid(k)) {
        cfx_dispatch_missing_kernel_error(c->op, c->ks);
        return NULL;
    }
    return k;
}

int cfx_call_no_boxed(const cfx_call *c)
{
    return cfx_error_set(CFX_ERR, c->op->qualified_name, "%s: the kernel has no boxed entry", c->op->qualified_name);
}

void cfx_call_free_heap(cfx_call *c)
{
    for (uint32_t i = 0; i < c->n_heap; i++)
        cfx_free(c->heap[i]);
}

/* ---- reading returns ---------------------------------------------------------------------- */

static bool ret_mismatch(cfx_call *c, const cfx_value *stack, int i, const char *want)
{
    const char *name = c->op->qualified_name;
    if (c->op->schema->n_returns == 1)
        cfx_error_set(CFX_ERR, name, "%s: kernel returned a %s, expected a %s", name,
                      cfx_value_kind_name((cfx_value_kind)stack[i].kind), want);
    else
        cfx_error_set(CFX_ERR, name, "%s: kernel returned a %s as return %d, expected a %s", name,
                      cfx_value_kind_name((cfx_value_kind)stack[i].kind), i, want);
    c->failed = true;
    return false;
}

static inline bool ret_ok(cfx_call *c, const cfx_value *stack, int i, uint32_t kind, const char *want)
{
    return stack[i].kind == kind || ret_mismatch(c, stack, i, want);
}

/* cfx_call_ret_tensor when return i is no tensor: None for an optional one, else an error. */
cfx_tensor *cfx_call_ret_tensor_other(cfx_call *c, const cfx_value *stack, int i, bool optional)
{
    if (optional && stack[i].kind == CFX_V_NONE)
        return NULL;
    return ret_ok(c, stack, i, CFX_V_TENSOR, "Tensor") ? stack[i].u.t : NULL;
}

int64_t cfx_call_ret_int(cfx_call *c, const cfx_value *stack, int i)
{
    if (stack[i].kind == CFX_V_LAYOUT || stack[i].kind == CFX_V_MEMORY_FORMAT)
        return stack[i].u.i;
    return ret_ok(c, stack, i, CFX_V_INT, "int") ? stack[i].u.i : 0;
}

double cfx_call_ret_double(cfx_call *c, const cfx_value *stack, int i)
{
    return ret_ok(c, stack, i, CFX_V_DOUBLE, "float") ? stack[i].u.d : 0.0;
}

bool cfx_call_ret_bool(cfx_call *c, const cfx_value *stack, int i)
{
    return ret_ok(c, stack, i, CFX_V_BOOL, "bool") ? stack[i].u.b : false;
}

const char *cfx_call_ret_string(cfx_call *c, const cfx_value *stack, int i)
{
    return ret_ok(c, stack, i, CFX_V_STRING, "str") ? stack[i].u.s : NULL;
}

cfx_dtype cfx_call_ret_dtype(cfx_call *c, const cfx_value *stack, int i)
{
    return ret_ok(c, stack, i, CFX_V_DTYPE, "ScalarType") ? stack[i].u.dtype : CFX_FLOAT32;
}

cfx_device cfx_call_ret_device(cfx_call *c, const cfx_value *stack, int i)
{
    return ret_ok(c, stack, i, CFX_V_DEVICE, "Device") ? stack[i].u.device : cfx_device_make(CFX_DEVICE_CPU);
}

cfx_tensor_list cfx_call_ret_tensors(cfx_call *c, const cfx_value *stack, int i)
{
    cfx_tensor_list none = {NULL, 0};
    if (!ret_ok(c, stack, i, CFX_V_LIST, "list of Tensors"))
        return none;
    cfx_value v = stack[i];
    cfx_tensor **data = cfx_scope_alloc(v.len * sizeof *data);
    if (!data) {
        c->failed = true;
        return none;
    }
    for (uint32_t j = 0; j < v.len; j++) {
        if (v.u.items[j].kind != CFX_V_TENSOR || !v.u.items[j].u.t) {
            cfx_error_set(CFX_ERR, c->op->qualified_name, "%s: the kernel returned a list holding a %s, expected "
                          "Tensors", c->op->qualified_name, cfx_value_kind_name((cfx_value_kind)v.u.items[j].kind));
            c->failed = true;
            return none;
        }
        data[j] = v.u.items[j].u.t;
    }
    return (cfx_tensor_list){data, v.len};
}

bool cfx_tensor_list_any_meta(cfx_tensor_list l)
{
    for (int64_t i = 0; i < l.len; i++)
        if (cfx_tensor_is_meta_or_null(l.data[i]))
            return true;
    return false;
}
