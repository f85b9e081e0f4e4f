/* c.c - a graph as one C function over cfx's operator API, compiled against the installed
 * library (`cc $(pkg-config --cflags --libs cfx)`): the graph runs with no interpreter.
 *
 *     int NAME(const cfx_graph_module *self, const cfx_value *args, int n_args, cfx_value *out);
 *
 * One statement per node, in graph order, each result in a C variable named after the node
 * (`v_add`). An operator of the built-in table (dispatch/ops.def) is called through its typed
 * entry point cfx_op_<id>(site, ...) -- the id and every C argument type come from the table
 * row and the schema, by the boxing rules the generator itself applies (cfx_box_arg_step), so
 * an operator added to the table is generated with no change here. Any other operator (a
 * user library's, or one whose returns have no single C form) is called boxed, by name,
 * through cfx_op_call. Keyword arguments go to their schema positions and omitted ones take
 * the schema's defaults, as torch.ops' binding does. operator.getitem indexes a boxed tuple
 * (or a dict, by a string key); a higher-order operator is called through cfx_hop_call, with
 * its kwargs as one trailing dict when it takes keywords (as the interpreter calls it); dict
 * values are cfx_dict literals; operator and HOP values (with_effects' op) are looked up by
 * name. get_attr reads the attribute from `self` (a generator, as make_fx's `_opaque_obj0`,
 * by cfx_graph_module_get_attr_opaque when an operator takes it as its Generator).
 *
 * The results are the interpreter's: tensors in the caller's innermost scope (which must be
 * open), tuple items in scope blocks. Every call is followed by a check of the thread's error,
 * so a failing op returns its status with the error recorded and the site of the generated
 * line. A graph with nodes C cannot express (call_module, call_method, builtin functions other
 * than getitem and HOPs) is refused at generation time with the node named. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "dispatch/boxing_internal.h"
#include "dispatch/error.h"
#include "hop/hop.h"
#include "dispatch/ops.h"
#include "dispatch/ops_table.h"
#include "dispatch/ops_gen_kernels.h"
#include "ir/print.h"

/* Whether get_attr node n is passed to a `Generator` argument of an operator: make_fx reads a
 * generator through a get_attr (`_opaque_obj0`), and a graph alone does not say what its
 * attributes hold, so the schema of the operator using it does. */
static bool is_generator_type(const cfx_type *t)
{
    if (t->kind == CFX_TYPE_OPTIONAL && t->n_elems > 0)
        t = t->elems[0];
    return t->kind == CFX_TYPE_GENERATOR;
}

static bool feeds_generator(const cfx_node *n)
{
    cfx_user_iter it;
    for (cfx_node *u = cfx_node_first_user(n, &it); u; u = cfx_node_next_user(&it)) {
        const cfx_op *op = cfx_node_operator(u);
        const cfx_schema *s = op ? cfx_op_schema(op) : NULL;
        for (uint32_t i = 0; s && i < cfx_node_num_args(u) && (int)i < s->n_args; i++)
            if (cfx_node_arg(u, i).kind == CFX_V_NODE && cfx_node_arg(u, i).u.node == n &&
                is_generator_type(s->args[i].type))
                return true;
        const cfx_kwarg *kw = cfx_node_kwargs(u);
        for (uint32_t k = 0; s && k < cfx_node_num_kwargs(u); k++)
            for (int i = 0; i < s->n_args; i++)
                if (kw[k].value.kind == CFX_V_NODE && kw[k].value.u.node == n && !strcmp(kw[k].name, s->args[i].name) &&
                    is_generator_type(s->args[i].type))
                    return true;
    }
    return false;
}

/* The C variable kind of a node's value. */
enum { K_NONE, K_TENSOR, K_INT, K_DOUBLE, K_BOOL, K_VALUE };

typedef struct gen {
    cfx_buf *b;
    uint8_t *kind;   /* per node seq */
    int32_t *row;    /* per target id: built-in table row + 1, 0 = not looked up, -1 = none */
    uint32_t n_rows_cap;
    unsigned tmp;    /* counter for temporaries */
    const char *why; /* what a put_* function could not express (the caller names the node) */
} gen;

static int fail_node(const cfx_node *n, const char *what)
{
    char *name = cfx_node_name_string(n);
    cfx_error_set(CFX_ERR, NULL, "cannot generate C for node '%s': %s", name ? name : "?", what);
    cfx_free(name);
    return CFX_ERR;
}

static void put_var(gen *G, const cfx_node *n)
{
    cfx_buf_puts(G->b, "v_");
    cfx_node_print_name(n, G->b);
}

