/* fake_tensor_prop.c - FakeTensorProp: the interpreter under a fake mode, writing meta.
 *
 * The pass is a callback on the interpreter (FakeTensorProp subclasses FX's Interpreter and
 * overrides run_node the same way): after each node ran, its value is turned into a val
 * (extract_val of map_aggregate) and, for a tensor on a placeholder or call_function node, a
 * tensor_meta. The val tree of a container is built in one array sized by a first count, so a
 * node costs no allocation beyond the graph's own copy. Uses the public IR API only. */
#include <stdlib.h>

#include "dispatch/dispatcher.h"
#include "dispatch/effects.h"
#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "dispatch/scope.h"
#include "ir/interpreter.h"
#include "ir/passes/fake_tensor_prop.h"

/* The interpreter's values nest no deeper than this. */
enum { MAX_DEPTH = 32, SMALL = 16 };

static uint32_t count_vals(cfx_value v, int depth)
{
    uint32_t n = 0;
    if ((v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) && depth < MAX_DEPTH) {
        n += v.len;
        for (uint32_t i = 0; i < v.len; i++)
            n += count_vals(v.u.items[i], depth + 1);
    }
    return n;
}

/* extract_val: v as a val; containers take their items from *pool. */
static cfx_meta_val to_val(cfx_value v, cfx_meta_val **pool, int depth)
{
    switch (v.kind) {
    case CFX_V_TENSOR:
    case CFX_V_TOKEN: {
        const cfx_tensor *t = v.u.t;
        if (!t)
            break;
        return (cfx_meta_val){
            .kind = v.kind == CFX_V_TOKEN ? CFX_MVAL_TOKEN : CFX_MVAL_TENSOR,
            .dtype = t->dtype,
            .device = cfx_tensor_fake_device(t),
            .n = t->ndim,
            .sizes = t->sizes,
            .strides = t->strides,
            .storage_offset = t->storage_offset,
        };
    }
    case CFX_V_INT: return (cfx_meta_val){.kind = CFX_MVAL_INT, .u.i = v.u.i};
    case CFX_V_DOUBLE: return (cfx_meta_val){.kind = CFX_MVAL_DOUBLE, .u.d = v.u.d};
    case CFX_V_BOOL: return (cfx_meta_val){.kind = CFX_MVAL_BOOL, .u.b = v.u.b};
    case CFX_V_LIST:
    case CFX_V_TUPLE: {
        if (depth >= MAX_DEPTH)
            break;
        cfx_meta_val *items = *pool;
        *pool += v.len;
        for (uint32_t i = 0; i < v.len; i++)
            items[i] = to_val(v.u.items[i], pool, depth + 1);
        return (cfx_meta_val){.kind = v.kind == CFX_V_LIST ? CFX_MVAL_LIST : CFX_MVAL_TUPLE, .n = (int32_t)v.len,
                              .u.items = items};
    }
    default:
        break;
    }
    return (cfx_meta_val){.kind = CFX_MVAL_NONE};
}

static int set_meta(cfx_node *n, cfx_value v, void *ctx)
{
    (void)ctx;
    if (v.kind == CFX_V_NONE || (v.kind == CFX_V_TENSOR && !v.u.t))
        return CFX_OK; /* FakeTensorProp: no val for None */
    uint32_t need = count_vals(v, 0);
    if (need > INT32_MAX)
        return cfx_error_set(CFX_ERR, NULL, "val: %u items", need);
    cfx_meta_val small[SMALL];
    cfx_meta_val *items = need <= SMALL ? small : cfx_malloc(need * sizeof *items);
    if (!items)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_meta_val *pool = items;
    cfx_meta_val val = to_val(v, &pool, 0);
    int rc = val.kind == CFX_MVAL_NONE ? CFX_OK : cfx_node_set_val(n, &val);
    if (items != small)
        cfx_free(items);
    cfx_node_op op = cfx_node_opcode(n);
    if (rc == CFX_OK && v.kind == CFX_V_TENSOR && (op == CFX_NODE_PLACEHOLDER || op == CFX_NODE_CALL_FUNCTION)) {
        const cfx_tensor_meta *old = cfx_node_tensor_meta(n);
        rc = cfx_node_set_tensor_meta_from_tensor(n, v.u.t, old && old->requires_grad);
    }
    return rc;
}

/* Runs g on inputs already made; mode is entered around the run. */
static int propagate(cfx_graph *g, const cfx_graph_module *module, cfx_fake_mode *mode, const cfx_value *args,
                     int n_args)
{
    int rc = cfx_fake_mode_enter(mode);
    if (rc != CFX_OK)
        return rc;
    cfx_interp_options o = {.module = module, .on_node = set_meta};
    cfx_value out;
    rc = cfx_interpret(g, args, n_args, &o, &out);
    int rc2 = cfx_fake_mode_exit(mode);
    return rc != CFX_OK ? rc : rc2;
}

static cfx_fake_mode *new_mode(void)
{
    /* the graph module's attributes are real tensors: make_fx's _allow_non_fake_inputs */
    cfx_fake_mode_options fo = {.allow_non_fake_inputs = true, .allow_fallback_kernels = true};
    return cfx_fake_mode_new(&fo);
}

