/* ops_table.h - what a generated op table hands the runtime, and the runtime of the generated
 * entry points (internal: only generated code and the dispatcher's own files include this).
 *
 * tools/opgen turns an op table (dispatch/ops.def) into a cfx_op_table: per op its name,
 * schema, tags and kernels (per key: the C function and its compiled boxed entry).
 * cfx_op_table_register defines the schemas in one DEF library of the table's namespace and
 * registers the kernels in one IMPL library per key, each with the table row's line as its
 * debug location, then keeps the op handles. It runs once per table, on first use.
 *
 * An entry point cfx_op_<id>(site, args...) is the C++ API's at::add: it boxes its arguments
 * onto a stack (list items into the cfx_call's buffer), asks the dispatcher for the kernel
 * (cfx_call_select: key set from the arguments and the thread's sets, then the table slot)
 * and calls it as c10's KernelFunction::call does: unboxed through its C function when it has
 * one, else boxed on the stack (a mode's or fallback's kernel), with the returns read back. */
#ifndef CFX_OPS_TABLE_H
#define CFX_OPS_TABLE_H

#include <pthread.h>

#include "dispatch/boxing_internal.h"
#include "dispatch/error_internal.h"
#include "dispatch/operator_internal.h"
#include "dispatch/library.h"
#include "dispatch/op_api.h"
#include "dispatch/tags.h"

typedef struct cfx_op_row_kernel {
    cfx_dispatch_key key; /* CFX_KEY_Undefined ends the list */
    cfx_fnptr unboxed;
    cfx_boxed_fn boxed;
} cfx_op_row_kernel;

typedef struct cfx_op_row {
    const char *id;     /* "add_Tensor": the C names are cfx_op_<id>, CFX_OPID_<id> */
    const char *name;   /* "aten::add.Tensor" */
    const char *schema; /* as PyTorch prints it */
    cfx_tag_set tags;
    int line;           /* in the table file */
    cfx_fnptr entry;    /* cfx_op_<id>(site, args...), for callers that only have a schema: an
                           adapter made with cfx_adapter_new_lead calls it from boxed values */
    cfx_op_row_kernel kernels[7];
} cfx_op_row;

enum { CFX_OP_TABLE_MAX_KEYS = 8 };

typedef struct cfx_op_table_state {
    pthread_once_t once;
    int status;
    int n_libs;
    cfx_dispatch_key lib_keys[CFX_OP_TABLE_MAX_KEYS];
    cfx_library *libs[CFX_OP_TABLE_MAX_KEYS + 1]; /* [0] the DEF library, then one IMPL per key */
} cfx_op_table_state;

typedef struct cfx_op_table {
    const char *ns;     /* "aten" */
    const char *file;   /* "dispatch/ops.def" */
    const cfx_op_row *rows;
    int n_rows;
    cfx_op **handles;   /* n_rows slots, set by registration */
    cfx_op_table_state *state;
} cfx_op_table;

/* Registers t once (later calls return the first call's status). */
int cfx_op_table_register(const cfx_op_table *t);
/* cfx_op_table_op once the handle is not there yet: registers t, NULL (error recorded) if that
 * failed. */
cfx_op *cfx_op_table_op_slow(const cfx_op_table *t, int i);
/* The handle of t's op i, registering t on first use; NULL (error recorded) if that failed.
 * Inline: after the first call it is one load, on every operator call. */
static inline cfx_op *cfx_op_table_op(const cfx_op_table *t, int i)
{
    cfx_op *op = __atomic_load_n(&t->handles[i], __ATOMIC_ACQUIRE);
    return op ? op : cfx_op_table_op_slow(t, i);
}

/* ---- the entry points' runtime ---- */

enum { CFX_CALL_INLINE_ITEMS = 32, CFX_CALL_MAX_HEAP = 8 };

typedef struct cfx_call {
    const cfx_op *op;
    cfx_keyset ks;
    const cfx_site *prev_site;
    bool site_set;
    bool failed; /* boxing or reading a return failed (error recorded) */
    uint32_t n_items, n_heap;
    cfx_value items[CFX_CALL_INLINE_ITEMS]; /* list items of the boxed arguments */
    cfx_value *heap[CFX_CALL_MAX_HEAP];     /* lists that did not fit */
} cfx_call;