/* A C string literal (octal escapes for everything but printable ASCII). */
static void put_c_string(cfx_buf *b, const char *s, size_t n)
{
    cfx_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            cfx_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f || c == '?')
            cfx_buf_printf(b, "\\%03o", c);
        else
            cfx_buf_putc(b, (char)c);
    }
    cfx_buf_putc(b, '"');
}

static void put_int(cfx_buf *b, int64_t i)
{
    if (i == INT64_MIN)
        cfx_buf_puts(b, "(-INT64_C(9223372036854775807) - 1)");
    else
        cfx_buf_printf(b, "INT64_C(%" PRId64 ")", i);
}

static void put_double(cfx_buf *b, double d)
{
    if (isnan(d)) {
        cfx_buf_puts(b, "NAN");
    } else if (isinf(d)) {
        cfx_buf_puts(b, d > 0 ? "INFINITY" : "(-INFINITY)");
    } else {
        char s[40];
        snprintf(s, sizeof s, "%.17g", d);
        cfx_buf_puts(b, s);
        if (!strpbrk(s, ".e"))
            cfx_buf_puts(b, ".0");
    }
}

/* A node's value as the given kind of C expression. */
static int put_node_as(gen *G, const cfx_node *n, int want)
{
    int have = G->kind[n->seq];
    if (have == want) {
        put_var(G, n);
        return CFX_OK;
    }
    static const char *const field[] = {[K_TENSOR] = ".u.t", [K_INT] = ".u.i", [K_DOUBLE] = ".u.d", [K_BOOL] = ".u.b"};
    static const char *const box[] = {[K_TENSOR] = "cfx_tensor_value", [K_INT] = "cfx_int",
                                      [K_DOUBLE] = "cfx_double", [K_BOOL] = "cfx_bool"};
    if (have == K_VALUE && want != K_VALUE && want != K_NONE) {
        put_var(G, n);
        cfx_buf_puts(G->b, field[want]);
        return CFX_OK;
    }
    if (want == K_VALUE && have != K_NONE) {
        cfx_buf_printf(G->b, "%s(", box[have]);
        put_var(G, n);
        cfx_buf_putc(G->b, ')');
        return CFX_OK;
    }
    if (want == K_DOUBLE && have == K_INT) {
        cfx_buf_puts(G->b, "(double)");
        put_var(G, n);
        return CFX_OK;
    }
    if (want == K_VALUE && have == K_NONE) {
        cfx_buf_puts(G->b, "cfx_none()");
        return CFX_OK;
    }
    G->why = "an argument's node value does not have the C type the schema needs";
    return CFX_ERR;
}