int cfx_fake_tensor_prop(cfx_graph *g, const cfx_graph_module *module, const cfx_value *args, int n_args)
{
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!g || n_args < 0 || (n_args > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "cfx_fake_tensor_prop: NULL graph or arguments");
    cfx_fake_mode *mode = NULL;
    for (int i = 0; i < n_args && !mode; i++)
        if (args[i].kind == CFX_V_TENSOR)
            mode = cfx_tensor_fake_mode(args[i].u.t);
    bool owned = !mode;
    if (owned && !(mode = new_mode()))
        return cfx_error_status();
    cfx_value *fake = cfx_malloc((n_args ? (size_t)n_args : 1) * sizeof *fake);
    if (!fake) {
        if (owned)
            cfx_fake_mode_free(mode);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_scope s = cfx_scope_begin();
    int rc = CFX_OK;
    for (int i = 0; rc == CFX_OK && i < n_args; i++) {
        fake[i] = args[i];
        if (args[i].kind == CFX_V_TENSOR && args[i].u.t && !(fake[i].u.t = cfx_fake_from_tensor(mode, args[i].u.t)))
            rc = cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
    }
    if (rc == CFX_OK)
        rc = propagate(g, module, mode, fake, n_args);
    cfx_scope_end(s);
    cfx_free(fake);
    if (owned)
        cfx_fake_mode_free(mode);
    return rc;
}

/* ---- inputs from the placeholders' vals --------------------------------------------------- */

static int no_input(const cfx_node *n, const char *why)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, "cannot propagate from meta: placeholder ");
    cfx_node_print_name(n, &b);
    cfx_buf_puts(&b, why);
    int rc = cfx_error_set_text(CFX_ERR, NULL, b.oom ? "cannot propagate from meta" : b.data);
    cfx_buf_free(&b);
    return rc;
}

int cfx_fake_tensor_of_val(const cfx_meta_val *v, cfx_value *out)
{
    cfx_op *op = cfx_op_find("aten::empty_strided");
    if (!op)
        return CFX_ERR;
    cfx_value dims[2 * CFX_MAX_DIMS];
    for (int32_t d = 0; d < v->n; d++) {
        dims[d] = cfx_int(v->sizes[d]);
        dims[CFX_MAX_DIMS + d] = cfx_int(v->strides[d]);
    }
    cfx_value stack[6] = {
        cfx_list(dims, (uint32_t)v->n), cfx_list(dims + CFX_MAX_DIMS, (uint32_t)v->n),
        cfx_dtype_value((cfx_dtype)v->dtype), cfx_none(), cfx_device_value(v->device), cfx_none(),
    };
    int rc = cfx_op_call(op, stack, 6, 6);
    if (rc == CFX_OK && v->kind == CFX_MVAL_TOKEN) { /* a fake token, a token value */
        rc = cfx_tensor_mark_token(stack[0].u.t);
        stack[0] = cfx_token_value(stack[0].u.t);
    }
    if (rc == CFX_OK)
        *out = stack[0];
    return rc;
}

int cfx_fake_tensor_prop_from_meta(cfx_graph *g, const cfx_graph_module *module)
{
    if (cfx_error_occurred())
        return cfx_error_status();
    if (!g)
        return cfx_error_set(CFX_ERR, NULL, "cfx_fake_tensor_prop_from_meta: NULL graph");
    int n_args = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        n_args += cfx_node_opcode(n) == CFX_NODE_PLACEHOLDER;
    cfx_fake_mode *mode = new_mode();
    cfx_value *args = mode ? cfx_malloc((n_args ? (size_t)n_args : 1) * sizeof *args) : NULL;
    if (!args) {
        cfx_fake_mode_free(mode);
        return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_scope s = cfx_scope_begin();
    int rc = cfx_fake_mode_enter(mode), i = 0;
    bool entered = rc == CFX_OK;
    for (cfx_node *n = cfx_graph_first(g); rc == CFX_OK && n; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) != CFX_NODE_PLACEHOLDER)
            continue;
        const cfx_meta_val *v = cfx_node_val(n);
        if (!v)
            rc = no_input(n, " has no meta['val']");
        else if (v->kind == CFX_MVAL_TENSOR || v->kind == CFX_MVAL_TOKEN)
            rc = cfx_fake_tensor_of_val(v, &args[i]);
        else if (v->kind == CFX_MVAL_INT)
            args[i] = cfx_int(v->u.i);
        else if (v->kind == CFX_MVAL_DOUBLE)
            args[i] = cfx_double(v->u.d);
        else if (v->kind == CFX_MVAL_BOOL)
            args[i] = cfx_bool(v->u.b);
        else
            rc = no_input(n, "'s meta['val'] is not a tensor or a number");
        i++;
    }
    if (entered) {
        int rc2 = cfx_fake_mode_exit(mode);
        if (rc == CFX_OK)
            rc = rc2;
    }
    if (rc == CFX_OK)
        rc = propagate(g, module, mode, args, n_args);
    cfx_scope_end(s);
    cfx_free(args);
    cfx_fake_mode_free(mode);
    return rc;
}