static inline void cfx_call_init(cfx_call *c)
{
    c->op = NULL;
    c->site_set = c->failed = false;
    c->n_items = c->n_heap = 0;
}
/* Boxed list arguments: None for an int list of negative length; NULL tensors in a tensor
 * list box as None. */
cfx_value cfx_call_ints(cfx_call *c, cfx_int_list l);
cfx_value cfx_call_tensors(cfx_call *c, cfx_tensor_list l);
cfx_value cfx_call_string(cfx_call *c, const char *s); /* NULL boxes as None */
/* The kernel for a fresh call of t's op i on stack (all arguments), with site as the thread's
 * current call site until cfx_call_end. NULL when the op failed to register, a plain Tensor
 * argument is NULL (a failure upstream: no new error), boxing failed, or no kernel exists
 * (PyTorch's NotImplementedError recorded). Inline, as cfx_call_end: with the dispatcher's
 * selection (operator_internal.h) an entry point makes no call before its kernel's. */
static inline const cfx_kernel *cfx_call_select(cfx_call *c, const cfx_op_table *t, int i, const cfx_site *site,
                                                cfx_value *stack)
{
    if (site) {
        c->prev_site = cfx_error_swap_site(site);
        c->site_set = true;
    }
    if (c->failed || !(c->op = cfx_op_table_op(t, i)))
        return NULL;
    return cfx_dispatch_select(c->op, stack, &c->ks);
}
/* The same for an explicit key set (a kernel redispatching below itself). */
const cfx_kernel *cfx_call_redispatch(cfx_call *c, const cfx_op_table *t, int i, cfx_keyset ks, cfx_value *stack);
/* Records that k has no boxed entry. */
int cfx_call_no_boxed(const cfx_call *c);
/* Runs k boxed on stack. (Inline, as cfx_call_ret_tensor: a call through a mode or fallback,
 * the traced case, takes this route on every operator call.) */
static inline int cfx_call_boxed(cfx_call *c, const cfx_kernel *k, cfx_value *stack)
{
    return k->boxed ? k->boxed(k->ctx, c->op, c->ks, stack) : cfx_call_no_boxed(c);
}
/* Return i of a boxed kernel, checked against the schema's type (sets c->failed otherwise). */
cfx_tensor *cfx_call_ret_tensor_other(cfx_call *c, const cfx_value *stack, int i, bool optional);
static inline cfx_tensor *cfx_call_ret_tensor(cfx_call *c, const cfx_value *stack, int i, bool optional)
{
    return stack[i].kind == CFX_V_TENSOR ? stack[i].u.t : cfx_call_ret_tensor_other(c, stack, i, optional);
}
int64_t cfx_call_ret_int(cfx_call *c, const cfx_value *stack, int i);
double cfx_call_ret_double(cfx_call *c, const cfx_value *stack, int i);
bool cfx_call_ret_bool(cfx_call *c, const cfx_value *stack, int i);
const char *cfx_call_ret_string(cfx_call *c, const cfx_value *stack, int i);
cfx_dtype cfx_call_ret_dtype(cfx_call *c, const cfx_value *stack, int i);
cfx_device cfx_call_ret_device(cfx_call *c, const cfx_value *stack, int i);
cfx_tensor_list cfx_call_ret_tensors(cfx_call *c, const cfx_value *stack, int i); /* array scope-owned */
/* Frees the list storage of c (cfx_call_end when there is some). */
void cfx_call_free_heap(cfx_call *c);
/* Restores the call site and frees list storage. */
static inline void cfx_call_end(cfx_call *c)
{
    if (c->site_set)
        cfx_error_swap_site(c->prev_site);
    if (c->n_heap)
        cfx_call_free_heap(c);
}

/* For generated kernels: whether a tensor (NULL: no) / any tensor of a list is a meta tensor. */
static inline bool cfx_tensor_is_meta_or_null(const cfx_tensor *t) { return t && cfx_tensor_is_meta(t); }
bool cfx_tensor_list_any_meta(cfx_tensor_list l);

#endif