/* v as a cfx_value expression (lists as compound literals: valid for the statement). */
static int put_value(gen *G, cfx_value v, int depth)
{
    cfx_buf *b = G->b;
    if (depth > 64) {
        G->why = "a value nested deeper than 64 lists";
        return CFX_ERR;
    }
    switch ((cfx_value_kind)v.kind) {
    case CFX_V_NONE: cfx_buf_puts(b, "cfx_none()"); return CFX_OK;
    case CFX_V_BOOL: cfx_buf_puts(b, v.u.b ? "cfx_bool(true)" : "cfx_bool(false)"); return CFX_OK;
    case CFX_V_INT: cfx_buf_puts(b, "cfx_int("); put_int(b, v.u.i); cfx_buf_putc(b, ')'); return CFX_OK;
    case CFX_V_DOUBLE: cfx_buf_puts(b, "cfx_double("); put_double(b, v.u.d); cfx_buf_putc(b, ')'); return CFX_OK;
    case CFX_V_STRING:
        cfx_buf_puts(b, "cfx_string(");
        put_c_string(b, v.u.s, v.len);
        cfx_buf_putc(b, ')');
        return CFX_OK;
    case CFX_V_DTYPE: cfx_buf_printf(b, "cfx_dtype_value((cfx_dtype)%d)", (int)v.u.dtype); return CFX_OK;
    case CFX_V_DEVICE:
        cfx_buf_printf(b, "cfx_device_value((cfx_device){%d, %d})", v.u.device.type, v.u.device.index);
        return CFX_OK;
    case CFX_V_MEMORY_FORMAT:
        cfx_buf_printf(b, "cfx_memory_format_value((cfx_memory_format)%" PRId64 ")", v.u.memory_format);
        return CFX_OK;
    case CFX_V_LAYOUT: cfx_buf_printf(b, "cfx_layout_value(%" PRId64 ")", v.u.layout); return CFX_OK;
    case CFX_V_NODE: return put_node_as(G, v.u.node, K_VALUE);
    case CFX_V_LIST:
    case CFX_V_TUPLE:
        if (v.len == 0) {
            cfx_buf_puts(b, v.kind == CFX_V_LIST ? "cfx_list(NULL, 0)" : "cfx_tuple(NULL, 0)");
            return CFX_OK;
        }
        cfx_buf_puts(b, v.kind == CFX_V_LIST ? "cfx_list((const cfx_value[]){" : "cfx_tuple((const cfx_value[]){");
        for (uint32_t i = 0; i < v.len; i++) {
            if (i)
                cfx_buf_puts(b, ", ");
            if (put_value(G, v.u.items[i], depth + 1) != CFX_OK)
                return CFX_ERR;
        }
        cfx_buf_printf(b, "}, %u)", v.len);
        return CFX_OK;
    case CFX_V_DICT: /* cfx_dict((const cfx_value[]){key, value, ...}, entries) */
        if (v.len == 0) {
            cfx_buf_puts(b, "cfx_dict(NULL, 0)");
            return CFX_OK;
        }
        cfx_buf_puts(b, "cfx_dict((const cfx_value[]){");
        for (uint32_t i = 0; i < v.len; i++) {
            if (i)
                cfx_buf_puts(b, ", ");
            if (put_value(G, v.u.items[i], depth + 1) != CFX_OK)
                return CFX_ERR;
        }
        cfx_buf_printf(b, "}, %u)", v.len / 2);
        return CFX_OK;
    case CFX_V_OP: /* with_effects' operator: looked up by name, as boxed calls are */
        if (!v.u.op)
            break;
        cfx_buf_puts(b, "cfx_op_value(cfx_op_find(");
        put_c_string(b, cfx_op_name(v.u.op), strlen(cfx_op_name(v.u.op)));
        cfx_buf_puts(b, "))");
        return CFX_OK;
    case CFX_V_HOP: /* a HOP argument (with_effects' call_torchbind): by name, as HOP calls are */
        cfx_buf_puts(b, "cfx_hop_value(cfx_hop_find(");
        put_c_string(b, v.u.s, v.len);
        cfx_buf_puts(b, "))");
        return CFX_OK;
    default:
        break;
    }
    G->why = "an argument value of a kind C code cannot hold (a tensor or script object constant)";
    return CFX_ERR;
}

/* v as the C argument of form st (boxing.h's table). */
static int put_typed(gen *G, const cfx_box_step *st, cfx_value v)
{
    cfx_buf *b = G->b;
    bool node = v.kind == CFX_V_NODE, none = v.kind == CFX_V_NONE;
    switch ((cfx_box_form)st->form) {
    case CFX_BOX_TENSOR:
        if (none) {
            cfx_buf_puts(b, "NULL");
            return CFX_OK;
        }
        if (node)
            return put_node_as(G, v.u.node, K_TENSOR);
        if (v.kind == CFX_V_INT || v.kind == CFX_V_DOUBLE || v.kind == CFX_V_BOOL) {
            /* a number in a Tensor position (mul.Tensor(x, 2)): the C API's wrapped number */
            cfx_buf_puts(b, v.kind == CFX_V_BOOL ? "cfx_num_bool(" : "cfx_num(");
            if (v.kind == CFX_V_INT)
                put_int(b, v.u.i);
            else if (v.kind == CFX_V_DOUBLE)
                put_double(b, v.u.d);
            else
                cfx_buf_puts(b, v.u.b ? "true" : "false");
            cfx_buf_putc(b, ')');
            return CFX_OK;
        }
        break;
    case CFX_BOX_INT:
        if (node)
            return put_node_as(G, v.u.node, K_INT);
        if (v.kind == CFX_V_INT || v.kind == CFX_V_LAYOUT || v.kind == CFX_V_MEMORY_FORMAT) {
            put_int(b, v.u.i);
            return CFX_OK;
        }
        break;
    case CFX_BOX_DOUBLE:
        if (node)
            return put_node_as(G, v.u.node, K_DOUBLE);
        if (v.kind == CFX_V_DOUBLE || v.kind == CFX_V_INT) {
            put_double(b, v.kind == CFX_V_INT ? (double)v.u.i : v.u.d);
            return CFX_OK;
        }
        break;
    case CFX_BOX_BOOL:
        if (node)
            return put_node_as(G, v.u.node, K_BOOL);
        if (v.kind == CFX_V_BOOL) {
            cfx_buf_puts(b, v.u.b ? "true" : "false");
            return CFX_OK;
        }
        break;
    case CFX_BOX_STR:
        if (v.kind == CFX_V_STRING) {
            put_c_string(b, v.u.s, v.len);
            return CFX_OK;
        }
        if (none) {
            cfx_buf_puts(b, "NULL");
            return CFX_OK;
        }
        break;
    case CFX_BOX_DTYPE:
        if (v.kind == CFX_V_DTYPE || v.kind == CFX_V_INT) {
            cfx_buf_printf(b, "(cfx_dtype)%d", v.kind == CFX_V_DTYPE ? (int)v.u.dtype : (int)v.u.i);
            return CFX_OK;
        }
        break;
    case CFX_BOX_DEVICE:
        if (v.kind == CFX_V_DEVICE) {
            cfx_buf_printf(b, "(cfx_device){%d, %d}", v.u.device.type, v.u.device.index);
            return CFX_OK;
        }
        break;
    case CFX_BOX_VALUE: return put_value(G, v, 0);
    case CFX_BOX_INT_LIST:
        if (none) {
            cfx_buf_puts(b, "(cfx_int_list){NULL, -1}");
            return CFX_OK;
        }
        if (v.kind == CFX_V_INT && st->size_hint > 0) { /* int[N] given one int: repeated */
            cfx_buf_puts(b, "(cfx_int_list){(const int64_t[]){");
            for (int32_t i = 0; i < st->size_hint; i++) {
                cfx_buf_puts(b, i ? ", " : "");
                put_int(b, v.u.i);
            }
            cfx_buf_printf(b, "}, %d}", (int)st->size_hint);
            return CFX_OK;
        }
        if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) {
            if (v.len == 0) {
                cfx_buf_puts(b, "(cfx_int_list){NULL, 0}");
                return CFX_OK;
            }
            cfx_buf_puts(b, "(cfx_int_list){(const int64_t[]){");
            for (uint32_t i = 0; i < v.len; i++) {
                cfx_buf_puts(b, i ? ", " : "");
                cfx_value e = v.u.items[i];
                if (e.kind == CFX_V_NODE) {
                    if (put_node_as(G, e.u.node, K_INT) != CFX_OK)
                        return CFX_ERR;
                } else if (e.kind == CFX_V_INT) {
                    put_int(b, e.u.i);
                } else {
                    G->why = "an int list argument with an item that is not an int";
                    return CFX_ERR;
                }
            }
            cfx_buf_printf(b, "}, %u}", v.len);
            return CFX_OK;
        }
        break;
    case CFX_BOX_TENSOR_LIST:
        if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) {
            if (v.len == 0) {
                cfx_buf_puts(b, "(cfx_tensor_list){NULL, 0}");
                return CFX_OK;
            }
            cfx_buf_puts(b, "(cfx_tensor_list){(cfx_tensor *const[]){");
            for (uint32_t i = 0; i < v.len; i++) {
                cfx_buf_puts(b, i ? ", " : "");
                cfx_value e = v.u.items[i];
                if (e.kind == CFX_V_NODE) {
                    if (put_node_as(G, e.u.node, K_TENSOR) != CFX_OK)
                        return CFX_ERR;
                } else if (e.kind == CFX_V_NONE) {
                    cfx_buf_puts(b, "NULL");
                } else {
                    G->why = "a tensor list argument with an item that is not a tensor";
                    return CFX_ERR;
                }
            }
            cfx_buf_printf(b, "}, %u}", v.len);
            return CFX_OK;
        }
        break;
    case CFX_BOX_BOXED:
        cfx_buf_puts(b, "&(const cfx_value[]){");
        if (put_value(G, v, 0) != CFX_OK)
            return CFX_ERR;
        cfx_buf_puts(b, "}[0]");
        return CFX_OK;
    }
    G->why = "an argument value whose kind does not match its schema type";
    return CFX_ERR;
}

/* The built-in table row of op (its typed entry point), or -1. Cached per target record. */
static int table_row(gen *G, const cfx_node *n, const cfx_op *op)
{
    uint32_t id = cfx_node_target_info(n)->id;
    if (id >= G->n_rows_cap) {
        uint32_t cap = id * 2 + 16;
        int32_t *r = cfx_realloc(G->row, cap * sizeof *r);
        if (!r)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory"), -2;
        memset(r + G->n_rows_cap, 0, (cap - G->n_rows_cap) * sizeof *r);
        G->row = r;
        G->n_rows_cap = cap;
    }
    if (G->row[id] == 0) {
        G->row[id] = -1;
        for (int i = 0; i < cfx_ops_table.n_rows; i++)
            if (cfx_op_table_op(&cfx_ops_table, i) == op) {
                G->row[id] = i + 1;
                break;
            }
    }
    return G->row[id] > 0 ? G->row[id] - 1 : -1;
}

/* The values bound to the schema's arguments: positional args, kwargs by name, defaults. */
static int bind(const cfx_node *n, const cfx_schema *s, cfx_value *bound)
{
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    if (na > (uint32_t)s->n_args)
        return fail_node(n, "more positional arguments than its schema has");
    for (int i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        const cfx_value *kw = (uint32_t)i < na ? NULL : cfx_node_kwarg(n, a->name);
        if ((uint32_t)i < na)
            bound[i] = cfx_node_arg(n, (uint32_t)i);
        else if (kw)
            bound[i] = *kw;
        else if (a->has_default)
            bound[i] = a->default_value;
        else if (a->type->kind == CFX_TYPE_OPTIONAL)
            bound[i] = cfx_none();
        else
            return fail_node(n, "a required argument of its schema is missing");
    }
    (void)nk;
    return CFX_OK;
}

static void put_check(cfx_buf *b)
{
    cfx_buf_puts(b, "    if (cfx_error_occurred())\n        return cfx_error_status();\n");
}

static int kind_of_ret(int form)
{
    switch (form) {
    case CFX_BOX_TENSOR: return K_TENSOR;
    case CFX_BOX_INT: return K_INT;
    case CFX_BOX_DOUBLE: return K_DOUBLE;
    case CFX_BOX_BOOL: return K_BOOL;
    default: return -1;
    }
}

static const char *const c_decl[] = {[K_TENSOR] = "cfx_tensor *", [K_INT] = "int64_t ", [K_DOUBLE] = "double ",
                                     [K_BOOL] = "bool ", [K_VALUE] = "cfx_value "};

static int emit_op(gen *G, const cfx_node *n, const cfx_op *op)
{
    cfx_buf *b = G->b;
    const cfx_schema *s = cfx_op_schema(op);
    if (!s)
        return fail_node(n, "its operator has no schema");
    if (s->n_args > CFX_BOX_MAX_ARGS || s->is_vararg)
        return fail_node(n, "its operator's arguments have no C form");
    cfx_value bound[CFX_BOX_MAX_ARGS];
    if (bind(n, s, bound) != CFX_OK)
        return CFX_ERR;
    int row = table_row(G, n, op);
    if (row < -1)
        return CFX_ERR;
    int rk = s->n_returns == 0 ? K_NONE : s->n_returns == 1 ? kind_of_ret(cfx_box_return_step(s->returns[0].type).form) : -1;
    if (row >= 0 && rk >= 0) {
        /* typed: cfx_op_<id>(CFX_HERE, args...) */
        G->kind[n->seq] = (uint8_t)rk;
        cfx_buf_puts(b, "    ");
        if (rk != K_NONE) {
            cfx_buf_puts(b, c_decl[rk]);
            put_var(G, n);
            cfx_buf_puts(b, " = ");
        }
        cfx_buf_printf(b, "cfx_op_%s(CFX_HERE", cfx_ops_table.rows[row].id);
        for (int i = 0; i < s->n_args; i++) {
            cfx_buf_puts(b, ", ");
            cfx_box_step st = cfx_box_arg_step(&s->args[i]);
            if (put_typed(G, &st, bound[i]) != CFX_OK)
                return fail_node(n, G->why);
        }
        cfx_buf_puts(b, ");\n");
        put_check(b);
        return CFX_OK;
    }
    /* boxed, by name */
    int cap = s->n_args > s->n_returns ? s->n_args : s->n_returns;
    G->kind[n->seq] = K_VALUE;
    cfx_buf_puts(b, "    cfx_value ");
    put_var(G, n);
    cfx_buf_puts(b, ";\n    {\n");
    cfx_buf_printf(b, "        cfx_value stack[%d] = {", cap > 0 ? cap : 1);
    for (int i = 0; i < s->n_args; i++) {
        cfx_buf_puts(b, i ? ", " : "");
        if (put_value(G, bound[i], 0) != CFX_OK)
            return fail_node(n, G->why);
    }
    if (s->n_args == 0)
        cfx_buf_puts(b, "{0}");
    cfx_buf_puts(b, "};\n        if (cfx_op_call(cfx_op_find(");
    const char *qn = cfx_op_name(op);
    put_c_string(b, qn, strlen(qn));
    cfx_buf_printf(b, "), stack, %d, %d) != CFX_OK)\n            return cfx_error_status();\n", s->n_args,
                   cap > 0 ? cap : 1);
    cfx_buf_puts(b, "        ");
    put_var(G, n);
    if (s->n_returns == 0) {
        cfx_buf_puts(b, " = cfx_none();\n");
    } else if (s->n_returns == 1) {
        cfx_buf_puts(b, " = stack[0];\n");
    } else {
        cfx_buf_printf(b, " = cfx_tuple(cfx_scope_alloc(%d * sizeof(cfx_value)), %d);\n", s->n_returns, s->n_returns);
        cfx_buf_puts(b, "        if (!");
        put_var(G, n);
        cfx_buf_puts(b, ".u.items)\n            return cfx_error_set(CFX_ERR_NOMEM, NULL, \"out of memory\");\n");
        cfx_buf_puts(b, "        memcpy((cfx_value *)");
        put_var(G, n);
        cfx_buf_printf(b, ".u.items, stack, %d * sizeof(cfx_value));\n", s->n_returns);
    }
    cfx_buf_puts(b, "    }\n");
    return CFX_OK;
}

/* The output value into *out: containers get scope blocks (they outlive the function). */
static int emit_output(gen *G, cfx_value v, const char *dest, int depth)
{
    cfx_buf *b = G->b;
    if (depth > 64) {
        G->why = "an output nested deeper than 64 containers";
        return CFX_ERR;
    }
    if (!cfx_value_is_container(v)) {
        cfx_buf_printf(b, "    %s = ", dest);
        if (put_value(G, v, 0) != CFX_OK)
            return CFX_ERR;
        cfx_buf_puts(b, ";\n");
        return CFX_OK;
    }
    unsigned t = G->tmp++;
    cfx_buf_printf(b, "    cfx_value *o%u = cfx_scope_alloc(%u * sizeof(cfx_value) + 1);\n", t, v.len);
    cfx_buf_printf(b, "    if (!o%u)\n        return cfx_error_set(CFX_ERR_NOMEM, NULL, \"out of memory\");\n", t);
    for (uint32_t i = 0; i < v.len; i++) {
        char sub[32];
        snprintf(sub, sizeof sub, "o%u[%u]", t, i);
        if (emit_output(G, v.u.items[i], sub, depth + 1) != CFX_OK)
            return CFX_ERR;
    }
    if (v.kind == CFX_V_DICT)
        cfx_buf_printf(b, "    %s = cfx_dict(o%u, %u);\n", dest, t, v.len / 2);
    else
        cfx_buf_printf(b, "    %s = %s(o%u, %u);\n", dest, v.kind == CFX_V_LIST ? "cfx_list" : "cfx_tuple", t, v.len);
    return CFX_OK;
}

/* d['key'] on a HOP's dict result: the entry, or the interpreter's KeyError. */
static int emit_dict_getitem(gen *G, const cfx_node *n)
{
    cfx_buf *b = G->b;
    cfx_value key = cfx_node_arg(n, 1);
    G->kind[n->seq] = K_VALUE;
    cfx_buf_puts(b, "    const cfx_value *p_");
    put_var(G, n);
    cfx_buf_puts(b, " = cfx_dict_get(");
    put_var(G, cfx_node_arg(n, 0).u.node);
    cfx_buf_puts(b, ", ");
    put_c_string(b, key.u.s, key.len);
    cfx_buf_puts(b, ");\n    if (!p_");
    put_var(G, n);
    cfx_buf_puts(b, ")\n        return cfx_error_set(CFX_ERR, NULL, \"KeyError: %s\", ");
    char *k = cfx_value_to_string(key, CFX_STYLE_PYTHON);
    if (!k)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    put_c_string(b, k, strlen(k));
    cfx_free(k);
    cfx_buf_puts(b, ");\n    cfx_value ");
    put_var(G, n);
    cfx_buf_puts(b, " = *p_");
    put_var(G, n);
    cfx_buf_puts(b, ";\n");
    return CFX_OK;
}

/* A higher-order operator: cfx_hop_call on its args (and, for a HOP called with keywords, one
 * dict of its kwargs after them, as the interpreter passes them). */
static int emit_hop(gen *G, const cfx_node *n, const cfx_builtin_fn *fn)
{
    cfx_buf *b = G->b;
    uint32_t na = cfx_node_num_args(n), nk = cfx_node_num_kwargs(n);
    if (nk && !fn->kwargs_dict)
        return fail_node(n, "a keyword argument to a higher-order operator that takes none");
    const cfx_kwarg *kw = cfx_node_kwargs(n);
    G->kind[n->seq] = K_VALUE;
    cfx_buf_puts(b, "    cfx_value ");
    put_var(G, n);
    cfx_buf_puts(b, ";\n    {\n        cfx_value hop_args[] = {");
    for (uint32_t i = 0; i < na; i++) {
        cfx_buf_puts(b, i ? ", " : "");
        if (put_value(G, cfx_node_arg(n, i), 0) != CFX_OK)
            return fail_node(n, G->why);
    }
    if (fn->kwargs_dict) {
        cfx_buf_puts(b, na ? ", " : "");
        cfx_buf_puts(b, nk ? "cfx_dict((const cfx_value[]){" : "cfx_dict(NULL, 0)");
        for (uint32_t i = 0; i < nk; i++) {
            cfx_buf_puts(b, i ? ", cfx_string(" : "cfx_string(");
            put_c_string(b, kw[i].name, strlen(kw[i].name));
            cfx_buf_puts(b, "), ");
            if (put_value(G, kw[i].value, 0) != CFX_OK)
                return fail_node(n, G->why);
        }
        if (nk)
            cfx_buf_printf(b, "}, %u)", nk);
    } else if (!na) {
        cfx_buf_puts(b, "{0}");
    }
    cfx_buf_puts(b, "};\n        if (cfx_hop_call(cfx_hop_find(");
    put_c_string(b, fn->name, strlen(fn->name));
    cfx_buf_printf(b, "), hop_args, %u, &", na + (fn->kwargs_dict ? 1 : 0));
    put_var(G, n);
    cfx_buf_puts(b, ") != CFX_OK)\n            return cfx_error_status();\n    }\n");
    return CFX_OK;
}

static int emit_node(gen *G, const cfx_node *n, int *n_placeholders)
{
    cfx_buf *b = G->b;
    switch (cfx_node_opcode(n)) {
    case CFX_NODE_PLACEHOLDER: {
        int i = (*n_placeholders)++;
        const cfx_meta_val *v = cfx_node_val(n);
        bool tensor = v && v->kind == CFX_MVAL_TENSOR, token = v && v->kind == CFX_MVAL_TOKEN;
        G->kind[n->seq] = tensor ? K_TENSOR : K_VALUE;
        cfx_buf_printf(b, "    cfx_value a%d = %d < n_args ? args[%d] : ", i, i, i);
        if (cfx_node_num_args(n) > 0) {
            if (put_value(G, cfx_node_arg(n, 0), 0) != CFX_OK)
                return fail_node(n, G->why);
        } else {
            cfx_buf_puts(b, "cfx_none()");
        }
        cfx_buf_puts(b, ";\n");
        if (tensor || token) { /* a token stays a boxed token value (with_effects takes it) */
            cfx_buf_printf(b, "    if (a%d.kind != %s || !a%d.u.t)\n", i, tensor ? "CFX_V_TENSOR" : "CFX_V_TOKEN", i);
            cfx_buf_puts(b, "        return cfx_error_set(CFX_ERR, NULL, \"forward(): argument '");
            cfx_node_print_name(n, b);
            cfx_buf_printf(b, "' must be %s, not %%s\", cfx_value_kind_name(a%d.kind));\n",
                           tensor ? "a Tensor" : "an effect token", i);
        }
        cfx_buf_printf(b, "    %s", c_decl[G->kind[n->seq]]);
        put_var(G, n);
        cfx_buf_printf(b, " = a%d%s;\n", i, tensor ? ".u.t" : "");
        return CFX_OK;
    }
    case CFX_NODE_GET_ATTR: {
        const char *t = cfx_node_target_str(n);
        /* `_opaque_obj0`: the generator the module holds; else a tensor attribute */
        bool gen = feeds_generator(n);
        G->kind[n->seq] = gen ? K_VALUE : K_TENSOR;
        cfx_buf_puts(b, gen ? "    cfx_value " : "    cfx_tensor *");
        put_var(G, n);
        cfx_buf_puts(b, gen ? " = cfx_graph_module_get_attr_opaque(self, " : " = cfx_graph_module_get_attr(self, ");
        put_c_string(b, t, strlen(t));
        cfx_buf_puts(b, gen ? ");\n    if (" : ");\n    if (!");
        put_var(G, n);
        cfx_buf_printf(b, "%s)\n        return cfx_error_set(CFX_ERR, NULL, \"forward(): the module has no %sattribute "
                       "'%%s'\", ", gen ? ".kind != CFX_V_GENERATOR" : "", gen ? "generator " : "");
        put_c_string(b, t, strlen(t));
        cfx_buf_puts(b, ");\n");
        return CFX_OK;
    }
    case CFX_NODE_CALL_FUNCTION: {
        const cfx_op *op = cfx_node_operator(n);
        if (op)
            return emit_op(G, n, op);
        const cfx_target_info *ti = cfx_node_target_info(n);
        const cfx_builtin_fn *fn = cfx_target_info_fn(ti);
        if (fn == &cfx_fn_getitem && cfx_node_num_args(n) == 2 && cfx_node_arg(n, 0).kind == CFX_V_NODE &&
            cfx_node_arg(n, 1).kind == CFX_V_INT && G->kind[cfx_node_arg(n, 0).u.node->seq] == K_VALUE) {
            G->kind[n->seq] = K_VALUE;
            cfx_buf_puts(b, "    cfx_value ");
            put_var(G, n);
            cfx_buf_puts(b, " = ");
            put_var(G, cfx_node_arg(n, 0).u.node);
            cfx_buf_printf(b, ".u.items[%" PRId64 "];\n", cfx_node_arg(n, 1).u.i);
            return CFX_OK;
        }
        if (fn == &cfx_fn_getitem && cfx_node_num_args(n) == 2 && cfx_node_arg(n, 0).kind == CFX_V_NODE &&
            cfx_node_arg(n, 1).kind == CFX_V_STRING && G->kind[cfx_node_arg(n, 0).u.node->seq] == K_VALUE)
            return emit_dict_getitem(G, n);
        if (fn && cfx_hop_from_target(fn))
            return emit_hop(G, n, fn);
        return fail_node(n, fn ? "this builtin function has no C form (only getitem on an operator's tuple)"
                               : "its target has no C form");
    }
    case CFX_NODE_OUTPUT:
        if (emit_output(G, cfx_node_num_args(n) ? cfx_node_arg(n, 0) : cfx_none(), "*out", 0) != CFX_OK)
            return fail_node(n, G->why);
        return CFX_OK;
    default:
        return fail_node(n, "call_module and call_method nodes need the Python objects of the traced module");
    }
}

int cfx_graph_to_c(const cfx_graph *g, const char *fn_name, cfx_buf *b)
{
    if (!g || !b || !fn_name)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_to_c: NULL argument");
    for (const char *p = fn_name; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_') || isdigit((unsigned char)fn_name[0]))
            return cfx_error_set(CFX_ERR, NULL, "cfx_graph_to_c: '%s' is not a C identifier", fn_name);
    if (cfx_builtin_ops_init() != CFX_OK)
        return CFX_ERR;
    gen G = {b, cfx_calloc(cfx_graph_num_created(g) + 1, 1), NULL, 0, 0, "?"};
    if (!G.kind)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_buf_printf(b, "/* Generated by cfx (codegen/c.c): %s() runs the graph through cfx's operator API.\n", fn_name);
    cfx_buf_puts(b, " * Build: cc -std=c11 -c THIS.c $(pkg-config --cflags cfx); link with $(pkg-config --libs cfx).\n"
                    " * Results belong to the caller's innermost scope (cfx_scope_begin), which must be open. */\n"
                    "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"cfx.h\"\n\n");
    cfx_buf_printf(b, "int %s(const cfx_graph_module *self, const cfx_value *args, int n_args, cfx_value *out);\n\n",
                   fn_name);
    cfx_buf_printf(b, "int %s(const cfx_graph_module *self, const cfx_value *args, int n_args, cfx_value *out)\n{\n",
                   fn_name);
    int n_ph = 0, n_required = 0;
    for (const cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        if (cfx_node_opcode(n) == CFX_NODE_PLACEHOLDER) {
            n_ph++;
            if (cfx_node_num_args(n) == 0)
                n_required = n_ph;
        }
    cfx_buf_puts(b, "    (void)self;\n    (void)args;\n    *out = cfx_none();\n");
    cfx_buf_puts(b, "    if (cfx_error_occurred())\n        return cfx_error_status();\n");
    cfx_buf_printf(b, "    if (n_args < %d || n_args > %d)\n", n_required, n_ph);
    cfx_buf_printf(b, "        return cfx_error_set(CFX_ERR, NULL, \"%s() takes %d to %d arguments but %%d were given\", "
                      "n_args);\n",
                   fn_name, n_required, n_ph);
    int rc = CFX_OK;
    n_ph = 0;
    for (const cfx_node *n = cfx_graph_first(g); n && rc == CFX_OK; n = cfx_node_next(n)) {
        rc = emit_node(&G, n, &n_ph);
        /* a value nobody reads (a dead result, an in-place op's) would be an unused variable */
        if (rc == CFX_OK && cfx_node_num_users(n) == 0 && cfx_node_opcode(n) != CFX_NODE_OUTPUT &&
            G.kind[n->seq] != K_NONE) {
            cfx_buf_puts(b, "    (void)");
            put_var(&G, n);
            cfx_buf_puts(b, ";\n");
        }
    }
    cfx_buf_puts(b, "    return CFX_OK;\n}\n");
    cfx_free(G.kind);
    cfx_free(G.row);
    if (rc == CFX_OK && b->oom)
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory generating C");
    return rc;
}
